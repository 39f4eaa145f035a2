//! [`NetworkRecorder`]: the whole schedule of one geometry recorded into a caller's command
//! buffer — every node bound to its kernel with the tensors' workspace bindings, a
//! compute->compute barrier between consecutive dispatches, barriers at entry and exit so the
//! recording is correct whatever the caller records around it, optional timestamps per node, and
//! copies of the kept tensors into a readback buffer.
//!
//! The GEMM-family kernels are prepared once (their descriptor sets never change). The attention
//! and element-wise kernels allocate their descriptor sets per call, so those come from one of
//! `frames_in_flight` arenas used in turn: an arena is reset when its turn comes again, which is
//! safe as long as no more than `frames_in_flight` recordings are pending on the GPU at once.

use std::sync::Arc;

use crate::gpu::{
    BufferBinding, DescriptorArena, GpuBuffer, GpuContext, GpuError, MemoryKind, Recorder,
    StageTime, TimestampPool, UploadBatch,
};
use crate::nr::graph::{Graph, Node, Op, TensorId};
use crate::nr::reference::Profiles;

use super::attention::{
    record_normalize, record_vit_attention, record_window_attention, NormalizeKernel,
};
use super::elementwise::{record_pool, record_post_blend, record_upmerge};
use super::gemm::{self, Dispatch};
use super::{GpuWeights, RecordError, Workspace};

/// Bytes of one head's attention prior.
const PRIOR_BYTES: u64 = 8192;

/// Which tensors stay readable after a frame (unshared in the workspace, copied to readback).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Keep {
    /// Only the head (always kept).
    Head,
    /// The 75 boundaries and the head (the `verify` tool, parity tests).
    Boundaries,
    /// Every tensor (debugging; the workspace then shares no memory).
    All,
}

/// How a [`NetworkRecorder`] is built.
#[derive(Clone, Copy, Debug)]
pub struct NetworkOptions {
    pub profiles: Profiles,
    pub keep: Keep,
    /// Record copies of the kept tensors into a host-visible readback buffer.
    pub readback: bool,
    /// Write a timestamp after every node, labelled with the node's label (when the device has
    /// compute timestamps); group them by [`Node::block`] for a per-block profile.
    pub timestamps: bool,
    /// Recordings that may be pending on the GPU at once (at least 1).
    pub frames_in_flight: usize,
}

impl Default for NetworkOptions {
    fn default() -> Self {
        NetworkOptions {
            profiles: Profiles::NATIVE,
            keep: Keep::Head,
            readback: false,
            timestamps: false,
            frames_in_flight: 3,
        }
    }
}

/// The network of one geometry on one device.
pub struct NetworkRecorder {
    ctx: Arc<GpuContext>,
    graph: Graph,
    weights: Arc<GpuWeights>,
    workspace: Workspace,
    profiles: Profiles,
    /// Kept alive for the prepared descriptor sets.
    _prepared_arena: DescriptorArena,
    prepared: Vec<Option<Dispatch>>,
    frame_arenas: Vec<DescriptorArena>,
    frame: usize,
    /// The arena of the frame being recorded.
    slot: usize,
    timestamps: Option<TimestampPool>,
    readback: Option<GpuBuffer>,
    /// Offset of each kept tensor in the readback buffer.
    readback_at: Vec<Option<u64>>,
}

impl NetworkRecorder {
    /// Allocate the workspace of `graph`, build its pipelines and prepare the GEMM-family
    /// dispatches.
    pub fn new(
        ctx: &Arc<GpuContext>,
        graph: Graph,
        weights: Arc<GpuWeights>,
        opts: NetworkOptions,
    ) -> Result<NetworkRecorder, RecordError> {
        gemm::check_profiles(opts.profiles)?;
        let kept: Vec<TensorId> = match opts.keep {
            Keep::Head => vec![graph.head],
            Keep::Boundaries => graph
                .boundaries
                .iter()
                .map(|b| b.1)
                .chain([graph.head])
                .collect(),
            Keep::All => (0..graph.tensors.len()).collect(),
        };
        let workspace = Workspace::new(ctx, &graph, &kept)?;
        let gemm_nodes = graph
            .nodes
            .iter()
            .filter(|n| matches!(n.op, Op::Gemm { .. } | Op::Adapter { .. } | Op::Head { .. }))
            .count() as u32;
        let other_nodes = graph.nodes.len() as u32 - gemm_nodes;
        // A GEMM binds 7 buffers (the adapter and head fewer), the sum of a split-K GEMM 4 more
        // in a second set.
        let mut prepared_arena =
            DescriptorArena::new(ctx, 2 * gemm_nodes.max(1), 11 * gemm_nodes.max(1))?;
        let mut prepared = Vec::with_capacity(graph.nodes.len());
        for (i, node) in graph.nodes.iter().enumerate() {
            let binding = |t: TensorId| workspace.binding(t);
            prepared.push(gemm::prepare_node(
                ctx,
                &mut prepared_arena,
                opts.profiles,
                &graph,
                node,
                &weights,
                &binding,
                workspace.scratch(i),
            )?);
        }
        let frame_arenas = (0..opts.frames_in_flight.max(1))
            .map(|_| DescriptorArena::new(ctx, other_nodes.max(1), 6 * other_nodes.max(1)))
            .collect::<Result<Vec<_>, _>>()?;
        let timestamps = if opts.timestamps {
            TimestampPool::new(ctx, graph.nodes.len() as u32 + 2)?
        } else {
            None
        };
        let mut readback_at = vec![None; graph.tensors.len()];
        let readback = if opts.readback {
            let mut at = 0u64;
            for &t in &kept {
                readback_at[t] = Some(at);
                at += workspace.plan().slots[t].1.div_ceil(4) * 4;
            }
            Some(GpuBuffer::new(
                ctx,
                "nr readback",
                at.max(4),
                MemoryKind::Readback,
            )?)
        } else {
            None
        };
        Ok(NetworkRecorder {
            ctx: Arc::clone(ctx),
            graph,
            weights,
            workspace,
            profiles: opts.profiles,
            _prepared_arena: prepared_arena,
            prepared,
            frame_arenas,
            frame: 0,
            slot: 0,
            timestamps,
            readback,
            readback_at,
        })
    }

