//! Typed errors of the GPU layer. Every Vulkan failure names the call that failed; nothing in
//! `gpu` panics on a driver error.

use ash::vk;

/// Anything the GPU layer can fail with.
#[derive(Debug, thiserror::Error)]
pub enum GpuError {
    /// A Vulkan call returned an error code.
    #[error("Vulkan call `{call}` failed: {result}")]
    Vk {
        call: &'static str,
        result: vk::Result,
    },
    /// A handle the caller passed is null.
    #[error("the caller passed a null `{0}`")]
    NullHandle(&'static str),
    /// A function pointer could not be resolved through the caller's `vkGet*ProcAddr`.
    #[error("`{0}` could not be loaded through the caller's proc addr")]
    MissingFunction(&'static str),
    /// The device lacks features a route needs; the route and every missing item are named.
    #[error("device `{device}` cannot run the {route} route, missing: {}", missing.join(", "))]
    MissingCapabilities {
        device: String,
        /// `exact` or `tensor`.
        route: &'static str,
        missing: Vec<String>,
    },
    /// gpu-allocator failed.
    #[error("allocation of `{name}` ({size} bytes) failed: {source}")]
    Alloc {
        name: String,
        size: u64,
        #[source]
        source: gpu_allocator::AllocationError,
    },
    /// No embedded SPIR-V has that key.
    #[error("no embedded shader `{0}` (keys are paths under shaders/ without extension)")]
    UnknownShader(String),
    /// A request that does not fit the object it was made on (range, size, count).
    #[error("{what}: {detail}")]
    Invalid { what: String, detail: String },
}

impl GpuError {
    /// Build a [`GpuError::Invalid`].
    pub fn invalid(what: impl Into<String>, detail: impl Into<String>) -> Self {
        GpuError::Invalid {
            what: what.into(),
            detail: detail.into(),
        }
    }
}

/// Attach the Vulkan call name to a raw `VkResult`.
pub(crate) trait VkContext<T> {
    fn vk(self, call: &'static str) -> Result<T, GpuError>;
}

impl<T> VkContext<T> for Result<T, vk::Result> {
    fn vk(self, call: &'static str) -> Result<T, GpuError> {
        self.map_err(|result| GpuError::Vk { call, result })
    }
}
