//! The GEMM-family kernels of the exact route: the grouped FP8 GEMM of [`Op::Gemm`]
//! (`shaders/nr/gemm.glsl`, built as `gemm_rtz.comp` for devices with the round-toward-zero f32
//! mode and as `gemm.comp` for the others), the input adapter (`adapter.comp`) and the head
//! (`head.comp`).
//!
//! A split-K GEMM (a partition shorter than K) runs as two dispatches: one workgroup per tile
//! and partition writes the partition's f16 result to a partials scratch buffer, then
//! `gemm_sum.comp` adds them in the model's order and applies the epilogue. The ViT GEMMs of
//! the deep level have few rows; their model partitions give the GPU 2-4x more workgroups.
//!
//! Each kernel comes as `prepare_*` (pipeline, descriptor set, push constants and grid, built once
//! since the bindings of a schedule never change) returning a [`Dispatch`] that is recorded every
//! frame, and as a `record_*` convenience that prepares and records in one call. The MMA profile
//! is a pipeline specialization; profiles the integer kernels cannot emulate are refused with a
//! typed error instead of computing something else.
//!
//! [`Op::Gemm`]: crate::nr::graph::Op::Gemm

use std::sync::Arc;

pub use crate::gpu::Dispatch;
use crate::gpu::{
    BufferBinding, DescriptorArena, GpuContext, GpuError, PipelineDesc, Recorder, SpecConstant,
};
use crate::nr::graph::{DType, Epilogue, Graph, InputMode, Node, Op, TensorId};
use crate::numerics::{tables, AccRounding, ExponentConvention, Profile, Profiles};

use super::bands::{row_bytes, sub_binding, Band};
use super::{need, GpuWeights, KernelPolicy};

/// Push-constant bytes of every kernel here (the GEMM uses all 40).
const PUSH_BYTES: u32 = 40;

/// The fewest rows a GEMM workgroup computes in any build (the RTZ and cooperative-matrix
/// builds' 64; the portable build takes 128): a launch of `rows` rows has at most
/// `ceil(rows / MIN_ROWS_PER_GROUP)` workgroups along x.
pub const MIN_ROWS_PER_GROUP: u64 = 64;

/// Rows per workgroup of the adapter (8 rows x 8 column quads).
pub const ADAPTER_ROWS_PER_GROUP: u64 = 8;

/// Rows per workgroup of the cooperative-matrix adapter (16 per subgroup of 32).
pub const ADAPTER_COOPMAT_ROWS_PER_GROUP: u64 = 64;

/// Rows per workgroup of the head.
pub const HEAD_ROWS_PER_GROUP: u64 = 64;

fn words(w: &[u32]) -> Vec<u8> {
    let mut v: Vec<u8> = w.iter().flat_map(|x| x.to_ne_bytes()).collect();
    v.resize(PUSH_BYTES as usize, 0);
    v
}

fn invalid(what: &str, detail: String) -> GpuError {
    GpuError::invalid(what.to_owned(), detail)
}

fn fp8_spec(p: &Profile) -> Result<(i32, u32), GpuError> {
    if p.group != 16 || p.acc != AccRounding::F16Rne || !(10..=25).contains(&p.frac_bits) {
        return Err(invalid(
            "gemm profile",
            format!(
                "`{}` (G {}, P {}, {:?}) is not supported by the integer FP8 kernel (needs G 16, \
                 P 10..=25, f16 RNE accumulator)",
                p.name, p.group, p.frac_bits, p.acc
            ),
        ));
    }
    let conv = match p.exponents {
        ExponentConvention::FormatMinNormal => 0,
        ExponentConvention::WidenedF16 => 1,
    };
    Ok((p.frac_bits as i32, conv))
}

fn f16_spec(p: &Profile) -> Result<(i32, i32), GpuError> {
    if !matches!(p.group, 8 | 16) || p.acc != AccRounding::F16Rne || p.frac_bits > 25 {
        return Err(invalid(
            "f16 gemm profile",
            format!(
                "`{}` (G {}, P {}, {:?}) is not supported by the adapter/head kernels (needs G 8 \
                 or 16, P <= 25, f16 RNE accumulator)",
                p.name, p.group, p.frac_bits, p.acc
            ),
        ));
    }
    Ok((p.group as i32, p.frac_bits as i32))
}

/// Check that both profiles of a run can be emulated by these kernels.
pub fn check_profiles(p: Profiles) -> Result<(), GpuError> {
    fp8_spec(&p.fp8)?;
    f16_spec(&p.f16)?;
    Ok(())
}

/// The shape and variant of one grouped FP8 GEMM.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GemmShape {
    /// Rows (tokens).
    pub rows: usize,
    /// Channels of an input row.
    pub cin: usize,
    /// K per group.
    pub k: usize,
    /// N per group.
    pub n: usize,
    pub groups: usize,
    pub mode: InputMode,
    /// Split-K partition (`None` = one chain).
    pub partition: Option<usize>,
    pub epilogue: Epilogue,
    /// Element type of the seed's skip tensor (`None` = no seed).
    pub seed: Option<DType>,
}

