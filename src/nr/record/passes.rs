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
//! Where a frame buffer or the network's input or head exceeds the device's
//! `maxStorageBufferRange` (the f32 features are 135 MiB at 1920x1080), a pass runs as several
//! launches over bands of rows ([`PassBand`], planned by [`prepare_bands`], [`compose_bands`],
//! [`import_bands`]), each binding its rows' share of the buffers it writes and of the proxy and
//! head; the history and motion buffers, which prepare and compose read (the history at
//! reprojected positions anywhere), are bound whole: 8 bytes per pixel, at most 128 MiB at the
//! API's largest area, the smallest range Vulkan allows.
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
use std::ops::Range;

use crate::nr::frame::prepare::mirror;
use crate::nr::frame::{FrameConstants, LANES};
use crate::nr::geometry::Geometry;

use super::bands::{self, BindLimits, RangeError};

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

/// The frame size a pass is made for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PassSize {
    /// Valid (feature) size.
    pub width: u32,
    pub height: u32,
    /// The padded field of the network.
    pub field_width: u32,
    pub field_height: u32,
}

impl PassSize {
    /// The size the constants describe.
    pub fn of(c: &FrameConstants) -> PassSize {
        PassSize {
            width: c.width,
            height: c.height,
            field_width: c.field_width,
            field_height: c.field_height,
        }
    }

    /// The size of a frame of `geometry`.
    pub fn of_geometry(g: &Geometry) -> PassSize {
        PassSize {
            width: g.valid.w,
            height: g.valid.h,
            field_width: g.field.w,
            field_height: g.field.h,
        }
    }

    fn valid_pixels(&self) -> u64 {
        u64::from(self.width) * u64::from(self.height)
    }
}

/// Rows per band quantum of the frame passes: 32 rows of a buffer of at least 8 bytes per
/// pixel start at a multiple of 256 bytes (every device's storage-buffer offset alignment), so
/// the rows neighbouring launches write never share a bound byte.
const PASS_QUANTUM: u32 = 32;

/// One launch of a frame pass: `rows` of its grid (field rows for prepare, valid rows for
/// compose and the imports) and `src`, the valid rows its proxy binding holds (`src.start` is
/// a multiple of 32).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PassBand {
    pub rows: Range<u32>,
    pub src: Range<u32>,
}

impl PassBand {
    /// The words pushed after the frame constants (`frame_constants.glsl`).
    fn words(&self) -> [u32; 4] {
        [self.rows.start, self.rows.end, self.src.start, 0]
    }
}

/// Push-constant bytes of prepare and compose: the frame constants and the band.
const PASS_PUSH_BYTES: u32 = FrameConstants::BYTES as u32 + 16;

/// Refuse a buffer bound whole that exceeds the range limit.
fn whole_fits(what: &str, bytes: u64, limits: &BindLimits) -> Result<(), RangeError> {
    if bytes > limits.max_range {
        return Err(RangeError::range(
            format!("frame buffer `{what}` (bound whole)"),
            bytes,
            limits,
        ));
    }
    Ok(())
}

/// Whether a 2D grid of 8x8 workgroups over `width` x `rows` fits.
fn grid_fits(what: &str, width: u32, rows: u32, limits: &BindLimits) -> Result<(), RangeError> {
    for (axis, n) in [(0, width), (1, rows)] {
        let groups = u64::from(n.div_ceil(TILE));
        if groups > u64::from(limits.max_groups[axis]) {
            return Err(RangeError::groups(what.to_owned(), axis, groups, limits));
        }
    }
    Ok(())
}

/// Bytes of `rows` rows of a buffer of `width` pixels of `bytes` each.
fn rows_bytes(rows: Range<u32>, width: u32, bytes: u64) -> u64 {
    u64::from(rows.end.saturating_sub(rows.start)) * u64::from(width) * bytes
}

/// One band, or bands of [`PASS_QUANTUM`] rows that each fit `fits` with the band range.
fn pass_bands(
    len: u32,
    limits: &BindLimits,
    fits: impl Fn(&PassBand, u64) -> Result<(), RangeError>,
    band: impl Fn(Range<u32>) -> PassBand,
) -> Result<Vec<PassBand>, RangeError> {
    let whole = band(0..len);
    if fits(&whole, limits.max_range).is_ok() {
        return Ok(vec![whole]);
    }
    let room = limits.max_range.saturating_sub(bands::ALIGN_ROOM);
    Ok(
        bands::split(len, PASS_QUANTUM, |b| fits(&band(b.start..b.end), room))?
            .into_iter()
            .map(|b| band(b.start..b.end))
            .collect(),
    )
}

