//! The one RR schedule: the op list of a frame over named tensors, built from the geometry and
//! the preset alone (`build`), walked by both executors: the CPU reference (`rr::reference`)
//! and the GPU recorder, which prepares one `gpu::Dispatch` per op. The network's wiring is
//! stated here and nowhere else.
//!
//! Tensors are `[rows][channels]` over a grid: a token level (row-major over the padded level),
//! the render image, the output image, or a single row. Weights are referred to by layer and
//! item ([`MatRef`], [`VecRef`]); each executor resolves them against `rr::weights` (the CPU
//! reads natural matrices, the GPU the prepared image). Per-frame values (jitter, exposure
//! inputs, history validity, the frame index that picks the window shift) are not in the graph:
//! they are `rr::frame::FrameConstants`, push constants on the GPU.
//!
//! One Swin layer is, in order (spec §3; `docs/rr.md`, "The graph"):
//! `Norm(g1)` -> `Gemm(QK)`, `Gemm(V)` -> `Attention` -> `Gemm(Wo, seed x0 + bo)` ->
//! `Norm(g2)` -> `Gemm(W1, seed b1, act)` -> `Gemm(W2, seed x1 + b2)`, then the merge and the
//! tail head (encoders) or the tail (decoders). enc0 starts with the embedding and the input
//! stage, decoders with the patch expand and skip add, and the frame ends with the output stage.

mod build;
#[cfg(test)]
mod tests;

pub use build::build;

use crate::numerics::f16::F16;
use crate::rr::geometry::{Geometry, Size};
use crate::rr::layers::{LayerId, Side};
use crate::rr::preset::Preset;

/// Index of a tensor in [`Graph::tensors`].
pub type TensorId = usize;

/// Element type of a tensor.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DType {
    /// E4M3 codes, one byte per element.
    E4,
    /// binary16 bit patterns.
    F16,
    /// f32.
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

/// The grid a tensor's rows run over.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Grid {
    /// A token level (0 = render size padded to 32).
    Level(usize),
    /// The render image (unpadded).
    Render,
    /// The output image.
    Output,
    /// A single row (per-frame scalars).
    One,
}

/// A tensor: `[rows][channels]` over its grid, row-major.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tensor {
    pub name: String,
    pub grid: Grid,
    pub channels: usize,
    pub dtype: DType,
}

/// A weight matrix of a layer, natural `[n][k]` (n outputs, k inputs). Per-head and per-chunk
/// items are concatenated: `Qk`/`V` stack the heads' `[32][C]` along n (head h at rows 32h..),
/// `Wo` the heads' `[C][32]` along k (head h at k = 32h..), `W1` the chunks' `[32][C]` along n,
/// `W2` the chunks' `[C][32]` along k. So a chain over k of `Wo` or `W2` is the spec's head-by-
/// head (chunk-by-chunk) accumulation, one k32 step per head (chunk).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Mat {
    EmbedP1,
    EmbedP2,
    Qk,
    V,
    Wo,
    W1,
    W2,
    Merge,
    Expand,
    Tail,
}

/// An f16 vector of a layer. `B1` concatenates the chunks' 32 biases (chunk c at 32c..).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Vector {
    EmbedB1,
    EmbedB2,
    G1,
    Bo,
    G2,
    B1,
    B2,
    MergeBias,
    ExpandBias,
    TailBias,
}

/// A matrix reference with its shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MatRef {
    pub layer: LayerId,
    pub mat: Mat,
    pub n: usize,
    pub k: usize,
}

/// A vector reference with its length.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct VecRef {
    pub layer: LayerId,
    pub vec: Vector,
    pub len: usize,
}

/// The C operand of a GEMM's first k32 step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Seed {
    /// +0.
    Zero,
    /// A per-column bias.
    Bias(VecRef),
    /// The residual: `f16(x[row][col] + bias[col])` (x F16, or E4 decoded).
    Residual { x: TensorId, bias: VecRef },
}

/// What a GEMM publishes from its f16 result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Epilogue {
    /// The f16 result.
    F16,
    /// `q8(x)`.
    Q8,
    /// `q8(act(x))` (the MLP's first GEMM).
    Q8Act,
    /// `q8_relu(x)` (enc0's first embedding GEMM).
    Q8Relu,
}

/// Guide lanes of the render-size `guides` input tensor (f32), in order.
pub mod guide {
    /// Diffuse albedo R, G, B.
    pub const DIFFUSE_ALBEDO: usize = 0;
    /// Specular albedo R, G, B.
    pub const SPECULAR_ALBEDO: usize = 3;
    /// Normal x, y, z.
    pub const NORMALS: usize = 6;
    /// Roughness.
    pub const ROUGHNESS: usize = 9;
    /// Depth.
    pub const DEPTH: usize = 10;
    /// Motion vector x, y in render pixels before `MV.Scale` (previous minus current).
    pub const MOTION: usize = 11;
    /// Specular hit distance.
    pub const SPECULAR_HIT: usize = 13;
    /// Diffuse hit distance.
    pub const DIFFUSE_HIT: usize = 14;
    /// The depth-of-field guide (preset E).
    pub const DEPTH_OF_FIELD: usize = 15;
    /// Lanes.
    pub const LANES: usize = 16;
}

