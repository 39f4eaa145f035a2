//! Vulkan test harness shared by the integration tests. It plays the NGX caller: it creates the
//! instance (with `VK_LAYER_KHRONOS_validation` and a debug-utils messenger when the layer is
//! installed), picks a physical device that can run the exact route, creates the device with
//! exactly the features the library asks for, a compute queue and a command pool, and offers
//! buffer/image helpers and record+submit+wait.
//!
//! The Vulkan loader honours `VK_DRIVER_FILES` (CI points it at lavapipe). When no Vulkan
//! implementation or no suitable device exists, [`Harness::new`] prints a `SKIP` line and
//! returns `None`. Validation ERRORS are recorded; dropping the harness (or calling
//! [`Harness::assert_validation_clean`]) fails the test if any occurred.
//!
//! Drop every library object (contexts, buffers, arenas) before the harness: they live on its
//! device.
//!
//! Harnesses of one test binary are serialised (a process-wide lock held from `new` until the
//! device and instance are destroyed): lavapipe already spreads each dispatch over every core, so
//! running two devices at once buys no time, and one device at a time keeps the driver's JIT and
//! shader cache out of concurrent first use, which is where a CI run once died with SIGSEGV.
#![allow(dead_code)] // each test binary uses a different part of the harness

use std::ffi::{c_void, CStr};
use std::sync::{Arc, Mutex, MutexGuard};

use ash::vk;
use openngx::gpu::context::Capabilities;
use openngx::gpu::GpuContext;
use openngx::nr::route::ExactRoute;

pub mod kernels;

const VALIDATION_LAYER: &CStr = c"VK_LAYER_KHRONOS_validation";

/// The caller's Vulkan objects.
pub struct Harness {
    pub entry: ash::Entry,
    pub instance: ash::Instance,
    pub physical: vk::PhysicalDevice,
    pub device: ash::Device,
    pub queue: vk::Queue,
    pub queue_family: u32,
    pub pool: vk::CommandPool,
    pub device_name: String,
    /// Whether the validation layer is active.
    pub validation: bool,
    debug: Option<(ash::ext::debug_utils::Instance, vk::DebugUtilsMessengerEXT)>,
    errors: Arc<Mutex<Vec<String>>>,
    /// Released after `Drop::drop` has destroyed the device (fields drop after the body).
    _serial: MutexGuard<'static, ()>,
}

/// One live harness per process at a time (see the module comment).
static SERIAL: Mutex<()> = Mutex::new(());

unsafe extern "system" fn on_message(
    severity: vk::DebugUtilsMessageSeverityFlagsEXT,
    _types: vk::DebugUtilsMessageTypeFlagsEXT,
    data: *const vk::DebugUtilsMessengerCallbackDataEXT<'_>,
    user: *mut c_void,
) -> vk::Bool32 {
    if severity.contains(vk::DebugUtilsMessageSeverityFlagsEXT::ERROR) && !user.is_null() {
        // SAFETY: `user` is the `Mutex` owned by the harness, alive while the messenger exists.
        let errors = &*(user as *const Mutex<Vec<String>>);
        let text = if data.is_null() || (*data).p_message.is_null() {
            "<no message>".to_owned()
        } else {
            CStr::from_ptr((*data).p_message)
                .to_string_lossy()
                .into_owned()
        };
        if let Ok(mut e) = errors.lock() {
            e.push(text);
        }
    }
    vk::FALSE
}

/// No device: skip the test, unless `OPENNGX_TEST_REQUIRE_DEVICE=1` (runs on a GPU machine, where
/// a missing driver must fail rather than pass vacuously).
fn skip(why: &str) -> Option<Harness> {
    if std::env::var("OPENNGX_TEST_REQUIRE_DEVICE").is_ok_and(|v| v == "1") {
        panic!("no usable Vulkan device ({why}) and OPENNGX_TEST_REQUIRE_DEVICE=1");
    }
    println!("SKIP: no usable Vulkan device ({why})");
    None
}

