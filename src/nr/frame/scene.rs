//! A deterministic animated test scene with exact motion vectors, so that the temporal loop
//! (reprojection, history blend) is exercised by something that really moves.
//!
//! The background is a striped gradient texture scrolling at a constant velocity; in front of
//! it a checkered disc translates back and forth and rotates. Everything is computed with
//! IEEE-exact f64 operations (add, mul, div, sqrt, floor) and the portable turn-based sine/cosine, so
//! the images are the same on every platform.

use super::portable::sincos_turn24;

/// Background velocity in pixels per frame (content moves by this much each frame).
pub const BACKGROUND_VELOCITY: [f64; 2] = [1.25, -0.5];

/// Disc rotation per frame, in 2^-24 turns (~1/90 turn, 4 degrees).
const ROTATION_PER_FRAME: u32 = 186_413;

/// One rendered frame.
#[derive(Debug, Clone, PartialEq)]
pub struct SceneFrame {
    pub width: u32,
    pub height: u32,
    /// Display-space proxy colour, RGBA f32 code values in 0..1 (alpha 1), row-major.
    pub proxy: Vec<[f32; 4]>,
    /// Motion vectors in pixels: where each pixel's content was in the previous frame, minus
    /// where it is now (the DLSS convention; use `MVecScale` = 1).
    pub motion: Vec<[f32; 2]>,
}

/// Triangle wave with period 1 and range 0..1 (0 at integers).
fn tri(s: f64) -> f64 {
    (2.0 * (s - (s + 0.5).floor())).abs()
}

/// The scrolling background texture at content coordinate `(u, v)`.
fn background(u: f64, v: f64, w: f64, h: f64) -> [f64; 3] {
    let stripes = tri(u / 23.0 + v / 61.0);
    let fine = tri(u / 5.5) * tri(v / 7.25);
    let gx = tri(u / (2.0 * w));
    let gy = tri(v / (2.0 * h));
    [
        0.15 + 0.55 * gx + 0.2 * stripes,
        0.2 + 0.45 * gy + 0.15 * fine,
        0.65 - 0.4 * gx * gy + 0.1 * stripes * fine,
    ]
}

/// Disc texture at local (disc-fixed) coordinate `q`.
fn disc_texture(q: [f64; 2], radius: f64) -> [f64; 3] {
    let cell = radius / 4.0;
    let checker = ((q[0] / cell).floor() + (q[1] / cell).floor()).rem_euclid(2.0);
    let ring = tri((q[0] * q[0] + q[1] * q[1]).sqrt() / (radius / 3.0));
    [
        0.85 - 0.5 * checker + 0.1 * ring,
        0.45 + 0.3 * ring,
        0.1 + 0.6 * checker,
    ]
}

/// Disc centre, radius and rotation `(sin, cos)` at frame `t` (any integer, negative too).
fn disc(t: i64, w: f64, h: f64) -> ([f64; 2], f64, [f64; 2]) {
    let radius = 0.3 * w.min(h);
    let cx = 0.3 * w + 0.4 * w * tri(t as f64 / 48.0);
    let cy = 0.5 * h + 0.15 * h * tri(t as f64 / 31.0 + 0.25);
    let k = (t.rem_euclid(1 << 24) as u64 * ROTATION_PER_FRAME as u64) as u32;
    let (s, c) = sincos_turn24(k);
    ([cx, cy], radius, [s as f64, c as f64])
}

/// Render frame `frame` of the scene at `width x height`.
pub fn render(width: u32, height: u32, frame: u32) -> SceneFrame {
    let (w, h) = (width as f64, height as f64);
    let t = frame as i64;
    let (c_now, radius, [s_now, co_now]) = disc(t, w, h);
    let (c_prev, _, [s_prev, co_prev]) = disc(t - 1, w, h);
    let [vx, vy] = BACKGROUND_VELOCITY;
    let n = width as usize * height as usize;
    let mut proxy = Vec::with_capacity(n);
    let mut motion = Vec::with_capacity(n);
    for y in 0..height {
        for x in 0..width {
            let p = [x as f64 + 0.5, y as f64 + 0.5];
            let d = [p[0] - c_now[0], p[1] - c_now[1]];
            let (rgb, mv) = if d[0] * d[0] + d[1] * d[1] <= radius * radius {
                // Local coordinate: rotate back by the current angle.
                let q = [co_now * d[0] + s_now * d[1], -s_now * d[0] + co_now * d[1]];
                // The same material point one frame earlier.
                let prev = [
                    c_prev[0] + co_prev * q[0] - s_prev * q[1],
                    c_prev[1] + s_prev * q[0] + co_prev * q[1],
                ];
                (disc_texture(q, radius), [prev[0] - p[0], prev[1] - p[1]])
            } else {
                let u = p[0] - vx * t as f64;
                let v = p[1] - vy * t as f64;
                (background(u, v, w, h), [-vx, -vy])
            };
            let rgb = rgb.map(|v| v.clamp(0.0, 1.0) as f32);
            proxy.push([rgb[0], rgb[1], rgb[2], 1.0]);
            motion.push([mv[0] as f32, mv[1] as f32]);
        }
    }
    SceneFrame {
        width,
        height,
        proxy,
        motion,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nr::frame::history::reproject;
    use crate::numerics::f16;

    #[test]
    fn scene_is_deterministic_and_moves() {
        let a = render(64, 48, 5);
        let b = render(64, 48, 5);
        assert_eq!(a, b);
        assert_eq!(a.proxy.len(), 64 * 48);
        let c = render(64, 48, 6);
        let changed = a.proxy.iter().zip(&c.proxy).filter(|(p, q)| p != q).count();
        assert!(changed > 64 * 48 / 2, "only {changed} pixels changed");
        for p in &a.proxy {
            assert!(p.iter().all(|v| (0.0..=1.0).contains(v)));
        }
        // Both motion kinds are present: the background's constant vector and the disc's.
        let bg = a.motion.iter().filter(|m| **m == [-1.25, 0.5]).count();
        assert!(bg > 100 && bg < 64 * 48 - 100, "{bg}");
    }

    #[test]
    fn motion_vectors_point_to_the_previous_frame() {
        // Reprojecting the previous frame with the scene's vectors must predict the current
        // frame far better than assuming no motion.
        let (w, h) = (96u32, 80u32);
        let prev = render(w, h, 9);
        let now = render(w, h, 10);
        let hist: Vec<[u16; 4]> = prev
            .proxy
            .iter()
            .map(|p| p.map(f16::from_f32_rne))
            .collect();
        let (mut err_mv, mut err_zero, mut n) = (0f64, 0f64, 0usize);
        for y in 4..h - 4 {
            for x in 4..w - 4 {
                let i = (y * w + x) as usize;
                let mv = now.motion[i];
                let Some(a) = reproject(&hist, w, h, x, y, mv, [1.0, 1.0]) else {
                    continue;
                };
                let b = reproject(&hist, w, h, x, y, [0.0, 0.0], [1.0, 1.0]).unwrap_or([0.0; 4]);
                for ch in 0..3 {
                    err_mv += (a[ch] - now.proxy[i][ch]).abs() as f64;
                    err_zero += (b[ch] - now.proxy[i][ch]).abs() as f64;
                }
                n += 1;
            }
        }
        assert!(n > 5000);
        assert!(
            err_mv * 3.0 < err_zero,
            "with vectors {err_mv:.3}, without {err_zero:.3}"
        );
    }
}
