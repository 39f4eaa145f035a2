//! Where each tensor of an RR graph lives on the device. In the production layout every tensor is
//! a range of one arena buffer, and tensors whose lifetimes do not overlap share bytes, so a
//! frame's memory is about its peak live set rather than the sum of every tensor (at 1280x720 ->
//! 3840x2160: 2019 MiB of tensors, a peak live set of 379.8 MiB, an arena of 385.2 MiB; at
//! 1920x1080 -> 3840x2160: 767.3 and 779.3 MiB).
//!
//! A tensor lives from the first op that writes it to the last op that reads (or writes) it
//! (`Graph::last_use`); the inputs (colour, guides, history) and every tensor no op reads (the
//! output and its alpha) live through the whole frame. An op's outputs never share bytes with its
//! inputs (their lifetimes meet at that op). The placement is `gpu::placement`'s, shared with NR:
//! offline, largest first, each at the lowest 256-aligned offset free of every tensor live with
//! it. (The online best fit it replaced, placing tensors as the schedule wrote them, took 558 MiB
//! at 1280x720 -> 3840x2160.) With `keep_all` every tensor has a buffer of its own (for tests
//! that read every op's tensor after the frame).

use crate::gpu::placement::{self, Lifetime};
use crate::rr::graph::{Graph, TensorId};

/// Offsets in the arena are multiples of this.
pub const ALIGN: u64 = placement::ALIGN;

/// Bytes a tensor's range must hold (at least 16, a multiple of 4).
pub fn tensor_bytes(graph: &Graph, t: TensorId) -> u64 {
    let bytes = graph.elements(t) * graph.tensors[t].dtype.size();
    (bytes.max(16).div_ceil(4) * 4) as u64
}

/// Each tensor's buffer and offset, and each buffer's size in bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Placement {
    pub buffer_of: Vec<usize>,
    pub offset: Vec<u64>,
    pub buffers: Vec<u64>,
}

impl Placement {
    /// Place every tensor of `graph`.
    pub fn assign(graph: &Graph, keep_all: bool) -> Placement {
        let n = graph.tensors.len();
        if keep_all {
            return Placement {
                buffer_of: (0..n).collect(),
                offset: vec![0; n],
                buffers: (0..n).map(|t| tensor_bytes(graph, t)).collect(),
            };
        }
        let end = graph.nodes.len();
        let last_read = graph.last_use();
        let pinned = [graph.color, graph.guides, graph.history];
        // Each tensor's steps: from its first writer to its last reader (or writer); the inputs
        // and what no op reads (the output, its alpha) through the whole frame.
        let mut span: Vec<Option<(usize, usize)>> = vec![None; n];
        for (i, node) in graph.nodes.iter().enumerate() {
            for t in node.op.outputs() {
                span[t] = Some(span[t].map_or((i, i), |(f, l)| (f, l.max(i))));
            }
        }
        let lifetimes: Vec<Lifetime> = (0..n)
            .map(|t| {
                let (first, last) = match (span[t], last_read[t]) {
                    _ if pinned.contains(&t) => (0, end),
                    (Some((first, _)), None) => (first, end),
                    (Some((first, written)), Some(read)) => (first, written.max(read)),
                    (None, _) => (0, end),
                };
                Lifetime {
                    bytes: tensor_bytes(graph, t),
                    first,
                    last,
                }
            })
            .collect();
        let placed = placement::place(&lifetimes, u64::MAX);
        Placement {
            buffer_of: vec![0; n],
            offset: placed.offsets,
            buffers: vec![placed.bytes],
        }
    }

