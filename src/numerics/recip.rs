//! Correctly rounded f16 reciprocal and reciprocal square root of a half, in integer arithmetic.
//!
//! Native DLSS-NR uses `rcp.approx.ftz.f32` / `rsqrt.approx.ftz.f32` followed by `cvt.rn.f16`, which
//! equal the correctly rounded half for every half input (spec nr-network §2.5, §2.7, §2.8). GPU
//! `1.0/x` and `inversesqrt` are not guaranteed to, so the numerics define the result as the
//! correctly rounded value and compute it exactly: an integer quotient / square root with a sticky
//! bit, then one RNE rounding.

use super::f16::{self, F16};

/// A finite nonzero half as `sig * 2^lsb` with `sig` normalised to 11 bits (`2^10 <= sig < 2^11`).
fn normalised(h: F16) -> (u128, i32) {
    let e = ((h >> 10) & 0x1F) as i32;
    let m = (h & 0x3FF) as u128;
    if e == 0 {
        // Subnormal m * 2^-24: shift the top bit up to bit 10.
        let lz = 10 - (127 - m.leading_zeros() as i32);
        (m << lz, -24 - lz)
    } else {
        (m | 0x400, e - 25)
    }
}

/// Correctly rounded `f16(1/x)`: ±0 -> ±inf, ±inf -> ±0, NaN -> NaN (quiet), tiny inputs overflow
/// to ±inf, large ones give subnormals.
pub fn recip(h: F16) -> F16 {
    let sign = h & 0x8000;
    if f16::is_nan(h) {
        return f16::QNAN;
    }
    if f16::is_inf(h) {
        return sign;
    }
    if f16::is_zero(h) {
        return sign | f16::POS_INF;
    }
    let (sig, lsb) = normalised(h);
    // 1/x = 2^-lsb / sig = (2^40 / sig) * 2^(-lsb-40). The quotient has 30 bits, far more than the
    // 11 kept, so one sticky bit below it makes the rounding exact.
    let num = 1u128 << 40;
    let q = num / sig;
    let sticky = u128::from(num % sig != 0);
    let v = ((q << 1) | sticky) as i128;
    let r = f16::round_fixed_rne(v, -lsb - 41);
    sign | (r & 0x7FFF)
}

/// `floor(sqrt(n))` for a u128.
fn isqrt(n: u128) -> u128 {
    if n < 2 {
        return n;
    }
    // Start from a float estimate and correct it exactly.
    let mut x = (n as f64).sqrt() as u128;
    while x * x > n {
        x -= 1;
    }
    while (x + 1) * (x + 1) <= n {
        x += 1;
    }
    x
}

/// Correctly rounded `f16(1/sqrt(x))`: +0 -> +inf, -0 -> -inf, +inf -> +0, negative or NaN -> NaN.
pub fn rsqrt(h: F16) -> F16 {
    if f16::is_nan(h) {
        return f16::QNAN;
    }
    if f16::is_zero(h) {
        return (h & 0x8000) | f16::POS_INF;
    }
    if h & 0x8000 != 0 {
        return f16::QNAN;
    }
    if f16::is_inf(h) {
        return f16::POS_ZERO;
    }
    let (mut sig, mut lsb) = normalised(h);
    if lsb & 1 != 0 {
        sig <<= 1;
        lsb -= 1;
    }
    // x = sig * 2^lsb with lsb even: 1/sqrt(x) = (2^K / sqrt(sig)) * 2^(-K - lsb/2).
    // floor(2^K / sqrt(sig)) = floor(sqrt(floor(2^(2K) / sig))); K = 48 leaves >= 42 bits.
    const K: i32 = 48;
    let num = 1u128 << (2 * K);
    let y2 = num / sig;
    let q = isqrt(y2);
    let exact = q * q * sig == num;
    let v = ((q << 1) | u128::from(!exact)) as i128;
    f16::round_fixed_rne(v, -K - lsb / 2 - 1)
}
