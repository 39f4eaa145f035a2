//! Device memory for the tensors of one schedule: one device-local buffer, carved into slots
//! planned from tensor lifetimes so tensors that are never live at the same time share bytes.
//!
//! A tensor is live from the node that writes it (the network input: from the start) to the last
//! node that reads it ([`Graph::last_use`]); the head and every tensor the caller asks to keep
//! (e.g. the boundaries, for readback) stay live to the end. The input is kept only when the
//! caller asks (`NetworkOptions::input_per_frame` false): the frame pipeline's prepare pass
//! writes it again every frame, after the network's exit barrier of the frame before, and nothing
//! reads it after the adapter. A node's outputs never share bytes with its inputs (their
//! intervals meet at that node). A node's scratch (the partials of a split-K GEMM) is live during
//! that node only. Slots are placed largest first at 256-byte aligned offsets (see [`plan`]).
//! The workspace is reused across frames.
//!
//! A window block run as a strip (`strips`) runs its nodes band by band, so every tensor it
//! touches is live across the whole strip, and its band-local tensors take only the rows of its
//! largest band.
//!
//! A device may allocate less in one piece than the workspace needs (lavapipe:
//! `maxMemoryAllocationSize` 2 GiB, a 3840x2160 workspace is about 3 GiB): the plan then cuts
//! its address space into pieces of at most that size, no slot crossing a cut, and each piece is
//! a buffer of its own. Where everything fits one buffer the plan is the one it always was.

use std::sync::Arc;

use crate::gpu::placement;
use crate::gpu::{BufferBinding, GpuBuffer, GpuContext, GpuError, MemoryKind};
use crate::nr::graph::{Graph, TensorId};

use super::bands::{BindLimits, RangeError};
use super::fusion::Fusions;
use super::gemm::GemmShape;
use super::strips::Strips;
use super::RecordError;

/// Alignment of every slot (at least any device's `minStorageBufferOffsetAlignment`).
pub const SLOT_ALIGN: u64 = placement::ALIGN;

/// Where each tensor lives in the workspace buffer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    /// `(offset, bytes)` of every tensor.
    pub slots: Vec<(u64, u64)>,
    /// `(offset, bytes)` of every node's scratch (bytes 0: none).
    pub scratch: Vec<(u64, u64)>,
    /// Size of the buffer the plan needs.
    pub bytes: u64,
    /// What the tensors would take without sharing (for reports).
    pub unshared_bytes: u64,
}

fn align(v: u64) -> u64 {
    v.div_ceil(SLOT_ALIGN) * SLOT_ALIGN
}

/// Bytes of a tensor.
pub fn tensor_bytes(graph: &Graph, t: TensorId) -> u64 {
    (graph.rows(t) * graph.tensors[t].channels * graph.tensors[t].dtype.size()) as u64
}

/// Bytes of tensor `t`'s slot: the whole tensor, or one band of it when it is band-local to a
/// strip.
pub fn slot_bytes(graph: &Graph, strips: &Strips, t: TensorId) -> u64 {
    strips.slot_rows(graph, t) * (graph.tensors[t].channels * graph.tensors[t].dtype.size()) as u64
}

/// Bytes of the scratch node `i` of `graph` needs while it runs (split-K partials).
pub fn scratch_bytes(graph: &Graph, i: usize) -> u64 {
    GemmShape::of_node(graph, &graph.nodes[i]).map_or(0, |s| s.partials_bytes() as u64)
}

/// One allocation of the plan: a tensor or a node's scratch, its bytes and the node interval
/// `[first, last]` during which its bytes must not be shared.
struct Lifetime {
    bytes: u64,
    first: usize,
    last: usize,
    tensor: Option<TensorId>,
    node: usize,
}

