//! RR's launches within the device's limits: which rows of an op one launch computes, so that no
//! storage-buffer binding exceeds `maxStorageBufferRange` and no grid exceeds what
//! `maxComputeWorkGroupCount` holds (x, continued along y: `launch::split_grid`).
//!
//! An op whose bindings and grid fit runs as one launch over all its rows, exactly as before (on
//! a device with a large binding range, such as the H200, nothing is split). Otherwise it runs as
//! several launches over **bands** of its axis, each binding the sub-range of every tensor the
//! band touches, with the row count in its push constants set to the band's. The kernels of the
//! row ops index their tensors relative to the binding's start and are unchanged; the attention's
//! takes its band's origin. The band arithmetic (limits, the greedy cut, sub-ranges) is
//! `gpu::bands`, shared with NR.
//!
//! RR's rules, by op (a band `[a, b)` of the op's axis; `w` a level's width):
//!
//! * **Norm, Gemm, Dec0Outputs** are row-independent: the axis is the token rows, and every
//!   tensor (input, the residual `x`, output) is touched at rows `[a, b)`.
//! * **Merge** (coarse token `(X, Y)` reads fine tokens `2X + {0,1}, 2Y + {0,1}`): the axis is the
//!   coarse level's token *rows* `Y`; the band reads fine token rows `[2a, 2b)` (tokens
//!   `[2a·w_fine, 2b·w_fine)`) and writes coarse tokens `[a·w_coarse, b·w_coarse)`. Fine row `2a`
//!   is even, so the kernel's relative gather `(2·cy + dy)·w_fine + 2·cx + dx` is the band's.
//! * **Expand** (coarse token `(X, Y)` writes the four fine tokens of its quad, adding the skip
//!   at the same fine tokens): the same axis; the band reads low tokens `[a·w_coarse, b·w_coarse)`
//!   and reads `skip` and writes `out` at fine token rows `[2a, 2b)`.
//! * **Attention** (a window at origin `(8i - sx, 8j - sy)` reads the keys of its 8x8 tokens and
//!   the one-token ring around them, mirrored into the level, and writes its in-level queries):
//!   the axis is the window rows `j` (as many as shift `sy = 4` has, the most). A band
//!   `[j0, j1)` reads the mirrored token rows of `8j - sy - 1 ..= 8j - sy + 8` over its windows
//!   and writes rows `[8j0 - sy, 8j1 - sy)` clipped to the level. Its windows' coordinates stay
//!   the level's (the mirror is about the level's edges, not the band's), so this kernel takes
//!   the band's first window row and the first token row of each binding in its push
//!   constants. The shift follows the frame, so each band has a launch (its own bindings) for
//!   `sy = 0` and one for `sy = 4`, and a frame records those of its shift (a band with no
//!   window at `sy = 0`, past the level's last row, records nothing).
//! * **DecoderTail** (per fine token: its logits, the encoder's surfaces at the same token, and
//!   bilinear taps of the coarser surface at coarse rows `y/2 - 2 ..= y/2 + 2`): the axis is the
//!   fine rows; a band binds its own rows of logits, low, detail and out, and the coarse rows its
//!   taps read (clamped), whose first row the kernel takes.
//! * **Reproject** (per render pixel: its guides, the history anywhere): render rows; the band
//!   binds its rows of the guides and the output, the history and the exposure whole (the
//!   history's rows are where the motion vectors point).
//! * **Features** (per level-0 token: the colour, guides and reprojected history at the render
//!   pixel mirrored into the render size): level-0 rows; the band binds its own rows of the
//!   features and colour and the render rows its mirrored rows span.
//! * **Output** (per output pixel: 4x4 taps of the level-0 surface and the colour's alpha, 3x3 of
//!   the surface, the kernel, codes and motion at the nearest render pixel, the history anywhere):
//!   output rows; the band binds its rows of the output and alpha and the render (and level-0)
//!   rows its taps can reach for a vertical jitter within [`MAX_JITTER`] pixel (two rows of
//!   margin each side for the f32 ratio); a frame with a larger jitter is refused before
//!   anything is recorded while this stage runs in bands (`Launch::check`).
//!
//! Read bindings start at the first row a band reads rounded down to a row whose offset is
//! 256-byte aligned (neighbouring bands' reads may overlap; only writes must not).
//!
//! * **EncoderTail** (per token: its logits and the 3x3 taps of the level's colour, edge taps
//!   clamped; then the quarter average to the next level): the level's rows; a band binds its
//!   own rows of logits and outputs, the colour rows `a - 1 ..= b` clamped, and for the second
//!   launch (after one barrier behind every band's first) the next level's rows `[a/2, b/2)`
//!   (bands start at even rows).
//! * **Exposure** (an exact integer sum over every pixel, then one workgroup's division): render
//!   rows; each band's first pass sums its pixels into its own run of partial sums (a multiple
//!   of 32, so runs are 256-byte aligned and contiguous; at most 32 bands), the second pass sums
//!   every run. Integer sums: any cut gives the same total.
//!
//! Within a banded op the tensors read anywhere (the history, which reprojection and the output
//! read where the motion vectors point: 8 bytes an output pixel, at most 128 MiB at the largest
//! area the API accepts; the exposure pair) are bound whole. So every size the API accepts plans
//! within a 128 MiB range (a unit test checks 4096x4096 and 3840x2160); where a lower range
//! leaves even one quantum of a band too large, creation is refused naming the op, the tensor
//! and the limit.
//!
//! Bands start at multiples of a quantum of the axis chosen so that every sub-range (read or
//! written) starts at a multiple of 256 bytes from its tensor's start: the largest
//! `minStorageBufferOffsetAlignment` Vulkan allows, and tensors are placed at 256-byte aligned
//! offsets (`slots`). So writes of neighbouring bands never share a byte and need no barrier
//! between them. The last band's sub-ranges run to the end of their tensor's binding (its
//! padding included). Where even one quantum does not fit, the plan fails with a
//! [`RangeError`] naming the node, the tensor and the limit, before anything is allocated.