impl GemmShape {
    /// Channels of an output row.
    pub fn nout(&self) -> usize {
        self.n * self.groups
    }

    /// Split-K partitions of K (1: one chain).
    pub fn partitions(&self) -> usize {
        match self.partition {
            Some(q) if q > 0 && q < self.k => self.k.div_ceil(q),
            _ => 1,
        }
    }

    /// Bytes of the partials scratch the GEMM needs ([`GemmBindings::partials`]; 0 for one
    /// chain): an f16 result per partition, row and output channel.
    pub fn partials_bytes(&self) -> usize {
        match self.partitions() {
            1 => 0,
            p => p * self.rows * self.nout() * 2,
        }
    }

    /// The shape of a `Gemm` node of `graph` (`None` for other ops).
    pub fn of_node(graph: &Graph, node: &Node) -> Option<GemmShape> {
        match &node.op {
            Op::Gemm {
                input,
                mode,
                mat,
                seed,
                partition,
                epilogue,
                ..
            } => Some(GemmShape {
                rows: graph.rows(*input),
                cin: graph.tensors[*input].channels,
                k: mat.k,
                n: mat.n,
                groups: mat.groups,
                mode: *mode,
                partition: *partition,
                epilogue: *epilogue,
                seed: seed.map(|s| graph.tensors[s.skip].dtype),
            }),
            _ => None,
        }
    }
}

/// The buffers of one GEMM: input E4 `[rows][cin]`, the matrix as `[groups][n][k]` E4 bytes, the
/// seed's skip `[rows][nout]` and f16 scale `[nout]`, the output (E4, or f16 for
/// [`Epilogue::F16`]), the raw f16 output of [`Epilogue::Dual`] and, for the E4 epilogues,
/// [`crate::numerics::tables::GEMM_EPILOGUE`] of the kernels' table (the weights of a device
/// hold one: `GpuWeights::gemm_table`), and for a split-K shape the partials scratch of
/// [`GemmShape::partials_bytes`] (its contents are not kept).
#[derive(Clone, Copy, Debug)]
pub struct GemmBindings {
    pub input: BufferBinding,
    pub matrix: BufferBinding,
    pub seed: Option<(BufferBinding, BufferBinding)>,
    pub out: BufferBinding,
    pub out_raw: Option<BufferBinding>,
    pub table: Option<BufferBinding>,
    pub partials: Option<BufferBinding>,
}

/// `b` moved down to the device's storage-buffer offset alignment, and the skew in bytes.
pub(super) fn align_down(ctx: &GpuContext, b: BufferBinding) -> (BufferBinding, u64) {
    let align = ctx
        .capabilities()
        .min_storage_buffer_offset_alignment
        .max(1);
    let skew = b.offset % align;
    (
        BufferBinding {
            buffer: b.buffer,
            offset: b.offset - skew,
            range: b.range + skew,
        },
        skew,
    )
}

/// Tile choice: 64 columns per workgroup when N allows it, else 32; the workgroup has `4 * BN`
/// invocations of 8 x 4 (or 4 x 4) outputs each. `tiles` counts the GEMM's 64 x 64 tiles (every
/// group and split-K partition included), `chain` is the K of one chain (the partition). See
/// [`NARROW_BELOW`] and [`NARROW_CHAIN`] for the RTZ builds.
fn tile(n: usize, tiles: usize, chain: usize, rtz: bool) -> u32 {
    if n % 64 == 0 && !(rtz && tiles < NARROW_BELOW && chain <= NARROW_CHAIN) {
        64
    } else {
        32
    }
}

/// RTZ builds: a GEMM with fewer 64 x 64 tiles than this (a few waves of workgroups on the
/// H200) and chains of at most [`NARROW_CHAIN`] takes 32-column tiles (`gemm_rtz_narrow`, half
/// the shared memory per workgroup): the short tensors of the deep levels keep more of the GPU
/// busy. H200 1080p: the L1-L4 GEMMs 1.05-1.2x faster than with 64-column tiles; frame 236.6 ms
/// with this threshold, 237.4 with 1000, 241.7 with 64-column tiles everywhere.
const NARROW_BELOW: usize = 3000;

/// Chains (K, or the split-K partition) longer than this keep 64-column tiles: the ViT's
/// 1024-long chains ran 2-3 % faster with them, its 512-long ones 5 % slower (H200 1080p).
const NARROW_CHAIN: usize = 512;

