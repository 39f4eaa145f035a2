//! A window block's FFN input pair as one kernel (`ffn_coopmat.comp`, the tensor route's
//! [`Fusion::Ffn`]): `ffn1` (h = E4(SiLU(W1 x)), C -> 128 channels per expert) and `ffn2`
//! (y = W2 h, 128 -> 32 per expert) in one launch, h kept in the workgroup's shared memory and
//! never written. A C = 32 block has one expert and a seeded, dual `ffn2`; a C >= 64 block has
//! C / 32 experts, one per row of workgroups, and an unseeded E4 `ffn2` (its `ffn3` stays a
//! GEMM of its own). The same bytes as the two cooperative-matrix GEMMs one after the other.
//!
//! Two kernels: `ffn_rows_coopmat.comp` for C = 32 and C = 64 (each subgroup runs 16 rows of
//! its own with all of its expert's h, the epilogue in registers, W1 and W2 staged once per
//! workgroup for several row tiles: copied from the weights' f16 copy where one is bound
//! ([`reads_widened`]), else widened from E4M3), the recorder's choice there since it measured
//! faster;
//! `ffn_coopmat.comp` for the larger expert blocks, and where the policy asks for it or the
//! device's shared memory is too small.
//!
//! [`Fusion::Ffn`]: crate::nr::route::Fusion::Ffn

use std::sync::Arc;

use crate::gpu::{
    BufferBinding, DescriptorArena, Dispatch, GpuContext, GpuError, PipelineDesc, SpecConstant,
};
use crate::nr::graph::{DType, Epilogue, InputMode};
use crate::numerics::{tables, Profiles};

use super::gemm::{align_down, GemmShape};
use super::policy::FFN_GRID;
use super::{need, KernelPolicy};

/// Rows per workgroup of `ffn_coopmat.comp` (its constant `BM`, a multiple of 32; the tests
/// cover 32, the value built here). 32 rather than 64: half the accumulators and shared
/// memory, so more workgroups per SM (76-102 registers, 21,504 bytes); on an H100 the 1080p
/// frame took 39.82 ms with 32 against 42.00 with 64 and 41.34 unfused (docs/performance.md).
const ROWS_PER_GROUP: u32 = 32;

/// Shared memory `ffn_coopmat.glsl` takes per workgroup (`SHARED` words: h, x's step or the
/// seed and result, W1's step or W2).
pub const FFN_SHARED_BYTES: u32 = 4 * (ROWS_PER_GROUP * 68 + ROWS_PER_GROUP * 20 + 128 * 20);

/// The same where the workgroup keeps W1 and W2 over its row tiles (`PERSIST`: W2 has a place
/// of its own, 32 columns x 68 words).
pub const FFN_PERSISTENT_SHARED_BYTES: u32 = FFN_SHARED_BYTES + 4 * 32 * 68;

/// Row tiles per workgroup of the fused FFN with `cin` input channels under `policy`: the
/// policy's where it names them, else 1; always 1 where W1 is more than one step of 32 K
/// (C >= 64: it cannot stay in shared memory) or the device lacks the shared memory. One is
/// the recorder's choice because it was measured fastest: on an H100 at 1080p the frame took
/// 32.80 ms with 1, 34.15 with 4, 34.90 with 16 and 38.64 with 64 (docs/performance.md,
/// session 26).
fn ffn_tiles_per_workgroup(policy: KernelPolicy, cin: u64, shared: u32) -> u32 {
    if cin != 32 || shared < FFN_PERSISTENT_SHARED_BYTES {
        return 1;
    }
    policy.ffn_tiles().max(1)
}

/// Whether the weights keep the matrices of the fused FFN whose `ffn1` is `s1` widened to f16
/// for it: those `ffn_rows_coopmat.glsl` runs (C = 32 with one expert, C = 64 with two), whose
/// workgroups then copy them into shared memory instead of widening them.
pub fn reads_widened(s1: &GemmShape) -> bool {
    matches!((s1.k, s1.groups), (32, 1) | (64, 2))
}

