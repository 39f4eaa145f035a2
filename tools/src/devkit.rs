//! The caller-device kit: the one place the tools, the demo and the tests play the NGX caller.
//!
//! The shipped library never creates an instance, a device or a queue; whoever drives it must.
//! [`CallerDevice::open`] loads the Vulkan loader, creates the instance (optionally with
//! `VK_LAYER_KHRONOS_validation`, and a debug-utils messenger that collects error messages into an
//! [`ErrorLog`]), picks a physical device that can run the exact route
//! ([`ExactRoute::missing`]; real GPUs before CPU implementations, or a chosen index), creates the
//! device with the route's features ([`ExactRoute::enable_features`]) plus whichever optional
//! extensions it offers, one compute queue and a command pool. It then records, submits and waits
//! ([`CallerDevice::submit`]), and makes host-visible buffers ([`HostBuffer`]) and device-local
//! images ([`DeviceImage`]). Every failure is a typed [`KitError`]; nothing here panics.
//!
//! Drop every object made on the device (buffers, images, the library's context) before the kit.

use std::cell::Cell;
use std::ffi::{c_void, CStr};
use std::marker::PhantomData;
use std::sync::{Arc, Mutex};

use ash::vk;
use openngx::gpu::{Capabilities, GpuContext, GpuError};
use openngx::nr::route::{tensor, ExactRoute, TensorRoute};

const VALIDATION_LAYER: &CStr = c"VK_LAYER_KHRONOS_validation";

/// The validation layer's `enables` setting (its environment variable `VK_LAYER_ENABLES`) that
/// turns synchronization validation on within command buffers and between submissions. The
/// layer reads it when an instance is created; the second check has no `VkValidationFeaturesEXT`
/// value in the layer versions CI uses (1.3.239), so the environment is the one way to ask.
pub const SYNC_VALIDATION_ENABLES: &str = "VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT:VALIDATION_CHECK_ENABLE_SYNCHRONIZATION_VALIDATION_QUEUE_SUBMIT";

/// Which physical device to open.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeviceChoice {
    /// The best device that can run the exact route (discrete, integrated, virtual, then others).
    Best,
    /// The `n`th of the devices that can run the exact route, in that order (0 = [`Self::Best`]).
    Ranked(usize),
    /// Device `i` as the loader enumerates them; it must be able to run the exact route.
    Listed(usize),
}

/// What to open.
#[derive(Clone, Debug)]
pub struct Options<'a> {
    /// The application name the instance reports.
    pub app_name: &'a CStr,
    /// Enable the Khronos validation layer when it is installed.
    pub validation: bool,
    /// Enable `VK_EXT_debug_utils` when offered and collect error messages into [`ErrorLog`].
    pub collect_errors: bool,
    /// With the validation layer: its synchronization validation (hazards between commands of a
    /// command buffer; between submissions too where `VK_LAYER_ENABLES` names
    /// `VALIDATION_CHECK_ENABLE_SYNCHRONIZATION_VALIDATION_QUEUE_SUBMIT`, see
    /// [`SYNC_VALIDATION_ENABLES`]).
    pub sync_validation: bool,
    /// With the validation layer: GPU-assisted validation (shaders instrumented to report
    /// out-of-bounds descriptor and buffer accesses). Slow; for the kernel tests.
    pub gpu_assisted: bool,
    /// Which device.
    pub device: DeviceChoice,
    /// Device extensions enabled where the device offers them (see
    /// [`CallerDevice::has_extension`]); `VK_KHR_pipeline_executable_properties` also gets its
    /// feature enabled.
    pub optional_extensions: &'a [&'static CStr],
}

impl Default for Options<'_> {
    fn default() -> Self {
        Options {
            app_name: c"openngx",
            validation: false,
            collect_errors: false,
            sync_validation: false,
            gpu_assisted: false,
            device: DeviceChoice::Best,
            optional_extensions: &[],
        }
    }
}

/// Why the kit could not do what it was asked.
#[derive(Debug, thiserror::Error)]
pub enum KitError {
    /// `libvulkan` could not be loaded.
    #[error("cannot load libvulkan: {0}")]
    Loader(String),
    /// A Vulkan call returned an error code.
    #[error("Vulkan call `{call}` failed: {result}")]
    Vk {
        call: &'static str,
        result: vk::Result,
    },
    /// No device can run the exact route (or fewer than `index + 1` can); `rejected` names each
    /// device that cannot and what it lacks (`name: missing a, b`).
    #[error(
        "no usable device{} [{}]",
        index.map_or(String::new(), |i| format!(" #{i}")),
        rejected.join("; ")
    )]
    NoDevice {
        index: Option<usize>,
        rejected: Vec<String>,
    },
    /// [`DeviceChoice::Listed`] past the end of the list; `listed` names every device.
    #[error("device {index}: there are {} device(s) [{}]", listed.len(), listed.join(", "))]
    NoSuchDevice { index: usize, listed: Vec<String> },
    /// [`DeviceChoice::Listed`] names a device that cannot run the exact route.
    #[error("device {index} ({device}) cannot run the exact route, missing: {}", missing.join(", "))]
    Unsuitable {
        index: usize,
        device: String,
        missing: Vec<String>,
    },
    /// The chosen device has no queue family with compute.
    #[error("{0} has no compute queue")]
    NoComputeQueue(String),
    /// `vkCreateDevice` failed on the named device.
    #[error("vkCreateDevice on {device}: {result}")]
    CreateDevice { device: String, result: vk::Result },
    /// No memory type of the device has the wanted properties.
    #[error("no memory type with {0:?}")]
    NoMemoryType(vk::MemoryPropertyFlags),
    /// A host access outside a buffer.
    #[error("{len} bytes at {offset} overflow a {size}-byte buffer")]
    OutOfRange { offset: u64, len: u64, size: u64 },
    /// The library refused the device.
    #[error(transparent)]
    Gpu(#[from] GpuError),
}

