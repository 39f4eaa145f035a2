//! Strips: a window block run band by band, so its intermediates take one band's bytes instead
//! of a whole level's.
//!
//! Every op of a window block is row-local (the GEMMs, the adapter, the head, the
//! normalisation, an up-merge or post blend reading the level below) or window-local (the
//! window attention), so a band of whole window rows of the block's attention can run the
//! block from its first op to its last before the next band starts: the same launches the
//! split route makes (`bands`), in another order. A tensor that is written and read only by the
//! strip's ops (the FFN hidden layer, the QKV, q/k/v, the attention output, ...) then needs only
//! the rows of one band: its slot holds the largest band, and every band binds it from the
//! slot's start. At 1920x1080 the field block's QKV alone is 405 MiB; in the default bands the
//! whole workspace needs 268 MiB.
//!
//! The bytes cannot change: each launch computes the same rows from the same inputs with the
//! same kernel as a launch of the split route (the CPU reference and lavapipe check both), only
//! the band-local tensors sit at other addresses. Tensors the strip reads from outside (its
//! input, the skip of a post blend) or writes for later ops (the block's output) stay whole and
//! are live across the whole strip; an output may take the bytes of an input the strip reads
//! last ([`Strips::plan`]).
//!
//! A block whose band of one window row still misses a device limit, or whose bands could not
//! start 256-byte aligned in a whole tensor, is not made a strip (its ops keep their own
//! bands). Blocks that fit their budget in one band are not strips either.

use std::ops::Range;

use crate::feature::Route;
use crate::nr::geometry::{Phase, Size};
use crate::nr::graph::{Graph, Node, Op, TensorId};

use super::bands::{self, row_bytes, split, Axis, Band, BindLimits};
use super::workspace::scratch_bytes;

/// The least band-local bytes per band of the default budget ([`default_budget`]).
pub const DEFAULT_BUDGET: u64 = 64 << 20;

/// Band-local bytes per band per token of the field in the default budget. 48 keeps the tensor
/// route's feature within the memory targets at 1080p (419.5 of 450 MiB) and 4K (1207.0
/// of 1228.8 MiB) with every fusion choice but `--fusion off` at 4K (1282.0, a diagnostic
/// choice). On an H200 it ran 1080p in 29.40 ms against 29.80 at 40 (32 bands instead of 37;
/// 4K: 96.15 against 96.17), and 64 (449.4 MiB, 23 bands) in 28.88: each band fewer saves a
/// launch of every node of the strip (docs/performance.md, sessions 23, 29 and 33).
pub const BUDGET_PER_FIELD_TOKEN: u64 = 48;

/// The default budget of a schedule: [`BUDGET_PER_FIELD_TOKEN`] bytes per field token, at
/// least [`DEFAULT_BUDGET`] (101.3 MiB at 1920x1080, 382.5 MiB at 3840x2160).
pub fn default_budget(graph: &Graph) -> u64 {
    budget_per_token(graph, BUDGET_PER_FIELD_TOKEN)
}

/// `per_token` bytes per field token, at least [`DEFAULT_BUDGET`].
pub fn budget_per_token(graph: &Graph, per_token: u64) -> u64 {
    (graph.rows(graph.features) as u64)
        .saturating_mul(per_token)
        .max(DEFAULT_BUDGET)
}

/// Whether a network runs its window blocks as strips.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StripChoice {
    /// The route's default: strips of the [`default_budget`] on the GPU routes, only those the
    /// workspace needs ([`Strips::pruned`]; docs/performance.md). The tensor route's bytes in
    /// strips are checked on the H200, and they cost it launches for the memory targets
    /// (`fusion::tests`).
    Auto,
    /// As [`StripChoice::Auto`], with this many band-local bytes per field token instead of
    /// [`BUDGET_PER_FIELD_TOKEN`] (`bench --strips per-token:N`): the trade of memory for
    /// launches, pruned the same way.
    PerToken(u64),
    /// No strips: every node over all its rows (in the bands of `bands` where a limit needs).
    Off,
    /// Strips with at most this many band-local bytes per band.
    Budget(u64),
}

impl StripChoice {
    /// `OPENNGX_STRIP_BUDGET_MIB`: `0` for [`StripChoice::Off`], `N` for a budget of N MiB,
    /// unset (or not a number) for [`StripChoice::Auto`].
    pub fn from_env() -> StripChoice {
        match std::env::var("OPENNGX_STRIP_BUDGET_MIB")
            .ok()
            .and_then(|v| v.trim().parse::<u64>().ok())
        {
            Some(0) => StripChoice::Off,
            Some(mib) => StripChoice::Budget(mib.saturating_mul(1 << 20)),
            None => StripChoice::Auto,
        }
    }