impl Harness {
    /// The harness, or `None` (after printing a SKIP line) when there is no Vulkan device.
    pub fn new() -> Option<Harness> {
        // A test that panicked while holding the lock poisons it; the next test still runs.
        let serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        // SAFETY: loading the system Vulkan loader; failure is reported, not assumed.
        let entry = match unsafe { ash::Entry::load() } {
            Ok(e) => e,
            Err(e) => return skip(&format!("no Vulkan loader: {e}")),
        };
        // SAFETY: a global query on the loaded entry; it needs no instance.
        let layers = unsafe { entry.enumerate_instance_layer_properties() }.unwrap_or_default();
        let validation = layers
            .iter()
            .any(|l| l.layer_name_as_c_str().ok() == Some(VALIDATION_LAYER));
        // SAFETY: a global query on the loaded entry (no layer named); it needs no instance.
        let exts =
            unsafe { entry.enumerate_instance_extension_properties(None) }.unwrap_or_default();
        let has_debug_utils = exts
            .iter()
            .any(|e| e.extension_name_as_c_str().ok() == Some(ash::ext::debug_utils::NAME));
        let app = vk::ApplicationInfo::default()
            .application_name(c"openngx-tests")
            .api_version(vk::API_VERSION_1_2);
        let layer_names = [VALIDATION_LAYER.as_ptr()];
        let ext_names = [ash::ext::debug_utils::NAME.as_ptr()];
        let mut info = vk::InstanceCreateInfo::default().application_info(&app);
        if validation {
            info = info.enabled_layer_names(&layer_names);
        }
        if has_debug_utils {
            info = info.enabled_extension_names(&ext_names);
        }
        // SAFETY: `info` and what it points to (`app`, the layer and extension names) are locals
        // alive for the call; the layer and extension are named only when enumerated above.
        let instance = match unsafe { entry.create_instance(&info, None) } {
            Ok(i) => i,
            Err(e) => return skip(&format!("vkCreateInstance: {e}")),
        };
        let errors = Arc::new(Mutex::new(Vec::new()));
        let debug = if has_debug_utils {
            let du = ash::ext::debug_utils::Instance::new(&entry, &instance);
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
                .user_data(Arc::as_ptr(&errors) as *mut c_void);
            // SAFETY: `du` is loaded from our live instance, which enables debug utils; the user
            // data is the `errors` mutex, kept in the harness (and alive) until the messenger is
            // destroyed in `Drop`, and `on_message` only reads it as that type.
            match unsafe { du.create_debug_utils_messenger(&info, None) } {
                Ok(m) => Some((du, m)),
                Err(_) => None,
            }
        } else {
            None
        };
        // SAFETY: only called on the paths below that give up before a device exists; the
        // messenger (if any) was created from this instance, which nothing uses afterwards.
        let destroy_instance = |debug: &Option<(
            ash::ext::debug_utils::Instance,
            vk::DebugUtilsMessengerEXT,
        )>| unsafe {
            if let Some((du, m)) = debug {
                du.destroy_debug_utils_messenger(*m, None);
            }
            instance.destroy_instance(None);
        };
        // SAFETY: `instance` was created above and is alive.
        let physicals = unsafe { instance.enumerate_physical_devices() }.unwrap_or_default();
        // Prefer real GPUs, then anything (lavapipe is a CPU device).
        let mut candidates: Vec<(u32, vk::PhysicalDevice, Capabilities)> = Vec::new();
        let mut rejected = Vec::new();
        for pd in physicals {
            // SAFETY: `pd` was just enumerated from this live `instance`.
            let caps = unsafe { Capabilities::query(&instance, pd) };
            let missing = ExactRoute::missing(&caps);
            if !missing.is_empty() {
                rejected.push(format!(
                    "{}: missing {}",
                    caps.device_name,
                    missing.join(", ")
                ));
                continue;
            }
            let rank = match caps.device_type {
                vk::PhysicalDeviceType::DISCRETE_GPU => 0,
                vk::PhysicalDeviceType::INTEGRATED_GPU => 1,
                vk::PhysicalDeviceType::VIRTUAL_GPU => 2,
                _ => 3,
            };
            candidates.push((rank, pd, caps));
        }
        candidates.sort_by_key(|c| c.0);
        let Some((_, physical, caps)) = candidates.into_iter().next() else {
            destroy_instance(&debug);
            return skip(&format!(
                "no device supports the exact route [{}]",
                rejected.join("; ")
            ));
        };
        // SAFETY: `physical` was enumerated from this live `instance`.
        let families = unsafe { instance.get_physical_device_queue_family_properties(physical) };
        let Some(queue_family) = families
            .iter()
            .position(|f| f.queue_flags.contains(vk::QueueFlags::COMPUTE))
        else {
            destroy_instance(&debug);
            return skip(&format!("{} has no compute queue", caps.device_name));
        };
        let queue_family = queue_family as u32;
        let priorities = [1.0f32];
        let queues = [vk::DeviceQueueCreateInfo::default()
            .queue_family_index(queue_family)
            .queue_priorities(&priorities)];
        let mut f11 = vk::PhysicalDeviceVulkan11Features::default();
        let mut f12 = vk::PhysicalDeviceVulkan12Features::default();
        ExactRoute::enable_features(&mut f11, &mut f12);
        let dinfo = vk::DeviceCreateInfo::default()
            .queue_create_infos(&queues)
            .push_next(&mut f11)
            .push_next(&mut f12);
        // SAFETY: `physical` belongs to `instance`; `dinfo`'s chain (queues, priorities, the
        // feature structs) are locals alive for the call; the family index was read from it.
        let device = match unsafe { instance.create_device(physical, &dinfo, None) } {
            Ok(d) => d,
            Err(e) => {
                destroy_instance(&debug);
                panic!("vkCreateDevice on {} failed: {e}", caps.device_name);
            }
        };
        // SAFETY: the device was created with one queue of `queue_family` (index 0).
        let queue = unsafe { device.get_device_queue(queue_family, 0) };
        let pinfo = vk::CommandPoolCreateInfo::default()
            .queue_family_index(queue_family)
            .flags(vk::CommandPoolCreateFlags::RESET_COMMAND_BUFFER);
        // SAFETY: `device` was just created with a queue of `queue_family`; `pinfo` is a local.
        let pool = match unsafe { device.create_command_pool(&pinfo, None) } {
            Ok(p) => p,
            Err(e) => panic!("vkCreateCommandPool failed: {e}"),
        };
        Some(Harness {
            entry,
            instance,
            physical,
            device,
            queue,
            queue_family,
            pool,
            device_name: caps.device_name,
            validation: validation && has_debug_utils,
            debug,
            errors,
            _serial: serial,
        })
    }

