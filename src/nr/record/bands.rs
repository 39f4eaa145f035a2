//! Launches within the device's limits: which rows of a node (or of a frame pass) one launch
//! computes, so that no storage-buffer binding exceeds `maxStorageBufferRange` and no grid
//! exceeds `maxComputeWorkGroupCount`.
//!
//! A node whose bindings and grid fit runs as one launch over all its rows, exactly as before
//! (on a device with a large binding range, such as the H200, nothing is split). Otherwise it runs
//! as several launches over row **bands**, each binding the sub-range of every tensor its rows
//! touch, with the sizes in its push constants set to the band's. No kernel of the network
//! changes: every op is independent across the band cuts chosen here (the frame passes around
//! it, prepare and compose, take their band in their push constants: `passes`).
//!
//! * GEMMs (the adapter and the head included) and the normalisation are row-independent: bands
//!   of token rows, cut at multiples of [`TOKEN_QUANTUM`] rows.
//! * Window attention reads only its own window's tokens, and a window row `j` of a level in a
//!   phase with shift `(sx, sy)` covers token rows `[8j - sy, 8j - sy + 8)` (clipped to the level;
//!   tokens outside it are zero vectors, there is no cyclic wrap, nr-network.md §1.5). A band of
//!   whole window rows `[j0, j1)` is therefore a smaller level: token rows `[8j0 - sy, 8j1 - sy)`
//!   clipped, in the same phase when `j0 = 0` and in the phase with the same `sx` and `sy = 0`
//!   after it (its first window row then starts at the band's first token row).
//! * A pool's output row `y` reads input rows `2y` and `2y + 1`; an up-merge's or the post blend's
//!   output row `y` reads low row `y / 2`: bands of output rows with the matching input rows.
//! * The ViT attention attends over every token of its level and is not split (its tensors are
//!   a few MiB at every size the API accepts); if one did not fit, the size is refused.
//!
//! Bands of nodes and of the frame passes start at offsets that are multiples of 256 bytes in
//! every tensor they write (the largest `minStorageBufferOffsetAlignment` Vulkan allows), so
//! writes of neighbouring bands never share a bound byte and need no barrier between them.
//! Where even one quantum of rows does not fit, the plan fails with a [`RangeError`] naming the
//! limit, before anything is recorded.

use std::ops::Range;

pub use crate::gpu::bands::{split, sub_binding, Band, BindLimits, RangeError, ALIGN_ROOM};
use crate::nr::geometry::{Phase, Size, WINDOW};
use crate::nr::graph::{Graph, Node, Op, TensorId};

use super::gemm::{self, GemmShape};

/// Token rows per band quantum of the row-independent ops: 256 rows of any row size start at a
/// multiple of 256 bytes.
pub const TOKEN_QUANTUM: u64 = 256;

/// What a node's bands count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Axis {
    /// Token rows (GEMMs, adapter, head, normalisation): all its tensors share the rows.
    Tokens { rows: u32 },
    /// Window rows of a window attention over a level of `size` in `phase`.
    Windows { size: Size, phase: Phase },
    /// Output rows of a pool from `input` to `out` (output row `y` reads input rows `2y, 2y+1`).
    Halving { input: Size, out: Size },
    /// Output rows of an up-merge or post blend from `low` to `out` (row `y` reads low row `y/2`).
    Doubling { low: Size, out: Size },
    /// One launch only (the ViT attention).
    Whole { rows: u32 },
}

impl Axis {
    /// The node's band axis.
    pub fn of(graph: &Graph, node: &Node) -> Axis {
        let rows = |t: TensorId| graph.rows(t) as u32;
        let size = |t: TensorId| graph.geometry.level(graph.tensors[t].level);
        match &node.op {
            Op::Gemm { input, .. } | Op::Adapter { input, .. } | Op::Head { input, .. } => {
                Axis::Tokens { rows: rows(*input) }
            }
            Op::Normalize { qkv, .. } => Axis::Tokens { rows: rows(*qkv) },
            Op::WindowAttention { q, phase, .. } => Axis::Windows {
                size: size(*q),
                phase: Phase(*phase as u8),
            },
            Op::VitAttention { q, .. } => Axis::Whole { rows: rows(*q) },
            Op::Pool { input, out } => Axis::Halving {
                input: size(*input),
                out: size(*out),
            },
            Op::UpMerge { low, skip, .. } | Op::PostBlend { low, skip, .. } => Axis::Doubling {
                low: size(*low),
                out: size(*skip),
            },
        }
    }