    /// Whether only the strips the workspace needs are kept ([`Strips::pruned`]): for the
    /// default and its per-token variant; an explicit budget keeps every strip it makes (the
    /// tests' way to run many).
    pub fn prunes(self) -> bool {
        matches!(self, StripChoice::Auto | StripChoice::PerToken(_))
    }

    /// The budget of `graph` on `route` (`None`: no strips).
    pub fn budget(self, route: Route, graph: &Graph) -> Option<u64> {
        match (self, route) {
            (StripChoice::Auto, Route::Exact | Route::Tensor) => Some(default_budget(graph)),
            (StripChoice::PerToken(n), Route::Exact | Route::Tensor) => {
                Some(budget_per_token(graph, n.max(1)))
            }
            (StripChoice::Auto | StripChoice::PerToken(_), Route::Cpu) | (StripChoice::Off, _) => {
                None
            }
            (StripChoice::Budget(b), _) => Some(b.max(1)),
        }
    }
}

/// Offsets of whole tensors a band starts at are multiples of this (the largest
/// `minStorageBufferOffsetAlignment` Vulkan allows), as for every band of `bands`.
const OFFSET_ALIGN: u64 = 256;

/// One window block run band by band.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Strip {
    /// The strip's nodes: consecutive in the schedule, all of one block.
    pub nodes: Range<usize>,
    /// The token rows of the block's level each band covers, in order, together all of them.
    pub rows: Vec<Range<u64>>,
    /// `launches[k][j]`: the band node `nodes.start + j` runs in band `k` (in its own axis).
    pub launches: Vec<Vec<Band>>,
    /// The band-local tensors (written and read only by the strip's nodes).
    pub local: Vec<TensorId>,
    /// `(output, input)`: whole outputs in the bytes of whole inputs ([`Strips::plan`]).
    pub aliases: Vec<(TensorId, TensorId)>,
}

impl Strip {
    /// Token rows of its largest band: what a band-local tensor's slot holds.
    pub fn slot_rows(&self) -> u64 {
        self.rows.iter().map(|r| r.end - r.start).max().unwrap_or(0)
    }
}

/// The strips of one schedule and the tensors they hold band by band.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Strips {
    pub strips: Vec<Strip>,
    /// The strip each node belongs to.
    pub of_node: Vec<Option<usize>>,
    /// The strip each band-local tensor belongs to (written and read only by its nodes).
    pub local: Vec<Option<usize>>,
    /// `alias[o] = Some(i)`: whole output `o` of a strip takes the bytes of its whole input `i`
    /// (see [`Strips::plan`]).
    pub alias: Vec<Option<TensorId>>,
}

impl Strips {
    /// No strips: every node runs alone, every tensor whole.
    pub fn none(graph: &Graph) -> Strips {
        Strips {
            strips: Vec::new(),
            of_node: vec![None; graph.nodes.len()],
            local: vec![None; graph.tensors.len()],
            alias: vec![None; graph.tensors.len()],
        }
    }

    /// The strips of `graph` within `limits`, with at most `budget` band-local bytes per band
    /// (a band of one window row may hold more); `keep` tensors are never band-local. `None`:
    /// no strips. A block becomes a strip only where its bands hold fewer band-local bytes than
    /// its nodes would keep live at once running whole (at small sizes they do not).
    ///
    /// A strip's whole output may also take the bytes of a whole input the strip reads last
    /// (the field block writes its f16 output where the f32 features were: 135 MiB at 1080p),
    /// when the output's rows are no wider than the input's and every read of the input in the
    /// strip comes before every write of the output: band `k` then writes rows the bands up to
    /// `k` have finished reading, and no row a later band reads.
    pub fn plan(
        graph: &Graph,
        keep: &[TensorId],
        limits: &BindLimits,
        budget: Option<u64>,
    ) -> Strips {
        let Some(budget) = budget else {
            return Strips::none(graph);
        };
        let mut strips = Vec::new();
        for (a, node) in graph.nodes.iter().enumerate() {
            if !matches!(node.op, Op::WindowAttention { .. }) {
                continue;
            }
            let Some(nodes) = candidate(graph, a) else {
                continue;
            };
            let local = band_local(graph, &nodes, keep);
            if local.is_empty() {
                continue;
            }
            let Some(strip) = cut(graph, a, nodes, &local, limits, budget) else {
                continue;
            };
            let band_bytes = strip.slot_rows() * local_row_bytes(graph, &local);
            if strip.rows.len() < 2 || band_bytes >= whole_peak(graph, &strip.nodes, &local) {
                continue;
            }
            let aliases = in_place(graph, &strip.nodes, &local, keep);
            strips.push(Strip { aliases, ..strip });
        }
        Strips::of(graph, strips)
    }

