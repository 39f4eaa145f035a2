//! The GLSL numerics of `shaders/lib` against the Rust numerics, byte for byte, on the Vulkan
//! device of the harness (lavapipe in CI) with the validation layer: every f16 input through each
//! unary function, all 256 E4M3 codes, random f32 conversions, random binary/ternary f16 ops and
//! random MMA groups (F13, F24, H25 G16/G8).
//!
//! Every expected value comes from `openngx::numerics` (through the thin `rust_ref` adapter). NaN
//! results are
//! compared after canonicalisation to 0x7E00: the sign of a NaN that f32 arithmetic produces is
//! platform-defined in Rust and in GLSL, and every consumer publishes NaN as E4M3 +0.

mod common;
/// Ray Reconstruction's numerics (`shaders/lib/rr`).
#[path = "gpu_numerics/rr.rs"]
mod rr;

use std::sync::Arc;

use common::{bytes_to_words, words_to_bytes, Harness, Rng};
use openngx::gpu::{
    DescriptorArena, GpuBuffer, GpuContext, MemoryKind, PipelineDesc, Recorder, SpecConstant,
};
use openngx::numerics::{e4m3, f16};

/// The Rust numerics (`openngx::numerics`), the single source of truth the GLSL must equal.
mod rust_ref {
    use openngx::numerics::{exp, f16, mma, ops, recip, silu, Profile};

    pub fn canon(h: u16) -> u16 {
        if f16::is_nan(h) {
            f16::QNAN
        } else {
            h
        }
    }
    pub fn silu(x: u16) -> u16 {
        canon(silu::silu(x))
    }
    pub fn exp_window(s: u16) -> u16 {
        canon(exp::exp_window(s))
    }
    pub fn exp_vit(s: u16) -> u16 {
        canon(exp::exp_vit(s))
    }
    pub fn recip(x: u16) -> u16 {
        canon(recip::recip(x))
    }
    pub fn rsqrt(x: u16) -> u16 {
        canon(recip::rsqrt(x))
    }
    pub fn pool2x2(a: u16, b: u16, c: u16, d: u16) -> u16 {
        ops::pool2x2(a, b, c, d)
    }
    pub fn decoder_merge(up: u16, skip: u16, scale: u16) -> u16 {
        ops::decoder_merge(up, skip, scale)
    }
    pub fn post_blend(up: u16, input_scale: u16, block0: u16, adapter_scale: u16) -> u16 {
        ops::post_blend(up, input_scale, block0, adapter_scale)
    }
    /// F13: G = 16 E4M3 products, P = 13.
    pub fn f13_group(acc: u16, a: &[u8], b: &[u8]) -> u16 {
        mma::group_e4m3(&Profile::F13, acc, a, b)
    }
    /// An f16 group with P fraction bits: F24 (P 24, G 8), H25 (P 25, G 16 or 8).
    pub fn f16_group(acc: u16, a: &[u16], b: &[u16], p: i32) -> u16 {
        let profile = match (p, a.len()) {
            (24, _) => Profile::F24,
            (_, 8) => Profile::H25_G8,
            _ => Profile::H25,
        };
        mma::group_f16(&profile, acc, a, b)
    }
}

/// Run `shader` (2 buffers: input words, one output word per element; push = count) on `count`
/// elements and return the output words.
fn run(
    h: &Harness,
    ctx: &Arc<GpuContext>,
    shader: &str,
    spec: u32,
    input: &[u32],
    count: usize,
) -> Vec<u32> {
    let mut inbuf = GpuBuffer::new(
        ctx,
        "test input",
        (input.len() * 4) as u64,
        MemoryKind::Upload,
    )
    .unwrap();
    inbuf.write(0, &words_to_bytes(input)).unwrap();
    let out = GpuBuffer::new(ctx, "test output", (count * 4) as u64, MemoryKind::Readback).unwrap();
    let pipeline = ctx
        .pipeline(&PipelineDesc::new(shader, 2, 4).with_spec(SpecConstant::u32(0, spec)))
        .unwrap();
    let mut arena = DescriptorArena::new(ctx, 1, 2).unwrap();
    let set = arena
        .allocate(&pipeline, &[inbuf.binding(), out.binding()])
        .unwrap();
    h.submit(|cmd| {
        // SAFETY: the harness's command buffer is recording on the context's device.
        let mut rec = unsafe { Recorder::new(ctx, cmd) }.unwrap();
        rec.fill(out.binding(), 0xDEAD_BEEF).unwrap();
        rec.transfer_to_compute();
        rec.run(
            &pipeline,
            set,
            &(count as u32).to_ne_bytes(),
            [count.div_ceil(64) as u32, 1, 1],
        )
        .unwrap();
        rec.to_host();
    });
    bytes_to_words(&out.read_all().unwrap())
}

