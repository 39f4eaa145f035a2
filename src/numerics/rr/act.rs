//! The MLP activation of every RR layer (spec rr-network §5.4).
//!
//! `y = clamp(x, -2, 2)` (signed), `g = 0.5 + y·(0.412109375 - 0.0810546875·|y|)`,
//! `out = x·g`, in NVIDIA's op order neg, max, min, abs, mul, sub, mul, add, mul: nine f16
//! operations, each rounded (RNE), none fused. g(+2) = 1, g(-2) = 0, g(1) = 0.8310546875.
//! max/min follow PTX (a NaN operand yields the other), so a NaN input gives y = -2, g = 0 and a
//! NaN output (NaN · 0).

use crate::numerics::f16::{self, F16};

use super::cubic::{max, min};

/// 0.412109375.
pub const A: F16 = 0x3698;
/// 0.0810546875.
pub const B: F16 = 0x2D30;
/// 0.5.
pub const HALF: F16 = 0x3800;
/// 2.0.
pub const TWO: F16 = 0x4000;

/// The activation of one half.
pub fn act(x: F16) -> F16 {
    let y = min(max(x, f16::neg(TWO)), TWO);
    let a = y & 0x7FFF;
    let p = f16::mul(B, a);
    let q = f16::add(A, f16::neg(p));
    let r = f16::mul(y, q);
    let g = f16::add(HALF, r);
    f16::mul(x, g)
}

/// The 65536-entry table of [`act`] (index = input bits).
pub fn act_table() -> &'static [F16; 65536] {
    static T: std::sync::OnceLock<Box<[F16; 65536]>> = std::sync::OnceLock::new();
    T.get_or_init(|| {
        let mut t = Box::new([0u16; 65536]);
        for (i, v) in t.iter_mut().enumerate() {
            *v = act(i as F16);
        }
        t
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gate(x: f32) -> f32 {
        f16::to_f32(act(f16::from_f32_rne(x))) / x
    }

    #[test]
    fn stated_values() {
        assert_eq!(f16::to_f32(A) as f64, 0.412109375);
        assert_eq!(f16::to_f32(B) as f64, 0.0810546875);
        assert_eq!(gate(1.0) as f64, 0.8310546875);
        assert_eq!(gate(2.0), 1.0);
        assert_eq!(gate(100.0), 1.0);
        assert_eq!(act(f16::from_f32_rne(-2.0)), 0x8000); // -2 · 0 = -0
        assert_eq!(act(f16::from_f32_rne(-7.0)), 0x8000);
        assert!(f16::is_nan(act(f16::QNAN)));
        assert_eq!(act(0x7C00), 0x7C00);
        // Signed y: at -1 the gate is 0.5 - 0.331... = 0.1689..., not 0.831 (d4r's |y| bug).
        assert_eq!(gate(-1.0), f16::to_f32(0x3168));
    }

    #[test]
    fn independent_evaluation() {
        for x in 0..=u16::MAX {
            if f16::is_nan(x) {
                continue;
            }
            let v = f16::to_f32(x) as f64;
            let y = v.clamp(-2.0, 2.0);
            let r = |z: f64| f16::to_f32(f16::from_f64_rne(z)) as f64;
            let p = r(0.0810546875 * y.abs());
            let q = r(0.412109375 - p);
            let g = r(0.5 + r(y * q));
            let want = f16::from_f64_rne(v * g);
            let got = act(x);
            if f16::is_nan(want) {
                assert!(f16::is_nan(got));
            } else {
                assert_eq!(got, want, "{x:#06x}");
            }
        }
    }
}
