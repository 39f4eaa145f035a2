//! The output stage (openngx's own design; spec rr-network §8 says only that NVIDIA's
//! `hkpn_output_kernel_transformer` turns dec0's outputs and the history into the RGBA16F output
//! and the f32 `DLSSD.OutputAlpha`). Per output pixel `(X, Y)`, in f32 arithmetic that is never
//! fused (`docs/frame.md` §2), with `numerics::portable::rcp` and the RR tables:
//!
//! 1. **Where it lies in the render image.** `t = ((X + 0.5) · render/output - 0.5) - jitter`
//!    per axis, in render sample indices; `i = floor(t)`, `n = clamp(floor(t + 0.5))` the nearest
//!    render pixel, whose dec0 outputs steer this pixel.
//! 2. **Spatial kernel** from dec0's +144 `(k0, k1, k2, k3)` in [-1, 1] at `n`:
//!    `A = 0.75 + 0.5·k0`, `B = 0.75 + 0.5·k1`, `C = (0.9·k2)·min(A, B)` (so the quadratic form
//!    is positive definite); over the 4x4 render samples `i-1..i+2` (clamped into the render
//!    image) with offsets `d = tap - t`, `q = (A·dx² + B·dy²) + C·dx·dy`,
//!    `w = max(1 - q, 0)²`. The spatial colour is `Σ w·c / Σ w` of dec0's +112 (the nearest
//!    tap alone if every weight is 0), summed in tap order (row-major); the alpha likewise over
//!    the input colour's alpha, clamped to [0, 1].
//! 3. **History.** Where history is valid: the previous output at
//!    `(X + 0.5, Y + 0.5) + mv(n) · MV.Scale · output/render`, on screen, through the 5-tap
//!    Catmull-Rom (`numerics::resample`), times E; clamped per channel to the box of the 3x3
//!    render samples of +112 around `n`, widened about its centre by
//!    `g = 1 + 2·sigmoid(code1)` (dec0's +48 code 1 decoded). The blend weight is
//!    `α = sigmoid(code0)` (+48 code 0; k3 is unused: a gate's raw material the network can
//!    learn to ignore). `o = s + α·(h - s)`; without usable history `o = s`.
//! 4. **Output** `sat(o · 1/E)` as RGB with A = 1; the next frame's history is this output.

use crate::numerics::f16::{self, F16};
use crate::numerics::portable::{clamp01, ftz, rcp};
use crate::numerics::resample::catmull_rom;
use crate::numerics::rr::{gates, q8};
use crate::numerics::E4;
use crate::rr::geometry::Size;

use super::input::{on_screen, ratio, sat};
use super::FrameConstants;

/// What the output stage reads, as images of its grids.
pub struct OutputInputs<'a> {
    /// dec0's +112 over level 0 (`level0` wide), RGB.
    pub image: &'a [[F16; 4]],
    /// dec0's +48 (8 codes per token).
    pub codes: &'a [[E4; 8]],
    /// dec0's +144 (4 f32 per token).
    pub kernel: &'a [[f32; 4]],
    /// The level-0 grid size (`image`, `codes`, `kernel` rows).
    pub level0: Size,
    /// The previous output (output size).
    pub history: &'a [[F16; 4]],
    /// Motion vectors per render pixel (before MV.Scale).
    pub motion: &'a [[f32; 2]],
    /// The input colour's alpha per render pixel.
    pub alpha: &'a [f32],
    pub render: Size,
    pub output: Size,
    /// E and 1/E.
    pub exposure: [F16; 2],
}

/// Render sample index coordinate of output pixel coordinate `x` on one axis.
fn render_coord(x: u32, r: f32, jitter: f32) -> f32 {
    ((x as f32 + 0.5) * r - 0.5) - jitter
}

fn clampi(v: i64, n: u32) -> usize {
    v.clamp(0, n as i64 - 1) as usize
}