use std::ops::Range;

use crate::gpu::bands::{split, sub_binding};
pub use crate::gpu::bands::{Band, BindLimits, RangeError};
use crate::gpu::BufferBinding;
use crate::rr::geometry::{mirror, Size, WINDOW};
use crate::rr::graph::{Graph, Node, Op, Seed, TensorId};

use super::launch::GROUP;
use super::slots::tensor_bytes;

/// Every band's sub-ranges start at a multiple of this many bytes from their tensor's start.
const ALIGN: u64 = 256;

/// How an op's launches can be cut.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Axis {
    /// `units` rows of the axis; a band `[a, b)` touches token rows `[a·m, b·m)` of each
    /// `(tensor, m)`, and runs `inv` invocations per unit.
    Rows {
        units: u32,
        tensors: Vec<(TensorId, u64)>,
        inv: u64,
    },
    /// The window attention over a level of `size`: bands of window rows (at shift y 0 or 4,
    /// the frame's; the axis has the rows of shift 4, the most). Queries `u` and values `v` are
    /// read at the (mirrored) key rows of the band's windows, `out` written at their query rows.
    Windows {
        size: Size,
        heads: u32,
        u: TensorId,
        v: TensorId,
        out: TensorId,
    },
    /// A frame stage (or a decoder tail) over the rows of the image it writes: `units` rows; a
    /// band `[a, b)` touches rows `[a·w, b·w)` of each `(tensor, w)` of `own` (what it writes,
    /// and what it reads at the same token), reads the rows
    /// [`source_rows`] gives of each of `reads` (the same for all, so the kernel takes one
    /// first row), and binds the op's other tensors whole; `inv` invocations per unit. `halved`:
    /// a tensor of the next level (its width) whose rows `[a/2, ⌈b/2⌉)` the band writes (the
    /// encoder tail's quarter average; bands then start at even rows).
    Image {
        units: u32,
        own: Vec<(TensorId, u64)>,
        reads: Vec<(TensorId, u64)>,
        halved: Option<(TensorId, u64)>,
        source: Source,
        inv: u64,
    },
    /// One launch only, every tensor bound whole (no RR op now; a new op kind starts here).
    Whole,
}