    /// Total bytes of all buffers.
    pub fn total(&self) -> u64 {
        self.buffers.iter().sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rr::geometry::{Geometry, Size};
    use crate::rr::graph;
    use crate::rr::preset::Preset;

    /// No op writes bytes of a tensor that is still live (written and still to be read, or never
    /// freed), no op's inputs and outputs overlap, and every range lies in its buffer, aligned.
    fn check(g: &Graph, p: &Placement) {
        let last = g.last_use();
        let range = |t: TensorId| {
            let o = p.offset[t];
            (p.buffer_of[t], o, o + tensor_bytes(g, t))
        };
        let overlap = |a: TensorId, b: TensorId| {
            let (ba, a0, a1) = range(a);
            let (bb, b0, b1) = range(b);
            ba == bb && a0 < b1 && b0 < a1
        };
        for t in 0..g.tensors.len() {
            let (b, o, end) = range(t);
            assert!(
                end <= p.buffers[b] && o % ALIGN == 0,
                "{}",
                g.tensors[t].name
            );
        }
        // Tensors written so far and the node after which each may be overwritten.
        let mut live: Vec<(TensorId, Option<usize>)> = [g.color, g.guides, g.history]
            .iter()
            .map(|&t| (t, None))
            .collect();
        for (i, node) in g.nodes.iter().enumerate() {
            let ins = node.op.inputs();
            for t in node.op.outputs() {
                for &x in &ins {
                    assert!(x == t || !overlap(x, t), "{}: {x} / {t}", node.label);
                }
                for &(other, until) in &live {
                    let dead = matches!(until, Some(u) if u < i);
                    assert!(
                        other == t || dead || !overlap(other, t),
                        "{} overwrites live {} with {}",
                        node.label,
                        g.tensors[other].name,
                        g.tensors[t].name
                    );
                }
                live.push((t, last[t]));
            }
        }
    }

    #[test]
    fn placed_tensors_never_overwrite_a_live_tensor() {
        for (r, o) in [
            ((64, 48), (96, 72)),
            ((1280, 720), (3840, 2160)),
            ((100, 60), (150, 90)),
        ] {
            let geo = Geometry::new(Size::new(r.0, r.1), Size::new(o.0, o.1)).unwrap();
            for preset in [Preset::D, Preset::E] {
                let g = graph::build(&geo, preset);
                let shared = Placement::assign(&g, false);
                check(&g, &shared);
                let all = Placement::assign(&g, true);
                check(&g, &all);
                assert_eq!(all.buffers.len(), g.tensors.len());
                if r == (1280, 720) {
                    assert!(all.total() > 2000 << 20, "{}", all.total() >> 20);
                    // 2019 MiB of tensors; a peak live set of 379.8 MiB.
                    assert!(shared.total() < 400 << 20, "{}", shared.total() >> 20);
                }
            }
        }
    }

    /// The most bytes live at once: at each op, every tensor written at or before it and not yet
    /// dead (its last reader at or after it), the inputs and unread tensors always.
    fn peak_live_bytes(g: &Graph) -> u64 {
        let last = g.last_use();
        let mut first = vec![None; g.tensors.len()];
        for (i, node) in g.nodes.iter().enumerate() {
            for t in node.op.outputs() {
                first[t].get_or_insert(i);
            }
        }
        let pinned = [g.color, g.guides, g.history];
        (0..g.nodes.len())
            .map(|i| {
                (0..g.tensors.len())
                    .filter(|&t| {
                        pinned.contains(&t)
                            || matches!((first[t], last[t]), (Some(f), l) if f <= i && l.is_none_or(|l| l >= i))
                    })
                    .map(|t| placement::align(tensor_bytes(g, t)))
                    .sum::<u64>()
            })
            .max()
            .unwrap_or(0)
    }

    #[test]
    fn the_arena_is_within_a_few_percent_of_the_peak_live_set() {
        for (r, o) in [((1280, 720), (3840, 2160)), ((1920, 1080), (3840, 2160))] {
            let geo = Geometry::new(Size::new(r.0, r.1), Size::new(o.0, o.1)).unwrap();
            let g = graph::build(&geo, Preset::E);
            let (arena, peak) = (Placement::assign(&g, false).total(), peak_live_bytes(&g));
            eprintln!(
                "{r:?} -> {o:?}: arena {:.1} MiB, peak live {:.1} MiB",
                arena as f64 / 1048576.0,
                peak as f64 / 1048576.0
            );
            assert!(arena >= peak);
            assert!(arena <= peak + peak / 50, "arena {arena}, peak {peak}");
        }
    }
}
