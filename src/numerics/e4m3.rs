//! E4M3 (e4m3fn): publication from f16 bits and decoding.
//!
//! Publication rules (spec nr-network §2.1): half NaN -> +0 (0x00); ±0 keep their sign; ±inf and
//! overflow saturate to ±448 (0x7E/0xFE); RNE everywhere, subnormals included. Decoding maps the
//! NaN codes 0x7F/0xFF to 0.

use super::f16::{self, F16};

/// An E4M3 code.
pub type E4 = u8;

/// Publish a half (given as bits) to E4M3.
pub fn from_f16(h: F16) -> E4 {
    if f16::is_nan(h) {
        return 0x00;
    }
    let sign = ((h >> 8) & 0x80) as u8;
    let e = ((h >> 10) & 0x1F) as u32;
    let m = (h & 0x3FF) as u32;
    if e == 0x1F {
        return sign | 0x7E; // ±inf saturates
    }
    if e <= 8 {
        // |x| < 2^-6: E4M3 subnormal m·2^-9. Significand (with the implicit bit for normals) is
        // a multiple of 2^-24 (subnormal half) or 2^(e-25); shift to units of 2^-9 with RNE.
        let (sig, shift) = if e == 0 { (m, 15) } else { (m | 0x400, 16 - e) };
        let q = rne_shift(sig, shift).min(8);
        return sign | q as u8;
    }
    // Normal: E4M3 exponent field = e - 8; mantissa = RNE(m >> 7).
    let mut ee = e - 8;
    let mut mm = rne_shift(m, 7);
    if mm == 8 {
        mm = 0;
        ee += 1;
    }
    if ee > 15 || (ee == 15 && mm > 6) {
        return sign | 0x7E;
    }
    sign | ((ee << 3) | mm) as u8
}

#[inline]
fn rne_shift(v: u32, s: u32) -> u32 {
    if s == 0 {
        return v;
    }
    if s >= 32 {
        return 0;
    }
    let kept = v >> s;
    let rem = v & ((1 << s) - 1);
    let half = 1 << (s - 1);
    if rem > half || (rem == half && (kept & 1) == 1) {
        kept + 1
    } else {
        kept
    }
}

/// Decode an E4M3 code to the half it equals exactly (NaN codes decode to +0).
pub fn to_f16(c: E4) -> F16 {
    let sign = ((c as u16) & 0x80) << 8;
    let e = ((c >> 3) & 0xF) as u16;
    let m = (c & 7) as u16;
    if (c & 0x7F) == 0x7F {
        return 0;
    }
    if e == 0 {
        if m == 0 {
            return sign;
        }
        let p = 15 - m.leading_zeros() as i32; // index of top bit 0..2
        let ue = p - 9; // value exponent
        let frac = (m as u32) << (10 - p) & 0x3FF;
        return sign | ((((ue + 15) as u16) << 10) | frac as u16);
    }
    // (1 + m/8)·2^(e-7) -> half exponent field e - 7 + 15 = e + 8.
    sign | ((e + 8) << 10) | (m << 7)
}

/// Decode an E4M3 code to f32 (NaN codes decode to +0).
pub fn to_f32(c: E4) -> f32 {
    f16::to_f32(to_f16(c))
}

