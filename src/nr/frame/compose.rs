//! `compose`: the frame's output and next history from the proxy, the network head and the
//! reprojected history (spec §1.9).
//!
//! Per valid pixel: `neural = clamp(proxy + rgb/4)` in the f32 spelling of NGX (whose two FMAs
//! have exact products, so separate multiply and add give the same bits), the temporal blend
//! towards the history with `weight = clamp(sigmoid(logit) * blendScale)`, the next history
//! (alpha 1) truncated to f16, then the `Intensity` blend and the truncated output.

use super::params::{FrameConstants, FrameError};
use super::portable::{clamp01, ftz, sigmoid};
use super::prepare::{history_at, FrameInputs};
use crate::numerics::f16::{self, F16};

/// The result of composing one frame.
#[derive(Debug, Clone, PartialEq)]
pub struct Composed {
    /// The output image (RGBA16F bits, valid size).
    pub output: Vec<[F16; 4]>,
    /// The history to store for the next frame; `None` when NR is disabled (no history write).
    pub next_history: Option<Vec<[F16; 4]>>,
}

/// One colour channel of the network result: `clamp((h/32 + (p/8 - 1/16)) * 8 + 1/2, 0, 1)`
/// = `clamp(p + h/4, 0, 1)`, with every product exact.
#[inline]
pub fn neural_channel(proxy: f32, head: f32) -> f32 {
    let centred = proxy * 0.125 + -0.0625;
    let v = head * 0.03125 + centred;
    clamp01(v * 8.0 + 0.5)
}

/// The temporal blend weight of a head logit. The product is flushed when subnormal so that a
/// GPU flushing denormals gives the same bits (it only matters for logits near -87).
#[inline]
pub fn blend_weight(logit: f32, blend_scale: f32) -> f32 {
    clamp01(ftz(sigmoid(logit) * blend_scale))
}

/// Truncate an RGBA f32 value to RGBA16F bits.
#[inline]
pub fn truncate_rgba(v: [f32; 4]) -> [F16; 4] {
    v.map(f16::from_f32_rtz)
}

/// Compose one valid pixel of an enabled frame. Returns `(output, next_history)`.
pub fn compose_pixel(
    c: &FrameConstants,
    proxy: [f32; 4],
    head: [f32; 4],
    history: Option<[f32; 4]>,
) -> ([F16; 4], [F16; 4]) {
    let proxy = proxy.map(ftz);
    let head = head.map(ftz);
    let mut n = [
        neural_channel(proxy[0], head[0]),
        neural_channel(proxy[1], head[1]),
        neural_channel(proxy[2], head[2]),
    ];
    if let Some(h) = history {
        let w = blend_weight(head[3], c.blend_scale);
        for (v, hv) in n.iter_mut().zip(h) {
            *v = *v + w * (hv - *v);
        }
    }
    let next = truncate_rgba([n[0], n[1], n[2], 1.0]);
    if c.intensity != 1.0 {
        for (v, p) in n.iter_mut().zip(proxy) {
            *v = clamp01(p + c.intensity * (*v - p));
        }
    }
    (truncate_rgba([n[0], n[1], n[2], 1.0]), next)
}

