//! The exact decode of normalised integer texels (UNORM, SNORM) and of inverted depth: the one
//! definition every route uses for a caller's image whose texels are integer codes. The GLSL
//! twins are `frame_ratio`, `frame_unorm`, `frame_snorm` and `frame_invert_depth` in
//! `shaders/lib/frame_formats.glsl`; the import kernel (`shaders/nr/import.comp`) recovers a
//! sampled texel's code and decodes it with them, so the value a network sees never depends on
//! the driver's own UNORM/SNORM decoder (docs/rr.md, "Input formats").
//!
//! * UNORM, `n` bits (n <= 24): `RN_f32(c / (2^n - 1))`, the Vulkan rule correctly rounded to
//!   nearest even (`c` and `2^n - 1` are exact in f32, so one IEEE division gives it).
//! * SNORM, `n` bits (n <= 16): `max(RN_f32(c / (2^(n-1) - 1)), -1)`: the two lowest codes
//!   (`-2^(n-1)` and `-2^(n-1) + 1`) are both -1.
//! * Inverted depth (`DepthInverted`: 1 near, 0 far): `RN_f32(1 - d)`, one f32 subtraction.

/// `RN_f32(code / (2^bits - 1))` for `1 <= bits <= 24`; codes above the maximum decode as 1.
pub fn unorm(code: u32, bits: u32) -> f32 {
    assert!((1..=24).contains(&bits), "UNORM of {bits} bits");
    let max = (1u32 << bits) - 1;
    code.min(max) as f32 / max as f32
}

/// `max(RN_f32(code / (2^(bits-1) - 1)), -1)` for `2 <= bits <= 16`; codes beyond the range
/// saturate.
pub fn snorm(code: i32, bits: u32) -> f32 {
    assert!((2..=16).contains(&bits), "SNORM of {bits} bits");
    let max = (1i32 << (bits - 1)) - 1;
    (code.clamp(-max, max) as f32 / max as f32).max(-1.0)
}

/// The UNORM code of `v` (`round(clamp(v, 0, 1) · (2^bits - 1))`, NaN -> 0): what a renderer
/// writing `v` into such an image stores (tests and fixtures encode with it).
pub fn unorm_code(v: f32, bits: u32) -> u32 {
    let max = ((1u64 << bits) - 1) as f64;
    let v = if v.is_nan() {
        0.0
    } else {
        v.clamp(0.0, 1.0) as f64
    };
    (v * max).round() as u32
}

/// The SNORM code of `v` (`round(clamp(v, -1, 1) · (2^(bits-1) - 1))`, NaN -> 0).
pub fn snorm_code(v: f32, bits: u32) -> i32 {
    let max = ((1i64 << (bits - 1)) - 1) as f64;
    let v = if v.is_nan() {
        0.0
    } else {
        v.clamp(-1.0, 1.0) as f64
    };
    (v * max).round() as i32
}

/// `RN_f32(1 - d)`: depth given as 1 near, 0 far turned into 0 near, 1 far.
pub fn invert_depth(d: f32) -> f32 {
    1.0 - d
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `c / m` correctly rounded, by exact rational comparison in integers: the f32 nearest
    /// (ties to even) the rational, checked against its two neighbours.
    fn is_nearest(c: u64, m: u64, f: f32) -> bool {
        // |f - c/m| <= |g - c/m| for the neighbours g, compared exactly as f64 products (every
        // value involved has at most 24 + 24 significant bits, within f64's 53).
        let err = |x: f32| ((x as f64) * m as f64 - c as f64).abs();
        let e = err(f);
        let up = f32::from_bits(f.to_bits() + 1);
        let down = if f > 0.0 {
            f32::from_bits(f.to_bits() - 1)
        } else {
            f
        };
        e <= err(up) && e <= err(down)
    }

    #[test]
    fn unorm_edges_and_rounding() {
        for bits in [8, 10, 16, 24] {
            let max = (1u32 << bits) - 1;
            assert_eq!(unorm(0, bits).to_bits(), 0);
            assert_eq!(unorm(max, bits), 1.0);
            assert_eq!(unorm(max + 7, bits), 1.0);
            let mid = max / 2;
            assert!(is_nearest(mid as u64, max as u64, unorm(mid, bits)));
        }
        assert_eq!(unorm(128, 8), 128.0 / 255.0);
        assert_eq!(unorm(1, 16).to_bits(), (1.0f32 / 65535.0).to_bits());
        // Every 16-bit code and a stride of the 24-bit ones are the nearest f32.
        for c in 0..=65535u32 {
            assert!(is_nearest(c as u64, 65535, unorm(c, 16)), "{c}");
            assert_eq!(unorm_code(unorm(c, 16), 16), c);
        }
        for c in (0..1u32 << 24)
            .step_by(4099)
            .chain([(1 << 24) - 2, 1 << 23])
        {
            assert!(is_nearest(c as u64, (1 << 24) - 1, unorm(c, 24)), "{c}");
        }
    }

    #[test]
    fn snorm_edges_and_rounding() {
        for bits in [8, 16] {
            let max = (1i32 << (bits - 1)) - 1;
            assert_eq!(snorm(0, bits).to_bits(), 0);
            assert_eq!(snorm(max, bits), 1.0);
            assert_eq!(snorm(-max, bits), -1.0);
            // The extra lowest code is -1 too (Vulkan's max(c / m, -1)).
            assert_eq!(snorm(-max - 1, bits), -1.0);
            for c in -max..=max {
                let f = snorm(c, bits);
                assert_eq!(f, -snorm(-c, bits), "{c}: symmetric");
                assert!(
                    is_nearest(c.unsigned_abs() as u64, max as u64, f.abs()),
                    "{c}"
                );
                assert_eq!(snorm_code(f, bits), c);
            }
        }
        assert_eq!(snorm(64, 8), 64.0 / 127.0);
        assert_eq!(snorm(-64, 8), -64.0 / 127.0);
    }

    #[test]
    fn codes_of_values() {
        assert_eq!(unorm_code(f32::NAN, 8), 0);
        assert_eq!(unorm_code(-1.0, 8), 0);
        assert_eq!(unorm_code(2.0, 16), 65535);
        assert_eq!(unorm_code(0.5, 8), 128);
        assert_eq!(snorm_code(-2.0, 8), -127);
        assert_eq!(snorm_code(0.5, 8), 64);
        assert_eq!(invert_depth(0.25), 0.75);
        assert_eq!(invert_depth(1.0).to_bits(), 0);
        // Not exact below 1/2 (Sterbenz): one correctly rounded subtraction.
        assert_eq!(invert_depth(unorm(1, 24)), 1.0 - unorm(1, 24));
    }
}
