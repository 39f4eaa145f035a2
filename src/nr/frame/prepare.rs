//! `prepare`: the 16 input lanes of every padded field pixel (spec §1.8), from the proxy colour,
//! the reprojected previous output, the frame seed and the conditioning parameters.
//!
//! Lanes are produced as f16 bit patterns (the network's input adapter rounds f32 features to
//! f16 first, so nothing is lost). Pixels outside the valid rectangle read a mirrored valid
//! pixel; the noise hash uses the padded coordinate itself.

use super::history::reproject;
use super::noise::noise_lanes;
use super::params::{FrameConstants, FrameError};
use super::portable::ftz;
use crate::numerics::f16::{self, F16};

/// Number of input lanes per pixel.
pub const LANES: usize = 16;

/// The images of one frame, each cut to the feature (valid) size, row-major.
#[derive(Debug, Clone, Copy)]
pub struct FrameInputs<'a> {
    /// Display-space proxy colour, RGBA f32 sRGB code values (nominally 0..1).
    pub proxy: &'a [[f32; 4]],
    /// Motion vectors in pixels (previous position minus current), before `MVecScale`.
    pub motion: Option<&'a [[f32; 2]]>,
    /// The previous frame's output history (RGBA16F bits), read only when history is valid.
    pub history: Option<&'a [[F16; 4]]>,
}

impl FrameInputs<'_> {
    /// Check every image against the valid size.
    pub fn check(&self, width: u32, height: u32) -> Result<(), FrameError> {
        let n = width as usize * height as usize;
        let check = |name: &'static str, got: usize| {
            if got == n {
                Ok(())
            } else {
                Err(FrameError::BufferSize {
                    name,
                    expected: n,
                    got,
                })
            }
        };
        check("proxy colour", self.proxy.len())?;
        if let Some(m) = self.motion {
            check("motion vectors", m.len())?;
        }
        if let Some(h) = self.history {
            check("history", h.len())?;
        }
        Ok(())
    }
}

/// Mirror a padded coordinate into `0..valid`. Inside it is the identity; just outside it is
/// spec §1.8's `2*valid - x - 2` (reflection about the last pixel, no edge repeat). Where that
/// would leave the image (fields at least twice the valid size, images under ~161 px) the
/// reflection repeats with period `2*(valid - 1)`, so the result is always in range; a 1-px
/// axis maps everything to 0.
#[inline]
pub const fn mirror(x: u32, valid: u32) -> u32 {
    if x < valid {
        return x;
    }
    if valid <= 1 {
        return 0;
    }
    let period = 2 * (valid - 1);
    let m = x % period;
    if m < valid {
        m
    } else {
        period - m
    }
}

/// Lanes 4-9 transform of one colour channel: `f16(f16(f16(c) - 0.5) * 0.125)`.
#[inline]
pub fn center_lane(c: f32) -> F16 {
    let h = f16::to_f32(f16::from_f32_rne(c));
    let h = f16::to_f32(f16::from_f32_rne(h - 0.5));
    f16::from_f32_rne(h * 0.125)
}

/// Lanes 10-14 from the constants: style/128, local tone, and the auto-mask selection of the
/// structure strengths.
pub fn conditioning_lanes(c: &FrameConstants) -> [F16; 5] {
    let local = c.local_structure;
    let (l12, l13, l14) = if c.auto_mask != 0 {
        let skin = if c.skin_structure < 0.0 {
            local
        } else {
            c.skin_structure
        };
        (1.0, skin, local)
    } else {
        (local, -1.0, -1.0)
    };
    [
        f16::from_f32_rne(c.style as f32 * 0.0078125),
        f16::from_f32_rne(c.local_tone),
        f16::from_f32_rne(l12),
        f16::from_f32_rne(l13),
        f16::from_f32_rne(l14),
    ]
}

/// The reprojected history of valid pixel `(x, y)`, or `None` when it must not be used.
pub fn history_at(c: &FrameConstants, inputs: &FrameInputs, x: u32, y: u32) -> Option<[f32; 4]> {
    if c.history_valid == 0 {
        return None;
    }
    let history = inputs.history?;
    let i = y as usize * c.width as usize + x as usize;
    let mv = match inputs.motion {
        Some(m) => m.get(i).copied().unwrap_or([0.0, 0.0]),
        None => [0.0, 0.0],
    };
    reproject(
        history,
        c.width,
        c.height,
        x,
        y,
        mv,
        [c.mvec_scale_x, c.mvec_scale_y],
    )
}

