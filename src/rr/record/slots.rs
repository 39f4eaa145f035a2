//! Where each tensor of an RR graph lives on the device. In the production layout every tensor is
//! a range of one arena buffer, and tensors whose lifetimes do not overlap share bytes, so a
//! frame's memory is about its peak live set rather than the sum of every tensor (at 1280x720 ->
//! 3840x2160: 2019 MiB of tensors, a peak live set of 379 MiB, an arena of 558 MiB).
//!
//! A tensor lives from the op that writes it to the last op that reads it (`Graph::last_use`);
//! the inputs (colour, guides, history) and every tensor no op reads (the output and its alpha)
//! are placed first and never freed. A range is freed after the op that last reads its tensor,
//! so no op reads and writes overlapping bytes. Placement is best fit among the free ranges
//! (merged with their neighbours when freed), else at the arena's end; offsets are multiples of
//! 256 (the largest `minStorageBufferOffsetAlignment` Vulkan allows). With `keep_all` every tensor
//! has a buffer of its own (for tests that read every op's tensor after the frame).

use crate::rr::graph::{Graph, TensorId};

/// Offsets in the arena are multiples of this.
pub const ALIGN: u64 = 256;

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

/// Free ranges of the arena (offset, length), sorted by offset, never adjacent.
#[derive(Default)]
struct Arena {
    free: Vec<(u64, u64)>,
    end: u64,
}

impl Arena {
    fn alloc(&mut self, bytes: u64) -> u64 {
        let len = bytes.div_ceil(ALIGN) * ALIGN;
        let best = self
            .free
            .iter()
            .enumerate()
            .filter(|(_, &(_, l))| l >= len)
            .min_by_key(|(_, &(_, l))| l)
            .map(|(i, _)| i);
        if let Some(i) = best {
            let (off, l) = self.free[i];
            if l == len {
                self.free.remove(i);
            } else {
                self.free[i] = (off + len, l - len);
            }
            return off;
        }
        // A free range at the end grows into the new space.
        if let Some(&(off, l)) = self.free.last() {
            if off + l == self.end {
                self.free.pop();
                self.end = off + len;
                return off;
            }
        }
        let off = self.end;
        self.end += len;
        off
    }

    fn release(&mut self, off: u64, bytes: u64) {
        let len = bytes.div_ceil(ALIGN) * ALIGN;
        let i = self.free.partition_point(|&(o, _)| o < off);
        self.free.insert(i, (off, len));
        // Merge with the next, then with the previous range.
        if i + 1 < self.free.len() && off + len == self.free[i + 1].0 {
            self.free[i].1 += self.free[i + 1].1;
            self.free.remove(i + 1);
        }
        if i > 0 && self.free[i - 1].0 + self.free[i - 1].1 == off {
            self.free[i - 1].1 += self.free[i].1;
            self.free.remove(i);
        }
    }
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
        let last = graph.last_use();
        let pinned = [graph.color, graph.guides, graph.history];
        let mut offset = vec![u64::MAX; n];
        let mut arena = Arena::default();
        // The inputs and the tensors no op reads first: they live through the frame.
        for t in (0..n).filter(|&t| pinned.contains(&t) || last[t].is_none()) {
            offset[t] = arena.alloc(tensor_bytes(graph, t));
        }
        for (i, node) in graph.nodes.iter().enumerate() {
            for t in node.op.outputs() {
                if offset[t] == u64::MAX {
                    offset[t] = arena.alloc(tensor_bytes(graph, t));
                }
            }
            let mut done = node.op.inputs();
            done.sort_unstable();
            done.dedup();
            for t in done {
                if last[t] == Some(i) && !pinned.contains(&t) {
                    arena.release(offset[t], tensor_bytes(graph, t));
                }
            }
        }
        Placement {
            buffer_of: vec![0; n],
            offset,
            buffers: vec![arena.end.max(ALIGN)],
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
                    // 2019 MiB of tensors; a peak live set of 379 MiB.
                    assert!(shared.total() < 600 << 20, "{}", shared.total() >> 20);
                }
            }
        }
    }

    #[test]
    fn the_arena_reuses_and_merges_free_ranges() {
        let mut a = Arena::default();
        let x = a.alloc(100);
        let y = a.alloc(300);
        let z = a.alloc(256);
        assert_eq!((x, y, z), (0, 256, 768));
        a.release(y, 300);
        assert_eq!(a.alloc(200), 256); // best fit inside the freed 512
        a.release(x, 100);
        assert_eq!(a.free, vec![(0, 256), (512, 256)]);
        a.release(256, 200); // merges with both neighbours: [0, 768)
        assert_eq!(a.free, vec![(0, 768)]);
        a.release(z, 256); // and with z's: [0, 1024)
        assert_eq!(a.free, vec![(0, 1024)]);
        assert_eq!(a.alloc(2000), 0); // grows from the free tail
        assert_eq!(a.end, 2048);
    }
}
