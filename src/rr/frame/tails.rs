//! The tails' per-pixel kernel prediction (spec rr-network §4.3, §4.4 for the outline; the
//! formulas are openngx's own where the spec gives only the instruction mix).
//!
//! Both tails take the softmax of logits 0..9 ([`gates::tail_softmax`], real maximum) as ten
//! weights and `s = sigmoid(logit 10)` as a gate. Nine weights filter a 3x3 neighbourhood (taps
//! in row-major order, `dy` outer), the tenth weighs the centre tap once more (the spec's "one
//! more value folded in with a scalar FMA"; which value it is is not documented), per channel
//! with single-rounding f16 FMAs from +0 in tap order. Surfaces are RGBA halves with A = 0.
//!
//! * **Encoder tail** over the level's colour image (enc0: the exposure-normalised input colour;
//!   enc1..enc5: the previous encoder's +128), taps clamped into the level: `f` filtered;
//!   `out120 = f16(s·f)` (the detail kept at this level), `out112 = f16(f - out120)` (the part
//!   passed down), `out128` (next level) `= f16(0.25 · ((a + b) + (c + d)))` over the 2x2 quad
//!   of `out112` (row pairs first, the spec's shuffle deltas 1 then 8). enc5, which has no
//!   +120/+128, writes `out112 = f`.
//! * **Decoder tail**: the nine taps are bilinear samples of the coarser image (the next
//!   coarser decoder's +112; enc5's for dec4) at the fine pixel's position `x/2 - 1/4 + dx`
//!   (so each is a {1/4, 3/4} blend of two texels per axis, texel indices clamped into the
//!   coarser level), giving `u`; with the same level's encoder surfaces `a` (+112, "+96") and
//!   `d` (+120, "+104"): `out = f16(fma(s, f16(u - a), a) + d)`, the `+ d` skipped for a NaN
//!   channel of d (the spec's NaN guard). So the gate chooses between the coarser levels'
//!   reconstruction and this level's own pass-down band, and the detail band is added back.
//!   The bilinear sample is `fma(wy1, r1, f16(wy0·r0))` of rows `r = fma(wx1, t1, f16(wx0·t0))`.

use crate::numerics::f16::{self, F16};
use crate::numerics::rr::gates::{self, TAIL_TAPS};
use crate::rr::geometry::Size;

/// f16 0.25 and 0.75.
const QUARTER: F16 = 0x3400;
const THREE_QUARTERS: F16 = 0x3A00;

/// The ten weights and the gate of a pixel's logits (at least 11 values).
pub fn weights(logits: &[F16]) -> ([F16; TAIL_TAPS], F16) {
    let mut w = [0u16; TAIL_TAPS];
    gates::tail_softmax(&logits[..TAIL_TAPS], &mut w);
    (w, gates::sigmoid(logits[TAIL_TAPS]))
}

/// `Σ w_k · tap_k` over the nine taps, then `+ w_9 · tap_4`, per RGB channel (f16 FMAs from +0).
pub fn filter(w: &[F16; TAIL_TAPS], taps: &[[F16; 4]; 9]) -> [F16; 3] {
    let mut f = [0u16; 3];
    for (ch, fc) in f.iter_mut().enumerate() {
        let mut acc = f16::POS_ZERO;
        for (wk, tap) in w.iter().zip(taps) {
            acc = f16::fma(*wk, tap[ch], acc);
        }
        *fc = f16::fma(w[9], taps[4][ch], acc);
    }
    f
}

/// Clamp a coordinate into `0..n`.
fn clamp(v: i64, n: u32) -> usize {
    v.clamp(0, n as i64 - 1) as usize
}

/// The nine integer taps of `image` (`size`) around `(x, y)`, clamped.
pub fn taps(image: &[[F16; 4]], size: Size, x: u32, y: u32) -> [[F16; 4]; 9] {
    std::array::from_fn(|k| {
        let tx = clamp(x as i64 + (k % 3) as i64 - 1, size.w);
        let ty = clamp(y as i64 + (k / 3) as i64 - 1, size.h);
        image[ty * size.w as usize + tx]
    })
}

/// An encoder tail's `(out112, out120)` at one pixel; enc5 (`split` false) gives `(f, 0)`.
pub fn encoder_pixel(logits: &[F16], taps: &[[F16; 4]; 9], split: bool) -> ([F16; 4], [F16; 4]) {
    let (w, s) = weights(logits);
    let f = filter(&w, taps);
    if !split {
        return ([f[0], f[1], f[2], 0], [0; 4]);
    }
    let keep = f.map(|v| f16::mul(s, v));
    let pass = [0, 1, 2].map(|i| f16::add(f[i], f16::neg(keep[i])));
    (
        [pass[0], pass[1], pass[2], 0],
        [keep[0], keep[1], keep[2], 0],
    )
}

/// The +128 value of a 2x2 quad of +112 values `[(0,0), (1,0), (0,1), (1,1)]`.
pub fn quad_average(q: [[F16; 4]; 4]) -> [F16; 4] {
    let mut o = [0u16; 4];
    for (ch, oc) in o.iter_mut().enumerate().take(3) {
        let top = f16::add(q[0][ch], q[1][ch]);
        let bottom = f16::add(q[2][ch], q[3][ch]);
        *oc = f16::mul(f16::add(top, bottom), QUARTER);
    }
    o
}

