//! [`KernelPolicy`]: which build of each kernel the exact route runs on a device, resolved once
//! when a network is created, never while recording. The GEMM, attention and normalisation
//! kernels have fast builds (the round-toward-zero f32 mode and native f16 arithmetic, where
//! the device offers them) and portable builds (exact float products and integer rounding,
//! every device); both give the same bytes.

use crate::gpu::{Capabilities, GpuError};
use crate::numerics::{Profile, Profiles};

use super::attention::NormalizeKernel;

/// Which builds a network may use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum KernelBuild {
    /// The fast builds wherever the device allows them.
    #[default]
    Fast,
    /// The portable builds everywhere (to measure them, or to check them on a device that
    /// has the fast modes).
    Portable,
}

/// The environment variable that asks for [`KernelBuild::Portable`].
pub const PORTABLE_KERNELS_ENV: &str = "OPENNGX_PORTABLE_KERNELS";

impl KernelBuild {
    /// `Portable` when `OPENNGX_PORTABLE_KERNELS=1`, else `Fast`. Read by whoever creates a
    /// network (the feature at creation, the tools at start), once.
    pub fn from_env() -> KernelBuild {
        if std::env::var(PORTABLE_KERNELS_ENV).is_ok_and(|v| v == "1") {
            KernelBuild::Portable
        } else {
            KernelBuild::Fast
        }
    }
}

/// [`KernelPolicy::with_ffn_rows_subgroups`]'s value that asks for the C = 32 and C = 64 FFNs
/// as `ffn_coopmat.glsl` (the 2 x 2 grid of subgroups over each row tile).
pub const FFN_GRID: u32 = u32::MAX;

/// The kernel builds of one network on one device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KernelPolicy {
    /// Kernels may run in the RTZ f32 mode beside native f16 arithmetic
    /// ([`Capabilities::rtz_kernels`]).
    rtz_mode: bool,
    /// Kernels may use native f16 arithmetic ([`Capabilities::native_f16`]).
    native_f16: bool,
    /// The FP8 GEMMs, the input adapter and the window and ViT attention run on the device's
    /// f16 cooperative matrices (`gemm_coopmat.comp`, `adapter_coopmat.comp`,
    /// `{window,vit}_attention_coopmat.comp`): set only by the tensor route, which checked the
    /// device and identified its profile.
    tensor_cores: bool,
    /// Window rows per workgroup of the cooperative-matrix window attention, 0 where the
    /// recorder chooses ([`window_rows_per_group`](super::attention::window_rows_per_group)).
    /// The bytes do not depend on it: the tests set it to run the loop on small levels.
    window_rows: u32,
    /// Row tiles per workgroup of the cooperative-matrix GEMMs that loop over row tiles (the
    /// seeded ones and those of one K step), 0 where the recorder chooses
    /// (`tiles_per_workgroup`). The bytes do not depend on it: the tests set it to run the loop
    /// on small GEMMs.
    gemm_tiles: u32,
    /// Subgroups down and across the cooperative-matrix GEMM's workgroup where the GEMM allows
    /// them, (0, 0) where the recorder chooses (`CoopmatTile::choose`). The bytes do not depend
    /// on it: the tests set it to run the larger workgroups on small GEMMs.
    gemm_subgroups: (u32, u32),
    /// Row tiles per workgroup of the fused FFN where W1 and W2 stay in shared memory over the
    /// tiles (C = 32 on either kernel, C = 64 on `ffn_rows_coopmat.glsl`); 0 where the recorder
    /// chooses. The bytes do not depend on it: the tests set it to run the loop on small
    /// inputs.
    ffn_tiles: u32,
    /// Subgroups per workgroup of the C = 32 and C = 64 FFNs whose subgroups run rows of their
    /// own (`ffn_rows_coopmat.glsl`); 0 where the recorder chooses
    /// (`gemm_ffn::ffn_rows_subgroups`). The bytes do not depend on it: the tests set it to run
    /// both kernels and several sizes.
    ffn_rows_subgroups: u32,
    /// The cooperative-matrix kernels run their builds under `shaders/emulated` instead: the
    /// same kernels with every MMA emulated in integer arithmetic as the H25 model
    /// (`tile_mma.glsl`), so devices without cooperative matrices (lavapipe) can check them byte
    /// for byte. For tests only: they are far slower than the device's builds.
    emulated_tiles: bool,
    /// The normalisation runs its subgroup layout ([`NormalizeKernel::Subgroup`]): the fast
    /// builds are allowed and the device's subgroups fit it.
    subgroup_normalize: bool,
}

