//! Ray Reconstruction's GEMM step (spec rr-network §5.1) and a fast CPU GEMM with the same bits.
//!
//! **The rule.** `D = C + Σ_{k<32} a_k·b_k` is formed exactly (E4M3 products are exact, and so is
//! their sum with an f16 C) and rounded to f16 (RNE) once per k32 step; a longer K chains the
//! steps in K order, each from the previous step's f16 result; a last slice shorter than 32 is the
//! same as one padded with zeros. Every zero result is +0 (the convention NVIDIA's tensor cores
//! follow, measured for DLSS-NR's MMAs; spec nr-network §2.3). For finite codes this is exactly
//! [`Profile::RR_K32`] of the MMA model ([`mma::group_e4m3`]), which this module calls as its
//! definition. NaN: RR publishes NaN as an E4M3 NaN code ([`super::q8`]), and the hardware
//! propagates a NaN operand, so any NaN code among a step's operands (even times zero) makes the
//! result the canonical NaN 0x7E00; a NaN accumulator stays NaN (0x7E00); an infinite accumulator
//! passes through a step unchanged (every product is finite).
//!
//! **Why this and not NVIDIA's F13.** DLSS-NR's native MMA truncates each product at 2^(E-13) in
//! groups of 16 (`Profile::F13`). The RR spec instead reports that a plain f32 dot product of a
//! k32 slice plus C, rounded to f16 once per step, reproduced NVIDIA's enc0 phase 1 with no
//! mismatch in 12 288 values (d4r, NVIDIA's kernels translated to an RDNA GPU). openngx follows the
//! RR spec and makes "plain f32 dot" exact: where a sequential f32 sum would itself round (a slice
//! spanning more than 24 bits), the exact sum is the definition.
//!
//! **The fast kernel.** Every E4M3 value is an integer multiple of 2^-9 below 2^18 and every f16 a
//! multiple of 2^-24 below 2^16, so every partial sum of a step is a multiple of 2^-24 below
//! 32·448² + 65504 < 2^23: 47 bits, inside f64's 53. f64 arithmetic is therefore exact here in any
//! order, and the kernel sums with independent lanes (vectorised) and rounds the f64 once.

use crate::numerics::e4m3::E4;
use crate::numerics::f16::{self, F16};
use crate::numerics::mma::{self, Profile};

use super::q8;

/// K per step.
pub const STEP: usize = 32;

/// The profile this rule is, for finite operands.
pub const PROFILE: Profile = Profile::RR_K32;

/// Why a GEMM call was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum K32Error {
    #[error("rr gemm: operand `{operand}` has {got} elements, the shape needs {expected}")]
    Length {
        operand: &'static str,
        expected: usize,
        got: usize,
    },
}

fn check(operand: &'static str, got: usize, expected: usize) -> Result<(), K32Error> {
    if got == expected {
        Ok(())
    } else {
        Err(K32Error::Length {
            operand,
            expected,
            got,
        })
    }
}

/// One k32 step (the readable definition): `f16(acc + Σ a_k b_k)`; `a` and `b` hold at most 32
/// codes each (same length).
pub fn step(acc: F16, a: &[E4], b: &[E4]) -> F16 {
    debug_assert!(a.len() == b.len() && a.len() <= STEP);
    if f16::is_nan(acc) || a.iter().chain(b).any(|&c| q8::is_nan(c)) {
        return f16::QNAN;
    }
    mma::group_e4m3(&PROFILE, acc, a, b)
}

/// A K chain of steps in K order from `seed` (`a` and `b` of equal length).
pub fn chain(seed: F16, a: &[E4], b: &[E4]) -> F16 {
    a.chunks(STEP)
        .zip(b.chunks(STEP))
        .fold(seed, |acc, (x, y)| step(acc, x, y))
}

/// Exact value of every code as f64 (NaN codes as NaN).
fn value_table() -> &'static [f64; 256] {
    static T: std::sync::OnceLock<[f64; 256]> = std::sync::OnceLock::new();
    T.get_or_init(|| {
        let mut t = [0f64; 256];
        for (c, v) in t.iter_mut().enumerate() {
            *v = f16::to_f32(q8::to_f16(c as u8)) as f64;
        }
        t
    })
}

/// An E4M3 matrix `[rows][k]` (row n = the K-vector of output column n) decoded once, with K
/// padded to a multiple of 32 with zeros.
#[derive(Clone, Debug)]
pub struct Packed {
    rows: usize,
    k: usize,
    kp: usize,
    vals: Vec<f64>,
}