/// How a frame stage's written rows map to the rows it reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// The same rows (reprojection: one render pixel each).
    Same,
    /// Rows mirrored into `h` rows (the input features: padding rows mirror render rows).
    Mirror { h: u32 },
    /// Output rows of `oh` scaled to render rows of `rh`, with the taps around them (the output
    /// stage's 4x4 and 3x3 neighbourhoods) for a vertical jitter of at most [`MAX_JITTER`].
    Scaled { rh: u32, oh: u32 },
    /// Fine rows to the rows of the next coarser level (`h` rows) the decoder tail's bilinear
    /// taps read: `y/2 - 2 ..= y/2 + 2`, clamped.
    Coarse { h: u32 },
    /// The rows themselves and one above and below, clamped into `h` rows (the encoder tail's
    /// 3x3 filter, edge taps clamped).
    Halo { h: u32 },
}

/// The largest vertical jitter (render pixels) the output stage's bands bind rows for; a frame
/// with a larger one is refused while the output stage runs in bands (DLSS's jitter is within
/// half a pixel).
pub const MAX_JITTER: f32 = 1.0;

/// The rows (of the read tensors' grid) a band of a frame stage reads, before alignment.
pub fn source_rows(source: Source, band: Band) -> Range<u32> {
    match source {
        Source::Same => band.start..band.end,
        Source::Mirror { h } => {
            let (lo, hi) = (band.start..band.end)
                .map(|y| mirror(i64::from(y), h))
                .fold((u32::MAX, 0), |(lo, hi), m| (lo.min(m), hi.max(m)));
            lo..hi + 1
        }
        Source::Scaled { rh, oh } => {
            // ty = (y + 0.5)·rh/oh - 0.5 - jitter; taps floor(ty) - 1 ..= floor(ty) + 2; two rows
            // of margin for the f32 rounding of the kernel's ratio.
            let r = f64::from(rh) / f64::from(oh);
            let j = f64::from(MAX_JITTER);
            let ty = |y: u32| (f64::from(y) + 0.5) * r - 0.5;
            let lo = (ty(band.start) - j).floor() - 3.0;
            let hi = (ty(band.end.saturating_sub(1)) + j).floor() + 4.0;
            let clamp = |v: f64| v.clamp(0.0, f64::from(rh.max(1) - 1)) as u32;
            clamp(lo)..clamp(hi) + 1
        }
        Source::Halo { h } => {
            let top = h.max(1) - 1;
            band.start.saturating_sub(1).min(top)..band.end.min(top) + 1
        }
        Source::Coarse { h } => {
            let top = h.max(1) - 1;
            let lo = (band.start / 2).saturating_sub(2).min(top);
            let hi = (band.end.saturating_sub(1) / 2 + 2).min(top);
            lo..hi + 1
        }
    }
}

/// The window shifts along y a frame can have (`rr::geometry::PHASES`).
pub const SHIFTS_Y: [u32; 2] = [0, 4];

/// The token rows a band of window rows `[j0, j1)` of a level `h` rows high reads (its keys,
/// mirrored into the level) and writes (its queries in the level) at shift `sy`; `None` when
/// the band has no window at that shift (its window rows all lie below the level's last).
pub fn window_rows(h: u32, sy: u32, band: Band) -> Option<(Range<u64>, Range<u64>)> {
    let rows = (h + sy).div_ceil(WINDOW);
    let end = band.end.min(rows);
    if band.start >= end {
        return None;
    }
    let (j0, j1) = (i64::from(band.start), i64::from(end));
    let w = i64::from(WINDOW);
    let sy = i64::from(sy);
    // Key rows oy - 1 ..= oy + 8 of every window's origin oy = 8j - sy, mirrored.
    let (mut lo, mut hi) = (u32::MAX, 0);
    for r in (w * j0 - sy - 1)..=(w * (j1 - 1) - sy + w) {
        let m = mirror(r, h);
        lo = lo.min(m);
        hi = hi.max(m);
    }
    let q0 = (w * j0 - sy).clamp(0, i64::from(h)) as u64;
    let q1 = (w * j1 - sy).clamp(0, i64::from(h)) as u64;
    Some((u64::from(lo)..u64::from(hi) + 1, q0..q1))
}

