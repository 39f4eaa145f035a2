//! GPU record functions of the attention ops: [`Op::Normalize`], [`Op::WindowAttention`] and
//! [`Op::VitAttention`] (kernels `shaders/nr/{normalize,window_attention,vit_attention}.comp`
//! and their builds: `normalize_{rtz,native,coop}` for the cooperative normalisation and
//! `normalize_{rtz,native,coop}_subgroup` for its subgroup layout, the `*_rtz` attention
//! builds).
//!
//! The attention MMAs (`S = prior + q.k`, `O = P.V`) follow the FP8 MMA profile of the run
//! ([`Profile::F13`] native or [`Profile::H25`]), passed to the kernels as specialization
//! constants (fraction bits and the exponent convention of E4M3 subnormals). As in
//! [`super::elementwise`], `prepare_*` builds a [`Dispatch`] once and `record_*` prepares and
//! records it (the caller places barriers),
//! ranges may start at any offset that is a multiple of their element size, and results equal
//! `nr::reference::Executor::exec` byte for byte.
//!
//! [`Op::Normalize`]: crate::nr::graph::Op::Normalize
//! [`Op::WindowAttention`]: crate::nr::graph::Op::WindowAttention
//! [`Op::VitAttention`]: crate::nr::graph::Op::VitAttention

use std::sync::Arc;

use crate::gpu::{
    BufferBinding, Capabilities, DescriptorArena, Dispatch, GpuContext, GpuError, PipelineDesc,
    Recorder, SpecConstant,
};
use crate::model::blocks::PRIOR_BYTES;
use crate::nr::geometry::{Phase, Size};
use crate::numerics::{tables, AccRounding, ExponentConvention, Profile};

use super::elementwise::{bind_aligned, grid, grid_of, prepared, push_bytes};
use super::{need, KernelPolicy};

/// The kernels' specialization for an FP8 MMA profile: constant 0 = fraction bits P, constant
/// 1 = E4M3 subnormals widened to their f16 exponent. Only profiles with groups of 16 and an f16
/// RNE accumulator exist in GLSL (F13, H25).
fn mma_spec(what: &str, p: &Profile) -> Result<[SpecConstant; 2], GpuError> {
    if p.group != 16 || p.acc != AccRounding::F16Rne || p.frac_bits > 25 {
        return Err(GpuError::invalid(
            what,
            format!(
                "MMA profile `{}` (group {}, P {}, {:?}) has no kernel: groups of 16, P <= 25, f16 RNE accumulator",
                p.name, p.group, p.frac_bits, p.acc
            ),
        ));
    }
    Ok([
        SpecConstant::i32(0, p.frac_bits as i32),
        SpecConstant::bool(1, p.exponents == ExponentConvention::WidenedF16),
    ])
}

fn check_heads(what: &str, heads: u32) -> Result<(), GpuError> {
    if heads == 0 {
        return Err(GpuError::invalid(what, "0 heads"));
    }
    Ok(())
}

/// The two layouts of the normalisation kernel; both give the same bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NormalizeKernel {
    /// `nr/normalize`: one invocation per (row, head, q/k/v) with emulated halves. The portable
    /// route's kernel: cheap to compile and run on lavapipe, slow on GPUs (divergent lanes, a
    /// spilled 32-half array, strided accesses).
    PerPart,
    /// 32 invocations per (row, head), one per channel of its q, k and v, 4 (row, head) units
    /// per workgroup, sums of squares through shared memory: `nr/normalize_rtz` (also the fast
    /// fused f16 form) on devices for the RTZ builds, `nr/normalize_native` (native f16
    /// adds and multiplies) where the device allows it
    /// ([`KernelPolicy::native_f16`]), else `nr/normalize_coop` (the same body with emulated
    /// halves, which the tests run on devices without native f16).
    Cooperative,
    /// The same operations with eight invocations per (row, head), four channels each, 16 units
    /// per workgroup and the sums through shuffles (`shaders/nr/normalize_subgroup.glsl`), on
    /// devices whose subgroups allow it ([`NormalizeKernel::subgroups_fit`]):
    /// `nr/normalize_{rtz,native}_subgroup` for the fast builds, which the network runs there,
    /// and `nr/normalize_coop_subgroup` (emulated halves) for the tests on devices without
    /// native f16. A lane works on twelve channels at once where the cooperative layout's works
    /// on three, which is what GPUs wait on here.
    Subgroup,
}