/// The GEMM kernel for tiles of `bn` columns, RTZ build (`rtz`, see
/// [`KernelPolicy::rtz_terms`]) or portable, and its rows per workgroup (`16 * GEMM_TM` of the
/// build: 4 x 4 outputs per invocation in the RTZ builds, 8 x 4 in the portable one). 32-column
/// tiles take the RTZ build that keeps operand values as halves (less shared memory; see
/// `gemm_rtz_narrow.comp`).
fn gemm_shader(rtz: bool, bn: u32) -> (&'static str, u32) {
    match (rtz, bn) {
        (true, 32) => ("nr/gemm_rtz_narrow", 64),
        (true, _) => ("nr/gemm_rtz", 64),
        (false, _) => ("nr/gemm", 128),
    }
}

/// Prepare a grouped FP8 GEMM (see `shaders/nr/gemm.comp`).
pub fn prepare_gemm(
    ctx: &Arc<GpuContext>,
    arena: &mut DescriptorArena,
    policy: KernelPolicy,
    profiles: Profiles,
    s: &GemmShape,
    b: &GemmBindings,
) -> Result<Dispatch, GpuError> {
    let (p, conv) = fp8_spec(&profiles.fp8)?;
    if s.k == 0 || s.k % 16 != 0 || s.n == 0 || s.n % 32 != 0 || s.groups == 0 || s.rows == 0 {
        return Err(invalid(
            "gemm shape",
            format!("{s:?}: needs rows, groups > 0, K a multiple of 16 and N a multiple of 32"),
        ));
    }
    let k_in = match s.mode {
        InputMode::Shared => s.k,
        InputMode::Split => s.k * s.groups,
    };
    if s.cin % 16 != 0 || s.cin < k_in {
        return Err(invalid(
            "gemm shape",
            format!("{s:?}: input rows of {} channels cannot feed K", s.cin),
        ));
    }
    let nout = s.nout();
    let out_elem = if s.epilogue == Epilogue::F16 { 2 } else { 1 };
    need("gemm input", &b.input, (s.rows * s.cin) as u64)?;
    need("gemm matrix", &b.matrix, (s.groups * s.n * s.k) as u64)?;
    need("gemm output", &b.out, (s.rows * nout * out_elem) as u64)?;
    let raw = match (s.epilogue, b.out_raw) {
        (Epilogue::Dual, Some(r)) => {
            need("gemm raw output", &r, (s.rows * nout * 2) as u64)?;
            r
        }
        (Epilogue::Dual, None) => {
            return Err(invalid(
                "gemm bindings",
                "the dual epilogue needs a raw output".into(),
            ))
        }
        _ => b.out,
    };
    let table = match (s.epilogue, b.table) {
        (Epilogue::F16, _) => b.out,
        (_, Some(t)) => {
            need(
                "gemm epilogue table",
                &t,
                tables::GEMM_EPILOGUE.len() as u64,
            )?;
            t
        }
        (_, None) => {
            return Err(invalid(
                "gemm bindings",
                "the E4 epilogues need the epilogue table".into(),
            ))
        }
    };
    let (seed_kind, skip, scale, scale_skew) = match (s.seed, b.seed) {
        (None, _) => (0u32, b.out, b.out, 0),
        (Some(dt), Some((skip, scale))) => {
            let kind = match dt {
                DType::E4 => 1,
                DType::F16 => 2,
                DType::F32 => {
                    return Err(invalid(
                        "gemm seed",
                        "an f32 skip tensor is not part of the network".into(),
                    ))
                }
            };
            need("gemm skip", &skip, (s.rows * nout * dt.size()) as u64)?;
            need("gemm scale", &scale, (nout * 2) as u64)?;
            let (scale, skew) = align_down(ctx, scale);
            if skew % 2 != 0 {
                return Err(invalid(
                    "gemm scale",
                    format!("offset {} is not a multiple of 2", scale.offset + skew),
                ));
            }
            (kind, skip, scale, skew / 2)
        }
        (Some(_), None) => {
            return Err(invalid(
                "gemm bindings",
                "a seeded GEMM needs skip and scale bindings".into(),
            ))
        }
    };
    let part = match s.partition {
        Some(q) if q > 0 && q < s.k => {
            if q % 16 != 0 {
                return Err(invalid(
                    "gemm shape",
                    format!("split-K partition {q} is not a multiple of 16"),
                ));
            }
            q
        }
        _ => s.k,
    };
    let epi = match s.epilogue {
        Epilogue::SiluE4 => 0,
        Epilogue::E4 => 1,
        Epilogue::F16 => 2,
        Epilogue::Dual => 3,
    };
    let parts = s.partitions();
    let partials = match (parts, b.partials) {
        (1, _) => None,
        (_, Some(pb)) => {
            need("gemm partials", &pb, s.partials_bytes() as u64)?;
            Some(pb)
        }
        (_, None) => {
            return Err(invalid(
                "gemm bindings",
                format!(
                    "a split-K GEMM ({parts} partitions) needs a partials scratch binding of {} \
                     bytes",
                    s.partials_bytes()
                ),
            ))
        }
    };
    let rtz = policy.rtz_terms(p);
    let tiles = s.rows.div_ceil(64) * s.n.div_ceil(64) * s.groups * parts;
    // A cooperative-matrix tile larger than the base one runs one row tile per workgroup.
    let mut big_tile = false;
    let (bn, bm, mut desc) = if policy.tensor_cores() {
        // The device's MMA is the profile (the tensor route identified it as H25 before
        // choosing this policy); the kernel cannot compute any other.
        if profiles.fp8 != Profile::H25 {
            return Err(invalid(
                "gemm profile",
                format!(
                    "the cooperative-matrix GEMM computes h25 only, not `{}`",
                    profiles.fp8.name
                ),
            ));
        }
        let caps = ctx.capabilities();
        let limits = (
            caps.max_compute_shared_memory_size,
            caps.max_compute_work_group_invocations,
        );
        let t = CoopmatTile::choose(s, policy, limits);
        let desc = PipelineDesc::new(&policy.tile_shader("nr/gemm_coopmat"), 7, PUSH_BYTES)
            .with_spec(SpecConstant::u32(0, t.cols()))
            .with_spec(SpecConstant::u32(9, t.subgroup_rows))
            .with_spec(SpecConstant::u32(10, t.subgroup_cols))
            .with_spec(SpecConstant::u32(11, t.invocations()));
        big_tile = t != CoopmatTile::base(s.n);
        (t.cols(), t.rows(), desc)
    } else {
        let bn = tile(s.n, tiles, part, rtz);
        let (shader, bm) = gemm_shader(rtz, bn);
        let desc = PipelineDesc::new(shader, 7, PUSH_BYTES)
            .with_spec(SpecConstant::u32(0, bn))
            .with_spec(SpecConstant::u32(1, 4 * bn))
            .with_spec(SpecConstant::i32(2, p))
            .with_spec(SpecConstant::u32(3, conv));
        (bn, bm, desc)
    };
    let row_tiles = s.rows.div_ceil(bm as usize);
    let others = (s.n / bn as usize) * s.groups * parts;
    // Several row tiles per workgroup for the seeded cooperative-matrix GEMMs and those of one
    // K step: on an H100 the loop took the full-resolution projections from 0.75 to 0.51 ms
    // (its prefetch of the next tile's skip words is the gain) and slowed the other unseeded
    // GEMMs (docs/performance.md, session 15); a GEMM of one K step keeps its B tile in shared
    // memory for all its tiles, which took the QKV at L0 from 1.07 to 0.91 ms on an H200
    // (session 16).
    let per_workgroup = match policy.gemm_tiles() {
        _ if !policy.tensor_cores() || big_tile || (seed_kind == 0 && s.k > COOPMAT_BK) => 1,
        0 => tiles_per_workgroup(row_tiles, others),
        t => (t as usize).min(row_tiles.max(1)),
    };
    if rtz || policy.tensor_cores() {
        // The RTZ build specializes on these (see gemm.glsl); the portable one reads them from
        // the push constants only, so that one pipeline serves every GEMM of a tile.
        desc = desc
            .with_spec(SpecConstant::u32(4, epi))
            .with_spec(SpecConstant::u32(5, seed_kind))
            .with_spec(SpecConstant::u32(6, (parts > 1) as u32));
    }
    if policy.tensor_cores() {
        desc = desc
            .with_spec(SpecConstant::u32(7, (per_workgroup > 1) as u32))
            .with_spec(SpecConstant::u32(8, gemm_ahead(part, per_workgroup)));
    }
    let pipeline = ctx.pipeline(&desc)?;
    // A split-K GEMM writes its partials where the raw output goes (binding 5).
    let set = arena.allocate(
        &pipeline,
        &[
            b.input,
            b.matrix,
            skip,
            scale,
            b.out,
            partials.unwrap_or(raw),
            table,
        ],
    )?;
    let astride = match s.mode {
        InputMode::Shared => 0,
        InputMode::Split => s.k,
    };
    let push = words(&[
        s.rows as u32,
        s.cin as u32,
        s.k as u32,
        s.n as u32,
        nout as u32,
        astride as u32,
        part as u32,
        scale_skew as u32,
        epi,
        seed_kind,
    ]);
    let groups = [
        row_tiles.div_ceil(per_workgroup) as u32,
        (s.n / bn as usize) as u32,
        (s.groups * parts) as u32,
    ];
    let then = match partials {
        Some(pb) => Some(Box::new(prepare_partial_sum(
            ctx, arena, s, epi, pb, b.out, raw, table,
        )?)),
        None => None,
    };
    Ok(Dispatch {
        pipeline,
        set,
        push,
        groups,
        then,
    })
}

