//! The host side of one evaluation: the validated NGX inputs become [`FrameParams`], the
//! temporal state decides the frame ([`FrameState::begin`]: seed, history use, ping-pong slots)
//! and the kernels' constant block is built. The state advances only after the whole frame was
//! recorded, so a refused or failed evaluation leaves the feature exactly as it was; the rules
//! are those of `nr::frame::temporal` (Reset keeps the counter's parity, a disabled frame returns
//! to the initial state).

use crate::ngx::backend::{EvalInputs, FeatureError, ImageInput};
use crate::nr::frame::params::names;
use crate::nr::frame::{FrameConstants, FrameError, FrameParams, FrameSetup, FrameState, Subrect};
use crate::nr::geometry::Geometry;

/// The sub-rectangle an image input covers, as the frame parameters express it.
fn subrect(key: &str, img: &ImageInput) -> Result<Subrect, FeatureError> {
    let base = |v: u32| {
        i32::try_from(v).map_err(|_| FeatureError::InvalidParameter {
            key: format!("{key}SubrectBase"),
            reason: format!("{v} does not fit the frame constants"),
        })
    };
    Ok(Subrect {
        base_x: base(img.rect.x)?,
        base_y: base(img.rect.y)?,
        width: img.rect.width,
        height: img.rect.height,
    })
}

/// `DLSSNR.*` evaluate inputs as the frame code's parameters.
pub fn frame_params(inputs: &EvalInputs) -> Result<FrameParams, FeatureError> {
    Ok(FrameParams {
        enabled: inputs.enabled,
        reset: inputs.reset,
        use_auto_mask: inputs.use_auto_mask,
        intensity: inputs.intensity,
        local_tone_strength: inputs.local_tone_strength,
        local_structure_strength: inputs.local_structure_strength,
        skin_structure_strength: inputs.skin_structure_strength,
        global_tone_strength: inputs.global_tone_strength,
        style: inputs.style,
        ui_correction: 0,
        depth_inverted: None,
        mvec_scale: inputs.motion_scale,
        color_subrect: Some(subrect(names::COLOR, &inputs.color)?),
        output_subrect: Some(subrect(names::OUTPUT, &inputs.output)?),
        mvec_subrect: match &inputs.motion {
            Some(m) => Some(subrect(names::MVEC, m)?),
            None => None,
        },
    })
}

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

    /// Validate the inputs and decide the frame; nothing changes until [`FrameDriver::commit`].
    pub fn plan(&self, inputs: &EvalInputs) -> Result<PlannedFrame, FeatureError> {
        let params = frame_params(inputs)?;
        params
            .validate(self.geometry.valid.w, self.geometry.valid.h)
            .map_err(frame_error)?;
        let setup = self.state.begin(&params);
        let constants = FrameConstants::new(
            &self.geometry,
            &params,
            &setup,
            self.blend_scale,
            inputs.motion.is_some(),
        );
        Ok(PlannedFrame { setup, constants })
    }

    /// The frame was recorded: advance the state.
    pub fn commit(&mut self, frame: &PlannedFrame) {
        self.state.end(&frame.setup);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ngx::backend::Rect;
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

    fn inputs() -> EvalInputs {
        EvalInputs {
            color: image(1, vk::Format::R16G16B16A16_SFLOAT, 0),
            output: image(2, vk::Format::R16G16B16A16_SFLOAT, 64),
            motion: None,
            motion_scale: [1.0, 1.0],
            enabled: true,
            reset: false,
            use_auto_mask: true,
            intensity: 1.0,
            local_tone_strength: 1.0,
            local_structure_strength: 1.0,
            skin_structure_strength: -1.0,
            global_tone_strength: None,
            style: 0,
        }
    }

    fn driver() -> FrameDriver {
        FrameDriver::new(Geometry::new(64, 64).expect("size"), 0.5)
    }

    #[test]
    fn constants_carry_the_rectangles_and_controls() {
        let d = driver();
        let mut i = inputs();
        i.motion = Some(image(3, vk::Format::R16G16_SFLOAT, 32));
        i.intensity = 0.25;
        i.motion_scale = [2.0, -1.0];
        let f = d.plan(&i).expect("valid");
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
        let f0 = d.plan(&on).expect("frame 0");
        // Not committed: planning again gives the same frame.
        assert_eq!(d.plan(&on).expect("again"), f0);
        d.commit(&f0);
        let f1 = d.plan(&on).expect("frame 1");
        assert_eq!((f1.constants.seed, f1.constants.history_valid), (1, 1));
        assert_eq!((f1.setup.read_slot, f1.setup.write_slot), (1, 0));
        d.commit(&f1);
        // Reset: seed 0, no history, parity continues.
        let reset = EvalInputs {
            reset: true,
            ..inputs()
        };
        let f2 = d.plan(&reset).expect("reset");
        assert_eq!((f2.constants.seed, f2.constants.history_valid), (0, 0));
        assert_eq!(f2.setup.read_slot, 0);
        d.commit(&f2);
        assert_eq!((d.state().seed, d.state().frame_counter), (1, 3));
        // Disabled: back to the initial state.
        let off = EvalInputs {
            enabled: false,
            ..inputs()
        };
        let f3 = d.plan(&off).expect("disabled");
        assert_eq!(f3.constants.enabled, 0);
        d.commit(&f3);
        assert_eq!(d.state(), FrameState::default());
    }

    #[test]
    fn refusals_name_the_parameter_and_change_nothing() {
        let d = driver();
        let mut bad = inputs();
        bad.intensity = f32::NAN;
        let e = d.plan(&bad).expect_err("nan");
        assert!(e.to_string().contains("DLSSNR.Intensity"), "{e}");
        assert_eq!(
            e.code(),
            crate::ngx::abi::NVSDK_NGX_Result_FAIL_InvalidParameter
        );
        let mut style = inputs();
        style.style = 1;
        assert_eq!(
            d.plan(&style).map_err(|e| e.code()).err(),
            Some(crate::ngx::abi::NVSDK_NGX_Result_FAIL_UnsupportedParameter)
        );
        let mut small = inputs();
        small.color.rect.width = 32;
        assert!(d.plan(&small).is_err());
        assert_eq!(d.state(), FrameState::default());
    }
}