/// Unary kernel functions (FUNC specialization of `test/numerics`).
const E4M3_FROM_F16: u32 = 0;
const E4M3_TO_F16: u32 = 1;
const SILU: u32 = 2;
const EXP_WINDOW: u32 = 3;
const EXP_VIT: u32 = 4;
const RSQRT: u32 = 5;
const RECIP: u32 = 6;
const F16_FROM_F32_RTZ: u32 = 7;
const F16_FROM_F32_RNE: u32 = 8;
const F16_ADD: u32 = 9;
const F16_MUL: u32 = 10;
const F16_FMA: u32 = 11;
const POOL2X2: u32 = 12;
const DECODER_MERGE: u32 = 13;
const POST_BLEND: u32 = 14;
const F16_TO_F32: u32 = 15;
const F16_MUL_PAIR: u32 = 17;
const EXP_WINDOW_PAIR: u32 = 18;
const EXP_VIT_PAIR: u32 = 19;
const E4_ROUND_PAIR: u32 = 20;
const E4_PUBLISH_PAIR: u32 = 21;

/// The numerics kernels: portable forms (every device) and the forms of the RTZ builds (devices
/// with `Capabilities::rtz_kernels`).
const NUMERICS: &str = "test/numerics";
const NUMERICS_FAST: &str = "test/numerics_fast";
/// Native f16 without the RTZ mode, as the tensor route's cooperative-matrix kernels compile the
/// numerics (devices with `Capabilities::native_f16`).
const NUMERICS_NATIVE: &str = "test/numerics_native";

/// Apply FUNC of `shader` to argument tuples and compare with `want` element by element.
fn check(
    h: &Harness,
    ctx: &Arc<GpuContext>,
    shader: &str,
    func: u32,
    name: &str,
    args: &[[u32; 4]],
    want: impl Fn([u32; 4]) -> u32,
) {
    let flat: Vec<u32> = args.iter().flatten().copied().collect();
    let got = run(h, ctx, shader, func, &flat, args.len());
    let mut bad = Vec::new();
    for (a, g) in args.iter().zip(&got) {
        let w = want(*a);
        if *g != w {
            bad.push(format!(
                "{name}({:#x}, {:#x}, {:#x}, {:#x}) = {g:#06x}, want {w:#06x}",
                a[0], a[1], a[2], a[3]
            ));
        }
    }
    assert!(
        bad.is_empty(),
        "{} of {} mismatches, first: {:?}",
        bad.len(),
        args.len(),
        &bad[..bad.len().min(8)]
    );
}

fn every_half() -> Vec<[u32; 4]> {
    (0..=0xFFFFu32).map(|h| [h, 0, 0, 0]).collect()
}

fn unary(
    h: &Harness,
    ctx: &Arc<GpuContext>,
    shader: &str,
    func: u32,
    name: &str,
    f: impl Fn(u16) -> u16,
) {
    check(h, ctx, shader, func, name, &every_half(), |a| {
        f(a[0] as u16) as u32
    });
}

