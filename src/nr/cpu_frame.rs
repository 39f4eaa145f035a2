//! The whole frame on the CPU: prepare -> network (CPU reference) -> compose, with the temporal
//! state carried from frame to frame. Used to write fixtures and as the oracle of the GPU frame.

use crate::model::Model;
use crate::nr::frame::{FrameError, FrameParams, TemporalLoop};
use crate::nr::geometry::{Geometry, GeometryError};
use crate::nr::graph::{self, Graph};
use crate::nr::reference::{self, Output, ReferenceError};
use crate::numerics::f16::{self, F16};
use crate::numerics::Profiles;

/// Why a CPU frame failed.
#[derive(Debug, thiserror::Error)]
pub enum PipelineError {
    #[error("geometry: {0}")]
    Geometry(#[from] GeometryError),
    #[error("frame: {0}")]
    Frame(#[from] FrameError),
    #[error("reference: {0}")]
    Reference(#[from] ReferenceError),
}

/// What one CPU frame produced.
#[derive(Clone, Debug)]
pub struct FrameResult {
    /// The composed output, RGBA halves, valid size.
    pub output: Vec<[F16; 4]>,
    /// The network input, f32 `[field rows][16]` (absent for a disabled frame).
    pub features: Option<Vec<f32>>,
    /// The network's boundaries and head (absent for a disabled frame).
    pub network: Option<Output>,
}

/// A feature on the CPU: geometry, schedule, model and temporal state.
pub struct CpuPipeline<'m> {
    pub graph: Graph,
    model: &'m Model,
    profiles: Profiles,
    temporal: TemporalLoop,
}

impl<'m> CpuPipeline<'m> {
    pub fn new(
        model: &'m Model,
        width: u32,
        height: u32,
        profiles: Profiles,
    ) -> Result<Self, PipelineError> {
        let geometry = Geometry::new(width, height)?;
        let blend = f16::to_f32(model.blend_scale());
        Ok(CpuPipeline {
            graph: graph::build(&geometry),
            model,
            profiles,
            temporal: TemporalLoop::new(geometry, blend),
        })
    }

    /// Run one frame: `proxy` RGBA f32 and optional motion (pixels), both valid size.
    pub fn run_frame(
        &mut self,
        params: &FrameParams,
        proxy: &[[f32; 4]],
        motion: Option<&[[f32; 2]]>,
    ) -> Result<FrameResult, PipelineError> {
        let mut net: Option<Result<Output, ReferenceError>> = None;
        let mut features = None;
        let (graph, model, profiles) = (&self.graph, self.model, self.profiles);
        let field_rows = graph.geometry.field.area();
        let out = self.temporal.run_frame(params, proxy, motion, |f| {
            let feats = crate::nr::frame::prepare::features_f32(f);
            let result = reference::run(graph, model, &feats, profiles);
            let head = match &result {
                Ok(o) => o
                    .head
                    .chunks_exact(4)
                    .map(|c| [c[0], c[1], c[2], c[3]])
                    .collect(),
                // Compose still needs a head of the right size; the error is returned below.
                Err(_) => vec![[0.0; 4]; field_rows],
            };
            features = Some(feats);
            net = Some(result);
            head
        })?;
        let network = net.transpose()?;
        Ok(FrameResult {
            output: out.output,
            features,
            network,
        })
    }
}
