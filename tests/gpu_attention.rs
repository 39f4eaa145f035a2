//! The attention kernels (`nr/normalize`, `nr/window_attention`, `nr/vit_attention`) against the
//! CPU reference op (`Executor::exec` of the same graph node), byte for byte, on the harness's
//! device (lavapipe in CI) with the validation layer. The cooperative normalisation
//! (`nr/normalize_coop` here, `nr/normalize_native` on devices with native f16) runs the same
//! nodes and shapes whose (row, head) count is not a multiple of its workgroup's, checked against
//! `numerics::norm`, with the bytes around each output still poisoned.
//!
//! Inputs mix realistic codes with adversarial ones: zero rows, E4M3 subnormals, ±0, NaN codes,
//! saturated codes, f16 inf/NaN/subnormals, extreme priors and temperatures. Window attention
//! runs all four phases on a level whose edges cut windows (44x40), a 16-head level (12x12) and
//! the H25 profile; the ViT runs without padding (64 tokens) and with padding (96 tokens).
//! Every binding starts at an offset that is not a multiple of the storage-buffer alignment, and
//! outputs are poisoned first, so unwritten tokens fail too. The tensor route's fused window
//! staging (normalisation inside the attention) runs through its test build against
//! `numerics::norm`. The tensor route's window attention (cooperative matrices, h25) runs with
//! 1, 2, 3 and the recorder's count of windows per workgroup, on and off word offsets, where the
//! device has the tensor route (the H200 or H100; skipped elsewhere, and says so).

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::kernels::{policy, range, run_gpu, slice, sparse_model, Staging};
use common::{Harness, Rng};
use openngx::gpu::{DescriptorArena, GpuBuffer, GpuContext, GpuError, MemoryKind, Recorder};
use openngx::nr::geometry::{Geometry, Level, Size};
use openngx::nr::graph::{self, Graph, Node, Op};
use openngx::nr::record::attention::{
    record_normalize, record_vit_attention, record_window_attention, NormalizeKernel,
};
use openngx::nr::record::KernelPolicy;
use openngx::nr::reference::{Executor, TensorData, Weights};
use openngx::numerics::{tables, Profiles};

// ------------------------------------------------------------------------------------------------
// Support: test data (the sparse model and staging are in common::kernels).

/// E4M3 rows of `c` channels: mostly moderate codes, with zero rows, subnormal rows, rows of
/// any code (NaN codes and saturation included) and scattered ±0 / NaN codes.
fn e4_rows(rng: &mut Rng, rows: usize, c: usize) -> Vec<u8> {
    let mut v = Vec::with_capacity(rows * c);
    for _ in 0..rows {
        let kind = rng.below(16);
        for _ in 0..c {
            let code = match kind {
                0 => 0,                                              // zero row
                1 => rng.below(8) as u8 | (rng.below(2) as u8) << 7, // subnormals and ±0
                2 => rng.below(256) as u8,                           // anything
                _ => match rng.below(64) {
                    0 => 0x80,
                    1 => 0x7F,
                    2 => 0xFF,
                    3 => 0x7E,
                    // exponent field 0..=8 (|x| < 4), random mantissa and sign
                    _ => ((rng.below(9) << 3) | rng.below(8) | (rng.below(2) << 7)) as u8,
                },
            };
            v.push(code);
        }
    }
    v
}

/// Stored priors of `heads` heads: f16 halves in [-8, 0] mostly, some -126.5, subnormals, ±0,
/// a few large and non-finite values.
fn prior_bytes(rng: &mut Rng, heads: usize) -> Vec<u8> {
    let mut v = Vec::with_capacity(heads * 8192);
    for _ in 0..heads * 4096 {
        let h: u16 = match rng.below(256) {
            0 => 0xD7E8, // -126.5
            1 => 0x8000,
            2 => 0x0000,
            3 => rng.below(0x400) as u16 | 0x8000, // negative subnormal
            4 => 0x7C00,
            5 => 0xFC00,
            6 => 0x7E01,
            7 => 0x5A00 | rng.below(0x200) as u16, // large positive
            _ => openngx::numerics::f16::from_f32_rne(-(rng.below(8000) as f32) / 1000.0),
        };
        v.extend_from_slice(&h.to_le_bytes());
    }
    v
}

fn node<'g>(g: &'g Graph, label: &str) -> &'g Node {
    g.nodes
        .iter()
        .find(|n| n.label == label)
        .unwrap_or_else(|| panic!("graph has no node `{label}`"))
}

fn e4_of(out: &[(usize, TensorData)], t: usize) -> Vec<u8> {
    match out.iter().find(|(id, _)| *id == t) {
        Some((_, TensorData::E4(v))) => v.clone(),
        _ => panic!("reference did not write E4 tensor {t}"),
    }
}