impl NormalizeKernel {
    /// (row, head) units per workgroup of the cooperative kernel (`NORM_UNITS` in
    /// `shaders/nr/normalize_coop.glsl`).
    const UNITS: u64 = 4;
    /// The same for its subgroup builds (`shaders/nr/normalize_subgroup.glsl`).
    const SUBGROUP_UNITS: u64 = 16;

    /// Whether the cooperative kernel's subgroup builds run on a device with `caps`: they keep
    /// their shuffles within aligned groups of eight lanes of a workgroup of 128, so the
    /// subgroups must be a multiple of 8 that divides 128, with shuffles in compute shaders.
    pub fn subgroups_fit(caps: &Capabilities) -> bool {
        caps.subgroup_shuffles && matches!(caps.subgroup_size, 8 | 16 | 32 | 64 | 128)
    }
}

/// [`Op::Normalize`](crate::nr::graph::Op::Normalize): cosine normalisation of the f16 `qkv`
/// (`[rows][3 * 32 * heads]`, head-major 96-column groups) into E4 `q`, `k`, `v`
/// (`[rows][32 * heads]`) with the `kernel` layout (the network runs
/// [`KernelPolicy::normalize_kernel`]; the tests prove both on any device). `temperatures` holds
/// `heads` little-endian f32; `table` is [`crate::numerics::tables::NORMALIZE`] of the kernels'
/// table (the weights of a device hold one: `GpuWeights::normalize_table`; the cooperative
/// kernels read it); `vit` selects the ViT q formula (extra `* 5.65625`).
#[allow(clippy::too_many_arguments)]
pub fn prepare_normalize(
    ctx: &Arc<GpuContext>,
    arena: &mut DescriptorArena,
    policy: KernelPolicy,
    kernel: NormalizeKernel,
    qkv: BufferBinding,
    temperatures: BufferBinding,
    table: BufferBinding,
    q: BufferBinding,
    k: BufferBinding,
    v: BufferBinding,
    rows: u32,
    heads: u32,
    vit: bool,
) -> Result<Dispatch, GpuError> {
    check_heads("normalize", heads)?;
    let c = 32 * heads as u64;
    let n = rows as u64 * c;
    let (qkv, qkv_off) = bind_aligned(ctx, "normalize qkv", qkv, 3 * n * 2, 2)?;
    let (temps, t_off) = bind_aligned(
        ctx,
        "normalize temperatures",
        temperatures,
        4 * heads as u64,
        1,
    )?;
    let (q, q_off) = bind_aligned(ctx, "normalize q", q, n, 1)?;
    let (k, k_off) = bind_aligned(ctx, "normalize k", k, n, 1)?;
    let (v, v_off) = bind_aligned(ctx, "normalize v", v, n, 1)?;
    let units = rows as u64 * heads as u64;
    if kernel == NormalizeKernel::Subgroup && !NormalizeKernel::subgroups_fit(ctx.capabilities()) {
        return Err(GpuError::invalid(
            "normalize",
            format!(
                "the subgroup layout needs subgroups of 8 to 128 lanes with shuffles (the device \
                 has {} lanes, shuffles {})",
                ctx.capabilities().subgroup_size,
                ctx.capabilities().subgroup_shuffles
            ),
        ));
    }
    // The subgroup builds move whole words where every offset is a multiple of 4 elements.
    let words = [qkv_off, q_off, k_off, v_off].iter().all(|o| o % 4 == 0);
    let (shader, groups) = match kernel {
        NormalizeKernel::PerPart => ("nr/normalize", grid(ctx, "normalize", units * 3)?),
        NormalizeKernel::Subgroup => (
            if policy.rtz_mode() {
                "nr/normalize_rtz_subgroup"
            } else if policy.native_f16() {
                "nr/normalize_native_subgroup"
            } else {
                "nr/normalize_coop_subgroup"
            },
            grid_of(
                ctx,
                "normalize",
                units.div_ceil(NormalizeKernel::SUBGROUP_UNITS),
            )?,
        ),
        NormalizeKernel::Cooperative => (
            if policy.rtz_mode() {
                "nr/normalize_rtz"
            } else if policy.native_f16() {
                "nr/normalize_native"
            } else {
                "nr/normalize_coop"
            },
            grid_of(ctx, "normalize", units.div_ceil(NormalizeKernel::UNITS))?,
        ),
    };
    let mut buffers = vec![qkv, temps, q, k, v];
    if kernel != NormalizeKernel::PerPart {
        need("normalize table", &table, tables::NORMALIZE.len() as u64)?;
        buffers.push(table);
    }
    let mut desc =
        PipelineDesc::new(shader, buffers.len() as u32, 28).with_spec(SpecConstant::bool(0, vit));
    if kernel == NormalizeKernel::Subgroup {
        desc = desc.with_spec(SpecConstant::bool(1, words));
    }
    let pipeline = ctx.pipeline(&desc)?;
    let set = arena.allocate(&pipeline, &buffers)?;
    let push = push_bytes(&[rows, heads, qkv_off, t_off, q_off, k_off, v_off]);
    Ok(prepared(pipeline, set, push, groups))
}