/// Compose a frame. `head` is the network output `[field rows][4]` (RGB residual, logit); it is
/// not read when the frame is disabled (the proxy is then copied, truncated, and no history
/// is written).
pub fn compose(
    c: &FrameConstants,
    inputs: &FrameInputs,
    head: &[[f32; 4]],
) -> Result<Composed, FrameError> {
    inputs.check(c.width, c.height)?;
    let (w, h) = (c.width as usize, c.height as usize);
    if c.enabled == 0 {
        let output = inputs.proxy.iter().map(|&p| truncate_rgba(p)).collect();
        return Ok(Composed {
            output,
            next_history: None,
        });
    }
    let rows = c.field_width as usize * c.field_height as usize;
    if head.len() != rows {
        return Err(FrameError::BufferSize {
            name: "network head",
            expected: rows,
            got: head.len(),
        });
    }
    let mut output = Vec::with_capacity(w * h);
    let mut next = Vec::with_capacity(w * h);
    for y in 0..h {
        for x in 0..w {
            let hist = history_at(c, inputs, x as u32, y as u32);
            let (o, n) = compose_pixel(
                c,
                inputs.proxy[y * w + x],
                head[y * c.field_width as usize + x],
                hist,
            );
            output.push(o);
            next.push(n);
        }
    }
    Ok(Composed {
        output,
        next_history: Some(next),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nr::frame::params::FrameParams;
    use crate::nr::frame::temporal::FrameSetup;
    use crate::nr::geometry::Geometry;

    fn constants(enabled: bool, history_valid: bool, intensity: f32) -> FrameConstants {
        let g = Geometry::new(40, 36).unwrap();
        let setup = FrameSetup {
            enabled,
            seed: 0,
            history_valid,
            read_slot: 0,
            write_slot: 1,
        };
        let p = FrameParams {
            intensity,
            ..FrameParams::default()
        };
        FrameConstants::new(&g, &p, &setup, 0.739_746_1, false)
    }

    #[test]
    fn neural_is_proxy_plus_quarter_head() {
        assert_eq!(neural_channel(0.5, 0.0), 0.5);
        assert_eq!(neural_channel(0.5, 1.0), 0.75);
        assert_eq!(neural_channel(0.25, -0.5), 0.125);
        assert_eq!(neural_channel(0.9, 1.0), 1.0);
        assert_eq!(neural_channel(0.1, -1.0), 0.0);
        assert_eq!(neural_channel(f32::NAN, 0.0), 0.0);
        // Bit-identical to the fused NGX spelling: both products are exact.
        for i in 0..2000 {
            let p = i as f32 / 1999.0;
            let h = (i as f32 * 0.37).sin() * 2.0;
            let fused = clamp01(h.mul_add(0.03125, p.mul_add(0.125, -0.0625)) * 8.0 + 0.5);
            assert_eq!(neural_channel(p, h).to_bits(), fused.to_bits());
        }
    }

    #[test]
    fn blend_truths() {
        let c = constants(true, true, 1.0);
        let proxy = [0.5, 0.5, 0.5, 1.0];
        let head = [0.4, 0.0, -0.4, 0.0];
        // Logit 0: weight = 0.5 * blendScale.
        let w = 0.5 * 0.739_746_1f32;
        assert_eq!(blend_weight(0.0, c.blend_scale), w);
        let hist = [1.0, 0.0, 0.5, 1.0];
        let (out, next) = compose_pixel(&c, proxy, head, Some(hist));
        let n = [0.6f32, 0.5, 0.4];
        let want: Vec<F16> = n
            .iter()
            .zip(hist)
            .map(|(&v, h)| f16::from_f32_rtz(v + w * (h - v)))
            .collect();
        assert_eq!(&next[0..3], &want[..]);
        assert_eq!(next[3], 0x3C00);
        assert_eq!(out, next);
        // Without history the neural value is used directly.
        let (out, next) = compose_pixel(&c, proxy, head, None);
        assert_eq!(out, next);
        assert_eq!(out[0], f16::from_f32_rtz(0.6));
        // Intensity 0 gives the proxy back (the history still holds the neural value).
        let c0 = constants(true, true, 0.0);
        let (out, next) = compose_pixel(&c0, proxy, head, None);
        assert_eq!(&out[0..3], &[0x3800; 3]);
        assert_eq!(next[0], f16::from_f32_rtz(0.6));
        // Intensity 0.5: halfway between proxy and neural.
        let ch = constants(true, true, 0.5);
        let (out, _) = compose_pixel(&ch, proxy, head, None);
        assert_eq!(out[0], f16::from_f32_rtz(0.5 + 0.5 * (0.6f32 - 0.5)));
    }

    #[test]
    fn history_and_output_are_truncated() {
        // 0.6 is not a half: RNE rounds up to 0x38CD, truncation gives 0x38CC.
        assert_eq!(f16::from_f32_rne(0.6), 0x38CD);
        let c = constants(true, false, 1.0);
        let (out, next) = compose_pixel(&c, [0.5, 0.5, 0.5, 1.0], [0.4, 0.4, 0.4, 0.0], None);
        assert_eq!(next[0], 0x38CC);
        assert_eq!(out[0], 0x38CC);
    }

    #[test]
    fn disabled_outputs_the_truncated_proxy_and_writes_no_history() {
        let c = constants(false, true, 1.0);
        let (w, h) = (40usize, 36usize);
        let proxy: Vec<[f32; 4]> = (0..w * h)
            .map(|i| [0.6, i as f32 / 2000.0, 0.1, 0.3])
            .collect();
        let inputs = FrameInputs {
            proxy: &proxy,
            motion: None,
            history: None,
        };
        // The head is not read: an empty one is fine.
        let r = compose(&c, &inputs, &[]).unwrap();
        assert!(r.next_history.is_none());
        for (o, p) in r.output.iter().zip(&proxy) {
            assert_eq!(*o, p.map(f16::from_f32_rtz));
        }
        assert_eq!(r.output[0][0], 0x38CC);
        // Enabled, a short head is refused by name.
        let c1 = constants(true, false, 1.0);
        let e = compose(&c1, &inputs, &[[0.0; 4]; 3]).unwrap_err();
        assert!(e.to_string().contains("network head"), "{e}");
    }
}