    /// The maps of `strips` over `graph`.
    fn of(graph: &Graph, strips: Vec<Strip>) -> Strips {
        let mut s = Strips::none(graph);
        for (k, strip) in strips.iter().enumerate() {
            for i in strip.nodes.clone() {
                s.of_node[i] = Some(k);
            }
            for &t in &strip.local {
                s.local[t] = Some(k);
            }
            for &(o, i) in &strip.aliases {
                s.alias[o] = Some(i);
            }
        }
        s.strips = strips;
        s
    }

    /// Only the strips the workspace needs: each strip, most launches first, is dropped where
    /// the workspace (`bytes` of a set of strips: the plan the recorder would make with them,
    /// fusions included, since a fused pair frees other bytes than an unfused one) does not grow
    /// without it. The workspace is the peak of live bytes, so strips away from the peak only
    /// add launches: at 1080p and 4K the field's two blocks stay (`tests`).
    pub fn pruned(self, graph: &Graph, bytes: impl Fn(&Strips) -> u64) -> Strips {
        let full = bytes(&self);
        let mut order: Vec<usize> = (0..self.strips.len()).collect();
        order.sort_by_key(|&k| {
            let s = &self.strips[k];
            (std::cmp::Reverse(s.rows.len() * s.nodes.len()), k)
        });
        let mut kept = vec![true; self.strips.len()];
        let subset = |kept: &[bool]| {
            let strips = self
                .strips
                .iter()
                .zip(kept)
                .filter(|(_, &k)| k)
                .map(|(s, _)| s.clone())
                .collect();
            Strips::of(graph, strips)
        };
        for k in order {
            kept[k] = false;
            if bytes(&subset(&kept)) > full {
                kept[k] = true;
            }
        }
        subset(&kept)
    }

    /// The node interval `[first, last]` during which node `i`'s tensors are in use: the
    /// whole strip for a strip's node (its bands interleave with the other nodes').
    pub fn span(&self, i: usize) -> (usize, usize) {
        match self.of_node.get(i).copied().flatten() {
            Some(k) => (self.strips[k].nodes.start, self.strips[k].nodes.end - 1),
            None => (i, i),
        }
    }

    /// Token rows the slot of tensor `t` holds: the largest band of its strip, or all of them.
    pub fn slot_rows(&self, graph: &Graph, t: TensorId) -> u64 {
        match self.local.get(t).copied().flatten() {
            Some(k) => self.strips[k].slot_rows(),
            None => graph.rows(t) as u64,
        }
    }

    /// The first token row the binding of tensor `t` holds during band `k` of its strip (0 for
    /// a whole tensor).
    pub fn origin(&self, t: TensorId, k: usize) -> u64 {
        match self.local.get(t).copied().flatten() {
            Some(s) => self.strips[s].rows.get(k).map_or(0, |r| r.start),
            None => 0,
        }
    }

    /// The tensor whose bytes `t` takes (following [`Strips::alias`] to its end; `t` itself
    /// when it takes its own).
    pub fn root(&self, mut t: TensorId) -> TensorId {
        while let Some(i) = self.alias.get(t).copied().flatten() {
            t = i;
        }
        t
    }

    /// The span `[first, last]` of a strip that node range `range` cuts (starts or ends inside),
    /// if any: a strip's bands run across all its nodes, so a range must hold all or none.
    pub fn cut_by(&self, range: &Range<usize>) -> Option<(usize, usize)> {
        [range.start, range.end]
            .into_iter()
            .map(|c| (c, self.span(c)))
            .find(|&(c, (first, _))| first != c && first < c)
            .map(|(_, s)| s)
    }

    /// Launches the strips add to a schedule whose other nodes run once each.
    pub fn band_count(&self) -> usize {
        self.strips.iter().map(|s| s.rows.len()).sum()
    }
}

