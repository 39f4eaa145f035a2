//! The demo's own Vulkan objects, made the way an engine would before it hands them to NGX: the
//! instance, the device (with the features the exact route needs), a compute queue, a command
//! buffer, the colour / motion / output images, staging memory and a timestamp query pool.
//! Nothing here calls the library except to ask which device features to enable.

use ash::vk;
use openngx::gpu::context::Capabilities;
use openngx::nr::route::ExactRoute;

/// The application side of the demo on one Vulkan device.
pub struct App {
    pub entry: ash::Entry,
    pub instance: ash::Instance,
    pub physical: vk::PhysicalDevice,
    pub device: ash::Device,
    pub queue: vk::Queue,
    pub pool: vk::CommandPool,
    pub cmd: vk::CommandBuffer,
    pub device_name: String,
    /// A CPU implementation (lavapipe): minutes per network evaluation.
    pub is_cpu: bool,
    /// Nanoseconds per timestamp tick, when the queue can write timestamps.
    pub timestamp_period_ns: Option<f64>,
    memory: vk::PhysicalDeviceMemoryProperties,
}

/// A 2D image with its memory and a full view.
pub struct Image {
    pub image: vk::Image,
    pub memory: vk::DeviceMemory,
    pub view: vk::ImageView,
    pub format: vk::Format,
    pub width: u32,
    pub height: u32,
}

/// A host-visible, coherent buffer, mapped for its whole life.
pub struct HostBuffer {
    pub buffer: vk::Buffer,
    pub memory: vk::DeviceMemory,
    pub mapped: *mut u8,
    pub size: u64,
}

fn vkerr(call: &str) -> impl Fn(vk::Result) -> String + '_ {
    move |e| format!("{call} failed: {e}")
}

impl App {
    /// Creates the instance and picks device `index` (`None`: the first that can run the exact
    /// route, real GPUs before CPU implementations).
    pub fn new(index: Option<usize>) -> Result<App, String> {
        // SAFETY: loading the system Vulkan loader; failure is reported.
        let entry = unsafe { ash::Entry::load() }
            .map_err(|e| format!("no Vulkan loader ({e}); install libvulkan1 and a driver (mesa-vulkan-drivers gives lavapipe)"))?;
        let app = vk::ApplicationInfo::default()
            .application_name(c"openngx demo")
            .api_version(vk::API_VERSION_1_2);
        // SAFETY: valid create info.
        let instance = unsafe {
            entry.create_instance(
                &vk::InstanceCreateInfo::default().application_info(&app),
                None,
            )
        }
        .map_err(vkerr("vkCreateInstance"))?;
        match Self::with_instance(entry, &instance, index) {
            Ok(a) => Ok(a),
            Err(e) => {
                // SAFETY: nothing else was created from the instance.
                unsafe { instance.destroy_instance(None) };
                Err(e)
            }
        }
    }

