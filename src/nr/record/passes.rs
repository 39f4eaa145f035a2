//! The DLSS-NR passes around the network, recorded on the GPU: `prepare` (the 16 input lanes
//! of every field pixel), `compose` (output and next history), and the bridge to the caller's
//! images (`import` of the colour and motion images into f32 buffers, `export` of the RGBA16F
//! output buffer into the caller's output image): which kernel serves which format, their
//! constants and the frame buffers' sizes.
//!
//! The kernels (`shaders/nr/{prepare,compose,import,export*}.comp`, numerics in
//! `shaders/lib/frame*.glsl`) reproduce the CPU reference `nr::frame` bit for bit; see
//! `docs/frame.md` §10 for the image formats, layouts and barriers assumed here.
//!
//! Owns nothing of the network itself and never submits: everything is recorded into the
//! caller's command buffer through a [`Recorder`]. The views of the caller's images and their
//! descriptor sets are `gpu`'s ([`CallerImages`], "the bridge" below); objects a recorded command
//! uses must outlive the caller's submission.

use std::sync::Arc;

use ash::vk;

use crate::gpu::{
    Bind, BufferBinding, CallerImage, CallerImages, ComputePipeline, DescriptorArena,
    DescriptorKind, GpuContext, GpuError, ImageDependency, PipelineDesc, Recorder,
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
// The caller's images: which kernel reads or writes which format, and where the frame's
// rectangles are. Views, descriptor sets and barriers on the caller's images are `gpu`'s
// (`gpu::CallerImages`, `Recorder::image_dependency`).

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

/// Export kernel and encoding kind of an output format (a storage image needs a format
/// qualifier, so each output format has its own kernel).
fn export_kernel(format: vk::Format) -> Option<(&'static str, u32)> {
    match format {
        vk::Format::R16G16B16A16_SFLOAT => Some((EXPORT_RGBA16F_SHADER, 0)),
        vk::Format::R32G32B32A32_SFLOAT => Some((EXPORT_RGBA32F_SHADER, 0)),
        vk::Format::R8G8B8A8_UNORM => Some((EXPORT_RGBA8_SHADER, 1)),
        _ => None,
    }
}

/// The import kernel: binding 0 the caller's image (sampled), binding 1 the frame buffer.
fn import_pipeline(ctx: &GpuContext) -> Result<ComputePipeline, GpuError> {
    ctx.pipeline(
        &PipelineDesc::new(IMPORT_SHADER, 2, BRIDGE_PUSH_BYTES)
            .with_image(0, DescriptorKind::SampledImage),
    )
}

/// An export kernel: binding 0 the output buffer, binding 1 the caller's image (storage).
fn export_pipeline(ctx: &GpuContext, shader: &str) -> Result<ComputePipeline, GpuError> {
    ctx.pipeline(
        &PipelineDesc::new(shader, 2, BRIDGE_PUSH_BYTES)
            .with_image(1, DescriptorKind::StorageImage),
    )
}

fn same_device(what: &str, ctx: &Arc<GpuContext>, bridge: &CallerImages) -> Result<(), GpuError> {
    if !Arc::ptr_eq(ctx, bridge.context()) {
        return Err(GpuError::invalid(
            what,
            "the image bridge belongs to another device",
        ));
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn record_import(
    ctx: &Arc<GpuContext>,
    rec: &mut Recorder,
    bridge: &mut CallerImages,
    src: &CallerImage,
    dst: BufferBinding,
    what: &str,
    kind: u32,
    channels: u32,
    base: (u32, u32),
    size: (u32, u32),
) -> Result<(), GpuError> {
    same_device(what, ctx, bridge)?;
    src.check_rect(what, base, size)?;
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
    let pipeline = import_pipeline(ctx)?;
    let set = bridge.descriptor_set(&pipeline, &[Bind::Image(src), Bind::Buffer(dst)])?;
    // The caller's earlier writes to the image become visible; the global barrier orders this
    // write of `dst` after earlier work that read or wrote it (a previous frame).
    rec.image_dependency(
        src,
        &ImageDependency {
            src_stage: vk::PipelineStageFlags::ALL_COMMANDS,
            src_access: vk::AccessFlags::MEMORY_WRITE,
            dst_stage: vk::PipelineStageFlags::COMPUTE_SHADER,
            dst_access: vk::AccessFlags::SHADER_READ,
            memory: Some((vk::AccessFlags::MEMORY_WRITE, vk::AccessFlags::SHADER_WRITE)),
        },
    );
    let push = [base.0, base.1, size.0, size.1, kind, channels, 0, 0];
    rec.bind(&pipeline, set);
    rec.push_words(&push)?;
    rec.dispatch(groups(size.0, size.1))?;
    rec.compute_to_compute_buffers(&[dst]);
    Ok(())
}

/// Import the caller's colour image (the `ColorSubrect` at `constants.color_x/y`, feature size)
/// into the proxy buffer (RGBA f32, valid size). Formats: RGBA16F, RGBA32F, RGBA8 UNORM,
/// RGBA8 SRGB (the sRGB code values, see `docs/frame.md` §10), A2B10G10R10 UNORM, and the BGRA8
/// UNORM/SRGB twins. The image must be in `SHADER_READ_ONLY_OPTIMAL` or `GENERAL`.
pub fn record_import_color(
    ctx: &Arc<GpuContext>,
    rec: &mut Recorder,
    bridge: &mut CallerImages,
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
    bridge: &mut CallerImages,
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
    bridge: &mut CallerImages,
    output: BufferBinding,
    dst: &CallerImage,
    constants: &FrameConstants,
) -> Result<(), GpuError> {
    const WHAT: &str = "output export";
    same_device(WHAT, ctx, bridge)?;
    let (shader, kind) = export_kernel(dst.format).ok_or_else(|| {
        GpuError::invalid(WHAT, format!("format {:?} is not supported", dst.format))
    })?;
    let base = (constants.output_x, constants.output_y);
    let size = (constants.width, constants.height);
    dst.check_rect(WHAT, base, size)?;
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
    let pipeline = export_pipeline(ctx, shader)?;
    let set = bridge.descriptor_set(&pipeline, &[Bind::Buffer(output), Bind::Image(dst)])?;
    // Earlier uses of the image finish before the write; the output buffer's writes (compose)
    // are visible to this read.
    rec.image_dependency(
        dst,
        &ImageDependency {
            src_stage: vk::PipelineStageFlags::ALL_COMMANDS,
            src_access: vk::AccessFlags::MEMORY_WRITE,
            dst_stage: vk::PipelineStageFlags::COMPUTE_SHADER,
            dst_access: vk::AccessFlags::SHADER_WRITE,
            memory: Some((vk::AccessFlags::MEMORY_WRITE, vk::AccessFlags::SHADER_READ)),
        },
    );
    let push = [base.0, base.1, size.0, size.1, kind, 0, 0, 0];
    rec.bind(&pipeline, set);
    rec.push_words(&push)?;
    rec.dispatch(groups(size.0, size.1))?;
    // The written texels are visible to whatever the caller does next.
    rec.image_dependency(
        dst,
        &ImageDependency {
            src_stage: vk::PipelineStageFlags::COMPUTE_SHADER,
            src_access: vk::AccessFlags::SHADER_WRITE,
            dst_stage: vk::PipelineStageFlags::ALL_COMMANDS,
            dst_access: vk::AccessFlags::MEMORY_READ | vk::AccessFlags::MEMORY_WRITE,
            memory: None,
        },
    );
    Ok(())
}
