//! Which device buffer ("slot") holds each tensor of an RR graph: tensors whose lifetimes do not
//! overlap share a slot, so a frame's memory is about its peak live set rather than the sum of
//! every tensor (at 1280x720 -> 3840x2160: 2019 MiB of tensors in 697 MiB of slots; the peak
//! live set is 379 MiB, which a planner of offsets in one arena could approach).
//!
//! A tensor lives from the op that writes it to the last op that reads it (`Graph::last_use`);
//! the inputs (colour, guides, history) and every tensor no op reads (the output and its alpha)
//! keep slots of their own. A slot is reused only after the op that last reads its tensor, and
//! never for that op's own outputs, so no op reads and writes one slot. A free slot too small
//! for a new tensor is grown (sizes are fixed before any buffer is made). With `keep_all` every
//! tensor has its own slot (for tests that read every op's tensor after the frame).

use crate::rr::graph::{Graph, TensorId};

/// Bytes a tensor's slot must hold (at least 16, a multiple of 4).
pub fn tensor_bytes(graph: &Graph, t: TensorId) -> u64 {
    let bytes = graph.elements(t) * graph.tensors[t].dtype.size();
    (bytes.max(16).div_ceil(4) * 4) as u64
}

/// The slot assignment: `slot_of[t]` for every tensor, and each slot's size in bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Slots {
    pub slot_of: Vec<usize>,
    pub sizes: Vec<u64>,
}

impl Slots {
    /// Assign slots to every tensor of `graph` (best fit among the free slots, else a new one).
    pub fn assign(graph: &Graph, keep_all: bool) -> Slots {
        let n = graph.tensors.len();
        if keep_all {
            return Slots {
                slot_of: (0..n).collect(),
                sizes: (0..n).map(|t| tensor_bytes(graph, t)).collect(),
            };
        }
        let last = graph.last_use();
        let pinned = [graph.color, graph.guides, graph.history];
        let mut slot_of = vec![usize::MAX; n];
        let mut sizes: Vec<u64> = Vec::new();
        let mut free: Vec<usize> = Vec::new();
        let new_slot = |sizes: &mut Vec<u64>, bytes: u64| {
            sizes.push(bytes);
            sizes.len() - 1
        };
        for &t in &pinned {
            slot_of[t] = new_slot(&mut sizes, tensor_bytes(graph, t));
        }
        for (i, node) in graph.nodes.iter().enumerate() {
            for t in node.op.outputs() {
                if slot_of[t] != usize::MAX {
                    continue;
                }
                let bytes = tensor_bytes(graph, t);
                // Tensors no op reads outlive the frame: a slot of their own. Else the smallest
                // free slot that holds the tensor, or the largest free one grown to it (slots are
                // allocated once the assignment is done), or a new one.
                let pick = if last[t].is_none() {
                    None
                } else {
                    let fits = free
                        .iter()
                        .enumerate()
                        .filter(|(_, &s)| sizes[s] >= bytes)
                        .min_by_key(|(_, &s)| sizes[s]);
                    let largest = free.iter().enumerate().max_by_key(|(_, &s)| sizes[s]);
                    fits.or(largest).map(|(k, _)| k)
                };
                slot_of[t] = match pick {
                    Some(k) => {
                        let slot = free.swap_remove(k);
                        sizes[slot] = sizes[slot].max(bytes);
                        slot
                    }
                    None => new_slot(&mut sizes, bytes),
                };
            }
            for t in node.op.inputs() {
                if last[t] == Some(i) && !pinned.contains(&t) && !free.contains(&slot_of[t]) {
                    free.push(slot_of[t]);
                }
            }
        }
        Slots { slot_of, sizes }
    }

    /// Total bytes of all slots.
    pub fn total(&self) -> u64 {
        self.sizes.iter().sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rr::geometry::{Geometry, Size};
    use crate::rr::graph;
    use crate::rr::preset::Preset;

    /// No op writes a slot while another tensor in it is live (written and still to be read), and
    /// no op's inputs and outputs share a slot.
    fn check(g: &Graph, s: &Slots) {
        let last = g.last_use();
        // The tensor each slot holds and until which node it must survive (None: to the end).
        let mut holder: Vec<Option<(TensorId, Option<usize>)>> = vec![None; s.sizes.len()];
        for t in [g.color, g.guides, g.history] {
            holder[s.slot_of[t]] = Some((t, None));
        }
        for (i, node) in g.nodes.iter().enumerate() {
            let ins = node.op.inputs();
            for t in node.op.outputs() {
                let slot = s.slot_of[t];
                assert!(s.sizes[slot] >= tensor_bytes(g, t), "{}", g.tensors[t].name);
                for &x in &ins {
                    assert!(
                        x == t || s.slot_of[x] != slot,
                        "{} reads {} from the slot it writes {}",
                        node.label,
                        g.tensors[x].name,
                        g.tensors[t].name
                    );
                }
                if let Some((other, until)) = holder[slot] {
                    let dead = matches!(until, Some(u) if u < i);
                    assert!(
                        other == t || dead,
                        "{} overwrites live {} with {}",
                        node.label,
                        g.tensors[other].name,
                        g.tensors[t].name
                    );
                }
                holder[slot] = Some((t, last[t]));
            }
        }
    }

    #[test]
    fn shared_slots_never_overwrite_a_live_tensor() {
        for (r, o) in [
            ((64, 48), (96, 72)),
            ((1280, 720), (3840, 2160)),
            ((100, 60), (150, 90)),
        ] {
            let geo = Geometry::new(Size::new(r.0, r.1), Size::new(o.0, o.1)).unwrap();
            for preset in [Preset::D, Preset::E] {
                let g = graph::build(&geo, preset);
                let shared = Slots::assign(&g, false);
                check(&g, &shared);
                let all = Slots::assign(&g, true);
                check(&g, &all);
                assert_eq!(all.sizes.len(), g.tensors.len());
                // The output and alpha keep slots no other tensor uses.
                for t in [g.output, g.alpha, g.history] {
                    let users = shared.slot_of.iter().filter(|&&x| x == shared.slot_of[t]);
                    assert_eq!(users.count(), 1, "{}", g.tensors[t].name);
                }
                if r == (1280, 720) {
                    // 2019 MiB of tensors in 697 MiB of slots (the peak live set is 379 MiB).
                    assert!(all.total() > 2000 << 20, "{}", all.total() >> 20);
                    assert!(shared.total() < 700 << 20, "{}", shared.total() >> 20);
                }
            }
        }
    }
}
