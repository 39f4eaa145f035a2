//! GPU record functions of the elementwise graph ops: [`Op::Pool`], [`Op::UpMerge`] and
//! [`Op::PostBlend`] (kernels `shaders/nr/{pool,upmerge,post_blend}.glsl`, each built portable
//! and as `*_rtz` for the policies that allow the RTZ kernels), plus the small binding and grid
//! helpers the attention records share.
//!
//! `prepare_*` builds a [`Dispatch`] once; `record_*` prepares and records it. Neither places
//! barriers: the caller orders a dispatch against producers and consumers (`Recorder::compute_to_compute`). Tensors are `[rows][C]` row-major
//! storage-buffer ranges (E4 = 1 byte, F16 = 2 bytes); weight slices are ranges of the one weights
//! buffer holding the model's bytes as stored. A range need not start at the device's
//! `minStorageBufferOffsetAlignment` (weight records sit at arbitrary even offsets): it is bound
//! from the aligned offset below it and the kernel gets the skew as a push constant. Results are
//! byte-identical to `nr::reference::Executor::exec` of the same op.
//!
//! [`Op::Pool`]: crate::nr::graph::Op::Pool
//! [`Op::UpMerge`]: crate::nr::graph::Op::UpMerge
//! [`Op::PostBlend`]: crate::nr::graph::Op::PostBlend

use std::sync::Arc;

use crate::gpu::{
    BufferBinding, DescriptorArena, Dispatch, GpuContext, GpuError, PipelineDesc, Recorder,
    SpecConstant,
};
use crate::nr::geometry::Size;
use crate::nr::graph::DType;

use super::KernelPolicy;

/// Invocations per workgroup of every kernel of this module and of `attention`.
pub(crate) const LOCAL: u64 = 64;

/// `b` rebound from the storage-buffer offset alignment below its start. Returns the binding and
/// the skew in units of `elem` bytes (the index the kernel adds). `need` is the number of bytes
/// the kernel reads or writes from the caller's start.
pub(crate) fn bind_aligned(
    ctx: &GpuContext,
    what: &str,
    b: BufferBinding,
    need: u64,
    elem: u64,
) -> Result<(BufferBinding, u32), GpuError> {
    if b.range < need {
        return Err(GpuError::invalid(
            what,
            format!("range of {} bytes, the op needs {need}", b.range),
        ));
    }
    let align = ctx
        .capabilities()
        .min_storage_buffer_offset_alignment
        .max(1);
    let skew = b.offset % align;
    if skew % elem != 0 {
        return Err(GpuError::invalid(
            what,
            format!(
                "offset {} is not a multiple of the element size {elem}",
                b.offset
            ),
        ));
    }
    let range = if b.range == ash::vk::WHOLE_SIZE {
        b.range
    } else {
        b.range + skew
    };
    let index = u32::try_from(skew / elem)
        .map_err(|_| GpuError::invalid(what, "alignment skew does not fit 32 bits"))?;
    Ok((
        BufferBinding {
            buffer: b.buffer,
            offset: b.offset - skew,
            range,
        },
        index,
    ))
}

/// A 2D grid of `LOCAL`-wide workgroups covering `invocations` (kernels linearise
/// `(wg.y * numWG.x + wg.x) * LOCAL + local.x` and guard the tail).
pub(crate) fn grid(ctx: &GpuContext, what: &str, invocations: u64) -> Result<[u32; 3], GpuError> {
    grid_of(ctx, what, invocations.div_ceil(LOCAL))
}

/// A 2D grid of `groups` workgroups of any size (kernels linearise `wg.y * numWG.x + wg.x` and
/// guard the tail).
pub(crate) fn grid_of(ctx: &GpuContext, what: &str, groups: u64) -> Result<[u32; 3], GpuError> {
    let max = ctx.capabilities().max_compute_work_group_count;
    let x = groups.clamp(1, max[0] as u64);
    let y = groups.div_ceil(x);
    if y > max[1] as u64 {
        return Err(GpuError::invalid(
            what,
            format!("{groups} workgroups exceed the device's workgroup grid"),
        ));
    }
    Ok([x as u32, y as u32, 1])
}

/// A single launch.
pub(crate) fn prepared(
    pipeline: crate::gpu::ComputePipeline,
    set: ash::vk::DescriptorSet,
    push: Vec<u8>,
    groups: [u32; 3],
) -> Dispatch {
    Dispatch {
        pipeline,
        set,
        push,
        groups,
        then: None,
    }
}

/// Push-constant bytes of a word list.
pub(crate) fn push_bytes(words: &[u32]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_ne_bytes()).collect()
}

fn check_channels(what: &str, channels: u32) -> Result<(), GpuError> {
    if channels == 0 || channels % 4 != 0 {
        return Err(GpuError::invalid(
            what,
            format!("{channels} channels (a positive multiple of 4)"),
        ));
    }
    Ok(())
}

fn tokens(s: Size) -> u64 {
    s.w as u64 * s.h as u64
}

