//! Ray Reconstruction's GLSL numerics (`shaders/lib/rr`, through `test/rr_numerics`) against
//! `openngx::numerics::rr`, byte for byte: every half through the unary functions, all 256
//! codes, random k32 steps, lanes-tree rows, RMS norm rows, cubic softmax rows, reciprocals of
//! exact sums and tail softmax rows.

use std::sync::Arc;

use openngx::gpu::{
    DescriptorArena, GpuBuffer, GpuContext, MemoryKind, PipelineDesc, Recorder, SpecConstant,
};
use openngx::numerics::f16;
use openngx::numerics::rr::{act, cubic, gates, k32, lanes, q8, rms};

use super::common::{bytes_to_words, words_to_bytes, Harness, Rng};

const Q8: u32 = 0;
const Q8_RELU: u32 = 1;
const Q8_TO_F16: u32 = 2;
const CUBIC_EXP: u32 = 3;
const ACT: u32 = 4;
const K32_STEP: u32 = 5;
const ROW_SUM: u32 = 6;
const RMS_ROW: u32 = 7;
const SOFTMAX_ROW: u32 = 8;
const RECIP_OF_SUM: u32 = 9;
const TAIL_SOFTMAX: u32 = 10;

/// Run FUNC of `test/rr_numerics` over `records` (each `record` words), `out` words per record.
fn run(
    h: &Harness,
    ctx: &Arc<GpuContext>,
    func: u32,
    record: usize,
    out: usize,
    records: &[u32],
    table: &[u32],
) -> Vec<u32> {
    let count = records.len() / record;
    let buf = |name: &str, words: &[u32]| {
        let mut b = GpuBuffer::new(
            ctx,
            name,
            (words.len().max(1) * 4) as u64,
            MemoryKind::Upload,
        )
        .unwrap();
        b.write(0, &words_to_bytes(words)).unwrap();
        b
    };
    let inbuf = buf("rr test input", records);
    let tbuf = buf("rr test table", table);
    let outbuf = GpuBuffer::new(
        ctx,
        "rr test output",
        (count * out * 4) as u64,
        MemoryKind::Readback,
    )
    .unwrap();
    let pipeline = ctx
        .pipeline(
            &PipelineDesc::new("test/rr_numerics", 3, 4)
                .with_spec(SpecConstant::u32(0, func))
                .with_spec(SpecConstant::u32(1, record as u32))
                .with_spec(SpecConstant::u32(2, out as u32)),
        )
        .unwrap();
    let mut arena = DescriptorArena::new(ctx, 1, 3).unwrap();
    let set = arena
        .allocate(
            &pipeline,
            &[inbuf.binding(), outbuf.binding(), tbuf.binding()],
        )
        .unwrap();
    h.submit(|cmd| {
        // SAFETY: the harness's command buffer is recording on the context's device.
        let mut rec = unsafe { Recorder::new(ctx, cmd) }.unwrap();
        rec.fill(outbuf.binding(), 0xDEAD_BEEF).unwrap();
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
    bytes_to_words(&outbuf.read_all().unwrap())
}

fn halves_to_words(h: &[u16]) -> Vec<u32> {
    h.chunks(2)
        .map(|p| p[0] as u32 | (p.get(1).copied().unwrap_or(0) as u32) << 16)
        .collect()
}

fn codes_to_words(c: &[u8]) -> Vec<u32> {
    c.chunks(4)
        .map(|q| {
            q.iter()
                .enumerate()
                .fold(0u32, |w, (i, &b)| w | (b as u32) << (8 * i))
        })
        .collect()
}

/// Compare per record and report the first mismatches.
fn compare(name: &str, got: &[u32], want: &[u32], per: usize) {
    assert_eq!(got.len(), want.len(), "{name}: output length");
    let bad: Vec<String> = got
        .chunks(per)
        .zip(want.chunks(per))
        .enumerate()
        .filter(|(_, (g, w))| g != w)
        .map(|(i, (g, w))| format!("{name} record {i}: got {g:x?} want {w:x?}"))
        .take(4)
        .collect();
    assert!(bad.is_empty(), "{bad:#?}");
}

/// A random half: mostly moderate values of both signs, some of every kind.
fn half(rng: &mut Rng) -> u16 {
    match rng.below(32) {
        0 => rng.next_u32() as u16,
        1 => (rng.next_u32() as u16) & 0x83FF,
        2 => [0x7C00, 0xFC00, 0x7E00, 0x0000, 0x8000][rng.below(5) as usize],
        _ => ((rng.next_u32() as u16) & 0x83FF) | ((8 + rng.below(14) as u16) << 10),
    }
}

#[test]
fn rr_unary_functions_match_rust_for_every_half() {
    let Some(h) = Harness::new() else { return };
    let ctx = h.context();
    let every: Vec<u32> = (0..=0xFFFFu32).collect();
    type Unary = fn(u16) -> u32;
    let cases: [(u32, &str, Unary); 4] = [
        (Q8, "q8", |x| q8::from_f16(x) as u32),
        (Q8_RELU, "q8_relu", |x| q8::from_f16_relu(x) as u32),
        (CUBIC_EXP, "cubic_exp", |x| cubic::expval(x) as u32),
        (ACT, "act", |x| {
            let y = act::act(x);
            (if f16::is_nan(y) { f16::QNAN } else { y }) as u32
        }),
    ];
    for (func, name, f) in cases {
        let got = run(&h, &ctx, func, 1, 1, &every, &[0]);
        let want: Vec<u32> = every.iter().map(|&x| f(x as u16)).collect();
        compare(name, &got, &want, 1);
    }
    let codes: Vec<u32> = (0..256).collect();
    let got = run(&h, &ctx, Q8_TO_F16, 1, 1, &codes, &[0]);
    let want: Vec<u32> = codes.iter().map(|&c| q8::to_f16(c as u8) as u32).collect();
    compare("q8_to_f16", &got, &want, 1);
    drop(ctx);
    h.assert_validation_clean();
}

#[test]
fn rr_k32_steps_match_rust() {
    let Some(h) = Harness::new() else { return };
    let ctx = h.context();
    let mut rng = Rng(0x4B33_3253_5445_5001);
    let mut records = Vec::new();
    let mut want = Vec::new();
    let mut zeros = 0;
    for i in 0..16384 {
        let lo = rng.below(16);
        let hi = lo + rng.below(16 - lo);
        let code = |rng: &mut Rng| -> u8 {
            match rng.below(128) {
                0 => 0x7F | (rng.below(2) << 7) as u8,
                1..=3 => (rng.below(2) << 7) as u8,
                _ => {
                    let c = ((rng.below(2) << 7)
                        | ((lo + rng.below(hi - lo + 1)) << 3)
                        | rng.below(8)) as u8;
                    if q8::is_nan(c) {
                        c ^ 1
                    } else {
                        c
                    }
                }
            }
        };
        let mut a: Vec<u8> = (0..32).map(|_| code(&mut rng)).collect();
        let b: Vec<u8> = (0..32).map(|_| code(&mut rng)).collect();
        let mut acc = half(&mut rng);
        if i % 16 == 0 {
            for k in 0..16 {
                a[16 + k] = a[k] ^ 0x80;
            }
            let b2: Vec<u8> = b[..16].iter().chain(&b[..16]).copied().collect();
            acc = if i % 32 == 0 { 0x8000 } else { 0 };
            let w = k32::step(acc, &a, &b2);
            zeros += usize::from(w == 0);
            records.push(acc as u32);
            records.extend(codes_to_words(&a));
            records.extend(codes_to_words(&b2));
            want.push(w as u32);
            continue;
        }
        records.push(acc as u32);
        records.extend(codes_to_words(&a));
        records.extend(codes_to_words(&b));
        want.push(k32::step(acc, &a, &b) as u32);
    }
    assert!(zeros > 500, "{zeros}");
    let got = run(&h, &ctx, K32_STEP, 17, 1, &records, &[0]);
    compare("k32_step", &got, &want, 1);
    drop(ctx);
    h.assert_validation_clean();
}

#[test]
fn rr_rows_match_rust() {
    let Some(h) = Harness::new() else { return };
    let ctx = h.context();
    let mut rng = Rng(0x5252_524F_5753_0002);
    // Lanes-tree sums and RMS norm rows for every width the network has.
    let (mut sums, mut sums_want) = (Vec::new(), Vec::new());
    let (mut norms, mut norms_want) = (Vec::new(), Vec::new());
    for i in 0..2000 {
        let n = [32usize, 64, 96, 128, 160][i % 5];
        let scale = 4 + rng.below(20) as u16;
        let x: Vec<u16> = (0..n)
            .map(|_| {
                if rng.below(200) == 0 {
                    half(&mut rng)
                } else {
                    ((rng.next_u32() as u16) & 0x83FF) | (scale << 10)
                }
            })
            .collect();
        let gain: Vec<u16> = (0..n).map(|_| half(&mut rng)).collect();
        let mut padded = x.clone();
        padded.resize(160, 0);
        sums.push(n as u32);
        sums.extend(halves_to_words(&padded));
        let s = lanes::row_sum(&x);
        sums_want.push(if f16::is_nan(s) { f16::QNAN } else { s } as u32);
        let eps = if i % 2 == 0 {
            rms::EPS
        } else {
            rms::EPS_ENC0_ATTENTION
        };
        norms.push(n as u32);
        norms.push(eps as u32);
        norms.extend(halves_to_words(&padded));
        let mut g = gain.clone();
        g.resize(160, 0);
        norms.extend(halves_to_words(&g));
        let mut out = vec![0u16; n];
        rms::norm_row(&x, &gain, eps, &mut out);
        out.resize(160, 0);
        norms_want.extend(halves_to_words(&out));
    }
    compare(
        "row_sum",
        &run(&h, &ctx, ROW_SUM, 81, 1, &sums, &[0]),
        &sums_want,
        1,
    );
    compare(
        "rms_row",
        &run(&h, &ctx, RMS_ROW, 162, 80, &norms, &[0]),
        &norms_want,
        80,
    );
    // Cubic softmax rows of 96 scores.
    let (mut rows, mut rows_want) = (Vec::new(), Vec::new());
    for _ in 0..2000 {
        let spread = 8 + rng.below(12) as u16;
        let s: Vec<u16> = (0..96)
            .map(|_| {
                if rng.below(100) == 0 {
                    half(&mut rng)
                } else {
                    ((rng.next_u32() as u16) & 0x83FF) | (spread << 10)
                }
            })
            .collect();
        rows.extend(halves_to_words(&s));
        let mut p = [0u8; 96];
        cubic::softmax_row(&s, &mut p);
        rows_want.extend(codes_to_words(&p));
    }
    compare(
        "softmax_row",
        &run(&h, &ctx, SOFTMAX_ROW, 48, 24, &rows, &[0]),
        &rows_want,
        24,
    );
    drop(ctx);
    h.assert_validation_clean();
}

#[test]
fn rr_tail_softmax_matches_rust() {
    let Some(h) = Harness::new() else { return };
    let ctx = h.context();
    let mut rng = Rng(0x7441_494C_0000_0003);
    // Reciprocals of exact sums of halves in [0, 1].
    let (mut sums, mut want) = (Vec::new(), Vec::new());
    for i in 0..16384 {
        let n = 1 + (i % 16);
        let e: Vec<u16> = (0..n)
            .map(|_| match rng.below(64) {
                0 => 0,
                1 => f16::QNAN * (rng.below(8) == 0) as u16,
                _ => (rng.next_u32() % 0x3C01) as u16,
            })
            .collect();
        let mut padded = e.clone();
        padded.resize(16, 0);
        sums.push(n as u32);
        sums.extend(halves_to_words(&padded));
        want.push(gates::recip_of_sum(&e) as u32);
    }
    compare(
        "recip_of_sum",
        &run(&h, &ctx, RECIP_OF_SUM, 9, 1, &sums, &[0]),
        &want,
        1,
    );
    // Whole tail softmax rows, the exp weights read from the Rust table.
    let table = halves_to_words(&gates::exp_table()[..]);
    let (mut rows, mut rows_want) = (Vec::new(), Vec::new());
    for _ in 0..16384 {
        let l: Vec<u16> = (0..10).map(|_| half(&mut rng)).collect();
        rows.extend(halves_to_words(&l));
        let mut p = [0u16; 10];
        gates::tail_softmax(&l, &mut p);
        rows_want.extend(halves_to_words(&p));
    }
    compare(
        "tail_softmax",
        &run(&h, &ctx, TAIL_SOFTMAX, 5, 5, &rows, &table),
        &rows_want,
        5,
    );
    drop(ctx);
    h.assert_validation_clean();
}
