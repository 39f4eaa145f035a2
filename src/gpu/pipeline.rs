//! Compute pipelines built from the embedded SPIR-V by key, with specialization constants.
//!
//! One layout style for every kernel: descriptor set 0 holds `bindings` descriptors at bindings
//! `0..bindings`, storage buffers unless [`ImageSlots`] marks a binding as a sampled or storage
//! image (the kernels that read or write the caller's images), plus `push_bytes` of push
//! constants at offset 0 (compute stage). Set layouts, pipeline layouts and pipelines are created
//! once per device (the store lives in the [`GpuContext`]) behind one `VkPipelineCache`, and
//! destroyed with the context.

use std::collections::{HashMap, HashSet};
use std::ffi::CStr;
use std::sync::atomic::{AtomicBool, Ordering};

use ash::vk;
use parking_lot::Mutex;

use super::context::GpuContext;
use super::error::{GpuError, VkContext};
use super::shaders;

/// One 32-bit specialization constant (`layout(constant_id = id)`); bools are 0/1.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
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

/// What one binding of set 0 holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DescriptorKind {
    StorageBuffer,
    /// Read with `texelFetch` (no sampler).
    SampledImage,
    StorageImage,
}

impl DescriptorKind {
    pub fn vk(self) -> vk::DescriptorType {
        match self {
            DescriptorKind::StorageBuffer => vk::DescriptorType::STORAGE_BUFFER,
            DescriptorKind::SampledImage => vk::DescriptorType::SAMPLED_IMAGE,
            DescriptorKind::StorageImage => vk::DescriptorType::STORAGE_IMAGE,
        }
    }
}

/// Which bindings of set 0 hold images instead of storage buffers (bit `i` = binding `i`; a
/// binding is in at most one mask). Empty for every kernel that sees only buffers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct ImageSlots {
    pub sampled: u32,
    pub storage: u32,
}

impl ImageSlots {
    /// What binding `binding` holds.
    pub fn kind(&self, binding: u32) -> DescriptorKind {
        let bit = 1u32.checked_shl(binding).unwrap_or(0);
        if self.sampled & bit != 0 {
            DescriptorKind::SampledImage
        } else if self.storage & bit != 0 {
            DescriptorKind::StorageImage
        } else {
            DescriptorKind::StorageBuffer
        }
    }

    pub fn is_empty(&self) -> bool {
        self.sampled == 0 && self.storage == 0
    }
}

/// What to build: the shader key (path under `shaders/` without extension), the layout and the
/// specialization.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct PipelineDesc {
    pub shader: String,
    /// Descriptors in set 0 (bindings `0..bindings`).
    pub bindings: u32,
    /// Which of them are images (the rest are storage buffers).
    pub images: ImageSlots,
    pub push_bytes: u32,
    pub spec: Vec<SpecConstant>,
}

impl PipelineDesc {
    /// A kernel of `bindings` storage buffers (see [`PipelineDesc::with_image`]).
    pub fn new(shader: &str, bindings: u32, push_bytes: u32) -> Self {
        PipelineDesc {
            shader: shader.to_owned(),
            bindings,
            images: ImageSlots::default(),
            push_bytes,
            spec: Vec::new(),
        }
    }

    pub fn with_spec(mut self, spec: SpecConstant) -> Self {
        self.spec.push(spec);
        self
    }

    /// Binding `binding` holds an image of `kind` instead of a storage buffer (a binding out of
    /// range is refused when the pipeline is built).
    pub fn with_image(mut self, binding: u32, kind: DescriptorKind) -> Self {
        let Some(bit) = 1u32.checked_shl(binding) else {
            // Not representable in the masks: make the layout one the build refuses.
            self.bindings = u32::MAX;
            return self;
        };
        self.images.sampled &= !bit;
        self.images.storage &= !bit;
        match kind {
            DescriptorKind::SampledImage => self.images.sampled |= bit,
            DescriptorKind::StorageImage => self.images.storage |= bit,
            DescriptorKind::StorageBuffer => {}
        }
        self
    }
}

/// Handles of a built pipeline. They stay valid as long as the context that built them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ComputePipeline {
    pub pipeline: vk::Pipeline,
    pub layout: vk::PipelineLayout,
    pub set_layout: vk::DescriptorSetLayout,
    /// Descriptors in set 0.
    pub bindings: u32,
    /// Which of them are images.
    pub images: ImageSlots,
    pub push_bytes: u32,
}