/// The build of elementwise kernel `name` under `policy`: its `_rtz` build (native f16 and the
/// fast fused form, the same bytes) where the policy allows the RTZ kernels.
fn build(policy: KernelPolicy, name: &str) -> String {
    if policy.rtz_mode() {
        format!("{name}_rtz")
    } else {
        name.to_owned()
    }
}

/// Whether every offset (in its tensor's elements) is a multiple of 4, so the elementwise
/// kernels move four channels as whole words (their `WORDS` constant).
fn words(offsets: &[u32]) -> bool {
    offsets.iter().all(|o| o % 4 == 0)
}

/// [`Op::Pool`](crate::nr::graph::Op::Pool): 2x2 pool of the raw f16 `input` (`[in_size][C]`)
/// into E4 `out` (`[out_size][C]`); output tokens whose 2x2 source leaves the input are 0.
#[allow(clippy::too_many_arguments)]
pub fn prepare_pool(
    ctx: &Arc<GpuContext>,
    arena: &mut DescriptorArena,
    policy: KernelPolicy,
    input: BufferBinding,
    out: BufferBinding,
    in_size: Size,
    out_size: Size,
    channels: u32,
) -> Result<Dispatch, GpuError> {
    check_channels("pool", channels)?;
    let c = channels as u64;
    let (input, in_off) = bind_aligned(ctx, "pool input", input, tokens(in_size) * c * 2, 2)?;
    let (out, out_off) = bind_aligned(ctx, "pool output", out, tokens(out_size) * c, 1)?;
    let pipeline = ctx.pipeline(
        &PipelineDesc::new(&build(policy, "nr/pool"), 2, 28)
            .with_spec(SpecConstant::bool(0, words(&[in_off, out_off]))),
    )?;
    let set = arena.allocate(&pipeline, &[input, out])?;
    let push = push_bytes(&[
        in_size.w, in_size.h, out_size.w, out_size.h, channels, in_off, out_off,
    ]);
    let groups = grid(ctx, "pool", tokens(out_size) * c / 4)?;
    Ok(prepared(pipeline, set, push, groups))
}

/// Prepare and record [`prepare_pool`].
#[allow(clippy::too_many_arguments)]
pub fn record_pool(
    ctx: &Arc<GpuContext>,
    rec: &mut Recorder<'_>,
    arena: &mut DescriptorArena,
    policy: KernelPolicy,
    input: BufferBinding,
    out: BufferBinding,
    in_size: Size,
    out_size: Size,
    channels: u32,
) -> Result<(), GpuError> {
    prepare_pool(ctx, arena, policy, input, out, in_size, out_size, channels)?.record(rec)
}

/// [`Op::UpMerge`](crate::nr::graph::Op::UpMerge): `merged = f16(up + skip * scale[c])` with
/// `up` the nearest 2x upsample of the f16 `low` (`[low_size][C]`), `skip` E4 or F16
/// (`skip_dtype`) at `size`, `scale` `C` little-endian halves. Writes E4 `out` and, when given,
/// the raw f16 `out_raw`.
#[allow(clippy::too_many_arguments)]
pub fn prepare_upmerge(
    ctx: &Arc<GpuContext>,
    arena: &mut DescriptorArena,
    policy: KernelPolicy,
    low: BufferBinding,
    skip: BufferBinding,
    skip_dtype: DType,
    scale: BufferBinding,
    out: BufferBinding,
    out_raw: Option<BufferBinding>,
    low_size: Size,
    size: Size,
    channels: u32,
) -> Result<Dispatch, GpuError> {
    check_channels("upmerge", channels)?;
    if low_size.w < size.w.div_ceil(2) || low_size.h < size.h.div_ceil(2) {
        return Err(GpuError::invalid(
            "upmerge",
            format!(
                "low level {}x{} does not cover {}x{} upsampled",
                low_size.w, low_size.h, size.w, size.h
            ),
        ));
    }
    let skip_f16 = match skip_dtype {
        DType::E4 => false,
        DType::F16 => true,
        DType::F32 => return Err(GpuError::invalid("upmerge skip", "f32 skips do not exist")),
    };
    let c = channels as u64;
    let n = tokens(size) * c;
    let (low, low_off) = bind_aligned(ctx, "upmerge low", low, tokens(low_size) * c * 2, 2)?;
    let (skip, skip_off) =
        bind_aligned(ctx, "upmerge skip", skip, n * skip_dtype.size() as u64, 1)?;
    let (scale, scale_off) = bind_aligned(ctx, "upmerge scale", scale, c * 2, 1)?;
    let (out, out_off) = bind_aligned(ctx, "upmerge output", out, n, 1)?;
    // Without a raw output the kernel never touches binding 4; it aliases `out` to stay valid.
    let (raw, raw_off) = match out_raw {
        Some(r) => bind_aligned(ctx, "upmerge raw output", r, n * 2, 2)?,
        None => (out, 0),
    };
    // The skip's offset is in bytes: four of its elements are 4 (E4) or 8 (f16) of them. The
    // scale is read as bytes either way.
    let aligned =
        skip_off % (4 * skip_dtype.size() as u32) == 0 && words(&[low_off, out_off, raw_off]);
    let pipeline = ctx.pipeline(
        &PipelineDesc::new(&build(policy, "nr/upmerge"), 5, 36)
            .with_spec(SpecConstant::bool(0, skip_f16))
            .with_spec(SpecConstant::bool(1, out_raw.is_some()))
            .with_spec(SpecConstant::bool(2, aligned)),
    )?;
    let set = arena.allocate(&pipeline, &[low, skip, scale, out, raw])?;
    let push = push_bytes(&[
        size.w, size.h, low_size.w, channels, low_off, skip_off, scale_off, out_off, raw_off,
    ]);
    let groups = grid(ctx, "upmerge", n / 4)?;
    Ok(prepared(pipeline, set, push, groups))
}

