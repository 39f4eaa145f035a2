//! GPU recording of the network (the exact route): per-op record functions that bind their
//! kernels and dispatch into the caller's command buffer.
pub mod attention;
pub mod elementwise;