    /// Rows of the axis.
    pub fn len(&self) -> u32 {
        match *self {
            Axis::Tokens { rows } | Axis::Whole { rows } => rows,
            Axis::Windows { size, phase } => (size.h + phase.shift().1).div_ceil(WINDOW),
            Axis::Halving { out, .. } | Axis::Doubling { out, .. } => out.h,
        }
    }

    /// Whether the axis has no rows.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bands start at multiples of this (so every written sub-range starts 256-byte aligned).
    fn quantum(&self) -> u32 {
        match self {
            Axis::Tokens { .. } => TOKEN_QUANTUM as u32,
            // Whole window rows start at token rows that are multiples of 4 on levels whose width
            // is a multiple of 4: 16 tokens of >= 32 channels.
            Axis::Windows { .. } | Axis::Whole { .. } => 1,
            // Two output rows of >= 4 tokens of >= 32 channels.
            Axis::Halving { .. } | Axis::Doubling { .. } => 2,
        }
    }

    /// The whole axis as one band.
    pub fn whole(&self) -> Band {
        Band {
            start: 0,
            end: self.len(),
        }
    }
}

/// A window-attention band: the first token row of the level it covers, the smaller level it
/// is (same width, the band's rows) and the phase to run it in.
pub fn window_band(size: Size, phase: Phase, band: Band) -> (u32, Size, Phase) {
    let (sx, sy) = phase.shift();
    let first = (WINDOW * band.start).saturating_sub(sy).min(size.h);
    let end = (WINDOW * band.end).saturating_sub(sy).min(size.h);
    let phase = if band.start == 0 {
        phase
    } else {
        // The same horizontal shift, no vertical one: the band starts on a window row.
        if sx == 0 {
            Phase(0)
        } else {
            Phase(2)
        }
    };
    (first, Size::new(size.w, end - first), phase)
}

/// A pool band: `(first input row, input size, first output row, output size)`.
pub fn halving_band(input: Size, out: Size, band: Band) -> (u32, Size, u32, Size) {
    let first = (2 * band.start).min(input.h);
    let end = (2 * band.end).min(input.h);
    (
        first,
        Size::new(input.w, end - first),
        band.start,
        Size::new(out.w, band.len()),
    )
}

/// An up-merge or post-blend band: `(first low row, low size, first output row, output size)`
/// (`band.start` is even).
pub fn doubling_band(low: Size, out: Size, band: Band) -> (u32, Size, u32, Size) {
    let first = (band.start / 2).min(low.h);
    let end = band.end.div_ceil(2).min(low.h);
    (
        first,
        Size::new(low.w, end - first),
        band.start,
        Size::new(out.w, band.len()),
    )
}

/// The token rows of every tensor one launch of `node` over `band` reads or writes.
pub fn touched(graph: &Graph, node: &Node, band: Band) -> Vec<(TensorId, Range<u64>)> {
    let axis = Axis::of(graph, node);
    let all = |ts: Vec<TensorId>, r: Range<u64>| ts.into_iter().map(move |t| (t, r.clone()));
    let tensors = || {
        let mut v = node.op.inputs();
        v.extend(node.op.outputs());
        v
    };
    match axis {
        Axis::Tokens { .. } | Axis::Whole { .. } => {
            all(tensors(), u64::from(band.start)..u64::from(band.end)).collect()
        }
        Axis::Windows { size, phase } => {
            let (first, s, _) = window_band(size, phase, band);
            let w = u64::from(size.w);
            let r = w * u64::from(first)..w * u64::from(first + s.h);
            all(tensors(), r).collect()
        }
        Axis::Halving { input, out } => {
            let (fi, si, fo, so) = halving_band(input, out, band);
            let rows = |w: u32, f: u32, h: u32| {
                u64::from(w) * u64::from(f)..u64::from(w) * u64::from(f + h)
            };
            let mut v: Vec<_> = all(node.op.inputs(), rows(input.w, fi, si.h)).collect();
            v.extend(all(node.op.outputs(), rows(out.w, fo, so.h)));
            v
        }
        Axis::Doubling { low, out } => {
            let (fl, sl, fo, so) = doubling_band(low, out, band);
            let rows = |w: u32, f: u32, h: u32| {
                u64::from(w) * u64::from(f)..u64::from(w) * u64::from(f + h)
            };
            let low_t = match &node.op {
                Op::UpMerge { low, .. } | Op::PostBlend { low, .. } => Some(*low),
                _ => None,
            };
            tensors()
                .into_iter()
                .map(|t| {
                    if Some(t) == low_t {
                        (t, rows(low.w, fl, sl.h))
                    } else {
                        (t, rows(out.w, fo, so.h))
                    }
                })
                .collect()
        }
    }
}

/// Bytes of one token row of tensor `t`.
pub fn row_bytes(graph: &Graph, t: TensorId) -> u64 {
    (graph.tensors[t].channels * graph.tensors[t].dtype.size()) as u64
}

