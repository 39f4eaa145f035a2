//! IEEE binary16 on bit patterns: conversions from f32 with round-to-nearest-even (RNE) and
//! round-toward-zero (RTZ), decoding to f32, and the exponent convention the MMA models use.
//!
//! Everything here works on `u16` bit patterns so that the same algorithm can be written in GLSL
//! (`shaders/lib/f16.glsl`) without a compiler folding an `f32 -> f16 -> f32` round trip away.

/// A binary16 value as its bit pattern.
pub type F16 = u16;

pub const POS_ZERO: F16 = 0x0000;
pub const NEG_ZERO: F16 = 0x8000;
pub const POS_INF: F16 = 0x7C00;
pub const NEG_INF: F16 = 0xFC00;
/// The NaN this crate produces (quiet, positive).
pub const QNAN: F16 = 0x7E00;
pub const ONE: F16 = 0x3C00;

/// True for NaN bit patterns.
#[inline]
pub fn is_nan(h: F16) -> bool {
    (h & 0x7C00) == 0x7C00 && (h & 0x03FF) != 0
}

/// True for ±inf.
#[inline]
pub fn is_inf(h: F16) -> bool {
    (h & 0x7FFF) == 0x7C00
}

/// True for NaN or ±inf.
#[inline]
pub fn is_nonfinite(h: F16) -> bool {
    (h & 0x7C00) == 0x7C00
}

/// True for ±0.
#[inline]
pub fn is_zero(h: F16) -> bool {
    (h & 0x7FFF) == 0
}

/// The unbiased exponent of a finite nonzero half; subnormals count as -14.
#[inline]
pub fn exponent(h: F16) -> i32 {
    let e = ((h >> 10) & 0x1F) as i32;
    if e == 0 {
        -14
    } else {
        e - 15
    }
}

/// Exact decode to f32 (every half is an f32).
#[inline]
pub fn to_f32(h: F16) -> f32 {
    let sign = ((h as u32) & 0x8000) << 16;
    let e = ((h >> 10) & 0x1F) as u32;
    let m = (h & 0x03FF) as u32;
    let bits = if e == 0 {
        if m == 0 {
            sign
        } else {
            // Subnormal: value m * 2^-24, exactly representable as an f32 normal.
            let v = m as f32 * f32::from_bits(0x3380_0000); // 2^-24
            return if sign != 0 { -v } else { v };
        }
    } else if e == 0x1F {
        sign | 0x7F80_0000 | (m << 13)
    } else {
        sign | ((e + 112) << 23) | (m << 13)
    };
    f32::from_bits(bits)
}

/// f32 -> f16, round to nearest, ties to even. Overflow gives ±inf; NaN stays NaN (quiet).
#[inline]
pub fn from_f32_rne(x: f32) -> F16 {
    from_f32(x, false)
}

/// f32 -> f16, round toward zero. Finite values beyond the half range give ±65504; ±inf stay inf.
#[inline]
pub fn from_f32_rtz(x: f32) -> F16 {
    from_f32(x, true)
}

fn from_f32(x: f32, rtz: bool) -> F16 {
    let b = x.to_bits();
    let sign = ((b >> 16) & 0x8000) as u16;
    let e = ((b >> 23) & 0xFF) as i32;
    let m = b & 0x007F_FFFF;
    if e == 0xFF {
        return if m != 0 { sign | QNAN } else { sign | POS_INF };
    }
    // Unbiased exponent; f32 subnormals are far below the half range and round to ±0 (or the
    // smallest subnormal never: they are < 2^-126 << 2^-25).
    if e == 0 {
        return sign;
    }
    let ue = e - 127;
    if ue > 15 {
        return if rtz { sign | 0x7BFF } else { sign | POS_INF };
    }
    // Significand with the implicit bit: 24 bits, value = sig * 2^(ue - 23).
    let sig = m | 0x0080_0000;
    // Target: half normal keeps 11 bits (ue >= -14), subnormal keeps fewer.
    let shift = if ue >= -14 { 13 } else { 13 + (-14 - ue) };
    if shift > 24 {
        // Below half of the smallest subnormal: RNE and RTZ both give ±0.
        return sign;
    }
    let kept = sig >> shift;
    let rem = sig & ((1u32 << shift) - 1);
    let half = 1u32 << (shift - 1);
    let mut q = kept;
    if !rtz && (rem > half || (rem == half && (kept & 1) == 1)) {
        q += 1;
    }
    // q is the significand at the target precision; assemble. For normals q has 11 bits
    // (1.xxxx) and may carry into 12 bits; adding via the exponent field handles the carry.
    let bits = if ue >= -14 {
        (((ue + 14) as u32) << 10) + q // exponent field (ue + 15) - 1 plus the implicit bit in q
    } else {
        q // subnormal (a carry into bit 10 produces the smallest normal, correctly)
    };
    if bits >= 0x7C00 {
        return if rtz { sign | 0x7BFF } else { sign | POS_INF };
    }
    sign | bits as u16
}

