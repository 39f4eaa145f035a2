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

    /// `shaders/lib/exp.glsl`'s `exp_affine_pair`: scores of magnitude 8 or more (inf, NaN)
    /// become ±8 (NaN -8), then x = clamp(offset + 2^-10 roundEven(s * slope_1024)) in f32,
    /// every step exact (asserted), as an f16 pair.
    fn affine_pair(mut w: u32, slope_1024: f32, offset: F16, lo: F16, hi: F16) -> u32 {
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
            assert_eq!(
                f64::from(s) * f64::from(slope_1024),
                f64::from(s * slope_1024)
            );
            let k = (s * slope_1024).round_ties_even();
            let v =
                (k * 0.000_976_562_5 + f16::to_f32(offset)).clamp(f16::to_f32(lo), f16::to_f32(hi));
            let b = u32::from(f16::from_f32_rne(v));
            assert_eq!(
                f16::to_f32(b as F16),
                v,
                "{h:#06x}: the clamped value is a half"
            );
            b
        };
        x(w & 0xFFFF) | (x(w >> 16) << 16)
    }

    /// Every half in both halves of a word through `pair`, against `f`.
    fn every_half(pair: impl Fn(u32) -> u32, f: fn(F16) -> F16) {
        for h in 0..=u16::MAX {
            let other = h.wrapping_mul(0x9E37);
            let got = pair(u32::from(h) | (u32::from(other) << 16));
            assert_eq!(got & 0xFFFF, u32::from(f(h)), "score {h:#06x}");
            assert_eq!(got >> 16, u32::from(f(other)), "score {other:#06x}");
        }
    }

    /// `exp.glsl`'s `exp_window_pair` (the tensor route's window attention) takes no table:
    /// the affine pair with slope 46 / 2^10, then its bits moved on the pair. It equals
    /// `exp_window` (whose x is rounded twice, to f32 and then to f16) for every half.
    #[test]
    fn the_kernels_arithmetic_exp_window_equals_exp_window() {
        assert_eq!(WINDOW_SLOPE * 1024.0, 46.0);
        let offset = f16::from_f32_rne(WINDOW_OFFSET);
        assert_eq!(f16::to_f32(offset), WINDOW_OFFSET);
        every_half(
            |w| {
                let bits = affine_pair(w, 46.0, offset, WINDOW_LO, WINDOW_HI);
                ((bits << 5) & 0xFFE0_FFE0) ^ 0x8000_8000
            },
            exp_window,
        );
    }

    /// `exp.glsl`'s `exp_vit_pair` (the tensor route's ViT attention): the affine pair with
    /// slope 91.6875 / 2^10, one rounding as the half FMA of `exp_vit`; +0x4000 on each half as
    /// two bit flips. It equals `exp_vit` for every half.
    #[test]
    fn the_kernels_arithmetic_exp_vit_equals_exp_vit() {
        assert_eq!(f16::to_f32(VIT_SLOPE) * 1024.0, 91.6875);
        every_half(
            |w| {
                let v = (affine_pair(w, 91.6875, VIT_OFFSET, VIT_LO, VIT_HI) << 4) & 0xFFF0_FFF0;
                v ^ 0x4000_4000 ^ ((v & 0x4000_4000) << 1)
            },
            exp_vit,
        );
    }
}