/// Plan the slots of `graph`'s tensors; `keep` tensors and the head are never shared.
///
/// The schedule is fixed, so the plan is made offline over the whole of it: every allocation
/// (tensor or scratch) gets its node interval, and they are placed largest first, each at the
/// lowest 256-byte aligned offset that overlaps no placed allocation whose interval meets its
/// own ([`placement::place`], shared with RR). Placing in schedule order (first fit as tensors
/// appear) left holes the size of the big early tensors: 1147 MiB for a 1080p frame whose live
/// bytes never exceed 742 MiB (with the input kept to the end, as it was then: 877 MiB).
///
/// `piece` is the most bytes one buffer may hold: no slot crosses a multiple of it (one bigger
/// than `piece` cannot be placed: [`Workspace::new`] refuses it first). A node of a strip counts
/// as running from the strip's first node to its last.
pub fn plan(graph: &Graph, keep: &[TensorId], strips: &Strips, piece: u64) -> Plan {
    plan_fused(graph, keep, strips, &Fusions::none(graph), piece)
}

/// [`plan`] with `fusions`: a node run inside the next one writes no output (they get no
/// bytes) and its inputs are read by that next node.
pub fn plan_fused(
    graph: &Graph,
    keep: &[TensorId],
    strips: &Strips,
    fusions: &Fusions,
    piece: u64,
) -> Plan {
    let piece = (piece / SLOT_ALIGN * SLOT_ALIGN).max(SLOT_ALIGN);
    let n = graph.tensors.len();
    let last_use = fusions.last_use(graph);
    let end = graph.nodes.len();
    let mut pinned = vec![false; n];
    for &t in keep.iter().chain([graph.head].iter()) {
        if t < n {
            pinned[t] = true;
        }
    }
    let mut lifetimes = Vec::new();
    // The input is live from before the first node.
    let mut written = vec![None; n];
    written[graph.features] = Some(0);
    for (i, node) in graph.nodes.iter().enumerate() {
        let (first, last) = strips.span(i);
        if !fusions.runs_inside_next(i) {
            for t in node.op.outputs() {
                written[t] = Some(first);
            }
        }
        let sb = scratch_bytes(graph, i);
        if sb > 0 {
            lifetimes.push(Lifetime {
                bytes: sb,
                first,
                last,
                tensor: None,
                node: i,
            });
        }
    }
    // Each tensor's interval and bytes; a tensor that takes another's bytes (`Strips::alias`)
    // widens the interval and bytes of the one whose bytes it takes.
    let mut span: Vec<Option<(usize, usize, u64)>> = vec![None; n];
    for t in 0..n {
        let Some(first) = written[t] else { continue };
        let last = if pinned[t] {
            end
        } else {
            // A node's outputs never share with its inputs: the intervals meet at that node.
            last_use[t].map_or(first, |l| strips.span(l).1.max(first))
        };
        let root = strips.root(t);
        let bytes = slot_bytes(graph, strips, t);
        span[root] = Some(match span[root] {
            Some((f, l, b)) => (f.min(first), l.max(last), b.max(bytes)),
            None => (first, last, bytes),
        });
    }
    for (t, s) in span.iter().enumerate() {
        if let Some((first, last, bytes)) = *s {
            lifetimes.push(Lifetime {
                bytes,
                first,
                last,
                tensor: Some(t),
                node: first,
            });
        }
    }
    // Largest first; equal sizes by first step, then scratch before tensors and tensors in id
    // order (the order pushed above), so the plan is deterministic.
    let placed = placement::place(
        &lifetimes
            .iter()
            .map(|l| placement::Lifetime {
                bytes: l.bytes,
                first: l.first,
                last: l.last,
            })
            .collect::<Vec<_>>(),
        piece,
    );
    let mut slots = vec![(0u64, 0u64); n];
    let mut scratch = vec![(0u64, 0u64); graph.nodes.len()];
    for (l, &at) in lifetimes.iter().zip(&placed.offsets) {
        match l.tensor {
            Some(t) => slots[t] = (at, l.bytes),
            None => scratch[l.node] = (at, l.bytes),
        }
    }
    for t in 0..n {
        let root = strips.root(t);
        if root != t && written[t].is_some() {
            slots[t] = (slots[root].0, slot_bytes(graph, strips, t));
        }
    }
    let unshared_bytes = (0..n).map(|t| align(tensor_bytes(graph, t).max(1))).sum();
    Plan {
        slots,
        scratch,
        bytes: placed.bytes,
        unshared_bytes,
    }
}

