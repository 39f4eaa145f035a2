//! A Vulkan device owned by the command-line tools (`bench`, `parity --route gpu`, `verify`).
//!
//! The library itself never creates a device: NGX callers hand theirs over. The tools have no
//! caller, so they play one: an instance (with the Khronos validation layer when
//! `OPENNGX_VALIDATION=1` and the layer is installed), the exact route's device features, one
//! compute queue, and a `submit` helper that records, submits and waits.

use std::ffi::CStr;
use std::sync::Arc;

use ash::vk;

use openngx::gpu::{Capabilities, GpuContext, GpuError, Recorder};
use openngx::nr::route::ExactRoute;

const VALIDATION_LAYER: &CStr = c"VK_LAYER_KHRONOS_validation";

/// A device the tool owns, plus its queue and command pool.
pub struct StandaloneDevice {
    _entry: ash::Entry,
    instance: ash::Instance,
    physical: vk::PhysicalDevice,
    device: ash::Device,
    queue: vk::Queue,
    pool: vk::CommandPool,
    ctx: Option<Arc<GpuContext>>,
    pub capabilities: Capabilities,
}

fn vk_err(call: &'static str) -> impl Fn(vk::Result) -> GpuError {
    move |result| GpuError::Vk { call, result }
}

impl StandaloneDevice {
    /// Open device `index` of those that support the exact route (discrete GPUs first), or the
    /// first one when `index` is `None`. With `statistics` the device also gets
    /// `VK_KHR_pipeline_executable_properties` when it offers it, so that the context's
    /// [`GpuContext::pipeline_statistics`] reports what the driver made of each kernel.
    pub fn open_with(index: Option<usize>, statistics: bool) -> Result<StandaloneDevice, GpuError> {
        // SAFETY: loading the system's Vulkan loader runs its initialisation, which we trust;
        // `entry` is kept in the returned device, so its functions outlive every use.
        let entry = unsafe { ash::Entry::load() }.map_err(|e| {
            GpuError::invalid("Vulkan loader", format!("cannot load libvulkan: {e}"))
        })?;
        let want_validation = std::env::var("OPENNGX_VALIDATION").as_deref() == Ok("1");
        // SAFETY: a global query on the loaded entry; it needs no instance.
        let layers = unsafe { entry.enumerate_instance_layer_properties() }.unwrap_or_default();
        let validation = want_validation
            && layers
                .iter()
                .any(|l| l.layer_name_as_c_str().ok() == Some(VALIDATION_LAYER));
        let app = vk::ApplicationInfo::default()
            .application_name(c"openngx")
            .api_version(vk::API_VERSION_1_2);
        let layer_names = [VALIDATION_LAYER.as_ptr()];
        let mut info = vk::InstanceCreateInfo::default().application_info(&app);
        if validation {
            info = info.enabled_layer_names(&layer_names);
        }
        // SAFETY: `info` and what it points to (`app`, `layer_names`) are locals alive for the
        // call; the validation layer is named only when it was enumerated above.
        let instance =
            unsafe { entry.create_instance(&info, None) }.map_err(vk_err("vkCreateInstance"))?;
        let fail = |e: GpuError| {
            // SAFETY: used only on the error paths below, before any device is created from
            // `instance` (or after it was destroyed), and the instance is not used afterwards.
            unsafe { instance.destroy_instance(None) };
            e
        };
        // SAFETY: `instance` was created above and is alive.
        let physicals = unsafe { instance.enumerate_physical_devices() }
            .map_err(vk_err("vkEnumeratePhysicalDevices"));
        let physicals = match physicals {
            Ok(p) => p,
            Err(e) => return Err(fail(e)),
        };
        let mut usable: Vec<(u32, vk::PhysicalDevice, Capabilities)> = Vec::new();
        let mut rejected = Vec::new();
        for pd in physicals {
            // SAFETY: `pd` was just enumerated from this live `instance`.
            let caps = unsafe { Capabilities::query(&instance, pd) };
            let missing = ExactRoute::missing(&caps);
            if missing.is_empty() {
                let rank = match caps.device_type {
                    vk::PhysicalDeviceType::DISCRETE_GPU => 0,
                    vk::PhysicalDeviceType::INTEGRATED_GPU => 1,
                    vk::PhysicalDeviceType::VIRTUAL_GPU => 2,
                    _ => 3,
                };
                usable.push((rank, pd, caps));
            } else {
                rejected.push(format!(
                    "{}: missing {}",
                    caps.device_name,
                    missing.join(", ")
                ));
            }
        }
        usable.sort_by_key(|u| u.0);
        let pick = match index {
            Some(i) => usable.into_iter().nth(i),
            None => usable.into_iter().next(),
        };
        let Some((_, physical, caps)) = pick else {
            return Err(fail(GpuError::invalid(
                "Vulkan device",
                format!(
                    "no usable device{} [{}]",
                    index.map_or(String::new(), |i| format!(" #{i}")),
                    rejected.join("; ")
                ),
            )));
        };
        // SAFETY: `physical` was enumerated from this live `instance`.
        let families = unsafe { instance.get_physical_device_queue_family_properties(physical) };
        let Some(family) = families
            .iter()
            .position(|f| f.queue_flags.contains(vk::QueueFlags::COMPUTE))
        else {
            return Err(fail(GpuError::invalid(
                &caps.device_name,
                "no compute queue",
            )));
        };
        let priorities = [1.0f32];
        let queues = [vk::DeviceQueueCreateInfo::default()
            .queue_family_index(family as u32)
            .queue_priorities(&priorities)];
        let mut f11 = vk::PhysicalDeviceVulkan11Features::default();
        let mut f12 = vk::PhysicalDeviceVulkan12Features::default();
        ExactRoute::enable_features(&mut f11, &mut f12);
        let stats_ext = ash::khr::pipeline_executable_properties::NAME;
        let statistics = statistics
            // SAFETY: `physical` was enumerated from this live `instance`.
            && unsafe { instance.enumerate_device_extension_properties(physical) }
                .unwrap_or_default()
                .iter()
                .any(|e| e.extension_name_as_c_str().ok() == Some(stats_ext));
        let extensions = [stats_ext.as_ptr()];
        let mut fstats = vk::PhysicalDevicePipelineExecutablePropertiesFeaturesKHR::default()
            .pipeline_executable_info(true);
        let mut dinfo = vk::DeviceCreateInfo::default()
            .queue_create_infos(&queues)
            .push_next(&mut f11)
            .push_next(&mut f12);
        if statistics {
            dinfo = dinfo
                .enabled_extension_names(&extensions)
                .push_next(&mut fstats);
        }
        // SAFETY: `physical` belongs to `instance`; `dinfo`'s chain (queues, priorities, the
        // feature structs, the extension name) are locals alive for the call; the family index
        // was read from this device, and the statistics extension is named only when offered.
        let device = match unsafe { instance.create_device(physical, &dinfo, None) } {
            Ok(d) => d,
            Err(e) => {
                return Err(fail(GpuError::Vk {
                    call: "vkCreateDevice",
                    result: e,
                }))
            }
        };
        // SAFETY: the device was created with one queue of family `family` (index 0).
        let queue = unsafe { device.get_device_queue(family as u32, 0) };
        let pinfo = vk::CommandPoolCreateInfo::default()
            .queue_family_index(family as u32)
            .flags(vk::CommandPoolCreateFlags::RESET_COMMAND_BUFFER);
        // SAFETY: `device` was just created with a queue of `family`; `pinfo` is a local.
        let pool = match unsafe { device.create_command_pool(&pinfo, None) } {
            Ok(p) => p,
            Err(e) => {
                // SAFETY: `device` was just created and nothing has been created on it or
                // submitted to it; it is not used afterwards (`fail` then destroys the instance).
                unsafe { device.destroy_device(None) };
                return Err(fail(GpuError::Vk {
                    call: "vkCreateCommandPool",
                    result: e,
                }));
            }
        };
        let mut me = StandaloneDevice {
            instance,
            physical,
            device,
            queue,
            pool,
            ctx: None,
            capabilities: caps,
            _entry: entry,
        };
        let gipa = me._entry.static_fn().get_instance_proc_addr;
        let gdpa = me.instance.fp_v1_0().get_device_proc_addr;
        // SAFETY: the handles are ours and valid; `physical` belongs to `instance` and `device`
        // was created from it with the exact route's features; `me` owns them and drops the
        // context before destroying them (see `Drop`), so they outlive it.
        let ctx = unsafe {
            GpuContext::from_caller(
                me.instance.handle(),
                me.physical,
                me.device.handle(),
                gipa,
                Some(gdpa),
            )
        }?;
        if statistics {
            // SAFETY: the extension and its feature are enabled on this device (above).
            unsafe { ctx.capture_pipeline_statistics() };
        }
        me.ctx = Some(ctx);
        Ok(me)
    }

