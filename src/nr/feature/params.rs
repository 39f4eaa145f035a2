//! DLSS-NR's own typed parameters: [`NrCreate`] (a feature's size and creation options) and
//! [`NrInputs`] (one evaluation: the checked images and the frame parameters). Both are
//! validated once, when they are made; a value of either type is always valid, so the backend
//! and the frame code never check them again.

use crate::feature::{FeatureError, ImageInput, Rect, RouteRequest};
use crate::nr::frame::{FrameParams, Subrect};
use crate::nr::keys;

use super::driver::frame_error;

/// Smallest accepted width/height.
pub const MIN_SIZE: u32 = 64;
/// Largest accepted width/height.
pub const MAX_SIZE: u32 = 8192;
/// Largest accepted width*height.
pub const MAX_AREA: u64 = 16_777_216;

fn invalid(key: &str, reason: String) -> FeatureError {
    FeatureError::InvalidParameter {
        key: key.to_owned(),
        reason,
    }
}

fn unsupported(key: &str, reason: String) -> FeatureError {
    FeatureError::UnsupportedParameter {
        key: key.to_owned(),
        reason,
    }
}

/// The validated creation parameters of a DLSS-NR feature (nr-network.md §5).
#[derive(Debug, Clone, PartialEq)]
pub struct NrCreate {
    width: u32,
    height: u32,
    perf_quality: Option<i32>,
    preset: u32,
    node_masks: [u32; 2],
    route: Option<RouteRequest>,
    tensor_features: Option<bool>,
}

impl NrCreate {
    /// Checks the size (64..=8192 per axis, at most 16,777,216 pixels), the preset (only 0) and
    /// the node masks (0 or 1: one GPU).
    pub fn new(
        width: u32,
        height: u32,
        perf_quality: Option<i32>,
        preset: u32,
        creation_node_mask: u32,
        visibility_node_mask: u32,
    ) -> Result<NrCreate, FeatureError> {
        for (key, v) in [(keys::WIDTH, width), (keys::HEIGHT, height)] {
            if !(MIN_SIZE..=MAX_SIZE).contains(&v) {
                return Err(invalid(
                    key,
                    format!("{v} is outside {MIN_SIZE}..={MAX_SIZE}"),
                ));
            }
        }
        if u64::from(width) * u64::from(height) > MAX_AREA {
            return Err(invalid(
                keys::WIDTH,
                format!("{width}x{height} exceeds the maximum area of {MAX_AREA} pixels"),
            ));
        }
        if preset != 0 {
            return Err(unsupported(
                keys::PRESET,
                format!("{preset}: only preset 0 is supported"),
            ));
        }
        for (key, v) in [
            (keys::CREATION_NODE_MASK, creation_node_mask),
            (keys::VISIBILITY_NODE_MASK, visibility_node_mask),
        ] {
            if v > 1 {
                return Err(unsupported(
                    key,
                    format!("{v:#x}: multi-GPU node masks are not supported"),
                ));
            }
        }
        Ok(NrCreate {
            width,
            height,
            perf_quality,
            preset,
            node_masks: [creation_node_mask, visibility_node_mask],
            route: None,
            tensor_features: None,
        })
    }

    /// With the route request of `OpenNGX.Route` (`None`: absent, the environment decides) and
    /// the application's statement of `OpenNGX.TensorFeaturesEnabled`.
    pub fn with_route(self, route: Option<RouteRequest>, tensor_features: Option<bool>) -> Self {
        NrCreate {
            route,
            tensor_features,
            ..self
        }
    }

    /// The route asked for by the creation parameter, if any.
    pub fn route_request(&self) -> Option<RouteRequest> {
        self.route
    }

    /// Whether the creation parameter says the tensor route's device features are enabled.
    pub fn tensor_features(&self) -> Option<bool> {
        self.tensor_features
    }

    /// Feature width.
    pub fn width(&self) -> u32 {
        self.width
    }

    /// Feature height.
    pub fn height(&self) -> u32 {
        self.height
    }

    /// `PerfQualityValue` when given (informational).
    pub fn perf_quality(&self) -> Option<i32> {
        self.perf_quality
    }

    /// The preset (always 0 today).
    pub fn preset(&self) -> u32 {
        self.preset
    }

    /// `CreationNodeMask`.
    pub fn creation_node_mask(&self) -> u32 {
        self.node_masks[0]
    }

    /// `VisibilityNodeMask`.
    pub fn visibility_node_mask(&self) -> u32 {
        self.node_masks[1]
    }
}

/// The validated inputs of one DLSS-NR evaluation.
#[derive(Debug, Clone)]
pub struct NrInputs {
    color: ImageInput,
    output: ImageInput,
    motion: Option<ImageInput>,
    frame: FrameParams,
}

/// The sub-rectangle an image input covers, as the frame parameters express it.
fn subrect(key: &str, rect: Rect) -> Result<Subrect, FeatureError> {
    let base = |v: u32| {
        i32::try_from(v).map_err(|_| {
            invalid(
                &format!("{key}SubrectBase"),
                format!("{v} does not fit the frame constants"),
            )
        })
    };
    Ok(Subrect {
        base_x: base(rect.x)?,
        base_y: base(rect.y)?,
        width: rect.width,
        height: rect.height,
    })
}

impl NrInputs {
    /// The inputs of a `width`x`height` feature: `controls` carries every scalar parameter (its
    /// subrects are taken from the images' regions), validated here with
    /// [`FrameParams::validate`]; the output must not alias the colour input.
    pub fn new(
        width: u32,
        height: u32,
        color: ImageInput,
        output: ImageInput,
        motion: Option<ImageInput>,
        controls: FrameParams,
    ) -> Result<NrInputs, FeatureError> {
        if output.image == color.image {
            return Err(invalid(
                keys::OUTPUT,
                format!("must not alias {} (same VkImage)", keys::COLOR),
            ));
        }
        let frame = FrameParams {
            color_subrect: Some(subrect(keys::COLOR, color.rect)?),
            output_subrect: Some(subrect(keys::OUTPUT, output.rect)?),
            mvec_subrect: match &motion {
                Some(m) => Some(subrect(keys::MVEC, m.rect)?),
                None => None,
            },
            ..controls
        };
        frame.validate(width, height).map_err(frame_error)?;
        Ok(NrInputs {
            color,
            output,
            motion,
            frame,
        })
    }

    /// `DLSSNR.Color`.
    pub fn color(&self) -> &ImageInput {
        &self.color
    }

    /// `DLSSNR.Output`.
    pub fn output(&self) -> &ImageInput {
        &self.output
    }

    /// `DLSSNR.MVec`, when given.
    pub fn motion(&self) -> Option<&ImageInput> {
        self.motion.as_ref()
    }

    /// The frame parameters (subrects filled from the images).
    pub fn frame(&self) -> &FrameParams {
        &self.frame
    }
}