/// Index and count of the first differing bytes, for a readable failure.
fn assert_bytes_eq(what: &str, got: &[u8], want: &[u8], row_bytes: usize) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    let diffs: Vec<usize> = (0..got.len()).filter(|&i| got[i] != want[i]).collect();
    assert!(
        diffs.is_empty(),
        "{what}: {} of {} bytes differ; first at row {} byte {}: gpu {:#04x} cpu {:#04x}",
        diffs.len(),
        got.len(),
        diffs[0] / row_bytes,
        diffs[0] % row_bytes,
        got[diffs[0]],
        want[diffs[0]]
    );
}

/// Distinct values in a byte tensor (to show the data is informative, not all one code).
fn distinct(v: &[u8]) -> usize {
    let mut seen = [false; 256];
    v.iter().for_each(|&b| seen[b as usize] = true);
    seen.iter().filter(|&&s| s).count()
}

// ------------------------------------------------------------------------------------------------
// Window attention

/// How a window-attention check runs its launch: the kernel policy and the skew of the q, k,
/// v, prior and output offsets from a 256-byte boundary (odd skews take the kernels' byte
/// paths, multiples of 4 their word paths).
#[derive(Clone, Copy)]
struct WindowRun {
    policy: KernelPolicy,
    skews: [usize; 5],
}

