//! The device the command-line tools (`bench`, `parity --route gpu`, `verify`) own: the
//! caller-device kit ([`openngx_tools::devkit`]) opened the tools' way (the Khronos validation
//! layer when `OPENNGX_VALIDATION=1` and it is installed; `VK_KHR_pipeline_executable_properties`
//! for pipeline statistics), plus the library's context on it and a `submit` through a
//! [`Recorder`].

use std::sync::Arc;

use ash::vk;

use openngx::gpu::{Capabilities, GpuContext, GpuError, Recorder};
use openngx_tools::devkit::{CallerDevice, DeviceChoice, KitError, Options};

/// How long `submit` waits before draining the device instead (10 minutes).
const WAIT_NS: u64 = 600_000_000_000;

/// A device the tool owns, with the library's context on it. Field order is drop order: the
/// context goes before the device.
pub struct StandaloneDevice {
    ctx: Option<Arc<GpuContext>>,
    kit: CallerDevice,
    pub capabilities: Capabilities,
}

/// The kit's refusal in the words the tools have always printed.
fn open_error(e: KitError) -> GpuError {
    match e {
        KitError::Loader(e) => {
            GpuError::invalid("Vulkan loader", format!("cannot load libvulkan: {e}"))
        }
        KitError::NoDevice { .. } => GpuError::invalid("Vulkan device", e.to_string()),
        KitError::NoComputeQueue(device) => GpuError::invalid(device, "no compute queue"),
        KitError::CreateDevice { result, .. } => GpuError::Vk {
            call: "vkCreateDevice",
            result,
        },
        e => e.into(),
    }
}

impl StandaloneDevice {
    /// Open device `index` of those that support the exact route (discrete GPUs first), or the
    /// first one when `index` is `None`. With `statistics` the device also gets
    /// `VK_KHR_pipeline_executable_properties` when it offers it, so that the context's
    /// [`GpuContext::pipeline_statistics`] reports what the driver made of each kernel.
    pub fn open_with(index: Option<usize>, statistics: bool) -> Result<StandaloneDevice, GpuError> {
        let stats_ext = ash::khr::pipeline_executable_properties::NAME;
        let extensions = [stats_ext];
        let kit = CallerDevice::open(&Options {
            app_name: c"openngx",
            validation: std::env::var("OPENNGX_VALIDATION").as_deref() == Ok("1"),
            collect_errors: false,
            device: index.map_or(DeviceChoice::Best, DeviceChoice::Ranked),
            optional_extensions: if statistics { &extensions } else { &[] },
            ..Options::default()
        })
        .map_err(open_error)?;
        // SAFETY: `StandaloneDevice` keeps the context in `ctx`, which is dropped before `kit`
        // (field order, and `Drop` clears it first).
        let ctx = unsafe { kit.context() }?;
        if kit.has_extension(stats_ext) {
            // SAFETY: the extension and its feature are enabled on this device (the kit enables
            // the feature with the extension).
            unsafe { ctx.capture_pipeline_statistics() };
        }
        Ok(StandaloneDevice {
            capabilities: kit.capabilities.clone(),
            ctx: Some(ctx),
            kit,
        })
    }

    /// The library's context on this device.
    pub fn context(&self) -> &Arc<GpuContext> {
        self.ctx.as_ref().expect("set in open")
    }

    /// Record with `f` into a fresh command buffer, submit it and wait (up to 10 minutes, then
    /// until the device drains).
    pub fn submit<R>(
        &self,
        f: impl FnOnce(&mut Recorder<'_>) -> Result<R, GpuError>,
    ) -> Result<R, GpuError> {
        self.kit.submit(WAIT_NS, |cmd: vk::CommandBuffer| {
            // SAFETY: `cmd` is recording, belongs to the context's device, is used only by this
            // thread while `rec` lives, and its pool's family supports compute.
            let mut rec = unsafe { Recorder::new(self.context(), cmd) }?;
            f(&mut rec)
        })
    }
}

impl Drop for StandaloneDevice {
    fn drop(&mut self) {
        // The context (allocator, pipelines) must go before the device, once no work uses it;
        // every other holder of it (recorders, weights) must have been dropped by now.
        let _ = self.kit.wait_idle();
        self.ctx = None;
    }
}
