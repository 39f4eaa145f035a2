//! The per-pixel work around the network: `prepare` (16 input lanes per field pixel, noise,
//! mirror padding, history reprojection) and `compose` (network result, temporal blend, next
//! history, output), the temporal state between frames, the frame parameters, and a synthetic
//! animated scene.
//!
//! This is the CPU reference that the GPU prepare/compose shaders reproduce bit for bit: it uses
//! only operations that Vulkan defines exactly (f32 add/sub/mul, integer ops, exact `floor`,
//! comparisons, explicit f16 rounding on bit patterns) and the portable transcendentals of
//! [`portable`]. See `docs/frame.md`.

pub mod compose;
pub mod history;
pub mod noise;
pub mod params;
pub use crate::numerics::portable;
pub mod prepare;
pub mod scene;
pub mod temporal;

pub use compose::{compose, compose_pixel, Composed};
pub use history::reproject;
pub use noise::noise_lanes;
pub use params::{
    default_blend_scale, FrameConstants, FrameError, FrameParams, Subrect, DEFAULT_BLEND_SCALE_BITS,
};
pub use prepare::{mirror, prepare, prepare_pixel, FrameInputs, LANES};
pub use temporal::{FrameOutput, FrameSetup, FrameState, TemporalLoop};
