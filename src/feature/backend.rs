//! The two traits a network implements: [`Backend`] (one per feature, shared by every device
//! and thread) creates [`Instance`]s (one per created feature), each with the network's own
//! typed creation parameters and evaluation inputs.

use std::path::Path;

use ash::vk;

use super::{DeviceContext, FeatureError, Route};

/// Creates instances of one feature. Implementations must be thread-safe (one backend serves
/// every caller); they own nothing of the caller except the Vulkan objects they create.
pub trait Backend: Send + Sync {
    /// The network's validated creation parameters.
    type Create;
    /// The network's validated inputs of one evaluation.
    type Eval;

    /// Short name for log lines (e.g. `"dlss-nr"`; the route an instance runs is its own report).
    fn name(&self) -> &str;

    /// Creates an instance on `device` with the model in `model_dir` (empty for a feature that
    /// needs none). `cmd` is the caller's command buffer in the recording state: the backend
    /// may record one-time work (uploads, layout transitions) into it and must not submit it.
    fn create(
        &self,
        device: &DeviceContext,
        model_dir: &Path,
        params: &Self::Create,
        cmd: vk::CommandBuffer,
    ) -> Result<Box<dyn Instance<Self::Eval>>, FeatureError>;

    /// Device memory in bytes the feature keeps in total (all instances, caches).
    fn memory_in_use(&self) -> u64 {
        0
    }

    /// The application shut down (or initialises anew) `device`: drop whatever the backend keeps
    /// for it between features. Called after every instance on the device was released.
    fn device_shutdown(&self, device: vk::Device) {
        let _ = device;
    }
}

/// One created feature.
pub trait Instance<E>: Send {
    /// Records one frame into `cmd` (the caller's recording command buffer). A refused frame
    /// leaves the instance as it was; never submits.
    fn evaluate(&mut self, cmd: vk::CommandBuffer, inputs: &E) -> Result<(), FeatureError>;

    /// Frees the instance's device objects. Called exactly once, after the application promised
    /// that no command buffer using the instance is still in flight.
    fn release(self: Box<Self>);

    /// Where the instance runs, for the caller and the log (`None`: a feature with no network
    /// route).
    fn route_report(&self) -> Option<RouteReport> {
        None
    }
}

/// Where a created instance runs.
#[derive(Clone, Debug, PartialEq)]
pub struct RouteReport {
    pub route: Route,
    /// The MMA profile its bytes follow (`"f13"`, `"h25"`).
    pub profile: &'static str,
    /// The route's own description (kernels, probe).
    pub detail: String,
    /// Why the library's automatic choice did not take the tensor route, when it did not.
    pub not_tensor: Option<String>,
}
