//! RR's per-pixel frame stages, the semantics of the graph's non-GEMM ops (`rr::graph::Op`):
//! the exposure stage and the input features ([`input`]), the tails' kernel prediction
//! ([`tails`]), the output stage with history reprojection and the temporal blend ([`output`]),
//! the per-frame constants they read ([`constants`]) and the temporal rule that derives them
//! ([`temporal`]).
//!
//! None of this is in the spec beyond the outline of §4.3/§4.4 (the tails) and §8/§9 (what the
//! output and exposure stages are); every formula here is **openngx's own** unless a comment
//! cites the spec (`docs/rr.md`, "Frame stages"). Each function is exactly specified for a GPU
//! twin: f16 arithmetic through `numerics::f16` (correctly rounded, fused only where it says
//! `fma`), the RR numerics' tables, and f32 add/sub/mul never fused plus `numerics::portable`
//! (the rules of `docs/frame.md` §2).

pub mod constants;
pub mod input;
pub mod output;
pub mod scene;
pub mod tails;
pub mod temporal;

pub use constants::FrameConstants;
