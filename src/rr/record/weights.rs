//! [`RrGpuWeights`]: RR's weights and the numerics' tables on one device — the natural `[n][k]`
//! E4M3 matrices and f16 vectors the kernels bind (what `rr::reference::Weights` decodes from
//! the prepared images), the score biases per layer, and the act / exp / sigmoid / tanh tables.
//!
//! They depend on the model alone, not on an instance's geometry or preset: the set is every
//! item the graphs of both presets refer to ([`Contents::of`]; a unit test checks that another
//! geometry refers to no other). So the features of one device share one copy: a feature
//! creation takes them through [`RrGpuWeights::for_feature`] (uploaded once per device and
//! model, `gpu::share`'s rule: staged by the first creation, shared only once its upload is
//! recorded, freed with the last feature holding them). [`RrGpuWeights::private`] makes a copy of
//! one's own (the tools' and tests' `GpuFrame::new`, uploaded by `GpuFrame::record_setup`).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use ash::vk::Handle;

use crate::gpu::{
    BufferBinding, DeviceRegistry, DeviceShare, GpuBuffer, GpuContext, GpuError, MemoryKind,
    UploadBatch,
};
use crate::numerics::rr::{act, gates};
use crate::rr::geometry::{Geometry, Size};
use crate::rr::graph::{self, Graph, Mat, Op, Seed, Vector};
use crate::rr::layers::LayerId;
use crate::rr::preset::Preset;
use crate::rr::reference::Weights;
use crate::rr::weights::model::RrModel;
use crate::rr::weights::RrWeights;

static REGISTRY: DeviceRegistry<RrGpuWeights> = DeviceRegistry::new();

/// Least alignment of every item in the buffer (the device may ask for more).
const ALIGN: u64 = 256;

/// How many times RR weights were staged for a device (shared creations stage none): what the
/// tests read to prove one upload per device ([`RrGpuWeights::uploads`]).
static UPLOADS: AtomicU64 = AtomicU64::new(0);

/// Which item (of `RrGpuWeights::at`) each matrix, vector, bias table and lookup table is.
#[derive(Debug, Default)]
struct Index {
    mats: HashMap<(LayerId, Mat), usize>,
    vecs: HashMap<(LayerId, Vector), usize>,
    biases: HashMap<LayerId, usize>,
    act: usize,
    exp: usize,
    sigmoid: usize,
    tanh: usize,
}

/// The items on the host: their index, names and bytes.
struct Contents {
    index: Index,
    items: Vec<(String, Vec<u8>)>,
}

fn halves(v: &[u16]) -> Vec<u8> {
    v.iter().flat_map(|h| h.to_le_bytes()).collect()
}

/// A constant buffer's size for `bytes` of contents (also the tensors' rule,
/// `super::slots::tensor_bytes`: at least 16, a multiple of 4).
fn padded(bytes: usize) -> u64 {
    (bytes.max(16).div_ceil(4) * 4) as u64
}

fn weights_error(e: impl std::fmt::Display) -> GpuError {
    GpuError::invalid("rr weights", e.to_string())
}

impl Contents {
    /// Every item the graphs of both presets refer to, decoded from `w`, and the tables.
    fn of(w: &RrWeights) -> Result<Contents, GpuError> {
        let weights = Weights::new(w).map_err(weights_error)?;
        let mut c = Contents {
            index: Index::default(),
            items: Vec::new(),
        };
        // The weights do not depend on the geometry; the golden test's size is a valid one.
        let geometry =
            Geometry::new(Size::new(64, 48), Size::new(96, 72)).map_err(weights_error)?;
        for preset in [Preset::D, Preset::E] {
            c.add_graph(&graph::build(&geometry, preset), &weights)?;
        }
        c.index.act = c.add("rr act table".into(), halves(&act::act_table()[..]));
        c.index.exp = c.add("rr exp table".into(), halves(&gates::exp_table()[..]));
        c.index.sigmoid = c.add(
            "rr sigmoid table".into(),
            halves(&gates::sigmoid_table()[..]),
        );
        let tanh_words: Vec<u8> = gates::tanh_table()
            .iter()
            .flat_map(|w| w.to_le_bytes())
            .collect();
        c.index.tanh = c.add("rr tanh table".into(), tanh_words);
        Ok(c)
    }

    fn add(&mut self, name: String, bytes: Vec<u8>) -> usize {
        self.items.push((name, bytes));
        self.items.len() - 1
    }