    /// The caller's `vkGetInstanceProcAddr` (from the loader).
    pub fn gipa(&self) -> vk::PFN_vkGetInstanceProcAddr {
        self.entry.static_fn().get_instance_proc_addr
    }

    /// The caller's `vkGetDeviceProcAddr`.
    pub fn gdpa(&self) -> vk::PFN_vkGetDeviceProcAddr {
        self.instance.fp_v1_0().get_device_proc_addr
    }

    /// The library's context on the harness's device, adopted the way NGX would.
    pub fn context(&self) -> Arc<GpuContext> {
        // SAFETY: the harness's handles are valid and outlive the context (drop it first).
        match unsafe {
            GpuContext::from_caller(
                self.instance.handle(),
                self.physical,
                self.device.handle(),
                self.gipa(),
                Some(self.gdpa()),
            )
        } {
            Ok(c) => c,
            Err(e) => panic!("GpuContext::from_caller on {}: {e}", self.device_name),
        }
    }

    /// Record with `f` into a fresh primary command buffer, submit it, wait for completion (up to
    /// 30 minutes: a whole-network block on a slow CI machine under lavapipe takes a minute).
    pub fn submit<R>(&self, f: impl FnOnce(vk::CommandBuffer) -> R) -> R {
        let info = vk::CommandBufferAllocateInfo::default()
            .command_pool(self.pool)
            .level(vk::CommandBufferLevel::PRIMARY)
            .command_buffer_count(1);
        // SAFETY: the pool, queue and device are the harness's own, used by one test thread at
        // a time (harnesses are serialised); `cmd` is allocated, begun, ended and submitted once,
        // and it and the fence are freed only after the fence signalled, i.e. the work is done.
        unsafe {
            let cmd = self
                .device
                .allocate_command_buffers(&info)
                .expect("vkAllocateCommandBuffers")[0];
            self.device
                .begin_command_buffer(
                    cmd,
                    &vk::CommandBufferBeginInfo::default()
                        .flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT),
                )
                .expect("vkBeginCommandBuffer");
            let r = f(cmd);
            self.device
                .end_command_buffer(cmd)
                .expect("vkEndCommandBuffer");
            let fence = self
                .device
                .create_fence(&vk::FenceCreateInfo::default(), None)
                .expect("vkCreateFence");
            let cmds = [cmd];
            let submit = vk::SubmitInfo::default().command_buffers(&cmds);
            self.device
                .queue_submit(self.queue, &[submit], fence)
                .expect("vkQueueSubmit");
            self.device
                .wait_for_fences(&[fence], true, 1_800_000_000_000)
                .expect("vkWaitForFences");
            self.device.destroy_fence(fence, None);
            self.device.free_command_buffers(self.pool, &cmds);
            r
        }
    }

    fn memory_type(&self, bits: u32, flags: vk::MemoryPropertyFlags) -> u32 {
        // SAFETY: `self.physical` belongs to the harness's live instance.
        let props = unsafe {
            self.instance
                .get_physical_device_memory_properties(self.physical)
        };
        (0..props.memory_type_count)
            .find(|&i| {
                bits & (1 << i) != 0
                    && props.memory_types[i as usize]
                        .property_flags
                        .contains(flags)
            })
            .expect("no suitable memory type")
    }

    /// A host-visible, coherent storage buffer owned by the "caller".
    pub fn host_buffer(&self, size: u64) -> HostBuffer {
        // SAFETY: everything is created on the harness's live device from local create infos;
        // the memory is allocated for this buffer's requirements from a host-visible type, bound
        // once at offset 0, and mapped over `size` (within the allocation). The `HostBuffer`
        // owns the objects and frees them on drop.
        unsafe {
            let info = vk::BufferCreateInfo::default().size(size).usage(
                vk::BufferUsageFlags::STORAGE_BUFFER
                    | vk::BufferUsageFlags::TRANSFER_SRC
                    | vk::BufferUsageFlags::TRANSFER_DST,
            );
            let buffer = self
                .device
                .create_buffer(&info, None)
                .expect("vkCreateBuffer");
            let req = self.device.get_buffer_memory_requirements(buffer);
            let ty = self.memory_type(
                req.memory_type_bits,
                vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_COHERENT,
            );
            let memory = self
                .device
                .allocate_memory(
                    &vk::MemoryAllocateInfo::default()
                        .allocation_size(req.size)
                        .memory_type_index(ty),
                    None,
                )
                .expect("vkAllocateMemory");
            self.device
                .bind_buffer_memory(buffer, memory, 0)
                .expect("vkBindBufferMemory");
            let ptr = self
                .device
                .map_memory(memory, 0, size, vk::MemoryMapFlags::empty())
                .expect("vkMapMemory");
            HostBuffer {
                device: self.device.clone(),
                buffer,
                memory,
                size,
                ptr: ptr as *mut u8,
            }
        }
    }

    /// A device-local 2D image owned by the "caller", in UNDEFINED layout.
    pub fn image(
        &self,
        width: u32,
        height: u32,
        format: vk::Format,
        usage: vk::ImageUsageFlags,
    ) -> TestImage {
        // SAFETY: the image is created on the harness's live device from a local create info;
        // its memory is allocated for its requirements from a device-local type and bound once
        // at offset 0. The `TestImage` owns both and frees them on drop.
        unsafe {
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
            let image = self
                .device
                .create_image(&info, None)
                .expect("vkCreateImage");
            let req = self.device.get_image_memory_requirements(image);
            let ty = self.memory_type(req.memory_type_bits, vk::MemoryPropertyFlags::DEVICE_LOCAL);
            let memory = self
                .device
                .allocate_memory(
                    &vk::MemoryAllocateInfo::default()
                        .allocation_size(req.size)
                        .memory_type_index(ty),
                    None,
                )
                .expect("vkAllocateMemory");
            self.device
                .bind_image_memory(image, memory, 0)
                .expect("vkBindImageMemory");
            TestImage {
                device: self.device.clone(),
                image,
                memory,
                width,
                height,
                format,
            }
        }
    }

    /// Validation errors recorded so far.
    pub fn validation_errors(&self) -> Vec<String> {
        self.errors.lock().map(|e| e.clone()).unwrap_or_default()
    }

    /// Forget recorded errors (for a test that provokes one on purpose).
    pub fn take_validation_errors(&self) -> Vec<String> {
        self.errors
            .lock()
            .map(|mut e| std::mem::take(&mut *e))
            .unwrap_or_default()
    }

    /// Record with `f` into a fresh command buffer and free it without submitting.
    pub fn record_only(&self, f: impl FnOnce(vk::CommandBuffer)) {
        let info = vk::CommandBufferAllocateInfo::default()
            .command_pool(self.pool)
            .level(vk::CommandBufferLevel::PRIMARY)
            .command_buffer_count(1);
        // SAFETY: the harness's own pool and device, used by one test thread at a time; `cmd`
        // is never submitted, so it may be freed as soon as recording ends.
        unsafe {
            let cmd = self
                .device
                .allocate_command_buffers(&info)
                .expect("vkAllocateCommandBuffers")[0];
            self.device
                .begin_command_buffer(cmd, &vk::CommandBufferBeginInfo::default())
                .expect("vkBeginCommandBuffer");
            f(cmd);
            let _ = self.device.end_command_buffer(cmd);
            self.device.free_command_buffers(self.pool, &[cmd]);
        }
    }

    /// Fail the test if the validation layer reported an error.
    pub fn assert_validation_clean(&self) {
        let errors = self.validation_errors();
        assert!(
            errors.is_empty(),
            "{} validation error(s):\n{}",
            errors.len(),
            errors.join("\n")
        );
    }
}