/// Shared memory `ffn_rows_coopmat.glsl` takes per workgroup with `cin` input channels and
/// `subgroups` subgroups: W1 and W2 widened (128 x (cin / 2 + 4) and 32 x 68 words) and a
/// region of 16 x 68 words per subgroup.
pub const fn ffn_rows_shared_bytes(cin: u32, subgroups: u32) -> u32 {
    4 * (128 * (cin / 2 + 4) + 32 * 68 + subgroups * 16 * 68)
}

/// The most subgroups per workgroup `ffn_rows_coopmat.glsl` runs (36,352 bytes of shared
/// memory at C = 32, 44,544 at C = 64).
pub const FFN_ROWS_MAX_SUBGROUPS: u32 = 4;

/// Subgroups per workgroup of the FFN as `ffn_rows_coopmat.glsl` (each subgroup on rows of its
/// own), or `None` for `ffn_coopmat.glsl`: only C = 32 (one expert) and C = 64 (two experts;
/// the kernel's subgroup region holds x beside the seed for at most 64 channels); the policy's
/// count where it names one ([`FFN_GRID`]: the other kernel), else the recorder's for that C;
/// fewer where the device's shared memory asks for it.
pub fn ffn_rows_subgroups(
    policy: KernelPolicy,
    cin: u64,
    experts: u64,
    shared: u32,
) -> Option<u32> {
    let default = match (cin, experts) {
        (32, 1) => FFN_ROWS_DEFAULT_SUBGROUPS_C32,
        (64, 2) => FFN_ROWS_DEFAULT_SUBGROUPS_C64,
        _ => return None,
    };
    let want = match policy.ffn_rows_subgroups() {
        FFN_GRID => return None,
        0 => default?,
        n => n.min(FFN_ROWS_MAX_SUBGROUPS),
    };
    let cin = cin as u32; // 32 or 64
    (1..=want)
        .rev()
        .find(|&n| ffn_rows_shared_bytes(cin, n) <= shared)
}

/// The recorder's choice for C = 32: `ffn_rows_coopmat.glsl` with 4 subgroups. Measured on an
/// H100 (docs/performance.md, session 27): the C = 32 FFNs at the first level took 1.37 ms a
/// frame at 1080p against 2.01 with `ffn_coopmat.glsl`; with 2 or 3 subgroups the frame was
/// slower than with 4 (34.34 and 32.92 ms against 32.23).
const FFN_ROWS_DEFAULT_SUBGROUPS_C32: Option<u32> = Some(4);

/// The recorder's choice for C = 64 (two experts): `ffn_rows_coopmat.glsl` with 4 subgroups.
/// Measured on an H100 (docs/performance.md, session 28): the first expert level's FFNs took
/// 1.07 ms a frame at 1080p against 1.14 with `ffn_coopmat.glsl`.
const FFN_ROWS_DEFAULT_SUBGROUPS_C64: Option<u32> = Some(4);

/// Row tiles (of 16 rows per subgroup) per workgroup of `ffn_rows_coopmat.glsl` over `tiles`
/// (an expert's): the policy's where it names them, else as many as make about
/// [`FFN_ROWS_GRID`] workgroups per expert, from 1 to 16. More tiles per workgroup share the
/// widening of W1 and W2; too many leave SMs idle.
fn ffn_rows_tiles_per_workgroup(policy: KernelPolicy, tiles: u32) -> u32 {
    match policy.ffn_tiles() {
        0 => tiles.div_ceil(FFN_ROWS_GRID).clamp(1, 16),
        n => n,
    }
}

/// The workgroups per expert `ffn_rows_tiles_per_workgroup` aims at: five per SM of an H100
/// (132 SMs; 105-111 registers a lane let four run on an SM at once). Measured on an H100
/// with this kernel at C = 32 and 64 (docs/performance.md, session 28): at 1080p the frame took
/// 31.77 ms with it, 31.87 with 4 tiles per workgroup everywhere, 31.89 with 8, 31.93 with
/// 1320 workgroups and 32.37 with one tile per 2048 (the rule before); at 4K 105.12, 105.30,
/// 105.20 and 105.92.
const FFN_ROWS_GRID: u32 = 660;

