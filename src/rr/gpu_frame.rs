//! RR's GPU route for one feature instance: the graph's launches prepared once at creation
//! (`rr::record`), recorded into the caller's command buffer per frame.
//!
//! The caller uploads the colour and guides (and the first history), records the frame with
//! [`GpuFrame::record_frame`] (or op ranges with [`GpuFrame::record`] and the history copy with
//! [`GpuFrame::record_keep_history`]), and reads tensors back through
//! [`GpuFrame::tensor`] (a device-local buffer to copy from). Every op is followed by a
//! compute -> compute barrier.

use std::sync::Arc;

use crate::gpu::bands::BindLimits;
use crate::gpu::{
    ArenaCapacity, BufferBinding, Capabilities, DescriptorArena, GpuContext, GpuError, Recorder,
    UploadBatch,
};
use crate::rr::frame::temporal::{FrameParams, Temporal};
use crate::rr::frame::FrameConstants;
use crate::rr::geometry::Geometry;
use crate::rr::graph::{self, Graph, TensorId};
use crate::rr::preset::Preset;
use crate::rr::record::{self, bands, Launch, Resources, RrGpuWeights};
use crate::rr::weights::RrWeights;

/// How a [`GpuFrame`] is built ([`GpuFrame::with_options`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GpuFrameOptions {
    /// A buffer of its own for every tensor ([`GpuFrame::keeping_every_tensor`]).
    pub keep_every_tensor: bool,
    /// How finely the ops with a band rule are cut beyond what the device's limits need
    /// (`rr::record::bands::Cut`; test hooks: the split route at small sizes).
    pub cut: bands::Cut,
}

/// The prepared GPU route of one RR instance.
pub struct GpuFrame {
    graph: Graph,
    // Drop order: launches (descriptor sets) before the arena, buffers last.
    launches: Vec<Vec<Launch>>,
    _arena: DescriptorArena,
    res: Resources,
    temporal: Temporal,
}

impl GpuFrame {
    /// Buffers, pipelines and descriptor sets for `geometry` and `preset`, tensors sharing one
    /// arena's bytes where their lifetimes do not overlap (`rr::record::slots`: after a frame
    /// only the output, its alpha and the inputs are meaningful), with a copy of `weights` of
    /// its own. Call [`GpuFrame::record_setup`] once before the first frame.
    pub fn new(
        ctx: &Arc<GpuContext>,
        weights: &RrWeights,
        geometry: Geometry,
        preset: Preset,
    ) -> Result<Self, GpuError> {
        Self::with_options(ctx, weights, geometry, preset, GpuFrameOptions::default())
    }

    /// [`GpuFrame::new`] on weights already on the device (shared by the features of a device:
    /// `RrGpuWeights::for_feature`; their owner uploads them, [`GpuFrame::record_setup`] and
    /// [`GpuFrame::stage_setup`] then upload nothing of them).
    pub fn with_weights(
        ctx: &Arc<GpuContext>,
        weights: Arc<RrGpuWeights>,
        geometry: Geometry,
        preset: Preset,
    ) -> Result<Self, GpuError> {
        let graph = graph::build(&geometry, preset);
        let plan = Self::plan_within(ctx, &graph, &bands::Cut::default())?;
        Self::build(ctx, graph, plan, weights, Vec::new(), false)
    }

    /// [`GpuFrame::new`] with a buffer of its own for every tensor, so that every op's tensor
    /// can be read after the frame (op-by-op comparisons).
    pub fn keeping_every_tensor(
        ctx: &Arc<GpuContext>,
        weights: &RrWeights,
        geometry: Geometry,
        preset: Preset,
    ) -> Result<Self, GpuError> {
        let options = GpuFrameOptions {
            keep_every_tensor: true,
            ..GpuFrameOptions::default()
        };
        Self::with_options(ctx, weights, geometry, preset, options)
    }

    /// [`GpuFrame::new`] with `options`, with a copy of `weights` of its own. Refused before
    /// anything is allocated when an op cannot run within the device's limits even in its
    /// smallest bands (the error names the op, the tensor and the limit).
    pub fn with_options(
        ctx: &Arc<GpuContext>,
        weights: &RrWeights,
        geometry: Geometry,
        preset: Preset,
        options: GpuFrameOptions,
    ) -> Result<Self, GpuError> {
        let graph = graph::build(&geometry, preset);
        let plan = Self::plan_within(ctx, &graph, &options.cut)?;
        let (w, host) = RrGpuWeights::private(ctx, weights)?;
        let keep_all = options.keep_every_tensor;
        Self::build(ctx, graph, plan, Arc::new(w), host, keep_all)
    }

    /// The launches' bands of `geometry` and `preset` within the limits of a device with `caps`
    /// (`rr::record::bands::plan_graph`): one band per op where it fits as it is; why not, where
    /// even the smallest band does not fit.
    pub fn plan(
        caps: &Capabilities,
        geometry: Geometry,
        preset: Preset,
    ) -> Result<Vec<Vec<bands::Band>>, bands::RangeError> {
        let graph = graph::build(&geometry, preset);
        bands::plan_graph(&graph, &BindLimits::of(caps), &bands::Cut::default())
    }

    /// `graph`'s bands on `ctx`'s device, or the refusal naming the op, tensor and limit.
    fn plan_within(
        ctx: &Arc<GpuContext>,
        graph: &Graph,
        cut: &bands::Cut,
    ) -> Result<Vec<Vec<bands::Band>>, GpuError> {
        let limits = BindLimits::of(ctx.capabilities());
        bands::plan_graph(graph, &limits, cut).map_err(|e| {
            let g = &graph.geometry;
            GpuError::invalid(format!("rr {} -> {}", g.render, g.output), e.to_string())
        })
    }