/// Negate (flip the sign bit).
#[inline]
pub fn neg(h: F16) -> F16 {
    h ^ 0x8000
}

/// f16 addition with one RNE rounding (the sum of two halves is exact in f64, then rounded).
#[inline]
pub fn add(a: F16, b: F16) -> F16 {
    from_f64_rne(to_f32(a) as f64 + to_f32(b) as f64)
}

/// f16 multiplication with one RNE rounding (the product of two halves is exact in f32). A NaN
/// result is the canonical [`QNAN`], like [`add`]'s and the GLSL `f16_mul`'s: the sign of a NaN
/// an f32 multiply makes is the platform's (x86 gives -NaN for `inf * 0`), and RR publishes NaN
/// with its sign.
#[inline]
pub fn mul(a: F16, b: F16) -> F16 {
    let r = from_f32_rne(to_f32(a) * to_f32(b));
    if is_nan(r) {
        QNAN
    } else {
        r
    }
}

/// The single-rounding fused half FMA `f16(a*b + c)`: the exact value is rounded once.
///
/// The exact value is formed as an integer multiple of 2^-48 (the smallest product ulp is
/// 2^-24 · 2^-24), which covers every finite input without loss; f64 would not always be exact.
pub fn fma(a: F16, b: F16, c: F16) -> F16 {
    if is_nonfinite(a) || is_nonfinite(b) || is_nonfinite(c) {
        return from_f64_rne(to_f32(a) as f64 * to_f32(b) as f64 + to_f32(c) as f64);
    }
    // value = fixed * 2^-48. |a*b| < 2^32, |c| < 2^16: fits in i128 comfortably.
    let fa = fixed24(a);
    let fb = fixed24(b);
    let fc = fixed24(c) << 24;
    let sum = fa * fb + fc;
    if sum == 0 {
        // IEEE: exact zero sum takes +0 unless both addends are -0 (or product and c both
        // negative zero).
        let prod_neg = ((a ^ b) & 0x8000) != 0;
        let c_neg = (c & 0x8000) != 0;
        let prod_zero = is_zero(a) || is_zero(b);
        if prod_zero && is_zero(c) && prod_neg && c_neg {
            return NEG_ZERO;
        }
        return POS_ZERO;
    }
    round_fixed_rne(sum, -48)
}

/// A finite half as an integer multiple of 2^-24.
#[inline]
fn fixed24(h: F16) -> i128 {
    let e = ((h >> 10) & 0x1F) as i32;
    let m = (h & 0x3FF) as i128;
    let mag = if e == 0 { m } else { (m | 0x400) << (e - 1) };
    if h & 0x8000 != 0 {
        -mag
    } else {
        mag
    }
}

/// Round `v * 2^scale` (an exact integer times a power of two) to f16 with RNE. Returns ±inf on
/// overflow. A zero `v` gives +0.
pub fn round_fixed_rne(v: i128, scale: i32) -> F16 {
    if v == 0 {
        return POS_ZERO;
    }
    let sign: u16 = if v < 0 { 0x8000 } else { 0 };
    let mag = v.unsigned_abs();
    let nbits = 128 - mag.leading_zeros() as i32; // mag in [2^(nbits-1), 2^nbits)
    let ue = nbits - 1 + scale; // unbiased exponent of the value
                                // Number of low bits to drop so that we keep 11 significant bits (normal) or align to 2^-24.
    let lsb_exp = if ue >= -14 { ue - 10 } else { -24 };
    let drop = lsb_exp - scale;
    let q: u128 = if drop <= 0 {
        mag << (-drop) as u32
    } else if drop >= 128 {
        0
    } else {
        let kept = mag >> drop;
        let rem = mag & ((1u128 << drop) - 1);
        let half = 1u128 << (drop - 1);
        if rem > half || (rem == half && (kept & 1) == 1) {
            kept + 1
        } else {
            kept
        }
    };
    if q == 0 {
        return sign; // rounds to zero: keep the sign (callers decide the zero rule)
    }
    // q * 2^lsb_exp; normalise (q may have carried to 12 bits).
    let bits: u128 = if lsb_exp == -24 {
        q // subnormal or (carry) smallest normal: the bit pattern is q itself
    } else {
        (((lsb_exp + 10 + 14) as u128) << 10) + q
    };
    if bits >= 0x7C00 {
        return sign | POS_INF;
    }
    sign | bits as u16
}