/// Every half through the unary functions of `shader`, all 256 E4M3 codes back to halves.
fn unary_checks(h: &Harness, ctx: &Arc<GpuContext>, shader: &str) {
    unary(h, ctx, shader, E4M3_FROM_F16, "e4m3_from_f16", |x| {
        e4m3::from_f16(x) as u16
    });
    let codes: Vec<[u32; 4]> = (0..256u32).map(|c| [c, 0, 0, 0]).collect();
    check(h, ctx, shader, E4M3_TO_F16, "e4m3_to_f16", &codes, |a| {
        e4m3::to_f16(a[0] as u8) as u32
    });
    check(
        h,
        ctx,
        shader,
        F16_TO_F32,
        "f16_to_f32",
        &every_half(),
        |a| f16::to_f32(a[0] as u16).to_bits(),
    );
    unary(h, ctx, shader, SILU, "silu", rust_ref::silu);
    unary(
        h,
        ctx,
        shader,
        EXP_WINDOW,
        "exp_window",
        rust_ref::exp_window,
    );
    unary(h, ctx, shader, EXP_VIT, "exp_vit", rust_ref::exp_vit);
    unary(h, ctx, shader, RECIP, "recip", rust_ref::recip);
    unary(h, ctx, shader, RSQRT, "rsqrt", rust_ref::rsqrt);
}

#[test]
fn unary_functions_match_rust_for_every_half() {
    let Some(h) = Harness::new() else { return };
    let ctx = h.context();
    unary_checks(&h, &ctx, NUMERICS);
    // Spot values from the spec: exp(0) = 0x2680 (window), 0x2D60 (ViT); SiLU(-4) = -0.
    assert_eq!(rust_ref::exp_window(0), 0x2680);
    assert_eq!(rust_ref::exp_vit(0), 0x2D60);
    assert_eq!(rust_ref::silu(0xC400), 0x8000);
    drop(ctx);
    h.assert_validation_clean();
}

/// The same functions as the RTZ builds compile them (native f16 adds and multiplies, the fast
/// fused form): run where the device has those modes (the H200; lavapipe has no RTZ f32 mode).
#[test]
fn fast_build_forms_match_rust() {
    let Some(h) = Harness::new() else { return };
    let ctx = h.context();
    if !ctx.capabilities().rtz_kernels() {
        eprintln!("fast_build_forms_match_rust: skipped, the device lacks the RTZ builds' modes");
        return;
    }
    unary_checks(&h, &ctx, NUMERICS_FAST);
    binary_checks(&h, &ctx, NUMERICS_FAST);
    pair_checks(&h, &ctx, NUMERICS_FAST);
    drop(ctx);
    h.assert_validation_clean();
}

#[test]
fn f32_to_f16_rne_and_rtz_match_rust() {
    let Some(h) = Harness::new() else { return };
    let ctx = h.context();
    let mut rng = Rng(0x0DDB_A11C_AFE0_0001);
    let mut args: Vec<[u32; 4]> = Vec::new();
    // Every half's exact f32, the f32 just above and below it (ties and near-ties), random bits.
    for x in 0..=0xFFFFu16 {
        let b = f16::to_f32(x).to_bits();
        args.push([b, 0, 0, 0]);
        args.push([b.wrapping_add(1), 0, 0, 0]);
        args.push([b.wrapping_add(0x1000), 0, 0, 0]); // halfway to the next half for normals
    }
    for _ in 0..65536 {
        args.push([rng.next_u32(), 0, 0, 0]);
    }
    let canon = |h: u16| rust_ref::canon(h) as u32;
    let flat: Vec<u32> = args.iter().flatten().copied().collect();
    for (func, name, f) in [
        (
            F16_FROM_F32_RNE,
            "f16_from_f32_rne",
            f16::from_f32_rne as fn(f32) -> u16,
        ),
        (
            F16_FROM_F32_RTZ,
            "f16_from_f32_rtz",
            f16::from_f32_rtz as fn(f32) -> u16,
        ),
    ] {
        let got = run(&h, &ctx, "test/numerics", func, &flat, args.len());
        let bad: Vec<String> = args
            .iter()
            .zip(&got)
            .filter(|(a, g)| canon(**g as u16) != canon(f(f32::from_bits(a[0]))))
            .map(|(a, g)| format!("{name}({:#010x}) = {g:#06x}", a[0]))
            .take(8)
            .collect();
        assert!(bad.is_empty(), "{bad:?}");
        // NaN inputs keep their sign (the Rust conversion's rule), all else is bit-exact.
        for (a, g) in args.iter().zip(&got) {
            let x = f32::from_bits(a[0]);
            if !x.is_nan() {
                assert_eq!(*g, f(x) as u32, "{name}({:#010x})", a[0]);
            } else {
                assert_eq!(
                    *g & 0x8000,
                    (a[0] >> 16) & 0x8000,
                    "{name} NaN sign of {:#010x}",
                    a[0]
                );
            }
        }
    }
    drop(ctx);
    h.assert_validation_clean();
}