    fn with_instance(
        entry: ash::Entry,
        instance: &ash::Instance,
        index: Option<usize>,
    ) -> Result<App, String> {
        // SAFETY: the instance is live.
        let physicals = match unsafe { instance.enumerate_physical_devices() } {
            Ok(p) => p,
            Err(e) => return Err(format!("vkEnumeratePhysicalDevices: {e}")),
        };
        let caps: Vec<Capabilities> = physicals
            .iter()
            // SAFETY: each physical device belongs to the instance.
            .map(|&pd| unsafe { Capabilities::query(instance, pd) })
            .collect();
        let usable = |i: usize| ExactRoute::missing(&caps[i]).is_empty();
        let chosen = match index {
            Some(i) if i >= physicals.len() => {
                let names: Vec<String> = caps
                    .iter()
                    .enumerate()
                    .map(|(i, c)| format!("{i}: {}", c.device_name))
                    .collect();
                return Err(format!(
                    "--device {i}: there are {} device(s) [{}]",
                    physicals.len(),
                    names.join(", ")
                ));
            }
            Some(i) if !usable(i) => {
                return Err(format!(
                    "--device {i} ({}) cannot run the exact route, missing: {}",
                    caps[i].device_name,
                    ExactRoute::missing(&caps[i]).join(", ")
                ))
            }
            Some(i) => i,
            None => {
                let rank = |t: vk::PhysicalDeviceType| match t {
                    vk::PhysicalDeviceType::DISCRETE_GPU => 0,
                    vk::PhysicalDeviceType::INTEGRATED_GPU => 1,
                    vk::PhysicalDeviceType::VIRTUAL_GPU => 2,
                    _ => 3,
                };
                match (0..physicals.len())
                    .filter(|&i| usable(i))
                    .min_by_key(|&i| rank(caps[i].device_type))
                {
                    Some(i) => i,
                    None => {
                        let why: Vec<String> = caps
                            .iter()
                            .map(|c| {
                                format!(
                                    "{}: missing {}",
                                    c.device_name,
                                    ExactRoute::missing(c).join(", ")
                                )
                            })
                            .collect();
                        return Err(format!(
                            "no Vulkan device can run the exact route [{}]",
                            why.join("; ")
                        ));
                    }
                }
            }
        };
        let physical = physicals[chosen];
        let cap = &caps[chosen];
        // SAFETY: live physical device.
        let families = unsafe { instance.get_physical_device_queue_family_properties(physical) };
        let Some(family) = families
            .iter()
            .position(|f| f.queue_flags.contains(vk::QueueFlags::COMPUTE))
        else {
            return Err(format!("{} has no compute queue", cap.device_name));
        };
        let timestamp_period_ns = (families[family].timestamp_valid_bits > 0 && cap.timestamps)
            .then_some(cap.timestamp_period_ns as f64);
        let priorities = [1.0f32];
        let queues = [vk::DeviceQueueCreateInfo::default()
            .queue_family_index(family as u32)
            .queue_priorities(&priorities)];
        let mut f11 = vk::PhysicalDeviceVulkan11Features::default();
        let mut f12 = vk::PhysicalDeviceVulkan12Features::default();
        ExactRoute::enable_features(&mut f11, &mut f12);
        let info = vk::DeviceCreateInfo::default()
            .queue_create_infos(&queues)
            .push_next(&mut f11)
            .push_next(&mut f12);
        // SAFETY: valid create info for a live physical device.
        let device = match unsafe { instance.create_device(physical, &info, None) } {
            Ok(d) => d,
            Err(e) => return Err(format!("vkCreateDevice on {}: {e}", cap.device_name)),
        };
        // SAFETY: live device; family/queue 0 were requested above.
        let queue = unsafe { device.get_device_queue(family as u32, 0) };
        let pinfo = vk::CommandPoolCreateInfo::default()
            .queue_family_index(family as u32)
            .flags(vk::CommandPoolCreateFlags::RESET_COMMAND_BUFFER);
        // SAFETY: live device.
        let made = unsafe {
            device.create_command_pool(&pinfo, None).and_then(|pool| {
                let ai = vk::CommandBufferAllocateInfo::default()
                    .command_pool(pool)
                    .level(vk::CommandBufferLevel::PRIMARY)
                    .command_buffer_count(1);
                match device.allocate_command_buffers(&ai) {
                    Ok(c) if !c.is_empty() => Ok((pool, c[0])),
                    Ok(_) => {
                        device.destroy_command_pool(pool, None);
                        Err(vk::Result::ERROR_UNKNOWN)
                    }
                    Err(e) => {
                        device.destroy_command_pool(pool, None);
                        Err(e)
                    }
                }
            })
        };
        let (pool, cmd) = match made {
            Ok(x) => x,
            Err(e) => {
                // SAFETY: nothing else was created on the device.
                unsafe { device.destroy_device(None) };
                return Err(format!("command pool/buffer: {e}"));
            }
        };
        // SAFETY: live physical device.
        let memory = unsafe { instance.get_physical_device_memory_properties(physical) };
        Ok(App {
            entry,
            device_name: cap.device_name.clone(),
            is_cpu: cap.device_type == vk::PhysicalDeviceType::CPU,
            instance: instance.clone(),
            physical,
            device,
            queue,
            pool,
            cmd,
            timestamp_period_ns,
            memory,
        })
    }

    fn memory_type(&self, bits: u32, want: vk::MemoryPropertyFlags) -> Result<u32, String> {
        (0..self.memory.memory_type_count)
            .find(|&i| {
                bits & (1 << i) != 0
                    && self.memory.memory_types[i as usize]
                        .property_flags
                        .contains(want)
            })
            .ok_or_else(|| format!("no memory type with {want:?}"))
    }

