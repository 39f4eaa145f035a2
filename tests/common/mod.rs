//! Vulkan test harness shared by the integration tests. It plays the NGX caller through the
//! caller-device kit (`openngx_tools::devkit`): the instance (with `VK_LAYER_KHRONOS_validation`
//! when the layer is installed and a debug-utils messenger collecting errors), a physical device
//! that can run the exact route, the device with exactly the features the library asks for, a
//! compute queue and a command pool; it adds the tests' panicking buffer/image helpers and
//! record+submit+wait.
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
//!
//! Validation: every harness turns on the layer's synchronization validation, within command
//! buffers and between submissions (the library records into the caller's command buffers, so a
//! missing barrier is a hazard users would see as flicker); the kernel tests open theirs with
//! [`Harness::with_gpu_assisted`] for out-of-bounds checks as well.
#![allow(dead_code)] // each test binary uses a different part of the harness

use std::sync::{Arc, Mutex, MutexGuard};

use ash::vk;
use openngx::gpu::GpuContext;
use openngx_tools::devkit::{
    CallerDevice, DeviceChoice, DeviceImage, ErrorLog, KitError, Options, SYNC_VALIDATION_ENABLES,
};

pub mod kernels;
pub mod ngx;
pub mod rr;

/// The synthetic model (seed 0), written once per test process into a scratch directory that is
/// removed when the process exits (`openngx_tools::scratch`: a `TempDir` in a static is never
/// dropped, and each run used to leave 141 MiB behind).
pub fn synthetic_model_dir() -> &'static std::path::Path {
    static DIR: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let t = std::time::Instant::now();
        let scratch =
            openngx_tools::scratch::process_dir(&std::env::temp_dir(), "openngx-test-model")
                .expect("scratch dir");
        let path = scratch.join("model");
        openngx_tools::synth::write_model(
            &path,
            0,
            &openngx_tools::synth::SynthParams::DEFAULT,
            false,
        )
        .expect("synthesize");
        eprintln!("synthetic model: {:.1} s", t.elapsed().as_secs_f64());
        path
    })
}

/// How long `submit` waits (30 minutes: a whole-network block on a slow CI machine under
/// lavapipe takes a minute).
const WAIT_NS: u64 = 1_800_000_000_000;

/// The caller's Vulkan objects: the caller-device kit ([`openngx_tools::devkit`]), with its
/// handles as fields.
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
    /// Whether its synchronization validation is on (within command buffers; between
    /// submissions as well where `VK_LAYER_ENABLES` asks, see [`sync_validation_env`]).
    pub sync_validation: bool,
    /// Whether its GPU-assisted validation is on ([`Harness::with_gpu_assisted`]).
    pub gpu_assisted: bool,
    /// The kit that owns the handles above; `None` only inside `Drop`.
    kit: Option<CallerDevice>,
    errors: ErrorLog,
    /// Released after `Drop::drop` has destroyed the device (fields drop after the body).
    _serial: MutexGuard<'static, ()>,
}

/// One live harness per process at a time (see the module comment).
static SERIAL: Mutex<()> = Mutex::new(());

