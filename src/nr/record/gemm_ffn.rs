//! The C = 32 window block's FFN as one kernel (`ffn_coopmat.comp`, the tensor route's
//! [`Fusion::Ffn`]): `ffn1` (h = E4(SiLU(W1 x)), 32 -> 128 channels) and `ffn2` (y = W2 h
//! seeded by f16(skip * scale), 128 -> 32) in one launch, h kept in the workgroup's shared
//! memory and never written. The same bytes as the two cooperative-matrix GEMMs one after the
//! other.
//!
//! [`Fusion::Ffn`]: crate::nr::route::Fusion::Ffn

use std::sync::Arc;

use crate::gpu::{
    BufferBinding, DescriptorArena, Dispatch, GpuContext, GpuError, PipelineDesc, SpecConstant,
};
use crate::nr::graph::{DType, Epilogue, InputMode};
use crate::numerics::{tables, Profiles};

use super::gemm::{align_down, GemmShape};
use super::{need, KernelPolicy};

/// Rows per workgroup of `ffn_coopmat.comp`.
const ROWS_PER_GROUP: usize = 64;

/// Shared memory `ffn_coopmat.glsl` takes per workgroup (`SHARED` words: h, the result tile,
/// and x with a W1 tile or W2 in the same place).
pub const FFN_SHARED_BYTES: u32 = 4 * (64 * 68 + 64 * 20 + 32 * 68);

/// What the fused FFN reads and writes: `x` `[rows][32]` (E4), the matrices `w1` `[128][32]`
/// and `w2` `[32][128]` (E4), `ffn2`'s seed (its skip `[rows][32]` and 32 scale halves), its
/// outputs (E4, and raw f16 for the dual epilogue) and [`tables::GEMM_EPILOGUE`].
#[derive(Clone, Copy, Debug)]
pub struct FfnBindings {
    pub x: BufferBinding,
    pub w1: BufferBinding,
    pub w2: BufferBinding,
    pub skip: BufferBinding,
    pub scale: BufferBinding,
    pub out: BufferBinding,
    pub out_raw: Option<BufferBinding>,
    pub table: BufferBinding,
}

fn invalid(detail: String) -> GpuError {
    GpuError::invalid("ffn".to_owned(), detail)
}

/// Whether the kernel computes the pair `s1` then `s2`: `s1` one unseeded chain of K = 32 over
/// a 32-channel shared input into 128 SiLU E4 columns, `s2` one seeded chain of K = 128 over
/// `s1`'s output into 32 columns, published E4 or dual, one group each.
pub fn computes(s1: &GemmShape, s2: &GemmShape) -> bool {
    s1.epilogue == Epilogue::SiluE4
        && s1.seed.is_none()
        && s1.partitions() == 1
        && s1.groups == 1
        && s1.mode == InputMode::Shared
        && (s1.cin, s1.k, s1.n) == (32, 32, 128)
        && matches!(s2.epilogue, Epilogue::E4 | Epilogue::Dual)
        && matches!(s2.seed, Some(DType::E4 | DType::F16))
        && s2.partitions() == 1
        && s2.groups == 1
        && s2.mode == InputMode::Shared
        && (s2.cin, s2.k, s2.n) == (128, 128, 32)
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
            "{s1:?} then {s2:?}: needs a 32 -> 128 SiLU E4 GEMM then a seeded 128 -> 32 one, \
             one chain and one group each, over the same rows"
        )));
    }
    let rows = s1.rows as u64;
    need("ffn x", &b.x, rows * 32)?;
    need("ffn w1", &b.w1, 128 * 32)?;
    need("ffn w2", &b.w2, 32 * 128)?;
    let skip_size = s2.seed.map_or(1, |d| d.size()) as u64;
    need("ffn skip", &b.skip, rows * 32 * skip_size)?;
    need("ffn scale", &b.scale, 32 * 2)?;
    need("ffn output", &b.out, rows * 32)?;
    need(
        "ffn epilogue table",
        &b.table,
        tables::GEMM_EPILOGUE.len() as u64,
    )?;
    let raw = match (s2.epilogue, b.out_raw) {
        (Epilogue::Dual, Some(r)) => {
            need("ffn raw output", &r, rows * 32 * 2)?;
            r
        }
        (Epilogue::Dual, None) => {
            return Err(invalid("the dual epilogue needs a raw output".into()));
        }
        // Never written by the E4 epilogue.
        _ => b.out,
    };
    let (scale, skew) = align_down(ctx, b.scale);
    if skew % 2 != 0 {
        return Err(invalid(format!(
            "scale offset {} is not a multiple of 2",
            scale.offset + skew
        )));
    }
    let rows32 = u32::try_from(rows).map_err(|_| invalid(format!("{rows} rows")))?;
    let groups = u32::try_from(s1.rows.div_ceil(ROWS_PER_GROUP))
        .map_err(|_| invalid(format!("{rows} rows")))?;
    let epi = if s2.epilogue == Epilogue::Dual { 3 } else { 1 };
    let seed = if s2.seed == Some(DType::E4) { 1 } else { 2 };
    let pipeline = ctx.pipeline(
        &PipelineDesc::new(&policy.tile_shader("nr/ffn_coopmat"), 8, 8)
            .with_spec(SpecConstant::u32(4, epi))
            .with_spec(SpecConstant::u32(5, seed)),
    )?;
    let set = arena.allocate(
        &pipeline,
        &[b.x, b.w1, b.w2, b.skip, scale, b.out, raw, b.table],
    )?;
    let push = [rows32, (skew / 2) as u32]
        .iter()
        .flat_map(|x| x.to_ne_bytes())
        .collect();
    Ok(Dispatch {
        pipeline,
        set,
        push,
        groups: [groups, 1, 1],
        then: None,
    })
}