impl From<KitError> for GpuError {
    fn from(e: KitError) -> GpuError {
        match e {
            KitError::Vk { call, result } => GpuError::Vk { call, result },
            KitError::Gpu(e) => e,
            e => GpuError::invalid("Vulkan caller device", e.to_string()),
        }
    }
}

fn vk_err(call: &'static str) -> impl Fn(vk::Result) -> KitError {
    move |result| KitError::Vk { call, result }
}

/// The validation errors a messenger collected; clones share one log, which outlives the kit (so
/// that errors reported while the device is destroyed can still be read).
#[derive(Clone, Debug, Default)]
pub struct ErrorLog(Arc<Mutex<Vec<String>>>);

impl ErrorLog {
    /// The messages collected so far.
    pub fn errors(&self) -> Vec<String> {
        self.0.lock().map(|e| e.clone()).unwrap_or_default()
    }

    /// The messages collected so far, forgotten by the log.
    pub fn take(&self) -> Vec<String> {
        self.0
            .lock()
            .map(|mut e| std::mem::take(&mut *e))
            .unwrap_or_default()
    }
}

unsafe extern "system" fn on_message(
    severity: vk::DebugUtilsMessageSeverityFlagsEXT,
    _types: vk::DebugUtilsMessageTypeFlagsEXT,
    data: *const vk::DebugUtilsMessengerCallbackDataEXT<'_>,
    user: *mut c_void,
) -> vk::Bool32 {
    if severity.contains(vk::DebugUtilsMessageSeverityFlagsEXT::ERROR) && !user.is_null() {
        // SAFETY: `user` is the `Mutex` inside the kit's `ErrorLog`, which the kit keeps alive
        // until it has destroyed the messenger.
        let errors = unsafe { &*(user as *const Mutex<Vec<String>>) };
        // SAFETY: the layer passes a valid callback-data struct (or null, checked) whose message
        // is a NUL-terminated string (or null, checked) for the duration of the call.
        let text = unsafe {
            if data.is_null() || (*data).p_message.is_null() {
                "<no message>".to_owned()
            } else {
                CStr::from_ptr((*data).p_message)
                    .to_string_lossy()
                    .into_owned()
            }
        };
        if let Ok(mut e) = errors.lock() {
            e.push(text);
        }
    }
    vk::FALSE
}

type Messenger = (ash::ext::debug_utils::Instance, vk::DebugUtilsMessengerEXT);

/// An instance, a device that can run the exact route, its compute queue and a command pool,
/// owned the way an engine owns them before it hands them to NGX.
pub struct CallerDevice {
    pub entry: ash::Entry,
    pub instance: ash::Instance,
    pub physical: vk::PhysicalDevice,
    pub device: ash::Device,
    pub queue: vk::Queue,
    pub queue_family: u32,
    /// A pool of resettable primary command buffers on `queue_family`.
    pub pool: vk::CommandPool,
    pub capabilities: Capabilities,
    /// `timestampValidBits` of the queue's family (0: it cannot write timestamps).
    pub queue_timestamp_bits: u32,
    /// Whether the validation layer is enabled.
    pub validation_layer: bool,
    /// Whether `VK_EXT_debug_utils` is enabled (and errors are collected).
    pub debug_utils: bool,
    /// Whether the layer's synchronization validation was asked for (through
    /// `VK_EXT_validation_features`).
    pub sync_validation: bool,
    /// Whether the layer's GPU-assisted validation was asked for.
    pub gpu_assisted: bool,
    extensions: Vec<&'static CStr>,
    memory: vk::PhysicalDeviceMemoryProperties,
    messenger: Option<Messenger>,
    log: ErrorLog,
    /// The pool and the queue are externally synchronised: one thread at a time uses the kit.
    _not_sync: PhantomData<Cell<()>>,
}

/// The rank a device type sorts by: real GPUs first, CPU implementations (lavapipe) last.
fn rank(t: vk::PhysicalDeviceType) -> u32 {
    match t {
        vk::PhysicalDeviceType::DISCRETE_GPU => 0,
        vk::PhysicalDeviceType::INTEGRATED_GPU => 1,
        vk::PhysicalDeviceType::VIRTUAL_GPU => 2,
        _ => 3,
    }
}

/// The instance and what was created with it, destroyed on drop unless handed on to the kit.
struct InstanceParts {
    handed_on: bool,
    entry: ash::Entry,
    instance: ash::Instance,
    validation_layer: bool,
    debug_utils: bool,
    sync_validation: bool,
    gpu_assisted: bool,
    messenger: Option<Messenger>,
    log: ErrorLog,
}

