//! The DLSS-NR network: its geometry, the op graph (the one schedule), the CPU reference and
//! the GPU recorder that both walk it, the per-pixel frame work (prepare/compose and the
//! temporal state), one whole frame on the GPU (`gpu_frame`, shared by the feature and the
//! tools), its parameter names, and the feature that `crate::ngx` offers as NGX feature 18
//! (through `crate::feature`; nothing here imports `crate::ngx`).
pub mod cpu_frame;
pub mod feature;
pub mod frame;
pub mod geometry;
pub mod gpu_frame;
pub mod graph;
pub mod keys;
pub mod record;
pub mod reference;
pub mod route;