/// The level size and whether `node` may run in a strip of window bands over a level of that
/// size: row-local or window-local, every tensor but an up-merge's low input on that level, no
/// split-K scratch.
fn fits_level(graph: &Graph, i: usize, size: Size) -> bool {
    let node = &graph.nodes[i];
    let level_of = |t: TensorId| graph.geometry.level(graph.tensors[t].level);
    let low = match &node.op {
        Op::UpMerge { low, .. } | Op::PostBlend { low, .. } => Some(*low),
        Op::Gemm { .. }
        | Op::Adapter { .. }
        | Op::Head { .. }
        | Op::Normalize { .. }
        | Op::WindowAttention { .. } => None,
        Op::VitAttention { .. } | Op::Pool { .. } => return false,
    };
    if scratch_bytes(graph, i) > 0 {
        return false;
    }
    let mut tensors = node.op.inputs();
    tensors.extend(node.op.outputs());
    tensors
        .into_iter()
        .filter(|&t| Some(t) != low)
        .all(|t| level_of(t) == size)
}

/// The run of consecutive nodes of attention node `a`'s block that can share its bands.
fn candidate(graph: &Graph, a: usize) -> Option<Range<usize>> {
    let Op::WindowAttention { q, .. } = &graph.nodes[a].op else {
        return None;
    };
    let size = graph.geometry.level(graph.tensors[*q].level);
    let block = graph.nodes[a].block;
    let ok = |i: usize| graph.nodes[i].block == block && fits_level(graph, i, size);
    let mut start = a;
    while start > 0 && ok(start - 1) {
        start -= 1;
    }
    let mut end = a + 1;
    while end < graph.nodes.len() && ok(end) {
        end += 1;
    }
    Some(start..end)
}

/// The tensors written by `nodes` and read by no node outside them, except `keep` ones, the
/// input and the head.
fn band_local(graph: &Graph, nodes: &Range<usize>, keep: &[TensorId]) -> Vec<TensorId> {
    let mut written = Vec::new();
    for node in &graph.nodes[nodes.clone()] {
        written.extend(node.op.outputs());
    }
    written.sort_unstable();
    written.dedup();
    let outside_reads = |t: TensorId| {
        graph
            .nodes
            .iter()
            .enumerate()
            .any(|(i, n)| !nodes.contains(&i) && n.op.inputs().contains(&t))
    };
    written
        .into_iter()
        .filter(|&t| {
            t != graph.head && t != graph.features && !keep.contains(&t) && !outside_reads(t)
        })
        .collect()
}

/// The most bytes of `local` tensors live at once when `nodes` run one after the other over all
/// their rows.
fn whole_peak(graph: &Graph, nodes: &Range<usize>, local: &[TensorId]) -> u64 {
    let last = graph.last_use();
    let mut live: Vec<TensorId> = Vec::new();
    let mut peak = 0;
    for i in nodes.clone() {
        for o in graph.nodes[i].op.outputs() {
            if local.contains(&o) {
                live.push(o);
            }
        }
        let bytes: u64 = live
            .iter()
            .map(|&t| graph.rows(t) as u64 * row_bytes(graph, t))
            .sum();
        peak = peak.max(bytes);
        live.retain(|&t| last[t].is_some_and(|l| l > i));
    }
    peak
}

/// Pairs `(output, input)` of whole tensors of the strip over `nodes` where the output can take
/// the input's bytes (see [`Strips::plan`]): the input is read last by the strip and is not
/// kept, both are on the same level, the output's rows are no wider, and the strip reads the
/// input only before it writes the output.
fn in_place(
    graph: &Graph,
    nodes: &Range<usize>,
    local: &[TensorId],
    keep: &[TensorId],
) -> Vec<(TensorId, TensorId)> {
    let last = graph.last_use();
    let inside = |i: usize| nodes.contains(&i);
    let mut inputs: Vec<(TensorId, usize)> = Vec::new(); // (tensor, its last read in the strip)
    let mut outputs: Vec<(TensorId, usize)> = Vec::new(); // (tensor, its first write)
    for i in nodes.clone() {
        let op = &graph.nodes[i].op;
        for t in op.inputs() {
            match inputs.iter_mut().find(|x| x.0 == t) {
                Some(x) => x.1 = i,
                None => inputs.push((t, i)),
            }
        }
        for t in op.outputs() {
            if !local.contains(&t) && !outputs.iter().any(|x| x.0 == t) {
                outputs.push((t, i));
            }
        }
    }
    let written_inside = |t: TensorId| outputs.iter().any(|x| x.0 == t) || local.contains(&t);
    inputs.retain(|&(t, _)| {
        !written_inside(t) && t != graph.head && !keep.contains(&t) && last[t].is_some_and(inside)
    });
    // Widest outputs first, each into the narrowest input that holds it.
    outputs.sort_by_key(|&(t, _)| std::cmp::Reverse(row_bytes(graph, t)));
    let mut pairs = Vec::new();
    for (o, written) in outputs {
        let fits = |&&(i, read): &&(TensorId, usize)| {
            read < written
                && graph.rows(i) == graph.rows(o)
                && graph.tensors[i].level == graph.tensors[o].level
                && row_bytes(graph, o) <= row_bytes(graph, i)
                && !pairs.iter().any(|&(_, p)| p == i)
        };
        if let Some(&(i, _)) = inputs
            .iter()
            .filter(fits)
            .min_by_key(|(i, _)| row_bytes(graph, *i))
        {
            pairs.push((o, i));
        }
    }
    pairs
}