/// One output pixel: RGBA halves and the alpha.
pub fn pixel(c: &FrameConstants, inp: &OutputInputs, x: u32, y: u32) -> ([F16; 4], f32) {
    let (rw, rh) = (inp.render.w, inp.render.h);
    let tx = render_coord(x, ratio(rw, inp.output.w), c.jitter[0]);
    let ty = render_coord(y, ratio(rh, inp.output.h), c.jitter[1]);
    let (ix, iy) = (tx.floor(), ty.floor());
    let nx = clampi((tx + 0.5).floor() as i64, rw);
    let ny = clampi((ty + 0.5).floor() as i64, rh);
    let at = |px: usize, py: usize| py * inp.level0.w as usize + px;
    let n = at(nx, ny);

    // Spatial kernel.
    let k = inp.kernel[n].map(ftz);
    let a = 0.75 + 0.5 * k[0];
    let b = 0.75 + 0.5 * k[1];
    let cxy = (0.9 * k[2]) * if a < b { a } else { b };
    let mut sum = [0f32; 3];
    let mut asum = 0f32;
    let mut wsum = 0f32;
    for j in 0..16 {
        let ox = (j % 4) as f32 - 1.0;
        let oy = (j / 4) as f32 - 1.0;
        let px = clampi((ix + ox) as i64, rw);
        let py = clampi((iy + oy) as i64, rh);
        let dx = (ix + ox) - tx;
        let dy = (iy + oy) - ty;
        let q = (a * (dx * dx) + b * (dy * dy)) + cxy * (dx * dy);
        let one_minus = 1.0 - q;
        let w = if one_minus > 0.0 {
            one_minus * one_minus
        } else {
            0.0
        };
        let t = inp.image[at(px, py)];
        for (ch, s) in sum.iter_mut().enumerate() {
            *s += w * f16::to_f32(t[ch]);
        }
        asum += w * ftz(inp.alpha[py * rw as usize + px]);
        wsum += w;
    }
    let (spatial, alpha) = if wsum > 0.0 {
        let inv = rcp(wsum);
        (sum.map(|s| s * inv), clamp01(asum * inv))
    } else {
        let t = inp.image[n];
        (
            [0, 1, 2].map(|ch| f16::to_f32(t[ch])),
            clamp01(ftz(inp.alpha[ny * rw as usize + nx])),
        )
    };

    // History, clamped to the neighbourhood box, and the blend.
    let mut o = spatial;
    if c.history_valid {
        let mv = inp.motion[ny * rw as usize + nx];
        let p = [
            (x as f32 + 0.5) + (ftz(mv[0]) * c.mv_scale[0]) * ratio(inp.output.w, rw),
            (y as f32 + 0.5) + (ftz(mv[1]) * c.mv_scale[1]) * ratio(inp.output.h, rh),
        ];
        if on_screen(p, inp.output) {
            let h = catmull_rom(inp.history, inp.output.w, inp.output.h, p);
            let e = f16::to_f32(inp.exposure[0]);
            let codes = inp.codes[n];
            let alpha_t = f16::to_f32(gates::sigmoid(q8::to_f16(codes[0])));
            let widen = 1.0 + 2.0 * f16::to_f32(gates::sigmoid(q8::to_f16(codes[1])));
            for ch in 0..3 {
                let (mut lo, mut hi) = (f32::INFINITY, f32::NEG_INFINITY);
                for j in 0..9 {
                    let px = clampi(nx as i64 + (j % 3) as i64 - 1, rw);
                    let py = clampi(ny as i64 + (j / 3) as i64 - 1, rh);
                    let v = f16::to_f32(inp.image[at(px, py)][ch]);
                    lo = if v < lo { v } else { lo };
                    hi = if v > hi { v } else { hi };
                }
                let centre = (lo + hi) * 0.5;
                let half = ((hi - lo) * 0.5) * widen;
                let (lo, hi) = (centre - half, centre + half);
                let hv = h[ch] * e;
                let hv = if hv < lo {
                    lo
                } else if hv > hi {
                    hi
                } else {
                    hv
                };
                o[ch] = spatial[ch] + alpha_t * (hv - spatial[ch]);
            }
        }
    }
    let inv_e = f16::to_f32(inp.exposure[1]);
    (
        [
            sat(o[0] * inv_e),
            sat(o[1] * inv_e),
            sat(o[2] * inv_e),
            f16::ONE,
        ],
        alpha,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flat(v: f32, size: Size) -> Vec<[F16; 4]> {
        let h = f16::from_f32_rne(v);
        vec![[h, h, h, 0]; size.area()]
    }

    #[test]
    fn a_constant_image_comes_back_at_any_scale() {
        let render = Size::new(8, 6);
        let level0 = Size::new(32, 32);
        let output = Size::new(20, 13);
        let image = flat(0.75, level0);
        let codes = vec![[0u8; 8]; level0.area()];
        let kernel = vec![[0.3f32, -0.2, 0.5, 0.0]; level0.area()];
        let history = flat(9.0, output);
        let motion = vec![[0f32; 2]; render.area()];
        let alpha = vec![1f32; render.area()];
        let inp = OutputInputs {
            image: &image,
            codes: &codes,
            kernel: &kernel,
            level0,
            history: &history,
            motion: &motion,
            alpha: &alpha,
            render,
            output,
            exposure: [0x4000, 0x3800], // E = 2
        };
        let c = FrameConstants {
            jitter: [0.3, -0.1],
            ..FrameConstants::default()
        };
        for y in 0..output.h {
            for x in 0..output.w {
                let (o, a) = pixel(&c, &inp, x, y);
                // 0.75 / E = 0.375 within an f32 rounding or two.
                assert!(
                    (f16::to_f32(o[0]) - 0.375).abs() < 1e-3,
                    "({x},{y}) {}",
                    f16::to_f32(o[0])
                );
                assert_eq!(o[3], f16::ONE);
                assert!((a - 1.0).abs() < 1e-6);
            }
        }
        // With history: a bright history (9 · E = 18) is clamped to the box of a flat
        // neighbourhood, which has no width: the output stays 0.375.
        let c = FrameConstants {
            history_valid: true,
            ..c
        };
        let (o, _) = pixel(&c, &inp, 5, 5);
        assert!((f16::to_f32(o[0]) - 0.375).abs() < 1e-3);
    }

    #[test]
    fn history_blends_inside_the_box() {
        let render = Size::new(4, 4);
        let level0 = Size::new(32, 32);
        let output = Size::new(4, 4);
        // A checkerboard gives a box [0, 1]; the history 0.5 (E = 1) lies inside it.
        let image: Vec<[F16; 4]> = (0..level0.area())
            .map(|i| {
                let v = if (i % 32 + i / 32) % 2 == 0 {
                    0x3C00
                } else {
                    0
                };
                [v, v, v, 0]
            })
            .collect();
        let mut codes = vec![[0u8; 8]; level0.area()];
        let kernel = vec![[1f32, 1.0, 0.0, 0.0]; level0.area()];
        let history = flat(0.5, output);
        let motion = vec![[0f32; 2]; render.area()];
        let alpha = vec![0.5f32; render.area()];
        codes[32 + 1][0] = 0x7E; // alpha code 448: sigmoid = 1, take the history
        let inp = OutputInputs {
            image: &image,
            codes: &codes,
            kernel: &kernel,
            level0,
            history: &history,
            motion: &motion,
            alpha: &alpha,
            render,
            output,
            exposure: [f16::ONE, f16::ONE],
        };
        let c = FrameConstants {
            history_valid: true,
            ..FrameConstants::default()
        };
        let (o, a) = pixel(&c, &inp, 1, 1);
        assert_eq!(o[0], 0x3800);
        assert!((a - 0.5).abs() < 1e-6);
        // Off screen motion: no history, the spatial value.
        let far = vec![[100f32, 0.0]; render.area()];
        let inp2 = OutputInputs {
            motion: &far,
            ..inp
        };
        let (o2, _) = pixel(&c, &inp2, 1, 1);
        let (o3, _) = pixel(&FrameConstants::default(), &inp2, 1, 1);
        assert_eq!(o2, o3);
        assert_ne!(o2[0], 0x3800);
    }
}
