//! Element-wise half operations with their exact rounding points (spec nr-network §2.4).

use super::f16::{self, F16};

/// 0.25 as a half.
pub const QUARTER: F16 = 0x3400;

/// Scaled skip seed `f16(skip * scale)` (the product of two halves is exact; one rounding).
#[inline]
pub fn scaled_skip(skip: F16, scale: F16) -> F16 {
    f16::mul(skip, scale)
}

/// 2x2 average pool `f16(f16(f16(a+b) + f16(c+d)) * 0.25)`, (a, b) the top pair, (c, d) the bottom.
#[inline]
pub fn pool2x2(a: F16, b: F16, c: F16, d: F16) -> F16 {
    f16::mul(f16::add(f16::add(a, b), f16::add(c, d)), QUARTER)
}

/// Decoder merge `f16(up + skip * scale)`: one single-rounding half FMA.
#[inline]
pub fn decoder_merge(up: F16, skip: F16, scale: F16) -> F16 {
    f16::fma(skip, scale, up)
}

/// Post blend: `u = f16(up * input_scale)`, then `f16(u + block0 * adapter_scale)` (one FMA).
#[inline]
pub fn post_blend(up: F16, input_scale: F16, block0: F16, adapter_scale: F16) -> F16 {
    let u = f16::mul(up, input_scale);
    f16::fma(block0, adapter_scale, u)
}

/// Feature input to the adapter: f32 -> f16 RNE.
#[inline]
pub fn feature_input(x: f32) -> F16 {
    f16::from_f32_rne(x)
}

/// History store: f32 -> f16 round toward zero.
#[inline]
pub fn history_store(x: f32) -> F16 {
    f16::from_f32_rtz(x)
}