impl KernelPolicy {
    /// The policy for a device with `caps` and the requested `build`.
    pub fn resolve(caps: &Capabilities, build: KernelBuild) -> KernelPolicy {
        let fast = build == KernelBuild::Fast;
        KernelPolicy {
            rtz_mode: fast && caps.rtz_kernels(),
            native_f16: fast && caps.native_f16(),
            tensor_cores: false,
            window_rows: 0,
            gemm_tiles: 0,
            gemm_subgroups: (0, 0),
            ffn_tiles: 0,
            ffn_rows_subgroups: 0,
            emulated_tiles: false,
            subgroup_normalize: fast && caps.native_f16() && NormalizeKernel::subgroups_fit(caps),
        }
    }

    /// This policy with the cooperative-matrix kernels (the tensor route's).
    pub fn with_tensor_cores(self) -> KernelPolicy {
        KernelPolicy {
            tensor_cores: true,
            ..self
        }
    }

    /// This policy with `rows` window rows per workgroup of the cooperative-matrix window
    /// attention (0: the recorder chooses).
    pub fn with_window_rows(self, rows: u32) -> KernelPolicy {
        KernelPolicy {
            window_rows: rows,
            ..self
        }
    }

    /// This policy with the cooperative-matrix kernels' emulated builds (tests on devices
    /// without cooperative matrices; the bytes are the device builds' in H25).
    pub fn with_emulated_tiles(self) -> KernelPolicy {
        KernelPolicy {
            tensor_cores: true,
            emulated_tiles: true,
            ..self
        }
    }

    /// `Ok` where the cooperative-matrix kernels run (device or emulated builds) and the FP8
    /// profile is their `h25`; else an error for `what` naming the profile and the kernels.
    pub fn require_tiles_h25(&self, what: &str, profiles: Profiles) -> Result<(), GpuError> {
        if self.tensor_cores && profiles.fp8 == Profile::H25 {
            return Ok(());
        }
        Err(GpuError::invalid(
            what.to_owned(),
            format!(
                "runs on the cooperative matrices in h25 only, not `{}` with {} kernels",
                profiles.fp8.name,
                self.describe()
            ),
        ))
    }

    /// Whether the cooperative-matrix kernels run their emulated builds.
    pub fn emulated_tiles(&self) -> bool {
        self.emulated_tiles
    }

    /// The build of the cooperative-matrix kernel `name` (`"nr/gemm_coopmat"`, ...) this policy
    /// runs: the device's, or with [`with_emulated_tiles`](Self::with_emulated_tiles) the build
    /// of the same body under `shaders/emulated`.
    pub fn tile_shader(&self, name: &str) -> String {
        match name.strip_prefix("nr/") {
            Some(base) if self.emulated_tiles => format!("emulated/{base}"),
            _ => name.to_owned(),
        }
    }

    /// This policy with `tiles` row tiles per workgroup of the cooperative-matrix GEMMs that
    /// loop over row tiles (0: the recorder chooses).
    pub fn with_gemm_tiles(self, tiles: u32) -> KernelPolicy {
        KernelPolicy {
            gemm_tiles: tiles,
            ..self
        }
    }

    /// This policy with `rows` x `cols` subgroups per cooperative-matrix GEMM workgroup wherever
    /// the GEMM's columns and the device's limits allow them ((0, 0): the recorder chooses).
    /// Only 2 and 4 each are built; other counts keep the recorder's tile
    /// (`CoopmatTile::choose`).
    pub fn with_gemm_subgroups(self, rows: u32, cols: u32) -> KernelPolicy {
        KernelPolicy {
            gemm_subgroups: (rows, cols),
            ..self
        }
    }

    /// This policy with `tiles` row tiles per workgroup of the fused FFN where its kernel keeps
    /// the weights over tiles (0: the recorder chooses).
    pub fn with_ffn_tiles(self, tiles: u32) -> KernelPolicy {
        KernelPolicy {
            ffn_tiles: tiles,
            ..self
        }
    }

    /// Row tiles per workgroup of the fused FFN, 0 where the recorder chooses.
    pub fn ffn_tiles(&self) -> u32 {
        self.ffn_tiles
    }

    /// This policy with the C = 32 and C = 64 FFNs as `ffn_rows_coopmat.glsl` with `subgroups`
    /// subgroups per workgroup (1 to 4), or as `ffn_coopmat.glsl` with [`FFN_GRID`] (0: the
    /// recorder chooses).
    pub fn with_ffn_rows_subgroups(self, subgroups: u32) -> KernelPolicy {
        KernelPolicy {
            ffn_rows_subgroups: subgroups,
            ..self
        }
    }

    /// The C = 32 and C = 64 FFNs' kernel the policy asks for ([`with_ffn_rows_subgroups`]), 0
    /// where the recorder chooses.
    ///
    /// [`with_ffn_rows_subgroups`]: KernelPolicy::with_ffn_rows_subgroups
    pub fn ffn_rows_subgroups(&self) -> u32 {
        self.ffn_rows_subgroups
    }

