//! The QKV GEMM of a window block with the window normalisation as its epilogue
//! (`gemm_coopmat_norm.comp`, the tensor route's [`Fusion::NormInGemm`]): the f16 QKV stays in
//! the workgroup's shared memory and only the E4 q', k', v' are written. The same bytes as the
//! cooperative-matrix GEMM with the f16 epilogue followed by `Op::Normalize`.
//!
//! [`Fusion::NormInGemm`]: crate::nr::route::Fusion::NormInGemm

use std::sync::Arc;

use crate::gpu::{
    BufferBinding, DescriptorArena, Dispatch, GpuContext, GpuError, PipelineDesc, SpecConstant,
};
use crate::nr::graph::Epilogue;
use crate::numerics::{tables, Profiles};

use super::attention::NormalizeKernel;
use super::elementwise::bind_aligned;
use super::gemm::{GemmShape, MIN_ROWS_PER_GROUP};
use super::{need, KernelPolicy};

/// The normalisation's side of the fused launch: its E4 outputs `[rows][32 * heads]` (each on a
/// multiple of 4 bytes), the heads' f32 temperatures and [`tables::NORMALIZE`].
#[derive(Clone, Copy, Debug)]
pub struct NormOutputs {
    pub q: BufferBinding,
    pub k: BufferBinding,
    pub v: BufferBinding,
    pub temperatures: BufferBinding,
    pub table: BufferBinding,
    pub heads: u32,
}

fn invalid(detail: String) -> GpuError {
    GpuError::invalid("gemm + normalize".to_owned(), detail)
}

/// Prepare the QKV GEMM `s` (E4 `input` `[rows][cin]`, `matrix` `[n][k]`) with the window
/// normalisation of its f16 result into `norm`'s outputs. Refuses what the kernel does not
/// compute: another policy or profile than the cooperative matrices' `h25`, a seed, split-K,
/// several groups, an E4 epilogue, N other than `96 * heads`, or a device whose subgroups do
/// not fit the epilogue's groups of eight lanes ([`NormalizeKernel::subgroups_fit`]).
#[allow(clippy::too_many_arguments)]
pub fn prepare_gemm_norm(
    ctx: &Arc<GpuContext>,
    arena: &mut DescriptorArena,
    policy: KernelPolicy,
    profiles: Profiles,
    s: &GemmShape,
    input: BufferBinding,
    matrix: BufferBinding,
    norm: &NormOutputs,
) -> Result<Dispatch, GpuError> {
    policy.require_tiles_h25("gemm + normalize", profiles)?;
    let caps = ctx.capabilities();
    if !NormalizeKernel::subgroups_fit(caps) {
        return Err(invalid(format!(
            "the epilogue runs each unit on an aligned group of eight lanes: it needs subgroups \
             of 8 to 128 lanes with shuffles (the device has {} lanes, shuffles {})",
            caps.subgroup_size, caps.subgroup_shuffles
        )));
    }
    let heads = norm.heads as usize;
    if s.epilogue != Epilogue::F16
        || s.seed.is_some()
        || s.partitions() != 1
        || s.groups != 1
        || heads == 0
        || s.n != 96 * heads
        || s.k == 0
        || s.k % 16 != 0
        || s.rows == 0
        || s.cin % 16 != 0
        || s.cin < s.k
    {
        return Err(invalid(format!(
            "{s:?} with {heads} heads: needs one f16 chain without seed or groups, N = 96 x \
             heads, K a multiple of 16 within the input's channels"
        )));
    }
    need("gemm input", &input, (s.rows * s.cin) as u64)?;
    need("gemm matrix", &matrix, (s.n * s.k) as u64)?;
    need(
        "normalize table",
        &norm.table,
        tables::NORMALIZE.len() as u64,
    )?;
    let c = (s.rows * 32 * heads) as u64;
    let (q, q_off) = bind_aligned(ctx, "normalize q", norm.q, c, 4)?;
    let (k, k_off) = bind_aligned(ctx, "normalize k", norm.k, c, 4)?;
    let (v, v_off) = bind_aligned(ctx, "normalize v", norm.v, c, 4)?;
    let (temps, t_off) = bind_aligned(
        ctx,
        "normalize temperatures",
        norm.temperatures,
        4 * heads as u64,
        1,
    )?;
    let bn = if s.n % 64 == 0 { 64 } else { 32 };
    let push: Vec<u8> = [
        s.rows as u32,
        s.cin as u32,
        s.k as u32,
        s.n as u32,
        s.n as u32,
        0, // astride: one group
        s.k as u32,
        0, // scale offset: no seed
        2, // the f16 epilogue (EPI), here in shared memory only
        0, // no seed
        norm.heads,
        q_off,
        k_off,
        v_off,
        t_off,
    ]
    .iter()
    .flat_map(|x| x.to_ne_bytes())
    .collect();
    let pipeline = ctx.pipeline(
        &PipelineDesc::new(
            &policy.tile_shader("nr/gemm_coopmat_norm"),
            9,
            push.len() as u32,
        )
        .with_spec(SpecConstant::u32(0, bn))
        .with_spec(SpecConstant::u32(4, 2))
        .with_spec(SpecConstant::u32(5, 0))
        .with_spec(SpecConstant::u32(6, 0)),
    )?;
    // Bindings 2 and 3 (the seed's skip and scale) are never read without a seed: q' stands in.
    let set = arena.allocate(
        &pipeline,
        &[input, matrix, q, q, q, k, norm.table, v, temps],
    )?;
    let groups = [
        u32::try_from((s.rows as u64).div_ceil(MIN_ROWS_PER_GROUP))
            .map_err(|_| invalid(format!("{} rows", s.rows)))?,
        (s.n / bn as usize) as u32,
        1,
    ];
    Ok(Dispatch {
        pipeline,
        set,
        push,
        groups,
        then: None,
    })
}
