//! GPU recording of the per-pixel frame work around the network: `prepare` (the 16 input lanes
//! of every field pixel), `compose` (output and next history), and the bridge to the caller's
//! images (`import` of the colour and motion images into f32 buffers, `export` of the RGBA16F
//! output buffer into the caller's output image).
//!
//! The kernels (`shaders/nr/{prepare,compose,import,export*}.comp`, numerics in
//! `shaders/lib/frame*.glsl`) reproduce the CPU reference `nr::frame` bit for bit; see
//! `docs/frame.md` §10 for the image formats, layouts and barriers assumed here.
//!
//! Owns nothing of the network itself and never submits: everything is recorded into the
//! caller's command buffer through a [`Recorder`]. Objects a recorded command uses (descriptor
//! sets, image views, pipelines of an [`ImageBridge`]) must outlive the caller's submission.

use std::collections::HashMap;
use std::sync::Arc;

use ash::vk;

use crate::gpu::error::VkContext;
use crate::gpu::{
    shaders, BufferBinding, ComputePipeline, DescriptorArena, GpuContext, GpuError, PipelineDesc,
    Recorder,
};
use crate::nr::frame::{FrameConstants, LANES};

/// Shader keys of the frame kernels.
pub const PREPARE_SHADER: &str = "nr/prepare";
pub const COMPOSE_SHADER: &str = "nr/compose";
pub const IMPORT_SHADER: &str = "nr/import";
pub const EXPORT_RGBA16F_SHADER: &str = "nr/export";
pub const EXPORT_RGBA32F_SHADER: &str = "nr/export_rgba32f";
pub const EXPORT_RGBA8_SHADER: &str = "nr/export_rgba8";

/// Workgroup edge of every frame kernel (8x8 invocations).
const TILE: u32 = 8;
/// Push-constant bytes of the import/export kernels (8 words).
const BRIDGE_PUSH_BYTES: u32 = 32;

/// Bytes per texel of the frame buffers.
pub const PROXY_TEXEL_BYTES: u64 = 16; // RGBA f32
pub const MOTION_TEXEL_BYTES: u64 = 8; // RG f32
pub const HISTORY_TEXEL_BYTES: u64 = 8; // RGBA f16 (also the output)
pub const HEAD_ROW_BYTES: u64 = 16; // 4 x f32
pub const FEATURE_ROW_BYTES: u64 = LANES as u64 * 4; // 16 x f32

/// The buffers of `prepare`. Optional inputs that are absent are simply not read (the kernel's
/// `has_motion` / `history_valid` are cleared for the dispatch), matching `FrameInputs` with
/// `None`.
#[derive(Clone, Copy, Debug)]
pub struct PrepareBindings {
    /// Proxy colour, RGBA f32, valid size.
    pub proxy: BufferBinding,
    /// Motion vectors, RG f32 (pixels, before `MVecScale`), valid size.
    pub motion: Option<BufferBinding>,
    /// Previous output, RGBA f16, valid size.
    pub history: Option<BufferBinding>,
    /// Output: f32 `[field_height * field_width][16]`.
    pub features: BufferBinding,
}

/// The buffers of `compose`.
#[derive(Clone, Copy, Debug)]
pub struct ComposeBindings {
    /// Proxy colour, RGBA f32, valid size.
    pub proxy: BufferBinding,
    /// Motion vectors, RG f32, valid size.
    pub motion: Option<BufferBinding>,
    /// History read this frame, RGBA f16, valid size.
    pub history: Option<BufferBinding>,
    /// Network head, f32 `[field rows][4]` (not read by a disabled frame).
    pub head: BufferBinding,
    /// Output, RGBA f16, valid size.
    pub output: BufferBinding,
    /// Next history, RGBA f16, valid size (not written by a disabled frame).
    pub next_history: BufferBinding,
}

fn need(what: &str, binding: &BufferBinding, bytes: u64) -> Result<(), GpuError> {
    super::need(&format!("frame buffer `{what}`"), binding, bytes)
}

fn groups(width: u32, height: u32) -> [u32; 3] {
    [width.div_ceil(TILE), height.div_ceil(TILE), 1]
}

fn valid_pixels(c: &FrameConstants) -> u64 {
    c.width as u64 * c.height as u64
}

fn field_pixels(c: &FrameConstants) -> u64 {
    c.field_width as u64 * c.field_height as u64
}