/// The launches of `prepare` for a frame of `size`: bands of field rows, each with the valid
/// rows its mirrored proxy reads.
pub fn prepare_bands(size: PassSize, limits: &BindLimits) -> Result<Vec<PassBand>, RangeError> {
    let n = size.valid_pixels();
    whole_fits("motion", n * MOTION_TEXEL_BYTES, limits)?;
    whole_fits("history", n * HISTORY_TEXEL_BYTES, limits)?;
    let band = |rows: Range<u32>| {
        let (lo, hi) = rows
            .clone()
            .map(|y| mirror(y, size.height))
            .fold((u32::MAX, 0), |(lo, hi), m| (lo.min(m), hi.max(m + 1)));
        let lo = if lo == u32::MAX { 0 } else { lo };
        PassBand {
            rows,
            src: lo / PASS_QUANTUM * PASS_QUANTUM..hi.max(lo + 1),
        }
    };
    pass_bands(
        size.field_height,
        limits,
        |b, range| {
            let features = rows_bytes(b.rows.clone(), size.field_width, FEATURE_ROW_BYTES);
            let proxy = rows_bytes(b.src.clone(), size.width, PROXY_TEXEL_BYTES);
            for (what, bytes) in [("network input features", features), ("proxy", proxy)] {
                if bytes > range {
                    return Err(RangeError::range(
                        format!("prepare: rows {:?} of the {what}", b.rows),
                        bytes,
                        limits,
                    ));
                }
            }
            grid_fits(
                "prepare",
                size.field_width,
                b.rows.end - b.rows.start,
                limits,
            )
        },
        band,
    )
}

/// The launches of `compose` for a frame of `size`: bands of valid rows (the proxy's and the
/// head's).
pub fn compose_bands(size: PassSize, limits: &BindLimits) -> Result<Vec<PassBand>, RangeError> {
    let n = size.valid_pixels();
    whole_fits("motion", n * MOTION_TEXEL_BYTES, limits)?;
    whole_fits("history", n * HISTORY_TEXEL_BYTES, limits)?;
    pass_bands(
        size.height,
        limits,
        |b, range| {
            let proxy = rows_bytes(b.rows.clone(), size.width, PROXY_TEXEL_BYTES);
            let head = rows_bytes(b.rows.clone(), size.field_width, HEAD_ROW_BYTES);
            let out = rows_bytes(b.rows.clone(), size.width, HISTORY_TEXEL_BYTES);
            for (what, bytes) in [("proxy", proxy), ("network head", head), ("output", out)] {
                if bytes > range {
                    return Err(RangeError::range(
                        format!("compose: rows {:?} of the {what}", b.rows),
                        bytes,
                        limits,
                    ));
                }
            }
            grid_fits("compose", size.width, b.rows.end - b.rows.start, limits)
        },
        |rows| PassBand {
            src: rows.clone(),
            rows,
        },
    )
}

/// The launches of an import of a `width` x `height` rectangle into a buffer of `channels` f32
/// per pixel: bands of rows.
pub fn import_bands(
    width: u32,
    height: u32,
    channels: u32,
    limits: &BindLimits,
) -> Result<Vec<PassBand>, RangeError> {
    pass_bands(
        height,
        limits,
        |b, range| {
            let bytes = rows_bytes(b.rows.clone(), width, u64::from(channels) * 4);
            if bytes > range {
                return Err(RangeError::range(
                    format!("import: rows {:?} of its frame buffer", b.rows),
                    bytes,
                    limits,
                ));
            }
            grid_fits("import", width, b.rows.end - b.rows.start, limits)
        },
        |rows| PassBand {
            src: rows.clone(),
            rows,
        },
    )
}

/// Every launch of a frame of `size` fits `limits`: prepare, compose, the imports (colour and
/// motion) and the export, and each frame buffer fits one allocation. Checked before a feature
/// records anything.
pub fn check_passes(size: PassSize, limits: &BindLimits) -> Result<(), RangeError> {
    prepare_bands(size, limits)?;
    compose_bands(size, limits)?;
    import_bands(size.width, size.height, 4, limits)?;
    import_bands(size.width, size.height, 2, limits)?;
    let n = size.valid_pixels();
    whole_fits("output", n * HISTORY_TEXEL_BYTES, limits)?;
    for (what, texel) in [
        ("proxy", PROXY_TEXEL_BYTES),
        ("motion", MOTION_TEXEL_BYTES),
        ("history", HISTORY_TEXEL_BYTES),
    ] {
        if n * texel > limits.max_buffer {
            return Err(RangeError::buffer(
                format!("frame buffer `{what}`"),
                n * texel,
                limits,
            ));
        }
    }
    Ok(())
}

