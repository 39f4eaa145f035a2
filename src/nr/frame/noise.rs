//! The Gaussian noise of input lanes 0-2: the integer hash of spec §1.8 (u32 wrapping
//! arithmetic, bit for bit), and Box-Muller evaluated with the portable transcendentals of
//! [`super::portable`], each lane rounded to f16.

use super::portable::{log2, sincos_turn24, sqrt, LN2_BITS};
use crate::numerics::f16::{self, F16};

/// `2^-24` as f32 bits: the uniform grid step.
const TWO_POW_M24_BITS: u32 = 0x3380_0000;

/// The hash's mixing step: `(v >> ((v >> 28) + 4)) ^ v`.
#[inline]
pub const fn mix(v: u32) -> u32 {
    (v >> ((v >> 28) + 4)) ^ v
}

/// The per-pixel hash of the **padded** coordinate `(x, y)` and the frame seed.
#[inline]
pub const fn pixel_hash(x: u32, y: u32, seed: u32) -> u32 {
    let base = x.wrapping_mul(0x8da6_b343)
        ^ seed.wrapping_mul(0x9e37_79b9)
        ^ y.wrapping_mul(0xd816_3841)
        ^ 0x243f_6a88;
    let base = mix(base).wrapping_mul(0x108e_f2d9);
    base ^ (base >> 22)
}

/// The uniform variate of `v` as its integer numerator `k` in `1..=2^24`; the value is
/// `k * 2^-24` in `(0, 1]` (exact in f32).
#[inline]
pub const fn uniform24(v: u32) -> u32 {
    let v = mix(v).wrapping_mul(0x108e_f2d9);
    ((v >> 30) ^ (v >> 8)) + 1
}

/// The four uniform numerators `(k0, k1, k2, k3)` of a pixel (spec §1.8 constants).
#[inline]
pub const fn uniforms(base: u32) -> [u32; 4] {
    [
        uniform24(base.wrapping_mul(0x2c92_77b5).wrapping_add(0xac56_4b05)),
        uniform24(base.wrapping_mul(0xfa6d_c5f9).wrapping_add(0x4712_a88e)),
        uniform24(base.wrapping_mul(0xcaa5_b80d).wrapping_add(0x21dd_796b)),
        uniform24(base.wrapping_mul(0x8323_2c31).wrapping_add(0x3463_e0ac)),
    ]
}

/// Box-Muller radius `sqrt((log2(u) * ln2) * -2)` for `u = k * 2^-24`, in that operation order.
#[inline]
pub fn radius(k: u32) -> f32 {
    let u = k as f32 * f32::from_bits(TWO_POW_M24_BITS);
    sqrt((log2(u) * f32::from_bits(LN2_BITS)) * -2.0)
}

/// The three noise values of padded pixel `(x, y)` before rounding: `r0 cos a0`, `r0 sin a0`,
/// `r1 cos a1`, with `a = 2*pi*u` evaluated from the turn numerator exactly.
pub fn noise_f32(x: u32, y: u32, seed: u32) -> [f32; 3] {
    let [k0, k1, k2, k3] = uniforms(pixel_hash(x, y, seed));
    let r0 = radius(k0);
    let r1 = radius(k2);
    let (s0, c0) = sincos_turn24(k1);
    let (_, c1) = sincos_turn24(k3);
    [r0 * c0, r0 * s0, r1 * c1]
}

/// Input lanes 0-2 of padded pixel `(x, y)`: the noise rounded to f16 (RNE).
pub fn noise_lanes(x: u32, y: u32, seed: u32) -> [F16; 3] {
    noise_f32(x, y, seed).map(f16::from_f32_rne)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash_matches_hand_evaluation() {
        // (0, 0, seed 0): base = 0x243f6a88; mix shifts by (2 + 4) = 6.
        let b0 = 0x243f_6a88u32;
        let m = (b0 >> 6) ^ b0;
        let m = m.wrapping_mul(0x108e_f2d9);
        assert_eq!(pixel_hash(0, 0, 0), m ^ (m >> 22));
        // The seed and both coordinates all enter the hash.
        let h = pixel_hash(5, 7, 3);
        assert_ne!(h, pixel_hash(5, 7, 4));
        assert_ne!(h, pixel_hash(6, 7, 3));
        assert_ne!(h, pixel_hash(5, 8, 3));
        // Uniform numerators stay in 1..=2^24.
        for v in [0u32, 1, 0xFFFF_FFFF, 0x8000_0000, 0x1234_5678] {
            let k = uniform24(v);
            assert!((1..=1 << 24).contains(&k));
        }
        assert_eq!(radius(1 << 24).to_bits(), 0x8000_0000); // u = 1: log2 = 0, times -2 = -0
                                                            // u = 2^-24: sqrt(2 * 24 * ln2) = 5.7681...
        assert!((radius(1) - 5.768_108).abs() < 1e-5);
    }

    #[test]
    fn noise_statistics_over_a_64x64_field() {
        // A 336x320 field (the 64x64 geometry), seed 0 and seed 7: every lane has mean ~0 and
        // variance ~1; the lanes are uncorrelated with each other.
        for seed in [0u32, 7] {
            let (mut sum, mut sq) = ([0f64; 3], [0f64; 3]);
            let mut cross01 = 0f64;
            let n = 336 * 320;
            for y in 0..320 {
                for x in 0..336 {
                    let l = noise_lanes(x, y, seed).map(|h| f16::to_f32(h) as f64);
                    for i in 0..3 {
                        sum[i] += l[i];
                        sq[i] += l[i] * l[i];
                    }
                    cross01 += l[0] * l[1];
                }
            }
            for i in 0..3 {
                let mean = sum[i] / n as f64;
                let var = sq[i] / n as f64 - mean * mean;
                assert!(mean.abs() < 0.01, "seed {seed} lane {i} mean {mean}");
                assert!(
                    (var - 1.0).abs() < 0.02,
                    "seed {seed} lane {i} variance {var}"
                );
            }
            assert!((cross01 / n as f64).abs() < 0.01);
        }
    }

    #[test]
    fn noise_is_deterministic_and_seeded() {
        let a: Vec<[F16; 3]> = (0..256).map(|i| noise_lanes(i % 17, i / 17, 9)).collect();
        let b: Vec<[F16; 3]> = (0..256).map(|i| noise_lanes(i % 17, i / 17, 9)).collect();
        assert_eq!(a, b);
        let c: Vec<[F16; 3]> = (0..256).map(|i| noise_lanes(i % 17, i / 17, 10)).collect();
        let same = a.iter().zip(&c).filter(|(p, q)| p == q).count();
        assert!(same < 4, "{same} of 256 pixels unchanged by the seed");
        // Lanes are rounded values: the f16 of the f32 noise.
        let f = noise_f32(3, 4, 1);
        assert_eq!(noise_lanes(3, 4, 1), f.map(f16::from_f32_rne));
    }
}
