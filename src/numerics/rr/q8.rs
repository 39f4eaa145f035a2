//! E4M3 as Ray Reconstruction publishes and reads it (spec rr-network §4.1, §5.1).
//!
//! RR converts with `cvt.rn.satfinite.e4m3x2.f16x2`: round to nearest even from the **half**
//! (never straight from f32), finite overflow and ±inf saturate to ±448, ±0 keep their sign, and a
//! NaN stays NaN with its sign (0x7F / 0xFF). That differs from DLSS-NR's publication
//! ([`crate::numerics::e4m3::from_f16`]) only for NaN, which NR maps to +0; the finite rounding
//! is the same function. enc0's embedding alone uses the `.relu` form: negatives and -0 become +0,
//! NaN becomes the canonical 0x7F.
//!
//! Decoding: a NaN code is a NaN operand (the canonical half NaN 0x7E00), every other code its
//! exact half, as in [`crate::numerics::e4m3::to_f16`].

use crate::numerics::e4m3::{self, E4};
use crate::numerics::f16::{self, F16};

/// The canonical E4M3 NaN.
pub const NAN: E4 = 0x7F;

/// True for the NaN codes 0x7F and 0xFF.
#[inline]
pub fn is_nan(c: E4) -> bool {
    c & 0x7F == 0x7F
}

/// `q8(h)`: publish a half to E4M3 with `cvt.rn.satfinite` (NaN kept with its sign).
#[inline]
pub fn from_f16(h: F16) -> E4 {
    if f16::is_nan(h) {
        return NAN | ((h >> 8) as u8 & 0x80);
    }
    e4m3::from_f16(h)
}

/// enc0's ReLU requantisation (`cvt.rn.satfinite.relu`): negatives and -0 give +0, NaN gives 0x7F.
#[inline]
pub fn from_f16_relu(h: F16) -> E4 {
    if f16::is_nan(h) {
        return NAN;
    }
    if h & 0x8000 != 0 {
        return 0;
    }
    e4m3::from_f16(h)
}

/// Decode a code to the half it holds (NaN codes give the canonical NaN 0x7E00).
#[inline]
pub fn to_f16(c: E4) -> F16 {
    if is_nan(c) {
        return f16::QNAN;
    }
    e4m3::to_f16(c)
}

/// The 65536-entry publication table (index = half bits), as the GPU kernels read it.
pub fn from_f16_table() -> Vec<E4> {
    (0..=u16::MAX).map(from_f16).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nan_keeps_its_sign_and_finite_values_round_like_nr() {
        for h in 0..=u16::MAX {
            let c = from_f16(h);
            if f16::is_nan(h) {
                assert_eq!(c, if h & 0x8000 != 0 { 0xFF } else { 0x7F }, "{h:#06x}");
            } else {
                assert_eq!(c, e4m3::from_f16(h), "{h:#06x}");
                assert!(!is_nan(c), "{h:#06x} publishes to a NaN code");
            }
        }
        // Saturation: 464 (the tie between 448 and the NaN slot) and beyond, and inf.
        assert_eq!(from_f16(0x5F40), 0x7E); // 464
        assert_eq!(from_f16(0xFC00), 0xFE);
        assert_eq!(from_f16(0x8000), 0x80);
    }

    #[test]
    fn relu_form() {
        for h in 0..=u16::MAX {
            let c = from_f16_relu(h);
            if f16::is_nan(h) {
                assert_eq!(c, 0x7F);
            } else if h & 0x8000 != 0 {
                assert_eq!(c, 0, "{h:#06x}");
            } else {
                assert_eq!(c, from_f16(h), "{h:#06x}");
            }
        }
    }

    #[test]
    fn decode_round_trips_and_nan_is_nan() {
        for c in 0..=255u8 {
            let h = to_f16(c);
            if is_nan(c) {
                assert_eq!(h, f16::QNAN);
                assert_eq!(from_f16(h), 0x7F);
            } else {
                assert_eq!(from_f16(h), c, "{c:#04x}");
            }
        }
    }
}