/// The tensors of one schedule on the device.
pub struct Workspace {
    /// The pieces of the plan's address space, `piece` bytes each (the last one shorter).
    buffers: Vec<GpuBuffer>,
    piece: u64,
    plan: Plan,
}

/// The pieces of a workspace on a device that allocates at most `max_buffer` bytes at once.
pub(super) fn piece_size(max_buffer: u64) -> u64 {
    (max_buffer / SLOT_ALIGN * SLOT_ALIGN).max(SLOT_ALIGN)
}

/// Check that every allocation of `graph`'s workspace fits one buffer of the device (before
/// anything is allocated or recorded) and plan it.
pub fn plan_within(
    graph: &Graph,
    keep: &[TensorId],
    strips: &Strips,
    fusions: &Fusions,
    limits: &BindLimits,
) -> Result<Plan, RangeError> {
    let piece = piece_size(limits.max_buffer);
    let tensors = (0..graph.tensors.len()).map(|t| {
        (
            slot_bytes(graph, strips, t),
            format!("workspace tensor `{}`", graph.tensors[t].name),
        )
    });
    let scratch = (0..graph.nodes.len()).map(|i| {
        let label = &graph.nodes[i].label;
        (
            scratch_bytes(graph, i),
            format!("scratch of node `{label}`"),
        )
    });
    if let Some((bytes, what)) = tensors.chain(scratch).find(|(b, _)| align(*b) > piece) {
        return Err(RangeError::buffer(what, bytes, limits));
    }
    Ok(plan_fused(graph, keep, strips, fusions, piece))
}

impl Workspace {
    /// Allocate the workspace of `plan` ([`plan_within`] within the same `limits`) in buffers of
    /// at most `limits.max_buffer` bytes.
    pub fn new(
        ctx: &Arc<GpuContext>,
        plan: Plan,
        limits: &BindLimits,
    ) -> Result<Workspace, RecordError> {
        let piece = piece_size(limits.max_buffer);
        let pieces = plan.bytes.div_ceil(piece);
        let buffers = (0..pieces)
            .map(|i| {
                let bytes = (plan.bytes - i * piece).min(piece);
                let name = if pieces == 1 {
                    "nr workspace".to_owned()
                } else {
                    format!("nr workspace {i}")
                };
                GpuBuffer::new(ctx, &name, bytes, MemoryKind::DeviceLocal)
            })
            .collect::<Result<Vec<_>, GpuError>>()?;
        Ok(Workspace {
            buffers,
            piece,
            plan,
        })
    }

    /// The buffer and offset in it of the plan's byte `at`.
    fn locate(&self, at: u64) -> (&GpuBuffer, u64) {
        let i = ((at / self.piece) as usize).min(self.buffers.len() - 1);
        (&self.buffers[i], at - i as u64 * self.piece)
    }

    /// The binding of tensor `t`.
    pub fn binding(&self, t: TensorId) -> BufferBinding {
        let (offset, range) = self.plan.slots[t];
        let (buffer, offset) = self.locate(offset);
        BufferBinding {
            buffer: buffer.handle(),
            offset,
            range: range.max(4),
        }
    }

    /// The buffer holding tensor `t` and the tensor's offset in it (for uploads).
    pub fn place(&self, t: TensorId) -> (&GpuBuffer, u64) {
        self.locate(self.plan.slots[t].0)
    }

    /// The scratch of node `i` (`None` when it needs none).
    pub fn scratch(&self, i: usize) -> Option<BufferBinding> {
        match self.plan.scratch.get(i) {
            Some(&(offset, range)) if range > 0 => {
                let (buffer, offset) = self.locate(offset);
                Some(BufferBinding {
                    buffer: buffer.handle(),
                    offset,
                    range,
                })
            }
            _ => None,
        }
    }

    /// The buffers, in plan order (e.g. for a fill before the first frame).
    pub fn buffers(&self) -> &[GpuBuffer] {
        &self.buffers
    }