/// One operation of the schedule.
#[derive(Clone, Debug, PartialEq)]
pub enum Op {
    /// The exposure stage: `[One][2]` f16 = the exposure E and its reciprocal.
    Exposure { color: TensorId, out: TensorId },
    /// The previous output (history, output size) reprojected to every render pixel:
    /// `[Render][4]` f16, RGB times the exposure, A = 1 where usable, 0 where not.
    Reproject {
        history: TensorId,
        guides: TensorId,
        exposure: TensorId,
        out: TensorId,
    },
    /// enc0's input: the 32 features of every level-0 token (`[L0][32]` E4) and the
    /// exposure-normalised colour the tails filter (`[L0][4]` f16), padding mirrored.
    Features {
        color: TensorId,
        guides: TensorId,
        history: TensorId,
        exposure: TensorId,
        depth_of_field: bool,
        features: TensorId,
        colour: TensorId,
    },
    /// RMS norm of every row, published as `q8`.
    Norm {
        input: TensorId,
        gain: VecRef,
        eps: F16,
        out: TensorId,
    },
    /// A GEMM over the rows of `input` (E4, `[rows][k]`) with the k32 rule.
    Gemm {
        input: TensorId,
        mat: MatRef,
        seed: Seed,
        epilogue: Epilogue,
        out: TensorId,
    },
    /// Window attention of one layer (scores with the score bias, cubic softmax, P·V), `q8`
    /// of every token's head outputs. The shift is the frame's for `side`.
    Attention {
        u: TensorId,
        v: TensorId,
        layer: LayerId,
        heads: usize,
        level: usize,
        side: Side,
        out: TensorId,
    },
    /// Patch merge: the 2x2 tokens (sub-position `q = 2(y&1) + (x&1)`, k = q·C + c) of `input`
    /// through `mat` with `bias` as the seed, `q8` at the next level.
    Merge {
        input: TensorId,
        mat: MatRef,
        bias: VecRef,
        out: TensorId,
    },
    /// Patch expand and skip add: per coarse token the 4C outputs `mat·low + bias`; sub-position
    /// q's C values go to fine token `(2X + (q&1), 2Y + (q>>1))` as `f16(deq(q8(e)) + deq(skip))`.
    Expand {
        low: TensorId,
        mat: MatRef,
        bias: VecRef,
        skip: TensorId,
        out: TensorId,
    },
    /// An encoder's tail (§4.3): 3x3 kernel prediction over `image` (the level's colour) with
    /// the softmax of logits 0..9, gated by `sigmoid(logit 10)`: `out112 = f - s·f`,
    /// `out120 = s·f`, `out128` (next level) = a quarter of each 2x2 quad's `out112` sum.
    /// enc5 (no `out120`/`out128`): `out112 = f`.
    EncoderTail {
        logits: TensorId,
        image: TensorId,
        out112: TensorId,
        out120: Option<TensorId>,
        out128: Option<TensorId>,
    },
    /// A decoder's tail (§4.4): 3x3 bilinear kernel prediction over the coarser image, blended
    /// with the same level's encoder surfaces. `logits` holds logits 0..10 at channel 0 (the
    /// tail head's output, or dec0's block output).
    DecoderTail {
        logits: TensorId,
        coarse: TensorId,
        low: TensorId,
        detail: TensorId,
        out: TensorId,
    },
    /// dec0's other outputs: `out48 = q8` of block channels 16..23, `out144 = tanh` of channels
    /// 24..27 (f32).
    Dec0Outputs {
        x2: TensorId,
        out48: TensorId,
        out144: TensorId,
    },
    /// The output stage: kernel-prediction upsampling of `image` (dec0's surface) to the output
    /// size with the kernel of `kernel` (dec0's +144), history reprojected and clamped, blended
    /// with the weight of `codes` (dec0's +48), de-exposed. `out` is the output (and the next
    /// history), `alpha` the output alpha.
    Output {
        image: TensorId,
        codes: TensorId,
        kernel: TensorId,
        history: TensorId,
        guides: TensorId,
        color: TensorId,
        exposure: TensorId,
        out: TensorId,
        alpha: TensorId,
    },
}

/// An op with its provenance.
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    pub op: Op,
    /// The layer this op belongs to (`None` for the frame stages).
    pub layer: Option<LayerId>,
    /// A short unique label (`enc2.w1`).
    pub label: String,
}