impl WindowRun {
    /// The harness device's exact-route policy, every offset off a word.
    fn portable(ctx: &GpuContext) -> WindowRun {
        WindowRun {
            policy: policy(ctx),
            skews: [1, 2, 3, 6, 5],
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn check_window(
    h: &Harness,
    ctx: &Arc<GpuContext>,
    g: &Graph,
    label: &str,
    profiles: Profiles,
    seed: u64,
    phase: usize,
    run: WindowRun,
) {
    let n = node(g, label);
    let Op::WindowAttention {
        q,
        k,
        v,
        heads,
        priors,
        phase: node_phase,
        out,
    } = n.op
    else {
        panic!("`{label}` is not window attention");
    };
    assert_eq!(node_phase, phase, "{label}: phase of the schedule");
    let (w, hh) = g.dims(q);
    let rows = w * hh;
    let c = heads * 32;
    let mut rng = Rng(seed);
    let (qd, kd, vd) = (
        e4_rows(&mut rng, rows, c),
        e4_rows(&mut rng, rows, c),
        e4_rows(&mut rng, rows, c),
    );
    let pr = prior_bytes(&mut rng, heads);

    let sm = sparse_model(&[(priors, pr.clone())]);
    let weights = Weights::new(&sm.model);
    let mut ex = Executor::new(g, &weights, profiles);
    ex.set_tensor(q, TensorData::E4(qd.clone())).unwrap();
    ex.set_tensor(k, TensorData::E4(kd.clone())).unwrap();
    ex.set_tensor(v, TensorData::E4(vd.clone())).unwrap();
    let t0 = Instant::now();
    let want = e4_of(&ex.exec(n).unwrap(), out);
    let cpu = t0.elapsed();

    let mut ins = Staging::default();
    let [q_skew, k_skew, v_skew, p_skew, o_skew] = run.skews;
    let sq = ins.put(&qd, q_skew);
    let sk = ins.put(&kd, k_skew);
    let sv = ins.put(&vd, v_skew);
    let sp = ins.put(&pr, p_skew); // weight records sit at any even offset
    let st = ins.put(&tables::gpu()[tables::ATTENTION], 0);
    let mut outs = Staging::default();
    let so = outs.reserve(rows * c, o_skew);
    let (got, took) = run_gpu(h, ctx, &ins, &outs, |rec, arena, i, o| {
        record_window_attention(
            ctx,
            rec,
            arena,
            run.policy,
            range(i, sq),
            range(i, sk),
            range(i, sv),
            range(i, sp),
            range(o, so),
            range(i, st),
            Size::new(w as u32, hh as u32),
            heads as u32,
            phase as u32,
            &profiles.fp8,
        )
    });
    println!(
        "{label} ({w}x{hh}, {heads} heads, phase {phase}, {}, skews {:?}, tensor {}, window \
         rows {}): gpu {took:?}, cpu {cpu:?}",
        profiles.name,
        run.skews,
        run.policy.tensor_cores(),
        run.policy.window_rows()
    );
    assert!(distinct(&want) > 100, "{label}: output is not informative");
    assert_bytes_eq(label, slice(&got, so), &want, c);
}

fn graph_64() -> Graph {
    graph::build(&Geometry::new(64, 64).unwrap())
}

#[test]
fn window_attention_all_phases() {
    let Some(h) = Harness::new() else { return };
    let ctx = h.context();
    let g = graph_64();
    // L2 of 64x64 is 44x40: the right column of windows is cut at every phase, the bottom row
    // at phases 1 and 3; blocks 9..12 run phases 0..3.
    for (i, block) in (9..=12).enumerate() {
        let label = format!("block-{block}.attention");
        let seed = 0x9001 + i as u64;
        let run = WindowRun::portable(&ctx);
        check_window(&h, &ctx, &g, &label, Profiles::NATIVE, seed, i, run);
    }
}

#[test]
fn window_attention_16_heads_h25() {
    let Some(h) = Harness::new() else { return };
    let ctx = h.context();
    // L4 (12x12, split-512 block, 16 heads) with the H200 profile (P = 25, widened subnormals).
    check_window(
        &h,
        &ctx,
        &graph_64(),
        "block-24.attention",
        Profiles::H25,
        0x9005,
        1,
        WindowRun::portable(&ctx),
    );
}

/// The tensor route's window attention (`window_attention_coopmat.glsl`) against the CPU
/// reference in h25: every phase of the 44x40 level with 4 heads and the 16-head 12x12 level,
/// with 1, 2, 3 and the recorder's count of window rows per workgroup (the loop that keeps the
/// prior and loads the next window ahead), q, k, v and the output on words (the loop's loads
/// ahead and word stores) and off them (the byte paths). The device's build where the probe
/// identifies h25 (the H200 or H100), else the emulated build (lavapipe: fewer cases, since
/// every emulated MMA runs lane by lane on the CPU).
#[test]
fn window_attention_coopmat_window_loop_h25() {
    let Some(h) = Harness::new() else { return };
    let ctx = h.context();
    let tiles = common::kernels::tile_policy(&ctx);
    let (rows_set, skews_set): (&[u32], &[[usize; 5]]) = if tiles.emulated_tiles() {
        (&[1, 3, 0], &[[0, 4, 8, 0, 0], [1, 2, 3, 6, 5]])
    } else {
        (
            &[1, 2, 3, 0],
            &[[0, 4, 8, 0, 0], [1, 2, 3, 6, 5], [0, 0, 0, 2, 4]],
        )
    };
    let g = graph_64();
    for &rows in rows_set {
        for &skews in skews_set {
            let run = WindowRun {
                policy: tiles.with_window_rows(rows),
                skews,
            };
            for (i, block) in (9..=12).enumerate() {
                let label = format!("block-{block}.attention");
                let seed = 0x9101 + 16 * rows as u64 + i as u64;
                check_window(&h, &ctx, &g, &label, Profiles::H25, seed, i, run);
            }
            check_window(
                &h,
                &ctx,
                &g,
                "block-24.attention",
                Profiles::H25,
                0x9201 + rows as u64,
                1,
                run,
            );
        }
    }
}

// ------------------------------------------------------------------------------------------------
// ViT attention

/// The ViT attention of `g` against the CPU reference in `profiles`, run under `policy` with q,
/// k, v and the output `skews` bytes into their staging buffers.
fn check_vit(
    h: &Harness,
    ctx: &Arc<GpuContext>,
    g: &Graph,
    profiles: Profiles,
    seed: u64,
    policy: KernelPolicy,
    skews: [usize; 4],
) {
    let label = "block-31.attention";
    let n = node(g, label);
    let Op::VitAttention {
        q,
        k,
        v,
        heads,
        out,
    } = n.op
    else {
        panic!("`{label}` is not ViT attention");
    };
    let tokens = g.rows(q);
    let c = heads * 32;
    let mut rng = Rng(seed);
    let (qd, kd, vd) = (
        e4_rows(&mut rng, tokens, c),
        e4_rows(&mut rng, tokens, c),
        e4_rows(&mut rng, tokens, c),
    );
    let sm = sparse_model(&[]);
    let weights = Weights::new(&sm.model);
    let mut ex = Executor::new(g, &weights, profiles);
    ex.set_tensor(q, TensorData::E4(qd.clone())).unwrap();
    ex.set_tensor(k, TensorData::E4(kd.clone())).unwrap();
    ex.set_tensor(v, TensorData::E4(vd.clone())).unwrap();
    let t0 = Instant::now();
    let want = e4_of(&ex.exec(n).unwrap(), out);
    let cpu = t0.elapsed();

    let mut ins = Staging::default();
    let sq = ins.put(&qd, skews[0]);
    let sk = ins.put(&kd, skews[1]);
    let sv = ins.put(&vd, skews[2]);
    let st = ins.put(&tables::gpu()[tables::ATTENTION], 0);
    let mut outs = Staging::default();
    let so = outs.reserve(tokens * c, skews[3]);
    let (got, took) = run_gpu(h, ctx, &ins, &outs, |rec, arena, i, o| {
        record_vit_attention(
            ctx,
            rec,
            arena,
            policy,
            range(i, sq),
            range(i, sk),
            range(i, sv),
            range(o, so),
            range(i, st),
            tokens as u32,
            heads as u32,
            &profiles.fp8,
        )
    });
    println!(
        "vit attention ({tokens} tokens, {heads} heads, {}, {}, skews {skews:?}): gpu {took:?}, \
         cpu {cpu:?}",
        profiles.name,
        policy.describe()
    );
    assert!(distinct(&want) > 100, "vit: output is not informative");
    assert_bytes_eq(label, slice(&got, so), &want, c);
}

#[test]
fn vit_attention_f13() {
    let Some(h) = Harness::new() else { return };
    let ctx = h.context();
    let g = graph_64();
    let l5 = g.geometry.level(Level::L(5));
    assert_eq!(l5.w * l5.h, 64, "64x64 has 64 ViT tokens");
    check_vit(&h, &ctx, &g, Profiles::NATIVE, 0x7001, policy(&ctx), SKEWED);
    // 640x320: L5 is 12x8 = 96 tokens, padded to 128 keys (32 zero rows removed at the end).
    let g = graph::build(&Geometry::new(640, 320).unwrap());
    let l5 = g.geometry.level(Level::L(5));
    assert_eq!(l5.w * l5.h, 96, "640x320 has 96 ViT tokens");
    check_vit(&h, &ctx, &g, Profiles::NATIVE, 0x7002, policy(&ctx), SKEWED);
}

#[test]
fn vit_attention_padded_h25() {
    let Some(h) = Harness::new() else { return };
    let ctx = h.context();
    let g = graph::build(&Geometry::new(640, 320).unwrap());
    check_vit(&h, &ctx, &g, Profiles::H25, 0x7003, policy(&ctx), SKEWED);
}

/// Offsets of q, k, v and the output off a word (the byte paths) and on one (k and v one key
/// block ahead, word stores).
const SKEWED: [usize; 4] = [3, 0, 7, 9];
const ALIGNED: [usize; 4] = [0, 4, 8, 0];

/// The tensor route's ViT attention (`vit_attention_coopmat.glsl`) at 640x320 (96 tokens: two
/// key blocks, the second padded) against the CPU reference in h25, with k and v on words (the
/// next block's words loading during this one) and off them. The device's build where the
/// probe identifies h25, else the emulated build (lavapipe).
#[test]
fn vit_attention_coopmat_h25() {
    let Some(h) = Harness::new() else { return };
    let ctx = h.context();
    let g = graph::build(&Geometry::new(640, 320).unwrap());
    let tiles = common::kernels::tile_policy(&ctx);
    for (i, skews) in [ALIGNED, SKEWED].into_iter().enumerate() {
        check_vit(&h, &ctx, &g, Profiles::H25, 0x7011 + i as u64, tiles, skews);
    }
}

// ------------------------------------------------------------------------------------------------
// Normalize

/// f16 QKV rows: moderate values, with zero heads, subnormals, ±0, inf, NaN and overflowing
/// squares.
fn qkv_rows(rng: &mut Rng, rows: usize, c3: usize) -> Vec<u16> {
    let mut v = Vec::with_capacity(rows * c3);
    for _ in 0..rows {
        let kind = rng.below(16);
        for _ in 0..c3 {
            let sign = (rng.below(2) as u16) << 15;
            let h = match kind {
                0 => sign,                                       // zero row (±0)
                1 => sign | rng.below(0x400) as u16,             // subnormal row
                2 => rng.below(0x10000) as u16,                  // anything (inf, NaN)
                3 => sign | (0x5C00 + rng.below(0x1C00) as u16), // squares overflow
                _ => match rng.below(128) {
                    0 => 0x7C00 | sign,
                    1 => 0x7E00,
                    2 => sign,
                    // exponent 2^-6 .. 2^2
                    _ => sign | (((9 + rng.below(8)) as u16) << 10) | rng.below(0x400) as u16,
                },
            };
            v.push(h);
        }
    }
    v
}

/// Temperatures of `heads` heads: values that round to f16 inf, 0, subnormals and NaN first,
/// then typical ones.
fn temperature_values(rng: &mut Rng, heads: usize) -> Vec<f32> {
    // Rounding to inf and to zero, an f16 subnormal, NaN; from 7 heads on a negative f32
    // subnormal (-0 as a half) and -inf.
    let special = [
        65520.0f32,
        1e-9,
        3e-6,
        -2.5,
        f32::NAN,
        0.333_333_34,
        -1.0e-40,
        f32::NEG_INFINITY,
    ];
    (0..heads)
        .map(|i| {
            special
                .get(i)
                .copied()
                .unwrap_or(1.5 + rng.below(4500) as f32 / 1000.0)
        })
        .collect()
}

/// Run the normalisation (`kernel`, or the device's choice with `None`) on `x` and return the
/// q, k, v bytes. Every output is poisoned first and bound with 32 more bytes than it needs
/// (a device with robust buffer access, lavapipe, would drop writes past the binding), which
/// must stay poisoned: the last workgroup's empty units store nothing. With `aligned` every
/// tensor starts on a 256-byte boundary (the subgroup builds move words); without it, the input
/// and the outputs start 2, 1, 2 and 3 bytes past one (they move halves and bytes).
#[allow(clippy::too_many_arguments)]
fn run_normalize(
    h: &Harness,
    ctx: &Arc<GpuContext>,
    kernel: Option<NormalizeKernel>,
    x: &[u16],
    tbytes: &[u8],
    rows: usize,
    heads: usize,
    vit: bool,
    tensor: bool,
    aligned: bool,
) -> ([Vec<u8>; 3], Duration) {
    let skew = |s: usize| if aligned { 0 } else { s };
    // The tensor route's policy takes the subgroup builds of the cooperative kernel.
    let run_policy = if tensor {
        policy(ctx).with_tensor_cores()
    } else {
        policy(ctx)
    };
    let c = heads * 32;
    let xb: Vec<u8> = x.iter().flat_map(|h| h.to_le_bytes()).collect();
    let mut ins = Staging::default();
    let sx = ins.put(&xb, skew(2));
    let st = ins.put(tbytes, 6); // f32 temperatures on a 2-aligned offset
    let srt = ins.put(&tables::gpu()[tables::NORMALIZE], 0);
    let mut outs = Staging::default();
    let (sq, sk, sv) = (
        outs.reserve(rows * c, skew(1)),
        outs.reserve(rows * c, skew(2)),
        outs.reserve(rows * c, skew(3)),
    );
    outs.reserve(32, 0); // poisoned guard after v
    let (got, took) = run_gpu(h, ctx, &ins, &outs, |rec, arena, i, o| {
        let (qkv, t, rt) = (range(i, sx), range(i, st), range(i, srt));
        let guarded = |slot: (u64, u64)| range(o, (slot.0, slot.1 + 32));
        let (q, k, v) = (guarded(sq), guarded(sk), guarded(sv));
        let (rows, heads) = (rows as u32, heads as u32);
        let kernel = kernel.unwrap_or_else(|| run_policy.normalize_kernel());
        record_normalize(
            ctx, rec, arena, run_policy, kernel, qkv, t, rt, q, k, v, rows, heads, vit,
        )
    });
    let outputs = [sq, sk, sv].map(|slot| {
        let end = (slot.0 + slot.1) as usize;
        assert!(
            got[end..end + 32].iter().all(|&b| b == 0xA5),
            "normalize ({rows} rows, {heads} heads): bytes written past an output"
        );
        slice(&got, slot).to_vec()
    });
    (outputs, took)
}

fn check_normalize(
    h: &Harness,
    ctx: &Arc<GpuContext>,
    g: &Graph,
    label: &str,
    seed: u64,
    kernel: Option<NormalizeKernel>,
) {
    let n = node(g, label);
    let Op::Normalize {
        qkv,
        heads,
        temperatures,
        vit,
        q,
        k,
        v,
    } = n.op
    else {
        panic!("`{label}` is not a normalisation");
    };
    let rows = g.rows(qkv);
    let c = heads * 32;
    let mut rng = Rng(seed);
    let x = qkv_rows(&mut rng, rows, 3 * c);
    let temps = temperature_values(&mut rng, heads);
    let tbytes: Vec<u8> = temps.iter().flat_map(|t| t.to_le_bytes()).collect();
    let sm = sparse_model(&[(temperatures, tbytes.clone())]);
    let weights = Weights::new(&sm.model);
    let mut ex = Executor::new(g, &weights, Profiles::NATIVE);
    ex.set_tensor(qkv, TensorData::F16(x.clone())).unwrap();
    let t0 = Instant::now();
    let res = ex.exec(n).unwrap();
    let cpu = t0.elapsed();

    // The subgroup layout's words where it is named; halves and bytes otherwise.
    let aligned = kernel == Some(NormalizeKernel::Subgroup);
    let (got, took) = run_normalize(
        h, ctx, kernel, &x, &tbytes, rows, heads, vit, false, aligned,
    );
    println!(
        "{label} ({rows} rows, {heads} heads, vit {vit}, {kernel:?}): gpu {took:?}, cpu {cpu:?}"
    );
    for ((name, t), got) in [("q", q), ("k", k), ("v", v)].into_iter().zip(&got) {
        let want = e4_of(&res, t);
        assert!(distinct(&want) > 100, "{label} {name}: not informative");
        assert_bytes_eq(&format!("{label} {name}"), got, &want, c);
    }
}

#[test]
fn normalize_window_and_vit() {
    let Some(h) = Harness::new() else { return };
    let ctx = h.context();
    let g = graph_64();
    check_normalize(&h, &ctx, &g, "block-9.normalize", 0x5001, None);
    check_normalize(&h, &ctx, &g, "block-31.normalize", 0x5002, None);
}

#[test]
fn normalize_cooperative_window_and_vit() {
    let Some(h) = Harness::new() else { return };
    let ctx = h.context();
    let g = graph_64();
    let coop = Some(NormalizeKernel::Cooperative);
    check_normalize(&h, &ctx, &g, "block-9.normalize", 0x5003, coop);
    check_normalize(&h, &ctx, &g, "block-31.normalize", 0x5004, coop);
}

/// The cooperative kernel on (rows, heads) counts that leave its last workgroup part-empty (4
/// units per workgroup), against `numerics::norm` per (row, head).
#[test]
fn normalize_cooperative_partial_workgroups() {
    let Some(h) = Harness::new() else { return };
    let ctx = h.context();
    check_partial_workgroups(&h, &ctx, NormalizeKernel::Cooperative, false);
}

/// Whether the device runs the subgroup layout of the normalisation; says why where it does not.
fn subgroup_normalize_runs(ctx: &GpuContext) -> bool {
    let caps = ctx.capabilities();
    let runs = NormalizeKernel::subgroups_fit(caps);
    if !runs {
        println!(
            "SKIP: the device lacks subgroups of 8 to 128 lanes with shuffles (subgroup size {}, \
             shuffles {}), which the subgroup builds of the normalisation need",
            caps.subgroup_size, caps.subgroup_shuffles
        );
    }
    runs
}

/// The same counts (16 units per workgroup: every count leaves the last one part-empty, and 1
/// and 7 rows leave whole subgroups empty) through the subgroup builds
/// (`nr/normalize_{rtz,native}_subgroup`: eight lanes per unit, sums through shuffles), with
/// aligned tensors (words) and skewed ones (halves and bytes), under the device's policy and the
/// tensor route's: the emulated-halves build on lavapipe (subgroups of 8), the fast build the
/// network runs on GPUs (32).
#[test]
fn normalize_subgroup_builds_partial_workgroups() {
    let Some(h) = Harness::new() else { return };
    let ctx = h.context();
    if !subgroup_normalize_runs(&ctx) {
        return;
    }
    for tensor in [false, true] {
        check_partial_workgroups(&h, &ctx, NormalizeKernel::Subgroup, tensor);
    }
}

/// The subgroup layout on a window block's and a ViT block's normalisation of the 64x64 graph.
#[test]
fn normalize_subgroup_window_and_vit() {
    let Some(h) = Harness::new() else { return };
    let ctx = h.context();
    if !subgroup_normalize_runs(&ctx) {
        return;
    }
    let g = graph_64();
    let sub = Some(NormalizeKernel::Subgroup);
    check_normalize(&h, &ctx, &g, "block-9.normalize", 0x5005, sub);
    check_normalize(&h, &ctx, &g, "block-31.normalize", 0x5006, sub);
}

fn check_partial_workgroups(
    h: &Harness,
    ctx: &Arc<GpuContext>,
    kernel: NormalizeKernel,
    tensor: bool,
) {
    use openngx::numerics::norm;
    for (rows, heads, vit, seed) in [
        (1, 1, false, 0x5101),
        (13, 1, true, 0x5102),
        (37, 3, false, 0x5103),
        (50, 5, true, 0x5104),
        (7, 6, false, 0x5105),
        (67, 1, false, 0x5106),
        (9, 8, true, 0x5107),
    ] {
        let c = heads * 32;
        let mut rng = Rng(seed);
        let x = qkv_rows(&mut rng, rows, 3 * c);
        let temps = temperature_values(&mut rng, heads);
        let tbytes: Vec<u8> = temps.iter().flat_map(|t| t.to_le_bytes()).collect();
        let mut want = [
            vec![0u8; rows * c],
            vec![0u8; rows * c],
            vec![0u8; rows * c],
        ];
        for r in 0..rows {
            for hd in 0..heads {
                let part = |p: usize| -> [u16; 32] {
                    let at = r * 3 * c + 96 * hd + 32 * p;
                    x[at..at + 32].try_into().unwrap()
                };
                let q = if vit {
                    norm::vit_q(&part(0), temps[hd])
                } else {
                    norm::window_q(&part(0), temps[hd])
                };
                let out = [q, norm::normalize_k(&part(1)), norm::publish_v(&part(2))];
                for (w, o) in want.iter_mut().zip(out) {
                    w[r * c + 32 * hd..r * c + 32 * hd + 32].copy_from_slice(&o);
                }
            }
        }
        // The subgroup builds also run with every tensor aligned (their word path).
        let placements: &[bool] = if kernel == NormalizeKernel::Subgroup {
            &[false, true]
        } else {
            &[false]
        };
        for &aligned in placements {
            let (got, took) = run_normalize(
                h,
                ctx,
                Some(kernel),
                &x,
                &tbytes,
                rows,
                heads,
                vit,
                tensor,
                aligned,
            );
            println!(
                "{rows} rows, {heads} heads, vit {vit}, {kernel:?}, tensor policy {tensor}, \
                 aligned {aligned}: gpu {took:?}"
            );
            for ((name, got), want) in ["q", "k", "v"].iter().zip(&got).zip(&want) {
                let what = format!("{rows} rows x {heads} heads {name} (aligned {aligned})");
                assert_bytes_eq(&what, got, want, c);
            }
        }
    }
}

/// The tensor route's fused window staging (`shaders/nr/window_stage.glsl`, run here by its test
/// build `test/window_stage_qkv`: cooperative matrices are not needed for the staging) against
/// `numerics::norm`: for every window and head of a shifted level whose edges cut windows, the
/// staged q' (queries in natural order), k' and v' (keys in physical order) are the E4M3 codes of
/// the normalisation widened to f16, and zero for tokens outside the level. What
/// `window_attention_coopmat_qkv.comp` stages before its products (those are the unfused
/// kernel's, proven on the H200).
#[test]
fn fused_window_staging_is_the_normalisation() {
    use openngx::gpu::PipelineDesc;
    use openngx::numerics::{e4m3, norm};
    let Some(h) = Harness::new() else { return };
    let ctx = h.context();
    if !ctx.capabilities().subgroup_shuffles {
        println!(
            "SKIP: the device has no subgroup shuffles (the tensor route's staging needs them)"
        );
        return;
    }
    for (w, ht, heads, (sx, sy), seed) in [
        (44u32, 40u32, 2usize, (4u32, 4u32), 0x5201u64),
        (16, 8, 1, (0, 0), 0x5202),
        (12, 12, 3, (4, 0), 0x5203),
    ] {
        let tokens = (w * ht) as usize;
        let c = 32 * heads;
        let mut rng = Rng(seed);
        let x = qkv_rows(&mut rng, tokens, 3 * c);
        let temps = temperature_values(&mut rng, heads);
        let tbytes: Vec<u8> = temps.iter().flat_map(|t| t.to_le_bytes()).collect();
        let xb: Vec<u8> = x.iter().flat_map(|h| h.to_le_bytes()).collect();
        let mut ins = Staging::default();
        let sx_ = ins.put(&xb, 0);
        let st = ins.put(&tbytes, 0);
        let stb = ins.put(&tables::gpu()[tables::ATTENTION], 0);
        let groups = [(w + sx).div_ceil(8), (ht + sy).div_ceil(8), heads as u32];
        let windows = (groups[0] * groups[1]) as usize;
        let mut outs = Staging::default();
        let so = outs.reserve(windows * heads * 3 * 64 * 64, 0);
        let (got, took) = run_gpu(&h, &ctx, &ins, &outs, |rec, arena, i, o| {
            let pipeline = ctx.pipeline(&PipelineDesc::new("test/window_stage_qkv", 4, 28))?;
            let set = arena.allocate(
                &pipeline,
                &[range(i, sx_), range(i, st), range(i, stb), range(o, so)],
            )?;
            let push: Vec<u8> = [w, ht, heads as u32, sx, sy, 0, 0]
                .iter()
                .flat_map(|v| v.to_le_bytes())
                .collect();
            rec.run(&pipeline, set, &push, groups)
        });
        let got = slice(&got, so);
        println!("{w}x{ht}, {heads} heads, shift ({sx}, {sy}): gpu {took:?}");
        // The expected staging: each token's q', k', v' (numerics::norm) widened.
        let part = |t: usize, hd: usize, p: usize| -> [u16; 32] {
            let at = t * 3 * c + 96 * hd + 32 * p;
            x[at..at + 32].try_into().unwrap()
        };
        let physical_to_natural = |p: usize| {
            let r = p & 15;
            let y = (p >> 5) * 4 + (r >> 2);
            let x = ((p >> 4) & 1) * 4 + (r & 3);
            y * 8 + x
        };
        let (mut checked, mut differ, mut outside) = (0usize, 0usize, 0usize);
        for gy in 0..groups[1] as usize {
            for gx in 0..groups[0] as usize {
                let token = |t: usize| {
                    let x = (gx * 8 + (t & 7)) as i64 - i64::from(sx);
                    let y = (gy * 8 + (t >> 3)) as i64 - i64::from(sy);
                    (x >= 0 && y >= 0 && x < i64::from(w) && y < i64::from(ht))
                        .then(|| (y * i64::from(w) + x) as usize)
                };
                for (hd, &temp) in temps.iter().enumerate() {
                    let wg = (gy * groups[0] as usize + gx) * heads + hd;
                    for p in 0..3 {
                        for r in 0..64 {
                            let tok = if p == 0 {
                                token(r)
                            } else {
                                token(physical_to_natural(r))
                            };
                            let codes = match tok {
                                None => {
                                    outside += 1;
                                    [0u8; 32]
                                }
                                Some(t) => match p {
                                    0 => norm::window_q(&part(t, hd, 0), temp),
                                    1 => norm::normalize_k(&part(t, hd, 1)),
                                    _ => norm::publish_v(&part(t, hd, 2)),
                                },
                            };
                            let at = ((wg * 3 + p) * 64 + r) * 64;
                            for (ch, &code) in codes.iter().enumerate() {
                                let want = if tok.is_some() { e4m3::to_f16(code) } else { 0 };
                                let b = at + 2 * ch;
                                let have = u16::from_le_bytes([got[b], got[b + 1]]);
                                checked += 1;
                                if have != want {
                                    if differ == 0 {
                                        println!(
                                            "first difference: window ({gx}, {gy}) head {hd} part {p} row {r} channel {ch}: gpu {have:#06x} cpu {want:#06x}"
                                        );
                                    }
                                    differ += 1;
                                }
                            }
                        }
                    }
                }
            }
        }
        assert!(
            outside > 0 || (sx, sy) == (0, 0),
            "the shifted level cuts windows"
        );
        assert_eq!(
            differ, 0,
            "{w}x{ht}: {differ} of {checked} staged halves differ"
        );
    }
    h.assert_validation_clean();
}

#[test]
fn rejects_bad_shapes() {
    let Some(h) = Harness::new() else { return };
    let ctx = h.context();
    let buf = GpuBuffer::new(&ctx, "small", 1024, MemoryKind::DeviceLocal).unwrap();
    let mut arena = DescriptorArena::new(&ctx, 4, 24).unwrap();
    let b = buf.binding();
    let mut errors = Vec::new();
    h.record_only(|cmd| {
        // SAFETY: the harness's command buffer is recording on the context's device.
        let mut rec = unsafe { Recorder::new(&ctx, cmd) }.unwrap();
        let p = Profiles::NATIVE.fp8;
        errors.push(record_window_attention(
            &ctx,
            &mut rec,
            &mut arena,
            policy(&ctx),
            b,
            b,
            b,
            b,
            b,
            b,
            Size::new(8, 8),
            1,
            4,
            &p,
        ));
        // 8x8 tokens x 32 channels fit; the 8192-byte prior of one head does not.
        errors.push(record_window_attention(
            &ctx,
            &mut rec,
            &mut arena,
            policy(&ctx),
            b,
            b,
            b,
            b,
            b,
            b,
            Size::new(4, 8),
            1,
            0,
            &p,
        ));
        let f32acc = openngx::numerics::Profile::H25_F32;
        errors.push(record_vit_attention(
            &ctx,
            &mut rec,
            &mut arena,
            policy(&ctx),
            b,
            b,
            b,
            b,
            b,
            8,
            1,
            &f32acc,
        ));
        errors.push(record_vit_attention(
            &ctx,
            &mut rec,
            &mut arena,
            policy(&ctx),
            b,
            b,
            b,
            b,
            b,
            0,
            1,
            &p,
        ));
        // 8 tokens x 32 channels fit the 1024 bytes; the attention's lookup table does not.
        errors.push(record_vit_attention(
            &ctx,
            &mut rec,
            &mut arena,
            policy(&ctx),
            b,
            b,
            b,
            b,
            b,
            8,
            1,
            &p,
        ));
        errors.push(record_normalize(
            &ctx,
            &mut rec,
            &mut arena,
            policy(&ctx),
            policy(&ctx).normalize_kernel(),
            b,
            b,
            b,
            b,
            b,
            b,
            64,
            1,
            false,
        ));
        // One row fits the 1024 bytes; the 196608-byte table does not.
        errors.push(record_normalize(
            &ctx,
            &mut rec,
            &mut arena,
            policy(&ctx),
            NormalizeKernel::Cooperative,
            b,
            b,
            b,
            b,
            b,
            b,
            1,
            1,
            false,
        ));
        assert_eq!(rec.dispatch_count(), 0);
    });
    for (i, e) in errors.into_iter().enumerate() {
        assert!(
            matches!(e, Err(GpuError::Invalid { .. })),
            "case {i}: expected a typed refusal, got {e:?}"
        );
    }
    drop(arena);
    drop(buf);
    drop(ctx);
}
