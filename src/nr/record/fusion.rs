//! [`Fusions`]: which nodes of a schedule run inside the kernel of the node after them. A route
//! names the pairs it can run as one kernel (`nr::route::fuses`); the recorder fuses a pair
//! only where that is invisible to everyone else:
//!
//! * nothing but the second node reads the first node's outputs, and none of them is kept (a
//!   fused node's outputs are never written: `verify`'s `Keep::All` fuses nothing);
//! * both run in the same launches: each in one launch outside strips, or both in the same strip
//!   (band `k` of the second then reads the rows band `k` of the first would have read);
//! * no output of the second node takes the bytes of an input of the first (`Strips::alias`).
//!
//! The workspace plan then gives the unwritten outputs no bytes and keeps the first node's
//! inputs live to the second node, which now reads them. The published bytes are the same: the
//! fused kernel computes both ops in their order and roundings, and `--check` compares them.

use crate::feature::Route;
use crate::nr::graph::{Graph, TensorId};
use crate::nr::route::{self, Fusion};

use super::bands::Band;
use super::strips::Strips;

/// Which nodes run inside the next node's kernel.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Fusions {
    /// `into_next[i]`: node `i` runs inside node `i + 1`'s launches and has none of its own.
    pub into_next: Vec<bool>,
}

impl Fusions {
    /// No fusion: every node its own launches.
    pub fn none(graph: &Graph) -> Fusions {
        Fusions {
            into_next: vec![false; graph.nodes.len()],
        }
    }

    /// The fusions `fusion` asks for that `route` runs over `graph`, whose `kept` tensors stay
    /// readable, with the nodes launched in `bands` (per node) and `strips`.
    pub fn plan(
        route: Route,
        fusion: Fusion,
        graph: &Graph,
        kept: &[TensorId],
        strips: &Strips,
        bands: &[Vec<Band>],
    ) -> Fusions {
        let n = graph.nodes.len();
        let mut readers = vec![Vec::new(); graph.tensors.len()];
        for (i, node) in graph.nodes.iter().enumerate() {
            for t in node.op.inputs() {
                readers[t].push(i);
            }
        }
        let mut into_next = vec![false; n];
        for i in 0..n.saturating_sub(1) {
            let (node, next) = (&graph.nodes[i], &graph.nodes[i + 1]);
            if fusion == Fusion::Off || !route::fuses(route, fusion, node, next) {
                continue;
            }
            let private = node
                .op
                .outputs()
                .iter()
                .all(|&t| !kept.contains(&t) && readers[t].iter().all(|&r| r == i + 1));
            let launches = match (strips.of_node[i], strips.of_node[i + 1]) {
                (Some(a), Some(b)) => a == b,
                (None, None) => bands[i].len() == 1 && bands[i + 1].len() == 1,
                _ => false,
            };
            let inputs = node.op.inputs();
            let no_alias = next.op.outputs().iter().all(|&o| {
                let root = strips.root(o);
                inputs.iter().all(|&t| strips.root(t) != root)
            });
            // A chain (a node both fused and fused into) would need a three-op kernel.
            let free = i == 0 || !into_next[i - 1];
            into_next[i] = private && launches && no_alias && free;
        }
        Fusions { into_next }
    }

    /// Whether node `i` runs inside node `i + 1`.
    pub fn runs_inside_next(&self, i: usize) -> bool {
        self.into_next.get(i).copied().unwrap_or(false)
    }

    /// The node that runs inside node `i`, if any.
    pub fn producer_of(&self, i: usize) -> Option<usize> {
        i.checked_sub(1).filter(|&p| self.runs_inside_next(p))
    }

    /// How many nodes run inside another.
    pub fn count(&self) -> usize {
        self.into_next.iter().filter(|&&f| f).count()
    }

    /// A fused pair that `range` (of nodes) cuts, as `(first, second)`: recording one without
    /// the other would lose the first's work.
    pub fn cut_by(&self, range: &std::ops::Range<usize>) -> Option<(usize, usize)> {
        let cut = |i: usize| i > 0 && self.runs_inside_next(i - 1);
        [range.start, range.end]
            .into_iter()
            .find(|&i| cut(i))
            .map(|i| (i - 1, i))
    }

    /// `graph.last_use()` with every fused node's inputs read by the node it runs inside.
    pub fn last_use(&self, graph: &Graph) -> Vec<Option<usize>> {
        let mut last = graph.last_use();
        for (i, node) in graph.nodes.iter().enumerate() {
            if self.runs_inside_next(i) {
                for t in node.op.inputs() {
                    last[t] = last[t].max(Some(i + 1));
                }
            }
        }
        last
    }
}

#[cfg(test)]
mod tests;