    /// Memory for `req` from the first type with `want`.
    fn allocate(
        &self,
        req: vk::MemoryRequirements,
        want: vk::MemoryPropertyFlags,
    ) -> Result<vk::DeviceMemory, String> {
        let t = self.memory_type(req.memory_type_bits, want)?;
        let info = vk::MemoryAllocateInfo::default()
            .allocation_size(req.size)
            .memory_type_index(t);
        // SAFETY: our live device; the caller binds and frees the memory.
        unsafe { self.device.allocate_memory(&info, None) }.map_err(vkerr("vkAllocateMemory"))
    }

    /// A device-local 2D image (one mip, one layer) in `UNDEFINED` layout, with a view.
    pub fn image(
        &self,
        format: vk::Format,
        width: u32,
        height: u32,
        usage: vk::ImageUsageFlags,
    ) -> Result<Image, String> {
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
        let d = &self.device;
        // SAFETY: valid create infos on the live device; partial objects are destroyed on error.
        unsafe {
            let image = d
                .create_image(&info, None)
                .map_err(vkerr("vkCreateImage"))?;
            let req = d.get_image_memory_requirements(image);
            let alloc = self.allocate(req, vk::MemoryPropertyFlags::DEVICE_LOCAL);
            let memory = match alloc {
                Ok(m) => m,
                Err(e) => {
                    d.destroy_image(image, None);
                    return Err(e);
                }
            };
            let view = d.bind_image_memory(image, memory, 0).and_then(|()| {
                d.create_image_view(
                    &vk::ImageViewCreateInfo::default()
                        .image(image)
                        .view_type(vk::ImageViewType::TYPE_2D)
                        .format(format)
                        .subresource_range(color_range()),
                    None,
                )
            });
            match view {
                Ok(view) => Ok(Image {
                    image,
                    memory,
                    view,
                    format,
                    width,
                    height,
                }),
                Err(e) => {
                    d.destroy_image(image, None);
                    d.free_memory(memory, None);
                    Err(format!("image view: {e}"))
                }
            }
        }
    }

    /// A mapped host-visible buffer.
    pub fn host_buffer(
        &self,
        size: u64,
        usage: vk::BufferUsageFlags,
    ) -> Result<HostBuffer, String> {
        let d = &self.device;
        // SAFETY: valid create infos on the live device; partial objects are destroyed on error.
        unsafe {
            let buffer = d
                .create_buffer(
                    &vk::BufferCreateInfo::default().size(size).usage(usage),
                    None,
                )
                .map_err(vkerr("vkCreateBuffer"))?;
            let req = d.get_buffer_memory_requirements(buffer);
            let made = self.allocate(
                req,
                vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_COHERENT,
            );
            let memory = match made {
                Ok(m) => m,
                Err(e) => {
                    d.destroy_buffer(buffer, None);
                    return Err(e);
                }
            };
            let mapped = d.bind_buffer_memory(buffer, memory, 0).and_then(|()| {
                d.map_memory(memory, 0, vk::WHOLE_SIZE, vk::MemoryMapFlags::empty())
            });
            match mapped {
                Ok(p) => Ok(HostBuffer {
                    buffer,
                    memory,
                    mapped: p.cast(),
                    size,
                }),
                Err(e) => {
                    d.destroy_buffer(buffer, None);
                    d.free_memory(memory, None);
                    Err(format!("host buffer: {e}"))
                }
            }
        }
    }