    fn build(
        ctx: &Arc<GpuContext>,
        graph: Graph,
        plan: Vec<Vec<bands::Band>>,
        weights: Arc<RrGpuWeights>,
        pending: Vec<u8>,
        keep_all: bool,
    ) -> Result<Self, GpuError> {
        let res = Resources::new(ctx, &graph, weights, pending, keep_all)?;
        // Two launches at most per band (an encoder tail and its quarter average).
        let sets = 2 * plan.iter().map(Vec::len).sum::<usize>() as u32;
        let mut arena = DescriptorArena::with_capacity(
            ctx,
            &ArenaCapacity {
                sets,
                storage_buffers: 8 * sets,
                ..ArenaCapacity::default()
            },
        )?;
        let launches = (0..graph.nodes.len())
            .map(|i| record::prepare(ctx, &graph, &res, &mut arena, i, &plan[i]))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(GpuFrame {
            graph,
            launches,
            _arena: arena,
            res,
            temporal: Temporal::default(),
        })
    }

    /// The graph it runs.
    pub fn graph(&self) -> &Graph {
        &self.graph
    }

    /// Kernel launches of each node (more than one where the node runs in bands, or has two
    /// passes).
    pub fn launches_per_node(&self) -> Vec<usize> {
        self.launches.iter().map(Vec::len).collect()
    }

    /// The weights and tables it binds.
    pub fn weights(&self) -> &Arc<RrGpuWeights> {
        self.res.weights()
    }

    /// Record the uploads of its own weights and tables (once; none for shared ones) and the
    /// clear of the buffer bound where a kernel reads nothing. Ends with a transfer -> compute
    /// barrier.
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
        self.check_tensor(t)?;
        let want = self.graph.elements(t) * self.graph.tensors[t].dtype.size();
        if bytes.len() != want {
            return Err(GpuError::invalid(
                format!("rr tensor `{}`", self.graph.tensors[t].name),
                format!("{} bytes given, it holds {want}", bytes.len()),
            ));
        }
        let (buf, offset) = self.res.placed(t);
        batch.upload(rec, buf, offset, bytes)
    }

    /// Record a fill of every tensor the graph writes (not the inputs: colour, guides, history)
    /// with `word`, so that a tensor a kernel failed to write shows in a comparison. Follow with
    /// a transfer -> compute barrier. Tensors that share bytes (the shared arena) are filled
    /// once: each byte range is written by one fill, so the fills need no barrier between them
    /// (two fills of one range would be a write-after-write hazard to synchronization validation).
    pub fn poison(&self, rec: &mut Recorder<'_>, word: u32) -> Result<(), GpuError> {
        let inputs = [self.graph.color, self.graph.guides, self.graph.history];
        let mut ranges: Vec<BufferBinding> = (0..self.graph.tensors.len())
            .filter(|t| !inputs.contains(t))
            .map(|t| self.res.t(t))
            .collect();
        ranges.sort_by_key(|b| (b.buffer, b.offset));
        let mut merged: Vec<BufferBinding> = Vec::with_capacity(ranges.len());
        for b in ranges {
            match merged.last_mut() {
                Some(m) if m.buffer == b.buffer && b.offset <= m.offset + m.range => {
                    m.range = m.range.max(b.offset + b.range - m.offset);
                }
                _ => merged.push(b),
            }
        }
        for b in merged {
            rec.fill(b, word)?;
        }
        Ok(())
    }

    /// Record a whole frame with the caller's parameters: the constants from the instance's
    /// temporal state (`rr::frame::temporal`, the CPU frame's rule), every op, and the copy of
    /// the output into the history; then the state advances (the caller submits what was
    /// recorded before recording the next frame). Returns the constants the frame runs with.
    pub fn record_frame(
        &mut self,
        rec: &mut Recorder<'_>,
        p: &FrameParams,
    ) -> Result<FrameConstants, GpuError> {
        let c = self.temporal.constants(p);
        self.record(rec, &c, 0..self.graph.nodes.len())?;
        self.record_keep_history(rec)?;
        self.temporal.advance();
        Ok(c)
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
        self.res.tensor_memory()
    }

    /// The buffer range holding tensor `t` (its exact byte length).
    pub fn tensor(&self, t: TensorId) -> Result<BufferBinding, GpuError> {
        self.check_tensor(t)?;
        let len = self.graph.elements(t) * self.graph.tensors[t].dtype.size();
        Ok(BufferBinding {
            range: len as u64,
            ..self.res.t(t)
        })
    }

    /// The exposure input: one f32 word the exposure stage reads instead of the pushed exposure
    /// value when the frame's `exposure_on_device` is set (a feature imports the caller's
    /// exposure texture into it, so the value never visits the host).
    pub fn exposure_input(&self) -> BufferBinding {
        BufferBinding {
            range: 4,
            ..self.res.exposure_input.binding()
        }
    }

    fn check_tensor(&self, t: TensorId) -> Result<(), GpuError> {
        if t < self.graph.tensors.len() {
            Ok(())
        } else {
            Err(GpuError::invalid(
                "rr tensor",
                format!("{t} of a graph of {} tensors", self.graph.tensors.len()),
            ))
        }
    }

    /// Bytes of device memory the tensors take (the weights and tables aside).
    pub fn tensor_memory(&self) -> u64 {
        self.res.tensor_memory()
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
        if nodes.end > self.launches.len() {
            return Err(GpuError::invalid(
                "rr record",
                format!("nodes {nodes:?} of a graph of {}", self.launches.len()),
            ));
        }
        // Nothing is recorded where a launch cannot run this frame.
        for i in nodes.clone() {
            for l in &self.launches[i] {
                l.check(c, &self.graph.nodes[i].label)?;
            }
        }
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
