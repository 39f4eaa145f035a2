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
use crate::numerics::Profile;

/// The MMA profiles of one run: FP8 GEMMs (and attention MMAs) and f16 GEMMs (adapter, head).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Profiles {
    pub name: &'static str,
    pub fp8: Profile,
    pub f16: Profile,
}

impl Profiles {
    /// NVIDIA's native DLSS-NR numerics: F13 for FP8, F24 for f16.
    pub const NATIVE: Profiles = Profiles {
        name: "f13",
        fp8: Profile::F13,
        f16: Profile::F24,
    };
    /// The H200's tensor cores through Vulkan: H25 (groups of 16) for both.
    pub const H25: Profiles = Profiles {
        name: "h25",
        fp8: Profile::H25,
        f16: Profile::H25,
    };

    /// Look a profile up by name (`f13`/`native`, `h25`).
    pub fn by_name(name: &str) -> Option<Profiles> {
        match name {
            "f13" | "f24" | "native" => Some(Self::NATIVE),
            "h25" => Some(Self::H25),
            _ => None,
        }
    }
}

/// What a whole-network run publishes.
#[derive(Clone, Debug)]
pub struct Output {
    /// The 75 boundaries in graph order: name and E4 bytes `[level rows][C]`.
    pub boundaries: Vec<(String, Vec<u8>)>,
    /// The head, f32 `[field rows][4]`.
    pub head: Vec<f32>,
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