impl Packed {
    /// Decode `codes` (`rows x k`, row-major).
    pub fn new(codes: &[E4], rows: usize, k: usize) -> Result<Self, K32Error> {
        check("b", codes.len(), rows * k)?;
        let kp = k.div_ceil(STEP) * STEP;
        let t = value_table();
        let mut vals = vec![0f64; rows * kp];
        for (r, row) in codes.chunks_exact(k.max(1)).take(rows).enumerate() {
            for (i, &c) in row.iter().enumerate() {
                vals[r * kp + i] = t[c as usize];
            }
        }
        Ok(Packed { rows, k, kp, vals })
    }

    /// Output columns.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// K.
    pub fn k(&self) -> usize {
        self.k
    }
}

/// Round an exact f64 (a step's sum) to f16 with RNE; zero results (exact or by rounding) are +0,
/// NaN is 0x7E00, ±inf stay.
#[inline]
fn round(s: f64) -> F16 {
    let b = s.to_bits();
    let sign = ((b >> 48) & 0x8000) as u16;
    let e = ((b >> 52) & 0x7FF) as i32;
    if e == 0x7FF {
        return if b & 0x000F_FFFF_FFFF_FFFF != 0 {
            f16::QNAN
        } else {
            sign | f16::POS_INF
        };
    }
    if e == 0 {
        // Zero (a step's sum is a multiple of 2^-24, never an f64 subnormal).
        return f16::POS_ZERO;
    }
    let ue = e - 1023;
    if ue > 15 {
        return sign | f16::POS_INF;
    }
    let sig = (b & 0x000F_FFFF_FFFF_FFFF) | (1u64 << 52);
    // Keep 11 bits for a normal half, fewer below 2^-14 (the subnormal grid 2^-24).
    let shift = if ue >= -14 { 42 } else { 42 + (-14 - ue) };
    if shift > 53 {
        return f16::POS_ZERO;
    }
    let kept = sig >> shift;
    let rem = sig & ((1u64 << shift) - 1);
    let half = 1u64 << (shift - 1);
    let q = kept + u64::from(rem > half || (rem == half && kept & 1 == 1));
    let bits = if ue >= -14 {
        (((ue + 14) as u64) << 10) + q
    } else {
        q
    };
    if bits >= 0x7C00 {
        return sign | f16::POS_INF;
    }
    if bits == 0 {
        return f16::POS_ZERO;
    }
    sign | bits as u16
}

/// The decoded A row, padded like [`Packed`].
fn decode_row(codes: &[E4], kp: usize, out: &mut Vec<f64>) {
    let t = value_table();
    out.clear();
    out.extend(codes.iter().map(|&c| t[c as usize]));
    out.resize(kp, 0.0);
}

/// One step's exact dot product of 32 decoded values (8 independent lanes, then their sum; exact
/// in any order, see the module doc).
#[inline]
fn dot32(a: &[f64], b: &[f64]) -> f64 {
    let mut lanes = [0f64; 8];
    for (x, y) in a.chunks_exact(8).zip(b.chunks_exact(8)) {
        for l in 0..8 {
            lanes[l] += x[l] * y[l];
        }
    }
    ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3]))
        + ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]))
}

/// The chain of one output from decoded, padded K-vectors.
#[inline]
fn chain_decoded(seed: F16, a: &[f64], b: &[f64]) -> F16 {
    let mut acc = seed;
    for (x, y) in a.chunks_exact(STEP).zip(b.chunks_exact(STEP)) {
        if f16::is_nan(acc) {
            return f16::QNAN;
        }
        acc = round(f16::to_f32(acc) as f64 + dot32(x, y));
    }
    if f16::is_nan(acc) {
        f16::QNAN
    } else {
        acc
    }
}

/// `out[i][n] = chain(seeds[i][n] or +0, a[i], b[n])` for `a` `[m][k]` row-major; `out` (and the
/// seeds) are `[m][b.rows()]`. The same bits as [`chain`] for every output.
pub fn gemm(
    a: &[E4],
    b: &Packed,
    m: usize,
    seeds: Option<&[F16]>,
    out: &mut [F16],
) -> Result<(), K32Error> {
    let (k, n) = (b.k, b.rows);
    check("a", a.len(), m * k)?;
    check("out", out.len(), m * n)?;
    if let Some(s) = seeds {
        check("seeds", s.len(), m * n)?;
    }
    let mut row = Vec::with_capacity(b.kp);
    for i in 0..m {
        decode_row(&a[i * k..(i + 1) * k], b.kp, &mut row);
        for j in 0..n {
            let seed = seeds.map_or(f16::POS_ZERO, |s| s[i * n + j]);
            out[i * n + j] = chain_decoded(seed, &row, &b.vals[j * b.kp..(j + 1) * b.kp]);
        }
    }
    Ok(())
}