    /// Begin recording the command buffer (reset first).
    pub fn begin(&self) -> Result<(), String> {
        // SAFETY: the command buffer is not pending (every submission is waited for).
        unsafe {
            self.device
                .reset_command_buffer(self.cmd, vk::CommandBufferResetFlags::empty())
                .map_err(vkerr("vkResetCommandBuffer"))?;
            self.device
                .begin_command_buffer(
                    self.cmd,
                    &vk::CommandBufferBeginInfo::default()
                        .flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT),
                )
                .map_err(vkerr("vkBeginCommandBuffer"))
        }
    }

    /// End, submit and wait for the command buffer.
    pub fn submit_and_wait(&self) -> Result<(), String> {
        let cmds = [self.cmd];
        // SAFETY: the command buffer is recording on this device; the queue is ours.
        unsafe {
            self.device
                .end_command_buffer(self.cmd)
                .map_err(vkerr("vkEndCommandBuffer"))?;
            let submit = vk::SubmitInfo::default().command_buffers(&cmds);
            self.device
                .queue_submit(self.queue, &[submit], vk::Fence::null())
                .map_err(vkerr("vkQueueSubmit"))?;
            self.device
                .queue_wait_idle(self.queue)
                .map_err(vkerr("vkQueueWaitIdle"))
        }
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
            self.device.cmd_pipeline_barrier(
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
            self.device.cmd_copy_buffer_to_image(
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
            self.device.cmd_copy_image_to_buffer(
                self.cmd,
                img.image,
                vk::ImageLayout::GENERAL,
                dst.buffer,
                &region,
            );
            self.device.cmd_pipeline_barrier(
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
        unsafe { self.device.create_query_pool(&info, None) }
            .map(Some)
            .map_err(vkerr("vkCreateQueryPool"))
    }

    /// Milliseconds between queries `first` and `first + 1` of `pool` (after the wait).
    pub fn elapsed_ms(&self, pool: vk::QueryPool, first: u32) -> Option<f64> {
        let period = self.timestamp_period_ns?;
        let mut t = [0u64; 2];
        // SAFETY: the queries were written by a completed submission.
        unsafe {
            self.device
                .get_query_pool_results(pool, first, &mut t, vk::QueryResultFlags::TYPE_64)
        }
        .ok()?;
        Some(t[1].wrapping_sub(t[0]) as f64 * period / 1e6)
    }

    /// Free an image.
    pub fn free_image(&self, img: Image) {
        // SAFETY: the device is idle when the demo frees its objects.
        unsafe {
            self.device.destroy_image_view(img.view, None);
            self.device.destroy_image(img.image, None);
            self.device.free_memory(img.memory, None);
        }
    }

    /// Free a host buffer.
    pub fn free_buffer(&self, b: HostBuffer) {
        // SAFETY: as in `free_image`.
        unsafe {
            self.device.destroy_buffer(b.buffer, None);
            self.device.free_memory(b.memory, None);
        }
    }
}

impl HostBuffer {
    /// Copy `data` to `offset` (must fit).
    pub fn write(&self, offset: u64, data: &[u8]) -> Result<(), String> {
        if offset + data.len() as u64 > self.size {
            return Err(format!(
                "{} bytes at {offset} overflow a {}-byte staging buffer",
                data.len(),
                self.size
            ));
        }
        // SAFETY: the mapping covers `size` bytes and nothing else aliases it while no
        // submission is pending.
        unsafe {
            std::ptr::copy_nonoverlapping(
                data.as_ptr(),
                self.mapped.add(offset as usize),
                data.len(),
            )
        };
        Ok(())
    }

    /// The first `len` bytes (after the submission that wrote them was waited for).
    pub fn read(&self, len: usize) -> Result<Vec<u8>, String> {
        if len as u64 > self.size {
            return Err(format!(
                "{len} bytes requested from a {}-byte readback buffer",
                self.size
            ));
        }
        let mut v = vec![0u8; len];
        // SAFETY: as in `write`.
        unsafe { std::ptr::copy_nonoverlapping(self.mapped, v.as_mut_ptr(), len) };
        Ok(v)
    }
}

impl Drop for App {
    fn drop(&mut self) {
        // SAFETY: every submission was waited for; the app's images and buffers were freed.
        unsafe {
            let _ = self.device.device_wait_idle();
            self.device.destroy_command_pool(self.pool, None);
            self.device.destroy_device(None);
            self.instance.destroy_instance(None);
        }
    }
}

fn color_range() -> vk::ImageSubresourceRange {
    vk::ImageSubresourceRange {
        aspect_mask: vk::ImageAspectFlags::COLOR,
        base_mip_level: 0,
        level_count: 1,
        base_array_layer: 0,
        layer_count: 1,
    }
}

fn copy_region(offset: u64, img: &Image) -> vk::BufferImageCopy {
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
            width: img.width,
            height: img.height,
            depth: 1,
        },
    }
}
