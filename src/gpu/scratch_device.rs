//! [`ScratchDevice`]: a short-lived logical device of the library's own on the caller's physical
//! device, for a measurement that must finish before anything is recorded for the caller (the
//! tensor route's profile probe). NGX gives the library the caller's device but no queue it may
//! submit to, and a creation call must decide its route at once; a device of our own has its
//! own queue, so the probe runs and is read back synchronously, then everything is destroyed.
//! What the probe measures (the tensor cores' arithmetic) belongs to the physical device and
//! its driver, not to a logical device.
//!
//! One compute dispatch: binding 0 the input bytes, binding 1 the output, host-visible coherent
//! memory, one fence with a timeout. Every object is destroyed on every path.

use std::ffi::CStr;
use std::time::Duration;

use ash::vk;

use super::error::{GpuError, VkContext};

/// How long the probe's dispatch may take before it is abandoned (it takes microseconds).
const WAIT: Duration = Duration::from_secs(10);

/// A logical device with one compute queue and the features the caller names.
pub struct ScratchDevice {
    instance: ash::Instance,
    physical: vk::PhysicalDevice,
    device: ash::Device,
    queue: vk::Queue,
    family: u32,
}

/// The features a scratch device enables: the exact route's storage and arithmetic types,
/// and, with `coop_matrix`, `VK_KHR_cooperative_matrix` with the Vulkan memory model its
/// shaders declare.
#[derive(Clone, Copy, Debug, Default)]
pub struct ScratchFeatures {
    pub coop_matrix: bool,
}

impl ScratchDevice {
    /// Create the device.
    ///
    /// # Safety
    /// `physical` must be a physical device of `instance`, which must outlive the device.
    pub unsafe fn open(
        instance: &ash::Instance,
        physical: vk::PhysicalDevice,
        features: ScratchFeatures,
    ) -> Result<ScratchDevice, GpuError> {
        let families = instance.get_physical_device_queue_family_properties(physical);
        let Some(family) = families
            .iter()
            .position(|f| f.queue_flags.contains(vk::QueueFlags::COMPUTE))
        else {
            return Err(GpuError::invalid(
                "scratch device",
                "the physical device has no compute queue family",
            ));
        };
        let family = family as u32;
        let priorities = [1.0f32];
        let queues = [vk::DeviceQueueCreateInfo::default()
            .queue_family_index(family)
            .queue_priorities(&priorities)];
        let mut f11 =
            vk::PhysicalDeviceVulkan11Features::default().storage_buffer16_bit_access(true);
        let mut f12 = vk::PhysicalDeviceVulkan12Features::default()
            .shader_float16(true)
            .shader_int8(true)
            .storage_buffer8_bit_access(true)
            .vulkan_memory_model(features.coop_matrix);
        let mut fcm =
            vk::PhysicalDeviceCooperativeMatrixFeaturesKHR::default().cooperative_matrix(true);
        let extensions: Vec<*const std::ffi::c_char> = if features.coop_matrix {
            vec![ash::khr::cooperative_matrix::NAME.as_ptr()]
        } else {
            Vec::new()
        };
        let mut info = vk::DeviceCreateInfo::default()
            .queue_create_infos(&queues)
            .enabled_extension_names(&extensions)
            .push_next(&mut f11)
            .push_next(&mut f12);
        if features.coop_matrix {
            info = info.push_next(&mut fcm);
        }
        let device = instance
            .create_device(physical, &info, None)
            .vk("vkCreateDevice (scratch device)")?;
        let queue = device.get_device_queue(family, 0);
        Ok(ScratchDevice {
            instance: instance.clone(),
            physical,
            device,
            queue,
            family,
        })
    }

    /// Run `spirv` once with `groups` workgroups: binding 0 holds `input`, binding 1 gets
    /// `output_len` bytes (pre-filled with 0xFF so unwritten bytes show), which are returned.
    /// `spec` are (constant id, u32 value) specializations.
    pub fn run(
        &self,
        spirv: &[u32],
        spec: &[(u32, u32)],
        input: &[u8],
        output_len: usize,
        groups: u32,
    ) -> Result<Vec<u8>, GpuError> {
        let mut objects = Objects::new(&self.device);
        let r = self.run_with(&mut objects, spirv, spec, input, output_len, groups);
        // SAFETY: the fence was waited for (or the wait failed, in which case the queue is
        // drained below before anything is destroyed).
        unsafe {
            if r.is_err() {
                let _ = self.device.queue_wait_idle(self.queue);
            }
            objects.destroy();
        }
        r
    }