    pub fn graph(&self) -> &Graph {
        &self.graph
    }

    /// The workspace binding of a tensor (e.g. the features the caller's prepare pass writes:
    /// `tensor(graph().features)`, or the head its compose pass reads).
    pub fn tensor(&self, t: TensorId) -> BufferBinding {
        self.workspace.binding(t)
    }

    /// Device bytes of the workspace.
    pub fn workspace_bytes(&self) -> u64 {
        self.workspace.bytes()
    }

    /// Record an upload of f32 features `[field rows][16]` into the workspace (for tests and
    /// tools; the frame pipeline writes them with its prepare kernel).
    pub fn upload_features(
        &self,
        rec: &mut Recorder<'_>,
        batch: &mut UploadBatch,
        features: &[f32],
    ) -> Result<(), RecordError> {
        let t = self.graph.features;
        let expected = self.graph.rows(t) * 16;
        if features.len() != expected {
            return Err(RecordError::Graph(format!(
                "features: expected {expected} f32 values ([field rows][16]), got {}",
                features.len()
            )));
        }
        let bytes: Vec<u8> = features.iter().flat_map(|x| x.to_le_bytes()).collect();
        let b = self.workspace.binding(t);
        batch.upload(rec, self.workspace.buffer(), b.offset, &bytes)?;
        Ok(())
    }

    /// Record the whole network into `rec`.
    pub fn record(&mut self, rec: &mut Recorder<'_>) -> Result<(), RecordError> {
        self.record_nodes(rec, 0..self.graph.nodes.len())
    }

    /// Record nodes `range` of the schedule (in order; a frame is every node once, in ranges that
    /// follow each other, possibly in separate command buffers submitted in order). Barriers at
    /// entry and exit make each part correct whatever the caller records around it; the kept
    /// tensors are copied to readback after the last node.
    pub fn record_nodes(
        &mut self,
        rec: &mut Recorder<'_>,
        range: std::ops::Range<usize>,
    ) -> Result<(), RecordError> {
        let len = self.graph.nodes.len();
        if range.start > range.end || range.end > len {
            return Err(RecordError::Graph(format!(
                "node range {range:?} outside the schedule's {len} nodes"
            )));
        }
        // Entry: whatever the caller wrote before (features by a shader or a copy) is visible,
        // and earlier reads of the workspace are done before this part overwrites it.
        rec.compute_to_compute();
        rec.transfer_to_compute();
        if range.start == 0 {
            if let Some(ts) = self.timestamps.as_mut() {
                ts.reset(rec);
                ts.mark(rec, "start")?;
            }
            self.slot = self.frame % self.frame_arenas.len();
            self.frame += 1;
            self.frame_arenas[self.slot].reset()?;
        }
        for i in range.clone() {
            if i > range.start {
                rec.compute_to_compute();
            }
            match &self.prepared[i] {
                Some(d) => d.record(rec)?,
                None => self.record_other(i, self.slot, rec)?,
            }
            if let Some(ts) = self.timestamps.as_mut() {
                ts.mark(rec, &self.graph.nodes[i].label)?;
            }
        }
        // Exit: results are visible to the caller's later shaders and copies.
        rec.compute_to_compute();
        rec.compute_to_transfer();
        if range.end == len {
            if let Some(rb) = &self.readback {
                for (t, at) in self.readback_at.iter().enumerate() {
                    if let Some(at) = at {
                        let src = self.workspace.binding(t);
                        let size = self.workspace.plan().slots[t].1;
                        rec.copy(src, rb.range(*at, size)?, size)?;
                    }
                }
                rec.to_host();
            }
        }
        Ok(())
    }

