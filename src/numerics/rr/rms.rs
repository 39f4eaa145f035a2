//! The RMS norm of every Swin block (spec rr-network §5.2).
//!
//! `sumsq` = the row's squares (`f16(x·x)`, one rounding each) summed in the fragment tree of
//! [`super::lanes`]; `inv = rsqrt(f16(sumsq + ε))`, correctly rounded (NVIDIA:
//! `rsqrt.approx.ftz.f32` of the half, rounded to f16; see [`crate::numerics::recip::rsqrt`]);
//! `out[c] = f16(x[c] · f16(inv · gain[c]))`. There is no mean and no 1/N: a standard RMSNorm's
//! gain g is stored as g·√C and its ε as C·ε.
//!
//! ε is 2^-13 (f16 0x0800) everywhere except enc0's pre-attention norm, where openngx uses 2^-10
//! (0x1400): the spec reports that d4r's enc0 reimplementation, checked bit for bit against
//! NVIDIA, uses 2^-10 while its comment says 2^-13, and a value that ran bit-exact outranks a
//! comment ([`EPS_ENC0_ATTENTION`]).

use crate::numerics::f16::{self, F16};
use crate::numerics::recip;

use super::lanes;

/// ε of every norm but one: 2^-13.
pub const EPS: F16 = 0x0800;
/// ε of enc0's pre-attention norm: 2^-10 (see the module doc for why).
pub const EPS_ENC0_ATTENTION: F16 = 0x1400;

/// The row's sum of squares in the fragment tree (`x.len()` a positive multiple of 32).
pub fn sum_squares(x: &[F16]) -> F16 {
    let sq: Vec<F16> = x.iter().map(|&v| f16::mul(v, v)).collect();
    lanes::row_sum(&sq)
}

/// `rsqrt(f16(sumsq + eps))`, correctly rounded.
pub fn inv_root(sumsq: F16, eps: F16) -> F16 {
    recip::rsqrt(f16::add(sumsq, eps))
}

/// One element of the output: `f16(x · f16(inv · gain))`.
#[inline]
pub fn apply(x: F16, inv: F16, gain: F16) -> F16 {
    f16::mul(x, f16::mul(inv, gain))
}

/// Normalise one row: `out[c] = apply(x[c], inv_root(sum_squares(x), eps), gain[c])`.
pub fn norm_row(x: &[F16], gain: &[F16], eps: F16, out: &mut [F16]) {
    let inv = inv_root(sum_squares(x), eps);
    for ((o, &v), &g) in out.iter_mut().zip(x).zip(gain) {
        *o = apply(v, inv, g);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unit_gain_norms_to_sqrt_c_scale() {
        // x = 1 everywhere, C = 32: sumsq 32, inv = rsqrt(32 + 2^-13) = rsqrt(32) rounded,
        // so out = 1/sqrt(32) ≈ 0.17676 (f16 0x31A8).
        let x = vec![f16::ONE; 32];
        let mut out = vec![0; 32];
        norm_row(&x, &[f16::ONE; 32], EPS, &mut out);
        assert_eq!(sum_squares(&x), 0x5000);
        assert!(out.iter().all(|&o| o == 0x31A8), "{:#06x}", out[0]);
        // A zero row gives rsqrt(ε) = 2^6.5 and zeros out.
        let z = vec![0u16; 64];
        assert_eq!(inv_root(sum_squares(&z), EPS), recip::rsqrt(EPS));
        let mut out64 = vec![1; 64];
        norm_row(&z, &[f16::ONE; 64], EPS, &mut out64);
        assert!(out64.iter().all(|&o| o == 0));
    }

    #[test]
    fn epsilon_changes_small_rows_only() {
        let small = vec![0x1C00u16; 32]; // 2^-8: squares 2^-16, sum 2^-11
        let a = inv_root(sum_squares(&small), EPS);
        let b = inv_root(sum_squares(&small), EPS_ENC0_ATTENTION);
        assert_ne!(a, b);
        let big = vec![0x4000u16; 32]; // 2: sum 128
        assert_eq!(
            inv_root(sum_squares(&big), EPS),
            inv_root(sum_squares(&big), EPS_ENC0_ATTENTION)
        );
    }

    #[test]
    fn overflow_and_nan() {
        let mut x = vec![0x3C00u16; 32];
        x[3] = 0x7800; // 32768: square overflows to inf
        let mut out = vec![0; 32];
        norm_row(&x, &[f16::ONE; 32], EPS, &mut out);
        assert_eq!(out[0], 0); // x · 0
        assert_eq!(out[3], 0);
        x[3] = f16::QNAN;
        norm_row(&x, &[f16::ONE; 32], EPS, &mut out);
        assert!(out.iter().all(|&o| f16::is_nan(o)));
    }
}