    fn run_with(
        &self,
        o: &mut Objects<'_>,
        spirv: &[u32],
        spec: &[(u32, u32)],
        input: &[u8],
        output_len: usize,
        groups: u32,
    ) -> Result<Vec<u8>, GpuError> {
        let d = &self.device;
        let (in_buf, in_mem, in_ptr) = self.host_buffer(o, input.len().max(4) as u64)?;
        let (out_buf, out_mem, out_ptr) = self.host_buffer(o, output_len.max(4) as u64)?;
        // SAFETY: both mappings cover at least the lengths written (host_buffer sized them).
        unsafe {
            std::ptr::copy_nonoverlapping(input.as_ptr(), in_ptr, input.len());
            std::ptr::write_bytes(out_ptr, 0xFF, output_len);
        }
        let _ = (in_mem, out_mem);
        let bindings = [0u32, 1].map(|b| {
            vk::DescriptorSetLayoutBinding::default()
                .binding(b)
                .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                .descriptor_count(1)
                .stage_flags(vk::ShaderStageFlags::COMPUTE)
        });
        // SAFETY: (whole block) every create info is a local valid for its call, on this live
        // device; each object is registered in `o` and destroyed by `run`.
        unsafe {
            let dsl = d
                .create_descriptor_set_layout(
                    &vk::DescriptorSetLayoutCreateInfo::default().bindings(&bindings),
                    None,
                )
                .vk("vkCreateDescriptorSetLayout")?;
            o.dsl = dsl;
            let layouts = [dsl];
            let layout = d
                .create_pipeline_layout(
                    &vk::PipelineLayoutCreateInfo::default().set_layouts(&layouts),
                    None,
                )
                .vk("vkCreatePipelineLayout")?;
            o.layout = layout;
            let module = d
                .create_shader_module(&vk::ShaderModuleCreateInfo::default().code(spirv), None)
                .vk("vkCreateShaderModule")?;
            o.module = module;
            let entries: Vec<vk::SpecializationMapEntry> = spec
                .iter()
                .enumerate()
                .map(|(i, (id, _))| vk::SpecializationMapEntry {
                    constant_id: *id,
                    offset: 4 * i as u32,
                    size: 4,
                })
                .collect();
            let data: Vec<u8> = spec.iter().flat_map(|(_, v)| v.to_ne_bytes()).collect();
            let spec_info = vk::SpecializationInfo::default()
                .map_entries(&entries)
                .data(&data);
            let stage = vk::PipelineShaderStageCreateInfo::default()
                .stage(vk::ShaderStageFlags::COMPUTE)
                .module(module)
                .name(c"main")
                .specialization_info(&spec_info);
            let pinfo = [vk::ComputePipelineCreateInfo::default()
                .stage(stage)
                .layout(layout)];
            let pipeline = d
                .create_compute_pipelines(vk::PipelineCache::null(), &pinfo, None)
                .map_err(|(_, r)| r)
                .vk("vkCreateComputePipelines")?[0];
            o.pipeline = pipeline;
            let sizes = [vk::DescriptorPoolSize {
                ty: vk::DescriptorType::STORAGE_BUFFER,
                descriptor_count: 2,
            }];
            let pool = d
                .create_descriptor_pool(
                    &vk::DescriptorPoolCreateInfo::default()
                        .max_sets(1)
                        .pool_sizes(&sizes),
                    None,
                )
                .vk("vkCreateDescriptorPool")?;
            o.dpool = pool;
            let set = d
                .allocate_descriptor_sets(
                    &vk::DescriptorSetAllocateInfo::default()
                        .descriptor_pool(pool)
                        .set_layouts(&layouts),
                )
                .vk("vkAllocateDescriptorSets")?[0];
            let infos = [in_buf, out_buf].map(|b| {
                [vk::DescriptorBufferInfo {
                    buffer: b,
                    offset: 0,
                    range: vk::WHOLE_SIZE,
                }]
            });
            let writes = [0usize, 1].map(|i| {
                vk::WriteDescriptorSet::default()
                    .dst_set(set)
                    .dst_binding(i as u32)
                    .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                    .buffer_info(&infos[i])
            });
            d.update_descriptor_sets(&writes, &[]);
            let cpool = d
                .create_command_pool(
                    &vk::CommandPoolCreateInfo::default().queue_family_index(self.family),
                    None,
                )
                .vk("vkCreateCommandPool")?;
            o.cpool = cpool;
            let cmd = d
                .allocate_command_buffers(
                    &vk::CommandBufferAllocateInfo::default()
                        .command_pool(cpool)
                        .level(vk::CommandBufferLevel::PRIMARY)
                        .command_buffer_count(1),
                )
                .vk("vkAllocateCommandBuffers")?[0];
            d.begin_command_buffer(
                cmd,
                &vk::CommandBufferBeginInfo::default()
                    .flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT),
            )
            .vk("vkBeginCommandBuffer")?;
            d.cmd_bind_pipeline(cmd, vk::PipelineBindPoint::COMPUTE, pipeline);
            d.cmd_bind_descriptor_sets(cmd, vk::PipelineBindPoint::COMPUTE, layout, 0, &[set], &[]);
            d.cmd_dispatch(cmd, groups, 1, 1);
            let to_host = [vk::MemoryBarrier::default()
                .src_access_mask(vk::AccessFlags::SHADER_WRITE)
                .dst_access_mask(vk::AccessFlags::HOST_READ)];
            d.cmd_pipeline_barrier(
                cmd,
                vk::PipelineStageFlags::COMPUTE_SHADER,
                vk::PipelineStageFlags::HOST,
                vk::DependencyFlags::empty(),
                &to_host,
                &[],
                &[],
            );
            d.end_command_buffer(cmd).vk("vkEndCommandBuffer")?;
            let fence = d
                .create_fence(&vk::FenceCreateInfo::default(), None)
                .vk("vkCreateFence")?;
            o.fence = fence;
            let cmds = [cmd];
            let submit = [vk::SubmitInfo::default().command_buffers(&cmds)];
            d.queue_submit(self.queue, &submit, fence)
                .vk("vkQueueSubmit")?;
            d.wait_for_fences(&[fence], true, WAIT.as_nanos() as u64)
                .vk("vkWaitForFences (scratch device)")?;
            let mut out = vec![0u8; output_len];
            std::ptr::copy_nonoverlapping(out_ptr, out.as_mut_ptr(), output_len);
            Ok(out)
        }
    }

    /// A host-visible, coherent storage buffer of `size` bytes, mapped.
    fn host_buffer(
        &self,
        o: &mut Objects<'_>,
        size: u64,
    ) -> Result<(vk::Buffer, vk::DeviceMemory, *mut u8), GpuError> {
        let d = &self.device;
        // SAFETY: (whole block) valid create infos on this live device; the objects go into `o`.
        unsafe {
            let buffer = d
                .create_buffer(
                    &vk::BufferCreateInfo::default()
                        .size(size)
                        .usage(vk::BufferUsageFlags::STORAGE_BUFFER),
                    None,
                )
                .vk("vkCreateBuffer")?;
            o.buffers.push(buffer);
            let req = d.get_buffer_memory_requirements(buffer);
            let props = self
                .instance
                .get_physical_device_memory_properties(self.physical);
            let want =
                vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_COHERENT;
            let Some(index) = (0..props.memory_type_count).find(|&i| {
                req.memory_type_bits & (1 << i) != 0
                    && props.memory_types[i as usize].property_flags.contains(want)
            }) else {
                return Err(GpuError::invalid(
                    "scratch device",
                    "no host-visible coherent memory type for a storage buffer",
                ));
            };
            let memory = d
                .allocate_memory(
                    &vk::MemoryAllocateInfo::default()
                        .allocation_size(req.size)
                        .memory_type_index(index),
                    None,
                )
                .vk("vkAllocateMemory")?;
            o.memory.push(memory);
            d.bind_buffer_memory(buffer, memory, 0)
                .vk("vkBindBufferMemory")?;
            let ptr = d
                .map_memory(memory, 0, vk::WHOLE_SIZE, vk::MemoryMapFlags::empty())
                .vk("vkMapMemory")?;
            Ok((buffer, memory, ptr.cast()))
        }
    }
}