/// The schedule of one frame.
#[derive(Clone, Debug)]
pub struct Graph {
    pub geometry: Geometry,
    pub preset: Preset,
    pub tensors: Vec<Tensor>,
    pub nodes: Vec<Node>,
    /// Inputs: colour `[Render][4]` f32, guides `[Render][guide::LANES]` f32, the previous
    /// output `[Output][4]` f16.
    pub color: TensorId,
    pub guides: TensorId,
    pub history: TensorId,
    /// Outputs: `[Output][4]` f16 (also the next history) and `[Output][1]` f32 alpha.
    pub output: TensorId,
    pub alpha: TensorId,
    /// Every published tensor in graph order: the layers' block outputs (`enc0`..`dec1` E4
    /// `[L][C]`, `dec0` = its +48 codes `[L0][8]`), the surfaces (`enc0.112`, ...), dec0's
    /// +144, the output and its alpha.
    pub published: Vec<(String, TensorId)>,
}

impl Graph {
    /// The size of a grid.
    pub fn grid_size(&self, g: Grid) -> Size {
        match g {
            Grid::Level(l) => self.geometry.level(l),
            Grid::Render => self.geometry.render,
            Grid::Output => self.geometry.output,
            Grid::One => Size::new(1, 1),
        }
    }

    /// Rows of a tensor.
    pub fn rows(&self, t: TensorId) -> usize {
        self.grid_size(self.tensors[t].grid).area()
    }

    /// Elements of a tensor.
    pub fn elements(&self, t: TensorId) -> usize {
        self.rows(t) * self.tensors[t].channels
    }

    /// The tensor published as `name`.
    pub fn published(&self, name: &str) -> Option<TensorId> {
        self.published.iter().find(|(n, _)| n == name).map(|p| p.1)
    }

    /// The index of the last node that reads each tensor (`None` if never read).
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
    /// The op's kind (`Gemm`, `Attention`, ...).
    pub fn kind(&self) -> &'static str {
        match self {
            Op::Exposure { .. } => "Exposure",
            Op::Reproject { .. } => "Reproject",
            Op::Features { .. } => "Features",
            Op::Norm { .. } => "Norm",
            Op::Gemm { .. } => "Gemm",
            Op::Attention { .. } => "Attention",
            Op::Merge { .. } => "Merge",
            Op::Expand { .. } => "Expand",
            Op::EncoderTail { .. } => "EncoderTail",
            Op::DecoderTail { .. } => "DecoderTail",
            Op::Dec0Outputs { .. } => "Dec0Outputs",
            Op::Output { .. } => "Output",
        }
    }

    /// Tensors the op reads.
    pub fn inputs(&self) -> Vec<TensorId> {
        match self {
            Op::Exposure { color, .. } => vec![*color],
            Op::Reproject {
                history,
                guides,
                exposure,
                ..
            } => vec![*history, *guides, *exposure],
            Op::Features {
                color,
                guides,
                history,
                exposure,
                ..
            } => vec![*color, *guides, *history, *exposure],
            Op::Norm { input, .. } | Op::Merge { input, .. } => vec![*input],
            Op::Gemm { input, seed, .. } => match seed {
                Seed::Residual { x, .. } => vec![*input, *x],
                _ => vec![*input],
            },
            Op::Attention { u, v, .. } => vec![*u, *v],
            Op::Expand { low, skip, .. } => vec![*low, *skip],
            Op::EncoderTail { logits, image, .. } => vec![*logits, *image],
            Op::DecoderTail {
                logits,
                coarse,
                low,
                detail,
                ..
            } => vec![*logits, *coarse, *low, *detail],
            Op::Dec0Outputs { x2, .. } => vec![*x2],
            Op::Output {
                image,
                codes,
                kernel,
                history,
                guides,
                color,
                exposure,
                ..
            } => vec![
                *image, *codes, *kernel, *history, *guides, *color, *exposure,
            ],
        }
    }

    /// Tensors the op writes (the first is the published one, if any).
    pub fn outputs(&self) -> Vec<TensorId> {
        match self {
            Op::Exposure { out, .. }
            | Op::Reproject { out, .. }
            | Op::Norm { out, .. }
            | Op::Gemm { out, .. }
            | Op::Attention { out, .. }
            | Op::Merge { out, .. }
            | Op::Expand { out, .. }
            | Op::DecoderTail { out, .. } => vec![*out],
            Op::Features {
                features, colour, ..
            } => vec![*features, *colour],
            Op::EncoderTail {
                out112,
                out120,
                out128,
                ..
            } => {
                let mut v = vec![*out112];
                v.extend(out120.iter().chain(out128.iter()).copied());
                v
            }
            Op::Dec0Outputs { out48, out144, .. } => vec![*out48, *out144],
            Op::Output { out, alpha, .. } => vec![*out, *alpha],
        }
    }
}