impl Drop for InstanceParts {
    fn drop(&mut self) {
        if self.handed_on {
            return;
        }
        // SAFETY: only reached on the error paths of `open` (a successful open hands the handles
        // on to the kit): no device was kept, the messenger was created from this instance, and
        // nothing uses either afterwards.
        unsafe {
            if let Some((du, m)) = self.messenger.take() {
                du.destroy_debug_utils_messenger(m, None);
            }
            self.instance.destroy_instance(None);
        }
    }
}

impl InstanceParts {
    fn create(opts: &Options<'_>) -> Result<InstanceParts, KitError> {
        // SAFETY: loading the system's Vulkan loader runs its initialisation, which we trust;
        // `entry` is kept with the instance, so its functions outlive every use.
        let entry = unsafe { ash::Entry::load() }.map_err(|e| KitError::Loader(e.to_string()))?;
        let validation_layer = opts.validation && {
            // SAFETY: a global query on the loaded entry; it needs no instance.
            let layers = unsafe { entry.enumerate_instance_layer_properties() };
            layers
                .unwrap_or_default()
                .iter()
                .any(|l| l.layer_name_as_c_str().ok() == Some(VALIDATION_LAYER))
        };
        let debug_utils = opts.collect_errors && {
            // SAFETY: a global query on the loaded entry (no layer named); it needs no instance.
            let exts = unsafe { entry.enumerate_instance_extension_properties(None) };
            exts.unwrap_or_default()
                .iter()
                .any(|e| e.extension_name_as_c_str().ok() == Some(ash::ext::debug_utils::NAME))
        };
        let app = vk::ApplicationInfo::default()
            .application_name(opts.app_name)
            .api_version(vk::API_VERSION_1_2);
        let layer_names = [VALIDATION_LAYER.as_ptr()];
        // The validation layer offers VK_EXT_validation_features, whose struct asks for its
        // optional checks.
        let features_ext = validation_layer && (opts.sync_validation || opts.gpu_assisted) && {
            // SAFETY: a global query of the layer's extensions; it needs no instance.
            let exts =
                unsafe { entry.enumerate_instance_extension_properties(Some(VALIDATION_LAYER)) };
            exts.unwrap_or_default().iter().any(|e| {
                e.extension_name_as_c_str().ok() == Some(ash::ext::validation_features::NAME)
            })
        };
        let mut ext_names = Vec::new();
        if debug_utils {
            ext_names.push(ash::ext::debug_utils::NAME.as_ptr());
        }
        if features_ext {
            ext_names.push(ash::ext::validation_features::NAME.as_ptr());
        }
        let mut enables = Vec::new();
        if opts.sync_validation {
            enables.push(vk::ValidationFeatureEnableEXT::SYNCHRONIZATION_VALIDATION);
        }
        if opts.gpu_assisted {
            enables.push(vk::ValidationFeatureEnableEXT::GPU_ASSISTED);
            enables.push(vk::ValidationFeatureEnableEXT::GPU_ASSISTED_RESERVE_BINDING_SLOT);
        }
        let mut features =
            vk::ValidationFeaturesEXT::default().enabled_validation_features(&enables);
        let mut info = vk::InstanceCreateInfo::default()
            .application_info(&app)
            .enabled_extension_names(&ext_names);
        if validation_layer {
            info = info.enabled_layer_names(&layer_names);
        }
        if features_ext {
            info = info.push_next(&mut features);
        }
        // SAFETY: `info` and what it points to (`app`, the layer and extension names, the
        // validation features) are locals alive for the call; the layer and extensions are named
        // only when enumerated above.
        let instance =
            unsafe { entry.create_instance(&info, None) }.map_err(vk_err("vkCreateInstance"))?;
        let mut parts = InstanceParts {
            handed_on: false,
            entry,
            instance,
            validation_layer,
            debug_utils,
            sync_validation: features_ext && opts.sync_validation,
            gpu_assisted: features_ext && opts.gpu_assisted,
            messenger: None,
            log: ErrorLog::default(),
        };
        if debug_utils {
            let du = ash::ext::debug_utils::Instance::new(&parts.entry, &parts.instance);
            let info = vk::DebugUtilsMessengerCreateInfoEXT::default()
                .message_severity(
                    vk::DebugUtilsMessageSeverityFlagsEXT::ERROR
                        | vk::DebugUtilsMessageSeverityFlagsEXT::WARNING,
                )
                .message_type(
                    vk::DebugUtilsMessageTypeFlagsEXT::GENERAL
                        | vk::DebugUtilsMessageTypeFlagsEXT::VALIDATION
                        | vk::DebugUtilsMessageTypeFlagsEXT::PERFORMANCE,
                )
                .pfn_user_callback(Some(on_message))
                .user_data(Arc::as_ptr(&parts.log.0) as *mut c_void);
            // SAFETY: `du` is loaded from our live instance, which enables debug utils; the user
            // data is the log's mutex, which the kit keeps (and so alive) until the messenger is
            // destroyed, and `on_message` only reads it as that type.
            if let Ok(m) = unsafe { du.create_debug_utils_messenger(&info, None) } {
                parts.messenger = Some((du, m));
            }
        }
        Ok(parts)
    }