impl ComputePipeline {
    /// What binding `binding` of set 0 holds.
    pub fn kind(&self, binding: u32) -> DescriptorKind {
        self.images.kind(binding)
    }
}

#[derive(Clone, Copy)]
struct Layout {
    set_layout: vk::DescriptorSetLayout,
    layout: vk::PipelineLayout,
}

/// Per-device pipeline state (owned by the [`GpuContext`]).
pub(crate) struct PipelineStore {
    cache: vk::PipelineCache,
    layouts: Mutex<HashMap<(u32, ImageSlots, u32), Layout>>,
    pipelines: Mutex<HashMap<PipelineDesc, ComputePipeline>>,
    /// Build new pipelines with `CAPTURE_STATISTICS_KHR` (see
    /// [`GpuContext::capture_pipeline_statistics`]), and which ones were.
    capture_statistics: AtomicBool,
    captured: Mutex<HashSet<PipelineDesc>>,
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
            capture_statistics: AtomicBool::new(false),
            captured: Mutex::new(HashSet::new()),
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
        bindings: u32,
        images: ImageSlots,
        push_bytes: u32,
    ) -> Result<Layout, GpuError> {
        let key = (bindings, images, push_bytes);
        let mut layouts = self.layouts.lock();
        if let Some(l) = layouts.get(&key) {
            return Ok(*l);
        }
        let bindings: Vec<_> = (0..bindings)
            .map(|b| {
                vk::DescriptorSetLayoutBinding::default()
                    .binding(b)
                    .descriptor_type(images.kind(b).vk())
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
                // SAFETY: `set_layout` was created on this device just above and nothing else
                // (no pipeline layout, no cache entry) refers to it yet.
                unsafe { device.destroy_descriptor_set_layout(set_layout, None) };
                return Err(GpuError::Vk {
                    call: "vkCreatePipelineLayout",
                    result,
                });
            }
        };
        let l = Layout { set_layout, layout };
        layouts.insert(key, l);
        Ok(l)
    }
}

