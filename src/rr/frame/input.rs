//! The exposure stage, the history at render pixels and enc0's 32 input features (openngx's
//! own; `docs/rr.md`, "Frame stages").
//!
//! **Exposure.** With an exposure value X from the caller (the exposure texture),
//! `E = f16(f16(X · scale) · recip(pre-exposure))`: the colour divided by its pre-exposure times
//! the application's exposure. Without one (auto-exposure), modelled on the luma / reduce-sum /
//! auto-exposure helpers of spec §9 [X]: per render pixel `l = clamp(luma(c), 0, 10000)` in f16
//! (`luma = 0.25R + 0.5G + 0.25B`), `q = floor(l · 1024)`; `S = Σ q` (exact, so any reduction
//! order gives it); `E = RN_f16(241·N / max(S, 5N)) · scale`, i.e. 0.2353515625 / the mean luma,
//! the mean floored at 5/1024 (N = render pixels). The pre-exposure cancels out of an automatic
//! exposure. A result that is not a positive finite half becomes 1. The network sees colour
//! times E; the output is divided by E again.
//!
//! **Features** of level-0 token (x, y), read at render pixel `(mirror(x), mirror(y))`
//! (halves, `sat` = f32 -> f16 with NaN -> 0 and saturation at ±65504;
//! `comp(v) = v / (1 + |v|)`; `cn = sat(colour) · E`; every slot published as `q8`):
//!
//! | slots | feature |
//! | --- | --- |
//! | 0-2 | `comp(cn)` |
//! | 3 | `comp(luma(cn))` |
//! | 4-6 | diffuse albedo |
//! | 7-9 | specular albedo |
//! | 10-12 | normal |
//! | 13 | roughness |
//! | 14 | depth |
//! | 15-16 | `comp(sat(mv · MV.Scale) · 1/8)` (render pixels) |
//! | 17, 18 | `comp` of the specular and diffuse hit distances |
//! | 19-21 | `comp` of the reprojected history times E (0 where there is none) |
//! | 22 | 1 where that history is usable, else 0 |
//! | 23-24 | the jitter |
//! | 25 | the depth-of-field guide (preset E; 0 for preset D) |
//! | 26-30 | 0 |
//! | 31 | 1 |

use crate::numerics::f16::{self, F16};
use crate::numerics::portable::{ftz, rcp};
use crate::numerics::recip;
use crate::numerics::resample::catmull_rom;
use crate::numerics::rr::q8;
use crate::numerics::E4;
use crate::rr::geometry::{mirror, Size};
use crate::rr::graph::guide;

use super::FrameConstants;

/// f16 0.25, 0.5 and 1/8 as bits.
const QUARTER: F16 = 0x3400;
const HALF: F16 = 0x3800;
const EIGHTH: F16 = 0x3000;
/// The luma clamp 10000.
const LUMA_MAX: F16 = 0x70E2;

/// f32 -> f16 for caller data: NaN -> +0, beyond ±65504 (and ±inf) -> ±65504, else RNE.
pub fn sat(v: f32) -> F16 {
    if v.is_nan() {
        return 0;
    }
    let h = f16::from_f32_rne(ftz(v));
    if f16::is_inf(h) {
        h - 1 // ±inf -> ±65504 (0x7BFF / 0xFBFF)
    } else {
        h
    }
}

/// `v / (1 + |v|)` in f16: `f16(v · recip(f16(1 + |v|)))`, in (-1, 1) for finite v.
pub fn comp(v: F16) -> F16 {
    f16::mul(v, recip::recip(f16::add(f16::ONE, v & 0x7FFF)))
}

/// `0.25R + 0.5G + 0.25B` in f16: `f16(f16(f16(0.25R) + f16(0.5G)) + f16(0.25B))`.
pub fn luma(r: F16, g: F16, b: F16) -> F16 {
    f16::add(
        f16::add(f16::mul(r, QUARTER), f16::mul(g, HALF)),
        f16::mul(b, QUARTER),
    )
}

/// One render pixel's auto-exposure term `floor(clamp(luma, 0, 10000) · 1024)`.
pub fn luma_units(rgba: [f32; 4]) -> u64 {
    let l = luma(sat(rgba[0]), sat(rgba[1]), sat(rgba[2]));
    if l & 0x8000 != 0 || f16::is_nan(l) {
        return 0;
    }
    let l = if f16::to_f32(l) > f16::to_f32(LUMA_MAX) {
        LUMA_MAX
    } else {
        l
    };
    // l · 1024 is exact in f64, its floor an integer below 2^24.
    (f16::to_f32(l) as f64 * 1024.0).floor() as u64
}