    /// The items of `graph` not yet added.
    fn add_graph(&mut self, graph: &Graph, weights: &Weights) -> Result<(), GpuError> {
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
                    if !self.index.biases.contains_key(layer) {
                        let all: Vec<u16> = weights
                            .score_biases(*layer)
                            .iter()
                            .flatten()
                            .copied()
                            .collect();
                        let i = self.add(format!("rr {layer} score biases"), halves(&all));
                        self.index.biases.insert(*layer, i);
                    }
                    (None, vec![])
                }
                _ => (None, vec![]),
            };
            if let Some(m) = m {
                if !self.index.mats.contains_key(&(m.layer, m.mat)) {
                    let (natural, _) = weights.mat(&m).map_err(weights_error)?;
                    let i = self.add(format!("rr {} {:?}", m.layer, m.mat), natural.codes.clone());
                    self.index.mats.insert((m.layer, m.mat), i);
                }
            }
            for v in vs {
                if !self.index.vecs.contains_key(&(v.layer, v.vec)) {
                    let data = weights.vec(&v).map_err(weights_error)?;
                    let i = self.add(format!("rr {} {:?}", v.layer, v.vec), halves(data));
                    self.index.vecs.insert((v.layer, v.vec), i);
                }
            }
        }
        Ok(())
    }
}

/// RR's weights and tables on one device (see the module documentation): one device-local
/// buffer holding every item at an aligned offset (one buffer per item, hundreds, made each
/// upload and free cost the validation layer about 0.27 MiB it kept: `docs/testing.md`).
pub struct RrGpuWeights {
    buffer: GpuBuffer,
    /// Each item's (offset, bytes) in `buffer`.
    at: Vec<(u64, u64)>,
    index: Index,
}

impl std::fmt::Debug for RrGpuWeights {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RrGpuWeights")
            .field("items", &self.at.len())
            .field("bytes", &self.bytes())
            .finish()
    }
}

/// The registry key of `model` on `ctx`'s device.
fn registry_key(ctx: &GpuContext, model: &RrModel) -> u64 {
    crate::model::load::device_key(ctx.device().handle().as_raw(), model.dir(), model.stages())
}

impl RrGpuWeights {
    /// The buffer of `w`'s items (not yet written) and the bytes it must receive.
    fn allocate(ctx: &Arc<GpuContext>, w: &RrWeights) -> Result<(RrGpuWeights, Vec<u8>), GpuError> {
        let contents = Contents::of(w)?;
        // Every item's binding starts at an offset the device accepts for a storage buffer.
        let align = ctx
            .capabilities()
            .min_storage_buffer_offset_alignment
            .max(ALIGN);
        let mut host = Vec::new();
        let mut at = Vec::with_capacity(contents.items.len());
        for (_, bytes) in &contents.items {
            let offset = (host.len() as u64).div_ceil(align) * align;
            host.resize(offset as usize, 0);
            host.extend_from_slice(bytes);
            let size = padded(bytes.len());
            host.resize((offset + size) as usize, 0);
            at.push((offset, size));
        }
        let buffer = GpuBuffer::new(
            ctx,
            "rr weights and tables",
            host.len() as u64,
            MemoryKind::DeviceLocal,
        )?;
        Ok((
            RrGpuWeights {
                buffer,
                at,
                index: contents.index,
            },
            host,
        ))
    }

    /// A copy of one's own, not shared: the buffer and the bytes still to upload into it
    /// ([`RrGpuWeights::stage_into`]).
    pub fn private(
        ctx: &Arc<GpuContext>,
        w: &RrWeights,
    ) -> Result<(RrGpuWeights, Vec<u8>), GpuError> {
        RrGpuWeights::allocate(ctx, w)
    }

