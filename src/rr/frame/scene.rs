//! A synthetic path-traced-looking scene for tests and tools: a textured, bumpy surface panning
//! 2 px per frame to the right, lit from one side, with per-pixel noise standing in for Monte
//! Carlo noise, and every guide the graph reads. Integer hashing and f32 add/mul only, so it is
//! the same on every platform (the golden digests rely on it).

use crate::rr::geometry::Size;
use crate::rr::graph::guide;

/// One frame of the scene at render size.
pub struct SceneFrame {
    /// `[render][4]` RGBA.
    pub color: Vec<f32>,
    /// `[render][guide::LANES]`.
    pub guides: Vec<f32>,
}

/// Pan speed in render pixels per frame.
pub const PAN: i64 = 2;

/// The jitter of frame `i` of a sequence (`JITTER[i % 8]`, render pixels): the Halton (2, 3)
/// points 1..8 minus 1/2, as f32 literals. The golden digests (`tests/rr_reference.rs`) and the
/// fixtures of `openngx reference --feature rr` use the first three.
pub const JITTER: [[f32; 2]; 8] = [
    [0.0, -0.16666667],
    [-0.25, 0.16666667],
    [0.25, -0.3888889],
    [-0.375, -0.055555556],
    [0.125, 0.2777778],
    [-0.125, -0.2777778],
    [0.375, 0.055555556],
    [-0.4375, 0.3888889],
];

fn hash(mut v: u32) -> u32 {
    v ^= v >> 16;
    v = v.wrapping_mul(0x7FEB_352D);
    v ^= v >> 15;
    v = v.wrapping_mul(0x846C_A68B);
    v ^ (v >> 16)
}

/// A uniform value in [0, 1) from a hash (24 bits, exact in f32).
fn uniform(v: u32) -> f32 {
    (hash(v) >> 8) as f32 * (1.0 / 16_777_216.0)
}

/// A tent wave of period 32 in [0, 1].
fn tent(u: i64) -> f32 {
    let m = u.rem_euclid(32) as f32;
    if m < 16.0 {
        m * (1.0 / 16.0)
    } else {
        (32.0 - m) * (1.0 / 16.0)
    }
}

/// Render frame `frame` of the scene.
pub fn render(size: Size, frame: u32) -> SceneFrame {
    let n = size.area();
    let mut color = vec![0f32; n * 4];
    let mut guides = vec![0f32; n * guide::LANES];
    for y in 0..size.h as i64 {
        for x in 0..size.w as i64 {
            let i = (y * size.w as i64 + x) as usize;
            let wx = x + PAN * frame as i64;
            let tile = ((wx >> 4) + (y >> 4)) & 1 == 0;
            let albedo = if tile {
                [0.8, 0.35, 0.2]
            } else {
                [0.15, 0.45, 0.75]
            };
            let h = tent(wx) * tent(y + 8);
            let nx = tent(wx + 8) - 0.5;
            let ny = tent(y) - 0.5;
            let nz = 0.75f32;
            let light = 0.2 + 0.8 * ((0.6 * nx + 0.3 * ny) + 0.7 * nz);
            let seed = (i as u32).wrapping_mul(0x9E37_79B9) ^ frame.wrapping_mul(0x85EB_CA6B);
            let noise = [0u32, 1, 2].map(|c| 2.0 * uniform(seed ^ (c * 0x27D4_EB2F)));
            let spec = if uniform(seed ^ 0x1234_5678) > 0.97 {
                6.0
            } else {
                0.0
            };
            for c in 0..3 {
                color[i * 4 + c] = (albedo[c] * light) * noise[c] + spec;
            }
            color[i * 4 + 3] = 1.0;
            let g = &mut guides[i * guide::LANES..(i + 1) * guide::LANES];
            g[guide::DIFFUSE_ALBEDO..guide::DIFFUSE_ALBEDO + 3].copy_from_slice(&albedo);
            g[guide::SPECULAR_ALBEDO..guide::SPECULAR_ALBEDO + 3].copy_from_slice(&[0.04; 3]);
            g[guide::NORMALS..guide::NORMALS + 3].copy_from_slice(&[nx, ny, nz]);
            g[guide::ROUGHNESS] = if tile { 0.6 } else { 0.25 };
            g[guide::DEPTH] = 0.5 + 0.25 * h;
            g[guide::MOTION] = PAN as f32;
            g[guide::MOTION + 1] = 0.0;
            g[guide::SPECULAR_HIT] = 1.0 + 4.0 * h;
            g[guide::DIFFUSE_HIT] = 0.5 + 2.0 * h;
            g[guide::DEPTH_OF_FIELD] = if x < size.w as i64 / 4 { 1.0 } else { 0.0 };
        }
    }
    SceneFrame { color, guides }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deterministic_and_moving() {
        let s = Size::new(40, 24);
        let a = render(s, 0);
        let b = render(s, 0);
        assert_eq!(a.color, b.color);
        let c = render(s, 1);
        // The albedo pans by PAN pixels.
        let lane = |f: &SceneFrame, x: usize, y: usize| f.guides[(y * 40 + x) * guide::LANES];
        assert_eq!(lane(&c, 10, 5), lane(&a, 12, 5));
        assert!(a.color.iter().all(|v| v.is_finite() && *v >= 0.0));
    }
}
