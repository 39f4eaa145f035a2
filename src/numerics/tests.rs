//! Cross-module tests: the MMA model against the exact oracle, the fast GEMM kernels against the
//! model, and every f16 input where the domain is f16.

use super::e4m3;
use super::exp;
use super::f16::{self, F16};
use super::gemm::{self, GemmError};
use super::mma::{self, Profile};
use super::norm;
use super::ops;
use super::oracle;
use super::recip;
use super::silu;
use super::softmax;

/// splitmix64: deterministic, no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn byte(&mut self) -> u8 {
        self.next() as u8
    }
    fn bit(&mut self) -> bool {
        self.next() & 1 == 1
    }
    /// An E4M3 code with exponent field in `lo..=hi`, random sign and mantissa (never NaN).
    fn code_exp(&mut self, lo: u8, hi: u8) -> u8 {
        let e = lo + self.below((hi - lo + 1) as u64) as u8;
        let c = (e << 3) | (self.byte() & 7);
        let c = if c == 0x7F { 0x7E } else { c };
        c | if self.bit() { 0x80 } else { 0 }
    }
    /// A finite half with exponent field in `lo..=hi`.
    fn half_exp(&mut self, lo: u16, hi: u16) -> F16 {
        let e = lo + self.below((hi - lo + 1) as u64) as u16;
        (e << 10) | (self.next() as u16 & 0x3FF) | if self.bit() { 0x8000 } else { 0 }
    }
    /// A finite half of any magnitude.
    fn half_finite(&mut self) -> F16 {
        self.half_exp(0, 30)
    }
    /// An accumulator seed: zeros of both signs, subnormals, ordinary and large values.
    fn acc(&mut self) -> F16 {
        match self.below(8) {
            0 => 0x0000,
            1 => 0x8000,
            2 => self.half_exp(0, 0),
            3 => self.half_exp(25, 30),
            4 => self.half_exp(10, 20),
            _ => self.half_finite(),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Group generators
// ---------------------------------------------------------------------------------------------

const SPECIAL_ACC: [F16; 5] = [0x7C00, 0xFC00, 0x7E00, 0xFE01, 0x7C01];

/// One E4M3 group of `g` pairs and a seed, of a random adversarial kind.
fn e4m3_group(rng: &mut Rng, g: usize) -> (F16, Vec<u8>, Vec<u8>) {
    let kind = rng.below(12);
    let mut a = vec![0u8; g];
    let mut b = vec![0u8; g];
    let mut acc = rng.acc();
    match kind {
        // Uniform codes, NaN codes included.
        0 | 1 => {
            for i in 0..g {
                a[i] = rng.byte();
                b[i] = rng.byte();
            }
        }
        // Limited range: similar magnitudes, many rounding cases.
        2 => {
            for i in 0..g {
                a[i] = rng.code_exp(5, 9);
                b[i] = rng.code_exp(5, 9);
            }
            acc = rng.half_exp(12, 18);
        }
        // Wide spread: one large product and many tiny ones.
        3 => {
            for i in 0..g {
                a[i] = rng.code_exp(0, 3);
                b[i] = rng.code_exp(0, 4);
            }
            let k = rng.below(g as u64) as usize;
            a[k] = rng.code_exp(11, 15);
            b[k] = rng.code_exp(10, 15);
            if rng.bit() {
                acc = 0;
            }
        }
        // Cancellation: each product is matched by its negation, optionally one survivor.
        4 => {
            for i in 0..g / 2 {
                a[i] = rng.code_exp(0, 15);
                b[i] = rng.code_exp(0, 15);
                a[i + g / 2] = a[i] ^ 0x80;
                b[i + g / 2] = b[i];
            }
            if rng.bit() {
                a[0] = rng.code_exp(0, 2);
            }
            acc = if rng.bit() { 0x8000 } else { 0 };
        }
        // Subnormal-heavy.
        5 => {
            for i in 0..g {
                a[i] = rng.code_exp(0, 1);
                b[i] = rng.code_exp(0, 2);
            }
            if rng.bit() {
                acc = rng.half_exp(0, 2);
            }
        }
        // Empty group: every product zero (±0 and NaN codes).
        6 => {
            let zeros = [0x00, 0x80, 0x7F, 0xFF];
            for i in 0..g {
                a[i] = zeros[rng.below(4) as usize];
                b[i] = if rng.bit() {
                    rng.byte()
                } else {
                    zeros[rng.below(4) as usize]
                };
                if rng.bit() {
                    std::mem::swap(&mut a[i], &mut b[i]);
                }
            }
        }
        // Large accumulator, tiny products.
        7 => {
            for i in 0..g {
                a[i] = rng.code_exp(0, 6);
                b[i] = rng.code_exp(0, 6);
            }
            acc = rng.half_exp(24, 30);
        }
        // Negative zeros everywhere.
        8 => {
            for i in 0..g {
                a[i] = if rng.below(4) == 0 {
                    rng.code_exp(3, 10)
                } else {
                    0x80
                };
                b[i] = if rng.bit() { 0x80 } else { rng.code_exp(3, 10) };
            }
            acc = if rng.bit() { 0x8000 } else { acc };
        }
        // Non-finite accumulator.
        9 => {
            for i in 0..g {
                a[i] = rng.byte();
                b[i] = rng.byte();
            }
            acc = SPECIAL_ACC[rng.below(5) as usize];
        }
        // Tie probe: 2^15 + 16 is a tie at ulp 32; a tiny product 2^t decides if it survives.
        10 => {
            a[0] = 0x78; // 256
            b[0] = 0x70; // 128
            a[1] = 0x48; // 4
            b[1] = 0x48;
            let t = rng.below(18) as i32 - 15; // 2^t as 2^x * 2^y
            let (x, y) = (t / 2, t - t / 2);
            let code = |e: i32| -> u8 {
                if e >= -6 {
                    ((e + 7) as u8) << 3
                } else {
                    1 << (e + 9)
                }
            };
            a[2] = code(x);
            b[2] = code(y);
            if rng.bit() {
                // Mirror the signs: truncation toward zero must mirror too.
                a[0] ^= 0x80;
                a[1] ^= 0x80;
                a[2] ^= 0x80;
            }
            acc = match rng.below(3) {
                0 => 0,
                1 => 0x8000,
                _ => {
                    // Move the 2^15 term into the accumulator.
                    let v = if a[0] & 0x80 != 0 { 0xF800 } else { 0x7800 };
                    a[0] = 0;
                    v
                }
            };
        }
        // Near overflow.
        _ => {
            for i in 0..g {
                a[i] = rng.code_exp(13, 15);
                b[i] = rng.code_exp(13, 15);
                if rng.bit() {
                    b[i] &= 0x7F;
                    a[i] &= 0x7F;
                }
            }
            acc = rng.half_exp(28, 30);
        }
    }
    (acc, a, b)
}

/// One f16 group of `g` pairs and a seed, of a random adversarial kind.
fn f16_group(rng: &mut Rng, g: usize) -> (F16, Vec<F16>, Vec<F16>) {
    let kind = rng.below(11);
    let mut a = vec![0u16; g];
    let mut b = vec![0u16; g];
    let mut acc = rng.acc();
    match kind {
        0 | 1 => {
            for i in 0..g {
                a[i] = rng.half_finite();
                b[i] = rng.half_finite();
            }
        }
        2 => {
            for i in 0..g {
                a[i] = rng.half_exp(12, 18);
                b[i] = rng.half_exp(12, 18);
            }
            acc = rng.half_exp(14, 20);
        }
        3 => {
            for i in 0..g {
                a[i] = rng.half_exp(0, 8);
                b[i] = rng.half_exp(0, 10);
            }
            let k = rng.below(g as u64) as usize;
            a[k] = rng.half_exp(20, 30);
            b[k] = rng.half_exp(15, 25);
            if rng.bit() {
                acc = 0;
            }
        }
        4 => {
            for i in 0..g / 2 {
                a[i] = rng.half_finite();
                b[i] = rng.half_exp(5, 25);
                a[i + g / 2] = a[i] ^ 0x8000;
                b[i + g / 2] = b[i];
            }
            if rng.bit() {
                a[0] = rng.half_exp(0, 3);
            }
            acc = if rng.bit() { 0x8000 } else { 0 };
        }
        5 => {
            for i in 0..g {
                a[i] = rng.half_exp(0, 1);
                b[i] = rng.half_exp(0, 16);
            }
            if rng.bit() {
                acc = rng.half_exp(0, 1);
            }
        }
        6 => {
            for i in 0..g {
                a[i] = if rng.bit() { 0x8000 } else { 0 };
                b[i] = if rng.bit() { rng.half_finite() } else { 0x8000 };
            }
        }
        7 => {
            for i in 0..g {
                a[i] = rng.half_exp(0, 10);
                b[i] = rng.half_exp(0, 10);
            }
            acc = rng.half_exp(24, 30);
        }
        // Special operands and accumulators (the IEEE-like reading).
        8 => {
            for i in 0..g {
                a[i] = rng.half_finite();
                b[i] = rng.half_finite();
            }
            let specials = [0x7C00, 0xFC00, 0x7E00, 0x0000, 0x8000];
            for _ in 0..1 + rng.below(2) {
                let k = rng.below(g as u64) as usize;
                if rng.bit() {
                    a[k] = specials[rng.below(5) as usize];
                } else {
                    b[k] = specials[rng.below(5) as usize];
                }
            }
            if rng.bit() {
                acc = SPECIAL_ACC[rng.below(5) as usize];
            }
        }
        9 => {
            for i in 0..g {
                a[i] = rng.half_finite();
                b[i] = rng.half_finite();
            }
            acc = SPECIAL_ACC[rng.below(5) as usize];
        }
        _ => {
            for i in 0..g {
                a[i] = rng.half_exp(22, 30);
                b[i] = rng.half_exp(22, 30);
            }
            acc = rng.half_exp(28, 30);
        }
    }
    (acc, a, b)
}

fn check_e4m3_groups(p: &Profile, n: usize, seed: u64) {
    let mut rng = Rng(seed);
    for i in 0..n {
        let (acc, a, b) = e4m3_group(&mut rng, p.group);
        let got = mma::group_e4m3(p, acc, &a, &b);
        let want = oracle::group_e4m3(p, acc as u32, &a, &b) as u16;
        assert_eq!(
            got, want,
            "{} case {i}: acc {acc:#06x} a {a:02x?} b {b:02x?}",
            p.name
        );
    }
}

fn check_f16_groups(p: &Profile, n: usize, seed: u64) {
    let mut rng = Rng(seed);
    for i in 0..n {
        let (acc, a, b) = f16_group(&mut rng, p.group);
        let got = mma::group_f16(p, acc, &a, &b);
        let want = oracle::group_f16(p, acc as u32, &a, &b) as u16;
        assert_eq!(
            got, want,
            "{} case {i}: acc {acc:#06x} a {a:04x?} b {b:04x?}",
            p.name
        );
    }
}

#[test]
fn f13_model_matches_oracle_on_a_million_groups() {
    check_e4m3_groups(&Profile::F13, 1_000_000, 0xF13);
}

#[test]
fn f24_model_matches_oracle_on_a_million_groups() {
    check_f16_groups(&Profile::F24, 1_000_000, 0xF24);
}

#[test]
fn h25_model_matches_oracle_on_a_million_groups() {
    // E4M3 operands (coopvec / widened coopmat) and f16 operands, half a million each.
    check_e4m3_groups(&Profile::H25, 500_000, 0x425);
    check_f16_groups(&Profile::H25, 500_000, 0x4250);
}

#[test]
fn h25_variants_match_oracle() {
    check_e4m3_groups(&Profile::H25_G8, 100_000, 0x4258);
    check_f16_groups(&Profile::H25_G8, 100_000, 0x42580);
    // f32-RZ accumulator, fed by the oracle and the model with the same f32 seeds.
    let p = Profile::H25_F32;
    let mut rng = Rng(0x425F32);
    for i in 0..100_000 {
        let (acc, a, b) = e4m3_group(&mut rng, p.group);
        let acc32 = if f16::is_nan(acc) {
            0x7FC0_0001
        } else {
            f16::to_f32(acc).to_bits()
        };
        let got = mma::group_e4m3_f32acc(&p, acc32, &a, &b);
        let want = oracle::group_e4m3(&p, acc32, &a, &b);
        assert_eq!(
            got, want,
            "case {i}: acc {acc32:#010x} a {a:02x?} b {b:02x?}"
        );
    }
}

#[test]
fn f13_readings_on_hand_made_groups() {
    let p = Profile::F13;
    // Empty group with a zero accumulator of either sign: +0.
    assert_eq!(mma::group_e4m3(&p, 0x8000, &[0x80; 16], &[0x38; 16]), 0);
    // A nonzero accumulator with no products passes through exactly, also negative.
    assert_eq!(mma::group_e4m3(&p, 0xC123, &[0; 16], &[0x38; 16]), 0xC123);
    // inf/NaN accumulators pass through unchanged.
    for s in SPECIAL_ACC {
        assert_eq!(mma::group_e4m3(&p, s, &[0x38; 16], &[0x38; 16]), s);
    }
    // Exact cancellation gives +0, not -0.
    let mut a = [0u8; 16];
    a[0] = 0x38;
    a[1] = 0xB8;
    assert_eq!(mma::group_e4m3(&p, 0x8000, &a, &[0x40; 16]), 0);
    // NaN codes decode to 0: a NaN operand contributes nothing.
    let mut a = [0u8; 16];
    a[0] = 0x7F;
    a[1] = 0x38;
    assert_eq!(mma::group_e4m3(&p, 0, &a, &[0x38; 16]), f16::ONE);
    // The truncation probe: 2^15 + 16 + 2^t. With P = 13 and E = 15 a product survives from
    // 2^2 (= 2^(E-13)); below it the tie 32784 rounds to even (32768).
    let probe = |t_code_a: u8, t_code_b: u8| {
        let mut a = [0u8; 16];
        let mut b = [0u8; 16];
        (a[0], b[0], a[1], b[1], a[2], b[2]) = (0x78, 0x70, 0x48, 0x48, t_code_a, t_code_b);
        mma::group_e4m3(&p, 0, &a, &b)
    };
    assert_eq!(probe(0x40, 0x40), 0x7801); // 2^2 survives: 32800
    assert_eq!(probe(0x40, 0x38), 0x7800); // 2^1 is truncated away: 32768
                                           // H25 keeps 2^-10 (= 2^(15-25)) but not 2^-11.
    let h = Profile::H25;
    let probe_h = |x: u8, y: u8| {
        let mut a = [0u8; 16];
        let mut b = [0u8; 16];
        (a[0], b[0], a[1], b[1], a[2], b[2]) = (0x78, 0x70, 0x48, 0x48, x, y);
        mma::group_e4m3(&h, 0, &a, &b)
    };
    assert_eq!(probe_h(0x18, 0x20), 0x7801); // 2^-4 * 2^-3 = 2^-7 survives
    assert_eq!(probe_h(0x08, 0x18), 0x7801); // 2^-6 * 2^-4 = 2^-10 survives
    assert_eq!(probe_h(0x08, 0x10), 0x7800); // 2^-6 * 2^-5 = 2^-11 is lost
                                             // F13 with a mirrored sign truncates toward zero, so the result mirrors exactly.
    let mut a = [0u8; 16];
    let mut b = [0u8; 16];
    (a[0], b[0], a[1], b[1], a[2], b[2]) = (0xF8, 0x70, 0xC8, 0x48, 0xC0, 0x40);
    assert_eq!(mma::group_e4m3(&p, 0, &a, &b), 0xF801);
}

#[test]
fn e4m3_subnormal_exponent_convention_matters_for_f13() {
    // Natively an E4M3 subnormal counts as exponent -6, which can raise E above the true
    // magnitude and truncate more; the widened convention (as an f16 route sees them) does not.
    let native = Profile::F13;
    let widened = Profile {
        exponents: mma::ExponentConvention::WidenedF16,
        ..Profile::F13
    };
    let mut rng = Rng(0x5B);
    let mut differ = 0;
    for _ in 0..20_000 {
        let a: Vec<u8> = (0..16).map(|_| rng.code_exp(0, 1)).collect();
        let b: Vec<u8> = (0..16).map(|_| rng.code_exp(0, 12)).collect();
        let got_n = mma::group_e4m3(&native, 0, &a, &b);
        let got_w = mma::group_e4m3(&widened, 0, &a, &b);
        assert_eq!(got_n, oracle::group_e4m3(&native, 0, &a, &b) as u16);
        assert_eq!(got_w, oracle::group_e4m3(&widened, 0, &a, &b) as u16);
        differ += usize::from(got_n != got_w);
    }
    assert!(differ > 0, "the subnormal convention never mattered");
}

#[test]
fn f16_operand_specials_follow_ieee_reading() {
    let p = Profile::F24;
    let one = f16::ONE;
    let mut a = [one; 8];
    let b = [one; 8];
    a[3] = f16::POS_INF;
    assert_eq!(mma::group_f16(&p, 0, &a, &b), f16::POS_INF);
    a[4] = f16::NEG_INF;
    assert_eq!(mma::group_f16(&p, 0, &a, &b), f16::QNAN);
    let mut a = [one; 8];
    a[0] = f16::POS_INF;
    let mut b2 = b;
    b2[0] = 0x8000; // inf * -0 = NaN
    assert_eq!(mma::group_f16(&p, 0, &a, &b2), f16::QNAN);
    // An infinite accumulator survives finite products and same-signed infinities.
    assert_eq!(
        mma::group_f16(&p, f16::NEG_INF, &[one; 8], &b),
        f16::NEG_INF
    );
    assert_eq!(mma::group_f16(&p, f16::POS_INF, &a, &b), f16::POS_INF);
    assert_eq!(mma::group_f16(&p, f16::NEG_INF, &a, &b), f16::QNAN);
    // A NaN accumulator is returned bit for bit.
    assert_eq!(mma::group_f16(&p, 0xFE01, &a, &b), 0xFE01);
    // Overflow of the group sum gives inf, which then passes through the chain.
    let big = [0x7BFFu16; 8];
    assert_eq!(
        mma::chain_f16(&p, 0, &[big, big].concat(), &[[one; 8], [one; 8]].concat()),
        0x7C00
    );
}

#[test]
fn f24_negative_underflow_publishes_plus_zero() {
    // Eight products of -2^-28 sum to -2^-25, which rounds to zero: the result is +0.
    let p = Profile::F24;
    let a = [0x8040u16; 8]; // -2^-18 (subnormal 64 * 2^-24)
    let b = [0x1800u16; 8]; // 2^-9... product -2^-27
    let r = mma::group_f16(&p, 0, &a, &b);
    let want = oracle::group_f16(&p, 0, &a, &b) as u16;
    assert_eq!(r, want);
    let tiny = [0x8001u16; 8]; // -2^-24
    let quarter = [0x3400u16; 8]; // 0.25: products -2^-26, sum -2^-23 ... representable
    assert_eq!(mma::group_f16(&p, 0, &tiny, &quarter), 0x8002);
    let eighth = [0x2C00u16; 8]; // 2^-4: products -2^-28, sum -2^-25 -> rounds to 0 -> +0
    assert_eq!(mma::group_f16(&p, 0, &tiny, &eighth), 0x0000);
}

// ---------------------------------------------------------------------------------------------
// Chains and split-K against the oracle
// ---------------------------------------------------------------------------------------------

/// Oracle chain: fold oracle groups of G; partitions restart from +0, partials added with an
/// f16 add (the half crate's, independent of `f16::add`).
fn oracle_split_e4m3(p: &Profile, seed: F16, a: &[u8], b: &[u8], part: Option<usize>) -> F16 {
    let k = a.len();
    if k == 0 {
        return seed;
    }
    let part = match part {
        Some(x) if x > 0 && x < k => x,
        _ => k,
    };
    let mut total = half::f16::from_bits(0);
    for (pi, s) in (0..k).step_by(part).enumerate() {
        let e = (s + part).min(k);
        let mut acc = if pi == 0 { seed } else { 0 };
        let mut g0 = s;
        while g0 < e {
            let g1 = (g0 + p.group).min(e);
            acc = oracle::group_e4m3(p, acc as u32, &a[g0..g1], &b[g0..g1]) as u16;
            g0 = g1;
        }
        let accf = half::f16::from_bits(acc);
        total = if pi == 0 { accf } else { total + accf };
    }
    total.to_bits()
}

#[test]
fn chains_and_partitions_match_the_oracle() {
    let mut rng = Rng(0xC4A1);
    for case in 0..3000 {
        let p = [Profile::F13, Profile::H25, Profile::H25_G8][case % 3];
        let k = [16, 32, 64, 96, 100, 256][rng.below(6) as usize];
        let mut a = Vec::new();
        let mut b = Vec::new();
        while a.len() < k {
            let (_, x, y) = e4m3_group(&mut rng, 16);
            a.extend(x);
            b.extend(y);
        }
        a.truncate(k);
        b.truncate(k);
        let seed = rng.acc();
        let part = [None, Some(32), Some(64), Some(48), Some(0)][rng.below(5) as usize];
        let want = oracle_split_e4m3(&p, seed, &a, &b, part);
        let got = mma::split_e4m3(&p, seed, &a, &b, part);
        // inf + -inf between partials: any NaN pattern (the half crate's is negative).
        if f16::is_nan(want) {
            assert!(f16::is_nan(got), "{} k {k} part {part:?}", p.name);
            continue;
        }
        assert_eq!(got, want, "{} k {k} part {part:?} seed {seed:#06x}", p.name);
        if part.is_none() {
            assert_eq!(mma::chain_e4m3(&p, seed, &a, &b), want);
        }
    }
}

#[test]
fn split_k_partials_are_added_in_partition_order() {
    // f16 additions do not associate: (1 + 1) + 2048 = 2050, but (2048 + 1) + 1 = 2048 (two ties
    // to even). Partitions of 32 holding 1, 1 and 2048 (in that order) must give 2050.
    let p = Profile::F13;
    let k = 96;
    let b = vec![0x38u8; k]; // 1.0
    let mut a = vec![0u8; k];
    a[0] = 0x38;
    a[32] = 0x38;
    for x in a.iter_mut().skip(64).take(8) {
        *x = 0x78; // 8 * 256 = 2048
    }
    assert_eq!(mma::split_e4m3(&p, 0, &a, &b, Some(32)), 0x6801); // 2050
                                                                  // One chain: 1, then 2, then 2 + 2048 inside one group (exact).
    assert_eq!(mma::chain_e4m3(&p, 0, &a, &b), 0x6801);
    // Big partition first: the chain and the partitions both lose the ones.
    let mut a2 = vec![0u8; k];
    for x in a2.iter_mut().take(8) {
        *x = 0x78;
    }
    a2[32] = 0x38;
    a2[64] = 0x38;
    assert_eq!(mma::split_e4m3(&p, 0, &a2, &b, Some(32)), 0x6800);
    assert_eq!(mma::split_e4m3(&p, 0, &a2, &b, Some(64)), 0x6800);
    // The seed enters partition 0 only: seed 2048 then + 1 + 1 gives 2048; seed 1 gives 3.
    let mut a3 = vec![0u8; k];
    a3[32] = 0x38;
    a3[64] = 0x38;
    assert_eq!(mma::split_e4m3(&p, 0x6800, &a3, &b, Some(32)), 0x6800);
    assert_eq!(mma::split_e4m3(&p, 0x3C00, &a3, &b, Some(32)), 0x4200);
    // Partitions restart from +0: with seed 2048 and two ones in separate groups of partition 1,
    // the chain loses both ones (2048 + 1 ties to 2048 twice) but the partition sums them first.
    let mut a4 = vec![0u8; 64];
    a4[32] = 0x38;
    a4[48] = 0x38;
    assert_eq!(mma::chain_e4m3(&p, 0x6800, &a4, &b[..64]), 0x6800);
    assert_eq!(mma::split_e4m3(&p, 0x6800, &a4, &b[..64], Some(32)), 0x6801);
    for part in [Some(32), Some(64), None] {
        for seed in [0, 0x6800, 0xBC00] {
            assert_eq!(
                mma::split_e4m3(&p, seed, &a, &b, part),
                oracle_split_e4m3(&p, seed, &a, &b, part)
            );
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Fast GEMM kernels against the model
// ---------------------------------------------------------------------------------------------

fn random_matrix_e4m3(rng: &mut Rng, rows: usize, k: usize) -> Vec<u8> {
    let mut v = Vec::with_capacity(rows * k);
    while v.len() < rows * k {
        let (_, x, _) = e4m3_group(rng, 16);
        v.extend(x);
    }
    v.truncate(rows * k);
    v
}

fn random_matrix_f16(rng: &mut Rng, rows: usize, k: usize, specials: bool) -> Vec<u16> {
    let mut v = Vec::with_capacity(rows * k);
    while v.len() < rows * k {
        let (_, x, _) = f16_group(rng, 8);
        v.extend(x.into_iter().map(|h| {
            if !specials && f16::is_nonfinite(h) {
                0x3C00
            } else {
                h
            }
        }));
    }
    v.truncate(rows * k);
    v
}

#[test]
fn gemm_e4m3_matches_the_model() {
    let mut rng = Rng(0x6E33);
    let shapes = [
        (5, 7, 64),
        (3, 4, 100),
        (8, 9, 256),
        (1, 1, 16),
        (2, 3, 7),
        (4, 5, 0),
    ];
    for p in [
        Profile::F13,
        Profile::H25,
        Profile::H25_G8,
        Profile::H25_F32,
        Profile {
            group: 4,
            frac_bits: 30,
            ..Profile::F13
        },
    ] {
        for &(m, n, k) in &shapes {
            for part in [None, Some(32), Some(24)] {
                let a = random_matrix_e4m3(&mut rng, m, k);
                let bt = random_matrix_e4m3(&mut rng, n, k);
                let seeds: Vec<u16> = (0..m * n)
                    .map(|_| {
                        if rng.below(10) == 0 {
                            SPECIAL_ACC[rng.below(5) as usize]
                        } else {
                            rng.acc()
                        }
                    })
                    .collect();
                for with_seeds in [false, true] {
                    let s = with_seeds.then_some(&seeds[..]);
                    let mut out = vec![0u16; m * n];
                    gemm::gemm_e4m3(&p, &a, &bt, m, n, k, s, part, &mut out)
                        .expect("shapes are consistent");
                    for i in 0..m {
                        for j in 0..n {
                            let seed = s.map_or(0, |s| s[i * n + j]);
                            let want = mma::split_e4m3(
                                &p,
                                seed,
                                &a[i * k..(i + 1) * k],
                                &bt[j * k..(j + 1) * k],
                                part,
                            );
                            assert_eq!(
                                out[i * n + j],
                                want,
                                "{} {m}x{n}x{k} part {part:?} ({i},{j}) seed {seed:#06x}",
                                p.name
                            );
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn gemm_e4m3_matches_the_model_on_many_random_groups() {
    // 400 x 64 outputs of K = 64 (4 groups each): ~100k group steps through the fast kernel.
    let mut rng = Rng(0x6E34);
    for p in [Profile::F13, Profile::H25] {
        let (m, n, k) = (400, 64, 64);
        let a = random_matrix_e4m3(&mut rng, m, k);
        let bt = random_matrix_e4m3(&mut rng, n, k);
        let seeds: Vec<u16> = (0..m * n).map(|_| rng.acc()).collect();
        let mut out = vec![0u16; m * n];
        gemm::gemm_e4m3(&p, &a, &bt, m, n, k, Some(&seeds), None, &mut out)
            .expect("shapes are consistent");
        for i in 0..m {
            for j in 0..n {
                let want = mma::chain_e4m3(
                    &p,
                    seeds[i * n + j],
                    &a[i * k..(i + 1) * k],
                    &bt[j * k..(j + 1) * k],
                );
                assert_eq!(out[i * n + j], want, "{} ({i},{j})", p.name);
            }
        }
    }
}

#[test]
fn gemm_f16_matches_the_model() {
    let mut rng = Rng(0x6F16);
    let shapes = [(6, 32, 16), (5, 4, 32), (3, 5, 40), (2, 2, 5)];
    for p in [
        Profile::F24,
        Profile::H25,
        Profile::H25_G8,
        Profile::H25_F32,
    ] {
        for &(m, n, k) in &shapes {
            for specials in [false, true] {
                for part in [None, Some(16)] {
                    let a = random_matrix_f16(&mut rng, m, k, specials);
                    let bt = random_matrix_f16(&mut rng, n, k, specials);
                    let seeds: Vec<u16> = (0..m * n).map(|_| rng.acc()).collect();
                    let mut out = vec![0u16; m * n];
                    gemm::gemm_f16(&p, &a, &bt, m, n, k, Some(&seeds), part, &mut out)
                        .expect("shapes are consistent");
                    for i in 0..m {
                        for j in 0..n {
                            let want = mma::split_f16(
                                &p,
                                seeds[i * n + j],
                                &a[i * k..(i + 1) * k],
                                &bt[j * k..(j + 1) * k],
                                part,
                            );
                            assert_eq!(out[i * n + j], want, "{} {m}x{n}x{k} ({i},{j})", p.name);
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn gemm_rejects_inconsistent_shapes() {
    let p = Profile::F13;
    let mut out = vec![0u16; 4];
    assert_eq!(
        gemm::gemm_e4m3(&p, &[0; 31], &[0; 32], 2, 2, 16, None, None, &mut out),
        Err(GemmError::Length {
            operand: "a",
            expected: 32,
            got: 31
        })
    );
    assert_eq!(
        gemm::gemm_e4m3(
            &p,
            &[0; 32],
            &[0; 32],
            2,
            2,
            16,
            Some(&[0; 3]),
            None,
            &mut out
        ),
        Err(GemmError::Length {
            operand: "seeds",
            expected: 4,
            got: 3
        })
    );
    let packed = gemm::PackedE4m3::new(&[0; 32], 2, 16, mma::ExponentConvention::WidenedF16)
        .expect("consistent");
    assert!(matches!(
        gemm::gemm_e4m3_packed(&p, &[0; 32], &packed, 2, None, None, &mut out),
        Err(GemmError::Convention { .. })
    ));
    assert!(matches!(
        gemm::gemm_f16(&p, &[0; 3], &[0; 4], usize::MAX, 2, 2, None, None, &mut out),
        Err(GemmError::Shape { .. })
    ));
}

#[test]
fn gemm_e4m3_f13_throughput() {
    // Reports MAC/s of the F13 kernel; asserts only the result's consistency (never speed).
    let mut rng = Rng(0x7A57);
    let (m, n, k) = (64, 128, 1024);
    let a = random_matrix_e4m3(&mut rng, m, k);
    let bt: Vec<u8> = (0..n * k).map(|_| rng.code_exp(0, 12)).collect();
    let packed = gemm::PackedE4m3::new(&bt, n, k, Profile::F13.exponents).expect("consistent");
    let mut out = vec![0u16; m * n];
    let t = std::time::Instant::now();
    gemm::gemm_e4m3_packed(&Profile::F13, &a, &packed, m, None, None, &mut out)
        .expect("consistent");
    let secs = t.elapsed().as_secs_f64();
    let macs = (m * n * k) as f64;
    eprintln!(
        "gemm_e4m3 F13 {m}x{n}x{k}: {:.1} M MAC/s ({:.2} ms)",
        macs / secs / 1e6,
        secs * 1e3
    );
    for (i, j) in [(0, 0), (m - 1, n - 1), (17, 93)] {
        let want = mma::chain_e4m3(
            &Profile::F13,
            0,
            &a[i * k..(i + 1) * k],
            &bt[j * k..(j + 1) * k],
        );
        assert_eq!(out[i * n + j], want);
    }
}

// ---------------------------------------------------------------------------------------------
// f16 arithmetic against the oracle
// ---------------------------------------------------------------------------------------------

/// FMA operands whose product is near c in magnitude with the opposite sign: cancellation.
fn cancelling_fma(rng: &mut Rng) -> (u16, u16, u16) {
    let a = rng.half_exp(10, 20);
    let b = rng.half_exp(10, 20);
    let p = f16::mul(a, b);
    let c = if f16::is_nonfinite(p) {
        0
    } else {
        p ^ 0x8000 ^ (rng.next() as u16 & 3)
    };
    (a, b, c)
}

#[test]
fn fused_half_fma_matches_exact_arithmetic() {
    let mut rng = Rng(0xF3A);
    for i in 0..1_000_000 {
        let (a, b, c) = match i % 4 {
            0 => (rng.half_finite(), rng.half_finite(), rng.half_finite()),
            1 => cancelling_fma(&mut rng),
            2 => (rng.half_exp(0, 3), rng.half_exp(0, 15), rng.half_exp(0, 2)),
            _ => (
                rng.half_finite(),
                if rng.bit() { 0 } else { 0x8000 },
                if rng.bit() { 0 } else { 0x8000 },
            ),
        };
        let want = oracle::fma(a, b, c);
        assert_eq!(f16::fma(a, b, c), want, "fma({a:#06x}, {b:#06x}, {c:#06x})");
    }
    // Non-finite inputs follow IEEE.
    assert_eq!(f16::fma(0x7C00, 0, 0x3C00), f16::QNAN);
    assert_eq!(f16::fma(0x7C00, 0x3C00, 0xFC00), f16::QNAN);
    assert_eq!(f16::fma(0x7C00, 0xBC00, 0x3C00), f16::NEG_INF);
    assert!(f16::is_nan(f16::fma(0x3C00, 0x3C00, 0x7E00)));
}

/// `shaders/lib/f16.glsl`'s `f16_fma_finite_rn` (native-f16 kernels without the RTZ f32 mode):
/// the f32 sum and its TwoSum error give the exact sum rounded to odd at f32 precision, which
/// rounds to the exact sum's f16. The same steps here against `f16::fma`, on the random families
/// above and on sums that land exactly halfway between two halves in f32.
#[test]
fn kernels_round_to_odd_fma_equals_fma() {
    let odd = |a: u16, b: u16, c: u16| -> u16 {
        let p = f16::to_f32(a) * f16::to_f32(b);
        let cf = f16::to_f32(c);
        let s = p + cf;
        let bv = s - p;
        let err = (p - (s - bv)) + (cf - bv);
        let mut sb = s.to_bits();
        if err != 0.0 && sb & 1 == 0 {
            sb = if (err > 0.0) == (s > 0.0) {
                sb + 1
            } else {
                sb - 1
            };
        }
        f16::from_f32_rne(f32::from_bits(sb))
    };
    let mut rng = Rng(0x0DD_F3A);
    let mut ties = 0;
    for i in 0..1_000_000u32 {
        let (a, b, c) = match i % 4 {
            0 => (rng.half_finite(), rng.half_finite(), rng.half_finite()),
            1 => cancelling_fma(&mut rng),
            // a*b + c halfway between two halves in f32 only (the ties of gpu_numerics).
            2 => (
                0x3C00 | (i & 0x3FF) as u16,
                0x1400 | (rng.next() as u16 & 0x3FF),
                0x3C00 | ((i * 7) & 0x3FF) as u16,
            ),
            _ => (rng.half_exp(0, 3), rng.half_exp(0, 15), rng.half_exp(0, 2)),
        };
        let want = f16::fma(a, b, c);
        let p = f16::to_f32(a) * f16::to_f32(b);
        let s = p + f16::to_f32(c);
        if f16::from_f32_rne(s) != want {
            ties += 1;
        }
        assert_eq!(odd(a, b, c), want, "fma({a:#06x}, {b:#06x}, {c:#06x})");
    }
    // Deterministic (fixed seed): 46 cases where rounding the f32 sum alone would be wrong.
    assert!(
        ties > 20,
        "only {ties} cases where the f32 sum alone rounds wrongly"
    );
}

#[test]
fn add_and_mul_are_correctly_rounded() {
    let mut rng = Rng(0xADD);
    for _ in 0..1_000_000 {
        let (a, b) = (rng.half_finite(), rng.half_finite());
        let (x, y) = (oracle::half_f64(a), oracle::half_f64(b));
        // Sum and product are exact in f64 (halves span at most 40 / 22 bits).
        let s = (x + y) * 2f64.powi(24);
        let want_add = if x + y == 0.0 {
            if a & b & 0x8000 != 0 {
                0x8000
            } else {
                0
            }
        } else {
            oracle::round_signed(s as i128, 24)
        };
        assert_eq!(f16::add(a, b), want_add, "{a:#06x} + {b:#06x}");
        let p = x * y * 2f64.powi(48);
        let want_mul = if p == 0.0 {
            (a ^ b) & 0x8000
        } else {
            oracle::round_signed(p as i128, 48)
        };
        assert_eq!(f16::mul(a, b), want_mul, "{a:#06x} * {b:#06x}");
    }
}

#[test]
fn fixed_point_rounding_helpers_agree() {
    let mut rng = Rng(0x2064);
    for _ in 0..1_000_000 {
        let bits = rng.below(40) as u32;
        let v = (rng.next() >> (64 - bits.max(1))) as i64 * if rng.bit() { -1 } else { 1 };
        let scale = rng.below(80) as i32 - 60;
        let want = f16::round_fixed_rne(v as i128, scale);
        assert_eq!(f16::round_i64_rne(v, scale), want, "{v} * 2^{scale}");
        if v != 0 {
            assert_eq!(
                want,
                oracle::round_signed(v as i128, -scale),
                "{v} * 2^{scale}"
            );
        }
        // f32 RZ: compare with truncating the exact value through f64 when it is exact there.
        let rz = f16::round_fixed_f32_rz(v as i128, scale);
        let x = v as f64 * 2f64.powi(scale); // exact: |v| < 2^40
        let t = x as f32; // RNE
        let t = if (t as f64).abs() > x.abs() {
            f32::from_bits(t.to_bits() - 1)
        } else {
            t
        };
        assert_eq!(rz, t.to_bits(), "{v} * 2^{scale}");
    }
}

#[test]
fn rtz_conversion_truncates_every_f32_sample() {
    let mut rng = Rng(0x272);
    for _ in 0..1_000_000 {
        let x = f32::from_bits(rng.next() as u32);
        if x.is_nan() {
            assert!(f16::is_nan(f16::from_f32_rtz(x)));
            continue;
        }
        let h = f16::from_f32_rtz(x);
        let hv = oracle::half_f64(h);
        if x.is_infinite() {
            assert_eq!(hv, x as f64);
            continue;
        }
        // |h| <= |x| and the next half up in magnitude is > |x| (or h is the largest finite).
        assert!(hv.abs() <= (x as f64).abs(), "{x:e}");
        assert_eq!(h & 0x8000 != 0, x.is_sign_negative(), "{x:e}");
        let next = oracle::half_f64((h & 0x7FFF) + 1);
        assert!(
            h & 0x7FFF == 0x7BFF || next > (x as f64).abs(),
            "{x:e} -> {h:#06x}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// E4M3
// ---------------------------------------------------------------------------------------------

#[test]
fn e4m3_decode_matches_the_format_definition() {
    for c in 0..=255u8 {
        let want = oracle::e4m3_f64(c);
        let got = oracle::half_f64(e4m3::to_f16(c));
        assert_eq!(got, want, "{c:#04x}");
        if want == 0.0 && c & 0x7F != 0x7F {
            assert_eq!(e4m3::to_f16(c) & 0x8000 != 0, c & 0x80 != 0);
        }
    }
    assert_eq!(e4m3::to_f16(0x7F), 0);
    assert_eq!(e4m3::to_f16(0xFF), 0);
}

#[test]
fn e4m3_publication_edge_cases() {
    assert_eq!(e4m3::from_f16(0x7E00), 0x00); // NaN -> +0
    assert_eq!(e4m3::from_f16(0xFE00), 0x00);
    assert_eq!(e4m3::from_f16(0x8000), 0x80); // -0 kept
    assert_eq!(e4m3::from_f16(0x7C00), 0x7E); // +inf -> 448
    assert_eq!(e4m3::from_f16(0xFC00), 0xFE);
    assert_eq!(e4m3::from_f16(0x5F40), 0x7E); // 464: tie between 448 and 480 -> even (448)
    assert_eq!(e4m3::from_f16(0x5F80), 0x7E); // 480 saturates
    assert_eq!(e4m3::from_f16(0x1800), 0x01); // 2^-9
    assert_eq!(e4m3::from_f16(0x1400), 0x00); // 2^-10: tie with 0 -> even (0)
    assert_eq!(e4m3::from_f16(0x1401), 0x01); // just above the tie
    assert_eq!(e4m3::from_f16(0x9400), 0x80); // -2^-10 -> -0
    assert_eq!(e4m3::from_f16(0x2380), 0x08); // 7.5 * 2^-9: tie between 7 and 8 -> 8 (2^-6)
    assert_eq!(e4m3::from_f16(0x237F), 0x07);
}

// ---------------------------------------------------------------------------------------------
// rsqrt and reciprocal: proven for every half input
// ---------------------------------------------------------------------------------------------

/// Value of a positive half at 2^-25 (so midpoints between halves are integers too).
fn at25(h: F16) -> u128 {
    (oracle::half_f64(h) * 2f64.powi(25)) as u128
}

#[test]
fn recip_is_correctly_rounded_for_every_half() {
    for h in 0..=u16::MAX {
        let r = recip::recip(h);
        if f16::is_nan(h) {
            assert!(f16::is_nan(r));
            continue;
        }
        let x = oracle::half_f64(h);
        if x == 0.0 || x.is_infinite() {
            assert_eq!(oracle::half_f64(r), 1.0 / x, "{h:#06x}");
            continue;
        }
        assert_eq!(r & 0x8000, h & 0x8000, "{h:#06x}");
        let (rm, hm) = (r & 0x7FFF, h & 0x7FFF);
        // X = x * 2^24 (integer); 1/x vs a midpoint M * 2^-25:  1/x < M 2^-25  <=>  X*M > 2^49.
        let xi = (oracle::half_f64(hm) * 2f64.powi(24)) as u128;
        let one = 1u128 << 49;
        if rm == 0x7C00 {
            // 1/x >= 65520 (the RNE overflow threshold).
            assert!(xi * (65520u128 << 25) <= one, "{h:#06x}");
            continue;
        }
        let lower = if rm == 0 { 0 } else { at25(rm) + at25(rm - 1) };
        let upper = if rm == 0x7BFF {
            65520u128 << 26
        } else {
            at25(rm) + at25(rm + 1)
        };
        // lower/2 <= 1/x <= upper/2 (at 2^-25), ties only towards the even pattern.
        let lo_cmp = (xi * lower).cmp(&(one << 1)); // x*lower/2 vs 1
        let hi_cmp = (xi * upper).cmp(&(one << 1));
        assert!(
            lo_cmp != std::cmp::Ordering::Greater,
            "{h:#06x} -> {r:#06x} too big"
        );
        assert!(
            hi_cmp != std::cmp::Ordering::Less,
            "{h:#06x} -> {r:#06x} too small"
        );
        if lo_cmp == std::cmp::Ordering::Equal || hi_cmp == std::cmp::Ordering::Equal {
            assert_eq!(rm & 1, 0, "{h:#06x}: tie must go to even");
        }
    }
    assert_eq!(recip::recip(0x3C00), 0x3C00);
    assert_eq!(recip::recip(0x4000), 0x3800);
    assert_eq!(recip::recip(0x0001), 0x7C00); // 2^24 overflows
    assert_eq!(recip::recip(0x7BFF), 0x0100); // 1/65504 is a subnormal
}

#[test]
fn rsqrt_is_correctly_rounded_for_every_half() {
    for h in 0..=u16::MAX {
        let r = recip::rsqrt(h);
        let x = oracle::half_f64(h);
        if x.is_nan() || x < 0.0 {
            assert!(f16::is_nan(r), "{h:#06x}");
            continue;
        }
        if x == 0.0 {
            assert_eq!(r, (h & 0x8000) | 0x7C00);
            continue;
        }
        if x.is_infinite() {
            assert_eq!(r, 0);
            continue;
        }
        // 1/sqrt(x) < M 2^-26 (M = sum of two neighbours at 2^-25, i.e. twice a midpoint)
        // <=>  x * M^2 > 2^52  <=>  X * M^2 > 2^76 with X = x * 2^24.
        let xi = (x * 2f64.powi(24)) as u128;
        let bound = 1u128 << 76;
        let lower = at25(r) + at25(r - 1);
        let upper = at25(r) + at25(r + 1);
        let lo_cmp = (xi * lower * lower).cmp(&bound);
        let hi_cmp = (xi * upper * upper).cmp(&bound);
        assert!(
            lo_cmp != std::cmp::Ordering::Greater,
            "{h:#06x} -> {r:#06x} too big"
        );
        assert!(
            hi_cmp != std::cmp::Ordering::Less,
            "{h:#06x} -> {r:#06x} too small"
        );
        if lo_cmp == std::cmp::Ordering::Equal || hi_cmp == std::cmp::Ordering::Equal {
            assert_eq!(r & 1, 0);
        }
    }
    assert_eq!(recip::rsqrt(0x3C00), 0x3C00);
    assert_eq!(recip::rsqrt(0x4400), 0x3800); // 1/sqrt(4) = 0.5
    assert_eq!(recip::rsqrt(0x0001), 0x6C00); // 1/sqrt(2^-24) = 2^12
}

// ---------------------------------------------------------------------------------------------
// SiLU
// ---------------------------------------------------------------------------------------------

/// The cubic with the oracle's FMA and multiplication (independent of `f16::fma` / `f16::mul`).
fn silu_oracle(x: F16) -> F16 {
    let v = oracle::half_f64(x);
    let b = if v.is_nan() {
        x
    } else if v < -4.0 {
        0xC400
    } else if v > 4.0 {
        0x4400
    } else {
        x
    };
    let p = oracle::fma(silu::C3, b & 0x7FFF, silu::C2);
    let p = oracle::fma(b, p, silu::C1);
    let prod = v * oracle::half_f64(p);
    if prod.is_nan() {
        return f16::QNAN;
    }
    if prod.is_infinite() {
        return if prod < 0.0 { 0xFC00 } else { 0x7C00 };
    }
    if prod == 0.0 {
        return if prod.is_sign_negative() { 0x8000 } else { 0 };
    }
    oracle::round_signed((prod * 2f64.powi(48)) as i128, 48)
}

#[test]
fn silu_table_equals_the_cubic_and_the_oracle_for_every_half() {
    let t = silu::silu_table();
    for x in 0..=u16::MAX {
        let c = silu::silu(x);
        assert_eq!(t[x as usize], c, "{x:#06x}");
        assert_eq!(silu::silu_lookup(x), c);
        let want = silu_oracle(x);
        if f16::is_nan(want) {
            assert!(f16::is_nan(c), "{x:#06x}");
        } else {
            assert_eq!(c, want, "{x:#06x}");
        }
    }
}

#[test]
fn silu_known_values_and_properties() {
    assert_eq!(silu::silu(0x0000), 0x0000);
    assert_eq!(silu::silu(0x8000), 0x8000);
    assert_eq!(silu::silu(0x3C00), 0x3D25); // 1 -> 1.2861328125
    assert!(f16::is_nan(silu::silu(0xFC00))); // -inf -> NaN (publishes as +0)
    assert_eq!(e4m3::from_f16(silu::silu(0xFC00)), 0x00);
    assert_eq!(silu::silu(0x7C00), 0x7C00);
    assert!(f16::is_nan(silu::silu(0x7E00)));
    for x in 0xC400..0xFC00u16 {
        // Every x <= -4 gives -0 (E4M3 0x80).
        assert_eq!(silu::silu(x), 0x8000, "{x:#06x}");
    }
    // For x >= 4 the cubic is the constant 1.7890625.
    for x in 0x4400..0x7C00u16 {
        assert_eq!(silu::silu(x), f16::mul(x, 0x3F28), "{x:#06x}");
    }
}

// ---------------------------------------------------------------------------------------------
// Exponential tricks
// ---------------------------------------------------------------------------------------------

#[test]
fn exp_tricks_over_every_half() {
    assert_eq!(exp::exp_window(0), exp::WINDOW_EXP0);
    assert_eq!(exp::exp_window(0x8000), exp::WINDOW_EXP0);
    assert_eq!(exp::exp_vit(0), exp::VIT_EXP0);
    assert_eq!(oracle::half_f64(exp::WINDOW_EXP0), 0.025390625);
    assert_eq!(oracle::half_f64(exp::VIT_EXP0), 0.083984375);
    // NaN takes the low end, ±inf the ends.
    assert_eq!(exp::exp_window(0x7E00), 0x0400);
    assert_eq!(exp::exp_window(0xFC00), 0x0400);
    assert_eq!(exp::exp_window(0x7C00), 0x48E0);
    assert_eq!(exp::exp_vit(0x7E00), exp::exp_vit(0xFC00));
    let mut finite: Vec<u16> = (0..=u16::MAX).filter(|&h| !f16::is_nan(h)).collect();
    finite.sort_by(|&a, &b| oracle::half_f64(a).total_cmp(&oracle::half_f64(b)));
    let (mut pw, mut pv) = (0f64, 0f64);
    for &s in &finite {
        let (w, v) = (exp::exp_window(s), exp::exp_vit(s));
        let (wf, vf) = (oracle::half_f64(w), oracle::half_f64(v));
        assert!((2f64.powi(-14)..=9.75).contains(&wf), "{s:#06x} -> {wf}");
        assert!(
            (0.0040283203125..=1.640625).contains(&vf),
            "{s:#06x} -> {vf}"
        );
        assert!(wf >= pw && vf >= pv, "not monotone at {s:#06x}");
        (pw, pv) = (wf, vf);
        // Independent evaluation of the affine maps: exact in f64 for a finite half score.
        let sv = oracle::half_f64(s);
        if sv.is_finite() {
            let xw = half::f16::from_f32((0.044921875 * sv + 1.30078125) as f32);
            let xw = xw.to_f64().clamp(1.03125, 1.5693359375);
            let want_w = (half::f16::from_f64(xw).to_bits() << 5) ^ 0x8000;
            assert_eq!(w, want_w, "window {s:#06x}");
            let xv = half::f16::from_f64(0.08953857421875 * sv + 1.708984375).to_f64();
            let xv = xv.clamp(1.439453125, 1.9775390625);
            let want_v = (half::f16::from_f64(xv).to_bits() << 4).wrapping_add(0x4000);
            assert_eq!(v, want_v, "vit {s:#06x}");
        }
    }
    assert_eq!(pw, 9.75);
    assert_eq!(pv, 1.640625);
}

#[test]
fn window_affine_double_rounding_equals_single_rounding() {
    // §8.7 reads the window affine as an f32 FMA rounded to f32, then to f16. For every finite half
    // score this equals one rounding of the exact value (the f32 step never lands on an f16
    // midpoint), so a port may round once; the weights must agree either way.
    for s in 0..=u16::MAX {
        let sv = oracle::half_f64(s);
        if !sv.is_finite() {
            continue;
        }
        let exact = 0.044921875 * sv + 1.30078125; // exact in f64
        let single = half::f16::from_f64(exact);
        let double = half::f16::from_f32(exact as f32);
        assert_eq!(single, double, "{s:#06x}");
        let x = single.to_f64().clamp(1.03125, 1.5693359375);
        let want = (half::f16::from_f64(x).to_bits() << 5) ^ 0x8000;
        assert_eq!(exp::exp_window(s), want, "{s:#06x}");
    }
}

// ---------------------------------------------------------------------------------------------
// Softmax
// ---------------------------------------------------------------------------------------------

fn hadd(a: half::f16, b: half::f16) -> half::f16 {
    a + b
}

/// The tree spelled out with the half crate's (correctly rounded) additions.
fn tree_reference(e: &[F16; 64]) -> F16 {
    let v = |i: usize| half::f16::from_bits(e[i]);
    let mut t = Vec::new();
    for g in 0..8 {
        let b: Vec<half::f16> = (0..4)
            .map(|j| hadd(v(g + 16 * j), v(g + 16 * j + 8)))
            .collect();
        t.push(hadd(hadd(hadd(b[0], b[1]), b[2]), b[3]));
    }
    let even = hadd(hadd(hadd(t[0], t[2]), t[4]), t[6]);
    let odd = hadd(hadd(hadd(t[1], t[3]), t[5]), t[7]);
    hadd(even, odd).to_bits()
}

#[test]
fn softmax_tree_and_window_probabilities() {
    let mut rng = Rng(0x50F7);
    let mut order_mattered = 0;
    for _ in 0..20_000 {
        let s: [F16; 64] = std::array::from_fn(|_| match rng.below(3) {
            0 => rng.half_exp(10, 17),
            1 => 0xD7E8, // -126.5: a masked prior
            _ => rng.half_exp(0, 16),
        });
        let e = softmax::window_weights(&s);
        let total = softmax::tree_sum(&e);
        assert_eq!(total, tree_reference(&e));
        let seq = e.iter().fold(half::f16::from_bits(0), |acc, &x| {
            acc + half::f16::from_bits(x)
        });
        if seq.to_bits() != total {
            order_mattered += 1;
        }
        let r = half::f16::from_f64(1.0 / oracle::half_f64(total)).to_bits();
        let p = softmax::window_softmax(&s);
        for k in 0..64 {
            let want =
                e4m3::from_f16((half::f16::from_bits(e[k]) * half::f16::from_bits(r)).to_bits());
            assert_eq!(p[k], want);
        }
    }
    assert!(
        order_mattered > 0,
        "the tree order never mattered; weak test data"
    );
    // All scores zero: e = 0.025390625, total = 1.625, r = f16(1/1.625) = 0.615234375 (0x38EC),
    // P = E4(f16(0.025390625 * 0.615234375)) = E4(0.015625) = 2^-6 = code 0x08.
    let e = softmax::window_weights(&[0; 64]);
    assert_eq!(softmax::tree_sum(&e), 0x3E80);
    assert_eq!(recip::recip(0x3E80), 0x38EC);
    assert_eq!(softmax::window_softmax(&[0; 64]), [0x08; 64]);
}

#[test]
fn vit_softmax_pieces() {
    assert_eq!(softmax::vit_weight(0), e4m3::from_f16(0x2D60));
    // Blocks add in order, then the padded rows are removed once: 1 + 2 - f16(0.083984375 * 10).
    assert_eq!(softmax::vit_total(&[0x3C00, 0x4000], 10), 0x4052); // 2.16015625
    assert_eq!(softmax::vit_total(&[0x3C00, 0x4000], 0), 0x4200);
    // A padded block of 64 zero keys contributes exactly what the correction removes when the
    // total holds it exactly: 64 * 0.083984375 = 5.375.
    let pad = softmax::vit_block_sum(&[exp::VIT_EXP0; 64]);
    assert_eq!(pad, 0x4560);
    assert_eq!(softmax::vit_total(&[pad], 64), 0x0000);
    let r = softmax::vit_recip(0x4052);
    assert_eq!(r, half::f16::from_f64(1.0 / 2.16015625).to_bits());
    assert_eq!(
        softmax::vit_output(0x4052, r),
        e4m3::from_f16(f16::mul(0x4052, r))
    );
    // The block order is the addition order: ((a + b) + c) differs from (a + (b + c)) here.
    let (a, b, c) = (0x6800, 0x3C00, 0x3C00); // 2048, 1, 1
    assert_eq!(softmax::vit_total(&[a, b, c], 0), 0x6800);
    assert_eq!(softmax::vit_total(&[b, c, a], 0), 0x6801);
}

// ---------------------------------------------------------------------------------------------
// Cosine normalisation
// ---------------------------------------------------------------------------------------------

#[test]
fn cosine_norm_matches_an_independent_evaluation() {
    let mut rng = Rng(0xC05);
    let mut fused_mattered = 0;
    for _ in 0..50_000 {
        let v: [F16; 32] = std::array::from_fn(|_| rng.half_exp(8, 18));
        let mut r: Vec<half::f16> = (0..16)
            .map(|c| {
                let hi =
                    (half::f16::from_bits(v[c + 16]) * half::f16::from_bits(v[c + 16])).to_bits();
                let fused = oracle::fma(v[c], v[c], hi);
                let double = (half::f16::from_bits(v[c]) * half::f16::from_bits(v[c])
                    + half::f16::from_bits(hi))
                .to_bits();
                if fused != double {
                    fused_mattered += 1;
                }
                half::f16::from_bits(fused)
            })
            .collect();
        for s in [8, 4, 2, 1] {
            for c in 0..s {
                r[c] = r[c] + r[c + s];
            }
        }
        assert_eq!(norm::sum_squares(&v), r[0].to_bits());
        let n = norm::cosine_norm(&v);
        assert_eq!(n, recip::rsqrt(r[0].to_bits()));
        let t = rng.next() as u32 % 1000;
        let temp = 1.5 + t as f32 * 0.0045;
        let th = half::f16::from_f32(temp);
        let q = norm::window_q(&v, temp);
        let qv = norm::vit_q(&v, temp);
        let k = norm::normalize_k(&v);
        for c in 0..32 {
            let x = half::f16::from_bits(v[c]) * half::f16::from_bits(n);
            assert_eq!(q[c], e4m3::from_f16((x * th).to_bits()));
            let sq = x * half::f16::from_bits(norm::VIT_Q_SCALE);
            assert_eq!(qv[c], e4m3::from_f16((sq * th).to_bits()));
            assert_eq!(k[c], e4m3::from_f16(x.to_bits()));
        }
        assert_eq!(norm::publish_v(&v), v.map(e4m3::from_f16));
    }
    assert!(
        fused_mattered > 0,
        "the fused FMA never mattered; weak test data"
    );
}

#[test]
fn zero_rows_publish_plus_zero() {
    let mut v = [0u16; 32];
    assert_eq!(norm::cosine_norm(&v), f16::POS_INF);
    assert_eq!(norm::window_q(&v, 3.0), [0; 32]);
    assert_eq!(norm::vit_q(&v, 0.3), [0; 32]);
    assert_eq!(norm::normalize_k(&v), [0; 32]);
    v[5] = 0x8000;
    v[20] = 0x8000;
    assert_eq!(norm::normalize_k(&v), [0; 32]);
    // A unit vector: norm 1, k' = E4(v).
    let mut u = [0u16; 32];
    u[7] = 0x3C00;
    assert_eq!(norm::cosine_norm(&u), 0x3C00);
    assert_eq!(norm::normalize_k(&u)[7], 0x38);
}

// ---------------------------------------------------------------------------------------------
// Element ops
// ---------------------------------------------------------------------------------------------

#[test]
fn element_ops_round_where_the_spec_says() {
    let mut rng = Rng(0xE1E);
    let h = half::f16::from_bits;
    for _ in 0..200_000 {
        let (a, b, c, d) = (
            rng.half_exp(0, 27),
            rng.half_exp(0, 27),
            rng.half_exp(0, 27),
            rng.half_exp(0, 27),
        );
        assert_eq!(ops::scaled_skip(a, b), (h(a) * h(b)).to_bits());
        let pool = (h(a) + h(b) + (h(c) + h(d))) * h(0x3400);
        assert_eq!(ops::pool2x2(a, b, c, d), pool.to_bits());
        assert_eq!(ops::decoder_merge(a, b, c), oracle::fma(b, c, a));
        let u = (h(a) * h(b)).to_bits();
        if !f16::is_nonfinite(u) {
            assert_eq!(ops::post_blend(a, b, c, d), oracle::fma(c, d, u));
        }
    }
    // One rounding in the merge: skip * scale = 2^-11 (1 + 2^-11 - 2^-21) rounds to 2^-11 on its
    // own (then 1 + 2^-11 is a tie -> 1), but fused the sum is above the tie -> 1 + 2^-10.
    let up = 0x3C00;
    assert_eq!(ops::decoder_merge(up, 0x1001, 0x3BFF), 0x3C01);
    assert_eq!(f16::add(up, f16::mul(0x1001, 0x3BFF)), 0x3C00);
    assert_eq!(ops::decoder_merge(up, 0x1000, 0x3C00), 0x3C00); // exact tie -> even
    assert_eq!(ops::feature_input(1.0 + 3.0 * 2f32.powi(-11)), 0x3C02);
    assert_eq!(ops::history_store(1.0 + 3.0 * 2f32.powi(-11)), 0x3C01);
}
