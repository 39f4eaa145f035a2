//! A whole RR frame on the CPU with temporal state: the graph walked by the reference
//! executor, the previous output kept as the next frame's history, the frame counter that picks
//! the window shift.
//!
//! Temporal rules (openngx's own, `rr::frame::temporal`, shared with the GPU frame): history is
//! usable from the second frame on, unless the frame is a Reset; a Reset frame still writes
//! history, so the next one blends again; the frame counter counts every frame (Reset does not
//! restart the shift cycle).

use crate::numerics::f16::F16;
use crate::rr::frame::temporal::Temporal;
use crate::rr::frame::FrameConstants;
use crate::rr::geometry::{Geometry, GeometryError, Size};
use crate::rr::graph::{self, Graph};
use crate::rr::preset::Preset;
use crate::rr::reference::{Executor, ReferenceError, TensorData, Weights};
use crate::rr::weights::RrWeights;

pub use crate::rr::frame::temporal::FrameParams;

/// What one frame produced.
#[derive(Clone, Debug)]
pub struct FrameResult {
    /// Every published tensor in graph order (`rr::graph::Graph::published`).
    pub published: Vec<(String, TensorData)>,
    /// The constants the frame ran with.
    pub constants: FrameConstants,
    /// Seconds per op kind.
    pub seconds: std::collections::BTreeMap<&'static str, f64>,
}

impl FrameResult {
    /// A published tensor by name.
    pub fn get(&self, name: &str) -> Option<&TensorData> {
        self.published.iter().find(|p| p.0 == name).map(|p| &p.1)
    }
}

/// The temporal CPU pipeline of one feature instance.
pub struct CpuFrame {
    graph: Graph,
    weights: Weights,
    history: Vec<F16>,
    temporal: Temporal,
}

impl CpuFrame {
    /// A pipeline at `geometry` for `preset`, with zero history.
    pub fn new(
        weights: &RrWeights,
        geometry: Geometry,
        preset: Preset,
    ) -> Result<Self, ReferenceError> {
        Ok(CpuFrame {
            graph: graph::build(&geometry, preset),
            weights: Weights::new(weights)?,
            history: vec![0; geometry.output.area() * 4],
            temporal: Temporal::default(),
        })
    }

    /// The geometry it runs.
    pub fn geometry(&self) -> Geometry {
        self.graph.geometry
    }

    /// Dynamic resolution (openngx's own rule, docs/rr.md "Dynamic resolution"): later frames
    /// run the graph of `render` -> the same output size, keeping the temporal state, which
    /// lives at output resolution: the history (the previous output), the frame counter (the
    /// window-shift cycle goes on) and whether history was written. Nothing else carries over
    /// between frames (the exposure is each frame's own). The same size again changes nothing.
    pub fn set_render_size(&mut self, render: Size) -> Result<(), GeometryError> {
        let g = self.graph.geometry;
        if render == g.render {
            return Ok(());
        }
        let geometry = Geometry::new(render, g.output)?;
        self.graph = graph::build(&geometry, self.graph.preset);
        Ok(())
    }

    /// The graph it runs.
    pub fn graph(&self) -> &Graph {
        &self.graph
    }

    /// The frame constants the next frame would run with.
    pub fn constants(&self, p: &FrameParams) -> FrameConstants {
        self.temporal.constants(p)
    }

    /// Run one frame: `color` `[render][4]`, `guides` `[render][guide::LANES]` (f32). On error
    /// the temporal state is unchanged.
    pub fn run(
        &mut self,
        p: &FrameParams,
        color: &[f32],
        guides: &[f32],
    ) -> Result<FrameResult, ReferenceError> {
        let constants = self.constants(p);
        let g = &self.graph;
        let mut ex = Executor::new(g, &self.weights, constants);
        ex.set(g.color, TensorData::F32(color.to_vec()))?;
        ex.set(g.guides, TensorData::F32(guides.to_vec()))?;
        ex.set(g.history, TensorData::F16(self.history.clone()))?;
        ex.run_all()?;
        let out = match ex.take(g.output) {
            Some(TensorData::F16(v)) => v,
            _ => return Err(ReferenceError::Unwritten("output".into())),
        };
        self.history = out;
        self.temporal.advance();
        Ok(FrameResult {
            published: std::mem::take(&mut ex.published),
            constants,
            seconds: std::mem::take(&mut ex.seconds),
        })
    }
}
