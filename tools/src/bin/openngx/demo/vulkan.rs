//! The demo's own Vulkan objects, made the way an engine would before it hands them to NGX: the
//! caller-device kit ([`openngx_tools::devkit`]: instance, device with the exact route's features,
//! compute queue, pool, images and staging buffers) plus what only the demo records: one reused
//! command buffer, layout transitions, uploads and read-backs, and a timestamp query pool.
//! Nothing here calls the library except to ask which device features to enable.

use ash::vk;
use openngx_tools::devkit::{color_range, CallerDevice, DeviceChoice, KitError, Options};

pub use openngx_tools::devkit::{DeviceImage as Image, HostBuffer};

/// The application side of the demo on one Vulkan device.
pub struct App {
    /// The instance, device, queue and pool (`kit.entry`, `kit.instance`, `kit.device`, ...).
    pub kit: CallerDevice,
    /// The one command buffer every submission reuses.
    pub cmd: vk::CommandBuffer,
    pub device_name: String,
    /// A CPU implementation (lavapipe): minutes per network evaluation.
    pub is_cpu: bool,
    /// Nanoseconds per timestamp tick, when the queue can write timestamps.
    pub timestamp_period_ns: Option<f64>,
}

/// A kit error in the demo's words.
pub fn demo_error(e: KitError) -> String {
    match e {
        KitError::Loader(e) => format!(
            "no Vulkan loader ({e}); install libvulkan1 and a driver (mesa-vulkan-drivers gives lavapipe)"
        ),
        KitError::Vk { call, result } => format!("{call} failed: {result}"),
        KitError::NoDevice { rejected, .. } => format!(
            "no Vulkan device can run the exact route [{}]",
            rejected.join("; ")
        ),
        KitError::NoSuchDevice { index, listed } => {
            let names: Vec<String> = listed
                .iter()
                .enumerate()
                .map(|(i, n)| format!("{i}: {n}"))
                .collect();
            format!(
                "--device {index}: there are {} device(s) [{}]",
                listed.len(),
                names.join(", ")
            )
        }
        KitError::Unsuitable {
            index,
            device,
            missing,
        } => format!(
            "--device {index} ({device}) cannot run the exact route, missing: {}",
            missing.join(", ")
        ),
        e => e.to_string(),
    }
}

impl App {
    /// Creates the instance and picks device `index` (`None`: the first that can run the exact
    /// route, real GPUs before CPU implementations).
    pub fn new(index: Option<usize>) -> Result<App, String> {
        let kit = CallerDevice::open(&Options {
            app_name: c"openngx demo",
            // The Khronos layer (where installed) when asked, as the tools' own devices.
            validation: std::env::var("OPENNGX_VALIDATION").as_deref() == Ok("1"),
            collect_errors: false,
            device: index.map_or(DeviceChoice::Best, DeviceChoice::Listed),
            optional_extensions: &[],
            ..Options::default()
        })
        .map_err(demo_error)?;
        let cmd = kit.allocate_command_buffer().map_err(demo_error)?;
        let cap = &kit.capabilities;
        let timestamp_period_ns = (kit.queue_timestamp_bits > 0 && cap.timestamps)
            .then_some(cap.timestamp_period_ns as f64);
        Ok(App {
            device_name: cap.device_name.clone(),
            is_cpu: cap.device_type == vk::PhysicalDeviceType::CPU,
            timestamp_period_ns,
            cmd,
            kit,
        })
    }

    /// A device-local 2D image (one mip, one layer) in `UNDEFINED` layout, with a view.
    pub fn image(
        &self,
        format: vk::Format,
        width: u32,
        height: u32,
        usage: vk::ImageUsageFlags,
    ) -> Result<Image, String> {
        self.kit
            .image(width, height, format, usage, true)
            .map_err(demo_error)
    }

    /// A mapped host-visible buffer.
    pub fn host_buffer(
        &self,
        size: u64,
        usage: vk::BufferUsageFlags,
    ) -> Result<HostBuffer, String> {
        self.kit.host_buffer(size, usage).map_err(demo_error)
    }

    /// Begin recording the command buffer (reset first).
    pub fn begin(&self) -> Result<(), String> {
        // SAFETY: `cmd` is the app's, from the kit's pool, and not pending (every submission is
        // waited for).
        unsafe {
            self.kit
                .begin(self.cmd, vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT)
        }
        .map_err(demo_error)
    }

    /// End, submit and wait for the command buffer.
    pub fn submit_and_wait(&self) -> Result<(), String> {
        // SAFETY: `cmd` is the app's, recording (after `begin`), and what it recorded refers to
        // the app's live objects and the feature's.
        unsafe { self.kit.end_submit_wait(self.cmd, u64::MAX) }.map_err(demo_error)
    }