fn check_sizes(c: &FrameConstants) -> Result<(), GpuError> {
    if c.width == 0 || c.height == 0 || c.field_width < c.width || c.field_height < c.height {
        return Err(GpuError::invalid(
            "frame constants",
            format!(
                "valid {}x{} must be non-empty and inside the field {}x{}",
                c.width, c.height, c.field_width, c.field_height
            ),
        ));
    }
    Ok(())
}

/// The constants as the kernel sees them: motion and history flags cleared when the buffer is
/// absent (the CPU reference's `None` inputs).
fn effective(c: &FrameConstants, motion: bool, history: bool) -> FrameConstants {
    FrameConstants {
        has_motion: (c.has_motion != 0 && motion) as u32,
        history_valid: (c.history_valid != 0 && history) as u32,
        ..*c
    }
}

/// `prepare` bound to its buffers: one descriptor set, allocated once (a feature keeps one pass
/// per history slot and records it every frame).
#[derive(Clone, Copy, Debug)]
pub struct PreparePass {
    pipeline: ComputePipeline,
    set: vk::DescriptorSet,
    bindings: PrepareBindings,
}

impl PreparePass {
    pub fn new(
        ctx: &Arc<GpuContext>,
        arena: &mut DescriptorArena,
        bindings: &PrepareBindings,
    ) -> Result<Self, GpuError> {
        let pipeline = ctx.pipeline(&PipelineDesc::new(
            PREPARE_SHADER,
            4,
            FrameConstants::BYTES as u32,
        ))?;
        // Absent optional inputs are never read; the proxy stands in for their descriptor.
        let set = arena.allocate(
            &pipeline,
            &[
                bindings.proxy,
                bindings.motion.unwrap_or(bindings.proxy),
                bindings.history.unwrap_or(bindings.proxy),
                bindings.features,
            ],
        )?;
        Ok(PreparePass {
            pipeline,
            set,
            bindings: *bindings,
        })
    }

    /// Record the dispatch (one invocation per field pixel) and a barrier that makes the
    /// features visible to later compute work.
    pub fn record(&self, rec: &mut Recorder, constants: &FrameConstants) -> Result<(), GpuError> {
        let b = &self.bindings;
        check_sizes(constants)?;
        let n = valid_pixels(constants);
        need("proxy", &b.proxy, n * PROXY_TEXEL_BYTES)?;
        if let Some(m) = &b.motion {
            need("motion", m, n * MOTION_TEXEL_BYTES)?;
        }
        if let Some(h) = &b.history {
            need("history", h, n * HISTORY_TEXEL_BYTES)?;
        }
        need(
            "features",
            &b.features,
            field_pixels(constants) * FEATURE_ROW_BYTES,
        )?;
        let c = effective(constants, b.motion.is_some(), b.history.is_some());
        rec.run(
            &self.pipeline,
            self.set,
            &c.to_bytes(),
            groups(c.field_width, c.field_height),
        )?;
        rec.compute_to_compute_buffers(&[b.features]);
        Ok(())
    }
}

/// `compose` bound to its buffers (see [`PreparePass`]).
#[derive(Clone, Copy, Debug)]
pub struct ComposePass {
    pipeline: ComputePipeline,
    set: vk::DescriptorSet,
    bindings: ComposeBindings,
}

impl ComposePass {
    pub fn new(
        ctx: &Arc<GpuContext>,
        arena: &mut DescriptorArena,
        bindings: &ComposeBindings,
    ) -> Result<Self, GpuError> {
        let pipeline = ctx.pipeline(&PipelineDesc::new(
            COMPOSE_SHADER,
            6,
            FrameConstants::BYTES as u32,
        ))?;
        let set = arena.allocate(
            &pipeline,
            &[
                bindings.proxy,
                bindings.motion.unwrap_or(bindings.proxy),
                bindings.history.unwrap_or(bindings.proxy),
                bindings.head,
                bindings.output,
                bindings.next_history,
            ],
        )?;
        Ok(ComposePass {
            pipeline,
            set,
            bindings: *bindings,
        })
    }

