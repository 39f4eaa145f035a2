//! The device buffers of RR's GPU route: the tensors' placement (`super::slots`), the weights as
//! natural `[n][k]` E4M3 matrices and f16 vectors, the score biases, the numerics' tables, and
//! the small scratch buffers some kernels bind.

use std::collections::HashMap;
use std::sync::Arc;

use crate::gpu::{BufferBinding, GpuBuffer, GpuContext, GpuError, MemoryKind, Recorder};
use crate::numerics::rr::{act, gates};
use crate::rr::graph::{Graph, Mat, Op, Seed, TensorId, Vector};
use crate::rr::layers::LayerId;
use crate::rr::reference::Weights;
use crate::rr::weights::RrWeights;

use super::slots::{tensor_bytes, Placement};

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
    mats: HashMap<(LayerId, Mat), usize>,
    vecs: HashMap<(LayerId, Vector), usize>,
    pub(super) biases: HashMap<LayerId, usize>,
    pub(super) act: usize,
    pub(super) exp: usize,
    pub(super) sigmoid: usize,
    pub(super) tanh: usize,
    /// Constant buffers (weights and tables) and their bytes until uploaded.
    constants: Vec<GpuBuffer>,
    pending: Vec<Vec<u8>>,
    /// Bound where a kernel reads nothing (`dummy`) or writes nothing (`sink`).
    pub(super) dummy: GpuBuffer,
    pub(super) sink: GpuBuffer,
    /// The exposure stage's per-workgroup 64-bit partial sums.
    pub(super) partials: GpuBuffer,
}

fn halves(v: &[u16]) -> Vec<u8> {
    v.iter().flat_map(|h| h.to_le_bytes()).collect()
}

fn padded(bytes: usize) -> u64 {
    // Also the slots' rule (`slots::tensor_bytes`).
    (bytes.max(16).div_ceil(4) * 4) as u64
}