    /// Record a layout transition of a whole image.
    #[allow(clippy::too_many_arguments)]
    pub fn transition(
        &self,
        image: vk::Image,
        from: vk::ImageLayout,
        to: vk::ImageLayout,
        src_access: vk::AccessFlags,
        dst_access: vk::AccessFlags,
        src_stage: vk::PipelineStageFlags,
        dst_stage: vk::PipelineStageFlags,
    ) {
        let b = [vk::ImageMemoryBarrier::default()
            .src_access_mask(src_access)
            .dst_access_mask(dst_access)
            .old_layout(from)
            .new_layout(to)
            .src_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
            .dst_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
            .image(image)
            .subresource_range(color_range())];
        // SAFETY: the command buffer is recording.
        unsafe {
            self.kit.device.cmd_pipeline_barrier(
                self.cmd,
                src_stage,
                dst_stage,
                vk::DependencyFlags::empty(),
                &[],
                &[],
                &b,
            )
        };
    }

    /// Record an upload of `src` (from `offset`, tightly packed) into `img`, which ends in
    /// `SHADER_READ_ONLY_OPTIMAL` (the layout the NR inputs are expected in).
    pub fn upload_image(&self, src: &HostBuffer, offset: u64, img: &Image) {
        self.transition(
            img.image,
            vk::ImageLayout::UNDEFINED,
            vk::ImageLayout::TRANSFER_DST_OPTIMAL,
            vk::AccessFlags::empty(),
            vk::AccessFlags::TRANSFER_WRITE,
            vk::PipelineStageFlags::ALL_COMMANDS,
            vk::PipelineStageFlags::TRANSFER,
        );
        let region = [copy_region(offset, img)];
        // SAFETY: recording command buffer; the buffer holds the packed texels at `offset`.
        unsafe {
            self.kit.device.cmd_copy_buffer_to_image(
                self.cmd,
                src.buffer,
                img.image,
                vk::ImageLayout::TRANSFER_DST_OPTIMAL,
                &region,
            )
        };
        self.transition(
            img.image,
            vk::ImageLayout::TRANSFER_DST_OPTIMAL,
            vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL,
            vk::AccessFlags::TRANSFER_WRITE,
            vk::AccessFlags::SHADER_READ,
            vk::PipelineStageFlags::TRANSFER,
            vk::PipelineStageFlags::COMPUTE_SHADER,
        );
    }

    /// Record a copy of `img` (in `GENERAL`, written by a compute shader) into `dst`, made
    /// visible to the host.
    pub fn read_image(&self, img: &Image, dst: &HostBuffer) {
        self.transition(
            img.image,
            vk::ImageLayout::GENERAL,
            vk::ImageLayout::GENERAL,
            vk::AccessFlags::SHADER_WRITE,
            vk::AccessFlags::TRANSFER_READ,
            vk::PipelineStageFlags::COMPUTE_SHADER,
            vk::PipelineStageFlags::TRANSFER,
        );
        let region = [copy_region(0, img)];
        let mb = [vk::MemoryBarrier::default()
            .src_access_mask(vk::AccessFlags::TRANSFER_WRITE)
            .dst_access_mask(vk::AccessFlags::HOST_READ)];
        // SAFETY: recording command buffer; the buffer is large enough (checked by the caller).
        unsafe {
            self.kit.device.cmd_copy_image_to_buffer(
                self.cmd,
                img.image,
                vk::ImageLayout::GENERAL,
                dst.buffer,
                &region,
            );
            self.kit.device.cmd_pipeline_barrier(
                self.cmd,
                vk::PipelineStageFlags::TRANSFER,
                vk::PipelineStageFlags::HOST,
                vk::DependencyFlags::empty(),
                &mb,
                &[],
                &[],
            );
        }
    }

    /// A timestamp query pool of `count` queries (only when timestamps are available).
    pub fn query_pool(&self, count: u32) -> Result<Option<vk::QueryPool>, String> {
        if self.timestamp_period_ns.is_none() {
            return Ok(None);
        }
        let info = vk::QueryPoolCreateInfo::default()
            .query_type(vk::QueryType::TIMESTAMP)
            .query_count(count);
        // SAFETY: valid create info.
        unsafe { self.kit.device.create_query_pool(&info, None) }
            .map(Some)
            .map_err(|e| format!("vkCreateQueryPool failed: {e}"))
    }

    /// Destroy a pool from [`App::query_pool`]; call with the device idle.
    pub fn free_query_pool(&self, pool: Option<vk::QueryPool>) {
        if let Some(q) = pool {
            // SAFETY: the pool is ours and, the device being idle, no work uses it.
            unsafe { self.kit.device.destroy_query_pool(q, None) };
        }
    }

    /// Milliseconds between queries `first` and `first + 1` of `pool` (after the wait).
    pub fn elapsed_ms(&self, pool: vk::QueryPool, first: u32) -> Option<f64> {
        let period = self.timestamp_period_ns?;
        let mut t = [0u64; 2];
        // SAFETY: the queries were written by a completed submission.
        unsafe {
            self.kit.device.get_query_pool_results(
                pool,
                first,
                &mut t,
                vk::QueryResultFlags::TYPE_64,
            )
        }
        .ok()?;
        Some(t[1].wrapping_sub(t[0]) as f64 * period / 1e6)
    }
}

fn copy_region(offset: u64, img: &Image) -> vk::BufferImageCopy {
    openngx_tools::devkit::copy_region(offset, img.width, img.height)
}
