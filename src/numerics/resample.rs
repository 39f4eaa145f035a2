//! Exactly specified resampling of f16 RGBA images: the portable 5-tap Catmull-Rom.
//!
//! The five taps are the classic bilinear-weight arrangement (left, top, centre, bottom,
//! right; the 2x2 centre and the four edge pairs, no corners). Instead of letting texture
//! hardware blend each pair (which rounds its fractions differently on every GPU), each tap is
//! evaluated in software: the bilinear fraction times the tap weight factors into products of
//! the 1-D Catmull-Rom weights, so no division is needed. The sum is taken relative to the
//! centre texel and normalised by the correctly rounded reciprocal of the weight sum; so a
//! constant image is reproduced exactly. Texel indices clamp to the valid rectangle. Only f32
//! add, sub and mul (never fused) and [`super::portable::rcp`]: the same bits on every Vulkan
//! device (GLSL: `shaders/lib/frame.glsl`, `frame_history.glsl`; docs/frame.md §5).
//!
//! Moved from `nr::frame::history` (which re-exports it) so that Ray Reconstruction's output
//! stage samples its history with the same function.

use super::f16::{self, F16};
use super::portable::rcp;

/// The Catmull-Rom weights `[w0, w1, w2, w3]` of fraction `f` in `[0, 1]`, spelled without
/// fused operations: `w0 = (f + f^3) * -1/2 + f^2`, `w1 = (1.5 f^3 - 2.5 f^2) + 1`,
/// `w3 = (f^3 - f^2) / 2`, `w2 = ((1 - w0) - w1) - w3`.
#[inline]
pub fn catmull_rom_weights(f: f32) -> [f32; 4] {
    let sq = f * f;
    let cu = f * sq;
    let w0 = (f + cu) * -0.5 + sq;
    let w1 = (cu * 1.5 - sq * 2.5) + 1.0;
    let w3 = (cu - sq) * 0.5;
    let w2 = ((1.0 - w0) - w1) - w3;
    [w0, w1, w2, w3]
}

/// Texel index of the first of the two middle taps and the fraction, for a position `p` in
/// pixels: `t = p - 0.5`, `i = floor(t)`, `f = clamp(t - i, 0, 1)`.
#[inline]
fn axis(p: f32) -> (i32, f32) {
    let t = p - 0.5;
    let i = t.floor();
    let f = t - i;
    let f = if f > 0.0 {
        if f < 1.0 {
            f
        } else {
            1.0
        }
    } else {
        0.0
    };
    (i as i32, f)
}

/// Sample `history` (`width x height` RGBA halves) at `pos` (pixels) with the portable 5-tap
/// Catmull-Rom; the result is already normalised. An empty or short image gives zeros.
pub fn catmull_rom(history: &[[F16; 4]], width: u32, height: u32, pos: [f32; 2]) -> [f32; 4] {
    if width == 0 || height == 0 || history.len() < width as usize * height as usize {
        return [0.0; 4];
    }
    let (ix, fx) = axis(pos[0]);
    let (iy, fy) = axis(pos[1]);
    let [w0x, w1x, w2x, w3x] = catmull_rom_weights(fx);
    let [w0y, w1y, w2y, w3y] = catmull_rom_weights(fy);
    let col = |k: i32| (ix + k - 1).clamp(0, width as i32 - 1) as usize;
    let row = |k: i32| (iy + k - 1).clamp(0, height as i32 - 1) as usize;
    let (c0, c1, c2, c3) = (col(0), col(1), col(2), col(3));
    let (r0, r1, r2, r3) = (row(0), row(1), row(2), row(3));
    let w = width as usize;
    let texel = |c: usize, r: usize, ch: usize| f16::to_f32(history[r * w + c][ch]);

    // Tap weights as the 5-tap arrangement defines them; the sum normalises.
    let mx = w1x + w2x;
    let my = w1y + w2y;
    let a = w0x * my; // left
    let b = w0y * mx; // top
    let c = mx * my; // centre
    let d = w3y * mx; // bottom
    let e = w3x * my; // right
    let sum = (((b + a) + c) + d) + e;
    let inv = rcp(sum);

    let mut out = [0f32; 4];
    for (ch, o) in out.iter_mut().enumerate() {
        let centre = texel(c1, r1, ch);
        let dt = |cc: usize, rr: usize| texel(cc, rr, ch) - centre;
        // A vertical middle pair of column cc, and a horizontal middle pair of row rr.
        let pair_y = |cc: usize| w1y * dt(cc, r1) + w2y * dt(cc, r2);
        let pair_x = |rr: usize| w1x * dt(c1, rr) + w2x * dt(c2, rr);
        let top = w0y * pair_x(r0);
        let left = w0x * pair_y(c0);
        let mid = w1y * pair_x(r1) + w2y * pair_x(r2);
        let bottom = w3y * pair_x(r3);
        let right = w3x * pair_y(c3);
        let delta = (((top + left) + mid) + bottom) + right;
        *o = centre + delta * inv;
    }
    out
}
