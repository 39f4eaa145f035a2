//! The exponential bit tricks of the attention softmax (spec nr-network §2.6, §8.5, §8.7).
//!
//! A score `s` (f16) goes through an affine map to a half `x` in a narrow band just above 1, is
//! clamped, and its bit pattern is shifted so that the mantissa bits of `x` become exponent bits:
//! the result is a piecewise-linear approximation of `2^(c*s + d)`, as an f16 bit pattern.
//!
//! * Window: `x = f16(f32(0.044921875 * s + 1.30078125))` — an f32 FMA rounded to f32, then RNE to
//!   f16 (double rounding, §8.7); clamp to [1.03125, 1.5693359375];
//!   `e = ((bits(x) << 5) ^ 0x8000) & 0xFFFF`.
//! * ViT: `x = f16(0.08953857421875 * s + 1.708984375)` — one single-rounding half FMA; clamp to
//!   [1.439453125, 1.9775390625]; `e = ((bits(x) << 4) + 0x4000) & 0xFFFF`.
//!
//! The clamp has min/max semantics (`min(max(x, lo), hi)` with a NaN operand losing): a NaN score
//! gives the low end, ±inf the ends.

use super::f16::{self, F16};

/// Window affine slope 0.044921875 (f16 0x29C0, exact in f32).
pub const WINDOW_SLOPE: f32 = 0.044921875;
/// Window affine offset 1.30078125 (= 333/256, exact in f32; spelled as a quotient because the
/// decimal literal trips clippy's precision lint).
pub const WINDOW_OFFSET: f32 = 333.0 / 256.0;
/// Window clamp, as halves: 1.03125 and 1.5693359375.
pub const WINDOW_LO: F16 = 0x3C20;
pub const WINDOW_HI: F16 = 0x3E47;
/// ViT affine slope 0.08953857421875 and offset 1.708984375, as halves.
pub const VIT_SLOPE: F16 = 0x2DBB;
pub const VIT_OFFSET: F16 = 0x3ED6;
/// ViT clamp: 1.439453125 and 1.9775390625.
pub const VIT_LO: F16 = 0x3DC2;
pub const VIT_HI: F16 = 0x3FE9;
/// `exp_window(0)` = 0.025390625 and `exp_vit(0)` = 0.083984375.
pub const WINDOW_EXP0: F16 = 0x2680;
pub const VIT_EXP0: F16 = 0x2D60;

/// `min(max(x, lo), hi)` on positive halves with NaN losing both comparisons.
fn clamp(x: F16, lo: F16, hi: F16) -> F16 {
    let v = f16::to_f32(x);
    match v.partial_cmp(&f16::to_f32(lo)) {
        // NaN compares as unordered: max(NaN, lo) = lo.
        None | Some(std::cmp::Ordering::Less) => lo,
        _ if v > f16::to_f32(hi) => hi,
        _ => x,
    }
}

/// The window weight of a score: an f16 in [2^-14, 9.75].
pub fn exp_window(s: F16) -> F16 {
    let y = WINDOW_SLOPE.mul_add(f16::to_f32(s), WINDOW_OFFSET);
    let x = clamp(f16::from_f32_rne(y), WINDOW_LO, WINDOW_HI);
    (x << 5) ^ 0x8000
}

