//! The window softmax with the cubic exponential (spec rr-network §5.3).
//!
//! Per f16 score x: `m = clamp(f16(x · 0x2466), -0x3873, +0x3873)`,
//! `t = f16(m·(-m) + 0x3B6B)` and `u = f16(m·t + 0x3D80)` (fused multiply-adds, one rounding
//! each), then `e = (bits(u) << 5) & 0x7FE0`: the top five mantissa bits of u become the exponent
//! field and the low five the top of the mantissa, so `e ≈ 2^(32u - 47)`, in [2^-14, 2^8·63/32].
//! There is no maximum subtraction; the clamp bounds the range. The clamp is a max then a min
//! with PTX semantics (a NaN operand yields the other one), so a NaN score takes the low end.
//!
//! Row of 96 keys: `sum` in the fragment tree of [`super::lanes`], `r = f16(1/sum)` correctly
//! rounded (NVIDIA: `rcp.approx.ftz.f32` rounded to f16; openngx: [`crate::numerics::recip`]),
//! `p = f16(e · r)`, published as `q8(p)` for the P·V GEMM.

use crate::numerics::e4m3::E4;
use crate::numerics::f16::{self, F16};
use crate::numerics::recip;

use super::{lanes, q8};

/// Keys of a window row (8x8 window plus the 32-token halo).
pub const KEYS: usize = 96;
/// Query rows of a window.
pub const QUERIES: usize = 64;

/// The score scale 0.017181396484375.
pub const SCALE: F16 = 0x2466;
/// The clamp bound 0.55615234375 (√(0.92724609375 / 3), where the cubic turns).
pub const CLAMP: F16 = 0x3873;
/// 0.92724609375.
pub const T0: F16 = 0x3B6B;
/// 1.375.
pub const U0: F16 = 0x3D80;

/// `max(a, b)` of halves with PTX semantics: a NaN operand yields the other operand.
#[inline]
pub fn max(a: F16, b: F16) -> F16 {
    if f16::is_nan(a) {
        return b;
    }
    if f16::is_nan(b) {
        return a;
    }
    if f16::to_f32(b) > f16::to_f32(a) {
        b
    } else {
        a
    }
}

/// `min(a, b)` of halves with PTX semantics: a NaN operand yields the other operand.
#[inline]
pub fn min(a: F16, b: F16) -> F16 {
    if f16::is_nan(a) {
        return b;
    }
    if f16::is_nan(b) {
        return a;
    }
    if f16::to_f32(b) < f16::to_f32(a) {
        b
    } else {
        a
    }
}

/// The cubic exponential weight of one score.
pub fn expval(x: F16) -> F16 {
    let m = min(max(f16::mul(x, SCALE), f16::neg(CLAMP)), CLAMP);
    let t = f16::fma(m, f16::neg(m), T0);
    let u = f16::fma(m, t, U0);
    (u << 5) & 0x7FE0
}

/// The 65536-entry table of [`expval`] (index = score bits).
pub fn expval_table() -> &'static [F16; 65536] {
    static T: std::sync::OnceLock<Box<[F16; 65536]>> = std::sync::OnceLock::new();
    T.get_or_init(|| {
        let mut t = Box::new([0u16; 65536]);
        for (i, v) in t.iter_mut().enumerate() {
            *v = expval(i as F16);
        }
        t
    })
}

/// The row's reciprocal `f16(1 / tree_sum(e))` (`e` the row's 96 weights in key order).
pub fn row_recip(e: &[F16]) -> F16 {
    recip::recip(lanes::row_sum(e))
}

/// The published probabilities of one row of 96 scores: `q8(f16(expval(s) · r))`.
pub fn softmax_row(s: &[F16], out: &mut [E4]) {
    let t = expval_table();
    let e: Vec<F16> = s.iter().map(|&x| t[x as usize]).collect();
    let r = row_recip(&e);
    for (o, &v) in out.iter_mut().zip(&e) {
        *o = q8::from_f16(f16::mul(v, r));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constants_and_range() {
        assert_eq!(f16::to_f32(SCALE) as f64, 0.017181396484375);
        assert_eq!(f16::to_f32(CLAMP) as f64, 0.55615234375);
        assert_eq!(f16::to_f32(T0) as f64, 0.92724609375);
        assert_eq!(f16::to_f32(U0), 1.375);
        let lo = f16::to_f32(0x0400); // 2^-14
        let hi = 2f32.powi(8) * (1.0 + 31.0 / 32.0);
        // Within range for every score. (Not monotone everywhere: near the clamp the cubic is
        // flat and the rounded t and u may step back by one code of u.)
        for h in 0..=u16::MAX {
            let e = f16::to_f32(expval(h));
            assert!((lo..=hi).contains(&e), "{h:#06x} -> {e}");
        }
        assert_eq!(expval(0x5BFF), expval(0x7C00)); // large scores sit on the clamp
                                                    // NaN takes the low end; exp(0) = 2^(32·1.375 - 47) = 2^-3.
        assert_eq!(expval(f16::QNAN), expval(0xFC00));
        assert_eq!(expval(0), 0x3000);
        // For small scores the base-2 exponent is about 0.5098·s.
        let s = 4.0f32;
        let e = f16::to_f32(expval(f16::from_f32_rne(s)));
        let slope = (e / 0.125).log2() / s;
        assert!((slope - 0.5098).abs() < 0.03, "{slope}");
    }

    #[test]
    fn steps_are_single_rounding_fmas() {
        // Independent evaluation with exact rationals (f64 is exact for these products and sums
        // of halves) and one rounding per step.
        for x in (0..=u16::MAX).step_by(7) {
            if f16::is_nan(x) {
                continue;
            }
            let m = f16::to_f32(x) as f64 * f16::to_f32(SCALE) as f64;
            let m = f16::from_f64_rne(m);
            let mv = (f16::to_f32(m) as f64).clamp(-0.55615234375, 0.55615234375);
            let t = f16::from_f64_rne(-mv * mv + 0.92724609375);
            let u = f16::from_f64_rne(mv * f16::to_f32(t) as f64 + 1.375);
            assert_eq!(expval(x), (u << 5) & 0x7FE0, "{x:#06x}");
        }
    }

    #[test]
    fn uniform_row() {
        let s = [0u16; KEYS];
        let mut p = [0u8; KEYS];
        softmax_row(&s, &mut p);
        // 96 · 2^-3 = 12; r = 1/12 -> 0x2D55; p = 2^-3 · r = 0.0104 -> E4M3.
        let r = row_recip(&[0x3000; KEYS]);
        assert_eq!(r, 0x2D55);
        assert!(p.iter().all(|&c| c == q8::from_f16(f16::mul(0x3000, r))));
    }
}