/// The workgroup of the cooperative-matrix GEMM (`gemm_coopmat.glsl`): `subgroup_rows` x
/// `subgroup_cols` subgroups, each 32 rows x `subgroup_width` columns of the output tile.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CoopmatTile {
    /// Subgroups down the tile (`SGR`): 2 or 4.
    pub subgroup_rows: u32,
    /// Subgroups across the tile (`SGC`): 2 or 4.
    pub subgroup_cols: u32,
    /// Columns per subgroup: 16 or 32.
    pub subgroup_width: u32,
}

impl CoopmatTile {
    /// 64 rows x 64 columns where N allows, else x 32: four subgroups.
    pub const fn base(n: usize) -> CoopmatTile {
        CoopmatTile {
            subgroup_rows: 2,
            subgroup_cols: 2,
            subgroup_width: if n % 64 == 0 { 32 } else { 16 },
        }
    }

    /// The tile for GEMM `s` under `policy` on a device with `limits`
    /// (`maxComputeSharedMemorySize`, `maxComputeWorkGroupInvocations`): the policy's subgroups
    /// where it names them (2 or 4 each), else the base tile; the base tile also for other
    /// counts and wherever the larger one does not divide the columns or exceeds the device's
    /// shared memory or invocations per workgroup. The recorder's own choice is the base tile:
    /// on an H100 at 1080p the larger workgroups were no faster than it (docs/performance.md,
    /// session 26).
    pub fn choose(s: &GemmShape, policy: KernelPolicy, limits: (u32, u32)) -> CoopmatTile {
        let base = CoopmatTile::base(s.n);
        let want = match policy.gemm_subgroups() {
            (0, 0) => base,
            (rows, cols) => CoopmatTile {
                subgroup_rows: rows,
                subgroup_cols: cols,
                ..base
            },
        };
        // The kernel's staging loops are written for 2 or 4 subgroups each way.
        let fits = matches!(want.subgroup_rows, 2 | 4)
            && matches!(want.subgroup_cols, 2 | 4)
            && s.n % want.cols() as usize == 0
            && want.shared_bytes() <= limits.0
            && want.invocations() <= limits.1;
        if fits {
            want
        } else {
            base
        }
    }