/// Prepare and record [`prepare_upmerge`].
#[allow(clippy::too_many_arguments)]
pub fn record_upmerge(
    ctx: &Arc<GpuContext>,
    rec: &mut Recorder<'_>,
    arena: &mut DescriptorArena,
    policy: KernelPolicy,
    low: BufferBinding,
    skip: BufferBinding,
    skip_dtype: DType,
    scale: BufferBinding,
    out: BufferBinding,
    out_raw: Option<BufferBinding>,
    low_size: Size,
    size: Size,
    channels: u32,
) -> Result<(), GpuError> {
    prepare_upmerge(
        ctx, arena, policy, low, skip, skip_dtype, scale, out, out_raw, low_size, size, channels,
    )?
    .record(rec)
}

/// [`Op::PostBlend`](crate::nr::graph::Op::PostBlend): block 70's input from E4 `low` (block 69,
/// `[low_size][32]`) and E4 `skip` (block 0, `[size][32]`):
/// `m = f16(f16(low[x>>1, y>>1] * input_scale) + skip * adapter_scale)` -> f16 `out_raw`, E4 `out`.
#[allow(clippy::too_many_arguments)]
pub fn prepare_post_blend(
    ctx: &Arc<GpuContext>,
    arena: &mut DescriptorArena,
    policy: KernelPolicy,
    low: BufferBinding,
    skip: BufferBinding,
    input_scale: BufferBinding,
    adapter_scale: BufferBinding,
    out_raw: BufferBinding,
    out: BufferBinding,
    low_size: Size,
    size: Size,
) -> Result<Dispatch, GpuError> {
    const C: u64 = 32;
    if low_size.w < size.w.div_ceil(2) || low_size.h < size.h.div_ceil(2) {
        return Err(GpuError::invalid(
            "post blend",
            format!(
                "low level {}x{} does not cover {}x{} upsampled",
                low_size.w, low_size.h, size.w, size.h
            ),
        ));
    }
    let n = tokens(size) * C;
    let (low, low_off) = bind_aligned(ctx, "post blend low", low, tokens(low_size) * C, 1)?;
    let (skip, skip_off) = bind_aligned(ctx, "post blend skip", skip, n, 1)?;
    let (is, is_off) = bind_aligned(ctx, "post blend input scale", input_scale, C * 2, 1)?;
    let (asc, as_off) = bind_aligned(ctx, "post blend adapter scale", adapter_scale, C * 2, 1)?;
    let (raw, raw_off) = bind_aligned(ctx, "post blend raw output", out_raw, n * 2, 2)?;
    let (out, out_off) = bind_aligned(ctx, "post blend output", out, n, 1)?;
    let pipeline = ctx.pipeline(
        &PipelineDesc::new(&build(policy, "nr/post_blend"), 6, 40).with_spec(SpecConstant::bool(
            0,
            words(&[low_off, skip_off, raw_off, out_off]),
        )),
    )?;
    let set = arena.allocate(&pipeline, &[low, skip, is, asc, raw, out])?;
    let push = push_bytes(&[
        size.w, size.h, low_size.w, C as u32, low_off, skip_off, is_off, as_off, raw_off, out_off,
    ]);
    let groups = grid(ctx, "post blend", n / 4)?;
    Ok(prepared(pipeline, set, push, groups))
}

/// Prepare and record [`prepare_post_blend`].
#[allow(clippy::too_many_arguments)]
pub fn record_post_blend(
    ctx: &Arc<GpuContext>,
    rec: &mut Recorder<'_>,
    arena: &mut DescriptorArena,
    policy: KernelPolicy,
    low: BufferBinding,
    skip: BufferBinding,
    input_scale: BufferBinding,
    adapter_scale: BufferBinding,
    out_raw: BufferBinding,
    out: BufferBinding,
    low_size: Size,
    size: Size,
) -> Result<(), GpuError> {
    prepare_post_blend(
        ctx,
        arena,
        policy,
        low,
        skip,
        input_scale,
        adapter_scale,
        out_raw,
        out,
        low_size,
        size,
    )?
    .record(rec)
}
