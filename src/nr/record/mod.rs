//! The GPU executor of the exact route: records the schedule of `nr::graph` into a caller's
//! command buffer.
//!
//! * `weights` — a model on the device (records in place + re-laid matrices), shared per device;
//! * `workspace` — the tensors of one schedule in one buffer, memory shared between tensors whose
//!   lifetimes do not overlap;
//! * `gemm` — the grouped FP8 GEMM, the input adapter and the head (exact emulation of the MMA
//!   profiles in integer and float arithmetic, no cooperative matrices);
//! * `network` — [`NetworkRecorder`]: every node of the graph, barriers, timestamps, readback;
//! * `passes` — prepare/compose around the network and the bridge to the caller's images;
//! * `bands` — launches within the device's limits: the row bands a node (or a frame pass) runs
//!   in when one binding would exceed `maxStorageBufferRange` or a grid
//!   `maxComputeWorkGroupCount`;
//! * `strips` — window blocks run band by band, so their intermediates hold one band's rows.
//!
//! The attention and element-wise kernels (`attention`, `elementwise`) are called from
//! `network`. The GEMM and attention kernels come in two builds each (round-toward-zero FMA
//! terms, or exact float products); `policy` ([`KernelPolicy`]) picks one per device and
//! profile, once, when a network is created. Every kernel comes as `prepare_*` (a
//! [`Dispatch`] built once) and a `record_*` convenience that prepares and records.

pub mod attention;
pub mod attention_block;
pub mod bands;
pub mod elementwise;
pub mod fusion;
pub mod gemm;
pub mod gemm_ffn;
pub mod gemm_norm;
pub mod network;
pub mod passes;
pub mod policy;
pub mod strips;
pub mod weights;
pub mod workspace;

pub use bands::{BindLimits, RangeError};
pub use gemm::{Dispatch, GemmBindings, GemmShape};
pub use network::{Keep, NetworkOptions, NetworkRecorder};
pub use policy::{KernelBuild, KernelPolicy};
pub use weights::{FeatureWeights, GpuWeights};
pub use workspace::Workspace;

use crate::gpu::{BufferBinding, GpuError};

/// Refuse a binding shorter than the `bytes` a kernel reads or writes through it (`what` names
/// the binding).
pub(crate) fn need(what: &str, b: &BufferBinding, bytes: u64) -> Result<(), GpuError> {
    if b.range < bytes {
        return Err(GpuError::invalid(
            what,
            format!(
                "{} bytes bound where the kernel needs {bytes}: {} more needed",
                b.range,
                bytes - b.range
            ),
        ));
    }
    Ok(())
}

/// Why recording the network failed.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    #[error("gpu: {0}")]
    Gpu(#[from] GpuError),
    #[error("weights: {0}")]
    Weights(String),
    #[error("graph: {0}")]
    Graph(String),
    /// The size does not fit the device's limits (found before anything is recorded).
    #[error("device limits: {0}")]
    Limits(#[from] RangeError),
}