/// One output column `j` of [`gemm`] for a single A row (the tails' per-pixel heads use it).
pub fn dot(a: &[E4], b: &Packed, j: usize, seed: F16) -> F16 {
    let mut row = Vec::with_capacity(b.kp);
    decode_row(a, b.kp, &mut row);
    chain_decoded(seed, &row, &b.vals[j * b.kp..(j + 1) * b.kp])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::numerics::e4m3;

    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
        /// A code with exponent field in [lo, hi], some zeros; NaN codes only when asked.
        fn code(&mut self, lo: u64, hi: u64, nan: bool) -> E4 {
            match self.below(64) {
                0 => 0x00,
                1 => 0x80,
                2 if nan => 0x7F | ((self.below(2) as u8) << 7),
                _ => {
                    let c = ((self.below(2) << 7) | ((lo + self.below(hi - lo + 1)) << 3))
                        | self.below(8);
                    let c = c as u8;
                    if q8::is_nan(c) {
                        0x7E | (c & 0x80)
                    } else {
                        c
                    }
                }
            }
        }
        fn acc(&mut self) -> F16 {
            match self.below(64) {
                0..=3 => 0x0000,
                4 => 0x8000,
                5 => [0x7C00, 0xFC00, 0x7E00][self.below(3) as usize],
                6 => self.below(0x400) as u16 | ((self.below(2) as u16) << 15),
                _ => (self.next() as u16 & 0x83FF) | ((1 + self.below(30) as u16) << 10),
            }
        }
    }

    /// The exact rational value of a step, computed on its own: all terms as integers at 2^-24.
    fn oracle_step(acc: F16, a: &[E4], b: &[E4]) -> F16 {
        if f16::is_nan(acc) || a.iter().chain(b).any(|&c| q8::is_nan(c)) {
            return f16::QNAN;
        }
        if f16::is_inf(acc) {
            return acc;
        }
        let fixed = |h: F16| -> i128 {
            // value * 2^24 as an integer (every half is a multiple of 2^-24).
            let v = f16::to_f32(h) as f64 * (1u64 << 24) as f64;
            v as i128
        };
        let mut s = fixed(acc);
        for (&x, &y) in a.iter().zip(b) {
            // value * 2^9 is an integer for every code.
            let xi = (e4m3::to_f32(x) as f64 * 512.0) as i128;
            let yi = (e4m3::to_f32(y) as f64 * 512.0) as i128;
            s += (xi * yi) << 6;
        }
        let r = f16::round_fixed_rne(s, -24);
        if f16::is_zero(r) {
            0
        } else {
            r
        }
    }

    #[test]
    fn step_is_the_exact_sum_rounded_once() {
        let mut rng = Rng(0x52_52_4B_33_32_00_00_01);
        let mut zeros = 0;
        let mut wide = 0;
        for i in 0..200_000 {
            let lo = rng.below(16);
            let hi = lo + rng.below(16 - lo);
            let n = if i % 7 == 0 {
                1 + rng.below(32) as usize
            } else {
                32
            };
            let nan = i % 50 == 0;
            let a: Vec<E4> = (0..n).map(|_| rng.code(lo, hi, nan)).collect();
            let b: Vec<E4> = (0..n).map(|_| rng.code(lo, hi, nan)).collect();
            let acc = rng.acc();
            if i % 16 == 0 && n >= 2 {
                // Exact cancellation of the products, on a zero accumulator of either sign.
                let h = n / 2;
                let mut a2 = a[..h].to_vec();
                a2.extend(a[..h].iter().map(|c| c ^ 0x80));
                let mut b2 = b[..h].to_vec();
                b2.extend_from_slice(&b[..h]);
                let acc = if i % 32 == 0 { 0x8000 } else { 0 };
                let got = step(acc, &a2, &b2);
                assert_eq!(got, oracle_step(acc, &a2, &b2));
                zeros += usize::from(got == 0);
                continue;
            }
            if hi - lo >= 12 {
                wide += 1;
            }
            let got = step(acc, &a, &b);
            assert_eq!(
                got,
                oracle_step(acc, &a, &b),
                "acc {acc:#06x} a {a:x?} b {b:x?}"
            );
        }
        assert!(
            zeros > 1000,
            "the cancellations reach the +0 rule ({zeros})"
        );
        assert!(wide > 1000);
    }

    #[test]
    fn fast_rounding_equals_the_exact_one() {
        let mut rng = Rng(0x0F64_0F16_0000_0005);
        for i in 0..2_000_000u64 {
            // Multiples of 2^-24 below 2^23 (what a step's sum is), across every binade.
            let mag = rng.next() >> (17 + (i % 40));
            let v = mag as f64 * (1.0 / (1u64 << 24) as f64);
            let v = if i % 2 == 0 { v } else { -v };
            let want = f16::from_f64_rne(v);
            let want = if f16::is_zero(want) { 0 } else { want };
            assert_eq!(round(v), want, "{v:e}");
        }
        assert_eq!(round(f64::NAN), f16::QNAN);
        assert_eq!(round(f64::INFINITY), 0x7C00);
        assert_eq!(round(-70000.0), 0xFC00);
        assert_eq!(round(-0.0), 0);
    }

    #[test]
    fn the_rule_is_not_f13() {
        // One product far below a large accumulator: F13 truncates it away, the exact sum keeps
        // it and rounds up (2048 + 1 + 2^-9·2^-9·... is above the tie).
        let acc = 0x6800; // 2048
        let a = [0x38u8, 0x38]; // 1, 1
        let b = [0x38u8, 0x01]; // 1, 2^-9
        assert_eq!(step(acc, &a, &b), 0x6801); // 2049 + 2^-9 rounds to 2050 (ulp 2)
        assert_eq!(mma::group_e4m3(&Profile::F13, acc, &a, &b), 0x6800);
    }

    #[test]
    fn nan_codes_and_infinite_accumulators() {
        let a = [0x38u8; 32];
        let mut b = [0u8; 32];
        b[5] = 0xFF;
        assert_eq!(step(0, &a, &b), f16::QNAN);
        assert_eq!(step(0x7C00, &a, &[0x38; 32]), 0x7C00);
        assert_eq!(step(0xFC00, &a, &[0x38; 32]), 0xFC00);
        assert_eq!(step(0xFE01, &a, &[0x38; 32]), f16::QNAN);
        // Overflow of the sum gives inf.
        assert_eq!(step(0x7BFF, &[0x7E; 32], &[0x7E; 32]), 0x7C00);
        // -0 accumulator and -0 products give +0.
        assert_eq!(step(0x8000, &[0x80; 32], &[0x38; 32]), 0);
    }

    #[test]
    fn fast_gemm_equals_the_chain() {
        let mut rng = Rng(0x6B33_3267_656D_6D00);
        for case in 0..60 {
            let m = 1 + rng.below(9) as usize;
            let n = 1 + rng.below(17) as usize;
            let k = [32, 64, 96, 128, 160, 17, 45, 1][case % 8];
            let lo = rng.below(10);
            let hi = lo + rng.below(16 - lo);
            let nan = case % 5 == 0;
            let a: Vec<E4> = (0..m * k).map(|_| rng.code(lo, hi, nan)).collect();
            let b: Vec<E4> = (0..n * k).map(|_| rng.code(lo, hi, nan)).collect();
            let seeds: Vec<F16> = (0..m * n).map(|_| rng.acc()).collect();
            let packed = Packed::new(&b, n, k).unwrap();
            let mut out = vec![0u16; m * n];
            gemm(&a, &packed, m, Some(&seeds), &mut out).unwrap();
            for i in 0..m {
                for j in 0..n {
                    let want = chain(
                        seeds[i * n + j],
                        &a[i * k..(i + 1) * k],
                        &b[j * k..(j + 1) * k],
                    );
                    assert_eq!(out[i * n + j], want, "case {case} ({i},{j})");
                    assert_eq!(
                        dot(&a[i * k..(i + 1) * k], &packed, j, seeds[i * n + j]),
                        want
                    );
                }
            }
            gemm(&a, &packed, m, None, &mut out).unwrap();
            assert_eq!(out[0], chain(0, &a[..k], &b[..k]));
        }
        let packed = Packed::new(&[0u8; 64], 2, 32).unwrap();
        assert!(gemm(&[0u8; 31], &packed, 1, None, &mut [0u16; 2]).is_err());
    }
}

#[cfg(test)]
mod speed {
    use super::*;

    /// Single-threaded throughput (printed; run with --nocapture).
    #[test]
    fn k32_gemm_throughput() {
        let (m, n, k) = (2048, 128, 128);
        let a: Vec<E4> = (0..m * k).map(|i| (i * 37 % 251) as u8 & 0x77).collect();
        let b: Vec<E4> = (0..n * k).map(|i| (i * 53 % 241) as u8 & 0x67).collect();
        let p = Packed::new(&b, n, k).unwrap();
        let mut out = vec![0u16; m * n];
        let t = std::time::Instant::now();
        gemm(&a, &p, m, None, &mut out).unwrap();
        let s = t.elapsed().as_secs_f64();
        eprintln!(
            "k32 gemm {m}x{n}x{k}: {:.0} million MAC/s",
            (m * n * k) as f64 / s / 1e6
        );
        assert!(out.iter().any(|&x| x != 0));
    }
}
