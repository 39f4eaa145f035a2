//! Ray Reconstruction's numerics (spec rr-network §4-§5): every rounding the RR network does that
//! DLSS-NR does not share.
//!
//! * [`q8`]: E4M3 as RR publishes it (`cvt.rn.satfinite`: NaN kept with its sign; the ReLU form of
//!   enc0's embedding), and the decoding of RR operands (NaN codes are NaN).
//! * [`k32`]: the GEMM step: the exact sum of a k32 slice of E4M3 products plus C, rounded to f16
//!   once per step ([`crate::numerics::Profile::RR_K32`] of the MMA model, plus the NaN rule), and
//!   the fast CPU GEMM that gives the same bits.
//! * [`lanes`]: the fixed f16 addition trees of the MMA fragment (a row's values spread over the
//!   four lanes of a quad), shared by the RMS norm and the softmax row sum.
//! * [`rms`]: the RMS norm (no mean, no 1/N, the gain folded into the reciprocal root).
//! * [`cubic`]: the window softmax with the cubic exponential and its tree-ordered row sum.
//! * [`act`]: the MLP activation (signed clamp, quadratic gate).
//! * [`gates`]: sigmoid, the tail softmax with a real row maximum, tanh; where NVIDIA uses
//!   approximate instructions (`rcp`, `rsqrt`, `ex2`, `div` `.approx`) openngx uses correctly
//!   rounded results, given here as functions and built into lookup tables for the GPU.
//!
//! Everything is on bit patterns (`F16` halves, `E4` codes), like the rest of `numerics`.
//! `docs/rr.md` and `docs/numerics.md` give each reading and its known distance from NVIDIA's.

pub mod act;
pub mod cubic;
pub mod gates;
pub mod k32;
pub mod lanes;
pub mod q8;
pub mod rms;
