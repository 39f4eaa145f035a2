//! [`Fusions`]: which nodes of a schedule run inside the kernel of the node after them. A route
//! names the pairs and longer chains it can run as one kernel (`nr::route::chain`); the
//! recorder fuses a chain only where that is invisible to everyone else, link by link:
//!
//! * nothing but the second node reads the first node's outputs, and none of them is kept (a
//!   fused node's outputs are never written: `verify`'s `Keep::All` fuses nothing);
//! * both run in the same launches: each in one launch outside strips, or both in the same strip
//!   (band `k` of the second then reads the rows band `k` of the first would have read);
//! * no output of the chain's last node takes the bytes of an input of the nodes before it
//!   (`Strips::alias`).
//!
//! Where a link fails, nothing of the chain is fused (the route has no kernel for a part of it).
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
        // Whether node `j` may run inside node `j + 1` as far as the schedule can tell.
        let link = |j: usize| {
            let private = graph.nodes[j]
                .op
                .outputs()
                .iter()
                .all(|&t| !kept.contains(&t) && readers[t].iter().all(|&r| r == j + 1));
            let launches = match (strips.of_node[j], strips.of_node[j + 1]) {
                (Some(a), Some(b)) => a == b,
                (None, None) => bands[j].len() == 1 && bands[j + 1].len() == 1,
                _ => false,
            };
            private && launches
        };
        let mut into_next = vec![false; n];
        let mut i = 0;
        while fusion != Fusion::Off && i + 1 < n {
            let len = route::chain(route, fusion, graph, i).clamp(1, n - i);
            let last = i + len - 1;
            // No output of the chain's kernel may take the bytes of an input of a node it runs.
            let no_alias = graph.nodes[last].op.outputs().iter().all(|&o| {
                let root = strips.root(o);
                graph.nodes[i..last]
                    .iter()
                    .flat_map(|node| node.op.inputs())
                    .all(|t| strips.root(t) != root)
            });
            if len >= 2 && no_alias && (i..last).all(link) {
                into_next[i..last].fill(true);
                i = last + 1;
            } else {
                i += 1;
            }
        }
        Fusions { into_next }
    }

    /// Whether node `i` runs inside node `i + 1`.
    pub fn runs_inside_next(&self, i: usize) -> bool {
        self.into_next.get(i).copied().unwrap_or(false)
    }

    /// The first node of the chain that runs inside node `i` (`i` itself when none does): the
    /// nodes `chain_start(i) .. i` run in node `i`'s launches, in order.
    pub fn chain_start(&self, i: usize) -> usize {
        let mut start = i;
        while start > 0 && self.runs_inside_next(start - 1) {
            start -= 1;
        }
        start
    }

    /// The node whose launches run node `i` (`i` itself unless it runs inside another).
    pub fn chain_end(&self, i: usize) -> usize {
        let mut end = i;
        while self.runs_inside_next(end) {
            end += 1;
        }
        end
    }

    /// How many nodes run inside another.
    pub fn count(&self) -> usize {
        self.into_next.iter().filter(|&&f| f).count()
    }

    /// A fused link that `range` (of nodes) cuts, as `(first, second)`: recording one without
    /// the other would lose the first's work.
    pub fn cut_by(&self, range: &std::ops::Range<usize>) -> Option<(usize, usize)> {
        let cut = |i: usize| i > 0 && self.runs_inside_next(i - 1);
        [range.start, range.end]
            .into_iter()
            .find(|&i| cut(i))
            .map(|i| (i - 1, i))
    }

    /// `graph.last_use()` with every fused node's inputs read by the node whose launches run it.
    pub fn last_use(&self, graph: &Graph) -> Vec<Option<usize>> {
        let mut last = graph.last_use();
        for (i, node) in graph.nodes.iter().enumerate() {
            if self.runs_inside_next(i) {
                let end = self.chain_end(i);
                for t in node.op.inputs() {
                    last[t] = last[t].max(Some(end));
                }
            }
        }
        last
    }
}

#[cfg(test)]
mod tests;