    /// The slot plan.
    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    /// Device bytes in use.
    pub fn bytes(&self) -> u64 {
        self.buffers.iter().map(GpuBuffer::size).sum()
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::nr::geometry::Geometry;
    use crate::nr::graph::build;

    fn overlap(a: (u64, u64), b: (u64, u64)) -> bool {
        a.1 > 0 && b.1 > 0 && a.0 < b.0 + b.1 && b.0 < a.0 + a.1
    }

    /// The schedule in the units it runs in: a strip's nodes together, every other node alone.
    fn units(graph: &Graph, strips: &Strips) -> Vec<std::ops::Range<usize>> {
        let mut v = Vec::new();
        let mut i = 0;
        while i < graph.nodes.len() {
            let (_, last) = strips.span(i);
            v.push(i..last + 1);
            i = last + 1;
        }
        v
    }

    /// Replays the schedule unit by unit (a strip's bands interleave its nodes, so all it
    /// touches is live together): no tensor's bytes may be overwritten while it is still to be
    /// read, and no two tensors a unit touches may share bytes.
    pub(crate) fn check(graph: &Graph, p: &Plan, keep: &[TensorId], strips: &Strips) {
        let last = graph.last_use();
        // live[t]: written and still needed.
        let mut live = vec![false; graph.tensors.len()];
        live[graph.features] = true;
        for unit in units(graph, strips) {
            let nodes = &graph.nodes[unit.clone()];
            let outputs: Vec<TensorId> = nodes.iter().flat_map(|n| n.op.outputs()).collect();
            for &o in &outputs {
                live[o] = true;
            }
            for &o in &outputs {
                for (t, &l) in live.iter().enumerate() {
                    // A strip's output in place of its input (`Strips::alias`).
                    let in_place = strips.root(o) == strips.root(t);
                    if l && t != o && !in_place {
                        assert!(
                            !overlap(p.slots[o], p.slots[t]),
                            "unit {} writes `{}` over live `{}`",
                            graph.nodes[unit.start].label,
                            graph.tensors[o].name,
                            graph.tensors[t].name
                        );
                    }
                }
            }
            // The scratch lives during its node (its unit): it may not touch a live tensor
            // (inputs and outputs included).
            for i in unit.clone() {
                assert_eq!(p.scratch[i].1, scratch_bytes(graph, i));
                for (t, &l) in live.iter().enumerate() {
                    assert!(
                        !(l && overlap(p.scratch[i], p.slots[t])),
                        "node {}'s scratch overlaps live `{}`",
                        graph.nodes[i].label,
                        graph.tensors[t].name
                    );
                }
            }
            for t in 0..live.len() {
                let kept = keep.contains(&t) || t == graph.head;
                if live[t] && !kept && last[t].is_none_or(|l| l < unit.end) {
                    live[t] = false;
                }
            }
        }
        for &t in keep.iter().chain([graph.head].iter()) {
            assert!(live[t], "kept tensor `{}` died", graph.tensors[t].name);
        }
        for (t, s) in p.slots.iter().enumerate() {
            assert_eq!(s.1, slot_bytes(graph, strips, t));
            assert_eq!(s.0 % SLOT_ALIGN, 0);
            assert!(s.0 + s.1 <= p.bytes);
        }
        for s in &p.scratch {
            assert_eq!(s.0 % SLOT_ALIGN, 0);
            assert!(s.0 + s.1 <= p.bytes);
        }
        // The split-K GEMMs (the ViT's) have their scratch.
        let split = (0..graph.nodes.len())
            .filter(|&i| p.scratch[i].1 > 0)
            .count();
        assert_eq!(split, 3 * 8 + 1);
    }

    /// The most bytes (aligned slots and scratch) live during any one unit.
    pub(crate) fn peak_live_bytes(graph: &Graph, keep: &[TensorId], strips: &Strips) -> u64 {
        let last = graph.last_use();
        let mut live = vec![false; graph.tensors.len()];
        live[graph.features] = true;
        let mut peak = 0;
        for unit in units(graph, strips) {
            for node in &graph.nodes[unit.clone()] {
                for o in node.op.outputs() {
                    live[o] = true;
                }
            }
            // A tensor in another's bytes counts once, with the larger of the two.
            let mut roots: Vec<(TensorId, u64)> = Vec::new();
            for t in (0..live.len()).filter(|&t| live[t]) {
                let (r, b) = (strips.root(t), align(slot_bytes(graph, strips, t).max(1)));
                match roots.iter_mut().find(|x| x.0 == r) {
                    Some(x) => x.1 = x.1.max(b),
                    None => roots.push((r, b)),
                }
            }
            let bytes: u64 = roots.iter().map(|x| x.1).sum::<u64>()
                + unit
                    .clone()
                    .map(|i| align(scratch_bytes(graph, i)))
                    .sum::<u64>();
            peak = peak.max(bytes);
            for t in 0..live.len() {
                let kept = keep.contains(&t) || t == graph.head;
                if live[t] && !kept && last[t].is_none_or(|l| l < unit.end) {
                    live[t] = false;
                }
            }
        }
        peak
    }

    #[test]
    fn plan_never_overwrites_a_live_tensor_and_shares_memory() {
        for (w, h) in [(64, 64), (1920, 1080)] {
            let g = build(&Geometry::new(w, h).expect("valid size"));
            let none = Strips::none(&g);
            let p = plan(&g, &[], &none, u64::MAX);
            check(&g, &p, &[], &none);
            // The biggest single tensor is a lower bound; sharing must beat no sharing by far.
            let biggest = (0..g.tensors.len())
                .map(|t| tensor_bytes(&g, t))
                .max()
                .unwrap_or(0);
            assert!(p.bytes >= biggest);
            assert!(
                p.bytes * 4 < p.unshared_bytes,
                "{} vs {}",
                p.bytes,
                p.unshared_bytes
            );
            // Near the lower bound: the most bytes live at once (a 1080p frame: 742 MiB; the
            // schedule-order first fit of before needed 1147 MiB).
            let peak = peak_live_bytes(&g, &[], &none);
            assert!(p.bytes >= peak);
            assert!(
                p.bytes <= peak + peak / 50 + (1 << 20),
                "{w}x{h}: plan {} bytes, peak live {peak}",
                p.bytes
            );
            let keep: Vec<TensorId> = g.boundaries.iter().map(|b| b.1).collect();
            let pk = plan(&g, &keep, &none, u64::MAX);
            check(&g, &pk, &keep, &none);
            assert!(pk.bytes >= p.bytes);
            assert!(pk.bytes >= peak_live_bytes(&g, &keep, &none));
        }
    }

    /// A device that allocates less at once than the workspace takes (lavapipe: 2 GiB) gets
    /// the same replay-checked plan cut into pieces no slot crosses; one that allocates
    /// everything at once gets the plan of before.
    #[test]
    fn pieces_are_never_crossed() {
        let g = build(&Geometry::new(1920, 1080).expect("valid size"));
        let none = Strips::none(&g);
        let whole = plan(&g, &[], &none, u64::MAX);
        assert_eq!(plan(&g, &[], &none, whole.bytes), whole);
        // Above the largest tensor (the field QKV, 405 MiB), below the workspace (742 MiB).
        let piece = 420 << 20;
        let p = plan(&g, &[], &none, piece);
        check(&g, &p, &[], &none);
        for &(o, b) in p.slots.iter().chain(&p.scratch) {
            if b > 0 {
                assert_eq!(
                    o / piece,
                    (o + b - 1) / piece,
                    "slot {o}+{b} crosses a piece"
                );
            }
        }
        assert!(p.bytes > piece, "{} bytes in pieces of {piece}", p.bytes);
        // Little lost to the cuts: within one piece of the uncut plan.
        assert!(
            p.bytes <= whole.bytes + piece,
            "{} vs {}",
            p.bytes,
            whole.bytes
        );
        // A tensor bigger than a piece is refused by name, before any plan.
        let limits = BindLimits {
            max_range: u64::MAX,
            max_groups: [u32::MAX; 3],
            max_buffer: 64 << 20,
        };
        let e = plan_within(&g, &[], &none, &Fusions::none(&g), &limits)
            .expect_err("1080p tensors exceed 64 MiB");
        assert_eq!(e.limit, "maxMemoryAllocationSize/maxBufferSize");
        assert!(e.what.contains("workspace tensor"), "{e}");
    }
}
