//! The CPU reference: executes every op of `nr::graph` exactly with `numerics`.
//!
//! It is the oracle every GPU route is compared against byte for byte. Work is spread over both
//! cores with rayon; every output element is computed independently, so results do not depend on
//! the thread count. The MMA profile is a parameter of the run (`native` = F13/F24, `h25`).

mod attention;
mod exec;
mod weights;

pub use exec::{Executor, ReferenceError, TensorData};
pub use weights::Weights;

use crate::model::Model;
use crate::nr::graph::Graph;
use crate::numerics::Profiles;

/// What a whole-network run publishes.
#[derive(Clone, Debug)]
pub struct Output {
    /// The 75 boundaries in graph order: name and E4 bytes `[level rows][C]`.
    pub boundaries: Vec<(String, Vec<u8>)>,
    /// The head, f32 `[field rows][4]`.
    pub head: Vec<f32>,
}

/// Run the first `nodes` nodes of the schedule on `features` (f32 `[field rows][16]`): the
/// boundaries they publish, in graph order (a partial evaluation, e.g. the first blocks of a
/// large frame, `bench --blocks N --check`).
pub fn run_prefix(
    graph: &Graph,
    model: &Model,
    features: &[f32],
    profiles: Profiles,
    nodes: usize,
) -> Result<Vec<(String, Vec<u8>)>, exec::ReferenceError> {
    let weights = Weights::new(model);
    let mut ex = Executor::new(graph, &weights, profiles);
    ex.set_features(features)?;
    for _ in 0..nodes.min(graph.nodes.len()) {
        ex.step()?;
    }
    Ok(ex.boundaries().to_vec())
}

/// Run the whole network on `features` (f32 `[field rows][16]`).
pub fn run(
    graph: &Graph,
    model: &Model,
    features: &[f32],
    profiles: Profiles,
) -> Result<Output, exec::ReferenceError> {
    let weights = Weights::new(model);
    let mut ex = Executor::new(graph, &weights, profiles);
    ex.set_features(features)?;
    ex.run_all()?;
    if std::env::var_os("OPENNGX_REFERENCE_TIMES").is_some() {
        for (kind, s) in &ex.seconds {
            eprintln!("reference: {kind:>16} {s:8.2} s");
        }
    }
    ex.into_output()
}