/// The tensor route's table-free pair forms (`exp_window_pair`, `exp_vit_pair`,
/// `e4_round_pair`, `e4_publish_pair`): every half in both halves of a word against the Rust
/// function each replaces (`e4_round_pair` over its range, +0 to 464).
fn pair_checks(h: &Harness, ctx: &Arc<GpuContext>, shader: &str) {
    let pairs: Vec<[u32; 4]> = (0..=0xFFFFu32)
        .map(|a| [a, (a.wrapping_mul(0x9E37) ^ 0x5A5A) & 0xFFFF, 0, 0])
        .collect();
    let both = |f: fn(u16) -> u16| {
        move |a: [u32; 4]| -> u32 { u32::from(f(a[0] as u16)) | (u32::from(f(a[1] as u16)) << 16) }
    };
    check(
        h,
        ctx,
        shader,
        EXP_WINDOW_PAIR,
        "exp_window_pair",
        &pairs,
        both(rust_ref::exp_window),
    );
    check(
        h,
        ctx,
        shader,
        EXP_VIT_PAIR,
        "exp_vit_pair",
        &pairs,
        both(rust_ref::exp_vit),
    );
    check(
        h,
        ctx,
        shader,
        E4_PUBLISH_PAIR,
        "e4_publish_pair",
        &pairs,
        |a| u32::from(e4m3::from_f16(a[0] as u16)) | (u32::from(e4m3::from_f16(a[1] as u16)) << 16),
    );
    let top = 0x5F40u32;
    let ranged: Vec<[u32; 4]> = (0..=top).map(|a| [a, top - a, 0, 0]).collect();
    let round = |x: u32| u32::from(e4m3::to_f16(e4m3::from_f16(x as u16)));
    check(
        h,
        ctx,
        shader,
        E4_ROUND_PAIR,
        "e4_round_pair",
        &ranged,
        |a| round(a[0]) | (round(a[1]) << 16),
    );
}

/// The pair forms in the portable build (every device, lavapipe's emulated halves in CI).
#[test]
fn pair_forms_match_rust() {
    let Some(h) = Harness::new() else { return };
    let ctx = h.context();
    pair_checks(&h, &ctx, NUMERICS);
    drop(ctx);
    h.assert_validation_clean();
}

/// The numerics as the tensor route's cooperative-matrix kernels compile them (native f16 adds
/// and multiplies, the round-to-odd fused form, the pair forms): run where the device has
/// native f16 arithmetic (the H200 and H100; lavapipe lacks it).
#[test]
fn native_build_forms_match_rust() {
    let Some(h) = Harness::new() else { return };
    let ctx = h.context();
    if !ctx.capabilities().native_f16() {
        eprintln!("native_build_forms_match_rust: skipped, the device lacks native f16 arithmetic");
        return;
    }
    unary_checks(&h, &ctx, NUMERICS_NATIVE);
    binary_checks(&h, &ctx, NUMERICS_NATIVE);
    pair_checks(&h, &ctx, NUMERICS_NATIVE);
    drop(ctx);
    h.assert_validation_clean();
}

#[test]
fn f16_arithmetic_and_elementwise_ops_match_rust() {
    let Some(h) = Harness::new() else { return };
    let ctx = h.context();
    binary_checks(&h, &ctx, NUMERICS);
    drop(ctx);
    h.assert_validation_clean();
}