    /// The physical device `choice` names, with its capabilities.
    fn choose(&self, choice: DeviceChoice) -> Result<(vk::PhysicalDevice, Capabilities), KitError> {
        let instance = &self.instance;
        // SAFETY: `instance` is alive (owned by `self`).
        let physicals = unsafe { instance.enumerate_physical_devices() }
            .map_err(vk_err("vkEnumeratePhysicalDevices"))?;
        let caps: Vec<Capabilities> = physicals
            .iter()
            // SAFETY: each physical device was just enumerated from this live instance.
            .map(|&pd| unsafe {
                Capabilities::query(self.entry.static_fn().get_instance_proc_addr, instance, pd)
            })
            .collect();
        if let DeviceChoice::Listed(i) = choice {
            let Some(cap) = caps.get(i) else {
                return Err(KitError::NoSuchDevice {
                    index: i,
                    listed: caps.iter().map(|c| c.device_name.clone()).collect(),
                });
            };
            let missing = ExactRoute::missing(cap);
            if !missing.is_empty() {
                return Err(KitError::Unsuitable {
                    index: i,
                    device: cap.device_name.clone(),
                    missing,
                });
            }
            return Ok((physicals[i], cap.clone()));
        }
        let mut usable = Vec::new();
        let mut rejected = Vec::new();
        for (pd, cap) in physicals.into_iter().zip(caps) {
            let missing = ExactRoute::missing(&cap);
            if missing.is_empty() {
                usable.push((rank(cap.device_type), pd, cap));
            } else {
                rejected.push(format!(
                    "{}: missing {}",
                    cap.device_name,
                    missing.join(", ")
                ));
            }
        }
        usable.sort_by_key(|u| u.0);
        let index = match choice {
            DeviceChoice::Ranked(n) => Some(n),
            _ => None,
        };
        match usable.into_iter().nth(index.unwrap_or(0)) {
            Some((_, pd, cap)) => Ok((pd, cap)),
            None => Err(KitError::NoDevice { index, rejected }),
        }
    }
}

impl CallerDevice {
    /// Open the instance and the device `opts` describe.
    pub fn open(opts: &Options<'_>) -> Result<CallerDevice, KitError> {
        let parts = InstanceParts::create(opts)?;
        let (physical, caps) = parts.choose(opts.device)?;
        let instance = &parts.instance;
        // SAFETY: `physical` was enumerated from this live `instance`.
        let families = unsafe { instance.get_physical_device_queue_family_properties(physical) };
        let Some(family) = families
            .iter()
            .position(|f| f.queue_flags.contains(vk::QueueFlags::COMPUTE))
        else {
            return Err(KitError::NoComputeQueue(caps.device_name));
        };
        let queue_timestamp_bits = families[family].timestamp_valid_bits;
        let queue_family = family as u32;
        // SAFETY: `physical` was enumerated from this live `instance`.
        let offered =
            unsafe { instance.enumerate_device_extension_properties(physical) }.unwrap_or_default();
        // A device that can run the tensor route gets its extension and features, as an
        // application that follows NGX's extension requirements would enable them.
        let tensor_ready = TensorRoute::missing(&caps).is_empty();
        let tensor_exts: &[&'static CStr] = if tensor_ready {
            &tensor::EXTENSIONS
        } else {
            &[]
        };
        let extensions: Vec<&'static CStr> = opts
            .optional_extensions
            .iter()
            .chain(tensor_exts.iter())
            .copied()
            .filter(|&want| {
                offered
                    .iter()
                    .any(|e| e.extension_name_as_c_str().ok() == Some(want))
            })
            .collect();
        let extension_names: Vec<*const std::ffi::c_char> =
            extensions.iter().map(|e| e.as_ptr()).collect();
        let priorities = [1.0f32];
        let queues = [vk::DeviceQueueCreateInfo::default()
            .queue_family_index(queue_family)
            .queue_priorities(&priorities)];
        let mut f11 = vk::PhysicalDeviceVulkan11Features::default();
        let mut f12 = vk::PhysicalDeviceVulkan12Features::default();
        let mut fcoop = vk::PhysicalDeviceCooperativeMatrixFeaturesKHR::default();
        if tensor_ready {
            TensorRoute::enable_features(&mut f11, &mut f12, &mut fcoop);
        } else {
            ExactRoute::enable_features(&mut f11, &mut f12);
        }
        let mut fstats = vk::PhysicalDevicePipelineExecutablePropertiesFeaturesKHR::default()
            .pipeline_executable_info(true);
        // GPU-assisted validation writes its reports from the shaders: the layer needs these two
        // features enabled (where the device has them) or it turns itself off.
        let mut core = vk::PhysicalDeviceFeatures::default();
        if opts.gpu_assisted {
            // SAFETY: `physical` was enumerated from this live `instance`.
            let have = unsafe { instance.get_physical_device_features(physical) };
            core.fragment_stores_and_atomics = have.fragment_stores_and_atomics;
            core.vertex_pipeline_stores_and_atomics = have.vertex_pipeline_stores_and_atomics;
        }
        let mut dinfo = vk::DeviceCreateInfo::default()
            .queue_create_infos(&queues)
            .enabled_features(&core)
            .push_next(&mut f11)
            .push_next(&mut f12);
        if !extension_names.is_empty() {
            dinfo = dinfo.enabled_extension_names(&extension_names);
        }
        if extensions.contains(&ash::khr::pipeline_executable_properties::NAME) {
            dinfo = dinfo.push_next(&mut fstats);
        }
        if tensor_ready {
            dinfo = dinfo.push_next(&mut fcoop);
        }
        // SAFETY: `physical` belongs to `instance`; `dinfo`'s chain (queues, priorities, the
        // feature structs, the extension names) are locals alive for the call; the family index
        // was read from this device, and only extensions it offers are named.
        let device =
            unsafe { instance.create_device(physical, &dinfo, None) }.map_err(|result| {
                KitError::CreateDevice {
                    device: caps.device_name.clone(),
                    result,
                }
            })?;
        // SAFETY: the device was created with one queue of `queue_family` (index 0).
        let queue = unsafe { device.get_device_queue(queue_family, 0) };
        let pinfo = vk::CommandPoolCreateInfo::default()
            .queue_family_index(queue_family)
            .flags(vk::CommandPoolCreateFlags::RESET_COMMAND_BUFFER);
        // SAFETY: `device` was just created with a queue of `queue_family`; `pinfo` is a local.
        let pool = match unsafe { device.create_command_pool(&pinfo, None) } {
            Ok(p) => p,
            Err(result) => {
                // SAFETY: `device` was just created and nothing has been created on it or
                // submitted to it; it is not used afterwards (`parts` then destroys the instance).
                unsafe { device.destroy_device(None) };
                return Err(KitError::Vk {
                    call: "vkCreateCommandPool",
                    result,
                });
            }
        };
        // SAFETY: `physical` was enumerated from this live `instance`.
        let memory = unsafe { instance.get_physical_device_memory_properties(physical) };
        // The kit destroys the instance and the messenger from here on.
        let mut parts = parts;
        parts.handed_on = true;
        let messenger = parts.messenger.take();
        Ok(CallerDevice {
            entry: parts.entry.clone(),
            instance: parts.instance.clone(),
            physical,
            device,
            queue,
            queue_family,
            pool,
            capabilities: caps,
            queue_timestamp_bits,
            validation_layer: parts.validation_layer,
            debug_utils: parts.debug_utils,
            sync_validation: parts.sync_validation,
            gpu_assisted: parts.gpu_assisted,
            extensions,
            memory,
            messenger,
            log: parts.log.clone(),
            _not_sync: PhantomData,
        })
    }