/// Prepare and record [`prepare_normalize`].
#[allow(clippy::too_many_arguments)]
pub fn record_normalize(
    ctx: &Arc<GpuContext>,
    rec: &mut Recorder<'_>,
    arena: &mut DescriptorArena,
    policy: KernelPolicy,
    kernel: NormalizeKernel,
    qkv: BufferBinding,
    temperatures: BufferBinding,
    table: BufferBinding,
    q: BufferBinding,
    k: BufferBinding,
    v: BufferBinding,
    rows: u32,
    heads: u32,
    vit: bool,
) -> Result<(), GpuError> {
    prepare_normalize(
        ctx,
        arena,
        policy,
        kernel,
        qkv,
        temperatures,
        table,
        q,
        k,
        v,
        rows,
        heads,
        vit,
    )?
    .record(rec)
}

/// The cooperative-matrix kernels compute the device's MMA, which the tensor route's probe
/// identified as h25: any other profile is refused.
fn require_h25(what: &str, profile: &Profile) -> Result<(), GpuError> {
    if *profile != Profile::H25 {
        return Err(GpuError::invalid(
            what,
            format!(
                "the cooperative-matrix kernel computes h25 only, not `{}`",
                profile.name
            ),
        ));
    }
    Ok(())
}

/// The fewest workgroups a cooperative-matrix window attention keeps when its workgroups run
/// several windows each ([`window_rows_per_group`]). 64 and [`WINDOW_MAX_ROWS_PER_GROUP`] 16
/// against 256 and 8 before: on an H100 the 1080p frame 35.61 -> 35.41 ms (`--timing frame`,
/// two runs each), 4K unchanged (119.84-119.86 against 119.89-119.90 ms); up to 32 windows took
/// 4K to 120.16 (docs/performance.md, session 24).
pub const WINDOW_MIN_WORKGROUPS: u64 = 64;

/// The most windows one workgroup of the cooperative-matrix window attention runs.
pub const WINDOW_MAX_ROWS_PER_GROUP: u32 = 16;

/// How many window rows of its column one workgroup of the cooperative-matrix window attention
/// runs, for a grid of `columns` x `rows` windows and `heads` heads: as many as keep
/// [`WINDOW_MIN_WORKGROUPS`] workgroups, at most [`WINDOW_MAX_ROWS_PER_GROUP`]. A workgroup
/// loads its head's prior and code table once for all its windows and loads the next window's
/// q, k, v while it computes this one; every window is computed as alone, so the bytes do not
/// depend on this.
pub fn window_rows_per_group(columns: u32, rows: u32, heads: u32) -> u32 {
    let total = u64::from(columns) * u64::from(rows) * u64::from(heads);
    let per = (total / WINDOW_MIN_WORKGROUPS).clamp(1, u64::from(WINDOW_MAX_ROWS_PER_GROUP));
    (per as u32).min(rows.max(1))
}