    /// Shared memory of `gemm_coopmat.glsl` with this tile, bytes: the B tile (`BN` columns x
    /// `TS` = 20 words) and the A tile, which shares its place with the seed and result tile
    /// (`BM` rows x `CS` = `BN` / 2 + 4 words, the larger of the two).
    pub const fn shared_bytes(&self) -> u32 {
        let bn = self.cols();
        4 * (bn * 20 + self.rows() * (bn / 2 + 4))
    }

    /// Output rows per workgroup.
    pub const fn rows(&self) -> u32 {
        32 * self.subgroup_rows
    }

    /// Output columns per workgroup (`BN`).
    pub const fn cols(&self) -> u32 {
        self.subgroup_width * self.subgroup_cols
    }

    /// Invocations per workgroup.
    pub const fn invocations(&self) -> u32 {
        32 * self.subgroup_rows * self.subgroup_cols
    }
}

/// K steps the cooperative-matrix GEMM loads ahead (`AHEAD` in `gemm_coopmat.glsl`): 2 for a
/// workgroup of one row tile whose chain (`chain` K: the whole K or a split-K partition) has at
/// least two steps, else 1. On an H100 at 1080p this took the ViT's split-K GEMMs, the split-512
/// level's and the expert blocks' W3 from 5.7 to 4.9 ms for 8 more registers; the unseeded QKV
/// and FFN-input GEMMs moved by 0.01-0.03 ms (docs/performance.md, session 21).
fn gemm_ahead(chain: usize, per_workgroup: usize) -> u32 {
    if per_workgroup == 1 && chain > COOPMAT_BK {
        2
    } else {
        1
    }
}

/// Row tiles per workgroup of the cooperative-matrix GEMM (`gemm_coopmat.glsl` runs tiles x, x +
/// X, ... of a grid X wide, loading the next tile's first bytes during this one): up to 8 where
/// the GEMM has many tiles, keeping at least [`MIN_WORKGROUPS`] workgroups (about four waves of
/// them on the 132 cores of an H100 or H200 at these kernels' occupancy), else 1.
fn tiles_per_workgroup(row_tiles: usize, others: usize) -> usize {
    (row_tiles * others / MIN_WORKGROUPS).clamp(1, 8)
}

/// The fewest workgroups [`tiles_per_workgroup`] leaves a GEMM.
const MIN_WORKGROUPS: usize = 4096;

/// K per step of the cooperative-matrix GEMM (`BK` in `gemm_coopmat.glsl`): a GEMM with no more
/// K than this multiplies every row tile by the same B tile.
const COOPMAT_BK: usize = 32;