    /// Record the dispatch (one invocation per valid pixel) and a barrier that makes the output
    /// and the next history visible to later compute work.
    pub fn record(&self, rec: &mut Recorder, constants: &FrameConstants) -> Result<(), GpuError> {
        let b = &self.bindings;
        check_sizes(constants)?;
        let n = valid_pixels(constants);
        need("proxy", &b.proxy, n * PROXY_TEXEL_BYTES)?;
        if let Some(m) = &b.motion {
            need("motion", m, n * MOTION_TEXEL_BYTES)?;
        }
        if let Some(h) = &b.history {
            need("history", h, n * HISTORY_TEXEL_BYTES)?;
        }
        need("output", &b.output, n * HISTORY_TEXEL_BYTES)?;
        if constants.enabled != 0 {
            need("head", &b.head, field_pixels(constants) * HEAD_ROW_BYTES)?;
            need("next history", &b.next_history, n * HISTORY_TEXEL_BYTES)?;
        }
        let c = effective(constants, b.motion.is_some(), b.history.is_some());
        rec.run(
            &self.pipeline,
            self.set,
            &c.to_bytes(),
            groups(c.width, c.height),
        )?;
        rec.compute_to_compute_buffers(&[b.output, b.next_history]);
        Ok(())
    }
}

/// Record `prepare` with a descriptor set allocated from `arena` for this call.
pub fn record_prepare(
    ctx: &Arc<GpuContext>,
    rec: &mut Recorder,
    arena: &mut DescriptorArena,
    bindings: &PrepareBindings,
    constants: &FrameConstants,
) -> Result<(), GpuError> {
    PreparePass::new(ctx, arena, bindings)?.record(rec, constants)
}

/// Record `compose` with a descriptor set allocated from `arena` for this call.
pub fn record_compose(
    ctx: &Arc<GpuContext>,
    rec: &mut Recorder,
    arena: &mut DescriptorArena,
    bindings: &ComposeBindings,
    constants: &FrameConstants,
) -> Result<(), GpuError> {
    ComposePass::new(ctx, arena, bindings)?.record(rec, constants)
}

// ---------------------------------------------------------------------------------------------
// The caller's images.

/// One subresource of a caller image (NGX's `NVSDK_NGX_ImageViewInfo_VK` gives the image, its
/// format, size and subresource range; the first mip and layer of the range are used).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CallerImage {
    pub image: vk::Image,
    pub format: vk::Format,
    /// Extent of `mip_level`.
    pub width: u32,
    pub height: u32,
    pub mip_level: u32,
    pub array_layer: u32,
    /// The layout the image is in when the recorded commands run (kept unchanged). Inputs:
    /// `SHADER_READ_ONLY_OPTIMAL` or `GENERAL`; the output: `GENERAL`.
    pub layout: vk::ImageLayout,
}

/// How the import kernel decodes a format (see `shaders/nr/import.comp`).
fn color_import_kind(format: vk::Format) -> Option<u32> {
    match format {
        vk::Format::R16G16B16A16_SFLOAT | vk::Format::R32G32B32A32_SFLOAT => Some(0),
        vk::Format::R8G8B8A8_UNORM | vk::Format::B8G8R8A8_UNORM => Some(1),
        vk::Format::R8G8B8A8_SRGB | vk::Format::B8G8R8A8_SRGB => Some(2),
        vk::Format::A2B10G10R10_UNORM_PACK32 => Some(3),
        _ => None,
    }
}

fn motion_import_kind(format: vk::Format) -> Option<u32> {
    match format {
        vk::Format::R16G16_SFLOAT | vk::Format::R32G32_SFLOAT => Some(0),
        _ => None,
    }
}

/// Export kernel index and encoding kind of an output format.
fn export_kernel(format: vk::Format) -> Option<(usize, u32)> {
    match format {
        vk::Format::R16G16B16A16_SFLOAT => Some((0, 0)),
        vk::Format::R32G32B32A32_SFLOAT => Some((1, 0)),
        vk::Format::R8G8B8A8_UNORM => Some((2, 1)),
        _ => None,
    }
}

const EXPORT_SHADERS: [&str; 3] = [
    EXPORT_RGBA16F_SHADER,
    EXPORT_RGBA32F_SHADER,
    EXPORT_RGBA8_SHADER,
];

/// Which descriptor a kernel's bindings hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum KernelId {
    Import,
    Export(usize),
}

