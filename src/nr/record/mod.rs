//! The GPU executor of the exact route: records the schedule of `nr::graph` into a caller's
//! command buffer.
//!
//! * `weights` — a model on the device (records in place + re-laid matrices), shared per device;
//! * `workspace` — the tensors of one schedule in one buffer, memory shared between tensors whose
//!   lifetimes do not overlap;
//! * `gemm` — the grouped FP8 GEMM, the input adapter and the head (exact emulation of the MMA
//!   profiles in integer and float arithmetic, no cooperative matrices);
//! * `network` — [`NetworkRecorder`]: every node of the graph, barriers, timestamps, readback;
//! * `frame` — prepare/compose around the network and the bridge to the caller's images.
//!
//! The attention and element-wise kernels (`attention`, `elementwise`) are called from
//! `network`. The GEMM and attention kernels come in two builds each (round-toward-zero FMA
//! terms, or exact float products); `use_rtz_kernels` picks one per device and profile.

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

use crate::gpu::{BufferBinding, GpuContext, GpuError};

/// Whether a kernel that runs in the round-toward-zero f32 mode may compute the terms of a
/// profile with `frac_bits` fraction bits on this device: the device must offer that mode with
/// round-to-nearest-even and preserved subnormals for f16 results in the same shader
/// ([`Capabilities::rtz_kernels`](crate::gpu::Capabilities::rtz_kernels)) and the profile must
/// be F13-like (P = 13, which the one-FMA term trick needs). Otherwise the portable kernels
/// (exact float products, integer rounding) run; both give the same bytes. `OPENNGX_PORTABLE_KERNELS=1` forces the portable kernels (to measure them, or to
/// check them on a device that has the mode).
pub(crate) fn use_rtz_kernels(ctx: &GpuContext, frac_bits: i32) -> bool {
    frac_bits == 13 && use_rtz_mode(ctx)
}

/// Whether kernels may run in the round-toward-zero f32 mode beside native f16 arithmetic
/// whatever the profile (the normalisation's fused squares use the fast form of f16.glsl).
pub(crate) fn use_rtz_mode(ctx: &GpuContext) -> bool {
    ctx.capabilities().rtz_kernels() && !portable_forced()
}

/// Whether kernels with an f16-native build (the normalisation, whose native build is also its
/// cooperative layout: `attention::NormalizeKernel`) may use it on this device
/// ([`Capabilities::native_f16`](crate::gpu::Capabilities::native_f16)); same bytes either way.
pub(crate) fn use_native_f16(ctx: &GpuContext) -> bool {
    ctx.capabilities().native_f16() && !portable_forced()
}

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

/// `OPENNGX_PORTABLE_KERNELS=1`: run the portable builds everywhere.
fn portable_forced() -> bool {
    std::env::var("OPENNGX_PORTABLE_KERNELS").is_ok_and(|v| v == "1")
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
}
