//! The cubic SiLU ("MpCubicSiLU", spec nr-network §2.4 with §8.6) and its 65536-entry f16 -> f16
//! table, which is what the kernels look up.
//!
//! `b = clamp(x, -4, 4)`; `p = f16(-0.055908203125 * |b| + 0.447265625)`;
//! `p = f16(b * p + 0.89453125)`; `out = f16(x * p)` with x unclamped. Each `f16(u*v + w)` is a
//! single-rounding half FMA. For x <= -4 the cubic gives p = +0, so the output is -0 (E4M3 0x80);
//! -inf gives NaN (published as +0); NaN stays NaN.

use std::sync::OnceLock;

use super::f16::{self, F16};

/// -0.055908203125 (= -229/4096) as a half.
pub const C3: F16 = 0xAB28;
/// 0.447265625 (= 229/512).
pub const C2: F16 = 0x3728;
/// 0.89453125 (= 229/256).
pub const C1: F16 = 0x3B28;
/// ±4.
const FOUR: F16 = 0x4400;

/// The clamp of §2.4 on a half: NaN stays NaN (the product with x makes the output NaN anyway).
fn clamp4(x: F16) -> F16 {
    if f16::is_nan(x) {
        return x;
    }
    let v = f16::to_f32(x);
    if v < -4.0 {
        FOUR | 0x8000
    } else if v > 4.0 {
        FOUR
    } else {
        x
    }
}

/// The cubic SiLU computed step by step.
pub fn silu(x: F16) -> F16 {
    let b = clamp4(x);
    let p = f16::fma(C3, b & 0x7FFF, C2);
    let p = f16::fma(b, p, C1);
    f16::mul(x, p)
}

/// The 65536-entry table (index = input bits), built once from [`silu`].
pub fn silu_table() -> &'static [F16; 65536] {
    static TABLE: OnceLock<Box<[F16; 65536]>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut t = Box::new([0u16; 65536]);
        for (i, v) in t.iter_mut().enumerate() {
            *v = silu(i as F16);
        }
        t
    })
}

/// SiLU through the table.
#[inline]
pub fn silu_lookup(x: F16) -> F16 {
    silu_table()[x as usize]
}
