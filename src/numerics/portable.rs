//! Portable, exactly specified transcendentals for the frame kernels: `log2`, `sqrt`,
//! `sin`/`cos` of a turn fraction, `exp2`, the reciprocal and the sigmoid built on them.
//!
//! Every function here is written with operations whose results Vulkan fixes bit for bit: f32
//! add, sub and mul (correctly rounded), integer and bit operations, exact `floor`, comparisons.
//! There is no fused multiply-add, no f32 division and no library transcendental, so a GLSL
//! compute shader that spells the same operations in the same order (with `precise`, so no
//! compiler contracts `a*b+c` into an FMA) produces identical bits on any Vulkan device,
//! including lavapipe. Coefficients are given as f32 bit patterns for the same reason.
//!
//! Subnormal f32 values are never produced and never relied upon (GPUs may flush them): inputs
//! that are subnormal are treated as zero and results below the normal range flush to zero.
//! The functions are accurate to a few ulp; the tests bound the error against f64.
//!
//! These are not NVIDIA's `.approx` instructions (spec nr-network §7.12): noise made with them
//! differs from native noise in low bits, but it is the same on every device this crate runs on.
//!
//! Moved from `nr::frame::portable` (which re-exports it): Ray Reconstruction's frame code uses
//! the same functions. GLSL twins: `shaders/lib/frame.glsl`.

// Constants are kept as bit patterns (f32::from_bits is not `const` at the crate's MSRV).

/// `log2(e)` as f32 bits (1.442695).
pub const LOG2E_BITS: u32 = 0x3FB8_AA3B;
/// `-log2(e)` as f32 bits, the sigmoid's exponent scale (spec §1.9).
pub const NEG_LOG2E_BITS: u32 = 0xBFB8_AA3B;
/// `ln 2` as f32 bits (0.6931472), used by Box-Muller (spec §1.8).
pub const LN2_BITS: u32 = 0x3F31_7218;
/// `2*pi / 2^24` as f32 bits: the f32 `2*pi` of spec §1.8 (0x40C90FDB) scaled by an exact
/// power of two.
pub const TWO_PI_OVER_2_24_BITS: u32 = 0x34C9_0FDB;

const F32_QNAN: u32 = 0x7FC0_0000;

/// `ln(1+f)` correction polynomial, highest degree first, for `f` in `[sqrt(1/2)-1, sqrt(2)-1)`.
const LN_P: [u32; 9] = [
    0x3D90_21BB,
    0xBDEB_D1B8,
    0x3DEF_251A,
    0xBDFE_5D4F,
    0x3E11_E9BF,
    0xBE2A_AE50,
    0x3E4C_CEAC,
    0xBE7F_FFFC,
    0x3EAA_AAAA,
];
/// `sin x = x + x^3 * S(x^2)` on `[0, pi/4]`, highest degree first.
const SIN_P: [u32; 3] = [0xB94C_A1F9, 0x3C08_839E, 0xBE2A_AAA3];
/// `cos x = 1 - x^2/2 + x^4 * C(x^2)` on `[0, pi/4]`, highest degree first.
const COS_P: [u32; 3] = [0x37CC_F5CE, 0xBAB6_061A, 0x3D2A_AAA5];
/// `2^f = 1 + f * E(f)` on `[-1/2, 1/2]`, highest degree first.
const EXP2_P: [u32; 6] = [
    0x3920_FDDE,
    0x3AAF_9F29,
    0x3C1D_96A6,
    0x3D63_5774,
    0x3E75_FDEE,
    0x3F31_7218,
];

/// Horner evaluation with separate multiply and add (never fused).
#[inline]
fn horner(coeffs: &[u32], x: f32) -> f32 {
    let mut acc = f32::from_bits(coeffs[0]);
    for &c in &coeffs[1..] {
        acc = acc * x + f32::from_bits(c);
    }
    acc
}

/// Replace a subnormal f32 by a zero of the same sign (inputs from callers may be subnormal;
/// GPUs are free to flush them in arithmetic, so the reference flushes them first).
#[inline]
pub fn ftz(x: f32) -> f32 {
    let b = x.to_bits();
    if b & 0x7F80_0000 == 0 {
        f32::from_bits(b & 0x8000_0000)
    } else {
        x
    }
}