/// What the fused FFN reads and writes: `x` `[rows][C]` (E4), the matrices `w1`
/// `[experts][128][C]` and `w2` `[experts][32][128]` (E4) and, where the weights keep them
/// ([`reads_widened`]), the same widened to f16, `ffn2`'s seed if it has one (its skip
/// `[rows][32]` and 32 scale halves; `None` binds nothing), its outputs `[rows][32 experts]`
/// (E4, and raw f16 for the dual epilogue) and [`tables::GEMM_EPILOGUE`].
#[derive(Clone, Copy, Debug)]
pub struct FfnBindings {
    pub x: BufferBinding,
    pub w1: BufferBinding,
    pub w2: BufferBinding,
    pub widened: Option<WidenedBindings>,
    pub seed: Option<SeedBindings>,
    pub out: BufferBinding,
    pub out_raw: Option<BufferBinding>,
    pub table: BufferBinding,
}

/// W1 and W2 widened to f16 (`[experts][128][C]` and `[experts][32][128]` halves).
#[derive(Clone, Copy, Debug)]
pub struct WidenedBindings {
    pub w1: BufferBinding,
    pub w2: BufferBinding,
}

/// The seed of `ffn2`: its skip tensor and scale halves.
#[derive(Clone, Copy, Debug)]
pub struct SeedBindings {
    pub skip: BufferBinding,
    pub scale: BufferBinding,
}

fn invalid(detail: String) -> GpuError {
    GpuError::invalid("ffn".to_owned(), detail)
}

/// Whether the kernel computes the pair `s1` then `s2`: `s1` one unseeded chain of K = C (a
/// multiple of 32) over the whole C-channel input into 128 SiLU E4 columns per group, `s2` one
/// chain of K = 128 over its group's 128 channels of `s1`'s output into 32 columns per group,
/// from +0 or seeded, published E4 or dual. A seed or the dual epilogue only with one group (the
/// C = 32 blocks'; the kernel's seed reads one group's 32 channels of the skip).
pub fn computes(s1: &GemmShape, s2: &GemmShape) -> bool {
    let groups = s1.groups;
    let one_group_only = s2.seed.is_some() || s2.epilogue == Epilogue::Dual;
    s1.epilogue == Epilogue::SiluE4
        && s1.seed.is_none()
        && s1.partitions() == 1
        && s1.mode == InputMode::Shared
        && s1.cin == s1.k
        && s1.k % 32 == 0
        && s1.k > 0
        && s1.n == 128
        && groups >= 1
        && matches!(s2.epilogue, Epilogue::E4 | Epilogue::Dual)
        && matches!(s2.seed, None | Some(DType::E4 | DType::F16))
        && !(one_group_only && groups != 1)
        && s2.partitions() == 1
        && s2.groups == groups
        && (s2.mode == InputMode::Split || groups == 1 && s2.mode == InputMode::Shared)
        && (s2.cin, s2.k, s2.n) == (128 * groups, 128, 32)
        && s1.rows == s2.rows
}