impl Drop for Harness {
    fn drop(&mut self) {
        // SAFETY: the handles are the harness's own; after the device went idle no work uses
        // them, every library object on the device has been dropped before the harness (the
        // module's rule), and they are destroyed children first (pool, device, messenger,
        // instance).
        unsafe {
            let _ = self.device.device_wait_idle();
            self.device.destroy_command_pool(self.pool, None);
            self.device.destroy_device(None);
            if let Some((du, m)) = self.debug.take() {
                du.destroy_debug_utils_messenger(m, None);
            }
            self.instance.destroy_instance(None);
        }
        if !std::thread::panicking() {
            self.assert_validation_clean();
        }
    }
}

/// A caller-owned host-visible buffer.
pub struct HostBuffer {
    device: ash::Device,
    pub buffer: vk::Buffer,
    memory: vk::DeviceMemory,
    pub size: u64,
    ptr: *mut u8,
}

impl HostBuffer {
    pub fn write(&self, offset: usize, data: &[u8]) {
        assert!(
            offset + data.len() <= self.size as usize,
            "write past the end of the buffer"
        );
        // SAFETY: mapped, coherent, in range; no GPU work is pending while the test writes.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), self.ptr.add(offset), data.len()) };
    }

    pub fn read(&self) -> Vec<u8> {
        let mut v = vec![0u8; self.size as usize];
        // SAFETY: as in `write`.
        unsafe { std::ptr::copy_nonoverlapping(self.ptr, v.as_mut_ptr(), v.len()) };
        v
    }