/// The rows `rows` of a frame buffer of `width` pixels of `texel` bytes (`whole` is the buffer).
fn rows_of(whole: BufferBinding, rows: &Range<u32>, width: u32, texel: u64) -> BufferBinding {
    bands::sub_binding(
        whole,
        u64::from(rows.start)..u64::from(rows.end),
        u64::from(width) * texel,
    )
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

/// The constants of a launch as the kernel sees them: the frame's, then the band's.
fn push(c: &FrameConstants, band: &PassBand) -> Vec<u8> {
    let mut v = c.to_bytes().to_vec();
    v.extend(band.words().iter().flat_map(|w| w.to_le_bytes()));
    v
}

fn wrong_size(what: &str, made: PassSize, got: PassSize) -> GpuError {
    GpuError::invalid(
        what,
        format!("made for a frame of {made:?}, recorded with {got:?}"),
    )
}

/// `prepare` bound to its buffers for a frame of one size: one descriptor set per launch,
/// allocated once (a feature keeps one pass per history slot and records it every frame).
#[derive(Clone, Debug)]
pub struct PreparePass {
    pipeline: ComputePipeline,
    launches: Vec<(vk::DescriptorSet, PassBand)>,
    bindings: PrepareBindings,
    size: PassSize,
}

impl PreparePass {
    /// The pass for frames of `size`, in launches within `limits`.
    pub fn new(
        ctx: &Arc<GpuContext>,
        arena: &mut DescriptorArena,
        bindings: &PrepareBindings,
        size: PassSize,
        limits: &BindLimits,
    ) -> Result<Self, GpuError> {
        let pipeline = ctx.pipeline(&PipelineDesc::new(PREPARE_SHADER, 4, PASS_PUSH_BYTES))?;
        let bands =
            prepare_bands(size, limits).map_err(|e| GpuError::invalid("prepare", e.to_string()))?;
        let mut launches = Vec::with_capacity(bands.len());
        for band in bands {
            let proxy = rows_of(bindings.proxy, &band.src, size.width, PROXY_TEXEL_BYTES);
            // Absent optional inputs are never read; the proxy stands in for their descriptor.
            let set = arena.allocate(
                &pipeline,
                &[
                    proxy,
                    bindings.motion.unwrap_or(proxy),
                    bindings.history.unwrap_or(proxy),
                    rows_of(
                        bindings.features,
                        &band.rows,
                        size.field_width,
                        FEATURE_ROW_BYTES,
                    ),
                ],
            )?;
            launches.push((set, band));
        }
        Ok(PreparePass {
            pipeline,
            launches,
            bindings: *bindings,
            size,
        })
    }

    /// Launches of the pass.
    pub fn launches(&self) -> usize {
        self.launches.len()
    }

    /// Record the dispatches (one invocation per field pixel) and a barrier that makes the
    /// features visible to later compute work.
    pub fn record(&self, rec: &mut Recorder, constants: &FrameConstants) -> Result<(), GpuError> {
        let b = &self.bindings;
        check_sizes(constants)?;
        if PassSize::of(constants) != self.size {
            return Err(wrong_size("prepare", self.size, PassSize::of(constants)));
        }
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
        for (set, band) in &self.launches {
            rec.run(
                &self.pipeline,
                *set,
                &push(&c, band),
                groups(c.field_width, band.rows.end - band.rows.start),
            )?;
        }
        rec.compute_to_compute_buffers(&[b.features]);
        Ok(())
    }
}

/// `compose` bound to its buffers (see [`PreparePass`]).
#[derive(Clone, Debug)]
pub struct ComposePass {
    pipeline: ComputePipeline,
    launches: Vec<(vk::DescriptorSet, PassBand)>,
    bindings: ComposeBindings,
    size: PassSize,
}

impl ComposePass {
    /// The pass for frames of `size`, in launches within `limits`.
    pub fn new(
        ctx: &Arc<GpuContext>,
        arena: &mut DescriptorArena,
        bindings: &ComposeBindings,
        size: PassSize,
        limits: &BindLimits,
    ) -> Result<Self, GpuError> {
        let pipeline = ctx.pipeline(&PipelineDesc::new(COMPOSE_SHADER, 6, PASS_PUSH_BYTES))?;
        let bands =
            compose_bands(size, limits).map_err(|e| GpuError::invalid("compose", e.to_string()))?;
        let mut launches = Vec::with_capacity(bands.len());
        for band in bands {
            let proxy = rows_of(bindings.proxy, &band.rows, size.width, PROXY_TEXEL_BYTES);
            let rows = |b: BufferBinding| rows_of(b, &band.rows, size.width, HISTORY_TEXEL_BYTES);
            // Absent optional inputs are never read; the proxy stands in for their descriptor.
            let set = arena.allocate(
                &pipeline,
                &[
                    proxy,
                    bindings.motion.unwrap_or(proxy),
                    bindings.history.unwrap_or(proxy),
                    rows_of(bindings.head, &band.rows, size.field_width, HEAD_ROW_BYTES),
                    rows(bindings.output),
                    rows(bindings.next_history),
                ],
            )?;
            launches.push((set, band));
        }
        Ok(ComposePass {
            pipeline,
            launches,
            bindings: *bindings,
            size,
        })
    }

    /// Launches of the pass.
    pub fn launches(&self) -> usize {
        self.launches.len()
    }

    /// Record the dispatches (one invocation per valid pixel) and a barrier that makes the
    /// output and the next history visible to later compute work.
    pub fn record(&self, rec: &mut Recorder, constants: &FrameConstants) -> Result<(), GpuError> {
        let b = &self.bindings;
        check_sizes(constants)?;
        if PassSize::of(constants) != self.size {
            return Err(wrong_size("compose", self.size, PassSize::of(constants)));
        }
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
        for (set, band) in &self.launches {
            rec.run(
                &self.pipeline,
                *set,
                &push(&c, band),
                groups(c.width, band.rows.end - band.rows.start),
            )?;
        }
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
    let limits = BindLimits::of(ctx.capabilities());
    PreparePass::new(ctx, arena, bindings, PassSize::of(constants), &limits)?.record(rec, constants)
}

/// Record `compose` with a descriptor set allocated from `arena` for this call.
pub fn record_compose(
    ctx: &Arc<GpuContext>,
    rec: &mut Recorder,
    arena: &mut DescriptorArena,
    bindings: &ComposeBindings,
    constants: &FrameConstants,
) -> Result<(), GpuError> {
    let limits = BindLimits::of(ctx.capabilities());
    ComposePass::new(ctx, arena, bindings, PassSize::of(constants), &limits)?.record(rec, constants)
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

/// Where an import writes within each texel of its buffer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Lanes {
    /// Words per texel; `None`: the channel count (a buffer of just this image).
    pub stride: Option<u32>,
    /// The first word written of each texel.
    pub first: u32,
}

/// The import kernel's flag (added to a kind of [`guide_import_kind`]) that turns channel 0 into
/// `1 - v` after its decode (`numerics::normalized::invert_depth`: DLSS's `DepthInverted`).
pub const IMPORT_INVERT: u32 = 0x100;

/// How the import kernel decodes a caller image of another network (RR's guides): the colour
/// formats as [`record_import_color`]; the one-, two- and four-channel float formats and the
/// 32-bit float depth formats (their depth aspect) as sampled; 8- and 16-bit UNORM and SNORM
/// formats (`D16_UNORM` through its depth aspect) as their recovered integer code decoded by
/// `numerics::normalized` (kinds 1, 4, 5, 6). `None`: not supported (the 24-bit depth formats:
/// a sampled f32 cannot give their code back exactly).
pub fn guide_import_kind(format: vk::Format) -> Option<u32> {
    match format {
        vk::Format::D32_SFLOAT | vk::Format::D32_SFLOAT_S8_UINT => Some(0),
        vk::Format::R16_SFLOAT
        | vk::Format::R32_SFLOAT
        | vk::Format::R16G16_SFLOAT
        | vk::Format::R32G32_SFLOAT
        | vk::Format::B10G11R11_UFLOAT_PACK32 => Some(0),
        vk::Format::R8_UNORM => Some(1),
        vk::Format::R16_UNORM | vk::Format::D16_UNORM => Some(4),
        vk::Format::R8G8B8A8_SNORM => Some(5),
        vk::Format::R16G16B16A16_SNORM => Some(6),
        f => color_import_kind(f),
    }
}

/// Import the first `channels` channels of the caller's image `src` (the `size` rectangle at
/// `base`, decoded as `kind` of [`guide_import_kind`]) into lanes `lanes.first..` of a buffer of
/// `lanes.stride` f32 words per texel. For networks whose input tensors interleave several
/// images (RR's guides); the same kernel and barriers as the colour import.
#[allow(clippy::too_many_arguments)]
pub fn record_import_lanes(
    ctx: &Arc<GpuContext>,
    rec: &mut Recorder,
    bridge: &mut CallerImages,
    src: &CallerImage,
    dst: BufferBinding,
    what: &str,
    kind: u32,
    channels: u32,
    lanes: Lanes,
    base: (u32, u32),
    size: (u32, u32),
) -> Result<(), GpuError> {
    let limits = BindLimits::of(ctx.capabilities());
    record_import(
        ctx, rec, bridge, src, dst, what, kind, channels, lanes, base, size, &limits,
    )
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
    lanes: Lanes,
    base: (u32, u32),
    size: (u32, u32),
    limits: &BindLimits,
) -> Result<(), GpuError> {
    same_device(what, ctx, bridge)?;
    let stride = lanes.stride.unwrap_or(channels);
    if channels == 0 || channels > 4 || lanes.first + channels > stride || stride > 0xFFFF {
        return Err(GpuError::invalid(
            what,
            format!(
                "{channels} channels at lane {} of {stride}: 1 to 4 within the texel expected",
                lanes.first
            ),
        ));
    }
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
        size.0 as u64 * size.1 as u64 * stride as u64 * 4,
    )?;
    let bands = import_bands(size.0, size.1, stride, limits)
        .map_err(|e| GpuError::invalid(what, e.to_string()))?;
    let pipeline = import_pipeline(ctx)?;
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
    // Each band writes its rows of `dst` from the image rows below `base.1` + its first row.
    for band in &bands {
        let rows = band.rows.end - band.rows.start;
        let part = rows_of(dst, &band.rows, size.0, u64::from(stride) * 4);
        let set = bridge.descriptor_set(&pipeline, &[Bind::Image(src), Bind::Buffer(part)])?;
        let push = [
            base.0,
            base.1 + band.rows.start,
            size.0,
            rows,
            kind,
            channels,
            0,
            // 0: texels of `channels` words from lane 0 (the frame buffers); else the stride
            // (low half) and the first lane (high half) of a wider texel.
            if lanes.stride.is_some() {
                stride | (lanes.first << 16)
            } else {
                0
            },
        ];
        rec.bind(&pipeline, set);
        rec.push_words(&push)?;
        rec.dispatch(groups(size.0, rows))?;
    }
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
    let limits = BindLimits::of(ctx.capabilities());
    record_import_color_within(ctx, rec, bridge, src, proxy, constants, &limits)
}

/// [`record_import_color`] in launches within `limits` (tests lower the device's).
pub fn record_import_color_within(
    ctx: &Arc<GpuContext>,
    rec: &mut Recorder,
    bridge: &mut CallerImages,
    src: &CallerImage,
    proxy: BufferBinding,
    constants: &FrameConstants,
    limits: &BindLimits,
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
        Lanes::default(),
        (constants.color_x, constants.color_y),
        (constants.width, constants.height),
        limits,
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
    let limits = BindLimits::of(ctx.capabilities());
    record_import_motion_within(ctx, rec, bridge, src, motion, constants, &limits)
}

/// [`record_import_motion`] in launches within `limits` (tests lower the device's).
pub fn record_import_motion_within(
    ctx: &Arc<GpuContext>,
    rec: &mut Recorder,
    bridge: &mut CallerImages,
    src: &CallerImage,
    motion: BufferBinding,
    constants: &FrameConstants,
    limits: &BindLimits,
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
        Lanes::default(),
        (constants.motion_x, constants.motion_y),
        (constants.width, constants.height),
        limits,
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
    record_export_rect(
        ctx,
        rec,
        bridge,
        output,
        dst,
        (constants.output_x, constants.output_y),
        (constants.width, constants.height),
    )
}

/// Whether [`record_export_rect`] can write an image of `format`.
pub fn export_supported(format: vk::Format) -> bool {
    export_kernel(format).is_some()
}

/// [`record_export`] of a `size` buffer (RGBA f16) into the rectangle at `base` (any network's
/// output).
pub fn record_export_rect(
    ctx: &Arc<GpuContext>,
    rec: &mut Recorder,
    bridge: &mut CallerImages,
    output: BufferBinding,
    dst: &CallerImage,
    base: (u32, u32),
    size: (u32, u32),
) -> Result<(), GpuError> {
    const WHAT: &str = "output export";
    same_device(WHAT, ctx, bridge)?;
    let (shader, kind) = export_kernel(dst.format).ok_or_else(|| {
        GpuError::invalid(WHAT, format!("format {:?} is not supported", dst.format))
    })?;
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