    /// Whether optional device extension `name` was enabled.
    pub fn has_extension(&self, name: &CStr) -> bool {
        self.extensions.contains(&name)
    }

    /// The errors the messenger collected (empty without `collect_errors`).
    pub fn error_log(&self) -> &ErrorLog {
        &self.log
    }

    /// The caller's `vkGetInstanceProcAddr` (from the loader).
    pub fn gipa(&self) -> vk::PFN_vkGetInstanceProcAddr {
        self.entry.static_fn().get_instance_proc_addr
    }

    /// The caller's `vkGetDeviceProcAddr`.
    pub fn gdpa(&self) -> vk::PFN_vkGetDeviceProcAddr {
        self.instance.fp_v1_0().get_device_proc_addr
    }

    /// The library's context on this device, adopted the way NGX adopts a caller's device.
    ///
    /// # Safety
    ///
    /// Every clone of the returned context must be dropped before the kit.
    pub unsafe fn context(&self) -> Result<Arc<GpuContext>, GpuError> {
        // SAFETY: the kit's handles are valid: `physical` belongs to `instance`, `device` was
        // created from it with the exact route's features; the caller drops the context before
        // the kit destroys them.
        unsafe {
            GpuContext::from_caller(
                self.instance.handle(),
                self.physical,
                self.device.handle(),
                self.gipa(),
                Some(self.gdpa()),
            )
        }
    }

    /// A primary command buffer from the kit's pool, in the initial state.
    pub fn allocate_command_buffer(&self) -> Result<vk::CommandBuffer, KitError> {
        let info = vk::CommandBufferAllocateInfo::default()
            .command_pool(self.pool)
            .level(vk::CommandBufferLevel::PRIMARY)
            .command_buffer_count(1);
        // SAFETY: `self.pool` is our live pool; the kit is not `Sync`, so only the thread holding
        // it uses the pool (externally synchronised).
        let cmds = unsafe { self.device.allocate_command_buffers(&info) }
            .map_err(vk_err("vkAllocateCommandBuffers"))?;
        cmds.first().copied().ok_or(KitError::Vk {
            call: "vkAllocateCommandBuffers",
            result: vk::Result::ERROR_UNKNOWN,
        })
    }

    /// Free a command buffer of the kit's pool.
    ///
    /// # Safety
    ///
    /// `cmd` came from [`Self::allocate_command_buffer`] and is not pending.
    pub unsafe fn free_command_buffer(&self, cmd: vk::CommandBuffer) {
        // SAFETY: the caller's contract: `cmd` is ours and no queue still executes it.
        unsafe { self.device.free_command_buffers(self.pool, &[cmd]) };
    }

