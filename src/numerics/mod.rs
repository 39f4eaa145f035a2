//! Scalar numerics: the single source of truth for every rounding the network does.
//!
//! The CPU reference and the tests use these functions; the GLSL in `shaders/lib` implements the
//! same algorithms and is tested against the same vectors. Values are bit patterns (`u16` halves,
//! `u8` E4M3 codes) so that every rounding point is explicit. `docs/numerics.md` lists the profiles,
//! the rounding points and the readings chosen where the spec leaves room.
pub mod e4m3;
pub mod exp;
pub mod f16;
pub mod gemm;
mod gemm_panel;
pub mod mma;
pub mod norm;
/// The exact decode of normalised integer texels (UNORM, SNORM) and of inverted depth, shared by
/// every route that reads a caller's image (`shaders/lib/frame_formats.glsl` is the GLSL twin).
pub mod normalized;
pub mod ops;
/// Portable, exactly specified f32 transcendentals (log2, sqrt, rcp, exp2, sigmoid, sin/cos),
/// moved here from `nr::frame` so that every network's frame code can use them.
pub mod portable;
/// The MMA profile probe: owns the fixed f16 coopmat tiles run at feature creation, their expected
/// results under each candidate profile, and the matcher that decides which profile a device's
/// answers follow (an H25 route is offered only on an exact H25 match).
pub mod probe;
pub mod profiles;
pub mod recip;
/// Exactly specified image resampling (the portable 5-tap Catmull-Rom), moved here from
/// `nr::frame::history` so that every network's frame code can use it.
pub mod resample;
/// Ray Reconstruction's own numerics (RMS norm, cubic softmax, activation, the k32 GEMM step,
/// sigmoid/tanh/tail softmax): see the module for what it adds to the shared functions.
pub mod rr;
pub mod silu;
pub mod softmax;
pub mod tables;

#[cfg(test)]
mod oracle;
#[cfg(test)]
mod tests;

pub use e4m3::E4;
pub use f16::F16;
pub use gemm::{
    gemm_e4m3, gemm_e4m3_packed, gemm_f16, gemm_f16_packed, GemmError, PackedE4m3, PackedF16,
};
pub use mma::{AccRounding, ExponentConvention, Profile};
pub use profiles::Profiles;