/// The second step of a split-K GEMM (`gemm_sum.comp`): `partials` summed in partition order,
/// the epilogue `epi` into `out` (and `raw` for the dual epilogue; `table` for the E4 ones).
#[allow(clippy::too_many_arguments)]
fn prepare_partial_sum(
    ctx: &Arc<GpuContext>,
    arena: &mut DescriptorArena,
    s: &GemmShape,
    epi: u32,
    partials: BufferBinding,
    out: BufferBinding,
    raw: BufferBinding,
    table: BufferBinding,
) -> Result<Dispatch, GpuError> {
    let outputs = s.rows * s.nout();
    let outputs32 = u32::try_from(outputs).map_err(|_| {
        invalid(
            "gemm shape",
            format!("{s:?}: {outputs} outputs exceed 32 bits"),
        )
    })?;
    let pipeline = ctx.pipeline(&PipelineDesc::new("nr/gemm_sum", 4, PUSH_BYTES))?;
    let table = if s.epilogue == Epilogue::F16 {
        partials
    } else {
        table
    };
    let set = arena.allocate(&pipeline, &[partials, out, raw, table])?;
    Ok(Dispatch {
        pipeline,
        set,
        push: words(&[outputs32, s.partitions() as u32, epi]),
        groups: super::elementwise::grid(ctx, "gemm partial sum", (outputs / 4) as u64)?,
        then: None,
    })
}

/// Prepare and record a grouped FP8 GEMM.
pub fn record_gemm(
    ctx: &Arc<GpuContext>,
    rec: &mut Recorder<'_>,
    arena: &mut DescriptorArena,
    policy: KernelPolicy,
    profiles: Profiles,
    shape: &GemmShape,
    bindings: &GemmBindings,
) -> Result<(), GpuError> {
    prepare_gemm(ctx, arena, policy, profiles, shape, bindings)?.record(rec)
}

#[allow(clippy::too_many_arguments)]
/// Prepare the input adapter: `features` f32 `[rows][16]`, `weights` f16 `[32][16]` (output-major),
/// `out_raw` f16 `[rows][32]`, `out` E4 `[rows][32]`. Under a policy with tensor cores (the
/// tensor route, `h25` only) the cooperative-matrix kernel `adapter_coopmat` runs it, the same
/// bytes.
pub fn prepare_adapter(
    ctx: &Arc<GpuContext>,
    arena: &mut DescriptorArena,
    policy: KernelPolicy,
    profiles: Profiles,
    rows: usize,
    features: BufferBinding,
    weights: BufferBinding,
    out_raw: BufferBinding,
    out: BufferBinding,
) -> Result<Dispatch, GpuError> {
    let (g, p) = f16_spec(&profiles.f16)?;
    need("adapter features", &features, (rows * 16 * 4) as u64)?;
    need("adapter weights", &weights, (32 * 16 * 2) as u64)?;
    need("adapter raw output", &out_raw, (rows * 32 * 2) as u64)?;
    need("adapter output", &out, (rows * 32) as u64)?;
    let (desc, per_group) = if policy.tensor_cores() {
        // The device's MMA is the profile (identified by the tensor route's probe).
        if profiles.f16 != Profile::H25 {
            return Err(invalid(
                "adapter",
                format!(
                    "the cooperative-matrix kernel computes h25 only, not `{}`",
                    profiles.f16.name
                ),
            ));
        }
        (
            PipelineDesc::new(&policy.tile_shader("nr/adapter_coopmat"), 4, PUSH_BYTES),
            ADAPTER_COOPMAT_ROWS_PER_GROUP,
        )
    } else {
        (
            PipelineDesc::new("nr/adapter", 4, PUSH_BYTES)
                .with_spec(SpecConstant::i32(0, g))
                .with_spec(SpecConstant::i32(1, p)),
            ADAPTER_ROWS_PER_GROUP,
        )
    };
    let pipeline = ctx.pipeline(&desc)?;
    let set = arena.allocate(&pipeline, &[features, weights, out_raw, out])?;
    Ok(Dispatch {
        pipeline,
        set,
        push: words(&[rows as u32]),
        groups: [(rows as u64).div_ceil(per_group) as u32, 1, 1],
        then: None,
    })
}

/// Prepare and record the input adapter (see [`prepare_adapter`]).
#[allow(clippy::too_many_arguments)]
pub fn record_adapter(
    ctx: &Arc<GpuContext>,
    rec: &mut Recorder<'_>,
    arena: &mut DescriptorArena,
    policy: KernelPolicy,
    profiles: Profiles,
    rows: usize,
    features: BufferBinding,
    weights: BufferBinding,
    out_raw: BufferBinding,
    out: BufferBinding,
) -> Result<(), GpuError> {
    prepare_adapter(
        ctx, arena, policy, profiles, rows, features, weights, out_raw, out,
    )?
    .record(rec)
}