    /// The library's context on this device.
    pub fn context(&self) -> &Arc<GpuContext> {
        self.ctx.as_ref().expect("set in open")
    }

    /// Record with `f` into a fresh command buffer, submit it and wait (up to 10 minutes).
    pub fn submit<R>(
        &self,
        f: impl FnOnce(&mut Recorder<'_>) -> Result<R, GpuError>,
    ) -> Result<R, GpuError> {
        let info = vk::CommandBufferAllocateInfo::default()
            .command_pool(self.pool)
            .level(vk::CommandBufferLevel::PRIMARY)
            .command_buffer_count(1);
        // SAFETY: `self.pool` is our live pool on `self.device`; the tools submit from one
        // thread at a time, so the pool is externally synchronised.
        let cmd = unsafe { self.device.allocate_command_buffers(&info) }
            .map_err(vk_err("vkAllocateCommandBuffers"))?[0];
        let result = (|| {
            let begin = vk::CommandBufferBeginInfo::default()
                .flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT);
            // SAFETY: `cmd` was just allocated from our pool and is in the initial state.
            unsafe { self.device.begin_command_buffer(cmd, &begin) }
                .map_err(vk_err("vkBeginCommandBuffer"))?;
            // SAFETY: `cmd` is recording, belongs to the context's device, is used only by this
            // thread while `rec` lives, and its pool's family supports compute.
            let mut rec = unsafe { Recorder::new(self.context(), cmd) }?;
            let r = f(&mut rec)?;
            // SAFETY: `cmd` is recording and the recorder that used it has been dropped.
            unsafe { self.device.end_command_buffer(cmd) }.map_err(vk_err("vkEndCommandBuffer"))?;
            // SAFETY: a default (unsignalled) fence on our live device.
            let fence = unsafe {
                self.device
                    .create_fence(&vk::FenceCreateInfo::default(), None)
            }
            .map_err(vk_err("vkCreateFence"))?;
            let cmds = [cmd];
            let submit = vk::SubmitInfo::default().command_buffers(&cmds);
            // SAFETY: `cmd` is executable (ended above) and submitted once (ONE_TIME_SUBMIT);
            // `fence` is fresh and unsignalled; the queue is used only from this thread.
            let waited = unsafe { self.device.queue_submit(self.queue, &[submit], fence) }
                .map_err(vk_err("vkQueueSubmit"))
                .and_then(|_| {
                    let waited =
                        // SAFETY: `fence` is our live fence, just submitted with the work.
                        unsafe { self.device.wait_for_fences(&[fence], true, 600_000_000_000) };
                    match waited {
                        Ok(()) => Ok(()),
                        // A whole network on a loaded software device can outlast the wait; the
                        // command buffer must not be freed while it executes. Wait for the queue
                        // to drain: only a real failure (device lost) is an error.
                        // SAFETY: waiting on our own device; no other thread uses its queue.
                        Err(vk::Result::TIMEOUT) => unsafe { self.device.device_wait_idle() }
                            .map_err(vk_err("vkDeviceWaitIdle")),
                        Err(e) => {
                            // SAFETY: as above, our own device, its queue used only here.
                            let _ = unsafe { self.device.device_wait_idle() };
                            Err(vk_err("vkWaitForFences")(e))
                        }
                    }
                });
            // SAFETY: `fence` is ours; the work it guards has completed (waited for above) or
            // was never submitted, so no queue operation still refers to it.
            unsafe { self.device.destroy_fence(fence, None) };
            waited.map(|_| r)
        })();
        // SAFETY: `cmd` came from `self.pool`; it is not pending: it was never submitted, or
        // its fence signalled, or the device went idle (or was lost) above.
        unsafe { self.device.free_command_buffers(self.pool, &[cmd]) };
        result
    }
}

impl Drop for StandaloneDevice {
    fn drop(&mut self) {
        // SAFETY: all handles are ours; waiting for the device to go idle means no work still
        // uses the pool, the device or the instance, and they are destroyed children first.
        unsafe {
            let _ = self.device.device_wait_idle();
            // The context (allocator, pipelines) must go before the device; every other holder
            // of it (recorders, weights) must have been dropped by now.
            self.ctx = None;
            self.device.destroy_command_pool(self.pool, None);
            self.device.destroy_device(None);
            self.instance.destroy_instance(None);
        }
    }
}