impl Axis {
    /// The op's axis (the module doc's rules).
    pub fn of(graph: &Graph, node: &Node) -> Axis {
        let rows = |t: TensorId| graph.rows(t) as u32;
        let width = |t: TensorId| u64::from(graph.grid_size(graph.tensors[t].grid).w);
        let height = |t: TensorId| graph.grid_size(graph.tensors[t].grid).h;
        match &node.op {
            Op::Norm { input, out, .. } => Axis::Rows {
                units: rows(*input),
                tensors: vec![(*input, 1), (*out, 1)],
                inv: 1,
            },
            Op::Gemm {
                input,
                mat,
                seed,
                out,
                ..
            } => {
                let mut tensors = vec![(*input, 1), (*out, 1)];
                if let Seed::Residual { x, .. } = seed {
                    tensors.push((*x, 1));
                }
                Axis::Rows {
                    units: rows(*input),
                    tensors,
                    inv: (mat.n / 4) as u64,
                }
            }
            Op::Dec0Outputs { x2, out48, out144 } => Axis::Rows {
                units: rows(*x2),
                tensors: vec![(*x2, 1), (*out48, 1), (*out144, 1)],
                inv: 1,
            },
            Op::Merge {
                input, mat, out, ..
            } => Axis::Rows {
                units: height(*out),
                tensors: vec![(*input, 2 * width(*input)), (*out, width(*out))],
                inv: width(*out) * (mat.n / 4) as u64,
            },
            Op::Expand {
                low,
                mat,
                skip,
                out,
                ..
            } => Axis::Rows {
                units: height(*low),
                tensors: vec![
                    (*low, width(*low)),
                    (*skip, 2 * width(*out)),
                    (*out, 2 * width(*out)),
                ],
                inv: width(*low) * (mat.n / 4) as u64,
            },
            Op::Attention {
                u,
                v,
                heads,
                level,
                out,
                ..
            } => Axis::Windows {
                size: graph.geometry.level(*level),
                heads: *heads as u32,
                u: *u,
                v: *v,
                out: *out,
            },
            Op::Exposure { color, .. } => {
                // Render rows; the sums' grid is at most 1024 workgroups.
                let r = graph.geometry.render;
                Axis::Rows {
                    units: r.h,
                    tensors: vec![(*color, u64::from(r.w))],
                    inv: 0,
                }
            }
            Op::EncoderTail {
                logits,
                image,
                out112,
                out120,
                out128,
            } => {
                let fine = graph.grid_size(graph.tensors[*out112].grid);
                let w = u64::from(fine.w);
                let mut own = vec![(*out112, w), (*logits, w)];
                own.extend(out120.map(|t| (t, w)));
                Axis::Image {
                    units: fine.h,
                    own,
                    reads: vec![(*image, w)],
                    halved: out128
                        .map(|t| (t, u64::from(graph.grid_size(graph.tensors[t].grid).w))),
                    source: Source::Halo { h: fine.h },
                    inv: w,
                }
            }
            Op::DecoderTail {
                logits,
                coarse,
                low,
                detail,
                out,
            } => {
                let fine = graph.grid_size(graph.tensors[*out].grid);
                let c = graph.grid_size(graph.tensors[*coarse].grid);
                let w = u64::from(fine.w);
                Axis::Image {
                    units: fine.h,
                    own: vec![(*out, w), (*logits, w), (*low, w), (*detail, w)],
                    reads: vec![(*coarse, u64::from(c.w))],
                    halved: None,
                    source: Source::Coarse { h: c.h },
                    inv: w,
                }
            }
            Op::Reproject { guides, out, .. } => {
                let r = graph.geometry.render;
                Axis::Image {
                    units: r.h,
                    own: vec![(*out, u64::from(r.w))],
                    reads: vec![(*guides, u64::from(r.w))],
                    halved: None,
                    source: Source::Same,
                    inv: u64::from(r.w),
                }
            }
            Op::Features {
                color,
                guides,
                history,
                features,
                colour,
                ..
            } => {
                let (r, l) = (graph.geometry.render, graph.geometry.level(0));
                Axis::Image {
                    units: l.h,
                    own: vec![(*features, u64::from(l.w)), (*colour, u64::from(l.w))],
                    reads: [*color, *guides, *history]
                        .map(|t| (t, u64::from(r.w)))
                        .to_vec(),
                    halved: None,
                    source: Source::Mirror { h: r.h },
                    inv: u64::from(l.w),
                }
            }
            Op::Output {
                image,
                codes,
                kernel,
                guides,
                color,
                out,
                alpha,
                ..
            } => {
                let (r, o, l) = (
                    graph.geometry.render,
                    graph.geometry.output,
                    graph.geometry.level(0),
                );
                Axis::Image {
                    units: o.h,
                    own: vec![(*out, u64::from(o.w)), (*alpha, u64::from(o.w))],
                    reads: vec![
                        (*image, u64::from(l.w)),
                        (*codes, u64::from(l.w)),
                        (*kernel, u64::from(l.w)),
                        (*guides, u64::from(r.w)),
                        (*color, u64::from(r.w)),
                    ],
                    halved: None,
                    source: Source::Scaled { rh: r.h, oh: o.h },
                    inv: u64::from(o.w),
                }
            }
        }
    }