/// Random f16 adds, multiplies, fused multiply-adds (with constructed f32 ties) and the
/// elementwise ops of `shader`.
fn binary_checks(h: &Harness, ctx: &Arc<GpuContext>, shader: &str) {
    let mut rng = Rng(0xF16A_7715_0000_0042);
    // Mostly finite values in overlapping ranges (so sums cancel and round), some of every kind.
    let half = |rng: &mut Rng| -> u32 {
        match rng.below(16) {
            0 => rng.next_u32() & 0xFFFF,
            1 => rng.next_u32() & 0x83FF, // subnormals and zeros
            _ => (rng.next_u32() & 0x83FF) | ((10 + rng.below(12)) << 10),
        }
    };
    let args: Vec<[u32; 4]> = (0..65536)
        .map(|_| {
            [
                half(&mut rng),
                half(&mut rng),
                half(&mut rng),
                half(&mut rng),
            ]
        })
        .collect();
    let c = rust_ref::canon;
    check(h, ctx, shader, F16_ADD, "f16_add", &args, |a| {
        c(f16::add(a[0] as u16, a[1] as u16)) as u32
    });
    check(h, ctx, shader, F16_MUL, "f16_mul", &args, |a| {
        c(f16::mul(a[0] as u16, a[1] as u16)) as u32
    });
    check(h, ctx, shader, F16_FMA, "f16_fma", &args, |a| {
        c(f16::fma(a[0] as u16, a[1] as u16, a[2] as u16)) as u32
    });
    // Two products at once: (a, b) in the low halves, (c, d) in the high ones.
    check(h, ctx, shader, F16_MUL_PAIR, "f16_mul_pair", &args, |a| {
        let lo = c(f16::mul(a[0] as u16, a[1] as u16)) as u32;
        let hi = c(f16::mul(a[2] as u16, a[3] as u16)) as u32;
        lo | (hi << 16)
    });
    check(h, ctx, shader, POOL2X2, "pool2x2", &args, |a| {
        rust_ref::pool2x2(a[0] as u16, a[1] as u16, a[2] as u16, a[3] as u16) as u32
    });
    check(h, ctx, shader, DECODER_MERGE, "decoder_merge", &args, |a| {
        rust_ref::decoder_merge(a[0] as u16, a[1] as u16, a[2] as u16) as u32
    });
    check(h, ctx, shader, POST_BLEND, "post_blend", &args, |a| {
        rust_ref::post_blend(a[0] as u16, a[1] as u16, a[2] as u16, a[3] as u16) as u32
    });
    // Fused-FMA ties: a*b + c lands exactly halfway in f32 but not in exact arithmetic.
    let ties: Vec<[u32; 4]> = (0..4096u32)
        .map(|i| {
            [
                0x3C00 | (i & 0x3FF),
                0x1400 | (rng.next_u32() & 0x3FF),
                0x3C00 | ((i * 7) & 0x3FF),
                0,
            ]
        })
        .collect();
    check(h, ctx, shader, F16_FMA, "f16_fma", &ties, |a| {
        c(f16::fma(a[0] as u16, a[1] as u16, a[2] as u16)) as u32
    });
}

/// A random E4M3 code with exponent field in [lo, hi], a few zeros and NaN codes.
fn e4m3_code(rng: &mut Rng, lo: u32, hi: u32) -> u8 {
    match rng.below(64) {
        0 => 0x00,
        1 => 0x80,
        2 => 0x7F | (rng.below(2) << 7) as u8,
        _ => ((rng.below(2) << 7) | ((lo + rng.below(hi - lo + 1)) << 3) | rng.below(8)) as u8,
    }
}

/// A random half with exponent field in [lo, hi], a few zeros.
fn half_in(rng: &mut Rng, lo: u32, hi: u32) -> u16 {
    match rng.below(32) {
        0 => 0x0000,
        1 => 0x8000,
        _ => {
            ((rng.below(2) << 15) | ((lo + rng.below(hi - lo + 1)) << 10) | rng.below(1024)) as u16
        }
    }
}

/// An accumulator: zeros of both signs, values across the range, rarely inf/NaN.
fn acc_half(rng: &mut Rng, lo: u32, hi: u32, specials: bool) -> u16 {
    match rng.below(64) {
        0..=3 => 0x0000,
        4..=5 => 0x8000,
        6 if specials => [0x7C00, 0xFC00, 0x7E00][rng.below(3) as usize],
        _ => half_in(rng, lo, hi),
    }
}

const GROUPS: usize = 16384;