/// A pipeline with its own layout (sampled/storage image + storage buffer).
#[derive(Clone, Copy)]
struct ImageKernel {
    set_layout: vk::DescriptorSetLayout,
    pipeline_layout: vk::PipelineLayout,
    pipeline: vk::Pipeline,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct ViewKey {
    image: vk::Image,
    format: vk::Format,
    mip_level: u32,
    array_layer: u32,
    storage: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct SetKey {
    kernel: KernelId,
    view: vk::ImageView,
    layout: vk::ImageLayout,
    buffer: vk::Buffer,
    offset: u64,
    range: u64,
}

/// Sets per descriptor pool of the bridge (pools are added as needed).
const SETS_PER_POOL: u32 = 32;

/// The import/export kernels of one feature and what they need on the caller's device: their
/// pipelines and layouts (image descriptors, so not the buffer-only layouts of
/// [`GpuContext::pipeline`]), the image views it creates on the caller's images (2D, identity
/// swizzle, one mip and layer, usage restricted to what the kernel does) and their descriptor
/// sets. Views and sets are cached by image and buffer, so a feature that is handed the same
/// images every frame creates them once.
///
/// Lifetime contract (as for every recorded object): drop the bridge, or call
/// [`ImageBridge::forget_image`] / [`ImageBridge::clear`], only when no submitted work that used
/// it is pending, and forget an image before the caller destroys it (a cached view must never
/// outlive its image; NGX features are released with the device idle).
pub struct ImageBridge {
    ctx: Arc<GpuContext>,
    kernels: HashMap<KernelId, ImageKernel>,
    pools: Vec<vk::DescriptorPool>,
    sets_in_last_pool: u32,
    views: HashMap<ViewKey, vk::ImageView>,
    /// Each set with the pool it came from (so a forgotten image's sets can be freed).
    sets: HashMap<SetKey, (vk::DescriptorSet, vk::DescriptorPool)>,
}

impl ImageBridge {
    pub fn new(ctx: &Arc<GpuContext>) -> Self {
        ImageBridge {
            ctx: Arc::clone(ctx),
            kernels: HashMap::new(),
            pools: Vec::new(),
            sets_in_last_pool: SETS_PER_POOL,
            views: HashMap::new(),
            sets: HashMap::new(),
        }
    }

    /// Image views currently held (for tests and diagnostics).
    pub fn view_count(&self) -> usize {
        self.views.len()
    }

    fn kernel(&mut self, id: KernelId) -> Result<ImageKernel, GpuError> {
        if let Some(k) = self.kernels.get(&id) {
            return Ok(*k);
        }
        let (key, image_binding, image_type) = match id {
            KernelId::Import => (IMPORT_SHADER, 0, vk::DescriptorType::SAMPLED_IMAGE),
            KernelId::Export(i) => (EXPORT_SHADERS[i], 1, vk::DescriptorType::STORAGE_IMAGE),
        };
        let words = shaders::spirv(key).ok_or_else(|| GpuError::UnknownShader(key.to_owned()))?;
        let device = self.ctx.device();
        let bindings = [
            vk::DescriptorSetLayoutBinding::default()
                .binding(image_binding)
                .descriptor_type(image_type)
                .descriptor_count(1)
                .stage_flags(vk::ShaderStageFlags::COMPUTE),
            vk::DescriptorSetLayoutBinding::default()
                .binding(1 - image_binding)
                .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                .descriptor_count(1)
                .stage_flags(vk::ShaderStageFlags::COMPUTE),
        ];
        // SAFETY: valid create infos on the caller's live device; every object made here is
        // destroyed on the error paths below or with the bridge.
        unsafe {
            let set_layout = device
                .create_descriptor_set_layout(
                    &vk::DescriptorSetLayoutCreateInfo::default().bindings(&bindings),
                    None,
                )
                .vk("vkCreateDescriptorSetLayout")?;
            let ranges = [vk::PushConstantRange::default()
                .stage_flags(vk::ShaderStageFlags::COMPUTE)
                .offset(0)
                .size(BRIDGE_PUSH_BYTES)];
            let set_layouts = [set_layout];
            let pipeline_layout = match device.create_pipeline_layout(
                &vk::PipelineLayoutCreateInfo::default()
                    .set_layouts(&set_layouts)
                    .push_constant_ranges(&ranges),
                None,
            ) {
                Ok(l) => l,
                Err(result) => {
                    device.destroy_descriptor_set_layout(set_layout, None);
                    return Err(GpuError::Vk {
                        call: "vkCreatePipelineLayout",
                        result,
                    });
                }
            };
            let cleanup = |device: &ash::Device| {
                device.destroy_pipeline_layout(pipeline_layout, None);
                device.destroy_descriptor_set_layout(set_layout, None);
            };
            let module = match device
                .create_shader_module(&vk::ShaderModuleCreateInfo::default().code(&words), None)
            {
                Ok(m) => m,
                Err(result) => {
                    cleanup(device);
                    return Err(GpuError::Vk {
                        call: "vkCreateShaderModule",
                        result,
                    });
                }
            };
            let stage = vk::PipelineShaderStageCreateInfo::default()
                .stage(vk::ShaderStageFlags::COMPUTE)
                .module(module)
                .name(c"main");
            let info = vk::ComputePipelineCreateInfo::default()
                .stage(stage)
                .layout(pipeline_layout);
            let created = device.create_compute_pipelines(vk::PipelineCache::null(), &[info], None);
            device.destroy_shader_module(module, None);
            let pipeline = match created {
                Ok(p) if !p.is_empty() => p[0],
                Ok(_) => {
                    cleanup(device);
                    return Err(GpuError::Vk {
                        call: "vkCreateComputePipelines",
                        result: vk::Result::ERROR_UNKNOWN,
                    });
                }
                Err((_, result)) => {
                    cleanup(device);
                    return Err(GpuError::Vk {
                        call: "vkCreateComputePipelines",
                        result,
                    });
                }
            };
            let k = ImageKernel {
                set_layout,
                pipeline_layout,
                pipeline,
            };
            self.kernels.insert(id, k);
            Ok(k)
        }
    }

    fn view(&mut self, img: &CallerImage, storage: bool) -> Result<vk::ImageView, GpuError> {
        let key = ViewKey {
            image: img.image,
            format: img.format,
            mip_level: img.mip_level,
            array_layer: img.array_layer,
            storage,
        };
        if let Some(v) = self.views.get(&key) {
            return Ok(*v);
        }
        // Restrict the view's usage to what the kernel does: the caller's image may carry
        // usages (storage on an sRGB image, say) that this format cannot serve.
        let mut usage = vk::ImageViewUsageCreateInfo::default().usage(if storage {
            vk::ImageUsageFlags::STORAGE
        } else {
            vk::ImageUsageFlags::SAMPLED
        });
        let info = vk::ImageViewCreateInfo::default()
            .image(img.image)
            .view_type(vk::ImageViewType::TYPE_2D)
            .format(img.format)
            .components(vk::ComponentMapping::default())
            .subresource_range(subresource(img))
            .push_next(&mut usage);
        // SAFETY: the caller promised a live image of this device with this format.
        let view =
            unsafe { self.ctx.device().create_image_view(&info, None) }.vk("vkCreateImageView")?;
        self.views.insert(key, view);
        Ok(view)
    }

    fn pool(&mut self) -> Result<vk::DescriptorPool, GpuError> {
        if self.sets_in_last_pool < SETS_PER_POOL {
            if let Some(p) = self.pools.last() {
                return Ok(*p);
            }
        }
        let sizes = [
            vk::DescriptorPoolSize {
                ty: vk::DescriptorType::SAMPLED_IMAGE,
                descriptor_count: SETS_PER_POOL,
            },
            vk::DescriptorPoolSize {
                ty: vk::DescriptorType::STORAGE_IMAGE,
                descriptor_count: SETS_PER_POOL,
            },
            vk::DescriptorPoolSize {
                ty: vk::DescriptorType::STORAGE_BUFFER,
                descriptor_count: SETS_PER_POOL,
            },
        ];
        let info = vk::DescriptorPoolCreateInfo::default()
            .flags(vk::DescriptorPoolCreateFlags::FREE_DESCRIPTOR_SET)
            .max_sets(SETS_PER_POOL)
            .pool_sizes(&sizes);
        // SAFETY: valid create info on the caller's device.
        let pool = unsafe { self.ctx.device().create_descriptor_pool(&info, None) }
            .vk("vkCreateDescriptorPool")?;
        self.pools.push(pool);
        self.sets_in_last_pool = 0;
        Ok(pool)
    }

    fn set(
        &mut self,
        id: KernelId,
        kernel: &ImageKernel,
        view: vk::ImageView,
        layout: vk::ImageLayout,
        buffer: BufferBinding,
    ) -> Result<vk::DescriptorSet, GpuError> {
        let key = SetKey {
            kernel: id,
            view,
            layout,
            buffer: buffer.buffer,
            offset: buffer.offset,
            range: buffer.range,
        };
        if let Some((s, _)) = self.sets.get(&key) {
            return Ok(*s);
        }
        let pool = self.pool()?;
        let layouts = [kernel.set_layout];
        let info = vk::DescriptorSetAllocateInfo::default()
            .descriptor_pool(pool)
            .set_layouts(&layouts);
        // SAFETY: pool and layout belong to this device.
        let set = unsafe { self.ctx.device().allocate_descriptor_sets(&info) }
            .vk("vkAllocateDescriptorSets")?
            .first()
            .copied()
            .ok_or(GpuError::Vk {
                call: "vkAllocateDescriptorSets",
                result: vk::Result::ERROR_UNKNOWN,
            })?;
        self.sets_in_last_pool += 1;
        let (image_binding, image_type) = match id {
            KernelId::Import => (0, vk::DescriptorType::SAMPLED_IMAGE),
            KernelId::Export(_) => (1, vk::DescriptorType::STORAGE_IMAGE),
        };
        let image_info = [vk::DescriptorImageInfo {
            sampler: vk::Sampler::null(),
            image_view: view,
            image_layout: layout,
        }];
        let buffer_info = [vk::DescriptorBufferInfo {
            buffer: buffer.buffer,
            offset: buffer.offset,
            range: buffer.range,
        }];
        let writes = [
            vk::WriteDescriptorSet::default()
                .dst_set(set)
                .dst_binding(image_binding)
                .descriptor_type(image_type)
                .image_info(&image_info),
            vk::WriteDescriptorSet::default()
                .dst_set(set)
                .dst_binding(1 - image_binding)
                .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                .buffer_info(&buffer_info),
        ];
        // SAFETY: the set was just allocated and is not in use.
        unsafe { self.ctx.device().update_descriptor_sets(&writes, &[]) };
        self.sets.insert(key, (set, pool));
        Ok(set)
    }
}

impl ImageBridge {
    /// Destroy the views of `image` (and free their descriptor sets). Call before the caller
    /// destroys an image it handed in, once no pending work uses it.
    pub fn forget_image(&mut self, image: vk::Image) {
        let gone: Vec<ViewKey> = self
            .views
            .keys()
            .filter(|k| k.image == image)
            .copied()
            .collect();
        for key in gone {
            if let Some(view) = self.views.remove(&key) {
                self.drop_sets_of(view);
                // SAFETY: the owner guarantees no pending work uses the view.
                unsafe { self.ctx.device().destroy_image_view(view, None) };
            }
        }
    }

    fn drop_sets_of(&mut self, view: vk::ImageView) {
        let keys: Vec<SetKey> = self
            .sets
            .keys()
            .filter(|k| k.view == view)
            .copied()
            .collect();
        for key in keys {
            if let Some((set, pool)) = self.sets.remove(&key) {
                // SAFETY: the pool was created with FREE_DESCRIPTOR_SET and the owner guarantees
                // no pending work uses the set.
                let _ = unsafe { self.ctx.device().free_descriptor_sets(pool, &[set]) };
            }
        }
    }

    /// Destroy every view and descriptor set (kernels stay). Same contract as dropping.
    pub fn clear(&mut self) {
        let device = self.ctx.device();
        // SAFETY: the owner guarantees no pending work uses these objects.
        unsafe {
            for (_, view) in self.views.drain() {
                device.destroy_image_view(view, None);
            }
            for pool in self.pools.drain(..) {
                device.destroy_descriptor_pool(pool, None);
            }
        }
        self.sets.clear();
        self.sets_in_last_pool = SETS_PER_POOL;
    }
}

impl Drop for ImageBridge {
    fn drop(&mut self) {
        self.clear();
        let device = self.ctx.device();
        // SAFETY: as in `clear`.
        unsafe {
            for (_, k) in self.kernels.drain() {
                device.destroy_pipeline(k.pipeline, None);
                device.destroy_pipeline_layout(k.pipeline_layout, None);
                device.destroy_descriptor_set_layout(k.set_layout, None);
            }
        }
    }
}

fn subresource(img: &CallerImage) -> vk::ImageSubresourceRange {
    vk::ImageSubresourceRange {
        aspect_mask: vk::ImageAspectFlags::COLOR,
        base_mip_level: img.mip_level,
        level_count: 1,
        base_array_layer: img.array_layer,
        layer_count: 1,
    }
}

/// The `width x height` rectangle at `base` must lie inside the image.
fn check_rect(
    what: &str,
    img: &CallerImage,
    base: (u32, u32),
    size: (u32, u32),
) -> Result<(), GpuError> {
    if size.0 == 0 || size.1 == 0 {
        return Err(GpuError::invalid(what, "the frame size is empty"));
    }
    if base.0 as u64 + size.0 as u64 > img.width as u64
        || base.1 as u64 + size.1 as u64 > img.height as u64
    {
        return Err(GpuError::invalid(
            what,
            format!(
                "rectangle at ({}, {}) of {}x{} leaves the {}x{} image",
                base.0, base.1, size.0, size.1, img.width, img.height
            ),
        ));
    }
    if img.image == vk::Image::null() {
        return Err(GpuError::NullHandle("VkImage"));
    }
    Ok(())
}

/// One `vkCmdPipelineBarrier` with a global memory barrier and one image barrier that keeps
/// the image's layout.
#[allow(clippy::too_many_arguments)]
fn image_barrier(
    ctx: &GpuContext,
    rec: &Recorder,
    img: &CallerImage,
    src_stage: vk::PipelineStageFlags,
    src_access: vk::AccessFlags,
    dst_stage: vk::PipelineStageFlags,
    dst_access: vk::AccessFlags,
    memory: Option<(vk::AccessFlags, vk::AccessFlags)>,
) {
    let image = [vk::ImageMemoryBarrier::default()
        .src_access_mask(src_access)
        .dst_access_mask(dst_access)
        .old_layout(img.layout)
        .new_layout(img.layout)
        .src_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
        .dst_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
        .image(img.image)
        .subresource_range(subresource(img))];
    let mem: Vec<vk::MemoryBarrier> = memory
        .map(|(s, d)| {
            vec![vk::MemoryBarrier::default()
                .src_access_mask(s)
                .dst_access_mask(d)]
        })
        .unwrap_or_default();
    // SAFETY: the recorder holds a command buffer in the recording state on this device.
    unsafe {
        ctx.device().cmd_pipeline_barrier(
            rec.command_buffer(),
            src_stage,
            dst_stage,
            vk::DependencyFlags::empty(),
            &mem,
            &[],
            &image,
        )
    };
}

fn bridge_pipeline(k: &ImageKernel) -> ComputePipeline {
    ComputePipeline {
        pipeline: k.pipeline,
        layout: k.pipeline_layout,
        set_layout: k.set_layout,
        buffers: 2,
        push_bytes: BRIDGE_PUSH_BYTES,
    }
}

#[allow(clippy::too_many_arguments)]
fn record_import(
    ctx: &Arc<GpuContext>,
    rec: &mut Recorder,
    bridge: &mut ImageBridge,
    src: &CallerImage,
    dst: BufferBinding,
    what: &str,
    kind: u32,
    channels: u32,
    base: (u32, u32),
    size: (u32, u32),
) -> Result<(), GpuError> {
    if !Arc::ptr_eq(ctx, &bridge.ctx) {
        return Err(GpuError::invalid(
            what,
            "the image bridge belongs to another device",
        ));
    }
    check_rect(what, src, base, size)?;
    if src.layout != vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL
        && src.layout != vk::ImageLayout::GENERAL
    {
        return Err(GpuError::invalid(
            what,
            format!(
                "image layout {:?}: SHADER_READ_ONLY_OPTIMAL or GENERAL expected",
                src.layout
            ),
        ));
    }
    need(
        what,
        &dst,
        size.0 as u64 * size.1 as u64 * channels as u64 * 4,
    )?;
    let kernel = bridge.kernel(KernelId::Import)?;
    let view = bridge.view(src, false)?;
    let set = bridge.set(KernelId::Import, &kernel, view, src.layout, dst)?;
    // The caller's earlier writes to the image become visible; the global barrier orders this
    // write of `dst` after earlier work that read or wrote it (a previous frame).
    image_barrier(
        ctx,
        rec,
        src,
        vk::PipelineStageFlags::ALL_COMMANDS,
        vk::AccessFlags::MEMORY_WRITE,
        vk::PipelineStageFlags::COMPUTE_SHADER,
        vk::AccessFlags::SHADER_READ,
        Some((vk::AccessFlags::MEMORY_WRITE, vk::AccessFlags::SHADER_WRITE)),
    );
    let push = [base.0, base.1, size.0, size.1, kind, channels, 0, 0];
    rec.bind(&bridge_pipeline(&kernel), set);
    rec.push_words(&push)?;
    rec.dispatch(groups(size.0, size.1))?;
    rec.compute_to_compute_buffers(&[dst]);
    Ok(())
}

/// Import the caller's colour image (the `ColorSubrect` at `constants.color_x/y`, feature size)
/// into the proxy buffer (RGBA f32, valid size). Formats: RGBA16F, RGBA32F, RGBA8 UNORM,
/// RGBA8 SRGB (the sRGB code values, see `docs/frame.md` §10), A2B10G10R10 UNORM, and the BGRA8
/// UNORM/SRGB twins.
pub fn record_import_color(
    ctx: &Arc<GpuContext>,
    rec: &mut Recorder,
    bridge: &mut ImageBridge,
    src: &CallerImage,
    proxy: BufferBinding,
    constants: &FrameConstants,
) -> Result<(), GpuError> {
    let kind = color_import_kind(src.format).ok_or_else(|| {
        GpuError::invalid(
            "colour import",
            format!("format {:?} is not supported", src.format),
        )
    })?;
    record_import(
        ctx,
        rec,
        bridge,
        src,
        proxy,
        "colour import",
        kind,
        4,
        (constants.color_x, constants.color_y),
        (constants.width, constants.height),
    )
}

/// Import the caller's motion-vector image (RG16F or RG32F, the `MVecSubrect` at
/// `constants.motion_x/y`) into the motion buffer (RG f32, valid size).
pub fn record_import_motion(
    ctx: &Arc<GpuContext>,
    rec: &mut Recorder,
    bridge: &mut ImageBridge,
    src: &CallerImage,
    motion: BufferBinding,
    constants: &FrameConstants,
) -> Result<(), GpuError> {
    let kind = motion_import_kind(src.format).ok_or_else(|| {
        GpuError::invalid(
            "motion import",
            format!("format {:?} is not supported", src.format),
        )
    })?;
    record_import(
        ctx,
        rec,
        bridge,
        src,
        motion,
        "motion import",
        kind,
        2,
        (constants.motion_x, constants.motion_y),
        (constants.width, constants.height),
    )
}

/// Write the output buffer (RGBA f16, valid size) into the caller's output image (RGBA16F,
/// RGBA32F or RGBA8 UNORM, storage usage, `GENERAL` layout) at `constants.output_x/y`. Texels
/// outside the rectangle are not touched.
pub fn record_export(
    ctx: &Arc<GpuContext>,
    rec: &mut Recorder,
    bridge: &mut ImageBridge,
    output: BufferBinding,
    dst: &CallerImage,
    constants: &FrameConstants,
) -> Result<(), GpuError> {
    const WHAT: &str = "output export";
    if !Arc::ptr_eq(ctx, &bridge.ctx) {
        return Err(GpuError::invalid(
            WHAT,
            "the image bridge belongs to another device",
        ));
    }
    let (index, kind) = export_kernel(dst.format).ok_or_else(|| {
        GpuError::invalid(WHAT, format!("format {:?} is not supported", dst.format))
    })?;
    let base = (constants.output_x, constants.output_y);
    let size = (constants.width, constants.height);
    check_rect(WHAT, dst, base, size)?;
    if dst.layout != vk::ImageLayout::GENERAL {
        return Err(GpuError::invalid(
            WHAT,
            format!("image layout {:?}: GENERAL expected", dst.layout),
        ));
    }
    need(
        WHAT,
        &output,
        size.0 as u64 * size.1 as u64 * HISTORY_TEXEL_BYTES,
    )?;
    let id = KernelId::Export(index);
    let kernel = bridge.kernel(id)?;
    let view = bridge.view(dst, true)?;
    let set = bridge.set(id, &kernel, view, dst.layout, output)?;
    // Earlier uses of the image finish before the write; the output buffer's writes (compose)
    // are visible to this read.
    image_barrier(
        ctx,
        rec,
        dst,
        vk::PipelineStageFlags::ALL_COMMANDS,
        vk::AccessFlags::MEMORY_WRITE,
        vk::PipelineStageFlags::COMPUTE_SHADER,
        vk::AccessFlags::SHADER_WRITE,
        Some((vk::AccessFlags::MEMORY_WRITE, vk::AccessFlags::SHADER_READ)),
    );
    let push = [base.0, base.1, size.0, size.1, kind, 0, 0, 0];
    rec.bind(&bridge_pipeline(&kernel), set);
    rec.push_words(&push)?;
    rec.dispatch(groups(size.0, size.1))?;
    // The written texels are visible to whatever the caller does next.
    image_barrier(
        ctx,
        rec,
        dst,
        vk::PipelineStageFlags::COMPUTE_SHADER,
        vk::AccessFlags::SHADER_WRITE,
        vk::PipelineStageFlags::ALL_COMMANDS,
        vk::AccessFlags::MEMORY_READ | vk::AccessFlags::MEMORY_WRITE,
        None,
    );
    Ok(())
}