    /// The axis' length (1 for a whole op).
    pub fn len(&self) -> u32 {
        match self {
            Axis::Rows { units, .. } | Axis::Image { units, .. } => *units,
            Axis::Windows { size, .. } => (size.h + SHIFTS_Y[1]).div_ceil(WINDOW),
            Axis::Whole => 1,
        }
    }

    /// Whether the axis has no rows.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The smallest band length whose sub-ranges all start 256-byte aligned when bands start at
    /// its multiples (a power of two: the largest over the tensors).
    pub fn quantum(&self, graph: &Graph) -> u32 {
        match self {
            Axis::Rows { tensors, .. } => align_quantum(graph, tensors),
            Axis::Image { own, halved, .. } => {
                let q = align_quantum(graph, own);
                // Two fine rows a coarse row, and the coarse rows aligned.
                halved.map_or(q, |(t, w)| q.max(2 * align_quantum(graph, &[(t, w)])))
            }
            // A window row starts at any token row; it needs every token row at a multiple of
            // 256 bytes (true of every RR level: widths of 2^k·(render/32) tokens of 64 to 256
            // channels), or the op is not split.
            Axis::Windows {
                size, u, v, out, ..
            } => {
                let aligned = [*u, *v, *out]
                    .iter()
                    .all(|&t| (u64::from(size.w) * row_bytes(graph, t)) % ALIGN == 0);
                if aligned {
                    1
                } else {
                    self.len().max(1)
                }
            }
            Axis::Whole => 1,
        }
    }
}

/// The smallest number of units whose rows (`m` token rows a unit of each `(tensor, m)`) are a
/// multiple of 256 bytes of every tensor (a power of two: the largest over the tensors).
fn align_quantum(graph: &Graph, tensors: &[(TensorId, u64)]) -> u32 {
    tensors
        .iter()
        .map(|&(t, m)| (ALIGN / gcd(ALIGN, m * row_bytes(graph, t))) as u32)
        .max()
        .unwrap_or(1)
}

/// The first source row a band of a frame stage binds its read tensors from: the first row it
/// reads, rounded down so that every read binding starts 256-byte aligned (reading a few rows
/// more is harmless; reads of neighbouring bands may overlap).
pub fn image_read_row0(graph: &Graph, axis: &Axis, band: Band) -> u32 {
    match axis {
        Axis::Image { reads, source, .. } => {
            let q = align_quantum(graph, reads);
            source_rows(*source, band).start / q * q
        }
        _ => 0,
    }
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a.max(1)
    } else {
        gcd(b, a % b)
    }
}

/// Bytes of one token row of tensor `t`.
pub fn row_bytes(graph: &Graph, t: TensorId) -> u64 {
    (graph.tensors[t].channels * graph.tensors[t].dtype.size()) as u64
}

/// The token rows of tensor `t` (touched `m` rows per unit) that `band` touches.
fn rows_of(band: Band, m: u64) -> Range<u64> {
    u64::from(band.start) * m..u64::from(band.end) * m
}

