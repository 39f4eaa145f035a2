//! The temporal state of a feature between frames: the noise seed, the frame counter that picks
//! the ping-pong history image, and whether the stored history may be used (spec §1.8, §1.9).
//!
//! [`FrameState`] is what the NGX feature keeps; [`TemporalLoop`] runs whole frames on the CPU
//! (prepare -> a caller-supplied network -> compose) with its own two history images, for tests,
//! the demo and the reference.

use super::compose::{compose, Composed};
use super::params::{FrameConstants, FrameError, FrameParams};
use super::prepare::{prepare, FrameInputs, LANES};
use crate::nr::geometry::Geometry;
use crate::numerics::f16::F16;

/// What one frame does, decided from the state and the parameters before it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameSetup {
    /// `DLSSNR.Enabled`: off means no prepare, no network, output = proxy, no history write.
    pub enabled: bool,
    /// The noise seed of this frame (0 on the first frame and on Reset).
    pub seed: u32,
    /// Whether the history image at `read_slot` may be reprojected this frame.
    pub history_valid: bool,
    /// History image read this frame: `frame_counter & 1`.
    pub read_slot: usize,
    /// History image written this frame: `1 - read_slot`.
    pub write_slot: usize,
}

/// Per-feature temporal state. A new feature starts at [`FrameState::default`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FrameState {
    /// Seed of the next frame (before Reset is applied).
    pub seed: u32,
    /// Enabled frames evaluated since creation or since the last disabled frame. Reset does
    /// not clear it: the ping-pong parity carries on through a Reset.
    pub frame_counter: u64,
    /// True once an enabled frame has written a history image (and no disabled frame since).
    pub history_valid: bool,
}

impl FrameState {
    /// Decide the frame: seed, history use and ping-pong slots.
    pub fn begin(&self, params: &FrameParams) -> FrameSetup {
        let read_slot = (self.frame_counter & 1) as usize;
        FrameSetup {
            enabled: params.enabled,
            seed: if params.reset { 0 } else { self.seed },
            history_valid: params.enabled && !params.reset && self.history_valid,
            read_slot,
            write_slot: 1 - read_slot,
        }
    }

    /// Advance after the frame was recorded: an enabled frame counts and bumps the seed (from
    /// the seed it used); a disabled frame returns to the initial state.
    pub fn end(&mut self, setup: &FrameSetup) {
        if setup.enabled {
            self.frame_counter += 1;
            self.seed = setup.seed.wrapping_add(1);
            self.history_valid = true;
        } else {
            *self = FrameState::default();
        }
    }
}

/// What a CPU frame produced.
#[derive(Debug, Clone, PartialEq)]
pub struct FrameOutput {
    /// The output image (RGBA16F bits, valid size).
    pub output: Vec<[F16; 4]>,
    /// The input features given to the network (`None` when disabled).
    pub features: Option<Vec<[F16; LANES]>>,
    /// The decisions the frame ran with.
    pub setup: FrameSetup,
}

/// Whole frames on the CPU: state, two history images, prepare, network, compose.
#[derive(Debug, Clone)]
pub struct TemporalLoop {
    pub geometry: Geometry,
    pub state: FrameState,
    /// The ping-pong history images (valid size, RGBA16F bits), zero at creation.
    pub history: [Vec<[F16; 4]>; 2],
    /// The model's temporal blend scale.
    pub blend_scale: f32,
}

impl TemporalLoop {
    pub fn new(geometry: Geometry, blend_scale: f32) -> Self {
        let n = geometry.valid.area();
        TemporalLoop {
            geometry,
            state: FrameState::default(),
            history: [vec![[0; 4]; n], vec![[0; 4]; n]],
            blend_scale,
        }
    }