/// The workgroups and the shift of a window-attention launch over a level of `size` in
/// `phase`, checked against the device: one per window column, head and window row, or with
/// the cooperative-matrix kernels one per [`window_rows_per_group`] window rows (or the
/// policy's own count).
pub(crate) fn window_grid(
    ctx: &GpuContext,
    size: Size,
    heads: u32,
    phase: u32,
    policy: KernelPolicy,
) -> Result<([u32; 3], (u32, u32)), GpuError> {
    check_heads("window attention", heads)?;
    if phase > 3 {
        return Err(GpuError::invalid(
            "window attention",
            format!("phase {phase} (0..=3)"),
        ));
    }
    if size.w == 0 || size.h == 0 {
        return Err(GpuError::invalid("window attention", "empty level"));
    }
    let (sx, sy) = Phase(phase as u8).shift();
    let (columns, rows) = ((size.w + sx).div_ceil(8), (size.h + sy).div_ceil(8));
    let per_group = match (policy.tensor_cores(), policy.window_rows()) {
        (false, _) => 1,
        (true, 0) => window_rows_per_group(columns, rows, heads),
        (true, t) => t.min(rows.max(1)),
    };
    let groups = [columns, rows.div_ceil(per_group), heads];
    let max = ctx.capabilities().max_compute_work_group_count;
    if groups.iter().zip(max.iter()).any(|(g, m)| g > m) {
        return Err(GpuError::invalid(
            "window attention",
            format!("{groups:?} windows x heads exceed maxComputeWorkGroupCount {max:?}"),
        ));
    }
    Ok((groups, (sx, sy)))
}

/// The priors (`heads` of them), the E4 output (`n` bytes) and the table of a window-attention
/// launch, bound and checked: `[(priors, offset), (output, offset)]`.
fn bind_priors_and_output(
    ctx: &GpuContext,
    priors: BufferBinding,
    out: BufferBinding,
    table: &BufferBinding,
    heads: u32,
    n: u64,
) -> Result<[(BufferBinding, u32); 2], GpuError> {
    let pr = bind_aligned(
        ctx,
        "window attention priors",
        priors,
        heads as u64 * PRIOR_BYTES as u64,
        1,
    )?;
    let out = bind_aligned(ctx, "window attention output", out, n, 1)?;
    need(
        "window attention table",
        table,
        tables::ATTENTION.len() as u64,
    )?;
    Ok([pr, out])
}

/// [`Op::WindowAttention`](crate::nr::graph::Op::WindowAttention): shifted 8x8-window attention
/// of one level of `size` with `heads` heads in window `phase` (0..=3). `q`, `k`, `v`, `out` are
/// E4 `[size][32 * heads]`; `priors` is `heads * PRIOR_BYTES` bytes of stored priors (spec §3.5 order).
/// Tokens of `out` are all written (every token is the query of exactly one window). `table` is
/// [`tables::ATTENTION`] of the kernels' table (`GpuWeights::attention_table`).
#[allow(clippy::too_many_arguments)]
pub fn prepare_window_attention(
    ctx: &Arc<GpuContext>,
    arena: &mut DescriptorArena,
    policy: KernelPolicy,
    q: BufferBinding,
    k: BufferBinding,
    v: BufferBinding,
    priors: BufferBinding,
    out: BufferBinding,
    table: BufferBinding,
    size: Size,
    heads: u32,
    phase: u32,
    profile: &Profile,
) -> Result<Dispatch, GpuError> {
    let (groups, (sx, sy)) = window_grid(ctx, size, heads, phase, policy)?;
    let spec = mma_spec("window attention", profile)?;
    let c = 32 * heads as u64;
    let n = size.w as u64 * size.h as u64 * c;
    let (q, q_off) = bind_aligned(ctx, "window attention q", q, n, 1)?;
    let (k, k_off) = bind_aligned(ctx, "window attention k", k, n, 1)?;
    let (v, v_off) = bind_aligned(ctx, "window attention v", v, n, 1)?;
    let [(pr, pr_off), (out, out_off)] =
        bind_priors_and_output(ctx, priors, out, &table, heads, n)?;
    let desc = if policy.tensor_cores() {
        require_h25("window attention", profile)?;
        PipelineDesc::new(&policy.tile_shader("nr/window_attention_coopmat"), 6, 40)
    } else {
        let shader = if policy.rtz_terms(profile.frac_bits as i32) {
            "nr/window_attention_rtz"
        } else {
            "nr/window_attention"
        };
        let mut desc = PipelineDesc::new(shader, 6, 40);
        for s in spec {
            desc = desc.with_spec(s);
        }
        desc
    };
    let pipeline = ctx.pipeline(&desc)?;
    let set = arena.allocate(&pipeline, &[q, k, v, pr, out, table])?;
    let push = push_bytes(&[
        size.w, size.h, heads, sx, sy, q_off, k_off, v_off, pr_off, out_off,
    ]);
    Ok(prepared(pipeline, set, push, groups))
}