impl Drop for ScratchDevice {
    fn drop(&mut self) {
        // SAFETY: every object made on the device was destroyed by `run`; nothing is pending.
        unsafe { self.device.destroy_device(None) };
    }
}

/// The objects of one run, destroyed together.
struct Objects<'a> {
    device: &'a ash::Device,
    buffers: Vec<vk::Buffer>,
    memory: Vec<vk::DeviceMemory>,
    dsl: vk::DescriptorSetLayout,
    layout: vk::PipelineLayout,
    module: vk::ShaderModule,
    pipeline: vk::Pipeline,
    dpool: vk::DescriptorPool,
    cpool: vk::CommandPool,
    fence: vk::Fence,
}

impl<'a> Objects<'a> {
    fn new(device: &'a ash::Device) -> Self {
        Objects {
            device,
            buffers: Vec::new(),
            memory: Vec::new(),
            dsl: vk::DescriptorSetLayout::null(),
            layout: vk::PipelineLayout::null(),
            module: vk::ShaderModule::null(),
            pipeline: vk::Pipeline::null(),
            dpool: vk::DescriptorPool::null(),
            cpool: vk::CommandPool::null(),
            fence: vk::Fence::null(),
        }
    }

    /// # Safety
    /// No submitted work may use the objects.
    unsafe fn destroy(&mut self) {
        let d = self.device;
        // Null handles are ignored by every destroy call.
        d.destroy_fence(self.fence, None);
        d.destroy_command_pool(self.cpool, None);
        d.destroy_descriptor_pool(self.dpool, None);
        d.destroy_pipeline(self.pipeline, None);
        d.destroy_shader_module(self.module, None);
        d.destroy_pipeline_layout(self.layout, None);
        d.destroy_descriptor_set_layout(self.dsl, None);
        for b in self.buffers.drain(..) {
            d.destroy_buffer(b, None);
        }
        for m in self.memory.drain(..) {
            d.free_memory(m, None);
        }
    }
}

/// The extension a scratch device with `coop_matrix` enables (for reports).
pub const COOP_MATRIX_EXTENSION: &CStr = ash::khr::cooperative_matrix::NAME;