/// The bytes of tensor `t`'s binding for the token rows `rows`: to the end of the tensor's
/// binding (its padding included) when `rows` reaches its last row.
fn band_bytes(graph: &Graph, t: TensorId, rows: &Range<u64>) -> u64 {
    let rb = row_bytes(graph, t);
    if rows.end >= graph.rows(t) as u64 {
        tensor_bytes(graph, t) - rows.start * rb
    } else {
        (rows.end - rows.start) * rb
    }
}

/// The sub-range of `whole` (tensor `t`'s binding) that a band touching token rows `rows` binds.
pub fn band_binding(
    graph: &Graph,
    t: TensorId,
    whole: BufferBinding,
    rows: Range<u64>,
) -> BufferBinding {
    let mut b = sub_binding(whole, rows.clone(), row_bytes(graph, t));
    b.range = band_bytes(graph, t, &rows);
    b
}

/// The tensors a band of `axis` touches and their token rows, at window shift `sy` (which only
/// the window attention depends on; empty where the band has no window at that shift).
pub fn touched(graph: &Graph, axis: &Axis, band: Band, sy: u32) -> Vec<(TensorId, Range<u64>)> {
    match axis {
        Axis::Rows { tensors, .. } => tensors
            .iter()
            .map(|&(t, m)| (t, rows_of(band, m)))
            .collect(),
        Axis::Windows {
            size, u, v, out, ..
        } => {
            let w = u64::from(size.w);
            let tokens = |r: Range<u64>| r.start * w..r.end * w;
            window_rows(size.h, sy, band).map_or_else(Vec::new, |(keys, queries)| {
                vec![
                    (*u, tokens(keys.clone())),
                    (*v, tokens(keys)),
                    (*out, tokens(queries)),
                ]
            })
        }
        Axis::Image {
            own,
            reads,
            source,
            halved,
            ..
        } => {
            let src = source_rows(*source, band);
            let first = u64::from(image_read_row0(graph, axis, band));
            let mut v: Vec<_> = own.iter().map(|&(t, w)| (t, rows_of(band, w))).collect();
            if let Some((t, w)) = *halved {
                let rows = u64::from(band.start / 2)..u64::from(band.end.div_ceil(2));
                v.push((t, rows.start * w..rows.end * w));
            }
            v.extend(
                reads
                    .iter()
                    .map(|&(t, w)| (t, first * w..u64::from(src.end) * w)),
            );
            v
        }
        Axis::Whole => Vec::new(),
    }
}

/// The window shifts along y whose bindings differ for `axis` (one for the other ops).
pub fn shifts(axis: &Axis) -> &'static [u32] {
    match axis {
        Axis::Windows { .. } => &SHIFTS_Y,
        _ => &SHIFTS_Y[..1],
    }
}

/// Whether one launch over `band` fits with bindings of at most `range` bytes and a grid within
/// `limits`; the first thing that does not, otherwise.
fn check_band(
    graph: &Graph,
    node: &Node,
    axis: &Axis,
    band: Band,
    limits: &BindLimits,
    range: u64,
) -> Result<(), RangeError> {
    let per_band = match axis {
        Axis::Rows { inv, .. } => (u64::from(band.len()) * inv).div_ceil(u64::from(GROUP)),
        // One workgroup per window and head; the most windows per row at shift x 4.
        Axis::Windows { size, heads, .. } => {
            u64::from((size.w + 4).div_ceil(WINDOW)) * u64::from(band.len()) * u64::from(*heads)
        }
        Axis::Image { inv, .. } => (u64::from(band.len()) * inv).div_ceil(u64::from(GROUP)),
        Axis::Whole => return check_whole(graph, node, limits),
    };
    // The op's tensors the band does not cut are bound whole.
    let cut = touched(graph, axis, band, SHIFTS_Y[1]);
    let mut all = node.op.inputs();
    all.extend(node.op.outputs());
    for t in all.into_iter().filter(|t| !cut.iter().any(|(u, _)| u == t)) {
        let bytes = tensor_bytes(graph, t);
        if bytes > limits.max_range {
            return Err(RangeError::range(
                format!(
                    "rr op `{}`: tensor `{}` (bound whole in every band)",
                    node.label, graph.tensors[t].name
                ),
                bytes,
                limits,
            ));
        }
    }
    for &sy in shifts(axis) {
        for (t, rows) in touched(graph, axis, band, sy) {
            let bytes = band_bytes(graph, t, &rows);
            if bytes > range {
                return Err(RangeError::range(
                    format!(
                        "rr op `{}`: token rows {}..{} of tensor `{}` ({} bytes a row)",
                        node.label,
                        rows.start,
                        rows.end,
                        graph.tensors[t].name,
                        row_bytes(graph, t)
                    ),
                    bytes,
                    limits,
                ));
            }
        }
    }
    let most = u64::from(limits.max_groups[0]) * u64::from(limits.max_groups[1]);
    if per_band > most {
        return Err(RangeError::groups(
            format!(
                "rr op `{}` over {} rows (x·y of the grid)",
                node.label,
                band.len()
            ),
            0,
            per_band,
            limits,
        ));
    }
    Ok(())
}