/// The band of node `node` (in its own axis) covering token rows `[w*r0, w*r1)` of a level `w`
/// tokens wide, where window band `win` of the strip's attention covers image rows `[r0, r1)`.
fn node_band(graph: &Graph, node: &Node, win: Band, r0: u32, r1: u32) -> Band {
    match Axis::of(graph, node) {
        Axis::Windows { .. } => win,
        Axis::Tokens { .. } | Axis::Whole { .. } => {
            let w = match &node.op {
                Op::Gemm { input, .. }
                | Op::Adapter { input, .. }
                | Op::Head { input, .. }
                | Op::Normalize { qkv: input, .. } => graph.dims(*input).0 as u32,
                _ => 0,
            };
            Band {
                start: w * r0,
                end: w * r1,
            }
        }
        Axis::Halving { .. } | Axis::Doubling { .. } => Band { start: r0, end: r1 },
    }
}

/// Why a band of a strip cannot run.
enum Misfit {
    /// Over the budget (a longer band of the same start would be too).
    Budget,
    /// A device limit or an unaligned whole-tensor offset.
    Device,
}

/// Cut the strip of attention node `a` over `nodes` into the longest window bands that fit.
fn cut(
    graph: &Graph,
    a: usize,
    nodes: Range<usize>,
    local: &[TensorId],
    limits: &BindLimits,
    budget: u64,
) -> Option<Strip> {
    let Op::WindowAttention { q, phase, .. } = &graph.nodes[a].op else {
        return None;
    };
    let size = graph.geometry.level(graph.tensors[*q].level);
    let phase = Phase(*phase as u8);
    let axis = Axis::Windows { size, phase };
    // The image rows `[r0, r1)` a window band covers (`bands::window_band`'s own rule).
    let rows_of = |win: Band| {
        let (first, part, _) = bands::window_band(size, phase, win);
        (first, first + part.h)
    };
    let local_row = local_row_bytes(graph, local);
    let fits = |win: Band| -> Result<(), Misfit> {
        let (r0, r1) = rows_of(win);
        if r0 % 2 != 0 {
            return Err(Misfit::Device);
        }
        for i in nodes.clone() {
            let node = &graph.nodes[i];
            let band = node_band(graph, node, win, r0, r1);
            if bands::check_band(graph, node, band, limits, limits.band_range()).is_err() {
                return Err(Misfit::Device);
            }
            for (t, r) in bands::touched(graph, node, band) {
                if !local.contains(&t) && (r.start * row_bytes(graph, t)) % OFFSET_ALIGN != 0 {
                    return Err(Misfit::Device);
                }
            }
        }
        let bytes = u64::from(r1 - r0) * u64::from(size.w) * local_row;
        if bytes > budget && win.len() > 1 {
            return Err(Misfit::Budget);
        }
        Ok(())
    };
    let windows = split(axis.len(), 1, fits).ok()?;
    let mut rows = Vec::with_capacity(windows.len());
    let mut launches = Vec::with_capacity(windows.len());
    for &win in &windows {
        let (r0, r1) = rows_of(win);
        rows.push(u64::from(size.w) * u64::from(r0)..u64::from(size.w) * u64::from(r1));
        launches.push(
            graph.nodes[nodes.clone()]
                .iter()
                .map(|n| node_band(graph, n, win, r0, r1))
                .collect(),
        );
    }
    Some(Strip {
        nodes,
        rows,
        launches,
        local: local.to_vec(),
        aliases: Vec::new(),
    })
}

/// Bytes of one token row of every tensor in `local` together.
fn local_row_bytes(graph: &Graph, local: &[TensorId]) -> u64 {
    local.iter().map(|&t| row_bytes(graph, t)).sum()
}

#[cfg(test)]
pub(crate) mod tests;