/// The 16 lanes of padded pixel `(x, y)`. `inputs` must have passed [`FrameInputs::check`].
pub fn prepare_pixel(c: &FrameConstants, inputs: &FrameInputs, x: u32, y: u32) -> [F16; LANES] {
    let sx = mirror(x, c.width);
    let sy = mirror(y, c.height);
    let i = sy as usize * c.width as usize + sx as usize;
    let rgba = inputs.proxy.get(i).copied().unwrap_or([0.0; 4]).map(ftz);
    let previous = history_at(c, inputs, sx, sy).unwrap_or(rgba);
    let [n0, n1, n2] = noise_lanes(x, y, c.seed);
    let [l10, l11, l12, l13, l14] = conditioning_lanes(c);
    [
        n0,
        n1,
        n2,
        f16::ONE,
        center_lane(rgba[0]),
        center_lane(rgba[1]),
        center_lane(rgba[2]),
        center_lane(previous[0]),
        center_lane(previous[1]),
        center_lane(previous[2]),
        l10,
        l11,
        l12,
        l13,
        l14,
        f16::POS_ZERO,
    ]
}

/// The input features `[field_height * field_width][16]` of a frame (row-major over the field).
pub fn prepare(c: &FrameConstants, inputs: &FrameInputs) -> Result<Vec<[F16; LANES]>, FrameError> {
    inputs.check(c.width, c.height)?;
    let (fw, fh) = (c.field_width, c.field_height);
    let mut out = Vec::with_capacity(fw as usize * fh as usize);
    for y in 0..fh {
        for x in 0..fw {
            out.push(prepare_pixel(c, inputs, x, y));
        }
    }
    Ok(out)
}

