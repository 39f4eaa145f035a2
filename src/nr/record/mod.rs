//! Recording the NR frame on the GPU into the caller's command buffer: the per-pixel frame
//! kernels and the bridge to the caller's images ([`frame`]).
pub mod frame;
