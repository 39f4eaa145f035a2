//! The network schedule: the one op list of a frame, built from the geometry alone.
//!
//! Both executors consume this list — the CPU reference (`nr::reference`) and the GPU recorder —
//! so the network's wiring is encoded here and nowhere else. An op names its input and output
//! tensors, the weight slices it reads (record + byte offset + shape, resolved against a model by
//! the executor), its seed, epilogue, split-K partition and window phase. Ops whose output is one of
//! the 75 published boundaries carry the boundary's name.

mod build;

pub use build::build;

use crate::nr::geometry::{Geometry, Level};

/// Index of a tensor in [`Graph::tensors`].
pub type TensorId = usize;

/// Element type of a tensor.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DType {
    /// E4M3 codes, one byte per element.
    E4,
    /// IEEE binary16 bit patterns.
    F16,
    /// f32 (network input features and the head).
    F32,
}

impl DType {
    /// Bytes per element.
    pub fn size(self) -> usize {
        match self {
            DType::E4 => 1,
            DType::F16 => 2,
            DType::F32 => 4,
        }
    }
}

/// A tensor: `[rows][channels]`, rows = the tokens of one level in row-major order over the padded
/// level (`y * width + x`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tensor {
    pub name: String,
    pub level: Level,
    pub channels: usize,
    pub dtype: DType,
}

/// A byte slice of one weight record: `block<B>.layer<L>.layer` at `offset`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct WeightRef {
    pub block: usize,
    pub layer: usize,
    pub offset: usize,
}

/// A packed FP8 weight matrix of `groups` batches, each `k` (input) x `n` (output): stored as one
/// packed matrix of `groups * k` rows and `n` columns (spec §3.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MatRef {
    pub at: WeightRef,
    pub k: usize,
    pub n: usize,
    pub groups: usize,
}

impl MatRef {
    /// Packed bytes of the whole (batched) matrix.
    pub fn bytes(&self) -> usize {
        self.groups * self.k * self.n
    }
}

/// How a grouped GEMM reads its input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InputMode {
    /// Every group reads all `k` input channels (expert W1: all experts see the same token).
    Shared,
    /// Group g reads input channels `g*k .. (g+1)*k` (expert W2, split-512 branches).
    Split,
}

/// What a GEMM publishes. Every epilogue first rounds the f16 MMA result (after the split-K sum).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Epilogue {
    /// `E4(SiLU(x))`.
    SiluE4,
    /// `E4(x)`.
    E4,
    /// The raw f16 result.
    F16,
    /// Both: raw f16 into `out_raw` and `E4` of the same value into `out`.
    Dual,
}

/// The residual seed of a GEMM: the C operand of its first MMA, `f16(skip * scale[c])`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Seed {
    /// The skip tensor (E4 or raw F16; its dtype says which), same rows and `n*groups` channels.
    pub skip: TensorId,
    /// Per-channel f16 scale vector.
    pub scale: WeightRef,
}

/// One operation of the schedule.
#[derive(Clone, Debug, PartialEq)]
pub enum Op {
    /// Input adapter: f32 features -> f16 (RNE) -> f16 GEMM 16->32 (F24 profile) from zero.
    /// Publishes the raw f16 result and its E4.
    Adapter {
        input: TensorId,
        weights: WeightRef,
        out_raw: TensorId,
        out: TensorId,
    },
    /// A (grouped) FP8 GEMM with optional seed and split-K partitions.
    Gemm {
        input: TensorId,
        mode: InputMode,
        mat: MatRef,
        seed: Option<Seed>,
        /// Split-K partition size (`None` = one chain over the whole K).
        partition: Option<usize>,
        epilogue: Epilogue,
        /// E4 output, or the f16 output for [`Epilogue::F16`].
        out: TensorId,
        /// The raw f16 output for [`Epilogue::Dual`].
        out_raw: Option<TensorId>,
    },
    /// Cosine normalisation of a QKV tensor (f16, head-major 96-column groups) into E4 q', k', v'.
    Normalize {
        qkv: TensorId,
        heads: usize,
        temperatures: WeightRef,
        vit: bool,
        q: TensorId,
        k: TensorId,
        v: TensorId,
    },
    /// Shifted-window attention over 8x8 windows with a learned per-head prior.
    WindowAttention {
        q: TensorId,
        k: TensorId,
        v: TensorId,
        heads: usize,
        priors: WeightRef,
        phase: usize,
        out: TensorId,
    },
    /// Global attention over every token of the level (the ViT), keys padded to a multiple of 64.
    VitAttention {
        q: TensorId,
        k: TensorId,
        v: TensorId,
        heads: usize,
        out: TensorId,
    },
    /// 2x2 average pool of a raw f16 tensor to the next level, published E4 (zero where the 2x2
    /// source leaves the input level).
    Pool { input: TensorId, out: TensorId },
    /// Nearest 2x upsample of a low-level f16 tensor merged with a skip:
    /// `f16(up + skip * scale)` (one rounding) -> E4 (and the raw f16 when `out_raw` is set).
    UpMerge {
        low: TensorId,
        skip: TensorId,
        scale: WeightRef,
        out: TensorId,
        out_raw: Option<TensorId>,
    },
    /// Block 70's input: `u = f16(E4(b69)[x>>1, y>>1] * inputScale)`,
    /// `m = f16(u + E4(b0)[x, y] * adapterScale)` -> raw f16 and E4.
    PostBlend {
        low: TensorId,
        skip: TensorId,
        input_scale: WeightRef,
        adapter_scale: WeightRef,
        out_raw: TensorId,
        out: TensorId,
    },
    /// Head: f16 GEMM 32->4 (F24) of block 70's raw output from zero; f16 stored as f32.
    Head {
        input: TensorId,
        weights: WeightRef,
        out: TensorId,
    },
}