/// What the driver reports about one pipeline (`VK_KHR_pipeline_executable_properties`).
#[derive(Clone, Debug)]
pub struct PipelineStatistics {
    pub shader: String,
    pub spec: Vec<SpecConstant>,
    /// `(name, value)` of every statistic of every executable (subgroup size first).
    pub stats: Vec<(String, String)>,
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
        // The masks name bindings 0..32 only; an image bit beyond the bindings would be lost.
        let in_range = 1u64.checked_shl(desc.bindings).map_or(u64::MAX, |b| b - 1);
        let marked = u64::from(desc.images.sampled | desc.images.storage);
        if desc.bindings > 32 || marked & !in_range != 0 {
            return Err(GpuError::invalid(
                format!("pipeline `{}`", desc.shader),
                format!(
                    "{} bindings with images marked at {marked:#x} (at most 32 bindings, images among them)",
                    desc.bindings
                ),
            ));
        }
        let words = shaders::spirv(&desc.shader)
            .ok_or_else(|| GpuError::UnknownShader(desc.shader.clone()))?;
        let device = self.device();
        let layout = store.layout(device, desc.bindings, desc.images, desc.push_bytes)?;
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
        let capture = store.capture_statistics.load(Ordering::Relaxed);
        let mut info = vk::ComputePipelineCreateInfo::default()
            .stage(stage)
            .layout(layout.layout);
        if capture {
            info = info.flags(vk::PipelineCreateFlags::CAPTURE_STATISTICS_KHR);
        }
        // SAFETY: as above; the module may be destroyed once the pipeline exists.
        let created = unsafe { device.create_compute_pipelines(store.cache, &[info], None) };
        // SAFETY: `module` was created on this device above and is only referenced by the
        // pipeline creation, which has returned; a module may be destroyed once its pipelines
        // exist (or failed to).
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
            bindings: desc.bindings,
            images: desc.images,
            push_bytes: desc.push_bytes,
        };
        let mut pipelines = store.pipelines.lock();
        if let Some(raced) = pipelines.get(desc) {
            // Another thread built it meanwhile: keep one.
            // SAFETY: `pipeline` was created on this device above and never left this
            // function, so no command buffer has recorded it.
            unsafe { device.destroy_pipeline(pipeline, None) };
            return Ok(*raced);
        }
        pipelines.insert(desc.clone(), built);
        if capture {
            store.captured.lock().insert(desc.clone());
        }
        Ok(built)
    }

    /// Build the pipelines made from now on so that [`GpuContext::pipeline_statistics`] can
    /// report the driver's statistics of them (register counts and the like; a diagnostic for
    /// `openngx bench --pipeline-stats`).
    ///
    /// # Safety
    /// The device must have been created with `VK_KHR_pipeline_executable_properties` and its
    /// `pipelineExecutableInfo` feature enabled.
    pub unsafe fn capture_pipeline_statistics(&self) {
        self.pipelines
            .capture_statistics
            .store(true, Ordering::Relaxed);
    }

    /// The driver's statistics of every pipeline built since
    /// [`GpuContext::capture_pipeline_statistics`], sorted by shader.
    pub fn pipeline_statistics(&self) -> Result<Vec<PipelineStatistics>, GpuError> {
        let store = &self.pipelines;
        if !store.capture_statistics.load(Ordering::Relaxed) {
            return Err(GpuError::invalid(
                "pipeline statistics",
                "not captured: the device needs VK_KHR_pipeline_executable_properties \
                 (GpuContext::capture_pipeline_statistics)",
            ));
        }
        let ext =
            ash::khr::pipeline_executable_properties::Device::new(self.instance(), self.device());
        let captured = store.captured.lock().clone();
        let pipelines = store.pipelines.lock().clone();
        let mut out = Vec::new();
        for desc in captured {
            let Some(p) = pipelines.get(&desc) else {
                continue;
            };
            let info = vk::PipelineInfoKHR::default().pipeline(p.pipeline);
            // SAFETY: the pipeline was built with CAPTURE_STATISTICS_KHR on a device with the
            // extension (the contract of capture_pipeline_statistics).
            let executables = unsafe { ext.get_pipeline_executable_properties(&info) }
                .vk("vkGetPipelineExecutablePropertiesKHR")?;
            let mut stats = Vec::new();
            for (i, exe) in executables.iter().enumerate() {
                let subgroup = exe.subgroup_size;
                let einfo = vk::PipelineExecutableInfoKHR::default()
                    .pipeline(p.pipeline)
                    .executable_index(i as u32);
                // SAFETY: as above.
                let list = unsafe { ext.get_pipeline_executable_statistics(&einfo) }
                    .vk("vkGetPipelineExecutableStatisticsKHR")?;
                stats.push(("subgroup size".to_owned(), subgroup.to_string()));
                for st in list {
                    // SAFETY: the driver writes NUL-terminated names into the fixed array.
                    let name = unsafe { CStr::from_ptr(st.name.as_ptr()) }
                        .to_string_lossy()
                        .into_owned();
                    // SAFETY: the union member is the one `format` names.
                    let value = unsafe {
                        match st.format {
                            vk::PipelineExecutableStatisticFormatKHR::BOOL32 => {
                                (st.value.b32 != 0).to_string()
                            }
                            vk::PipelineExecutableStatisticFormatKHR::INT64 => {
                                st.value.i64.to_string()
                            }
                            vk::PipelineExecutableStatisticFormatKHR::UINT64 => {
                                st.value.u64.to_string()
                            }
                            vk::PipelineExecutableStatisticFormatKHR::FLOAT64 => {
                                format!("{:.3}", st.value.f64)
                            }
                            _ => "?".to_owned(),
                        }
                    };
                    stats.push((name, value));
                }
            }
            out.push(PipelineStatistics {
                shader: desc.shader.clone(),
                spec: desc.spec.clone(),
                stats,
            });
        }
        out.sort_by(|a, b| (&a.shader, &a.spec).cmp(&(&b.shader, &b.spec)));
        Ok(out)
    }

    /// Bytes of the device's pipeline cache (for a caller that wants to persist it).
    pub fn pipeline_cache_data(&self) -> Result<Vec<u8>, GpuError> {
        // SAFETY: the cache belongs to this context.
        unsafe { self.device().get_pipeline_cache_data(self.pipelines.cache) }
            .vk("vkGetPipelineCacheData")
    }
}
