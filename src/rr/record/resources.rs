//! The device buffers of RR's GPU route: the tensors' placement (`super::slots`), the weights and
//! tables it binds (`super::weights::RrGpuWeights`: shared by the features of a device, or the
//! instance's own), and the small scratch buffers some kernels bind.

use std::collections::HashMap;
use std::sync::Arc;

use crate::gpu::{BufferBinding, GpuBuffer, GpuContext, GpuError, MemoryKind, Recorder};
use crate::rr::graph::{Graph, Mat, TensorId, Vector};
use crate::rr::layers::LayerId;

use super::slots::{tensor_bytes, Placement};
use super::weights::RrGpuWeights;

/// Most workgroups of the exposure stage's first pass (one 64-bit partial sum each).
pub(super) const EXPOSURE_PARTIALS: u64 = 1024;

/// The device buffers of one RR instance.
pub struct Resources {
    /// The device-local buffers tensors live in (`slots::Placement`: one arena, or one buffer per
    /// tensor), and each tensor's buffer and offset.
    buffers: Vec<GpuBuffer>,
    buffer_of: Vec<usize>,
    offset: Vec<u64>,
    /// Each tensor's bytes (at least 16, a multiple of 4).
    sizes: Vec<u64>,
    /// The weights and tables, and where the kernels find them in its buffer.
    weights: Arc<RrGpuWeights>,
    pub(super) biases: HashMap<LayerId, usize>,
    pub(super) act: usize,
    pub(super) exp: usize,
    pub(super) sigmoid: usize,
    pub(super) tanh: usize,
    /// The bytes of weights of the instance's own ([`RrGpuWeights::private`]) until staged;
    /// empty for shared ones (their owner uploads them).
    pending: Vec<u8>,
    /// Bound where a kernel reads nothing (`dummy`) or writes nothing (`sink`).
    pub(super) dummy: GpuBuffer,
    pub(super) sink: GpuBuffer,
    /// The exposure stage's per-workgroup 64-bit partial sums.
    pub(super) partials: GpuBuffer,
    /// The exposure value as one f32 word, written on the device (the caller's exposure
    /// texture's first texel, imported) and read by the exposure stage when the frame says so
    /// (`FrameConstants::exposure_on_device`).
    pub exposure_input: GpuBuffer,
}

impl Resources {
    /// Buffers for every tensor of `graph` (shared by tensors whose lifetimes do not overlap,
    /// unless `keep_all`), binding `weights`; `pending` is what [`Resources::record_constants`]
    /// or [`Resources::stage_constants`] uploads into them (empty when their owner does).
    pub fn new(
        ctx: &Arc<GpuContext>,
        graph: &Graph,
        weights: Arc<RrGpuWeights>,
        pending: Vec<u8>,
        keep_all: bool,
    ) -> Result<Self, GpuError> {
        // Tensors above `maxStorageBufferRange` are bound in bands (`super::bands`, planned
        // before this by the owner, which refuses what no band makes fit).
        let sizes: Vec<u64> = (0..graph.tensors.len())
            .map(|t| tensor_bytes(graph, t))
            .collect();
        let placed = Placement::assign(graph, keep_all);
        let buffers = placed
            .buffers
            .iter()
            .enumerate()
            .map(|(i, &bytes)| {
                let name = if keep_all {
                    format!("rr {}", graph.tensors[i].name)
                } else {
                    "rr tensor arena".to_string()
                };
                GpuBuffer::new(ctx, &name, bytes, MemoryKind::DeviceLocal)
            })
            .collect::<Result<Vec<_>, _>>()?;
        let [act, exp, sigmoid, tanh] = weights.tables();
        let biases = weights.score_bias_index();
        Ok(Resources {
            buffers,
            buffer_of: placed.buffer_of,
            offset: placed.offset,
            sizes,
            weights,
            biases,
            act,
            exp,
            sigmoid,
            tanh,
            pending,
            dummy: GpuBuffer::new(ctx, "rr unused input", 16, MemoryKind::DeviceLocal)?,
            sink: GpuBuffer::new(ctx, "rr unused output", 16, MemoryKind::DeviceLocal)?,
            partials: GpuBuffer::new(
                ctx,
                "rr exposure partials",
                8 * EXPOSURE_PARTIALS,
                MemoryKind::DeviceLocal,
            )?,
            exposure_input: GpuBuffer::new(ctx, "rr exposure input", 16, MemoryKind::DeviceLocal)?,
        })
    }

    /// Record the uploads of the instance's own weights and tables (once, before the first
    /// frame) and the unused input's clear. Follow with a transfer -> compute barrier.
    pub fn record_constants(
        &mut self,
        rec: &mut Recorder<'_>,
        batch: &mut crate::gpu::UploadBatch,
    ) -> Result<(), GpuError> {
        self.stage_constants(batch)?;
        batch.record(rec);
        rec.fill(self.dummy.binding(), 0)?;
        Ok(())
    }

    /// [`Resources::record_constants`] in two steps, for an owner that must not fail once it
    /// recorded a command (the NGX feature): stage every upload now (allocations: can fail),
    /// record them later with [`Resources::record_staged`] (cannot fail).
    pub fn stage_constants(&mut self, batch: &mut crate::gpu::UploadBatch) -> Result<(), GpuError> {
        if !self.pending.is_empty() {
            self.weights.stage_into(batch, &self.pending)?;
            self.pending = Vec::new();
        }
        Ok(())
    }

    /// The weights and tables it binds.
    pub fn weights(&self) -> &Arc<RrGpuWeights> {
        &self.weights
    }

    /// Record the copies [`Resources::stage_constants`] staged and the unused input's clear.
    pub fn record_staged(&self, rec: &mut Recorder<'_>, batch: &mut crate::gpu::UploadBatch) {
        batch.record(rec);
        rec.zero_words(self.dummy.binding());
    }

    /// Tensor `t`'s range (its size rounded up to 4 bytes, at least 16).
    pub fn t(&self, t: TensorId) -> BufferBinding {
        BufferBinding {
            offset: self.offset[t],
            range: self.sizes[t],
            ..self.buffers[self.buffer_of[t]].binding()
        }
    }

    /// The buffer holding tensor `t` and the tensor's offset in it.
    pub fn placed(&self, t: TensorId) -> (&GpuBuffer, u64) {
        (&self.buffers[self.buffer_of[t]], self.offset[t])
    }

    /// Bytes of all tensor buffers.
    pub fn tensor_memory(&self) -> u64 {
        self.buffers.iter().map(|b| b.size()).sum()
    }

    pub(super) fn c(&self, i: usize) -> BufferBinding {
        self.weights.c(i)
    }

    pub(super) fn mat(&self, layer: LayerId, m: Mat) -> Result<BufferBinding, GpuError> {
        self.weights.mat(layer, m)
    }

    pub(super) fn vec(&self, layer: LayerId, v: Vector) -> Result<BufferBinding, GpuError> {
        self.weights.vec(layer, v)
    }
}