/// The automatic exposure from the exact luma sum `s` over `n` pixels: `RN_f16(241·n /
/// max(s, 5n))`.
pub fn auto_exposure(s: u64, n: u64) -> F16 {
    let d = s.max(5 * n).max(1) as u128;
    let num = 241u128 * n as u128;
    // RN_f16(num / d): a quotient with 40 extra bits and a sticky remainder, rounded once.
    let q = (num << 40) / d;
    let sticky = u128::from((num << 40) % d != 0);
    f16::round_fixed_rne(((q << 1) | sticky) as i128, -41)
}

/// The exposure `E` and `1/E` (halves) from the auto-exposure sum and the constants.
pub fn exposure(c: &FrameConstants, luma_sum: u64, pixels: u64) -> [F16; 2] {
    let e = match c.exposure_value {
        Some(x) => f16::mul(
            f16::mul(sat(x), sat(c.exposure_scale)),
            recip::recip(sat(c.pre_exposure)),
        ),
        None => f16::mul(auto_exposure(luma_sum, pixels), sat(c.exposure_scale)),
    };
    let e = if e & 0x8000 != 0 || f16::is_zero(e) || f16::is_nonfinite(e) {
        f16::ONE
    } else {
        e
    };
    [e, recip::recip(e)]
}

/// `ow / rw` (or any `a / b` of sizes) as the f32 `a · rcp(b)`.
pub fn ratio(a: u32, b: u32) -> f32 {
    a as f32 * rcp(b as f32)
}

/// Where render pixel `(x, y)`'s sample was in the previous output, in output pixels:
/// `((x + 0.5 + jitter) + mv · MV.Scale) · (output / render)` per axis.
pub fn history_position(
    c: &FrameConstants,
    x: u32,
    y: u32,
    mv: [f32; 2],
    render: Size,
    output: Size,
) -> [f32; 2] {
    let rx = ratio(output.w, render.w);
    let ry = ratio(output.h, render.h);
    [
        (((x as f32 + 0.5) + c.jitter[0]) + ftz(mv[0]) * c.mv_scale[0]) * rx,
        (((y as f32 + 0.5) + c.jitter[1]) + ftz(mv[1]) * c.mv_scale[1]) * ry,
    ]
}

/// True when `p` lies on an image of `size` (`0 <= p <= size`; NaN is off).
pub fn on_screen(p: [f32; 2], size: Size) -> bool {
    p[0] >= 0.0 && p[0] <= size.w as f32 && p[1] >= 0.0 && p[1] <= size.h as f32
}

/// The Reproject op at render pixel `(x, y)`: RGB = `sat(history sample · E)`, A = 1, or all
/// zero when there is no usable history.
#[allow(clippy::too_many_arguments)]
pub fn reproject_pixel(
    c: &FrameConstants,
    history: &[[F16; 4]],
    output: Size,
    render: Size,
    x: u32,
    y: u32,
    mv: [f32; 2],
    e: F16,
) -> [F16; 4] {
    if !c.history_valid {
        return [0; 4];
    }
    let p = history_position(c, x, y, mv, render, output);
    if !on_screen(p, output) {
        return [0; 4];
    }
    let s = catmull_rom(history, output.w, output.h, p);
    let ef = f16::to_f32(e);
    [sat(s[0] * ef), sat(s[1] * ef), sat(s[2] * ef), f16::ONE]
}

/// The colour the tails filter at level-0 token `(x, y)`: `sat(colour) · E`, A = 0.
pub fn colour_token(color: &[[f32; 4]], render: Size, x: u32, y: u32, e: F16) -> [F16; 4] {
    let i = source(render, x, y);
    let c = color[i];
    [
        f16::mul(sat(c[0]), e),
        f16::mul(sat(c[1]), e),
        f16::mul(sat(c[2]), e),
        0,
    ]
}

/// The render pixel a level-0 token reads (mirrored in the padding).
pub fn source(render: Size, x: u32, y: u32) -> usize {
    let sx = mirror(x as i64, render.w);
    let sy = mirror(y as i64, render.h);
    sy as usize * render.w as usize + sx as usize
}

/// Inputs of one token's features, all at its source render pixel.
pub struct TokenInputs<'a> {
    /// `[4]` colour (f32).
    pub color: [f32; 4],
    /// `[guide::LANES]` guides (f32).
    pub guides: &'a [f32],
    /// The Reproject op's output there.
    pub history: [F16; 4],
}

