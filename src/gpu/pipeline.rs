//! Compute pipelines built from the embedded SPIR-V by key, with specialization constants.
//!
//! One layout style for every kernel: descriptor set 0 holds `buffers` storage buffers at
//! bindings `0..buffers`, plus `push_bytes` of push constants at offset 0 (compute stage). Set
//! layouts, pipeline layouts and pipelines are created once per device (the store lives in the
//! [`GpuContext`]) behind one `VkPipelineCache`, and destroyed with the context.

use std::collections::HashMap;

use ash::vk;
use parking_lot::Mutex;

use super::context::GpuContext;
use super::error::{GpuError, VkContext};
use super::shaders;

/// One 32-bit specialization constant (`layout(constant_id = id)`); bools are 0/1.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SpecConstant {
    pub id: u32,
    pub bits: u32,
}

impl SpecConstant {
    pub fn u32(id: u32, v: u32) -> Self {
        SpecConstant { id, bits: v }
    }
    pub fn i32(id: u32, v: i32) -> Self {
        SpecConstant { id, bits: v as u32 }
    }
    pub fn f32(id: u32, v: f32) -> Self {
        SpecConstant {
            id,
            bits: v.to_bits(),
        }
    }
    pub fn bool(id: u32, v: bool) -> Self {
        SpecConstant { id, bits: v as u32 }
    }
}

/// What to build: the shader key (path under `shaders/` without extension), the layout and the
/// specialization.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct PipelineDesc {
    pub shader: String,
    pub buffers: u32,
    pub push_bytes: u32,
    pub spec: Vec<SpecConstant>,
}

impl PipelineDesc {
    pub fn new(shader: &str, buffers: u32, push_bytes: u32) -> Self {
        PipelineDesc {
            shader: shader.to_owned(),
            buffers,
            push_bytes,
            spec: Vec::new(),
        }
    }

    pub fn with_spec(mut self, spec: SpecConstant) -> Self {
        self.spec.push(spec);
        self
    }
}

/// Handles of a built pipeline. They stay valid as long as the context that built them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ComputePipeline {
    pub pipeline: vk::Pipeline,
    pub layout: vk::PipelineLayout,
    pub set_layout: vk::DescriptorSetLayout,
    pub buffers: u32,
    pub push_bytes: u32,
}

#[derive(Clone, Copy)]
struct Layout {
    set_layout: vk::DescriptorSetLayout,
    layout: vk::PipelineLayout,
}

/// Per-device pipeline state (owned by the [`GpuContext`]).
pub(crate) struct PipelineStore {
    cache: vk::PipelineCache,
    layouts: Mutex<HashMap<(u32, u32), Layout>>,
    pipelines: Mutex<HashMap<PipelineDesc, ComputePipeline>>,
}

impl PipelineStore {
    pub(crate) fn new(device: &ash::Device) -> Result<Self, GpuError> {
        // SAFETY: `device` is the caller's live device (checked by the context).
        let cache =
            unsafe { device.create_pipeline_cache(&vk::PipelineCacheCreateInfo::default(), None) }
                .vk("vkCreatePipelineCache")?;
        Ok(PipelineStore {
            cache,
            layouts: Mutex::new(HashMap::new()),
            pipelines: Mutex::new(HashMap::new()),
        })
    }

    /// # Safety
    /// No pipeline or layout of this store may be in use by pending GPU work.
    pub(crate) unsafe fn destroy(&mut self, device: &ash::Device) {
        for (_, p) in self.pipelines.get_mut().drain() {
            device.destroy_pipeline(p.pipeline, None);
        }
        for (_, l) in self.layouts.get_mut().drain() {
            device.destroy_pipeline_layout(l.layout, None);
            device.destroy_descriptor_set_layout(l.set_layout, None);
        }
        device.destroy_pipeline_cache(self.cache, None);
        self.cache = vk::PipelineCache::null();
    }