impl Resources {
    /// Buffers for every tensor of `graph` (shared by tensors whose lifetimes do not overlap,
    /// unless `keep_all`) and every weight it refers to.
    pub fn new(
        ctx: &Arc<GpuContext>,
        graph: &Graph,
        w: &RrWeights,
        keep_all: bool,
    ) -> Result<Self, GpuError> {
        let weights =
            Weights::new(w).map_err(|e| GpuError::invalid("rr weights", e.to_string()))?;
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
        let mut constants = Vec::new();
        let mut pending = Vec::new();
        let mut add = |name: String, bytes: Vec<u8>| -> Result<usize, GpuError> {
            let buf = GpuBuffer::new(ctx, &name, padded(bytes.len()), MemoryKind::DeviceLocal)?;
            constants.push(buf);
            pending.push(bytes);
            Ok(constants.len() - 1)
        };
        let mut mats = HashMap::new();
        let mut vecs = HashMap::new();
        let mut biases = HashMap::new();
        for node in &graph.nodes {
            let (m, vs): (Option<_>, Vec<_>) = match &node.op {
                Op::Gemm { mat, seed, .. } => (
                    Some(*mat),
                    match seed {
                        Seed::Zero => vec![],
                        Seed::Bias(b) | Seed::Residual { bias: b, .. } => vec![*b],
                    },
                ),
                Op::Merge { mat, bias, .. } | Op::Expand { mat, bias, .. } => {
                    (Some(*mat), vec![*bias])
                }
                Op::Norm { gain, .. } => (None, vec![*gain]),
                Op::Attention { layer, .. } => {
                    if !biases.contains_key(layer) {
                        let all: Vec<u16> = weights
                            .score_biases(*layer)
                            .iter()
                            .flatten()
                            .copied()
                            .collect();
                        let i = add(format!("rr {layer} score biases"), halves(&all))?;
                        biases.insert(*layer, i);
                    }
                    (None, vec![])
                }
                _ => (None, vec![]),
            };
            if let Some(m) = m {
                if let std::collections::hash_map::Entry::Vacant(e) = mats.entry((m.layer, m.mat)) {
                    let (natural, _) = weights
                        .mat(&m)
                        .map_err(|e| GpuError::invalid("rr weights", e.to_string()))?;
                    e.insert(add(
                        format!("rr {} {:?}", m.layer, m.mat),
                        natural.codes.clone(),
                    )?);
                }
            }
            for v in vs {
                if let std::collections::hash_map::Entry::Vacant(e) = vecs.entry((v.layer, v.vec)) {
                    let data = weights
                        .vec(&v)
                        .map_err(|e| GpuError::invalid("rr weights", e.to_string()))?;
                    e.insert(add(format!("rr {} {:?}", v.layer, v.vec), halves(data))?);
                }
            }
        }
        let act = add("rr act table".into(), halves(&act::act_table()[..]))?;
        let exp = add("rr exp table".into(), halves(&gates::exp_table()[..]))?;
        let sigmoid = add(
            "rr sigmoid table".into(),
            halves(&gates::sigmoid_table()[..]),
        )?;
        let tanh_words: Vec<u8> = gates::tanh_table()
            .iter()
            .flat_map(|w| w.to_le_bytes())
            .collect();
        let tanh = add("rr tanh table".into(), tanh_words)?;
        Ok(Resources {
            buffers,
            buffer_of: placed.buffer_of,
            offset: placed.offset,
            sizes,
            mats,
            vecs,
            biases,
            act,
            exp,
            sigmoid,
            tanh,
            constants,
            pending,
            dummy: GpuBuffer::new(ctx, "rr unused input", 16, MemoryKind::DeviceLocal)?,
            sink: GpuBuffer::new(ctx, "rr unused output", 16, MemoryKind::DeviceLocal)?,
            partials: GpuBuffer::new(
                ctx,
                "rr exposure partials",
                8 * EXPOSURE_PARTIALS,
                MemoryKind::DeviceLocal,
            )?,
        })
    }

    /// Record the uploads of the weights and tables (once, before the first frame). Follow with
    /// a transfer -> compute barrier.
    pub fn record_constants(
        &mut self,
        rec: &mut Recorder<'_>,
        batch: &mut crate::gpu::UploadBatch,
    ) -> Result<(), GpuError> {
        for (buf, bytes) in self.constants.iter().zip(&self.pending) {
            batch.upload(rec, buf, 0, bytes)?;
        }
        rec.fill(self.dummy.binding(), 0)?;
        self.pending.iter_mut().for_each(|p| *p = Vec::new());
        Ok(())
    }

    /// [`Resources::record_constants`] in two steps, for an owner that must not fail once it
    /// recorded a command (the NGX feature): stage every upload now (allocations: can fail),
    /// record them later with [`Resources::record_staged`] (cannot fail).
    pub fn stage_constants(&mut self, batch: &mut crate::gpu::UploadBatch) -> Result<(), GpuError> {
        for (buf, bytes) in self.constants.iter().zip(&self.pending) {
            batch.stage(buf, 0, bytes)?;
        }
        self.pending.iter_mut().for_each(|p| *p = Vec::new());
        Ok(())
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
        self.constants[i].binding()
    }

    pub(super) fn mat(&self, layer: LayerId, m: Mat) -> Result<BufferBinding, GpuError> {
        self.mats
            .get(&(layer, m))
            .map(|&i| self.c(i))
            .ok_or_else(|| GpuError::invalid("rr weights", format!("{layer} {m:?} not loaded")))
    }

    pub(super) fn vec(&self, layer: LayerId, v: Vector) -> Result<BufferBinding, GpuError> {
        self.vecs
            .get(&(layer, v))
            .map(|&i| self.c(i))
            .ok_or_else(|| GpuError::invalid("rr weights", format!("{layer} {v:?} not loaded")))
    }
}
