//! Slow exact-arithmetic oracle for the tests, written apart from the model and the kernels.
//!
//! Every value is an exact rational `num * 2^-D` with one fixed `D` (64): decoding goes through the
//! `half` crate and f64 (halves) or the E4M3 formula in f64, exponents are found by comparing with
//! powers of two, truncation toward zero is i128 division, and rounding to f16 is a binary search
//! over the ordered halves with explicit midpoint comparisons. Nothing here calls the code it checks.

use std::cmp::Ordering;

use super::mma::{AccRounding, ExponentConvention, Profile};

/// Common denominator exponent: every value is `num / 2^D`.
const D: i32 = 64;

/// An exactly known value: `num / 2^D`.
fn from_f64(x: f64) -> i128 {
    // Halves and E4M3 values are multiples of 2^-24: exact after scaling by 2^24, then shifted.
    let scaled = x * 16_777_216.0;
    assert!(scaled.fract() == 0.0 && scaled.abs() < 2f64.powi(100));
    (scaled as i128) << (D - 24)
}

/// `2^e` as a numerator at denominator 2^D.
fn pow2(e: i32) -> i128 {
    assert!((-D..=40).contains(&e));
    1i128 << (e + D)
}

/// floor(log2(|num| / 2^D)) by comparison with powers of two.
fn floor_log2(num: i128) -> i32 {
    let a = num.abs();
    assert!(a != 0);
    let mut e = 40;
    while pow2(e) > a {
        e -= 1;
    }
    e
}

pub fn half_f64(h: u16) -> f64 {
    half::f16::from_bits(h).to_f64()
}

/// E4M3 decode from the format's definition (NaN codes decode to 0).
pub fn e4m3_f64(c: u8) -> f64 {
    if c & 0x7F == 0x7F {
        return 0.0;
    }
    let s = if c & 0x80 != 0 { -1.0 } else { 1.0 };
    let e = ((c >> 3) & 15) as i32;
    let m = (c & 7) as f64;
    if e == 0 {
        s * (m / 8.0) * 2f64.powi(-6)
    } else {
        s * (1.0 + m / 8.0) * 2f64.powi(e - 7)
    }
}

/// An operand: exact numerator and the exponent it contributes (None when zero).
#[derive(Clone, Copy)]
struct Op {
    num: i128,
    exp: Option<i32>,
}

fn e4m3_op(c: u8, conv: ExponentConvention) -> Op {
    let num = from_f64(e4m3_f64(c));
    if num == 0 {
        return Op { num, exp: None };
    }
    let true_exp = floor_log2(num);
    let exp = match conv {
        ExponentConvention::FormatMinNormal => true_exp.max(-6),
        ExponentConvention::WidenedF16 => true_exp.max(-14),
    };
    Op {
        num,
        exp: Some(exp),
    }
}

fn half_op(h: u16) -> Op {
    let num = from_f64(half_f64(h));
    if num == 0 {
        return Op { num, exp: None };
    }
    Op {
        num,
        exp: Some(floor_log2(num).max(-14)),
    }
}

fn f32_op(b: u32) -> Op {
    let x = f32::from_bits(b) as f64;
    // f32 accumulators in the tests are multiples of 2^-64.
    let scaled = x * 2f64.powi(D);
    assert!(
        scaled.fract() == 0.0,
        "f32 accumulator {x:e} below the oracle's grid"
    );
    let num = scaled as i128;
    if num == 0 {
        return Op { num, exp: None };
    }
    Op {
        num,
        exp: Some(floor_log2(num).max(-126)),
    }
}

/// Compare `|num| / 2^den` with `m / 2^25`.
fn cmp_scaled(num: u128, den: i32, m: u128) -> Ordering {
    if den >= 25 {
        num.cmp(&(m << (den - 25)))
    } else {
        (num << (25 - den)).cmp(&m)
    }
}

/// Value of a positive half pattern (0..=0x7C00, 0x7C00 standing for 65536) at denominator 2^25.
fn half_at25(h: u16) -> u128 {
    if h == 0x7C00 {
        return 65536u128 << 25;
    }
    (half_f64(h) * 2f64.powi(25)) as u128
}

