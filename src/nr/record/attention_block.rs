//! A C = 32 window block's attention half as one kernel (`attention_block_coopmat.comp`, the
//! tensor route's [`Fusion::Block`]): the QKV GEMM, the window normalisation, the window
//! attention and the projection in one launch, a workgroup per column of windows. The f16 QKV,
//! q', k', v' and the attention output stay in the workgroup's shared memory and are never
//! written. The same bytes as the four kernels one after the other.
//!
//! [`Fusion::Block`]: crate::nr::route::Fusion::Block

use std::sync::Arc;

use crate::gpu::{
    BufferBinding, DescriptorArena, Dispatch, GpuContext, GpuError, PipelineDesc, SpecConstant,
};
use crate::model::blocks::PRIOR_BYTES;
use crate::nr::geometry::Size;
use crate::nr::graph::Epilogue;
use crate::numerics::{tables, Profiles};

use super::attention::window_grid;
use super::elementwise::bind_aligned;
use super::gemm::align_down;
use super::{need, KernelPolicy};

/// Shared memory the device's build takes per workgroup: the code table, Q, K, V, the scores,
/// the prior and the resident matrices (`attention_block_coopmat.glsl`'s arena, in words).
pub const BLOCK_SHARED_BYTES: u32 = 4 * (256 + 3 * 64 * 20 + 2 * 64 * 36 + 96 * 20 + 32 * 20);

/// What the kernel reads and writes, over one level (or one strip band of it): `y`
/// `[tokens][32]` (E4, the QKV GEMM's input), the matrices `wqkv` `[96][32]` and `wproj`
/// `[32][32]` (E4), the projection's `skip` `[tokens][32]` (raw f16) and its 32 `scale` halves,
/// the head's f32 `temperature`, its `prior` ([`PRIOR_BYTES`]), the output `[tokens][32]` (E4,
/// and raw f16 for the dual epilogue) and [`tables::ATTENTION`].
#[derive(Clone, Copy, Debug)]
pub struct BlockBindings {
    pub y: BufferBinding,
    pub wqkv: BufferBinding,
    pub wproj: BufferBinding,
    pub skip: BufferBinding,
    pub scale: BufferBinding,
    pub temperature: BufferBinding,
    pub prior: BufferBinding,
    pub out: BufferBinding,
    pub out_raw: Option<BufferBinding>,
    pub table: BufferBinding,
}

fn invalid(detail: String) -> GpuError {
    GpuError::invalid("attention block".to_owned(), detail)
}

/// Prepare the attention half of a C = 32 block over a level of `size` in window `phase`,
/// publishing the projection by `epilogue` (E4 or dual). Refuses another policy or profile than
/// the cooperative matrices' `h25`, a device with too little shared memory, bindings too small
/// or off their element size, and a grid beyond the device's limits.
#[allow(clippy::too_many_arguments)]
pub fn prepare_attention_block(
    ctx: &Arc<GpuContext>,
    arena: &mut DescriptorArena,
    policy: KernelPolicy,
    profiles: Profiles,
    b: &BlockBindings,
    size: Size,
    phase: u32,
    epilogue: Epilogue,
) -> Result<Dispatch, GpuError> {
    policy.require_tiles_h25("attention block", profiles)?;
    let shared = ctx.capabilities().max_compute_shared_memory_size;
    if !policy.emulated_tiles() && shared < BLOCK_SHARED_BYTES {
        return Err(invalid(format!(
            "needs {BLOCK_SHARED_BYTES} bytes of shared memory per workgroup; the device has \
             {shared} (maxComputeSharedMemorySize)"
        )));
    }
    let (groups, (sx, sy)) = window_grid(ctx, size, 1, phase, policy)?;
    let tokens = u64::from(size.w) * u64::from(size.h);
    let (y, y_off) = bind_aligned(ctx, "attention block y", b.y, tokens * 32, 16)?;
    let (skip, skip_off) = bind_aligned(ctx, "attention block skip", b.skip, tokens * 64, 16)?;
    let (out, out_off) = bind_aligned(ctx, "attention block output", b.out, tokens * 32, 4)?;
    let (raw, raw_off, epi) = match (epilogue, b.out_raw) {
        (Epilogue::Dual, Some(r)) => {
            let (raw, off) = bind_aligned(ctx, "attention block raw output", r, tokens * 64, 4)?;
            (raw, off, 3)
        }
        (Epilogue::Dual, None) => {
            return Err(invalid("the dual epilogue needs a raw output".into()))
        }
        // Never written by the E4 epilogue.
        (Epilogue::E4, _) => (out, out_off, 1),
        (e, _) => {
            return Err(invalid(format!(
                "{e:?}: the projection publishes E4 or dual"
            )))
        }
    };
    need("attention block wqkv", &b.wqkv, 96 * 32)?;
    need("attention block wproj", &b.wproj, 32 * 32)?;
    need("attention block scale", &b.scale, 64)?;
    let (scale, skew) = align_down(ctx, b.scale);
    if skew % 2 != 0 {
        return Err(invalid(format!(
            "scale offset {} is not a multiple of 2",
            scale.offset + skew
        )));
    }
    let (temps, t_off) = bind_aligned(ctx, "attention block temperature", b.temperature, 4, 1)?;
    let (prior, p_off) =
        bind_aligned(ctx, "attention block prior", b.prior, PRIOR_BYTES as u64, 1)?;
    need(
        "attention block table",
        &b.table,
        tables::ATTENTION.len() as u64,
    )?;
    let pipeline = ctx.pipeline(
        &PipelineDesc::new(&policy.tile_shader("nr/attention_block_coopmat"), 10, 44)
            .with_spec(SpecConstant::u32(0, epi)),
    )?;
    let set = arena.allocate(
        &pipeline,
        &[
            y, b.wqkv, b.wproj, skip, scale, temps, prior, out, raw, b.table,
        ],
    )?;
    let push = [
        size.w,
        size.h,
        sx,
        sy,
        y_off,
        skip_off,
        (skew / 2) as u32,
        t_off,
        p_off,
        out_off,
        raw_off,
    ]
    .iter()
    .flat_map(|x| x.to_ne_bytes())
    .collect();
    Ok(Dispatch {
        pipeline,
        set,
        push,
        groups,
        then: None,
    })
}