fn mma_check(
    h: &Harness,
    ctx: &Arc<GpuContext>,
    mode: u32,
    name: &str,
    records: &[[u32; 33]],
    want: impl Fn(&[u32; 33]) -> u16,
) {
    let flat: Vec<u32> = records.iter().flatten().copied().collect();
    let got = run(h, ctx, "test/mma", mode, &flat, records.len());
    let bad: Vec<String> = records
        .iter()
        .zip(&got)
        .filter(|(r, g)| **g != want(r) as u32)
        .map(|(r, g)| {
            format!(
                "{name}: acc {:#06x} a {:x?} b {:x?} -> {g:#06x}, want {:#06x}",
                r[0],
                &r[1..17],
                &r[17..33],
                want(r)
            )
        })
        .take(4)
        .collect();
    assert!(bad.is_empty(), "{bad:#?}");
}

#[test]
fn f13_groups_match_the_model() {
    let Some(h) = Harness::new() else { return };
    let ctx = h.context();
    let mut rng = Rng(0xF13F_13F1_3F13_0001);
    let mut zero_results = 0;
    let records: Vec<[u32; 33]> = (0..GROUPS)
        .map(|i| {
            // Per group an exponent window: narrow windows cancel, wide ones truncate hard.
            let lo = rng.below(14);
            let hi = lo + rng.below(16 - lo);
            let mut r = [0u32; 33];
            r[0] = acc_half(&mut rng, 1, 24, true) as u32;
            for k in 0..16 {
                r[1 + k] = e4m3_code(&mut rng, lo, hi) as u32;
                r[17 + k] = e4m3_code(&mut rng, lo, hi) as u32;
            }
            if i % 16 == 0 {
                // Exact cancellation: the second half negates the first.
                for k in 0..8 {
                    r[9 + k] = r[1 + k] ^ 0x80;
                    r[25 + k] = r[17 + k];
                }
                r[0] = 0x8000;
            }
            r
        })
        .collect();
    mma_check(&h, &ctx, 0, "f13", &records, |r| {
        let a: Vec<u8> = r[1..17].iter().map(|&x| x as u8).collect();
        let b: Vec<u8> = r[17..33].iter().map(|&x| x as u8).collect();
        rust_ref::f13_group(r[0] as u16, &a, &b)
    });
    for r in &records {
        let a: Vec<u8> = r[1..17].iter().map(|&x| x as u8).collect();
        let b: Vec<u8> = r[17..33].iter().map(|&x| x as u8).collect();
        if rust_ref::f13_group(r[0] as u16, &a, &b) == 0 {
            zero_results += 1;
        }
    }
    assert!(
        zero_results > GROUPS / 32,
        "the cancellation cases must reach the +0 rule ({zero_results})"
    );
    drop(ctx);
    h.assert_validation_clean();
}

fn f16_records(rng: &mut Rng, n: usize, specials: bool) -> Vec<[u32; 33]> {
    (0..GROUPS)
        .map(|i| {
            let lo = rng.below(28);
            let hi = (lo + rng.below(8)).min(29);
            let mut r = [0u32; 33];
            r[0] = acc_half(rng, lo.max(1), hi + 1, specials) as u32;
            for k in 0..n {
                r[1 + k] = half_in(rng, lo, hi) as u32;
                r[17 + k] = half_in(rng, lo, hi) as u32;
            }
            if specials && i % 64 == 1 {
                r[1 + rng.below(n as u32) as usize] =
                    [0x7C00, 0xFC00, 0x7E01][rng.below(3) as usize];
            }
            if i % 16 == 0 {
                for k in 0..n / 2 {
                    r[1 + n / 2 + k] = r[1 + k] ^ 0x8000;
                    r[17 + n / 2 + k] = r[17 + k];
                }
            }
            r
        })
        .collect()
}

fn f16_want(r: &[u32; 33], n: usize, p: i32) -> u16 {
    let a: Vec<u16> = r[1..1 + n].iter().map(|&x| x as u16).collect();
    let b: Vec<u16> = r[17..17 + n].iter().map(|&x| x as u16).collect();
    rust_ref::f16_group(r[0] as u16, &a, &b, p)
}