/// An op with its provenance.
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    pub op: Op,
    /// The block this op belongs to (transitions belong to the block that owns their weights).
    pub block: usize,
    /// A short human label (`block-12.qkv`), unique within the graph.
    pub label: String,
    /// The boundary this op's output is, if any (`block-N`, `transition-a-b`).
    pub boundary: Option<String>,
}

/// The whole schedule of one frame.
#[derive(Clone, Debug)]
pub struct Graph {
    pub geometry: Geometry,
    pub tensors: Vec<Tensor>,
    pub nodes: Vec<Node>,
    /// The network input: f32 `[field][16]`.
    pub features: TensorId,
    /// The head: f32 `[field][4]`.
    pub head: TensorId,
    /// The 75 boundaries in graph order: name and the E4 tensor.
    pub boundaries: Vec<(String, TensorId)>,
}

/// The level one pooling step below `l` (the field pools into L0).
pub fn next_level(l: Level) -> Level {
    match l {
        Level::Field => Level::L(0),
        Level::L(k) => Level::L(k + 1),
    }
}

impl Graph {
    /// `(width, height)` of a tensor's level.
    pub fn dims(&self, t: TensorId) -> (usize, usize) {
        let s = self.geometry.level(self.tensors[t].level);
        (s.w as usize, s.h as usize)
    }

    /// Rows (tokens) of a tensor.
    pub fn rows(&self, t: TensorId) -> usize {
        let (w, h) = self.dims(t);
        w * h
    }

    /// The index of the last node that reads each tensor (`None` if never read): lets an executor
    /// free intermediate tensors early.
    pub fn last_use(&self) -> Vec<Option<usize>> {
        let mut last = vec![None; self.tensors.len()];
        for (i, node) in self.nodes.iter().enumerate() {
            for t in node.op.inputs() {
                last[t] = Some(i);
            }
        }
        last
    }
}

impl Op {
    /// The op's kind as a short name (`Gemm`, `WindowAttention`, ...).
    pub fn kind(&self) -> &'static str {
        match self {
            Op::Adapter { .. } => "Adapter",
            Op::Gemm { .. } => "Gemm",
            Op::Normalize { .. } => "Normalize",
            Op::WindowAttention { .. } => "WindowAttention",
            Op::VitAttention { .. } => "VitAttention",
            Op::Pool { .. } => "Pool",
            Op::UpMerge { .. } => "UpMerge",
            Op::PostBlend { .. } => "PostBlend",
            Op::Head { .. } => "Head",
        }
    }

    /// Tensors this op reads.
    pub fn inputs(&self) -> Vec<TensorId> {
        match self {
            Op::Adapter { input, .. } | Op::Pool { input, .. } | Op::Head { input, .. } => {
                vec![*input]
            }
            Op::Gemm { input, seed, .. } => {
                let mut v = vec![*input];
                if let Some(s) = seed {
                    v.push(s.skip);
                }
                v
            }
            Op::Normalize { qkv, .. } => vec![*qkv],
            Op::WindowAttention { q, k, v, .. } | Op::VitAttention { q, k, v, .. } => {
                vec![*q, *k, *v]
            }
            Op::UpMerge { low, skip, .. } | Op::PostBlend { low, skip, .. } => vec![*low, *skip],
        }
    }

    /// Tensors this op writes.
    pub fn outputs(&self) -> Vec<TensorId> {
        match self {
            Op::Adapter { out_raw, out, .. } | Op::PostBlend { out_raw, out, .. } => {
                vec![*out_raw, *out]
            }
            Op::Gemm { out, out_raw, .. } | Op::UpMerge { out, out_raw, .. } => {
                let mut v = vec![*out];
                v.extend(out_raw.iter().copied());
                v
            }
            Op::Normalize { q, k, v, .. } => vec![*q, *k, *v],
            Op::WindowAttention { out, .. }
            | Op::VitAttention { out, .. }
            | Op::Pool { out, .. }
            | Op::Head { out, .. } => {
                vec![*out]
            }
        }
    }
}
#[cfg(test)]
mod tests;