/// Sets `VK_LAYER_ENABLES` to [`SYNC_VALIDATION_ENABLES`] (synchronization validation within
/// and between submissions) unless the environment already sets it, once per process, before
/// the first instance is created (the layer reads it at `vkCreateInstance`). Set with the
/// harness lock held, before any instance of this process exists.
pub fn sync_validation_env() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        if std::env::var_os("VK_LAYER_ENABLES").is_none() {
            std::env::set_var("VK_LAYER_ENABLES", SYNC_VALIDATION_ENABLES);
        }
    });
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
    /// The harness, or `None` (after printing a SKIP line) when there is no Vulkan device. With
    /// the validation layer, synchronization validation is on (see [`sync_validation_env`]).
    pub fn new() -> Option<Harness> {
        Harness::open(true, false)
    }

    /// [`Harness::new`] without the validation layer: for measures the layer would distort (it
    /// keeps state of its own for every object created and destroyed, so a soak's RSS under it
    /// is partly the layer's).
    pub fn without_validation() -> Option<Harness> {
        Harness::open(false, false)
    }

    /// [`Harness::new`] with the layer's GPU-assisted validation on as well (shaders
    /// instrumented to report out-of-bounds accesses; for the kernel tests: slow).
    pub fn with_gpu_assisted() -> Option<Harness> {
        Harness::open(true, true)
    }

    fn open(validation: bool, gpu_assisted: bool) -> Option<Harness> {
        // A test that panicked while holding the lock poisons it; the next test still runs.
        let serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        sync_validation_env();
        let opened = CallerDevice::open(&Options {
            app_name: c"openngx-tests",
            validation,
            collect_errors: true,
            sync_validation: validation,
            gpu_assisted,
            device: DeviceChoice::Best,
            optional_extensions: &[],
        });
        let kit = match opened {
            Ok(kit) => kit,
            Err(KitError::Loader(e)) => return skip(&format!("no Vulkan loader: {e}")),
            Err(KitError::Vk {
                call: "vkCreateInstance",
                result,
            }) => return skip(&format!("vkCreateInstance: {result}")),
            Err(KitError::NoDevice { rejected, .. }) => {
                return skip(&format!(
                    "no device supports the exact route [{}]",
                    rejected.join("; ")
                ))
            }
            Err(KitError::Vk {
                call: "vkEnumeratePhysicalDevices",
                ..
            }) => return skip("no device supports the exact route []"),
            Err(KitError::NoComputeQueue(device)) => {
                return skip(&format!("{device} has no compute queue"))
            }
            Err(KitError::CreateDevice { device, result }) => {
                panic!("vkCreateDevice on {device} failed: {result}")
            }
            Err(KitError::Vk {
                call: "vkCreateCommandPool",
                result,
            }) => panic!("vkCreateCommandPool failed: {result}"),
            Err(e) => panic!("opening the caller device: {e}"),
        };
        Some(Harness {
            entry: kit.entry.clone(),
            instance: kit.instance.clone(),
            physical: kit.physical,
            device: kit.device.clone(),
            queue: kit.queue,
            queue_family: kit.queue_family,
            pool: kit.pool,
            device_name: kit.capabilities.device_name.clone(),
            validation: kit.validation_layer && kit.debug_utils,
            sync_validation: kit.validation_layer && kit.debug_utils && kit.sync_validation,
            gpu_assisted: kit.validation_layer && kit.debug_utils && kit.gpu_assisted,
            errors: kit.error_log().clone(),
            kit: Some(kit),
            _serial: serial,
        })
    }

    fn kit(&self) -> &CallerDevice {
        self.kit
            .as_ref()
            .expect("the kit lives until the harness drops")
    }

    /// The caller's `vkGetInstanceProcAddr` (from the loader).
    pub fn gipa(&self) -> vk::PFN_vkGetInstanceProcAddr {
        self.kit().gipa()
    }

    /// The caller's `vkGetDeviceProcAddr`.
    pub fn gdpa(&self) -> vk::PFN_vkGetDeviceProcAddr {
        self.kit().gdpa()
    }

    /// The library's context on the harness's device, adopted the way NGX would.
    pub fn context(&self) -> Arc<GpuContext> {
        // SAFETY: tests drop every library object, contexts included, before the harness (the
        // module's rule), so the kit's handles outlive the context.
        match unsafe { self.kit().context() } {
            Ok(c) => c,
            Err(e) => panic!("GpuContext::from_caller on {}: {e}", self.device_name),
        }
    }

    /// Record with `f` into a fresh primary command buffer, submit it, wait for completion (up to
    /// 30 minutes: a whole-network block on a slow CI machine under lavapipe takes a minute).
    pub fn submit<R>(&self, f: impl FnOnce(vk::CommandBuffer) -> R) -> R {
        match self.kit().submit(WAIT_NS, |cmd| Ok::<R, KitError>(f(cmd))) {
            Ok(r) => r,
            Err(e) => panic!("submit on {}: {e}", self.device_name),
        }
    }

    /// A host-visible, coherent storage buffer owned by the "caller".
    pub fn host_buffer(&self, size: u64) -> HostBuffer {
        let usage = vk::BufferUsageFlags::STORAGE_BUFFER
            | vk::BufferUsageFlags::TRANSFER_SRC
            | vk::BufferUsageFlags::TRANSFER_DST;
        match self.kit().host_buffer(size, usage) {
            Ok(inner) => HostBuffer {
                buffer: inner.buffer,
                size,
                inner,
            },
            Err(e) => panic!("host buffer of {size} bytes: {e}"),
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
        match self.kit().image(width, height, format, usage, false) {
            Ok(i) => i,
            Err(e) => panic!("{width}x{height} {format:?} image: {e}"),
        }
    }

    /// Validation errors recorded so far.
    pub fn validation_errors(&self) -> Vec<String> {
        self.errors.errors()
    }

    /// Forget recorded errors (for a test that provokes one on purpose).
    pub fn take_validation_errors(&self) -> Vec<String> {
        self.errors.take()
    }

    /// Record with `f` into a fresh command buffer and free it without submitting.
    pub fn record_only(&self, f: impl FnOnce(vk::CommandBuffer)) {
        if let Err(e) = self.kit().record_only(f) {
            panic!("record_only on {}: {e}", self.device_name);
        }
    }

    /// A 2D colour view of `img` (the caller's own view of it, as an application hands to NGX);
    /// destroyed by the test.
    pub fn view(&self, img: &TestImage) -> vk::ImageView {
        let info = vk::ImageViewCreateInfo::default()
            .image(img.image)
            .view_type(vk::ImageViewType::TYPE_2D)
            .format(img.format)
            .subresource_range(openngx_tools::devkit::color_range());
        // SAFETY: `img` is a live image of this harness's device, created with a usage that
        // allows views; the create info names its one mip and layer.
        unsafe { self.device.create_image_view(&info, None) }.expect("vkCreateImageView")
    }

    /// Record a barrier on the whole colour subresource of `image` into `cmd`.
    pub fn barrier(
        &self,
        cmd: vk::CommandBuffer,
        image: vk::Image,
        layouts: (vk::ImageLayout, vk::ImageLayout),
        access: (vk::AccessFlags, vk::AccessFlags),
        stages: (vk::PipelineStageFlags, vk::PipelineStageFlags),
    ) {
        self.barrier_aspect(
            cmd,
            image,
            vk::ImageAspectFlags::COLOR,
            layouts,
            access,
            stages,
        );
    }

    /// Record a barrier on the whole `aspect` of `image` (its only mip and layer) into `cmd`.
    pub fn barrier_aspect(
        &self,
        cmd: vk::CommandBuffer,
        image: vk::Image,
        aspect: vk::ImageAspectFlags,
        layouts: (vk::ImageLayout, vk::ImageLayout),
        access: (vk::AccessFlags, vk::AccessFlags),
        stages: (vk::PipelineStageFlags, vk::PipelineStageFlags),
    ) {
        let b = [
            openngx_tools::devkit::image_barrier(image, layouts, access).subresource_range(
                vk::ImageSubresourceRange {
                    aspect_mask: aspect,
                    ..openngx_tools::devkit::color_range()
                },
            ),
        ];
        // SAFETY: callers pass a command buffer of this harness in the recording state and a
        // live image of its device; the barrier names the image's only mip and layer.
        unsafe {
            self.device.cmd_pipeline_barrier(
                cmd,
                stages.0,
                stages.1,
                vk::DependencyFlags::empty(),
                &[],
                &[],
                &b,
            )
        };
    }

    /// Records an upload into `image` from `staging`: a barrier from `UNDEFINED` to
    /// `TRANSFER_DST_OPTIMAL` after `before` (the access and stage of the image's earlier use),
    /// the copy `region`, and a barrier to `SHADER_READ_ONLY_OPTIMAL` for the compute stage.
    /// `aspect` is the barriers' aspect (both aspects of a combined depth/stencil image, where
    /// the copy names one).
    pub fn upload_image(
        &self,
        cmd: vk::CommandBuffer,
        staging: vk::Buffer,
        image: vk::Image,
        aspect: vk::ImageAspectFlags,
        region: vk::BufferImageCopy,
        before: (vk::AccessFlags, vk::PipelineStageFlags),
    ) {
        self.barrier_aspect(
            cmd,
            image,
            aspect,
            (
                vk::ImageLayout::UNDEFINED,
                vk::ImageLayout::TRANSFER_DST_OPTIMAL,
            ),
            (before.0, vk::AccessFlags::TRANSFER_WRITE),
            (before.1, vk::PipelineStageFlags::TRANSFER),
        );
        // SAFETY: callers pass a recording command buffer of this harness, a live image of its
        // device and a staging buffer holding the texels the region names.
        unsafe {
            self.device.cmd_copy_buffer_to_image(
                cmd,
                staging,
                image,
                vk::ImageLayout::TRANSFER_DST_OPTIMAL,
                &[region],
            )
        };
        self.barrier_aspect(
            cmd,
            image,
            aspect,
            (
                vk::ImageLayout::TRANSFER_DST_OPTIMAL,
                vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL,
            ),
            (
                vk::AccessFlags::TRANSFER_WRITE,
                vk::AccessFlags::SHADER_READ,
            ),
            (
                vk::PipelineStageFlags::TRANSFER,
                vk::PipelineStageFlags::COMPUTE_SHADER,
            ),
        );
    }

    /// Records the copy of a colour image in `GENERAL` layout (`w` x `h`, its only mip and layer;
    /// its writes already made visible to transfers) into `buffer` from offset 0, and the barrier
    /// that makes the copy visible to the host once the submission is waited for.
    pub fn copy_to_host(
        &self,
        cmd: vk::CommandBuffer,
        image: vk::Image,
        (w, h): (u32, u32),
        buffer: vk::Buffer,
    ) {
        let mb = [vk::MemoryBarrier::default()
            .src_access_mask(vk::AccessFlags::TRANSFER_WRITE)
            .dst_access_mask(vk::AccessFlags::HOST_READ)];
        // SAFETY: callers pass a recording command buffer of this harness, a live image of its
        // device in GENERAL layout and a buffer of at least the image's bytes.
        unsafe {
            self.device.cmd_copy_image_to_buffer(
                cmd,
                image,
                vk::ImageLayout::GENERAL,
                buffer,
                &[openngx_tools::devkit::copy_region(0, w, h)],
            );
            self.device.cmd_pipeline_barrier(
                cmd,
                vk::PipelineStageFlags::TRANSFER,
                vk::PipelineStageFlags::HOST,
                vk::DependencyFlags::empty(),
                &mb,
                &[],
                &[],
            );
        }
    }

    /// Destroys the device and the instance now and returns every validation error reported,
    /// those at `vkDestroyDevice` (objects the library left on the device) included; the drop
    /// that follows checks nothing more.
    pub fn close(mut self) -> Vec<String> {
        drop(self.kit.take());
        self.errors.take()
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
        // The kit destroys the pool, the device, the messenger and the instance (every library
        // object on the device was dropped before the harness: the module's rule); errors the
        // layer reports on the way stay in the log, which outlives it.
        drop(self.kit.take());
        if !std::thread::panicking() {
            self.assert_validation_clean();
        }
    }
}

/// A caller-owned host-visible buffer (the kit's, with the tests' panicking accessors).
pub struct HostBuffer {
    pub buffer: vk::Buffer,
    pub size: u64,
    inner: openngx_tools::devkit::HostBuffer,
}

impl HostBuffer {
    pub fn write(&self, offset: usize, data: &[u8]) {
        if let Err(e) = self.inner.write(offset as u64, data) {
            panic!("write past the end of the buffer: {e}");
        }
    }

    pub fn read(&self) -> Vec<u8> {
        match self.inner.read(self.size as usize) {
            Ok(v) => v,
            Err(e) => panic!("reading the buffer: {e}"),
        }
    }

    pub fn binding(&self) -> openngx::gpu::BufferBinding {
        openngx::gpu::BufferBinding {
            buffer: self.buffer,
            offset: 0,
            range: self.size,
        }
    }
}

/// A caller-owned image (`image`, `width`, `height`, `format`; freed on drop).
pub type TestImage = DeviceImage;

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