/// Prepare the head: `input` raw f16 `[rows][32]`, `weights` f16 `[4][32]` (output-major),
/// `out` f32 `[rows][4]`.
pub fn prepare_head(
    ctx: &Arc<GpuContext>,
    arena: &mut DescriptorArena,
    profiles: Profiles,
    rows: usize,
    input: BufferBinding,
    weights: BufferBinding,
    out: BufferBinding,
) -> Result<Dispatch, GpuError> {
    let (g, p) = f16_spec(&profiles.f16)?;
    need("head input", &input, (rows * 32 * 2) as u64)?;
    need("head weights", &weights, (4 * 32 * 2) as u64)?;
    need("head output", &out, (rows * 4 * 4) as u64)?;
    let desc = PipelineDesc::new("nr/head", 3, PUSH_BYTES)
        .with_spec(SpecConstant::i32(0, g))
        .with_spec(SpecConstant::i32(1, p));
    let pipeline = ctx.pipeline(&desc)?;
    let set = arena.allocate(&pipeline, &[input, weights, out])?;
    Ok(Dispatch {
        pipeline,
        set,
        push: words(&[rows as u32]),
        groups: [(rows as u64).div_ceil(HEAD_ROWS_PER_GROUP) as u32, 1, 1],
        then: None,
    })
}

/// Prepare and record the head (see [`prepare_head`]).
#[allow(clippy::too_many_arguments)]
pub fn record_head(
    ctx: &Arc<GpuContext>,
    rec: &mut Recorder<'_>,
    arena: &mut DescriptorArena,
    profiles: Profiles,
    rows: usize,
    input: BufferBinding,
    weights: BufferBinding,
    out: BufferBinding,
) -> Result<(), GpuError> {
    prepare_head(ctx, arena, profiles, rows, input, weights, out)?.record(rec)
}

/// Prepare the kernel of a GEMM-family node (`Gemm`, `Adapter`, `Head`) of `graph` over the
/// token rows `band` of its tensors (all of them for one launch; see `bands`), with tensor
/// bindings from `tensor` (each holding rows from `origin(t)` on: 0 but for a strip's band-local
/// tensors, see `strips`), weights from `weights` and, for a split-K GEMM, the partials scratch
/// `partials` ([`GemmShape::partials_bytes`]; a band takes its rows' share); `Ok(None)` for every
/// other op (the route prepares those: `nr::route::exact`).
#[allow(clippy::too_many_arguments)]
pub fn prepare_node(
    ctx: &Arc<GpuContext>,
    arena: &mut DescriptorArena,
    policy: KernelPolicy,
    profiles: Profiles,
    graph: &Graph,
    node: &Node,
    weights: &GpuWeights,
    tensor: &dyn Fn(TensorId) -> BufferBinding,
    origin: &dyn Fn(TensorId) -> u64,
    partials: Option<BufferBinding>,
    band: Band,
) -> Result<Option<Dispatch>, GpuError> {
    let rows = u64::from(band.start)..u64::from(band.end);
    // The band's rows of tensor `t` (whose binding holds rows from its origin on).
    let sub = |t: TensorId| {
        let o = origin(t).min(rows.start);
        sub_binding(tensor(t), rows.start - o..rows.end - o, row_bytes(graph, t))
    };
    Ok(Some(match &node.op {
        Op::Gemm {
            input,
            mat,
            seed,
            epilogue,
            out,
            out_raw,
            ..
        } => {
            let mut shape = GemmShape::of_node(graph, node)
                .ok_or_else(|| invalid(&node.label, "not a GEMM node".into()))?;
            shape.rows = band.len() as usize;
            let seed = match seed {
                Some(s) => Some((
                    sub(s.skip),
                    weights.binding(s.scale, (shape.nout() * 2) as u64)?,
                )),
                None => None,
            };
            // A band's partials: `[partition][band rows][nout]`, after those of the rows before.
            let partials = partials.map(|p| {
                let per_row = (shape.partitions() * shape.nout() * 2) as u64;
                BufferBinding {
                    buffer: p.buffer,
                    offset: p.offset + rows.start * per_row,
                    range: (rows.end - rows.start) * per_row,
                }
            });
            let bindings = GemmBindings {
                input: sub(*input),
                matrix: weights.matrix(mat)?,
                seed,
                out: sub(*out),
                out_raw: out_raw.map(sub),
                table: match epilogue {
                    Epilogue::F16 => None,
                    _ => Some(weights.gemm_table()?),
                },
                partials,
            };
            prepare_gemm(ctx, arena, policy, profiles, &shape, &bindings)?
        }
        Op::Adapter {
            input,
            weights: w,
            out_raw,
            out,
        } => prepare_adapter(
            ctx,
            arena,
            policy,
            profiles,
            band.len() as usize,
            sub(*input),
            weights.f16_matrix(*w, 16, 32)?,
            sub(*out_raw),
            sub(*out),
        )?,
        Op::Head {
            input,
            weights: w,
            out,
        } => prepare_head(
            ctx,
            arena,
            profiles,
            band.len() as usize,
            sub(*input),
            weights.f16_matrix(*w, 32, 4)?,
            sub(*out),
        )?,
        _ => return Ok(None),
    }))
}