/// The 32 features of a token (`q8` codes), see the module doc.
pub fn features(c: &FrameConstants, t: &TokenInputs, e: F16, depth_of_field: bool) -> [E4; 32] {
    let g = |i: usize| sat(t.guides[i]);
    let cn = [0, 1, 2].map(|i| f16::mul(sat(t.color[i]), e));
    let mut f = [0u16; 32];
    for i in 0..3 {
        f[i] = comp(cn[i]);
        f[4 + i] = g(guide::DIFFUSE_ALBEDO + i);
        f[7 + i] = g(guide::SPECULAR_ALBEDO + i);
        f[10 + i] = g(guide::NORMALS + i);
        f[19 + i] = comp(t.history[i]);
    }
    f[3] = comp(luma(cn[0], cn[1], cn[2]));
    f[13] = g(guide::ROUGHNESS);
    f[14] = g(guide::DEPTH);
    for a in 0..2 {
        let mv = sat(ftz(t.guides[guide::MOTION + a]) * c.mv_scale[a]);
        f[15 + a] = comp(f16::mul(mv, EIGHTH));
        f[23 + a] = sat(c.jitter[a]);
    }
    f[17] = comp(g(guide::SPECULAR_HIT));
    f[18] = comp(g(guide::DIFFUSE_HIT));
    f[22] = t.history[3];
    if depth_of_field {
        f[25] = g(guide::DEPTH_OF_FIELD);
    }
    f[31] = f16::ONE;
    f.map(q8::from_f16)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn saturation_and_compression() {
        assert_eq!(sat(f32::NAN), 0);
        assert_eq!(sat(f32::INFINITY), 0x7BFF);
        assert_eq!(sat(f32::NEG_INFINITY), 0xFBFF);
        assert_eq!(sat(1e9), 0x7BFF);
        assert_eq!(sat(65519.0), 0x7BFF);
        assert_eq!(sat(1.0), f16::ONE);
        assert_eq!(comp(f16::ONE), HALF);
        // 65504 · recip(65504): the reciprocal is the subnormal 2^-16, so 0.99951.
        assert_eq!(comp(0x7BFF), 0x3BFF);
        assert_eq!(comp(0xBC00), 0xB800);
        assert_eq!(luma(f16::ONE, f16::ONE, f16::ONE), f16::ONE);
        assert_eq!(f16::to_f32(LUMA_MAX), 10000.0);
    }

    #[test]
    fn exposure_rules() {
        // Auto: mean luma 0.5 over 4 pixels: S = 4·512, E = 241·4 / 2048 = 0.470703125.
        assert_eq!(luma_units([0.5, 0.5, 0.5, 1.0]), 512);
        assert_eq!(luma_units([-1.0, -1.0, -1.0, 1.0]), 0);
        assert_eq!(luma_units([1e6, 1e6, 1e6, 1.0]), 10000 * 1024);
        let c = FrameConstants::default();
        let [e, inv] = exposure(&c, 4 * 512, 4);
        assert_eq!(f16::to_f32(e) as f64, 0.470703125);
        assert_eq!(inv, recip::recip(e));
        // A black image floors the mean at 5/1024: E = 241/5.
        assert_eq!(exposure(&c, 0, 100)[0], f16::from_f32_rne(48.2));
        // A caller's exposure value: X · scale / pre-exposure.
        let c = FrameConstants {
            exposure_value: Some(2.0),
            exposure_scale: 1.5,
            pre_exposure: 4.0,
            ..c
        };
        assert_eq!(f16::to_f32(exposure(&c, 0, 1)[0]), 0.75);
        // Nonsense gives 1.
        let c = FrameConstants {
            exposure_value: Some(-3.0),
            ..c
        };
        assert_eq!(exposure(&c, 0, 1)[0], f16::ONE);
    }

    #[test]
    fn features_slots() {
        let c = FrameConstants {
            jitter: [0.25, -0.25],
            ..FrameConstants::default()
        };
        let mut guides = [0f32; guide::LANES];
        guides[guide::ROUGHNESS] = 0.5;
        guides[guide::MOTION] = 8.0;
        guides[guide::DEPTH_OF_FIELD] = 1.0;
        let t = TokenInputs {
            color: [1.0, 3.0, 0.0, 1.0],
            guides: &guides,
            history: [0; 4],
        };
        let f = features(&c, &t, f16::ONE, true);
        assert_eq!(f[0], q8::from_f16(HALF));
        assert_eq!(f[1], q8::from_f16(0x3A00)); // 3/4
        assert_eq!(f[13], q8::from_f16(HALF));
        assert_eq!(f[15], q8::from_f16(HALF)); // comp(8/8)
        assert_eq!(f[23], q8::from_f16(QUARTER));
        assert_eq!(f[24], q8::from_f16(0xB400));
        assert_eq!(f[25], q8::from_f16(f16::ONE));
        assert_eq!(f[31], q8::from_f16(f16::ONE));
        assert_eq!(features(&c, &t, f16::ONE, false)[25], 0);
        assert!(f[26..31].iter().all(|&v| v == 0));
    }

    #[test]
    fn padding_mirrors_the_render_image() {
        let r = Size::new(5, 3);
        assert_eq!(source(r, 4, 2), 14);
        assert_eq!(source(r, 5, 2), 13); // x 5 -> 3
        assert_eq!(source(r, 6, 3), 7); // x 6 -> 2, y 3 -> 1
    }
}