    fn record_other(
        &mut self,
        i: usize,
        slot: usize,
        rec: &mut Recorder<'_>,
    ) -> Result<(), RecordError> {
        let node: &Node = &self.graph.nodes[i];
        let g = &self.graph;
        let ws = &self.workspace;
        let w = &self.weights;
        let ctx = &self.ctx;
        let arena = &mut self.frame_arenas[slot];
        let b = |t: TensorId| ws.binding(t);
        let size = |t: TensorId| g.geometry.level(g.tensors[t].level);
        let p = &self.profiles.fp8;
        match &node.op {
            Op::Normalize {
                qkv,
                heads,
                temperatures,
                vit,
                q,
                k,
                v,
            } => record_normalize(
                ctx,
                rec,
                arena,
                NormalizeKernel::for_device(ctx),
                b(*qkv),
                w.binding(*temperatures, 4 * *heads as u64)?,
                w.normalize_table()?,
                b(*q),
                b(*k),
                b(*v),
                g.rows(*qkv) as u32,
                *heads as u32,
                *vit,
            )?,
            Op::WindowAttention {
                q,
                k,
                v,
                heads,
                priors,
                phase,
                out,
            } => record_window_attention(
                ctx,
                rec,
                arena,
                b(*q),
                b(*k),
                b(*v),
                w.binding(*priors, *heads as u64 * PRIOR_BYTES)?,
                b(*out),
                w.attention_table()?,
                size(*q),
                *heads as u32,
                *phase as u32,
                p,
            )?,
            Op::VitAttention {
                q,
                k,
                v,
                heads,
                out,
            } => record_vit_attention(
                ctx,
                rec,
                arena,
                b(*q),
                b(*k),
                b(*v),
                b(*out),
                w.attention_table()?,
                g.rows(*q) as u32,
                *heads as u32,
                p,
            )?,
            Op::Pool { input, out } => record_pool(
                ctx,
                rec,
                arena,
                b(*input),
                b(*out),
                size(*input),
                size(*out),
                g.tensors[*input].channels as u32,
            )?,
            Op::UpMerge {
                low,
                skip,
                scale,
                out,
                out_raw,
            } => {
                let c = g.tensors[*skip].channels;
                record_upmerge(
                    ctx,
                    rec,
                    arena,
                    b(*low),
                    b(*skip),
                    g.tensors[*skip].dtype,
                    w.binding(*scale, 2 * c as u64)?,
                    b(*out),
                    out_raw.map(b),
                    size(*low),
                    size(*skip),
                    c as u32,
                )?
            }
            Op::PostBlend {
                low,
                skip,
                input_scale,
                adapter_scale,
                out_raw,
                out,
            } => record_post_blend(
                ctx,
                rec,
                arena,
                b(*low),
                b(*skip),
                w.binding(*input_scale, 64)?,
                w.binding(*adapter_scale, 64)?,
                b(*out_raw),
                b(*out),
                size(*low),
                size(*skip),
            )?,
            Op::Gemm { .. } | Op::Adapter { .. } | Op::Head { .. } => {
                return Err(RecordError::Graph(format!(
                    "{}: GEMM-family node without a prepared dispatch",
                    node.label
                )))
            }
        }
        Ok(())
    }

    /// The bytes of a kept tensor after the recording's submission has completed (requires
    /// `readback`).
    pub fn read_tensor(&self, t: TensorId) -> Result<Vec<u8>, GpuError> {
        let name = || {
            format!(
                "tensor `{}`",
                self.graph.tensors.get(t).map_or("?", |x| &x.name)
            )
        };
        let rb = self
            .readback
            .as_ref()
            .ok_or_else(|| GpuError::invalid(name(), "the recorder was built without readback"))?;
        let at = self
            .readback_at
            .get(t)
            .copied()
            .flatten()
            .ok_or_else(|| GpuError::invalid(name(), "is not kept"))?;
        let mut v = vec![0u8; self.workspace.plan().slots[t].1 as usize];
        rb.read(at, &mut v)?;
        Ok(v)
    }

    /// The head `[field rows][4]` f32 (requires `readback`).
    pub fn read_head(&self) -> Result<Vec<f32>, GpuError> {
        Ok(self
            .read_tensor(self.graph.head)?
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect())
    }

    /// Per-node GPU times of the last completed frame, labelled with the node labels (`None`
    /// while not available or without timestamps).
    pub fn timings(&self) -> Result<Option<Vec<StageTime>>, GpuError> {
        match &self.timestamps {
            Some(ts) => ts.read(),
            None => Ok(None),
        }
    }
}