    fn layout(
        &self,
        device: &ash::Device,
        buffers: u32,
        push_bytes: u32,
    ) -> Result<Layout, GpuError> {
        let mut layouts = self.layouts.lock();
        if let Some(l) = layouts.get(&(buffers, push_bytes)) {
            return Ok(*l);
        }
        let bindings: Vec<_> = (0..buffers)
            .map(|b| {
                vk::DescriptorSetLayoutBinding::default()
                    .binding(b)
                    .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                    .descriptor_count(1)
                    .stage_flags(vk::ShaderStageFlags::COMPUTE)
            })
            .collect();
        // SAFETY: valid create infos on the caller's device.
        let set_layout = unsafe {
            device.create_descriptor_set_layout(
                &vk::DescriptorSetLayoutCreateInfo::default().bindings(&bindings),
                None,
            )
        }
        .vk("vkCreateDescriptorSetLayout")?;
        let ranges = [vk::PushConstantRange::default()
            .stage_flags(vk::ShaderStageFlags::COMPUTE)
            .offset(0)
            .size(push_bytes)];
        let set_layouts = [set_layout];
        let mut info = vk::PipelineLayoutCreateInfo::default().set_layouts(&set_layouts);
        if push_bytes > 0 {
            info = info.push_constant_ranges(&ranges);
        }
        // SAFETY: as above.
        let layout = match unsafe { device.create_pipeline_layout(&info, None) } {
            Ok(l) => l,
            Err(result) => {
                unsafe { device.destroy_descriptor_set_layout(set_layout, None) };
                return Err(GpuError::Vk {
                    call: "vkCreatePipelineLayout",
                    result,
                });
            }
        };
        let l = Layout { set_layout, layout };
        layouts.insert((buffers, push_bytes), l);
        Ok(l)
    }
}

impl GpuContext {
    /// The pipeline for `desc`, built on first use and cached for the context's lifetime.
    pub fn pipeline(&self, desc: &PipelineDesc) -> Result<ComputePipeline, GpuError> {
        let store = &self.pipelines;
        if let Some(p) = store.pipelines.lock().get(desc) {
            return Ok(*p);
        }
        let caps = self.capabilities();
        if desc.push_bytes % 4 != 0 || desc.push_bytes > caps.max_push_constants_size {
            return Err(GpuError::invalid(
                format!("pipeline `{}`", desc.shader),
                format!(
                    "push constants of {} bytes (multiple of 4, at most {})",
                    desc.push_bytes, caps.max_push_constants_size
                ),
            ));
        }
        let words = shaders::spirv(&desc.shader)
            .ok_or_else(|| GpuError::UnknownShader(desc.shader.clone()))?;
        let device = self.device();
        let layout = store.layout(device, desc.buffers, desc.push_bytes)?;
        // SAFETY: SPIR-V produced by our build script, valid device.
        let module = unsafe {
            device.create_shader_module(&vk::ShaderModuleCreateInfo::default().code(&words), None)
        }
        .vk("vkCreateShaderModule")?;
        let entries: Vec<_> = desc
            .spec
            .iter()
            .enumerate()
            .map(|(i, s)| vk::SpecializationMapEntry {
                constant_id: s.id,
                offset: (i * 4) as u32,
                size: 4,
            })
            .collect();
        let data: Vec<u8> = desc
            .spec
            .iter()
            .flat_map(|s| s.bits.to_ne_bytes())
            .collect();
        let spec_info = vk::SpecializationInfo::default()
            .map_entries(&entries)
            .data(&data);
        let stage = vk::PipelineShaderStageCreateInfo::default()
            .stage(vk::ShaderStageFlags::COMPUTE)
            .module(module)
            .name(c"main")
            .specialization_info(&spec_info);
        let info = vk::ComputePipelineCreateInfo::default()
            .stage(stage)
            .layout(layout.layout);
        // SAFETY: as above; the module may be destroyed once the pipeline exists.
        let created = unsafe { device.create_compute_pipelines(store.cache, &[info], None) };
        unsafe { device.destroy_shader_module(module, None) };
        let pipeline = match created {
            Ok(p) => p.first().copied().ok_or(GpuError::Vk {
                call: "vkCreateComputePipelines",
                result: vk::Result::ERROR_UNKNOWN,
            })?,
            Err((_, result)) => {
                return Err(GpuError::Vk {
                    call: "vkCreateComputePipelines",
                    result,
                })
            }
        };
        let built = ComputePipeline {
            pipeline,
            layout: layout.layout,
            set_layout: layout.set_layout,
            buffers: desc.buffers,
            push_bytes: desc.push_bytes,
        };
        let mut pipelines = store.pipelines.lock();
        if let Some(raced) = pipelines.get(desc) {
            // Another thread built it meanwhile: keep one.
            unsafe { device.destroy_pipeline(pipeline, None) };
            return Ok(*raced);
        }
        pipelines.insert(desc.clone(), built);
        Ok(built)
    }

    /// Bytes of the device's pipeline cache (for a caller that wants to persist it).
    pub fn pipeline_cache_data(&self) -> Result<Vec<u8>, GpuError> {
        // SAFETY: the cache belongs to this context.
        unsafe { self.device().get_pipeline_cache_data(self.pipelines.cache) }
            .vk("vkGetPipelineCacheData")
    }
}
