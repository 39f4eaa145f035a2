//! Device memory for the tensors of one schedule: one device-local buffer, carved into slots
//! planned from tensor lifetimes so tensors that are never live at the same time share bytes.
//!
//! A tensor is live from the node that writes it (the network input: from the start) to the last
//! node that reads it ([`Graph::last_use`]); the head and every tensor the caller asks to keep
//! (e.g. the boundaries, for readback) stay live to the end. A node's outputs never share bytes
//! with its inputs, because the plan frees a node's inputs only after placing its outputs. Slots
//! are placed first-fit at 256-byte aligned offsets. A node's scratch (the partials of a
//! split-K GEMM) is live during that node only. The workspace is reused across frames.

use std::sync::Arc;

use crate::gpu::{BufferBinding, GpuBuffer, GpuContext, GpuError, MemoryKind};
use crate::nr::graph::{Graph, TensorId};

use super::gemm::GemmShape;

/// Alignment of every slot (at least any device's `minStorageBufferOffsetAlignment`).
pub const SLOT_ALIGN: u64 = 256;

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

/// Bytes of the scratch node `i` of `graph` needs while it runs (split-K partials).
pub fn scratch_bytes(graph: &Graph, i: usize) -> u64 {
    GemmShape::of_node(graph, &graph.nodes[i]).map_or(0, |s| s.partials_bytes() as u64)
}

/// Plan the slots of `graph`'s tensors; `keep` tensors (and the input and head) are never shared.
pub fn plan(graph: &Graph, keep: &[TensorId]) -> Plan {
    let n = graph.tensors.len();
    let last = graph.last_use();
    let mut pinned = vec![false; n];
    for &t in keep.iter().chain([graph.features, graph.head].iter()) {
        if t < n {
            pinned[t] = true;
        }
    }
    let mut slots = vec![(0u64, 0u64); n];
    let mut scratch = vec![(0u64, 0u64); graph.nodes.len()];
    // Live allocations as (offset, end, tensor or None for a node's scratch), sorted by offset.
    let mut live: Vec<(u64, u64, Option<TensorId>)> = Vec::new();
    let mut high = 0u64;
    // First fit of `bytes` among the live allocations; returns the offset.
    let mut place =
        |bytes: u64, key: Option<TensorId>, live: &mut Vec<(u64, u64, Option<TensorId>)>| {
            let size = align(bytes.max(1));
            let mut at = 0u64;
            for &(o, e, _) in live.iter() {
                if at + size <= o {
                    break;
                }
                at = at.max(align(e));
            }
            let pos = live.partition_point(|&(o, _, _)| o < at);
            live.insert(pos, (at, at + size, key));
            high = high.max(at + size);
            at
        };
    let t = graph.features;
    slots[t] = (
        place(tensor_bytes(graph, t), Some(t), &mut live),
        tensor_bytes(graph, t),
    );
    for (i, node) in graph.nodes.iter().enumerate() {
        for t in node.op.outputs() {
            slots[t] = (
                place(tensor_bytes(graph, t), Some(t), &mut live),
                tensor_bytes(graph, t),
            );
        }
        let sb = scratch_bytes(graph, i);
        if sb > 0 {
            scratch[i] = (place(sb, None, &mut live), sb);
        }
        // Free the scratch, what this node was the last to read, and outputs nobody reads.
        live.retain(|&(_, _, t)| {
            let Some(t) = t else { return false };
            if pinned[t] {
                return true;
            }
            match last[t] {
                Some(l) => l > i,
                None => !node.op.outputs().contains(&t),
            }
        });
    }
    let unshared_bytes = (0..n).map(|t| align(tensor_bytes(graph, t).max(1))).sum();
    Plan {
        slots,
        scratch,
        bytes: high.max(SLOT_ALIGN),
        unshared_bytes,
    }
}

/// The tensors of one schedule on the device.
pub struct Workspace {
    buffer: GpuBuffer,
    plan: Plan,
}