/// The grid of a launch of `node` over `band`, as the kernels compute it (an upper bound where
/// the kernel's tile depends on the device: the GEMM's rows per workgroup is at least
/// [`gemm::MIN_ROWS_PER_GROUP`], its columns at least 32).
fn grid(graph: &Graph, node: &Node, band: Band, limits: &BindLimits) -> [u64; 3] {
    let rows = u64::from(band.len());
    // `elementwise::grid_of`: as wide as the device allows, then rows of workgroups.
    let two_d = |groups: u64| -> [u64; 3] {
        let x = groups.clamp(1, u64::from(limits.max_groups[0]).max(1));
        [x, groups.div_ceil(x), 1]
    };
    match (&node.op, Axis::of(graph, node)) {
        (Op::Gemm { mat, .. }, _) => {
            let parts = GemmShape::of_node(graph, node).map_or(1, |s| s.partitions());
            [
                rows.div_ceil(gemm::MIN_ROWS_PER_GROUP),
                (mat.n as u64).div_ceil(32),
                (mat.groups * parts) as u64,
            ]
        }
        (Op::Adapter { .. }, _) => [rows.div_ceil(gemm::ADAPTER_ROWS_PER_GROUP), 1, 1],
        (Op::Head { .. }, _) => [rows.div_ceil(gemm::HEAD_ROWS_PER_GROUP), 1, 1],
        (Op::WindowAttention { heads, .. }, Axis::Windows { size, phase }) => {
            let (sx, _) = phase.shift();
            [
                u64::from((size.w + sx).div_ceil(WINDOW)),
                rows,
                *heads as u64,
            ]
        }
        (Op::VitAttention { heads, .. }, _) => [rows.div_ceil(64), *heads as u64, 1],
        // The other kernels (normalisation, pool, merges) spread a 2D grid of 64-wide
        // workgroups (`elementwise::grid`) with at most one invocation per 4 bytes of their
        // largest output.
        _ => {
            let out: u64 = touched(graph, node, band)
                .iter()
                .filter(|(t, _)| node.op.outputs().contains(t))
                .map(|(t, r)| (r.end - r.start) * row_bytes(graph, *t))
                .max()
                .unwrap_or(0);
            two_d(out.div_ceil(4 * 64))
        }
    }
}

/// Whether one launch of `node` over `band` fits `limits` with bindings of at most `range`
/// bytes; the first thing that does not, otherwise.
pub(super) fn check_band(
    graph: &Graph,
    node: &Node,
    band: Band,
    limits: &BindLimits,
    range: u64,
) -> Result<(), RangeError> {
    for (t, rows) in touched(graph, node, band) {
        let bytes = (rows.end - rows.start) * row_bytes(graph, t);
        if bytes > range {
            return Err(RangeError::range(
                format!(
                    "node `{}`: rows {}..{} of tensor `{}` ({} bytes per row)",
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
    if let Some(s) = GemmShape::of_node(graph, node) {
        let partials = s.partitions() as u64 * u64::from(band.len()) * s.nout() as u64 * 2;
        if s.partitions() > 1 && partials > range {
            return Err(RangeError::range(
                format!("node `{}`: its split-K partials", node.label),
                partials,
                limits,
            ));
        }
    }
    let g = grid(graph, node, band, limits);
    if let Some(axis) = (0..3).find(|&a| g[a] > u64::from(limits.max_groups[a])) {
        return Err(RangeError::groups(
            format!("node `{}` over {} rows", node.label, band.len()),
            axis,
            g[axis],
            limits,
        ));
    }
    Ok(())
}

/// The bands of `node`: one, over all its rows, when it fits as it is; otherwise the fewest
/// greedy bands that fit, or why none can.
pub fn plan_node(graph: &Graph, node: &Node, limits: &BindLimits) -> Result<Vec<Band>, RangeError> {
    let axis = Axis::of(graph, node);
    let whole = axis.whole();
    match check_band(graph, node, whole, limits, limits.max_range) {
        Ok(()) => return Ok(vec![whole]),
        Err(e) if matches!(axis, Axis::Whole { .. }) => return Err(e),
        Err(_) => {}
    }
    split(axis.len(), axis.quantum(), |b| {
        check_band(graph, node, b, limits, limits.band_range())
    })
}

/// The bands of every node of `graph`, or the first node that cannot fit.
pub fn plan_graph(graph: &Graph, limits: &BindLimits) -> Result<Vec<Vec<Band>>, RangeError> {
    graph
        .nodes
        .iter()
        .map(|n| plan_node(graph, n, limits))
        .collect()
}

#[cfg(test)]
mod tests;