    /// Run one frame. `network` maps the features `[field rows][16]` to the head
    /// `[field rows][4]`; it is not called when the frame is disabled. On error nothing changes.
    pub fn run_frame(
        &mut self,
        params: &FrameParams,
        proxy: &[[f32; 4]],
        motion: Option<&[[f32; 2]]>,
        network: impl FnOnce(&[[F16; LANES]]) -> Vec<[f32; 4]>,
    ) -> Result<FrameOutput, FrameError> {
        let (w, h) = (self.geometry.valid.w, self.geometry.valid.h);
        params.validate(w, h)?;
        let setup = self.state.begin(params);
        let c = FrameConstants::new(
            &self.geometry,
            params,
            &setup,
            self.blend_scale,
            motion.is_some(),
        );
        let inputs = FrameInputs {
            proxy,
            motion,
            history: Some(&self.history[setup.read_slot]),
        };
        inputs.check(w, h)?;
        let (features, head) = if setup.enabled {
            let f = prepare(&c, &inputs)?;
            let head = network(&f);
            (Some(f), head)
        } else {
            (None, Vec::new())
        };
        let Composed {
            output,
            next_history,
        } = compose(&c, &inputs, &head)?;
        if let Some(next) = next_history {
            self.history[setup.write_slot] = next;
        }
        self.state.end(&setup);
        Ok(FrameOutput {
            output,
            features,
            setup,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nr::frame::compose::neural_channel;
    use crate::numerics::f16;

    #[test]
    fn seed_counter_and_slots() {
        let mut s = FrameState::default();
        let on = FrameParams::default();
        let first = s.begin(&on);
        assert_eq!(
            first,
            FrameSetup {
                enabled: true,
                seed: 0,
                history_valid: false,
                read_slot: 0,
                write_slot: 1
            }
        );
        s.end(&first);
        let second = s.begin(&on);
        assert_eq!((second.seed, second.history_valid), (1, true));
        assert_eq!((second.read_slot, second.write_slot), (1, 0));
        s.end(&second);
        let third = s.begin(&on);
        assert_eq!((third.seed, third.read_slot, third.write_slot), (2, 0, 1));
        s.end(&third);
        // Reset: seed 0 and no history, but the parity carries on; the seed restarts at 1.
        let reset = FrameParams { reset: true, ..on };
        let r = s.begin(&reset);
        assert_eq!((r.seed, r.history_valid, r.read_slot), (0, false, 1));
        s.end(&r);
        assert_eq!((s.seed, s.frame_counter, s.history_valid), (1, 4, true));
        // Disabled: back to the initial state.
        let off = FrameParams {
            enabled: false,
            ..on
        };
        let d = s.begin(&off);
        assert!(!d.history_valid && !d.enabled);
        s.end(&d);
        assert_eq!(s, FrameState::default());
    }

    fn zero_head(rows: usize) -> Vec<[f32; 4]> {
        vec![[0.0; 4]; rows]
    }

    #[test]
    fn temporal_loop_truths() {
        let g = Geometry::new(40, 36).unwrap();
        let rows = g.field.area();
        let n = g.valid.area();
        let mut tl = TemporalLoop::new(g, 0.739_746_1);
        let proxy_a = vec![[0.25f32, 0.5, 0.75, 1.0]; n];
        let proxy_b = vec![[0.75f32, 0.5, 0.25, 1.0]; n];
        let on = FrameParams::default();

        // Frame 0: first frame ignores the (zero) history; output = neural = proxy (head 0).
        let f0 = tl
            .run_frame(&on, &proxy_a, None, |f| zero_head(f.len()))
            .unwrap();
        assert!(!f0.setup.history_valid);
        assert_eq!(f0.output[0], [0x3400, 0x3800, 0x3A00, 0x3C00]);
        assert_eq!(tl.history[1][0], [0x3400, 0x3800, 0x3A00, 0x3C00]);
        let feats = f0.features.as_ref().unwrap();
        assert_eq!(feats.len(), rows);
        assert_eq!(&feats[0][7..10], &feats[0][4..7]);

        // Frame 1 with a different proxy: history (proxy_a) is blended in and feeds lanes 7-9.
        let f1 = tl
            .run_frame(&on, &proxy_b, None, |f| zero_head(f.len()))
            .unwrap();
        assert!(f1.setup.history_valid);
        assert_eq!(f1.setup.read_slot, 1);
        let w = 0.5 * 0.739_746_1f32;
        let want = neural_channel(0.75, 0.0) + w * (0.25 - neural_channel(0.75, 0.0));
        assert_eq!(f1.output[0][0], f16::from_f32_rtz(want));
        let feats = f1.features.as_ref().unwrap();
        assert_eq!(feats[0][7], crate::nr::frame::prepare::center_lane(0.25));
        assert_eq!(feats[0][4], crate::nr::frame::prepare::center_lane(0.75));
        // The noise seed advanced.
        assert_ne!(&feats[0][0..3], &f0.features.as_ref().unwrap()[0][0..3]);
        assert_eq!(tl.history[0][0][0], f16::from_f32_rtz(want));

        // Reset: history ignored, seed 0 again (same noise as frame 0).
        let reset = FrameParams { reset: true, ..on };
        let f2 = tl
            .run_frame(&reset, &proxy_b, None, |f| zero_head(f.len()))
            .unwrap();
        assert!(!f2.setup.history_valid);
        assert_eq!(f2.output[0][0], f16::from_f32_rtz(0.75));
        assert_eq!(
            &f2.features.as_ref().unwrap()[5][0..3],
            &f0.features.as_ref().unwrap()[5][0..3]
        );

        // Disabled: proxy out (truncated), network not called, no history write, state reset.
        let before = tl.history.clone();
        let off = FrameParams {
            enabled: false,
            ..on
        };
        let proxy_c = vec![[0.6f32, 0.1, 0.2, 0.5]; n];
        let f3 = tl
            .run_frame(&off, &proxy_c, None, |_| {
                panic!("network called while disabled")
            })
            .unwrap();
        assert_eq!(f3.output[0], [0x38CC, 0x2E66, 0x3266, 0x3800]);
        assert!(f3.features.is_none());
        assert_eq!(tl.history, before);
        assert_eq!(tl.state, FrameState::default());

        // A bad parameter changes nothing.
        let bad = FrameParams {
            intensity: 2.0,
            ..on
        };
        assert!(tl
            .run_frame(&bad, &proxy_a, None, |f| zero_head(f.len()))
            .is_err());
        assert_eq!(tl.state, FrameState::default());
    }

    #[test]
    fn scene_frames_at_the_smallest_size() {
        // 33x33 (field 320x320, repeated mirror) through four frames of the moving scene with a
        // network that adds a fixed residual and logit: deterministic, history used from frame 1.
        let g = Geometry::new(33, 33).unwrap();
        let run = || {
            let mut tl = TemporalLoop::new(g, 0.739_746_1);
            let mut outs = Vec::new();
            for frame in 0..4 {
                let s = crate::nr::frame::scene::render(33, 33, frame);
                let out = tl
                    .run_frame(&FrameParams::default(), &s.proxy, Some(&s.motion), |f| {
                        vec![[0.05, -0.05, 0.0, 1.0]; f.len()]
                    })
                    .unwrap();
                assert_eq!(out.setup.history_valid, frame > 0);
                outs.push(out);
            }
            outs
        };
        let a = run();
        assert_eq!(a, run());
        // Frame 0 has no history: output = neural of the proxy exactly.
        let s0 = crate::nr::frame::scene::render(33, 33, 0);
        for (o, p) in a[0].output.iter().zip(&s0.proxy) {
            assert_eq!(o[0], f16::from_f32_rtz(neural_channel(p[0], 0.05)));
            assert_eq!(o[3], 0x3C00);
        }
        // Later frames blend: some pixels differ from the history-free value.
        let s2 = crate::nr::frame::scene::render(33, 33, 2);
        let blended = a[2]
            .output
            .iter()
            .zip(&s2.proxy)
            .filter(|(o, p)| o[0] != f16::from_f32_rtz(neural_channel(p[0], 0.05)))
            .count();
        assert!(blended > 500, "{blended}");
    }
}