/// Clamp to `[0, 1]` with a fixed answer for every input: NaN and both zeros give +0.
/// (GLSL `clamp`/`min`/`max` leave NaN unspecified; shaders spell this with comparisons.)
#[inline]
pub fn clamp01(x: f32) -> f32 {
    if x > 0.0 {
        if x < 1.0 {
            x
        } else {
            1.0
        }
    } else {
        0.0
    }
}

/// Base-2 logarithm. Subnormals and zeros give -inf, negative numbers NaN, +inf and NaN pass.
///
/// `x = 2^k * m` with `m` in `[sqrt(1/2), sqrt(2))` taken from the bits; `f = m - 1` is exact;
/// `ln(1+f) = f + (f*z*P(f) - z/2)` with `z = f*f`; the result is `k + ln(1+f) * log2(e)`.
pub fn log2(x: f32) -> f32 {
    let b = x.to_bits();
    let e = (b >> 23) & 0xFF;
    if b & 0x8000_0000 != 0 {
        return if e == 0 {
            f32::NEG_INFINITY
        } else {
            f32::from_bits(F32_QNAN)
        };
    }
    if e == 0 {
        return f32::NEG_INFINITY;
    }
    if e == 0xFF {
        return x;
    }
    let mant = b & 0x007F_FFFF;
    let mut k = e as i32 - 127;
    // 0x3504F3 is the mantissa of sqrt(2) rounded to f32: from there on, halve m.
    let m = if mant >= 0x0035_04F3 {
        k += 1;
        f32::from_bits(mant | 0x3F00_0000)
    } else {
        f32::from_bits(mant | 0x3F80_0000)
    };
    let f = m - 1.0;
    let z = f * f;
    let y = horner(&LN_P, f) * f * z;
    let y = y + -0.5 * z;
    let ln = f + y;
    ln * f32::from_bits(LOG2E_BITS) + k as f32
}

/// Correctly rounded square root (round to nearest even) by the integer digit-by-digit method.
/// `±0` give themselves, negative numbers NaN, subnormals +0, +inf and NaN pass.
pub fn sqrt(x: f32) -> f32 {
    let b = x.to_bits();
    if b & 0x7FFF_FFFF == 0 {
        return x;
    }
    if b & 0x8000_0000 != 0 {
        return f32::from_bits(F32_QNAN);
    }
    let e = (b >> 23) & 0xFF;
    if e == 0 {
        return 0.0;
    }
    if e == 0xFF {
        return x;
    }
    let m = (b & 0x007F_FFFF) | 0x0080_0000;
    let ue = e as i32 - 127;
    // R = m << s with (ue - 23 - s) even, so sqrt(x) = sqrt(R) * 2^((ue-23-s)/2) and sqrt(R)
    // has exactly 25 integer bits (24 kept + 1 rounding bit). R has 50 bits: (hi, lo).
    let s: u32 = if ue & 1 == 0 { 25 } else { 26 };
    let hi = m >> (32 - s);
    let lo = m << s;
    let mut rem: u32 = 0;
    let mut q: u32 = 0;
    for i in (0..25u32).rev() {
        let pair = if i >= 16 {
            (hi >> (2 * i - 32)) & 3
        } else {
            (lo >> (2 * i)) & 3
        };
        rem = (rem << 2) | pair;
        let t = (q << 2) | 1;
        if rem >= t {
            rem -= t;
            q = (q << 1) | 1;
        } else {
            q <<= 1;
        }
    }
    let mut m24 = q >> 1;
    if q & 1 == 1 && (rem != 0 || m24 & 1 == 1) {
        m24 += 1;
    }
    let bexp = (127 + 24 + (ue - 23 - s as i32) / 2) as u32;
    // A carry to 2^24 moves into the exponent field by itself.
    f32::from_bits((bexp << 23) + (m24 - 0x0080_0000))
}