/// The two texel indices and weights of fine coordinate `x` on the coarser axis, shifted by
/// `d` coarse texels: even x samples (i-1, i) with (1/4, 3/4), odd x (i, i+1) with (3/4, 1/4).
fn bilinear_axis(x: u32, d: i64, n: u32) -> ([usize; 2], [F16; 2]) {
    let i = (x >> 1) as i64 + d;
    if x & 1 == 0 {
        ([clamp(i - 1, n), clamp(i, n)], [QUARTER, THREE_QUARTERS])
    } else {
        ([clamp(i, n), clamp(i + 1, n)], [THREE_QUARTERS, QUARTER])
    }
}

/// The nine bilinear taps of the coarser `image` (`size`) for fine pixel `(x, y)`.
pub fn bilinear_taps(image: &[[F16; 4]], size: Size, x: u32, y: u32) -> [[F16; 4]; 9] {
    std::array::from_fn(|k| {
        let (cx, wx) = bilinear_axis(x, (k % 3) as i64 - 1, size.w);
        let (cy, wy) = bilinear_axis(y, (k / 3) as i64 - 1, size.h);
        let t = |xx: usize, yy: usize| image[cy[yy] * size.w as usize + cx[xx]];
        let mut o = [0u16; 4];
        for (ch, oc) in o.iter_mut().enumerate().take(3) {
            let row = |yy: usize| f16::fma(wx[1], t(1, yy)[ch], f16::mul(wx[0], t(0, yy)[ch]));
            *oc = f16::fma(wy[1], row(1), f16::mul(wy[0], row(0)));
        }
        o
    })
}

/// A decoder tail's output at one pixel from its logits, the coarser image's bilinear taps and
/// the same level's encoder surfaces `low` (+112) and `detail` (+120).
pub fn decoder_pixel(
    logits: &[F16],
    taps: &[[F16; 4]; 9],
    low: [F16; 4],
    detail: [F16; 4],
) -> [F16; 4] {
    let (w, s) = weights(logits);
    let u = filter(&w, taps);
    let mut o = [0u16; 4];
    for ch in 0..3 {
        let m = f16::fma(s, f16::add(u[ch], f16::neg(low[ch])), low[ch]);
        o[ch] = if f16::is_nan(detail[ch]) {
            m
        } else {
            f16::add(m, detail[ch])
        };
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(v: f32) -> F16 {
        f16::from_f32_rne(v)
    }

    #[test]
    fn uniform_weights_on_a_constant_image_reproduce_it() {
        // Equal logits: ten weights of 1/10 (rounded); the filter of a constant is close to it.
        let logits = [0u16; 16];
        let (w, s) = weights(&logits);
        assert!(w.iter().all(|&x| x == w[0]));
        assert_eq!(s, 0x3800);
        let taps = [[h(2.0), h(2.0), h(2.0), 0]; 9];
        let f = filter(&w, &taps);
        assert!(
            (f16::to_f32(f[0]) - 2.0).abs() < 0.01,
            "{}",
            f16::to_f32(f[0])
        );
        let (p, k) = encoder_pixel(&logits, &taps, true);
        // s = 1/2: the two bands are each half.
        assert_eq!(k[0], f16::mul(0x3800, f[0]));
        assert_eq!(f16::add(p[0], k[0]), f[0]);
        assert_eq!(p[3], 0);
        let (p5, z) = encoder_pixel(&logits, &taps, false);
        assert_eq!(p5[..3], f);
        assert_eq!(z, [0; 4]);
    }

    #[test]
    fn a_peaked_softmax_selects_one_tap() {
        let mut logits = [0u16; 16];
        logits[2] = h(30.0); // tap (dx +1, dy -1)
        let (w, _) = weights(&logits);
        assert_eq!(w[2], f16::ONE);
        let taps: [[F16; 4]; 9] = std::array::from_fn(|k| [h(k as f32), 0, 0, 0]);
        assert_eq!(filter(&w, &taps)[0], h(2.0));
    }

    #[test]
    fn quads_and_bilinear_taps() {
        let q = [
            [h(1.0), 0, 0, 0],
            [h(2.0), 0, 0, 0],
            [h(3.0), 0, 0, 0],
            [h(6.0), 0, 0, 0],
        ];
        assert_eq!(quad_average(q)[0], h(3.0));
        // A 2x1 coarse image [0, 4]: fine x = 1 samples (0, 1) with (3/4, 1/4) = 1 at dx 0.
        let img = [[h(0.0), 0, 0, 0], [h(4.0), 0, 0, 0]];
        let t = bilinear_taps(&img, Size::new(2, 1), 1, 0);
        assert_eq!(t[4][0], h(1.0));
        // x = 2 (even): (i-1, i) = (0, 1) with (1/4, 3/4) = 3.
        assert_eq!(bilinear_taps(&img, Size::new(2, 1), 2, 0)[4][0], h(3.0));
        // Clamped at the edges: x = 0 reads (0, 0) at dx 0.
        assert_eq!(bilinear_taps(&img, Size::new(2, 1), 0, 0)[4][0], 0);
    }

    #[test]
    fn decoder_blend_and_nan_guard() {
        let mut logits = [0u16; 16];
        logits[10] = h(-20.0); // gate ~0: keep the encoder's low band
        let taps = [[h(5.0), h(5.0), h(5.0), 0]; 9];
        let low = [h(1.0), h(1.0), h(1.0), 0];
        let det = [h(0.5), f16::QNAN, h(0.25), 0];
        let o = decoder_pixel(&logits, &taps, low, det);
        assert_eq!(o[0], h(1.5));
        assert_eq!(o[1], h(1.0));
        assert_eq!(o[2], h(1.25));
        logits[10] = h(20.0); // gate 1: the coarser reconstruction
        let o = decoder_pixel(&logits, &taps, low, [0; 4]);
        assert!((f16::to_f32(o[0]) - 5.0).abs() < 0.05);
    }
}
