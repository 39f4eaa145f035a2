//! RR's GPU route for one feature instance: the graph's launches prepared once at creation
//! (`rr::record`), recorded into the caller's command buffer per frame.
//!
//! The caller uploads the colour and guides (and the first history), records the frame with
//! [`GpuFrame::record`] and [`GpuFrame::record_keep_history`], and reads any tensor back through
//! [`GpuFrame::tensor`] (a device-local buffer to copy from). Every op is followed by a
//! compute -> compute barrier.

use std::sync::Arc;

use crate::gpu::{
    ArenaCapacity, BufferBinding, DescriptorArena, GpuContext, GpuError, Recorder, UploadBatch,
};
use crate::rr::frame::FrameConstants;
use crate::rr::geometry::Geometry;
use crate::rr::graph::{self, Graph, TensorId};
use crate::rr::preset::Preset;
use crate::rr::record::{self, Launch, Resources};
use crate::rr::weights::RrWeights;

/// The prepared GPU route of one RR instance.
pub struct GpuFrame {
    graph: Graph,
    // Drop order: launches (descriptor sets) before the arena, buffers last.
    launches: Vec<Vec<Launch>>,
    _arena: DescriptorArena,
    res: Resources,
}

impl GpuFrame {
    /// Buffers, pipelines and descriptor sets for `geometry` and `preset`. Call
    /// [`GpuFrame::record_setup`] once before the first frame.
    pub fn new(
        ctx: &Arc<GpuContext>,
        weights: &RrWeights,
        geometry: Geometry,
        preset: Preset,
    ) -> Result<Self, GpuError> {
        let graph = graph::build(&geometry, preset);
        let res = Resources::new(ctx, &graph, weights)?;
        let sets = 2 * graph.nodes.len() as u32;
        let mut arena = DescriptorArena::with_capacity(
            ctx,
            &ArenaCapacity {
                sets,
                storage_buffers: 8 * sets,
                ..ArenaCapacity::default()
            },
        )?;
        let launches = (0..graph.nodes.len())
            .map(|i| record::prepare(ctx, &graph, &res, &mut arena, i))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(GpuFrame {
            graph,
            launches,
            _arena: arena,
            res,
        })
    }

    /// The graph it runs.
    pub fn graph(&self) -> &Graph {
        &self.graph
    }

    /// Record the weights' and tables' uploads (once). Ends with a transfer -> compute barrier.
    pub fn record_setup(
        &mut self,
        rec: &mut Recorder<'_>,
        batch: &mut UploadBatch,
    ) -> Result<(), GpuError> {
        self.res.record_constants(rec, batch)?;
        rec.transfer_to_compute();
        Ok(())
    }

    /// [`GpuFrame::record_setup`] for an owner that must not fail once it recorded (the NGX
    /// feature): stage the uploads here (can fail), then record them with
    /// [`GpuFrame::record_staged_setup`] (cannot fail).
    pub fn stage_setup(&mut self, batch: &mut UploadBatch) -> Result<(), GpuError> {
        self.res.stage_constants(batch)
    }

    /// Record the uploads [`GpuFrame::stage_setup`] staged. Ends with a transfer -> compute
    /// barrier.
    pub fn record_staged_setup(&self, rec: &mut Recorder<'_>, batch: &mut UploadBatch) {
        self.res.record_staged(rec, batch);
        rec.transfer_to_compute();
    }

    /// Record an upload of `bytes` (the tensor's little-endian contents) into tensor `t`.
    pub fn upload(
        &self,
        rec: &mut Recorder<'_>,
        batch: &mut UploadBatch,
        t: TensorId,
        bytes: &[u8],
    ) -> Result<(), GpuError> {
        let want = self.graph.elements(t) * self.graph.tensors[t].dtype.size();
        if bytes.len() != want {
            return Err(GpuError::invalid(
                format!("rr tensor `{}`", self.graph.tensors[t].name),
                format!("{} bytes given, it holds {want}", bytes.len()),
            ));
        }
        batch.upload(rec, &self.res.tensors[t], 0, bytes)
    }

    /// Record a fill of every tensor buffer the graph writes (not the inputs: colour, guides,
    /// history) with `word`, so that a tensor a kernel failed to write shows in a comparison.
    /// Follow with a transfer -> compute barrier.
    pub fn poison(&self, rec: &mut Recorder<'_>, word: u32) -> Result<(), GpuError> {
        let inputs = [self.graph.color, self.graph.guides, self.graph.history];
        for (t, b) in self.res.tensors.iter().enumerate() {
            if !inputs.contains(&t) {
                rec.fill(b.binding(), word)?;
            }
        }
        Ok(())
    }

    /// Record the copy of this frame's output into the history the next frame reads (after
    /// [`GpuFrame::record`] of the output stage): compute -> transfer, copy, transfer -> compute.
    pub fn record_keep_history(&self, rec: &mut Recorder<'_>) -> Result<(), GpuError> {
        let (o, h) = (
            self.tensor(self.graph.output)?,
            self.tensor(self.graph.history)?,
        );
        rec.compute_to_transfer();
        rec.copy(o, h, o.range)?;
        rec.transfer_to_compute();
        Ok(())
    }

    /// Device bytes of the graph's tensors (the instance's own memory; the weights and tables
    /// are not included).
    pub fn device_bytes(&self) -> u64 {
        self.res.tensors.iter().map(|b| b.size()).sum()
    }

    /// The buffer range holding tensor `t` (its exact byte length).
    pub fn tensor(&self, t: TensorId) -> Result<BufferBinding, GpuError> {
        let len = self.graph.elements(t) * self.graph.tensors[t].dtype.size();
        self.res.tensors[t].range(0, len as u64)
    }

    /// Record nodes `nodes` of the frame of `c` (its index picks the window shift; jitter, MV
    /// scale, exposure inputs and history validity are push constants), each followed by a
    /// compute -> compute barrier.
    pub fn record(
        &self,
        rec: &mut Recorder<'_>,
        c: &FrameConstants,
        nodes: std::ops::Range<usize>,
    ) -> Result<(), GpuError> {
        for i in nodes {
            let label = &self.graph.nodes[i].label;
            for l in &self.launches[i] {
                if l.then_barrier {
                    rec.compute_to_compute();
                }
                l.record(rec, c, label)?;
            }
            if !self.launches[i].is_empty() {
                rec.compute_to_compute();
            }
        }
        Ok(())
    }
}