/// Whether every tensor of an op bound whole fits the binding range.
fn check_whole(graph: &Graph, node: &Node, limits: &BindLimits) -> Result<(), RangeError> {
    let mut ts = node.op.inputs();
    ts.extend(node.op.outputs());
    for t in ts {
        let bytes = tensor_bytes(graph, t);
        if bytes > limits.max_range {
            return Err(RangeError::range(
                format!(
                    "rr op `{}` ({}, not split into bands): tensor `{}`",
                    node.label,
                    node.op.kind(),
                    graph.tensors[t].name
                ),
                bytes,
                limits,
            ));
        }
    }
    Ok(())
}

/// How finely the ops with a band rule are cut (test hooks; the default cuts by the device's
/// limits alone).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Cut {
    /// Plan the bands as if `maxStorageBufferRange` were this many bytes (never raised above the
    /// device's). Ops without a band rule, bound whole, keep the device's own limit.
    pub band_range: Option<u64>,
    /// Cut every op with a band rule into at least this many bands where its quantum allows
    /// (each band at most `ceil(len / min_bands)` rows rounded up to the quantum): the split
    /// route of every such op at a small size.
    pub min_bands: Option<u32>,
}

/// The bands of `node`: one, over its whole axis, when it fits as it is (and `cut` asks for no
/// more); otherwise the fewest greedy bands that fit, or why none can.
pub fn plan_node(
    graph: &Graph,
    node: &Node,
    limits: &BindLimits,
    cut: &Cut,
) -> Result<Vec<Band>, RangeError> {
    let axis = Axis::of(graph, node);
    let whole = Band {
        start: 0,
        end: axis.len(),
    };
    if matches!(axis, Axis::Whole) {
        check_whole(graph, node, limits)?;
        return Ok(vec![whole]);
    }
    let bands = limits.lowered(cut.band_range);
    let quantum = axis.quantum(graph);
    let longest = match cut.min_bands {
        Some(n) if n > 1 => axis.len().div_ceil(n).div_ceil(quantum) * quantum,
        _ => axis.len(),
    };
    if longest >= axis.len()
        && check_band(graph, node, &axis, whole, &bands, bands.max_range).is_ok()
    {
        return Ok(vec![whole]);
    }
    split(axis.len(), quantum, |b| {
        check_band(graph, node, &axis, b, &bands, bands.band_range())?;
        if b.len() > longest && b.start + quantum < b.end {
            // Longer than the test's cut asks (a band of one quantum is always allowed).
            return Err(RangeError::range(
                format!("rr op `{}`: the cut's longest band", node.label),
                u64::from(b.len()),
                &bands,
            ));
        }
        Ok(())
    })
}

/// The bands of every node of `graph` within the device's `limits` (cut finer by `cut`), or the
/// first node that cannot fit.
pub fn plan_graph(
    graph: &Graph,
    limits: &BindLimits,
    cut: &Cut,
) -> Result<Vec<Vec<Band>>, RangeError> {
    graph
        .nodes
        .iter()
        .map(|n| plan_node(graph, n, limits, cut))
        .collect()
}

#[cfg(test)]
mod tests;
