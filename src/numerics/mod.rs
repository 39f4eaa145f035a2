//! Scalar numerics: the single source of truth for every rounding the network does.
//!
//! The CPU reference and the tests use these functions; the GLSL in `shaders/lib` implements the
//! same algorithms and is tested against the same vectors. Values are bit patterns (`u16` halves,
//! `u8` E4M3 codes) so that every rounding point is explicit.
pub mod e4m3;
pub mod f16;
