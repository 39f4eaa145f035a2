//! History reprojection: where a pixel was in the previous frame (motion vectors), and a
//! portable 5-tap Catmull-Rom sample of the previous output there (`numerics::resample`, which
//! this module re-exports).

use super::portable::ftz;
use crate::numerics::f16::F16;
pub use crate::numerics::resample::{catmull_rom, catmull_rom_weights};

/// Where pixel `(x, y)` (integer, valid area) was in the previous frame, in pixel units
/// (texel centres at `i + 0.5`): `(x + 0.5) + mv * scale`. This is `uv * size` for the uv of
/// spec §1.8; working in pixels avoids the divisions by the size.
#[inline]
pub fn history_position(x: u32, y: u32, mv: [f32; 2], scale: [f32; 2]) -> [f32; 2] {
    [
        (x as f32 + 0.5) + ftz(mv[0]) * scale[0],
        (y as f32 + 0.5) + ftz(mv[1]) * scale[1],
    ]
}

/// True when the reprojected position lies on the previous image, `0 <= p <= size` per axis
/// (uv in `[0, 1]`); NaN positions are off screen.
#[inline]
pub fn on_screen(pos: [f32; 2], width: u32, height: u32) -> bool {
    pos[0] >= 0.0 && pos[0] <= width as f32 && pos[1] >= 0.0 && pos[1] <= height as f32
}

/// The reprojected, normalised previous output for valid pixel `(x, y)`, or `None` when there
/// is no usable history there (history not valid this frame, or the position is off screen).
pub fn reproject(
    history: &[[F16; 4]],
    width: u32,
    height: u32,
    x: u32,
    y: u32,
    mv: [f32; 2],
    scale: [f32; 2],
) -> Option<[f32; 4]> {
    let pos = history_position(x, y, mv, scale);
    if !on_screen(pos, width, height) {
        return None;
    }
    Some(catmull_rom(history, width, height, pos))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::numerics::f16::{self, from_f32_rne};

    fn image(w: u32, h: u32, f: impl Fn(u32, u32) -> [f32; 4]) -> Vec<[F16; 4]> {
        (0..h)
            .flat_map(|y| (0..w).map(move |x| (x, y)))
            .map(|(x, y)| f(x, y).map(from_f32_rne))
            .collect()
    }

    #[test]
    fn weights_sum_to_one_and_interpolate() {
        assert_eq!(catmull_rom_weights(0.0), [0.0, 1.0, 0.0, 0.0]);
        assert_eq!(catmull_rom_weights(1.0), [0.0, 0.0, 1.0, 0.0]);
        let w = catmull_rom_weights(0.5);
        assert_eq!(w, [-0.0625, 0.5625, 0.5625, -0.0625]);
        for i in 0..=64 {
            let w = catmull_rom_weights(i as f32 / 64.0);
            assert!((w.iter().sum::<f32>() - 1.0).abs() < 1e-6);
        }
    }

    #[test]
    fn constant_image_is_reproduced_exactly() {
        let (w, h) = (37u32, 21u32);
        let img = image(w, h, |_, _| [0.3, 0.7, 0.123, 1.0]);
        let want = [0.3f32, 0.7, 0.123, 1.0].map(|v| f16::to_f32(from_f32_rne(v)));
        let mut n = 0;
        for y in 0..h {
            for x in 0..w {
                for mv in [
                    [0.0, 0.0],
                    [0.37, -1.6],
                    [-3.3, 2.01],
                    [-0.5, -0.5],
                    [0.49, 7.0],
                ] {
                    if let Some(v) = reproject(&img, w, h, x, y, mv, [1.0, 1.0]) {
                        assert_eq!(v, want, "({x}, {y}) mv {mv:?}");
                        n += 1;
                    }
                }
            }
        }
        assert!(n > 3000);
    }

    #[test]
    fn zero_motion_returns_the_texel() {
        let (w, h) = (16u32, 9u32);
        let img = image(w, h, |x, y| [x as f32 / 16.0, y as f32 / 9.0, 0.5, 1.0]);
        for y in 0..h {
            for x in 0..w {
                let v = reproject(&img, w, h, x, y, [0.0, 0.0], [1.0, 1.0]).unwrap();
                let t = img[(y * w + x) as usize].map(f16::to_f32);
                assert_eq!(v, t);
            }
        }
    }

    #[test]
    fn linear_ramp_is_reproduced_inside() {
        // A ramp in x and y; away from the clamped border Catmull-Rom is exact on linear data
        // up to rounding (halves of the texels, f32 arithmetic).
        let (w, h) = (64u32, 48u32);
        let ramp = |x: f32, y: f32| (x * 0.01 + y * 0.005) + 0.1;
        let img = image(w, h, |x, y| {
            let v = ramp(x as f32 + 0.5, y as f32 + 0.5);
            [v, 1.0 - v, 0.5 * v, 1.0]
        });
        let mut worst = 0f32;
        for y in 4..h - 4 {
            for x in 4..w - 4 {
                for mv in [[0.25f32, -0.75f32], [1.5, 0.3], [-2.2, -1.1]] {
                    let p = history_position(x, y, mv, [1.0, 1.0]);
                    let v = reproject(&img, w, h, x, y, mv, [1.0, 1.0]).unwrap();
                    let r = ramp(p[0], p[1]);
                    worst = worst.max((v[0] - r).abs()).max((v[1] - (1.0 - r)).abs());
                }
            }
        }
        // Texels are halves: their rounding (<= 2^-11 relative of values < 1) dominates.
        assert!(worst < 6e-4, "ramp error {worst}");
    }

    #[test]
    fn off_screen_and_scale() {
        let (w, h) = (8u32, 8u32);
        let img = image(w, h, |_, _| [0.5; 4]);
        assert!(reproject(&img, w, h, 0, 0, [-0.6, 0.0], [1.0, 1.0]).is_none());
        assert!(reproject(&img, w, h, 0, 0, [-0.5, 0.0], [1.0, 1.0]).is_some());
        assert!(reproject(&img, w, h, 7, 7, [0.5, 0.5], [1.0, 1.0]).is_some());
        assert!(reproject(&img, w, h, 7, 7, [0.0, 0.51], [1.0, 1.0]).is_none());
        assert!(reproject(&img, w, h, 3, 3, [f32::NAN, 0.0], [1.0, 1.0]).is_none());
        // MVecScale multiplies the vector: 2 px * 3 leaves the 8-px image from x = 3.
        assert!(reproject(&img, w, h, 3, 3, [2.0, 0.0], [3.0, 1.0]).is_none());
        assert_eq!(history_position(3, 4, [2.0, -1.0], [0.5, 2.0]), [4.5, 2.5]);
    }
}