#[cfg(test)]
mod tests {
    use super::{gemm_ahead, tiles_per_workgroup, CoopmatTile, GemmShape, MIN_WORKGROUPS};
    use crate::nr::graph::{Epilogue, InputMode};
    use crate::nr::record::KernelPolicy;

    fn shape(rows: usize, k: usize, n: usize) -> GemmShape {
        GemmShape {
            rows,
            cin: k,
            k,
            n,
            groups: 1,
            mode: InputMode::Shared,
            partition: None,
            epilogue: Epilogue::E4,
            seed: None,
        }
    }

    /// The GEMM's workgroup: the base tile unless asked for another; a larger one only where
    /// it divides the columns and fits the device's shared memory and invocations, so that a
    /// device with lavapipe's 32 KiB never gets a 128 x 128 tile (45,056 bytes).
    #[test]
    fn gemm_workgroups_follow_the_columns_and_the_device_limits() {
        let h100 = (49_152, 1024);
        let lavapipe = (32_768, 1024);
        let tensor = KernelPolicy::PORTABLE.with_emulated_tiles();
        let base = CoopmatTile::base(1024);
        assert_eq!(
            (base.rows(), base.cols(), base.invocations()),
            (64, 64, 128)
        );
        assert_eq!(base.shared_bytes(), 14_336);
        let narrow = CoopmatTile::base(96);
        assert_eq!((narrow.rows(), narrow.cols()), (64, 32));
        let s = shape(640, 1024, 4096);
        for (rows, cols, want) in [
            (4, 2, (128, 64, 256, 23_552)),
            (2, 4, (64, 128, 256, 27_648)),
            (4, 4, (128, 128, 512, 45_056)),
        ] {
            let t = CoopmatTile::choose(&s, tensor.with_gemm_subgroups(rows, cols), h100);
            assert_eq!(
                (t.rows(), t.cols(), t.invocations(), t.shared_bytes()),
                want
            );
        }
        // Too much shared memory for lavapipe, too many invocations, columns not divisible.
        let big = tensor.with_gemm_subgroups(4, 4);
        assert_eq!(CoopmatTile::choose(&s, big, lavapipe), base);
        assert_eq!(CoopmatTile::choose(&s, big, (49_152, 256)), base);
        let wide = tensor.with_gemm_subgroups(2, 4);
        assert_eq!(
            CoopmatTile::choose(&shape(640, 1024, 192), wide, h100),
            CoopmatTile::base(192)
        );
        // Counts other than 2 and 4 keep the base tile.
        for (rows, cols) in [(1, 2), (3, 2), (2, 8), (8, 4)] {
            let odd = tensor.with_gemm_subgroups(rows, cols);
            assert_eq!(CoopmatTile::choose(&s, odd, h100), base, "{rows} x {cols}");
        }
        // 32-column subgroups need N a multiple of 64; N = 96 keeps 16-column subgroups.
        let t = CoopmatTile::choose(&shape(640, 32, 96), tensor.with_gemm_subgroups(4, 2), h100);
        assert_eq!((t.rows(), t.cols()), (128, 32));
    }

    /// Two K steps ahead only where a workgroup runs one row tile over a chain of two steps or
    /// more (the loop over row tiles has its own prefetch of the next tile).
    #[test]
    fn loads_two_steps_ahead_for_long_chains_of_one_tile() {
        // The ViT's contraction (partitions of 1024), the split-512 level's 512x512, W3 at C128.
        for chain in [1024, 512, 256, 128, 64] {
            assert_eq!(gemm_ahead(chain, 1), 2, "{chain}");
            assert_eq!(gemm_ahead(chain, 3), 1, "{chain}");
        }
        // One step: nothing further to load.
        for chain in [16, 32] {
            assert_eq!(gemm_ahead(chain, 1), 1, "{chain}");
        }
    }

    /// The full-resolution GEMMs get several row tiles per workgroup, the small ones one; every
    /// grid covers every tile and keeps at least MIN_WORKGROUPS workgroups where it had them.
    #[test]
    fn row_tiles_per_workgroup() {
        // 1920x1080's field (2.2 million rows, 34,560 tiles of 64) with one column tile.
        assert_eq!(tiles_per_workgroup(34_560, 1), 8);
        // A C256 level: 540 row tiles, 4 column tiles.
        assert_eq!(tiles_per_workgroup(540, 4), 1);
        for (rows, others) in [
            (34_560, 1),
            (34_560, 2),
            (8_640, 1),
            (8_640, 3),
            (100, 1),
            (1, 1),
        ] {
            let per = tiles_per_workgroup(rows, others);
            assert!((1..=8).contains(&per));
            let grid = rows.div_ceil(per);
            assert!(grid * per >= rows);
            if rows * others >= MIN_WORKGROUPS {
                assert!(
                    grid * others >= MIN_WORKGROUPS / 2,
                    "{rows} x {others}: {grid}"
                );
            }
        }
    }
}