    /// Stage the upload of `host` (from [`RrGpuWeights::private`]) into `batch`.
    pub fn stage_into(&self, batch: &mut UploadBatch, host: &[u8]) -> Result<(), GpuError> {
        batch.stage(&self.buffer, 0, host)?;
        UPLOADS.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    /// The weights of `model` for a feature being created on `ctx`'s device: shared when a live
    /// feature's creation uploaded them, else built and staged in `batch` (nothing recorded;
    /// [`DeviceShare::record`] records and publishes them once nothing else can fail).
    pub fn for_feature(
        ctx: &Arc<GpuContext>,
        model: &RrModel,
        batch: &mut UploadBatch,
    ) -> Result<DeviceShare<RrGpuWeights>, GpuError> {
        REGISTRY.share_or_stage(registry_key(ctx, model), || {
            let (weights, host) = RrGpuWeights::allocate(ctx, model.weights())?;
            weights.stage_into(batch, &host)?;
            Ok(weights)
        })
    }

    /// Device bytes held.
    pub fn bytes(&self) -> u64 {
        self.buffer.size()
    }

    /// How many times weights were staged for upload since the process started (a shared
    /// creation stages none).
    pub fn uploads() -> u64 {
        UPLOADS.load(Ordering::Relaxed)
    }

    /// How many (device, model) copies are alive.
    pub fn live() -> usize {
        REGISTRY.live()
    }

    /// Constant buffer `i` (the indices [`RrGpuWeights::tables`] and
    /// [`RrGpuWeights::score_bias_index`] give).
    pub(super) fn c(&self, i: usize) -> BufferBinding {
        let (offset, range) = self.at[i];
        BufferBinding {
            offset,
            range,
            ..self.buffer.binding()
        }
    }

    /// The buffer indices of the act, exp, sigmoid and tanh tables.
    pub(super) fn tables(&self) -> [usize; 4] {
        let i = &self.index;
        [i.act, i.exp, i.sigmoid, i.tanh]
    }

    /// The buffer index of each layer's score biases.
    pub(super) fn score_bias_index(&self) -> HashMap<LayerId, usize> {
        self.index.biases.clone()
    }

    /// Matrix `m` of `layer`.
    pub fn mat(&self, layer: LayerId, m: Mat) -> Result<BufferBinding, GpuError> {
        self.index
            .mats
            .get(&(layer, m))
            .map(|&i| self.c(i))
            .ok_or_else(|| weights_error(format!("{layer} {m:?} not loaded")))
    }

    /// Vector `v` of `layer`.
    pub fn vec(&self, layer: LayerId, v: Vector) -> Result<BufferBinding, GpuError> {
        self.index
            .vecs
            .get(&(layer, v))
            .map(|&i| self.c(i))
            .ok_or_else(|| weights_error(format!("{layer} {v:?} not loaded")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The keys of the matrices, vectors and score biases a graph refers to.
    type Keys = (Vec<(LayerId, Mat)>, Vec<(LayerId, Vector)>, Vec<LayerId>);

    /// The keys of every item a graph refers to.
    fn keys(graph: &Graph) -> Keys {
        let (mut m, mut v, mut b) = (Vec::new(), Vec::new(), Vec::new());
        for node in &graph.nodes {
            match &node.op {
                Op::Gemm { mat, seed, .. } => {
                    m.push((mat.layer, mat.mat));
                    if let Seed::Bias(x) | Seed::Residual { bias: x, .. } = seed {
                        v.push((x.layer, x.vec));
                    }
                }
                Op::Merge { mat, bias, .. } | Op::Expand { mat, bias, .. } => {
                    m.push((mat.layer, mat.mat));
                    v.push((bias.layer, bias.vec));
                }
                Op::Norm { gain, .. } => v.push((gain.layer, gain.vec)),
                Op::Attention { layer, .. } => b.push(*layer),
                _ => {}
            }
        }
        m.sort_by_key(|k| format!("{k:?}"));
        m.dedup();
        v.sort_by_key(|k| format!("{k:?}"));
        v.dedup();
        b.sort_by_key(|k| format!("{k:?}"));
        b.dedup();
        (m, v, b)
    }

    /// The shared set does not depend on the instance: other geometries (padding, another
    /// scale) and either preset refer to exactly the same items, so one device copy serves
    /// every feature.
    #[test]
    fn every_geometry_and_preset_refers_to_the_same_weights() {
        let base = keys(&graph::build(
            &Geometry::new(Size::new(64, 48), Size::new(96, 72)).expect("geometry"),
            Preset::D,
        ));
        assert!(!base.0.is_empty() && !base.1.is_empty() && base.2.len() == 11);
        for (r, o) in [
            ((32, 32), (64, 32)),
            ((100, 60), (170, 95)),
            ((320, 180), (640, 360)),
        ] {
            for p in [Preset::D, Preset::E] {
                let g = Geometry::new(Size::new(r.0, r.1), Size::new(o.0, o.1)).expect("geometry");
                assert_eq!(keys(&graph::build(&g, p)), base, "{r:?} -> {o:?} {p:?}");
            }
        }
    }
}