/// Prepare and record [`prepare_window_attention`].
#[allow(clippy::too_many_arguments)]
pub fn record_window_attention(
    ctx: &Arc<GpuContext>,
    rec: &mut Recorder<'_>,
    arena: &mut DescriptorArena,
    policy: KernelPolicy,
    q: BufferBinding,
    k: BufferBinding,
    v: BufferBinding,
    priors: BufferBinding,
    out: BufferBinding,
    table: BufferBinding,
    size: Size,
    heads: u32,
    phase: u32,
    profile: &Profile,
) -> Result<(), GpuError> {
    prepare_window_attention(
        ctx, arena, policy, q, k, v, priors, out, table, size, heads, phase, profile,
    )?
    .record(rec)
}

/// [`Op::Normalize`](crate::nr::graph::Op::Normalize) (window form) and the
/// [`Op::WindowAttention`](crate::nr::graph::Op::WindowAttention) that reads its q', k', v' in
/// one launch of the cooperative-matrix kernel (`nr/window_attention_coopmat_qkv`, the tensor
/// route only): the attention's staging normalises the f16 `qkv` (`[size][96 * heads]`,
/// head-major) with the heads' f32 `temperatures`, so q', k', v' never leave the chip. The same
/// bytes in `out` as [`prepare_normalize`] followed by [`prepare_window_attention`]; `qkv` must
/// start on a word (the workspace's slots and rows always do).
#[allow(clippy::too_many_arguments)]
pub fn prepare_window_attention_qkv(
    ctx: &Arc<GpuContext>,
    arena: &mut DescriptorArena,
    policy: KernelPolicy,
    qkv: BufferBinding,
    temperatures: BufferBinding,
    priors: BufferBinding,
    out: BufferBinding,
    table: BufferBinding,
    size: Size,
    heads: u32,
    phase: u32,
    profile: &Profile,
) -> Result<Dispatch, GpuError> {
    let (groups, (sx, sy)) = window_grid(ctx, size, heads, phase, policy)?;
    if !policy.tensor_cores() {
        return Err(GpuError::invalid(
            "window attention with its normalisation",
            "only the cooperative-matrix kernel runs the normalisation in its staging",
        ));
    }
    require_h25("window attention", profile)?;
    let c = 32 * heads as u64;
    let n = size.w as u64 * size.h as u64 * c;
    let (qkv, qkv_off) = bind_aligned(ctx, "window attention qkv", qkv, 3 * n * 2, 4)?;
    let (temps, t_off) = bind_aligned(
        ctx,
        "window attention temperatures",
        temperatures,
        4 * heads as u64,
        1,
    )?;
    let [(pr, pr_off), (out, out_off)] =
        bind_priors_and_output(ctx, priors, out, &table, heads, n)?;
    let pipeline = ctx.pipeline(&PipelineDesc::new(
        &policy.tile_shader("nr/window_attention_coopmat_qkv"),
        5,
        36,
    ))?;
    let set = arena.allocate(&pipeline, &[qkv, temps, pr, out, table])?;
    let push = push_bytes(&[
        size.w, size.h, heads, sx, sy, qkv_off, t_off, pr_off, out_off,
    ]);
    Ok(prepared(pipeline, set, push, groups))
}