/// The ViT weight of a score: an f16 in [0.0040283203125, 1.640625].
pub fn exp_vit(s: F16) -> F16 {
    let x = clamp(f16::fma(VIT_SLOPE, s, VIT_OFFSET), VIT_LO, VIT_HI);
    (x << 4).wrapping_add(0x4000)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `shaders/lib/exp.glsl`'s `exp_window_pair` (the tensor route's window attention) takes
    /// no table: scores of magnitude 8 or more (inf, NaN) become ±8 (NaN -8), then
    /// x = clamp(1.30078125 + 2^-10 roundEven(s * 46)) in f32, every step exact, and its bits are
    /// moved on the pair. The same steps here, for every half in both halves of the word, equal
    /// `exp_window` (whose x is rounded twice, to f32 and then to f16).
    #[test]
    fn the_kernels_arithmetic_exp_window_equals_exp_window() {
        let pair = |mut w: u32| -> u32 {
            let mag = w & 0x7FFF_7FFF;
            let big = (((mag + 0x3800_3800) & 0x8000_8000) >> 15) * 0xFFFF;
            let nan = (((mag + 0x03FF_03FF) & 0x8000_8000) >> 15) * 0xFFFF;
            w = (w & !big) | ((((w | nan) & 0x8000_8000) | 0x4800_4800) & big);
            let x = |h: u32| -> u32 {
                let s = f16::to_f32(h as F16);
                assert!(
                    s.is_finite() && s.abs() <= 8.0,
                    "{h:#06x} reaches the f32 steps"
                );
                let k = (s * 46.0).round_ties_even();
                // Exact: s * 46 has at most 17 significant bits, k * 2^-10 + 1.30078125 lies on
                // the 2^-10 grid below 2^14.
                assert_eq!(f64::from(s) * 46.0, f64::from(s * 46.0));
                let v = (k * 0.000_976_562_5 + WINDOW_OFFSET)
                    .clamp(f16::to_f32(WINDOW_LO), f16::to_f32(WINDOW_HI));
                let b = u32::from(f16::from_f32_rne(v));
                assert_eq!(
                    f16::to_f32(b as F16),
                    v,
                    "{h:#06x}: the clamped value is a half"
                );
                b
            };
            let bits = x(w & 0xFFFF) | (x(w >> 16) << 16);
            ((bits << 5) & 0xFFE0_FFE0) ^ 0x8000_8000
        };
        for h in 0..=u16::MAX {
            let other = h.wrapping_mul(0x9E37);
            let got = pair(u32::from(h) | (u32::from(other) << 16));
            assert_eq!(got & 0xFFFF, u32::from(exp_window(h)), "score {h:#06x}");
            assert_eq!(
                got >> 16,
                u32::from(exp_window(other)),
                "score {other:#06x}"
            );
        }
    }

    /// `exp.glsl`'s `exp_vit_pair` (the tensor route's ViT attention): the same pre-clamp, then
    /// x = clamp(1.708984375 + 2^-10 roundEven(s * 91.6875)) in f32, every step exact, one
    /// rounding as the half FMA of `exp_vit`; +0x4000 on each half as two bit flips. For every
    /// half in both halves of the word it equals `exp_vit`.
    #[test]
    fn the_kernels_arithmetic_exp_vit_equals_exp_vit() {
        let pair = |mut w: u32| -> u32 {
            let mag = w & 0x7FFF_7FFF;
            let big = (((mag + 0x3800_3800) & 0x8000_8000) >> 15) * 0xFFFF;
            let nan = (((mag + 0x03FF_03FF) & 0x8000_8000) >> 15) * 0xFFFF;
            w = (w & !big) | ((((w | nan) & 0x8000_8000) | 0x4800_4800) & big);
            let x = |h: u32| -> u32 {
                let s = f16::to_f32(h as F16);
                assert_eq!(f64::from(s) * 91.6875, f64::from(s * 91.6875), "{h:#06x}");
                let k = (s * 91.6875).round_ties_even();
                let v = (k * 0.000_976_562_5 + f16::to_f32(VIT_OFFSET))
                    .clamp(f16::to_f32(VIT_LO), f16::to_f32(VIT_HI));
                let b = u32::from(f16::from_f32_rne(v));
                assert_eq!(
                    f16::to_f32(b as F16),
                    v,
                    "{h:#06x}: the clamped value is a half"
                );
                b
            };
            let v = ((x(w & 0xFFFF) | (x(w >> 16) << 16)) << 4) & 0xFFF0_FFF0;
            v ^ 0x4000_4000 ^ ((v & 0x4000_4000) << 1)
        };
        assert_eq!(f16::to_f32(VIT_SLOPE) * 1024.0, 91.6875);
        for h in 0..=u16::MAX {
            let other = h.wrapping_mul(0x9E37);
            let got = pair(u32::from(h) | (u32::from(other) << 16));
            assert_eq!(got & 0xFFFF, u32::from(exp_vit(h)), "score {h:#06x}");
            assert_eq!(got >> 16, u32::from(exp_vit(other)), "score {other:#06x}");
        }
    }
}