#[test]
fn f24_and_h25_groups_match_the_models() {
    let Some(h) = Harness::new() else { return };
    let ctx = h.context();
    let mut rng = Rng(0x0F24_0425_9E37_79B9);
    let f24 = f16_records(&mut rng, 8, true);
    mma_check(&h, &ctx, 1, "f24", &f24, |r| f16_want(r, 8, 24));
    let h25 = f16_records(&mut rng, 16, true);
    mma_check(&h, &ctx, 2, "h25-g16", &h25, |r| f16_want(r, 16, 25));
    let h25_g8 = f16_records(&mut rng, 8, false);
    mma_check(&h, &ctx, 3, "h25-g8", &h25_g8, |r| f16_want(r, 8, 25));
    // H25 with E4M3 operands widened to f16 (the H200 route's view of FP8 data).
    let widened: Vec<[u32; 33]> = (0..GROUPS)
        .map(|_| {
            let mut r = [0u32; 33];
            r[0] = acc_half(&mut rng, 5, 22, false) as u32;
            for k in 0..16 {
                r[1 + k] = e4m3::to_f16(e4m3_code(&mut rng, 0, 15)) as u32;
                r[17 + k] = e4m3::to_f16(e4m3_code(&mut rng, 0, 15)) as u32;
            }
            r
        })
        .collect();
    mma_check(&h, &ctx, 2, "h25-e4m3", &widened, |r| f16_want(r, 16, 25));
    drop(ctx);
    h.assert_validation_clean();
}

/// The image-format decodes (`shaders/lib/frame_formats.glsl`, kernel `test/formats`) against
/// `numerics::normalized`, bit for bit: every 8- and 16-bit UNORM and SNORM code (SNORM's extra
/// lowest code included), every 10-bit code, a stride of the 24-bit codes with both ends, the
/// depth inversion of every decoded 16-bit value and of strided 24-bit ones, and the code
/// recovery the import kernel does from a sampled texel: the decoded value and its f32
/// neighbours two ulps either side (a driver's decoder off by that much) give the same code.
#[test]
fn image_format_decodes_match_rust() {
    use openngx::numerics::normalized as nz;
    let Some(h) = Harness::new() else { return };
    let ctx = h.context();
    const FORMATS: &str = "test/formats";
    let mut unorm: Vec<[u32; 4]> = Vec::new();
    for bits in [8u32, 10, 16] {
        let max = (1u32 << bits) - 1;
        unorm.extend((0..=max).map(|c| [c, max, bits, 0]));
    }
    let max24 = (1u32 << 24) - 1;
    unorm.extend(
        (0..=max24)
            .step_by(977)
            .chain([
                1,
                2,
                max24 - 1,
                max24,
                1 << 23,
                (1 << 23) - 1,
                (1 << 23) + 1,
            ])
            .map(|c| [c, max24, 24, 0]),
    );
    check(&h, &ctx, FORMATS, 0, "frame_unorm", &unorm, |a| {
        nz::unorm(a[0], a[2]).to_bits()
    });
    let mut snorm: Vec<[u32; 4]> = Vec::new();
    for bits in [8u32, 16] {
        let max = (1i32 << (bits - 1)) - 1;
        snorm.extend((-max - 1..=max).map(|c| [c as u32, max as u32, bits, 0]));
    }
    check(&h, &ctx, FORMATS, 1, "frame_snorm", &snorm, |a| {
        nz::snorm(a[0] as i32, a[2]).to_bits()
    });
    let depths: Vec<[u32; 4]> = unorm
        .iter()
        .filter(|a| a[2] >= 16)
        .map(|a| [nz::unorm(a[0], a[2]).to_bits(), 0, 0, 0])
        .collect();
    check(&h, &ctx, FORMATS, 2, "frame_invert_depth", &depths, |a| {
        nz::invert_depth(f32::from_bits(a[0])).to_bits()
    });
    // Recovery: the exact decode and values two ulps off (clamped into [0, 1] / [-1, 1]).
    let near = |v: f32| {
        let b = v.to_bits() as i64;
        (-2i64..=2).map(move |d| f32::from_bits((b + d).max(0) as u32))
    };
    let recover_u: Vec<[u32; 4]> = unorm
        .iter()
        .filter(|a| a[2] <= 16)
        .flat_map(|a| {
            let (max, bits) = (a[1], a[2]);
            near(nz::unorm(a[0], bits)).map(move |v| [v.to_bits(), max, bits, a[0]])
        })
        .collect();
    check(&h, &ctx, FORMATS, 3, "unorm recovery", &recover_u, |a| {
        nz::unorm(a[3], a[2]).to_bits()
    });
    let recover_s: Vec<[u32; 4]> = snorm
        .iter()
        .flat_map(|a| {
            let (max, bits) = (a[1], a[2]);
            let v = nz::snorm(a[0] as i32, bits);
            near(v.abs()).map(move |m| {
                let v = if v < 0.0 { -m } else { m };
                [v.to_bits(), max, bits, a[0]]
            })
        })
        .collect();
    check(&h, &ctx, FORMATS, 4, "snorm recovery", &recover_s, |a| {
        nz::snorm(a[3] as i32, a[2]).to_bits()
    });
    drop(ctx);
    h.assert_validation_clean();
}