/// Publish an f32: f32 -> f16 (RNE) -> E4M3 (RNE), never directly.
pub fn from_f32(x: f32) -> E4 {
    from_f16(f16::from_f32_rne(x))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `shaders/lib/e4m3_widen.glsl` (the tensor route's kernels) widens two codes at once: the
    /// NaN codes cleared, the code's bits moved to their f16 places, one f16 multiply by 256.
    /// The same steps here, for every code of both halves, equal `to_f16`.
    #[test]
    fn the_kernels_arithmetic_widening_equals_to_f16() {
        use crate::numerics::f16;
        let widen_halves = |mut x: u32| -> u32 {
            let mag = x & 0x007F_007F;
            let nan = ((mag + 0x0001_0001) & 0x0080_0080) >> 7;
            x &= !(nan * 0xFFFF);
            let bits = ((x & 0x007F_007F) << 7) | ((x & 0x0080_0080) << 8);
            let times_256 = |h: u32| u32::from(f16::mul(h as u16, 0x5C00));
            times_256(bits & 0xFFFF) | (times_256(bits >> 16) << 16)
        };
        for c in 0..=255u32 {
            let other = 255 - c;
            let w = widen_halves(c | (other << 16));
            assert_eq!(w & 0xFFFF, u32::from(to_f16(c as u8)), "code {c:#04x}");
            assert_eq!(w >> 16, u32::from(to_f16(other as u8)), "code {other:#04x}");
        }
    }

    /// `e4m3_widen.glsl`'s `e4_subnormal_codes`: RNE(h 2^9) in f32 for a half below 2^-6.
    fn subnormal_code(h: u32) -> f32 {
        let m = crate::numerics::f16::to_f32(h as u16);
        assert!(m.abs() < 0.015_625, "{h:#06x} is not below 2^-6");
        (m * 512.0).round_ties_even()
    }

    /// `shaders/lib/e4m3_widen.glsl`'s `e4_round_pair` (the window attention's P) publishes and
    /// widens two halves in [+0, 464] without a table: from 2^-6 the f16 mantissa rounded to
    /// three bits, nearest even; below, the subnormal code RNE(h 2^9) scaled back. The same
    /// steps here, for every half of the range in both halves of the word, equal
    /// `to_f16(from_f16(h))`.
    #[test]
    fn the_kernels_arithmetic_rounding_equals_publish_and_widen() {
        use crate::numerics::f16;
        let round_pair = |w: u32| -> u32 {
            let nrm = (w + 0x003F_003F + ((w >> 7) & 0x0001_0001)) & 0xFF80_FF80;
            let normal = ((((w | 0x8000_8000) - 0x2400_2400) & 0x8000_8000) >> 15) * 0xFFFF;
            let m = w & !normal;
            let back = |h: u32| u32::from(f16::from_f32_rne(subnormal_code(h) * 0.001_953_125));
            let sub = back(m & 0xFFFF) | (back(m >> 16) << 16);
            (nrm & normal) | (sub & !normal)
        };
        for h in 0..=0x5F40u16 {
            let other = 0x5F40 - h;
            let got = round_pair(u32::from(h) | (u32::from(other) << 16));
            assert_eq!(
                got & 0xFFFF,
                u32::from(to_f16(from_f16(h))),
                "half {h:#06x}"
            );
            assert_eq!(
                got >> 16,
                u32::from(to_f16(from_f16(other))),
                "half {other:#06x}"
            );
        }
    }

    /// `shaders/lib/e4m3_widen.glsl`'s `e4_publish_pair` publishes two halves without a table:
    /// the mantissa of magnitudes from 2^-6 rounded to three bits and rebiased (saturating at
    /// 0x7E), below it the subnormal code RNE(|h| 2^9), the sign put back, NaN to 0. The same
    /// steps here, for every half in both halves of the word, equal `from_f16`.
    #[test]
    fn the_kernels_arithmetic_publication_equals_from_f16() {
        let publish_pair = |w: u32| -> u32 {
            let mag = w & 0x7FFF_7FFF;
            let normal = (((mag + 0x5C00_5C00) & 0x8000_8000) >> 15) * 0xFFFF;
            let up = ((mag + 0x003F_003F + ((mag >> 7) & 0x0001_0001)) >> 7) & 0x01FF_01FF;
            let mut code = (up + 0x01C0_01C0) & 0x01FF_01FF;
            let over = ((((code | 0x8000_8000) - 0x007F_007F) & 0x8000_8000) >> 15) * 0xFFFF;
            code = (code & !over) | (0x007E_007E & over);
            let m = mag & !normal;
            let sub = subnormal_code(m & 0xFFFF) as u32 | ((subnormal_code(m >> 16) as u32) << 16);
            let nan = (((mag + 0x03FF_03FF) & 0x8000_8000) >> 15) * 0xFFFF;
            (((code & normal) | (sub & !normal)) | ((w >> 8) & 0x0080_0080)) & !nan
        };
        for h in 0..=u16::MAX {
            let other = h.wrapping_mul(0x9E37) ^ 0x5A5A;
            let got = publish_pair(u32::from(h) | (u32::from(other) << 16));
            assert_eq!(
                got & 0xFF00_FF00,
                0,
                "{h:#06x} {other:#06x}: codes in bytes 0 and 2"
            );
            assert_eq!(got & 0xFF, u32::from(from_f16(h)), "half {h:#06x}");
            assert_eq!(got >> 16, u32::from(from_f16(other)), "half {other:#06x}");
        }
    }

    #[test]
    fn decode_values() {
        assert_eq!(to_f32(0x00), 0.0);
        assert!(to_f32(0x80).is_sign_negative());
        assert_eq!(to_f32(0x7E), 448.0);
        assert_eq!(to_f32(0xFE), -448.0);
        assert_eq!(to_f32(0x01), 2f32.powi(-9));
        assert_eq!(to_f32(0x07), 7.0 * 2f32.powi(-9));
        assert_eq!(to_f32(0x08), 2f32.powi(-6));
        assert_eq!(to_f32(0x38), 1.0);
        assert_eq!(to_f32(0x7F), 0.0);
        assert_eq!(to_f32(0xFF), 0.0);
    }

    #[test]
    fn every_code_round_trips_through_f16() {
        for c in 0..=255u8 {
            if c & 0x7F == 0x7F {
                continue;
            }
            assert_eq!(from_f16(to_f16(c)), c, "{c:#04x}");
        }
    }

    #[test]
    fn every_half_publishes_to_the_nearest_code() {
        // Oracle: among all finite codes, the nearest by value; ties to the even code; values
        // beyond 448 saturate; NaN -> 0.
        let codes: Vec<(f64, u8)> = (0..=255u8)
            .filter(|c| c & 0x7F != 0x7F)
            .map(|c| (to_f32(c) as f64, c))
            .collect();
        for h in 0..=u16::MAX {
            let got = from_f16(h);
            if f16::is_nan(h) {
                assert_eq!(got, 0);
                continue;
            }
            let x = f16::to_f32(h) as f64;
            if x == 0.0 {
                assert_eq!(got, if h & 0x8000 != 0 { 0x80 } else { 0 });
                continue;
            }
            if x.abs() >= 448.0 {
                assert_eq!(got, if x < 0.0 { 0xFE } else { 0x7E }, "{h:#06x}");
                continue;
            }
            let mut best = (f64::INFINITY, 0u8);
            for &(v, c) in &codes {
                if (v < 0.0) != (x < 0.0) && v != 0.0 {
                    continue;
                }
                if v == 0.0 && ((c & 0x80 != 0) != (x < 0.0)) {
                    continue;
                }
                let d = (v - x).abs();
                if d < best.0 || (d == best.0 && (c & 1) == 0) {
                    best = (d, c);
                }
            }
            assert_eq!(got, best.1, "half {h:#06x} = {x}");
        }
    }
}
