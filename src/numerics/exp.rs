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