/// [`round_fixed_rne`] for an `i64`, without the 128-bit arithmetic: the MMA kernels call this once
/// per group. Same contract: `v * 2^scale` rounded RNE, ±inf on overflow, a result that rounds to
/// zero keeps the sign of `v`, `v == 0` gives +0.
#[inline]
pub fn round_i64_rne(v: i64, scale: i32) -> F16 {
    if v == 0 {
        return POS_ZERO;
    }
    let sign: u16 = if v < 0 { 0x8000 } else { 0 };
    let mag = v.unsigned_abs();
    let nbits = 64 - mag.leading_zeros() as i32;
    let ue = nbits - 1 + scale;
    if ue > 15 {
        return sign | POS_INF;
    }
    let lsb_exp = if ue >= -14 { ue - 10 } else { -24 };
    let drop = lsb_exp - scale;
    let q: u64 = if drop <= 0 {
        // At most 11 significant bits: the shift cannot overflow.
        mag << (-drop) as u32
    } else if drop >= 64 {
        0
    } else {
        let kept = mag >> drop;
        let rem = mag & ((1u64 << drop) - 1);
        let half = 1u64 << (drop - 1);
        kept + u64::from(rem > half || (rem == half && (kept & 1) == 1))
    };
    if q == 0 {
        return sign;
    }
    let bits = if lsb_exp == -24 {
        q
    } else {
        (((lsb_exp + 24) as u64) << 10) + q
    };
    if bits >= 0x7C00 {
        return sign | POS_INF;
    }
    sign | bits as u16
}

/// Round `v * 2^scale` to an f32 (returned as bits) toward zero. Beyond the f32 range the result is
/// the largest finite f32 of that sign (IEEE round-toward-zero never produces inf from a finite
/// value); `v == 0` gives +0 and a nonzero value that truncates to zero keeps its sign.
pub fn round_fixed_f32_rz(v: i128, scale: i32) -> u32 {
    if v == 0 {
        return 0;
    }
    let sign: u32 = if v < 0 { 0x8000_0000 } else { 0 };
    let mag = v.unsigned_abs();
    let nbits = 128 - mag.leading_zeros() as i32;
    let ue = nbits - 1 + scale;
    if ue > 127 {
        return sign | 0x7F7F_FFFF;
    }
    let lsb_exp = if ue >= -126 { ue - 23 } else { -149 };
    let drop = lsb_exp - scale;
    let q: u128 = if drop <= 0 {
        mag << (-drop) as u32
    } else if drop >= 128 {
        0
    } else {
        mag >> drop
    };
    if q == 0 {
        return sign;
    }
    let bits = if lsb_exp == -149 {
        q as u32
    } else {
        // q carries the implicit bit (2^23); adding it to the biased exponent minus one builds the
        // pattern, exactly as for halves.
        (((lsb_exp + 149) as u32) << 23) + q as u32
    };
    sign | bits
}

/// Round an f64 to f16 with RNE; only valid where the f64 itself is exact (callers ensure it).
pub fn from_f64_rne(x: f64) -> F16 {
    if x.is_nan() {
        return QNAN;
    }
    if x.is_infinite() {
        return if x < 0.0 { NEG_INF } else { POS_INF };
    }
    if x == 0.0 {
        return if x.is_sign_negative() {
            NEG_ZERO
        } else {
            POS_ZERO
        };
    }
    // Decompose exactly: x = mant * 2^exp with a 53-bit integer mantissa.
    let b = x.to_bits();
    let e = ((b >> 52) & 0x7FF) as i32;
    let m = (b & 0x000F_FFFF_FFFF_FFFF) as i128;
    let (mant, exp) = if e == 0 {
        (m, -1074)
    } else {
        (m | (1i128 << 52), e - 1075)
    };
    let v = if x < 0.0 { -mant } else { mant };
    let r = round_fixed_rne(v, exp);
    if is_zero(r) {
        return if x < 0.0 { NEG_ZERO } else { POS_ZERO };
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn f32_round_trip_is_identity_for_every_half() {
        for h in 0..=u16::MAX {
            if is_nan(h) {
                assert!(is_nan(from_f32_rne(to_f32(h))));
                continue;
            }
            assert_eq!(from_f32_rne(to_f32(h)), h, "{h:#06x}");
            assert_eq!(from_f32_rtz(to_f32(h)), h, "{h:#06x}");
        }
    }

    #[test]
    fn rne_matches_the_half_crate_on_many_f32() {
        let mut s = 0x1234_5678u32;
        for _ in 0..2_000_000 {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            let x = f32::from_bits(s);
            let want = half::f16::from_f32(x).to_bits();
            let got = from_f32_rne(x);
            if x.is_nan() {
                assert!(is_nan(got));
            } else {
                assert_eq!(got, want, "{x:e}");
            }
        }
    }

    #[test]
    fn rtz_truncates() {
        assert_eq!(from_f32_rtz(1.0 + f32::EPSILON), ONE);
        assert_eq!(from_f32_rtz(-(1.0 + 0.0009)), 0xBC00);
        assert_eq!(from_f32_rtz(70000.0), 0x7BFF);
        assert_eq!(from_f32_rtz(f32::INFINITY), POS_INF);
        // Halfway between 1 and the next half: RNE goes to 1 (even), RTZ too.
        let mid = 1.0 + 2f32.powi(-11);
        assert_eq!(from_f32_rne(mid), ONE);
        assert_eq!(from_f32_rne(1.0 + 3.0 * 2f32.powi(-11)), 0x3C02);
        assert_eq!(from_f32_rtz(1.0 + 3.0 * 2f32.powi(-11)), 0x3C01);
    }
}