/// Features as f32 `[rows][16]`, the network's nominal input type.
pub fn features_f32(features: &[[F16; LANES]]) -> Vec<f32> {
    features
        .iter()
        .flat_map(|p| p.iter().map(|&h| f16::to_f32(h)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nr::frame::params::FrameParams;
    use crate::nr::frame::temporal::FrameSetup;
    use crate::nr::geometry::Geometry;

    fn constants(w: u32, h: u32, history_valid: bool, params: &FrameParams) -> FrameConstants {
        let g = Geometry::new(w, h).unwrap();
        let setup = FrameSetup {
            enabled: true,
            seed: 3,
            history_valid,
            read_slot: 0,
            write_slot: 1,
        };
        FrameConstants::new(&g, params, &setup, 0.75, false)
    }

    #[test]
    fn mirror_matches_the_spec_formula_where_it_fits_and_stays_in_range() {
        for valid in [2u32, 3, 33, 64, 161, 200] {
            for x in 0..4 * valid + 400 {
                let m = mirror(x, valid);
                assert!(m < valid, "mirror({x}, {valid}) = {m}");
                if x >= valid && x <= 2 * valid - 2 {
                    assert_eq!(m, 2 * valid - x - 2);
                }
            }
        }
        assert_eq!(mirror(5, 1), 0);
        // Repeated reflection at 33 px: 64 -> 0, 65 -> 1, 96 -> 32, 97 -> 31.
        assert_eq!([64, 65, 96, 97].map(|x| mirror(x, 33)), [0, 1, 32, 31]);
    }

    #[test]
    fn padding_at_33_and_64_reads_only_valid_pixels() {
        for (w, h) in [(33u32, 33u32), (64, 64)] {
            let g = Geometry::new(w, h).unwrap();
            assert!(
                !g.single_mirror_fits(),
                "{w}x{h} overruns the one-step mirror"
            );
            // Encode the source pixel index into the proxy so every lane 4 reveals it.
            let proxy: Vec<[f32; 4]> = (0..w * h)
                .map(|i| [(i % w) as f32 / 256.0, (i / w) as f32 / 256.0, 0.0, 1.0])
                .collect();
            let inputs = FrameInputs {
                proxy: &proxy,
                motion: None,
                history: None,
            };
            let c = constants(w, h, false, &FrameParams::default());
            let f = prepare(&c, &inputs).unwrap();
            assert_eq!(f.len(), g.field.area());
            for y in 0..g.field.h {
                for x in 0..g.field.w {
                    let (sx, sy) = (mirror(x, w), mirror(y, h));
                    let px = f[(y * g.field.w + x) as usize];
                    assert_eq!(px[4], center_lane(sx as f32 / 256.0), "({x},{y})");
                    assert_eq!(px[5], center_lane(sy as f32 / 256.0), "({x},{y})");
                    // Without history, lanes 7-9 copy lanes 4-6.
                    assert_eq!(&px[7..10], &px[4..7]);
                }
            }
        }
    }

    #[test]
    fn constant_lanes_and_conditioning() {
        let w = 40;
        let proxy = vec![[1.0f32, 0.0, 0.5, 1.0]; w * w];
        let inputs = FrameInputs {
            proxy: &proxy,
            motion: None,
            history: None,
        };
        let p = FrameParams {
            local_tone_strength: 0.3,
            local_structure_strength: 0.6,
            ..FrameParams::default()
        };
        let c = constants(w as u32, w as u32, false, &p);
        let px = prepare_pixel(&c, &inputs, 5, 6);
        assert_eq!(px[3], 0x3C00);
        assert_eq!(px[15], 0);
        // (1 - 0.5) / 8 = 0.0625 = 0x2C00; (0 - 0.5)/8 = -0.0625; 0.5 -> 0.
        assert_eq!(&px[4..7], &[0x2C00, 0xAC00, 0x0000]);
        // Auto mask: 1, skin<0 -> local, local.
        let f = |v: f32| f16::from_f32_rne(v);
        assert_eq!(&px[10..15], &[0, f(0.3), f(1.0), f(0.6), f(0.6)]);
        let c2 = FrameConstants { auto_mask: 0, ..c };
        assert_eq!(
            conditioning_lanes(&c2),
            [0, f(0.3), f(0.6), f(-1.0), f(-1.0)]
        );
        let c3 = FrameConstants {
            skin_structure: 0.25,
            ..c
        };
        assert_eq!(conditioning_lanes(&c3)[3], f(0.25));
        // Noise uses the padded coordinate and the seed.
        assert_eq!(&px[0..3], &noise_lanes(5, 6, 3));
        let pad = prepare_pixel(&c, &inputs, c.field_width - 1, 0);
        assert_eq!(&pad[0..3], &noise_lanes(c.field_width - 1, 0, 3));
    }

    #[test]
    fn history_lanes_follow_the_reprojected_history() {
        let (w, h) = (48u32, 40u32);
        let proxy = vec![[0.2f32, 0.2, 0.2, 1.0]; (w * h) as usize];
        let hist: Vec<[F16; 4]> = (0..w * h)
            .map(|i| {
                [
                    f16::from_f32_rne((i % w) as f32 / 64.0),
                    0x3800,
                    0x3400,
                    0x3C00,
                ]
            })
            .collect();
        // Motion of exactly one pixel to the left: the history of x is the texel x-1.
        let motion = vec![[-1.0f32, 0.0]; (w * h) as usize];
        let inputs = FrameInputs {
            proxy: &proxy,
            motion: Some(&motion),
            history: Some(&hist),
        };
        let c = constants(w, h, true, &FrameParams::default());
        let px = prepare_pixel(&c, &inputs, 10, 7);
        assert_eq!(px[7], center_lane(9.0 / 64.0));
        assert_eq!(px[8], center_lane(0.5));
        assert_eq!(px[9], center_lane(0.25));
        // Off screen at x = 0 (position -0.5): falls back to the proxy.
        let px0 = prepare_pixel(&c, &inputs, 0, 7);
        assert_eq!(&px0[7..10], &px0[4..7]);
        // History not valid: ignored even though it is bound.
        let c0 = constants(w, h, false, &FrameParams::default());
        let px = prepare_pixel(&c0, &inputs, 10, 7);
        assert_eq!(&px[7..10], &px[4..7]);
        // Wrong sizes are refused with the buffer named.
        let short = FrameInputs {
            motion: Some(&motion[1..]),
            ..inputs
        };
        let e = prepare(&c, &short).unwrap_err();
        assert!(e.to_string().contains("motion vectors"), "{e}");
    }
}