    /// Reset `cmd` and begin recording it with `flags`.
    ///
    /// # Safety
    ///
    /// `cmd` came from [`Self::allocate_command_buffer`] and is not pending.
    pub unsafe fn begin(
        &self,
        cmd: vk::CommandBuffer,
        flags: vk::CommandBufferUsageFlags,
    ) -> Result<(), KitError> {
        // SAFETY: the caller's contract: `cmd` is from our pool (created resettable) and not
        // pending, so it may be reset and begun.
        unsafe {
            self.device
                .reset_command_buffer(cmd, vk::CommandBufferResetFlags::empty())
                .map_err(vk_err("vkResetCommandBuffer"))?;
            self.device
                .begin_command_buffer(cmd, &vk::CommandBufferBeginInfo::default().flags(flags))
                .map_err(vk_err("vkBeginCommandBuffer"))
        }
    }

    /// End `cmd`, submit it to the queue and wait up to `timeout_ns` for it. Should the wait time
    /// out, the device is drained before returning (the buffer must not be freed while it runs):
    /// only a real failure (device lost) is an error.
    ///
    /// # Safety
    ///
    /// `cmd` came from [`Self::allocate_command_buffer`], is recording, and what it recorded
    /// refers to live objects of this device.
    pub unsafe fn end_submit_wait(
        &self,
        cmd: vk::CommandBuffer,
        timeout_ns: u64,
    ) -> Result<(), KitError> {
        // SAFETY: the caller's contract: `cmd` is recording on our device.
        unsafe { self.device.end_command_buffer(cmd) }.map_err(vk_err("vkEndCommandBuffer"))?;
        // SAFETY: a default (unsignalled) fence on our live device.
        let fence = unsafe {
            self.device
                .create_fence(&vk::FenceCreateInfo::default(), None)
        }
        .map_err(vk_err("vkCreateFence"))?;
        let cmds = [cmd];
        let submit = vk::SubmitInfo::default().command_buffers(&cmds);
        // SAFETY: `cmd` is executable (ended above) and its commands refer to live objects (the
        // caller's contract); `fence` is fresh and unsignalled; the queue is used only from the
        // thread that holds the kit.
        let waited = unsafe { self.device.queue_submit(self.queue, &[submit], fence) }
            .map_err(vk_err("vkQueueSubmit"))
            .and_then(|()| {
                // SAFETY: `fence` is our live fence, just submitted with the work.
                let waited = unsafe { self.device.wait_for_fences(&[fence], true, timeout_ns) };
                match waited {
                    Ok(()) => Ok(()),
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
        // SAFETY: `fence` is ours; the work it guards has completed (waited for above) or was
        // never submitted, so no queue operation still refers to it.
        unsafe { self.device.destroy_fence(fence, None) };
        waited
    }

    /// Record with `f` into a fresh one-time command buffer, submit it and wait (up to
    /// `timeout_ns`, see [`Self::end_submit_wait`]). When `f` fails nothing is submitted. The
    /// buffer is freed either way.
    pub fn submit<R, E: From<KitError>>(
        &self,
        timeout_ns: u64,
        f: impl FnOnce(vk::CommandBuffer) -> Result<R, E>,
    ) -> Result<R, E> {
        let cmd = self.allocate_command_buffer()?;
        let result = (|| {
            // SAFETY: `cmd` was just allocated from our pool and is in the initial state.
            unsafe { self.begin(cmd, vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT) }?;
            let r = f(cmd)?;
            // SAFETY: `cmd` is ours and recording; what `f` recorded is its own business (it
            // needs `unsafe` to record anything, under that call's contract).
            unsafe { self.end_submit_wait(cmd, timeout_ns) }?;
            Ok(r)
        })();
        // SAFETY: `cmd` came from our pool; it is not pending: it was never submitted, or its
        // fence signalled, or the device went idle (or was lost) in `end_submit_wait`.
        unsafe { self.free_command_buffer(cmd) };
        result
    }

    /// Record with `f` into a fresh command buffer and free it without submitting.
    pub fn record_only(&self, f: impl FnOnce(vk::CommandBuffer)) -> Result<(), KitError> {
        let cmd = self.allocate_command_buffer()?;
        // SAFETY: `cmd` was just allocated from our pool and is in the initial state.
        let begun = unsafe { self.begin(cmd, vk::CommandBufferUsageFlags::empty()) };
        if begun.is_ok() {
            f(cmd);
            // SAFETY: `cmd` is recording; it is never submitted.
            let _ = unsafe { self.device.end_command_buffer(cmd) };
        }
        // SAFETY: `cmd` came from our pool and was never submitted.
        unsafe { self.free_command_buffer(cmd) };
        begun
    }

    /// Wait until the device is idle.
    pub fn wait_idle(&self) -> Result<(), KitError> {
        // SAFETY: our own live device; its queue is used only by the thread holding the kit.
        unsafe { self.device.device_wait_idle() }.map_err(vk_err("vkDeviceWaitIdle"))
    }

    fn memory_type(&self, bits: u32, want: vk::MemoryPropertyFlags) -> Result<u32, KitError> {
        (0..self.memory.memory_type_count)
            .find(|&i| {
                bits & (1 << i) != 0
                    && self.memory.memory_types[i as usize]
                        .property_flags
                        .contains(want)
            })
            .ok_or(KitError::NoMemoryType(want))
    }

    /// Memory for `req` from the first type with `want`; the caller binds and frees it.
    fn allocate(
        &self,
        req: vk::MemoryRequirements,
        want: vk::MemoryPropertyFlags,
    ) -> Result<vk::DeviceMemory, KitError> {
        let info = vk::MemoryAllocateInfo::default()
            .allocation_size(req.size)
            .memory_type_index(self.memory_type(req.memory_type_bits, want)?);
        // SAFETY: our live device and a local allocate info with a type index of this device.
        unsafe { self.device.allocate_memory(&info, None) }.map_err(vk_err("vkAllocateMemory"))
    }

    /// A host-visible, coherent buffer of `size` bytes with `usage`, mapped for its whole life.
    pub fn host_buffer(
        &self,
        size: u64,
        usage: vk::BufferUsageFlags,
    ) -> Result<HostBuffer, KitError> {
        let info = vk::BufferCreateInfo::default().size(size).usage(usage);
        // SAFETY: our live device and a local create info.
        let buffer =
            unsafe { self.device.create_buffer(&info, None) }.map_err(vk_err("vkCreateBuffer"))?;
        // Owned from here on: an early return frees what was made.
        let mut out = HostBuffer {
            device: self.device.clone(),
            buffer,
            memory: vk::DeviceMemory::null(),
            size,
            ptr: std::ptr::null_mut(),
        };
        // SAFETY: `buffer` was just created on our device.
        let req = unsafe { self.device.get_buffer_memory_requirements(buffer) };
        out.memory = self.allocate(
            req,
            vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_COHERENT,
        )?;
        // SAFETY: the memory was allocated for this buffer's requirements and is bound once, at
        // offset 0, then mapped over `size` bytes (within the allocation).
        let ptr = unsafe {
            self.device
                .bind_buffer_memory(buffer, out.memory, 0)
                .map_err(vk_err("vkBindBufferMemory"))?;
            self.device
                .map_memory(out.memory, 0, size, vk::MemoryMapFlags::empty())
                .map_err(vk_err("vkMapMemory"))?
        };
        out.ptr = ptr.cast();
        Ok(out)
    }

    /// A device-local 2D image (one mip, one layer, optimal tiling) in `UNDEFINED` layout, with
    /// a colour view when `view` is set.
    pub fn image(
        &self,
        width: u32,
        height: u32,
        format: vk::Format,
        usage: vk::ImageUsageFlags,
        view: bool,
    ) -> Result<DeviceImage, KitError> {
        let info = vk::ImageCreateInfo::default()
            .image_type(vk::ImageType::TYPE_2D)
            .format(format)
            .extent(vk::Extent3D {
                width,
                height,
                depth: 1,
            })
            .mip_levels(1)
            .array_layers(1)
            .samples(vk::SampleCountFlags::TYPE_1)
            .tiling(vk::ImageTiling::OPTIMAL)
            .usage(usage)
            .initial_layout(vk::ImageLayout::UNDEFINED);
        // SAFETY: our live device and a local create info.
        let image =
            unsafe { self.device.create_image(&info, None) }.map_err(vk_err("vkCreateImage"))?;
        // Owned from here on: an early return frees what was made.
        let mut out = DeviceImage {
            device: self.device.clone(),
            image,
            memory: vk::DeviceMemory::null(),
            view: vk::ImageView::null(),
            width,
            height,
            format,
        };
        // SAFETY: `image` was just created on our device.
        let req = unsafe { self.device.get_image_memory_requirements(image) };
        out.memory = self.allocate(req, vk::MemoryPropertyFlags::DEVICE_LOCAL)?;
        // SAFETY: the memory was allocated for this image's requirements and is bound once, at
        // offset 0.
        unsafe { self.device.bind_image_memory(image, out.memory, 0) }
            .map_err(vk_err("vkBindImageMemory"))?;
        if view {
            let vinfo = vk::ImageViewCreateInfo::default()
                .image(image)
                .view_type(vk::ImageViewType::TYPE_2D)
                .format(format)
                .subresource_range(color_range());
            // SAFETY: `image` is ours, bound to memory, and has the one mip and layer the view
            // covers.
            out.view = unsafe { self.device.create_image_view(&vinfo, None) }
                .map_err(vk_err("vkCreateImageView"))?;
        }
        Ok(out)
    }
}

impl Drop for CallerDevice {
    fn drop(&mut self) {
        // SAFETY: all handles are ours; waiting for the device to go idle means no work still
        // uses the pool, the device or the instance; every object made on the device was
        // dropped before the kit (the module's rule); they are destroyed children first (pool,
        // device, messenger, instance), and the log the messenger writes to outlives it.
        unsafe {
            let _ = self.device.device_wait_idle();
            self.device.destroy_command_pool(self.pool, None);
            self.device.destroy_device(None);
            if let Some((du, m)) = self.messenger.take() {
                du.destroy_debug_utils_messenger(m, None);
            }
            self.instance.destroy_instance(None);
        }
    }
}

/// The whole colour subresource of a one-mip, one-layer image.
pub fn color_range() -> vk::ImageSubresourceRange {
    vk::ImageSubresourceRange {
        aspect_mask: vk::ImageAspectFlags::COLOR,
        base_mip_level: 0,
        level_count: 1,
        base_array_layer: 0,
        layer_count: 1,
    }
}

/// A copy between a buffer (tightly packed texels from `offset`) and the whole colour
/// subresource of a `width`x`height` image.
pub fn copy_region(offset: u64, width: u32, height: u32) -> vk::BufferImageCopy {
    vk::BufferImageCopy {
        buffer_offset: offset,
        buffer_row_length: 0,
        buffer_image_height: 0,
        image_subresource: vk::ImageSubresourceLayers {
            aspect_mask: vk::ImageAspectFlags::COLOR,
            mip_level: 0,
            base_array_layer: 0,
            layer_count: 1,
        },
        image_offset: vk::Offset3D::default(),
        image_extent: vk::Extent3D {
            width,
            height,
            depth: 1,
        },
    }
}

/// A barrier on the whole colour subresource of `image`: layout `layouts.0` -> `layouts.1`,
/// making accesses `access.0` visible to `access.1` (no queue-family transfer).
pub fn image_barrier(
    image: vk::Image,
    layouts: (vk::ImageLayout, vk::ImageLayout),
    access: (vk::AccessFlags, vk::AccessFlags),
) -> vk::ImageMemoryBarrier<'static> {
    vk::ImageMemoryBarrier::default()
        .old_layout(layouts.0)
        .new_layout(layouts.1)
        .src_access_mask(access.0)
        .dst_access_mask(access.1)
        .src_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
        .dst_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
        .image(image)
        .subresource_range(color_range())
}

/// The NGX resource description of `img` seen through `view` (the caller's own view), as an
/// application hands it to `NVSDK_NGX_Parameter_SetVoidPointer`.
pub fn ngx_resource(
    img: &DeviceImage,
    view: vk::ImageView,
    read_write: bool,
) -> openngx::ngx::abi::NVSDK_NGX_Resource_VK {
    use openngx::ngx::abi::*;
    NVSDK_NGX_Resource_VK {
        Resource: NVSDK_NGX_Resource_VK_Resource {
            ImageViewInfo: NVSDK_NGX_ImageViewInfo_VK {
                ImageView: view,
                Image: img.image,
                SubresourceRange: color_range(),
                Format: img.format,
                Width: img.width,
                Height: img.height,
            },
        },
        Type: NVSDK_NGX_RESOURCE_VK_TYPE_VK_IMAGEVIEW,
        ReadWrite: read_write,
    }
}

/// A host-visible, coherent buffer, mapped for its whole life; freed on drop.
pub struct HostBuffer {
    device: ash::Device,
    pub buffer: vk::Buffer,
    memory: vk::DeviceMemory,
    pub size: u64,
    ptr: *mut u8,
}

impl HostBuffer {
    fn check(&self, offset: u64, len: usize) -> Result<(), KitError> {
        let len = len as u64;
        match offset.checked_add(len) {
            Some(end) if end <= self.size && !self.ptr.is_null() => Ok(()),
            _ => Err(KitError::OutOfRange {
                offset,
                len,
                size: self.size,
            }),
        }
    }

    /// Copy `data` to byte `offset`.
    pub fn write(&self, offset: u64, data: &[u8]) -> Result<(), KitError> {
        self.check(offset, data.len())?;
        // SAFETY: the mapping covers `size` bytes and the range was checked; the memory is
        // coherent and no submitted work uses it while the host writes (the kit waits).
        unsafe {
            std::ptr::copy_nonoverlapping(data.as_ptr(), self.ptr.add(offset as usize), data.len())
        };
        Ok(())
    }

    /// The first `len` bytes (after the submission that wrote them was waited for).
    pub fn read(&self, len: usize) -> Result<Vec<u8>, KitError> {
        self.check(0, len)?;
        let mut v = vec![0u8; len];
        // SAFETY: as in `write`.
        unsafe { std::ptr::copy_nonoverlapping(self.ptr, v.as_mut_ptr(), len) };
        Ok(v)
    }
}

impl Drop for HostBuffer {
    fn drop(&mut self) {
        // SAFETY: the buffer and its memory (null when allocation failed, which Vulkan ignores)
        // are ours, on the kit's device, dropped before it; the kit waits for every submission,
        // so no submitted work still uses them.
        unsafe {
            if !self.ptr.is_null() {
                self.device.unmap_memory(self.memory);
            }
            self.device.destroy_buffer(self.buffer, None);
            self.device.free_memory(self.memory, None);
        }
    }
}

/// A device-local 2D image with its memory and (when asked for) a view; freed on drop.
pub struct DeviceImage {
    device: ash::Device,
    pub image: vk::Image,
    memory: vk::DeviceMemory,
    /// The colour view (null unless asked for).
    pub view: vk::ImageView,
    pub width: u32,
    pub height: u32,
    pub format: vk::Format,
}

impl Drop for DeviceImage {
    fn drop(&mut self) {
        // SAFETY: the view, image and memory (null handles are ignored by Vulkan) are ours, on
        // the kit's device, dropped before it; the kit waits for every submission, so no
        // submitted work still uses them.
        unsafe {
            self.device.destroy_image_view(self.view, None);
            self.device.destroy_image(self.image, None);
            self.device.free_memory(self.memory, None);
        }
    }
}