    pub fn binding(&self) -> openngx::gpu::BufferBinding {
        openngx::gpu::BufferBinding {
            buffer: self.buffer,
            offset: 0,
            range: self.size,
        }
    }
}

impl Drop for HostBuffer {
    fn drop(&mut self) {
        // SAFETY: the buffer and its mapped memory are ours, on the harness's device (tests drop
        // them before the harness); the harness's `submit` waits for its work, so no submitted
        // work still uses them.
        unsafe {
            self.device.unmap_memory(self.memory);
            self.device.destroy_buffer(self.buffer, None);
            self.device.free_memory(self.memory, None);
        }
    }
}

/// A caller-owned image.
pub struct TestImage {
    device: ash::Device,
    pub image: vk::Image,
    memory: vk::DeviceMemory,
    pub width: u32,
    pub height: u32,
    pub format: vk::Format,
}

impl Drop for TestImage {
    fn drop(&mut self) {
        // SAFETY: the image and its memory are ours, on the harness's device (tests drop them
        // before the harness); the harness's `submit` waits for its work, so no submitted work
        // still uses them.
        unsafe {
            self.device.destroy_image(self.image, None);
            self.device.free_memory(self.memory, None);
        }
    }
}

/// u32 words as little-endian bytes.
pub fn words_to_bytes(words: &[u32]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

/// Little-endian bytes as u32 words.
pub fn bytes_to_words(bytes: &[u8]) -> Vec<u32> {
    bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// A small deterministic generator (xorshift64*) for test data.
pub struct Rng(pub u64);

impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    pub fn next_u32(&mut self) -> u32 {
        (self.next_u64() >> 32) as u32
    }
    pub fn below(&mut self, n: u32) -> u32 {
        self.next_u32() % n
    }
}