/// Correctly rounded reciprocal `1/x` (round to nearest even) by integer long division.
/// `±0` and subnormals give `±inf`, `±inf` gives `±0`, results below the normal range flush to
/// `±0`, NaN passes as the canonical quiet NaN.
pub fn rcp(x: f32) -> f32 {
    let b = x.to_bits();
    let sign = b & 0x8000_0000;
    let e = (b >> 23) & 0xFF;
    if e == 0xFF {
        return if b & 0x007F_FFFF != 0 {
            f32::from_bits(F32_QNAN)
        } else {
            f32::from_bits(sign)
        };
    }
    if e == 0 {
        return f32::from_bits(sign | 0x7F80_0000);
    }
    let m = (b & 0x007F_FFFF) | 0x0080_0000;
    if m == 0x0080_0000 {
        // A power of two: 1/x = 2^-ue exactly, biased exponent 254 - e.
        return if e >= 254 {
            f32::from_bits(sign)
        } else {
            f32::from_bits(sign | ((254 - e) << 23))
        };
    }
    // q = floor(2^48 / m) in (2^24, 2^25): the remainder starts at 2^23 (= 2^48 / 2^25) and
    // 25 quotient bits follow.
    let mut rem: u32 = 0x0080_0000;
    let mut q: u32 = 0;
    for _ in 0..25 {
        rem <<= 1;
        q <<= 1;
        if rem >= m {
            rem -= m;
            q |= 1;
        }
    }
    let mut m24 = q >> 1;
    if q & 1 == 1 && (rem != 0 || m24 & 1 == 1) {
        m24 += 1;
    }
    // 1/x = m24 * 2^-24 * 2^-ue: biased exponent 126 - ue = 253 - e.
    if e >= 253 {
        return f32::from_bits(sign);
    }
    f32::from_bits(sign | (((253 - e) << 23) + (m24 - 0x0080_0000)))
}

/// `2^x`. NaN passes, `x >= 128` gives +inf, results below the normal range give +0.
///
/// `n = floor(x + 1/2)`, `f = x - n` (exact) in `[-1/2, 1/2]`, `p = 1 + f*E(f)`, and `n` is added
/// to the exponent field of `p` as an integer.
pub fn exp2(x: f32) -> f32 {
    if x.is_nan() {
        return f32::from_bits(F32_QNAN);
    }
    if x >= 128.0 {
        return f32::INFINITY;
    }
    if x < -127.0 {
        return 0.0;
    }
    let n = (x + 0.5).floor();
    let f = x - n;
    let p = f * horner(&EXP2_P, f) + 1.0;
    let pb = p.to_bits();
    let field = ((pb >> 23) & 0xFF) as i32 + n as i32;
    if field >= 255 {
        return f32::INFINITY;
    }
    if field <= 0 {
        return 0.0;
    }
    f32::from_bits((pb & 0x807F_FFFF) | ((field as u32) << 23))
}

/// The logistic function, spelled like NGX's `1 / (1 + 2^(x * -log2 e))` (spec §1.9) with the
/// portable [`exp2`] and the correctly rounded [`rcp`].
pub fn sigmoid(x: f32) -> f32 {
    rcp(1.0 + exp2(x * f32::from_bits(NEG_LOG2E_BITS)))
}