    /// The subgroups per cooperative-matrix GEMM workgroup the policy asks for, (0, 0) where
    /// the recorder chooses.
    pub fn gemm_subgroups(&self) -> (u32, u32) {
        self.gemm_subgroups
    }

    /// Row tiles per workgroup of the looping cooperative-matrix GEMMs, 0 where the recorder
    /// chooses.
    pub fn gemm_tiles(&self) -> u32 {
        self.gemm_tiles
    }

    /// Window rows per workgroup of the cooperative-matrix window attention, 0 where the
    /// recorder chooses.
    pub fn window_rows(&self) -> u32 {
        self.window_rows
    }

    /// Whether the GEMMs and the window and ViT attention run on cooperative matrices.
    pub fn tensor_cores(&self) -> bool {
        self.tensor_cores
    }

    /// The portable builds only (any device).
    pub const PORTABLE: KernelPolicy = KernelPolicy {
        rtz_mode: false,
        native_f16: false,
        tensor_cores: false,
        window_rows: 0,
        gemm_tiles: 0,
        gemm_subgroups: (0, 0),
        ffn_tiles: 0,
        ffn_rows_subgroups: 0,
        emulated_tiles: false,
        subgroup_normalize: false,
    };

    /// Whether a kernel that computes its MMA terms in the RTZ f32 mode may run for a profile
    /// with `frac_bits` fraction bits: the mode must be allowed and the profile F13-like
    /// (P = 13, which the one-FMA term trick needs).
    pub fn rtz_terms(&self, frac_bits: i32) -> bool {
        frac_bits == 13 && self.rtz_mode
    }

    /// Whether kernels may run in the RTZ f32 mode whatever the profile (the normalisation's
    /// fused squares use the fast form of `f16.glsl`).
    pub fn rtz_mode(&self) -> bool {
        self.rtz_mode
    }

    /// Whether kernels with an f16-native build may use it.
    pub fn native_f16(&self) -> bool {
        self.native_f16
    }

    /// The normalisation layout the network runs: the subgroup layout where the device's
    /// subgroups allow it, else the cooperative one where native f16 is allowed.
    pub fn normalize_kernel(&self) -> NormalizeKernel {
        if self.subgroup_normalize {
            NormalizeKernel::Subgroup
        } else if self.native_f16 {
            NormalizeKernel::Cooperative
        } else {
            NormalizeKernel::PerPart
        }
    }

    /// A short description for logs and tools (`"fast (rtz + native f16)"`, `"portable"`,
    /// `"coopmat GEMMs, adapter + window and ViT attention, fast (native f16)"`).
    pub fn describe(&self) -> String {
        let rest = match (self.rtz_mode, self.native_f16) {
            (true, _) => "fast (rtz + native f16)",
            (false, true) => "fast (native f16)",
            (false, false) => "portable",
        };
        if self.emulated_tiles {
            format!("emulated coopmat GEMMs, adapter + window and ViT attention (h25), {rest}")
        } else if self.tensor_cores {
            format!("coopmat GEMMs, adapter + window and ViT attention, {rest}")
        } else {
            rest.to_owned()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The emulated builds replace exactly the cooperative-matrix kernels' device builds, and
    /// only under `with_emulated_tiles`, which also turns the cooperative-matrix kernels on.
    #[test]
    fn emulated_tiles_pick_the_emulated_builds() {
        let device = KernelPolicy::PORTABLE.with_tensor_cores();
        let emulated = KernelPolicy::PORTABLE.with_emulated_tiles();
        assert!(emulated.tensor_cores() && emulated.emulated_tiles());
        assert!(!device.emulated_tiles());
        for name in [
            "nr/gemm_coopmat",
            "nr/ffn_coopmat",
            "nr/window_attention_coopmat_qkv",
        ] {
            assert_eq!(device.tile_shader(name), name);
            let base = name.trim_start_matches("nr/");
            assert_eq!(emulated.tile_shader(name), format!("emulated/{base}"));
        }
        assert!(emulated.describe().starts_with("emulated coopmat"));
        assert!(!device.describe().contains("emulated"));
    }

    /// The cooperative-matrix kernels run in h25 only, and only under a policy that has them.
    #[test]
    fn tile_kernels_require_h25_and_the_tensor_policy() {
        let emulated = KernelPolicy::PORTABLE.with_emulated_tiles();
        assert!(emulated.require_tiles_h25("gemm", Profiles::H25).is_ok());
        let e = emulated.require_tiles_h25("gemm", Profiles::NATIVE);
        assert!(e.is_err_and(|e| e.to_string().contains("h25 only")));
        let e = KernelPolicy::PORTABLE.require_tiles_h25("ffn", Profiles::H25);
        assert!(e.is_err_and(|e| e.to_string().contains("ffn")));
    }
}