impl Workspace {
    /// Allocate the workspace of `graph`, keeping `keep` tensors unshared (readable at the end).
    pub fn new(
        ctx: &Arc<GpuContext>,
        graph: &Graph,
        keep: &[TensorId],
    ) -> Result<Workspace, GpuError> {
        let plan = plan(graph, keep);
        let max_range = ctx.capabilities().max_storage_buffer_range as u64;
        // Every tensor and scratch is bound as one range of the buffer.
        let tensors = (0..graph.tensors.len()).map(|t| {
            (
                plan.slots[t].1,
                format!("tensor `{}`", graph.tensors[t].name),
            )
        });
        let scratch = (0..graph.nodes.len()).map(|i| {
            let label = &graph.nodes[i].label;
            (plan.scratch[i].1, format!("scratch of node `{label}`"))
        });
        if let Some((bytes, what)) = tensors.chain(scratch).find(|(b, _)| *b > max_range) {
            return Err(GpuError::invalid(
                what,
                format!("{bytes} bytes exceed the device's maxStorageBufferRange {max_range}"),
            ));
        }
        let buffer = GpuBuffer::new(ctx, "nr workspace", plan.bytes, MemoryKind::DeviceLocal)?;
        Ok(Workspace { buffer, plan })
    }

    /// The binding of tensor `t`.
    pub fn binding(&self, t: TensorId) -> BufferBinding {
        let (offset, range) = self.plan.slots[t];
        BufferBinding {
            buffer: self.buffer.handle(),
            offset,
            range: range.max(4),
        }
    }

    /// The scratch of node `i` (`None` when it needs none).
    pub fn scratch(&self, i: usize) -> Option<BufferBinding> {
        match self.plan.scratch.get(i) {
            Some(&(offset, range)) if range > 0 => Some(BufferBinding {
                buffer: self.buffer.handle(),
                offset,
                range,
            }),
            _ => None,
        }
    }

    /// The whole buffer (e.g. for a fill before the first frame).
    pub fn buffer(&self) -> &GpuBuffer {
        &self.buffer
    }

    /// The slot plan.
    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    /// Device bytes in use.
    pub fn bytes(&self) -> u64 {
        self.buffer.size()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nr::geometry::Geometry;
    use crate::nr::graph::build;

    fn overlap(a: (u64, u64), b: (u64, u64)) -> bool {
        a.1 > 0 && b.1 > 0 && a.0 < b.0 + b.1 && b.0 < a.0 + a.1
    }

    /// Replays the schedule: no tensor's bytes may be overwritten while it is still to be read.
    fn check(graph: &Graph, p: &Plan, keep: &[TensorId]) {
        let last = graph.last_use();
        // live[t]: written and still needed.
        let mut live = vec![false; graph.tensors.len()];
        live[graph.features] = true;
        for (i, node) in graph.nodes.iter().enumerate() {
            for o in node.op.outputs() {
                for (t, &l) in live.iter().enumerate() {
                    if l && t != o {
                        assert!(
                            !overlap(p.slots[o], p.slots[t]),
                            "node {} writes `{}` over live `{}`",
                            node.label,
                            graph.tensors[o].name,
                            graph.tensors[t].name
                        );
                    }
                }
            }
            for o in node.op.outputs() {
                live[o] = true;
            }
            // The scratch lives during the node: it may not touch a live tensor (its inputs and
            // outputs included).
            assert_eq!(p.scratch[i].1, scratch_bytes(graph, i));
            for (t, &l) in live.iter().enumerate() {
                assert!(
                    !(l && overlap(p.scratch[i], p.slots[t])),
                    "node {}'s scratch overlaps live `{}`",
                    node.label,
                    graph.tensors[t].name
                );
            }
            for t in 0..live.len() {
                let kept = keep.contains(&t) || t == graph.head;
                if live[t] && !kept && last[t].is_none_or(|l| l <= i) {
                    live[t] = false;
                }
            }
        }
        for &t in keep.iter().chain([graph.head].iter()) {
            assert!(live[t], "kept tensor `{}` died", graph.tensors[t].name);
        }
        for (t, s) in p.slots.iter().enumerate() {
            assert_eq!(s.1, tensor_bytes(graph, t));
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

    #[test]
    fn plan_never_overwrites_a_live_tensor_and_shares_memory() {
        for (w, h) in [(64, 64), (1920, 1080)] {
            let g = build(&Geometry::new(w, h).expect("valid size"));
            let p = plan(&g, &[]);
            check(&g, &p, &[]);
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
            let keep: Vec<TensorId> = g.boundaries.iter().map(|b| b.1).collect();
            let pk = plan(&g, &keep);
            check(&g, &pk, &keep);
            assert!(pk.bytes >= p.bytes);
        }
    }
}