/// [`Op::VitAttention`](crate::nr::graph::Op::VitAttention): global attention of `tokens`
/// queries over all `tokens` keys (padded with zero rows to a multiple of 64) with `heads`
/// heads. `q`, `k`, `v`, `out` are E4 `[tokens][32 * heads]`; `table` as for
/// [`record_window_attention`].
#[allow(clippy::too_many_arguments)]
pub fn prepare_vit_attention(
    ctx: &Arc<GpuContext>,
    arena: &mut DescriptorArena,
    policy: KernelPolicy,
    q: BufferBinding,
    k: BufferBinding,
    v: BufferBinding,
    out: BufferBinding,
    table: BufferBinding,
    tokens: u32,
    heads: u32,
    profile: &Profile,
) -> Result<Dispatch, GpuError> {
    check_heads("vit attention", heads)?;
    if tokens == 0 {
        return Err(GpuError::invalid("vit attention", "0 tokens"));
    }
    let spec = mma_spec("vit attention", profile)?;
    let c = 32 * heads as u64;
    let n = tokens as u64 * c;
    let (q, q_off) = bind_aligned(ctx, "vit attention q", q, n, 1)?;
    let (k, k_off) = bind_aligned(ctx, "vit attention k", k, n, 1)?;
    let (v, v_off) = bind_aligned(ctx, "vit attention v", v, n, 1)?;
    let (out, out_off) = bind_aligned(ctx, "vit attention output", out, n, 1)?;
    need(
        "vit attention table",
        &table,
        tables::ATTENTION.len() as u64,
    )?;
    let groups = [tokens.div_ceil(64), heads, 1];
    let max = ctx.capabilities().max_compute_work_group_count;
    if groups.iter().zip(max.iter()).any(|(g, m)| g > m) {
        return Err(GpuError::invalid(
            "vit attention",
            format!("{groups:?} query blocks x heads exceed maxComputeWorkGroupCount {max:?}"),
        ));
    }
    let desc = if policy.tensor_cores() {
        require_h25("vit attention", profile)?;
        PipelineDesc::new(&policy.tile_shader("nr/vit_attention_coopmat"), 5, 24)
    } else {
        let shader = if policy.rtz_terms(profile.frac_bits as i32) {
            "nr/vit_attention_rtz"
        } else {
            "nr/vit_attention"
        };
        let mut desc = PipelineDesc::new(shader, 5, 24);
        for s in spec {
            desc = desc.with_spec(s);
        }
        desc
    };
    let pipeline = ctx.pipeline(&desc)?;
    let set = arena.allocate(&pipeline, &[q, k, v, out, table])?;
    let push = push_bytes(&[tokens, heads, q_off, k_off, v_off, out_off]);
    Ok(prepared(pipeline, set, push, groups))
}

/// Prepare and record [`prepare_vit_attention`].
#[allow(clippy::too_many_arguments)]
pub fn record_vit_attention(
    ctx: &Arc<GpuContext>,
    rec: &mut Recorder<'_>,
    arena: &mut DescriptorArena,
    policy: KernelPolicy,
    q: BufferBinding,
    k: BufferBinding,
    v: BufferBinding,
    out: BufferBinding,
    table: BufferBinding,
    tokens: u32,
    heads: u32,
    profile: &Profile,
) -> Result<(), GpuError> {
    prepare_vit_attention(
        ctx, arena, policy, q, k, v, out, table, tokens, heads, profile,
    )?
    .record(rec)
}

#[cfg(test)]
mod tests {
    use super::{window_rows_per_group, WINDOW_MAX_ROWS_PER_GROUP, WINDOW_MIN_WORKGROUPS};

    /// The full-resolution levels' window attention gets several window rows per workgroup,
    /// the small levels one; every grid covers every window row and keeps
    /// WINDOW_MIN_WORKGROUPS workgroups where it had them.
    #[test]
    fn window_rows_per_workgroup() {
        // 1920x1080's field in phase 0: 240 x 144 windows, one head.
        assert_eq!(window_rows_per_group(240, 144, 1), 16);
        // Its L0 (960x576, 120 x 72 windows): 8,640 windows.
        assert_eq!(window_rows_per_group(120, 72, 1), 16);
        // L4 of 1080p with 16 heads (15 x 9 windows): 2,160 windows, a whole column each.
        assert_eq!(window_rows_per_group(15, 9, 16), 9);
        // L4 of 512x512 (8 x 8 windows, 16 heads): 1,024.
        assert_eq!(window_rows_per_group(8, 8, 16), 8);
        // 16 x 16 windows, 8 heads: 2,048, the most rows each.
        assert_eq!(window_rows_per_group(16, 16, 8), 16);
        // A 12x12 level's 2 x 2 windows.
        assert_eq!(window_rows_per_group(2, 2, 16), 1);
        // 1,000 windows: 15 each.
        assert_eq!(window_rows_per_group(10, 100, 1), 15);
        for (columns, rows, heads) in [
            (240, 144, 1),
            (480, 272, 1),
            (120, 72, 1),
            (60, 36, 4),
            (7, 3, 16),
            (1, 1, 1),
            (3000, 1, 1),
        ] {
            let per = window_rows_per_group(columns, rows, heads);
            assert!((1..=WINDOW_MAX_ROWS_PER_GROUP).contains(&per) && per <= rows);
            let groups = u64::from(columns * rows.div_ceil(per) * heads);
            let had = u64::from(columns * rows * heads);
            assert!(groups * u64::from(per) >= had);
            if had >= WINDOW_MIN_WORKGROUPS {
                assert!(
                    groups >= WINDOW_MIN_WORKGROUPS / 2,
                    "{columns}x{rows}x{heads}"
                );
            }
        }
    }
}
