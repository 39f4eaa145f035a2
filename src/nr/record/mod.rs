//! The GPU executor of the exact route: records the schedule of `nr::graph` into a caller's
//! command buffer.
//!
//! * `weights` — a model on the device (records in place + re-laid matrices), shared per device;
//! * `workspace` — the tensors of one schedule in one buffer, memory shared between tensors whose
//!   lifetimes do not overlap;
//! * `gemm` — the grouped FP8 GEMM, the input adapter and the head (integer emulation of the MMA
//!   profiles, no cooperative matrices);
//! * `network` — [`NetworkRecorder`]: every node of the graph, barriers, timestamps, readback;
//! * `frame` — prepare/compose around the network and the bridge to the caller's images.
//!
//! The attention and element-wise kernels (`attention`, `elementwise`) are owned by another
//! module author and called from `network`.

pub mod attention;
pub mod elementwise;
pub mod frame;
pub mod gemm;
pub mod network;
pub mod weights;
pub mod workspace;

pub use gemm::{Dispatch, GemmBindings, GemmShape};
pub use network::{Keep, NetworkOptions, NetworkRecorder};
pub use weights::GpuWeights;
pub use workspace::Workspace;

use crate::gpu::GpuError;

/// Why recording the network failed.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    #[error("gpu: {0}")]
    Gpu(#[from] GpuError),
    #[error("weights: {0}")]
    Weights(String),
    #[error("graph: {0}")]
    Graph(String),
}