/// Prepare the fused FFN of `s1` (`ffn1`) and `s2` (`ffn2`) over their rows. Refuses what the
/// kernel does not compute ([`computes`]), another policy or profile than the cooperative
/// matrices' `h25`, and bindings too small for the shapes.
pub fn prepare_ffn(
    ctx: &Arc<GpuContext>,
    arena: &mut DescriptorArena,
    policy: KernelPolicy,
    profiles: Profiles,
    s1: &GemmShape,
    s2: &GemmShape,
    b: &FfnBindings,
) -> Result<Dispatch, GpuError> {
    policy.require_tiles_h25("ffn", profiles)?;
    let shared = ctx.capabilities().max_compute_shared_memory_size;
    if shared < FFN_SHARED_BYTES {
        return Err(invalid(format!(
            "needs {FFN_SHARED_BYTES} bytes of shared memory per workgroup; the device has \
             {shared} (maxComputeSharedMemorySize)"
        )));
    }
    if !computes(s1, s2) || s1.rows == 0 {
        return Err(invalid(format!(
            "{s1:?} then {s2:?}: needs a C -> 128 SiLU E4 GEMM per expert then a 128 -> 32 one \
             reading it, one chain each, over the same rows (a seed or two outputs with one \
             expert only)"
        )));
    }
    let (rows, cin, experts) = (s1.rows as u64, s1.k as u64, s1.groups as u64);
    let yc = 32 * experts;
    need("ffn x", &b.x, rows * cin)?;
    need("ffn w1", &b.w1, experts * 128 * cin)?;
    need("ffn w2", &b.w2, experts * 32 * 128)?;
    if let Some(wide) = &b.widened {
        need("ffn widened w1", &wide.w1, experts * 128 * cin * 2)?;
        need("ffn widened w2", &wide.w2, experts * 32 * 128 * 2)?;
    }
    need("ffn output", &b.out, rows * yc)?;
    need(
        "ffn epilogue table",
        &b.table,
        tables::GEMM_EPILOGUE.len() as u64,
    )?;
    let raw = match (s2.epilogue, b.out_raw) {
        (Epilogue::Dual, Some(r)) => {
            need("ffn raw output", &r, rows * yc * 2)?;
            r
        }
        (Epilogue::Dual, None) => {
            return Err(invalid("the dual epilogue needs a raw output".into()));
        }
        // Never written by the E4 epilogue.
        _ => b.out,
    };
    // Without a seed the kernel reads neither binding: the output stands in for both.
    let (skip, scale, scale_at) = match (s2.seed, b.seed) {
        (Some(dtype), Some(seed)) => {
            need("ffn skip", &seed.skip, rows * yc * dtype.size() as u64)?;
            need("ffn scale", &seed.scale, yc * 2)?;
            let (scale, skew) = align_down(ctx, seed.scale);
            if skew % 2 != 0 {
                return Err(invalid(format!(
                    "scale offset {} is not a multiple of 2",
                    scale.offset + skew
                )));
            }
            (seed.skip, scale, skew / 2)
        }
        (None, None) => (b.out, b.out, 0),
        (Some(_), None) => return Err(invalid("the seeded ffn2 needs its skip and scale".into())),
        (None, Some(_)) => return Err(invalid("a skip and scale for an unseeded ffn2".into())),
    };
    let rows32 = u32::try_from(rows).map_err(|_| invalid(format!("{rows} rows")))?;
    let epi = if s2.epilogue == Epilogue::Dual { 3 } else { 1 };
    let seed = match s2.seed {
        None => 0,
        Some(DType::E4) => 1,
        Some(_) => 2,
    };
    let push: Vec<u8> = [rows32, scale_at as u32]
        .iter()
        .flat_map(|x| x.to_ne_bytes())
        .collect();
    let bound = [b.x, b.w1, b.w2, skip, scale, b.out, raw, b.table];
    let experts32 = u32::try_from(experts).map_err(|_| invalid(format!("{experts} experts")))?;
    let cin32 = u32::try_from(cin).map_err(|_| invalid(format!("{cin} channels")))?;
    if let Some(subgroups) = ffn_rows_subgroups(policy, cin, experts, shared) {
        let tiles = rows32.div_ceil(16 * subgroups);
        let widened = b.widened.filter(|_| reads_widened(s1));
        let pipeline = ctx.pipeline(
            &PipelineDesc::new(&policy.tile_shader("nr/ffn_rows_coopmat"), 8, 8)
                .with_spec(SpecConstant::u32(4, epi))
                .with_spec(SpecConstant::u32(5, seed))
                .with_spec(SpecConstant::u32(6, cin32))
                .with_spec(SpecConstant::u32(9, subgroups))
                .with_spec(SpecConstant::u32(10, u32::from(widened.is_some())))
                .with_spec(SpecConstant::u32(11, 32 * subgroups)),
        )?;
        // The widened matrices take the E4M3 ones' bindings.
        let bound = match widened {
            Some(wide) => [b.x, wide.w1, wide.w2, skip, scale, b.out, raw, b.table],
            None => bound,
        };
        let set = arena.allocate(&pipeline, &bound)?;
        return Ok(Dispatch {
            pipeline,
            set,
            push,
            groups: [
                tiles.div_ceil(ffn_rows_tiles_per_workgroup(policy, tiles)),
                experts32,
                1,
            ],
            then: None,
        });
    }
    let row_tiles = u32::try_from(s1.rows.div_ceil(ROWS_PER_GROUP as usize))
        .map_err(|_| invalid(format!("{rows} rows")))?;
    let per_workgroup = ffn_tiles_per_workgroup(policy, cin, shared);
    let groups = row_tiles.div_ceil(per_workgroup);
    let pipeline = ctx.pipeline(
        &PipelineDesc::new(&policy.tile_shader("nr/ffn_coopmat"), 8, 8)
            .with_spec(SpecConstant::u32(4, epi))
            .with_spec(SpecConstant::u32(5, seed))
            .with_spec(SpecConstant::u32(6, cin32))
            .with_spec(SpecConstant::u32(7, ROWS_PER_GROUP))
            .with_spec(SpecConstant::u32(8, u32::from(per_workgroup > 1))),
    )?;
    let set = arena.allocate(&pipeline, &bound)?;
    Ok(Dispatch {
        pipeline,
        set,
        push,
        groups: [groups, experts32, 1],
        then: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// C = 32 and C = 64 take `ffn_rows_coopmat.glsl` with 4 subgroups where the shared
    /// memory allows (3 and 1 in lavapipe's 32 KiB), the other kernel where the policy asks for
    /// it, for more experts, or where not even one subgroup fits; the policy's count is capped
    /// at 4.
    #[test]
    fn the_ffn_rows_kernel_follows_the_policy_and_the_shared_memory() {
        let tensor = KernelPolicy::PORTABLE.with_emulated_tiles();
        let (h100, lavapipe) = (49_152, 32_768);
        assert_eq!(ffn_rows_shared_bytes(32, 4), 36_352);
        assert_eq!(ffn_rows_shared_bytes(32, 2), 27_648);
        assert_eq!(ffn_rows_shared_bytes(64, 4), 44_544);
        assert_eq!(ffn_rows_shared_bytes(64, 1), 31_488);
        assert_eq!(ffn_rows_subgroups(tensor, 32, 1, h100), Some(4));
        assert_eq!(ffn_rows_subgroups(tensor, 32, 1, lavapipe), Some(3));
        assert_eq!(ffn_rows_subgroups(tensor, 64, 2, h100), Some(4));
        assert_eq!(ffn_rows_subgroups(tensor, 64, 2, lavapipe), Some(1));
        for cin in [32, 64] {
            let experts = cin / 32;
            let none_fit = ffn_rows_shared_bytes(cin as u32, 1) - 1;
            assert_eq!(ffn_rows_subgroups(tensor, cin, experts, none_fit), None);
        }
        // The expert levels beyond C = 64 and shapes the recorder never builds.
        assert_eq!(ffn_rows_subgroups(tensor, 128, 4, h100), None);
        assert_eq!(ffn_rows_subgroups(tensor, 64, 1, h100), None);
        let grid = tensor.with_ffn_rows_subgroups(FFN_GRID);
        assert_eq!(ffn_rows_subgroups(grid, 32, 1, h100), None);
        assert_eq!(ffn_rows_subgroups(grid, 64, 2, h100), None);
        assert_eq!(
            ffn_rows_subgroups(tensor.with_ffn_rows_subgroups(2), 64, 2, h100),
            Some(2)
        );
        assert_eq!(
            ffn_rows_subgroups(tensor.with_ffn_rows_subgroups(9), 32, 1, h100),
            Some(4)
        );
    }

    /// About 660 workgroups: one row tile each up to 660 tiles, then more, at most 16, unless
    /// the policy names a count.
    #[test]
    fn the_ffn_rows_tiles_per_workgroup() {
        let tensor = KernelPolicy::PORTABLE.with_emulated_tiles();
        for (tiles, want) in [
            (1, 1),
            (660, 1),
            (661, 2),
            (1320, 2),
            (8640, 14),
            (10_560, 16),
            (99_999, 16),
        ] {
            assert_eq!(
                ffn_rows_tiles_per_workgroup(tensor, tiles),
                want,
                "{tiles} tiles"
            );
        }
        assert_eq!(
            ffn_rows_tiles_per_workgroup(tensor.with_ffn_tiles(3), 8640),
            3
        );
    }
}