/// RR's 24-bit depth decode kernel (`rr/import_d24`, fed by the copy of a D24 depth aspect)
/// against `numerics::normalized`: words whose top byte holds every junk value (Vulkan leaves it
/// undefined; lavapipe's copies write zero, other drivers need not) decode as their low 24 bits,
/// `RN_f32(c / (2^24 - 1))`, into one lane of a wider texel, then `1 - d` with the inversion;
/// the other lanes stay untouched.
#[test]
fn d24_depth_words_are_masked_and_decoded_exactly() {
    use openngx::numerics::normalized as nz;
    let Some(h) = Harness::new() else { return };
    let ctx = h.context();
    let (w, ht) = (64u32, 48u32);
    let n = (w * ht) as usize;
    let max24 = (1u32 << 24) - 1;
    let codes: Vec<u32> = (0..n as u32)
        .map(|i| match i {
            0 => 0,
            1 => max24,
            2 => 1,
            3 => max24 - 1,
            _ => (i * 5471) % (1 << 24),
        })
        .collect();
    let words: Vec<u32> = codes
        .iter()
        .enumerate()
        .map(|(i, &c)| c | ((i as u32 % 256) << 24))
        .collect();
    let (stride, first) = (3u32, 1u32);
    let pipeline = ctx
        .pipeline(&PipelineDesc::new("rr/import_d24", 2, 16))
        .unwrap();
    for invert in [false, true] {
        let mut src =
            GpuBuffer::new(&ctx, "d24 words", (n * 4) as u64, MemoryKind::Upload).unwrap();
        src.write(0, &words_to_bytes(&words)).unwrap();
        let out = GpuBuffer::new(
            &ctx,
            "d24 lanes",
            (n * stride as usize * 4) as u64,
            MemoryKind::Readback,
        )
        .unwrap();
        let mut arena = DescriptorArena::new(&ctx, 1, 2).unwrap();
        let set = arena
            .allocate(&pipeline, &[src.binding(), out.binding()])
            .unwrap();
        let push: Vec<u8> = [w, ht, stride | (first << 16), u32::from(invert)]
            .iter()
            .flat_map(|v| v.to_ne_bytes())
            .collect();
        h.submit(|cmd| {
            // SAFETY: the harness's command buffer is recording on the context's device.
            let mut rec = unsafe { Recorder::new(&ctx, cmd) }.unwrap();
            rec.fill(out.binding(), 0xDEAD_BEEF).unwrap();
            rec.transfer_to_compute();
            rec.run(&pipeline, set, &push, [w.div_ceil(8), ht.div_ceil(8), 1])
                .unwrap();
            rec.to_host();
        });
        let got = bytes_to_words(&out.read_all().unwrap());
        for (i, &c) in codes.iter().enumerate() {
            let d = nz::unorm(c, 24);
            let want = if invert { nz::invert_depth(d) } else { d };
            let texel = &got[i * stride as usize..(i + 1) * stride as usize];
            assert_eq!(
                texel,
                &[0xDEAD_BEEF, want.to_bits(), 0xDEAD_BEEF],
                "texel {i}: code {c:#x} with top byte {:#x}, invert {invert}",
                words[i] >> 24
            );
        }
    }
    drop(ctx);
    h.assert_validation_clean();
}
