//! The MMA profiles of one network run: which [`Profile`] the FP8 GEMMs (and attention MMAs) follow
//! and which the f16 GEMMs (adapter, head) follow, under one name. Both executors, the CPU
//! reference and the GPU recorder, take their arithmetic from this pair.

use super::mma::Profile;

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