/// `(sin, cos)` of the angle `2*pi * k / 2^24` (a turn fraction on a 24-bit grid, taken modulo
/// one turn). The reduction is exact in integers: quadrant = bits 22-23, the rest is mirrored
/// into `[0, 1/8]` turn, turned into radians with one f32 product and fed to the `[0, pi/4]`
/// polynomials; the quadrant then permutes and negates (negation written as `0 - v`).
pub fn sincos_turn24(k: u32) -> (f32, f32) {
    let k = k & 0x00FF_FFFF;
    let quadrant = k >> 22;
    let r = k & 0x003F_FFFF;
    let (swap, t) = if r > 0x0020_0000 {
        (true, 0x0040_0000 - r)
    } else {
        (false, r)
    };
    let x = t as f32 * f32::from_bits(TWO_PI_OVER_2_24_BITS);
    let z = x * x;
    let s = horner(&SIN_P, z) * z * x + x;
    let c = (horner(&COS_P, z) * z * z - 0.5 * z) + 1.0;
    let (s, c) = if swap { (c, s) } else { (s, c) };
    match quadrant {
        0 => (s, c),
        1 => (c, 0.0 - s),
        2 => (0.0 - s, 0.0 - c),
        _ => (0.0 - c, s),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Distance in f32 ulps (of the f32 grid around `want`) between `got` and the f64 `want`.
    fn ulp_err(got: f32, want: f64) -> f64 {
        let w32 = want as f32;
        let ulp = if w32 == 0.0 {
            f32::from_bits(0x0080_0000) as f64 // the smallest normal: zeros are judged absolutely
        } else {
            let u = (w32.abs().to_bits() & 0x7F80_0000) as u64;
            // ulp of the binade of |want|
            f64::from(f32::from_bits(u as u32)) * f64::powi(2.0, -23)
        };
        ((got as f64) - want).abs() / ulp
    }

    #[test]
    fn sqrt_is_correctly_rounded() {
        // Rust's f32::sqrt is IEEE correctly rounded; compare bit for bit over a dense sweep of
        // both binade parities and the whole exponent range.
        let mut b: u32 = 0x0080_0000;
        let mut n = 0;
        while b < 0x7F80_0000 {
            let x = f32::from_bits(b);
            assert_eq!(sqrt(x).to_bits(), x.sqrt().to_bits(), "sqrt({x:e})");
            b += 0x0000_0F3D; // ~1.9M probes
            n += 1;
        }
        assert!(n > 500_000);
        for i in 0..(1u32 << 20) {
            // every mantissa high pattern around 1 and 2
            for base in [0x3F80_0000u32, 0x4000_0000] {
                let x = f32::from_bits(base | (i << 3) | (i & 7));
                assert_eq!(sqrt(x).to_bits(), x.sqrt().to_bits(), "sqrt({x:e})");
            }
        }
        assert_eq!(sqrt(0.0).to_bits(), 0);
        assert_eq!(sqrt(-0.0).to_bits(), 0x8000_0000);
        assert!(sqrt(-1.0).is_nan());
        assert_eq!(sqrt(f32::INFINITY), f32::INFINITY);
        assert_eq!(sqrt(f32::from_bits(1)), 0.0);
        assert_eq!(sqrt(4.0), 2.0);
    }

    #[test]
    fn rcp_is_correctly_rounded() {
        let mut b: u32 = 0x0080_0000;
        while b < 0x7E80_0000 {
            // up to 2^126 (beyond, results are subnormal and flush)
            for x in [f32::from_bits(b), -f32::from_bits(b)] {
                assert_eq!(rcp(x).to_bits(), (1.0f32 / x).to_bits(), "rcp({x:e})");
            }
            b += 0x0000_0B7F;
        }
        for i in 0..(1u32 << 20) {
            let x = f32::from_bits(0x3F80_0000 | (i << 3) | (i & 7));
            assert_eq!(rcp(x).to_bits(), (1.0f32 / x).to_bits(), "rcp({x:e})");
        }
        assert_eq!(rcp(0.0), f32::INFINITY);
        assert_eq!(rcp(-0.0), f32::NEG_INFINITY);
        assert_eq!(rcp(f32::INFINITY).to_bits(), 0);
        assert_eq!(rcp(f32::from_bits(0x7F00_0000)).to_bits(), 0); // 2^127 -> 2^-127 flushes
        assert_eq!(
            rcp(f32::from_bits(0x0080_0000)),
            f32::from_bits(0x7E80_0000)
        );
        assert!(rcp(f32::NAN).is_nan());
    }

    #[test]
    fn log2_accuracy() {
        let mut worst: f64 = 0.0;
        // All noise inputs k * 2^-24 for k in 1..=2^24 (sampled), then a sweep of all exponents.
        let mut k: u32 = 1;
        while k <= 1 << 24 {
            let u = k as f32 * f32::from_bits(0x3380_0000);
            let want = (u as f64).log2();
            let err = ulp_err(log2(u), want);
            worst = worst.max(err);
            k += 37;
        }
        let mut b: u32 = 0x0080_0000;
        while b < 0x7F80_0000 {
            let x = f32::from_bits(b);
            worst = worst.max(ulp_err(log2(x), (x as f64).log2()));
            b += 0x0000_3F01;
        }
        assert!(worst <= 2.0, "log2 max error {worst} ulp");
        assert_eq!(log2(1.0).to_bits(), 0);
        assert_eq!(log2(8.0), 3.0);
        assert_eq!(log2(0.25), -2.0);
        assert_eq!(log2(0.0), f32::NEG_INFINITY);
        assert_eq!(log2(f32::from_bits(5)), f32::NEG_INFINITY);
        assert!(log2(-2.0).is_nan());
        assert_eq!(log2(f32::INFINITY), f32::INFINITY);
    }

    #[test]
    fn sincos_accuracy() {
        let mut worst_s: f64 = 0.0;
        let mut worst_c: f64 = 0.0;
        let mut k: u32 = 0;
        // f64 reference with the same exact integer reduction, so that its own argument
        // rounding (sin(pi) != 0 in f64) does not enter the comparison.
        let sin_ref = |k: u32| {
            let r = k & 0x00FF_FFFF;
            let (neg, r) = if r >= 1 << 23 {
                (true, r - (1 << 23))
            } else {
                (false, r)
            };
            let r = if r > 1 << 22 { (1 << 23) - r } else { r };
            let v = (std::f64::consts::TAU * r as f64 / (1u64 << 24) as f64).sin();
            if neg {
                -v
            } else {
                v
            }
        };
        while k <= 1 << 24 {
            let (s, c) = sincos_turn24(k);
            worst_s = worst_s.max(ulp_err(s, sin_ref(k)));
            worst_c = worst_c.max(ulp_err(c, sin_ref(k.wrapping_add(1 << 22))));
            k += 3;
        }
        // Relative accuracy holds everywhere (near the zeros too) because the reduction is
        // exact; the bound covers the rounding of 2*pi and of the radian product.
        assert!(worst_s <= 2.0, "sin max error {worst_s} ulp");
        assert!(worst_c <= 2.0, "cos max error {worst_c} ulp");
        assert_eq!(sincos_turn24(0), (0.0, 1.0));
        assert_eq!(sincos_turn24(1 << 22), (1.0, 0.0));
        assert_eq!(sincos_turn24(1 << 23), (0.0, -1.0));
        assert_eq!(sincos_turn24(3 << 22), (-1.0, 0.0));
        assert_eq!(sincos_turn24(1 << 24), (0.0, 1.0));
        // The zeros are +0 (negation is 0 - v).
        assert_eq!(sincos_turn24(1 << 23).0.to_bits(), 0);
    }

    #[test]
    fn exp2_and_sigmoid_accuracy() {
        let mut worst: f64 = 0.0;
        let mut x = -126.0f32;
        while x < 127.9 {
            worst = worst.max(ulp_err(exp2(x), (x as f64).exp2()));
            x += 0.000_731;
        }
        assert!(worst <= 1.5, "exp2 max error {worst} ulp");
        assert_eq!(exp2(0.0), 1.0);
        assert_eq!(exp2(10.0), 1024.0);
        assert_eq!(exp2(-3.0), 0.125);
        assert_eq!(exp2(128.0), f32::INFINITY);
        assert!((exp2(127.75) as f64 / 2f64.powf(127.75) - 1.0).abs() < 1e-6);
        assert_eq!(exp2(-127.5), 0.0);
        assert_eq!(exp2(-200.0), 0.0);
        assert!(exp2(f32::NAN).is_nan());

        // The sigmoid's input rounding (x * -log2 e) adds |x| * 2^-24 relative error; judge it
        // absolutely on [0, 1] where the blend weight lives.
        let mut worst_abs: f64 = 0.0;
        let mut x = -40.0f32;
        while x < 40.0 {
            let want = 1.0 / (1.0 + (-(x as f64)).exp());
            worst_abs = worst_abs.max((sigmoid(x) as f64 - want).abs());
            x += 0.000_37;
        }
        assert!(
            worst_abs <= 2.0 * f64::powi(2.0, -24),
            "sigmoid abs error {worst_abs:e}"
        );
        assert_eq!(sigmoid(0.0), 0.5);
        assert_eq!(sigmoid(f32::INFINITY), 1.0);
        assert_eq!(sigmoid(f32::NEG_INFINITY), 0.0);
        assert_eq!(sigmoid(200.0), 1.0);
        assert_eq!(sigmoid(-200.0), 0.0);
    }

    #[test]
    fn clamp_and_ftz_are_total() {
        assert_eq!(clamp01(f32::NAN).to_bits(), 0);
        assert_eq!(clamp01(-0.0).to_bits(), 0);
        assert_eq!(clamp01(2.0), 1.0);
        assert_eq!(clamp01(0.25), 0.25);
        assert_eq!(ftz(f32::from_bits(0x8000_0003)).to_bits(), 0x8000_0000);
        assert_eq!(ftz(1.5), 1.5);
    }
}
