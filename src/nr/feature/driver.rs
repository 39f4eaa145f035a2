//! The host side of one evaluation: the temporal state decides the frame of validated
//! [`NrInputs`] ([`FrameState::begin`]: seed, history use, ping-pong slots)
//! and the kernels' constant block is built. The state advances only after the whole frame was
//! recorded, so a refused or failed evaluation leaves the feature exactly as it was; the rules
//! are those of `nr::frame::temporal` (Reset keeps the counter's parity, a disabled frame returns
//! to the initial state).

use super::params::NrInputs;
use crate::feature::FeatureError;
use crate::nr::frame::{FrameConstants, FrameError, FrameSetup, FrameState};
use crate::nr::geometry::Geometry;

/// A frame-code refusal as the NGX error (and so result code) it stands for.
pub fn frame_error(e: FrameError) -> FeatureError {
    let reason = e.to_string();
    match e {
        FrameError::NotImplemented { name, .. } => FeatureError::UnsupportedParameter {
            key: name.to_owned(),
            reason,
        },
        FrameError::NonFinite { name, .. }
        | FrameError::OutOfRange { name, .. }
        | FrameError::Subrect { name, .. }
        | FrameError::BufferSize { name, .. } => FeatureError::InvalidParameter {
            key: name.to_owned(),
            reason,
        },
    }
}

/// One frame, decided but not yet committed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PlannedFrame {
    /// Seed, history use and slots.
    pub setup: FrameSetup,
    /// The kernels' constant block.
    pub constants: FrameConstants,
}

/// The temporal state of one feature plus what the constant block needs from the feature.
#[derive(Debug, Clone)]
pub struct FrameDriver {
    geometry: Geometry,
    blend_scale: f32,
    state: FrameState,
}

impl FrameDriver {
    /// A new feature: seed 0, counter 0, no history.
    pub fn new(geometry: Geometry, blend_scale: f32) -> FrameDriver {
        FrameDriver {
            geometry,
            blend_scale,
            state: FrameState::default(),
        }
    }

    /// The state between frames.
    pub fn state(&self) -> FrameState {
        self.state
    }

    /// Decide the frame of (already validated) inputs; nothing changes until
    /// [`FrameDriver::commit`].
    pub fn plan(&self, inputs: &NrInputs) -> PlannedFrame {
        let params = inputs.frame();
        let setup = self.state.begin(params);
        let constants = FrameConstants::new(
            &self.geometry,
            params,
            &setup,
            self.blend_scale,
            inputs.motion().is_some(),
        );
        PlannedFrame { setup, constants }
    }

    /// The frame was recorded: advance the state.
    pub fn commit(&mut self, frame: &PlannedFrame) {
        self.state.end(&frame.setup);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::feature::{ImageInput, Rect};
    use crate::nr::frame::FrameParams;
    use ash::vk::{self, Handle};

    fn image(id: u64, format: vk::Format, x: u32) -> ImageInput {
        ImageInput {
            view: vk::ImageView::from_raw(id + 100),
            image: vk::Image::from_raw(id),
            subresource: vk::ImageSubresourceRange::default(),
            format,
            width: 128,
            height: 64,
            read_write: false,
            rect: Rect {
                x,
                y: 0,
                width: 64,
                height: 64,
            },
        }
    }

    fn color() -> ImageInput {
        image(1, vk::Format::R16G16B16A16_SFLOAT, 0)
    }

    fn output() -> ImageInput {
        image(2, vk::Format::R16G16B16A16_SFLOAT, 64)
    }

    fn with(controls: FrameParams) -> Result<NrInputs, FeatureError> {
        NrInputs::new(64, 64, color(), output(), None, controls)
    }

    fn inputs() -> NrInputs {
        with(FrameParams::default()).expect("valid")
    }

    fn driver() -> FrameDriver {
        FrameDriver::new(Geometry::new(64, 64).expect("size"), 0.5)
    }

    #[test]
    fn constants_carry_the_rectangles_and_controls() {
        let d = driver();
        let motion = Some(image(3, vk::Format::R16G16_SFLOAT, 32));
        let controls = FrameParams {
            intensity: 0.25,
            mvec_scale: [2.0, -1.0],
            ..FrameParams::default()
        };
        let i = NrInputs::new(64, 64, color(), output(), motion, controls).expect("valid");
        let f = d.plan(&i);
        let c = f.constants;
        assert_eq!(
            (c.width, c.height, c.field_width, c.field_height),
            (64, 64, 336, 320)
        );
        assert_eq!((c.color_x, c.output_x, c.motion_x), (0, 64, 32));
        assert_eq!((c.has_motion, c.history_valid, c.seed), (1, 0, 0));
        assert_eq!(
            (c.intensity, c.mvec_scale_x, c.mvec_scale_y),
            (0.25, 2.0, -1.0)
        );
        assert_eq!(c.blend_scale, 0.5);
    }

    #[test]
    fn the_state_follows_the_temporal_rules_and_only_on_commit() {
        let mut d = driver();
        let on = inputs();
        let f0 = d.plan(&on);
        // Not committed: planning again gives the same frame.
        assert_eq!(d.plan(&on), f0);
        d.commit(&f0);
        let f1 = d.plan(&on);
        assert_eq!((f1.constants.seed, f1.constants.history_valid), (1, 1));
        assert_eq!((f1.setup.read_slot, f1.setup.write_slot), (1, 0));
        d.commit(&f1);
        // Reset: seed 0, no history, parity continues.
        let reset = with(FrameParams {
            reset: true,
            ..FrameParams::default()
        })
        .expect("reset");
        let f2 = d.plan(&reset);
        assert_eq!((f2.constants.seed, f2.constants.history_valid), (0, 0));
        assert_eq!(f2.setup.read_slot, 0);
        d.commit(&f2);
        assert_eq!((d.state().seed, d.state().frame_counter), (1, 3));
        // Disabled: back to the initial state.
        let off = with(FrameParams {
            enabled: false,
            ..FrameParams::default()
        })
        .expect("disabled");
        let f3 = d.plan(&off);
        assert_eq!(f3.constants.enabled, 0);
        d.commit(&f3);
        assert_eq!(d.state(), FrameState::default());
    }

    #[test]
    fn refusals_name_the_parameter() {
        let e = with(FrameParams {
            intensity: f32::NAN,
            ..FrameParams::default()
        })
        .expect_err("nan");
        assert!(e.to_string().contains("DLSSNR.Intensity"), "{e}");
        assert!(matches!(e, FeatureError::InvalidParameter { .. }), "{e}");
        let e = with(FrameParams {
            style: 1,
            ..FrameParams::default()
        })
        .expect_err("style");
        assert!(
            matches!(e, FeatureError::UnsupportedParameter { .. }),
            "{e}"
        );
        let mut small = color();
        small.rect.width = 32;
        assert!(NrInputs::new(64, 64, small, output(), None, FrameParams::default()).is_err());
        // The output may not be the colour image.
        let mut alias = output();
        alias.image = color().image;
        assert!(NrInputs::new(64, 64, color(), alias, None, FrameParams::default()).is_err());
    }
}
