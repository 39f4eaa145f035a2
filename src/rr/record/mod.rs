//! RR's GPU recorder: one prepared launch (or two) per op of `rr::graph`, each a kernel of
//! `shaders/rr` that computes the op's tensor with the same bits as the CPU reference
//! (`rr::reference`), through the numerics of `shaders/lib/rr`.
//!
//! [`Resources`] holds the buffers: one device-local arena whose bytes the graph's tensors share
//! where their lifetimes do not overlap ([`slots`]), and the [`RrGpuWeights`] it binds ([`weights`]:
//! the weights as natural `[n][k]` E4M3 matrices and f16 vectors, what `rr::reference::Weights`
//! reads from the prepared images, the score biases and the lookup tables the numerics build,
//! `numerics::rr::{act, gates}`; one copy per device and model, shared by its features).
//! [`prepare`] turns a node into its launches; the window
//! attention's grid and the frame stages' push constants depend on the frame (the window shift,
//! jitter, MV scale, exposure inputs, history validity), so a [`Launch`] is completed at record
//! time from `rr::frame::FrameConstants`.
//!
//! [`bands`] keeps every launch within the device's `maxStorageBufferRange` and
//! `maxComputeWorkGroupCount`: an op whose bindings fit runs as one launch, a larger one as
//! several launches over row bands (the band arithmetic is `gpu::bands`, shared with NR; every
//! op has a band rule), and a size where even the smallest band does not fit is refused at
//! creation naming the tensor.
//!
//! Every op has a kernel. The kernels are plain scalar ones (one
//! invocation per output quad, row, token or pixel; one workgroup per window and head): exact
//! first, fast later.

pub mod bands;
mod launch;
mod prepare;
mod resources;
pub mod slots;
pub mod weights;

pub use launch::Launch;
pub use prepare::prepare;
pub use resources::Resources;
pub use weights::RrGpuWeights;