/// Round `|num| / 2^den` to the nearest positive half pattern, ties to even; >= 65520 gives inf.
pub fn round_half_mag(num: u128, den: i32) -> u16 {
    // Largest h with value(h) <= x.
    let (mut lo, mut hi) = (0u16, 0x7C00u16);
    if cmp_scaled(num, den, half_at25(hi)) != Ordering::Less {
        return 0x7C00;
    }
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if cmp_scaled(num, den, half_at25(mid)) == Ordering::Less {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    if cmp_scaled(num, den, half_at25(lo)) == Ordering::Equal {
        return lo;
    }
    let midpoint = half_at25(lo) + half_at25(lo + 1);
    // midpoint is 2 * (mid value) at 2^25, so compare 2x with it: x at den+... use den - 1.
    match cmp_scaled(num, den - 1, midpoint) {
        Ordering::Less => lo,
        Ordering::Greater => lo + 1,
        Ordering::Equal => {
            if lo & 1 == 0 {
                lo
            } else {
                lo + 1
            }
        }
    }
}

/// Round a signed exact value `num / 2^den` to f16; `zero_positive` maps every zero result to +0,
/// otherwise a zero result keeps the sign of `num` (or is +0 when `num == 0`).
pub fn round_half(num: i128, den: i32, zero_positive: bool) -> u16 {
    let mag = round_half_mag(num.unsigned_abs(), den);
    if mag == 0 && (zero_positive || num >= 0) {
        return 0;
    }
    if num < 0 {
        mag | 0x8000
    } else {
        mag
    }
}

/// Truncate `num / 2^den` (nonzero) toward zero to an f32; +0 for zero.
fn truncate_f32(num: i128, den: i32) -> u32 {
    if num == 0 {
        return 0;
    }
    let sign = if num < 0 { 0x8000_0000u32 } else { 0 };
    let a = num.unsigned_abs();
    // Exponent by comparison: largest e with 2^e <= a / 2^den.
    let ge = |e: i32| -> bool {
        let sh = e + den;
        if sh >= 0 {
            sh < 128 && a >= (1u128 << sh)
        } else {
            true
        }
    };
    let mut e = 128;
    while e > -149 && !ge(e) {
        e -= 1;
    }
    if e > 127 {
        return sign | 0x7F7F_FFFF;
    }
    let lsb = e.max(-126) - 23;
    // q = floor(a / 2^den / 2^lsb) = floor(a / 2^(den + lsb)).
    let sh = den + lsb;
    let q = if sh >= 0 {
        a / (1u128 << sh)
    } else {
        a << (-sh)
    };
    if e >= -126 {
        sign | (((e + 127) as u32) << 23) | (q as u32 - (1 << 23))
    } else {
        sign | q as u32
    }
}

/// The group step on decoded operands, finite values only (specials are handled by callers).
/// Returns the exact group result as (sum, den) meaning `sum / 2^den`, or None for an empty group.
fn group_sum(p: &Profile, acc: Op, pairs: &[(Op, Op)]) -> Option<(i128, i32)> {
    let mut e: Option<i32> = acc.exp;
    for (a, b) in pairs {
        if a.num != 0 && b.num != 0 {
            let pe = a.exp.unwrap_or(0) + b.exp.unwrap_or(0);
            e = Some(e.map_or(pe, |x: i32| x.max(pe)));
        }
    }
    let e = e?;
    let pbits = p.frac_bits as i32;
    // term = trunc(x * 2^(P-E)) with x = num / 2^D (operand) or num / 2^(2D) (product).
    let div_acc = D - pbits + e;
    assert!((1..127).contains(&div_acc));
    let mut sum = acc.num / (1i128 << div_acc);
    for (a, b) in pairs {
        // a.num / 2^D * b.num / 2^D: reduce b to its 2^-24 grid first (exact), so the product is
        // at denominator 2^(D + 24).
        let bn = b.num / (1i128 << (D - 24));
        assert_eq!(bn * (1i128 << (D - 24)), b.num);
        let prod = a.num * bn;
        let div = D + 24 - pbits + e;
        assert!((1..127).contains(&div));
        sum += prod / (1i128 << div);
    }
    Some((sum, pbits - e))
}

/// The oracle's group step with f16 accumulator (f16 RNE) or f32 accumulator (RZ): `acc_bits` and
/// the result are f16 bits for F16Rne profiles and f32 bits for F32Rz.
fn group_ops(p: &Profile, acc_bits: u32, pairs_raw: &[(f64, f64)], pairs: &[(Op, Op)]) -> u32 {
    let f32acc = p.acc == AccRounding::F32Rz;
    let acc_f64 = if f32acc {
        f32::from_bits(acc_bits) as f64
    } else {
        half_f64(acc_bits as u16)
    };
    if acc_f64.is_nan() {
        return acc_bits;
    }
    // Specials with IEEE f64 arithmetic on the non-finite parts only.
    let mut special = if acc_f64.is_infinite() {
        Some(acc_f64)
    } else {
        None
    };
    let mut any_special_prod = false;
    for &(x, y) in pairs_raw {
        if !x.is_finite() || !y.is_finite() {
            any_special_prod = true;
            let prod = x * y;
            special = Some(special.map_or(prod, |s| s + prod));
        }
    }
    if let Some(s) = special {
        if s.is_nan() {
            return if f32acc { 0x7FC0_0000 } else { 0x7E00 };
        }
        if acc_f64.is_infinite() || !any_special_prod {
            return acc_bits;
        }
        return match (f32acc, s < 0.0) {
            (false, false) => 0x7C00,
            (false, true) => 0xFC00,
            (true, false) => 0x7F80_0000,
            (true, true) => 0xFF80_0000,
        };
    }
    let acc = if f32acc {
        f32_op(acc_bits)
    } else {
        half_op(acc_bits as u16)
    };
    // Reexpress the accumulator at 2^-D (already) and run the exact group.
    match group_sum(p, acc, pairs) {
        None => 0,
        Some((sum, den)) => {
            if f32acc {
                let r = truncate_f32(sum, den);
                if r & 0x7FFF_FFFF == 0 {
                    0
                } else {
                    r
                }
            } else {
                round_half(sum, den, true) as u32
            }
        }
    }
}

/// Oracle group step, E4M3 operands, accumulator bits as in the profile (f16 or f32).
pub fn group_e4m3(p: &Profile, acc_bits: u32, a: &[u8], b: &[u8]) -> u32 {
    let raw: Vec<(f64, f64)> = a
        .iter()
        .zip(b)
        .map(|(&x, &y)| (e4m3_f64(x), e4m3_f64(y)))
        .collect();
    let ops: Vec<(Op, Op)> = a
        .iter()
        .zip(b)
        .map(|(&x, &y)| (e4m3_op(x, p.exponents), e4m3_op(y, p.exponents)))
        .collect();
    group_ops(p, acc_bits, &raw, &ops)
}

/// Oracle group step, f16 operands.
pub fn group_f16(p: &Profile, acc_bits: u32, a: &[u16], b: &[u16]) -> u32 {
    let raw: Vec<(f64, f64)> = a
        .iter()
        .zip(b)
        .map(|(&x, &y)| (half_f64(x), half_f64(y)))
        .collect();
    let ops: Vec<(Op, Op)> = a
        .iter()
        .zip(b)
        .map(|(&x, &y)| {
            let fin = |h: u16| if half_f64(h).is_finite() { h } else { 0 };
            (half_op(fin(x)), half_op(fin(y)))
        })
        .collect();
    group_ops(p, acc_bits, &raw, &ops)
}

/// Exact `f16(a*b + c)` with IEEE signed zeros, finite inputs only.
pub fn fma(a: u16, b: u16, c: u16) -> u16 {
    let (x, y, z) = (half_f64(a), half_f64(b), half_f64(c));
    let an = (x * 16_777_216.0) as i128;
    let bn = (y * 16_777_216.0) as i128;
    let cn = (z * 16_777_216.0) as i128;
    let num = an * bn + (cn << 24); // at 2^-48
    if num == 0 {
        // IEEE: an exact zero is -0 only when a zero product and c are both negative zeros.
        let both_neg =
            (x == 0.0 || y == 0.0) && z == 0.0 && (a ^ b) & 0x8000 != 0 && c & 0x8000 != 0;
        return if both_neg { 0x8000 } else { 0 };
    }
    round_half(num, 48, false)
}

/// Exact `f16(num / 2^den)` for a nonzero value with RNE, sign kept when it rounds to zero.
pub fn round_signed(num: i128, den: i32) -> u16 {
    round_half(num, den, false)
}
