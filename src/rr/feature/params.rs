//! RR's own typed parameters: [`RrCreate`] (sizes, quality, preset, flags and modes of one
//! feature, ngx-abi.md §7.5) and [`RrInputs`] (one evaluation: the checked images of the guide
//! table and the frame's scalars, §7.6 and rr-network.md §12.1). Both are validated once, when
//! they are made; a value of either type is always valid, so a backend never checks them again.
//!
//! What is required and what each guide feeds is **openngx's own** reading of what the network
//! consumes (`rr::frame::input`'s slot map): colour, output, depth, motion vectors, both albedos,
//! normals and roughness (unless packed into the normals' w) are required; the hit distances
//! and the depth-of-field guide are optional (their lanes are zero without them).

use crate::feature::{FeatureError, ImageInput, Rect};
use crate::rr::cpu_frame::FrameParams;
use crate::rr::geometry::{Geometry, Size};
use crate::rr::graph::guide;
use crate::rr::keys;
use crate::rr::preset::Preset;

/// Smallest render width/height.
pub const MIN_RENDER: u32 = 32;
/// Smallest output width and height (ngx-abi.md §8.2: NVIDIA's creation may fail below 64x32).
pub const MIN_OUTPUT: [u32; 2] = [64, 32];
/// Largest width/height of either size.
pub const MAX_SIZE: u32 = 8192;
/// Largest output width*height (as DLSS-NR's, 4096x4096 or 8192x2048).
pub const MAX_OUTPUT_AREA: u64 = 16_777_216;

/// The smallest render size a frame may use when the largest is `max` (dynamic resolution,
/// openngx's own rule): half of it per axis, rounded up, but never below [`MIN_RENDER`] (nor
/// above `max`). The optimal-settings callback reports it for the optimal size, and a feature
/// created at `max` accepts every frame size in between.
pub fn dynamic_min(max: Size) -> Size {
    let axis = |v: u32| v.div_ceil(2).max(MIN_RENDER).min(v);
    Size::new(axis(max.w), axis(max.h))
}

fn invalid(key: &str, reason: String) -> FeatureError {
    FeatureError::InvalidParameter {
        key: key.to_owned(),
        reason,
    }
}

fn unsupported(key: &str, reason: String) -> FeatureError {
    FeatureError::UnsupportedParameter {
        key: key.to_owned(),
        reason,
    }
}

/// `NVSDK_NGX_DLSS_Feature_Flags` (ngx-abi.md §6), as given.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CreateFlags(pub u32);

impl CreateFlags {
    pub const IS_HDR: u32 = 1 << 0;
    pub const MV_LOW_RES: u32 = 1 << 1;
    pub const MV_JITTERED: u32 = 1 << 2;
    pub const DEPTH_INVERTED: u32 = 1 << 3;
    pub const DO_SHARPENING: u32 = 1 << 5;
    pub const AUTO_EXPOSURE: u32 = 1 << 6;
    pub const ALPHA_UPSCALING: u32 = 1 << 7;
    pub const IS_INVALID: u32 = 1 << 31;

    fn has(self, bit: u32) -> bool {
        self.0 & bit != 0
    }
    /// Colour is linear HDR (else 0..1 perceptual).
    pub fn is_hdr(self) -> bool {
        self.has(Self::IS_HDR)
    }
    /// Motion vectors at render resolution.
    pub fn mv_low_res(self) -> bool {
        self.has(Self::MV_LOW_RES)
    }
    /// Motion vectors include the jitter.
    pub fn mv_jittered(self) -> bool {
        self.has(Self::MV_JITTERED)
    }
    /// Depth is 1 near, 0 far.
    pub fn depth_inverted(self) -> bool {
        self.has(Self::DEPTH_INVERTED)
    }
    /// The library computes the exposure (the exposure texture is not read).
    pub fn auto_exposure(self) -> bool {
        self.has(Self::AUTO_EXPOSURE)
    }
    /// Sharpening asked for (RR has none, ngx-abi.md §7.5: ignored).
    pub fn do_sharpening(self) -> bool {
        self.has(Self::DO_SHARPENING)
    }
    /// Alpha upscaling asked for.
    pub fn alpha_upscaling(self) -> bool {
        self.has(Self::ALPHA_UPSCALING)
    }
}

/// `DLSS.Roughness.Mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RoughnessMode {
    /// A separate roughness image (`GBuffer.Roughness`).
    #[default]
    Unpacked,
    /// Roughness in the normals' w (no roughness image).
    Packed,
}

/// `DLSS.Use.HW.Depth`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DepthType {
    /// Linear view-space depth.
    #[default]
    Linear,
    /// Hardware (projected) depth.
    Hardware,
}

/// The validated creation parameters of an RR feature.
#[derive(Debug, Clone, PartialEq)]
pub struct RrCreate {
    geometry: Geometry,
    perf_quality: Option<i32>,
    preset: Preset,
    flags: CreateFlags,
    output_subrects: bool,
    roughness: RoughnessMode,
    depth: DepthType,
    node_masks: [u32; 2],
}

impl RrCreate {
    /// Checks the sizes (render at least 32 per axis, output at least 64x32, both at most 8192
    /// per axis, the output no smaller than the render size and at most [`MAX_OUTPUT_AREA`]
    /// pixels), the flags (the network reads
    /// motion vectors at render resolution without jitter: `MVLowRes` is required and
    /// `MVJittered` unsupported; `IsInvalid` is refused), the denoise mode (only DLUnified, 1),
    /// the roughness and depth modes (0 or 1) and the node masks (0 or 1: one GPU).
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        render: Size,
        output: Size,
        perf_quality: Option<i32>,
        preset: Preset,
        flags: CreateFlags,
        output_subrects: bool,
        denoise_mode: i32,
        roughness_mode: u32,
        depth_type: u32,
        node_masks: [u32; 2],
    ) -> Result<RrCreate, FeatureError> {
        for (key, v, min) in [
            (keys::WIDTH, render.w, MIN_RENDER),
            (keys::HEIGHT, render.h, MIN_RENDER),
            (keys::OUT_WIDTH, output.w, MIN_OUTPUT[0]),
            (keys::OUT_HEIGHT, output.h, MIN_OUTPUT[1]),
        ] {
            if !(min..=MAX_SIZE).contains(&v) {
                return Err(invalid(key, format!("{v} is outside {min}..={MAX_SIZE}")));
            }
        }
        if output.area() as u64 > MAX_OUTPUT_AREA {
            return Err(invalid(
                keys::OUT_WIDTH,
                format!("{output} exceeds the maximum area of {MAX_OUTPUT_AREA} pixels"),
            ));
        }
        let geometry =
            Geometry::new(render, output).map_err(|e| invalid(keys::OUT_WIDTH, e.to_string()))?;
        if flags.has(CreateFlags::IS_INVALID) {
            return Err(invalid(
                keys::CREATE_FLAGS,
                format!("{:#x} has IsInvalid (bit 31) set", flags.0),
            ));
        }
        if !flags.mv_low_res() {
            return Err(unsupported(
                keys::CREATE_FLAGS,
                format!(
                    "{:#x}: motion vectors are read at render resolution; set MVLowRes (1 << 1)",
                    flags.0
                ),
            ));
        }
        if flags.mv_jittered() {
            return Err(unsupported(
                keys::CREATE_FLAGS,
                format!(
                    "{:#x}: motion vectors that include the jitter (MVJittered, 1 << 2) are not supported",
                    flags.0
                ),
            ));
        }
        if denoise_mode != 1 {
            return Err(unsupported(
                keys::DENOISE_MODE,
                format!("{denoise_mode}: only DLUnified (1) is supported"),
            ));
        }
        let roughness = match roughness_mode {
            0 => RoughnessMode::Unpacked,
            1 => RoughnessMode::Packed,
            v => {
                return Err(invalid(
                    keys::ROUGHNESS_MODE,
                    format!("{v}: expected 0 (unpacked) or 1 (packed)"),
                ))
            }
        };
        let depth = match depth_type {
            0 => DepthType::Linear,
            1 => DepthType::Hardware,
            v => {
                return Err(invalid(
                    keys::USE_HW_DEPTH,
                    format!("{v}: expected 0 (linear) or 1 (hardware)"),
                ))
            }
        };
        for (key, v) in [
            (keys::CREATION_NODE_MASK, node_masks[0]),
            (keys::VISIBILITY_NODE_MASK, node_masks[1]),
        ] {
            if v > 1 {
                return Err(unsupported(
                    key,
                    format!("{v:#x}: multi-GPU node masks are not supported"),
                ));
            }
        }
        Ok(RrCreate {
            geometry,
            perf_quality,
            preset,
            flags,
            output_subrects,
            roughness,
            depth,
            node_masks,
        })
    }

    /// The inclusive bounds of a frame's render size (dynamic resolution, openngx's own rule,
    /// docs/rr.md "Dynamic resolution"): at most the creation's render size, at least
    /// [`dynamic_min`] of it.
    pub fn dynamic_bounds(&self) -> (Size, Size) {
        (dynamic_min(self.render()), self.render())
    }

    /// The render size of a frame whose `DLSS.Render.Subrect.Dimensions` are `subrect` (`None`:
    /// not given, or the helper's 0x0; an axis not given is the creation's). Outside
    /// [`RrCreate::dynamic_bounds`] it is refused naming the key.
    pub fn frame_render(&self, subrect: Option<(u32, u32)>) -> Result<Size, FeatureError> {
        let Some((w, h)) = subrect else {
            return Ok(self.render());
        };
        let (min, max) = self.dynamic_bounds();
        if !(min.w..=max.w).contains(&w) || !(min.h..=max.h).contains(&h) {
            return Err(invalid(
                keys::RENDER_SUBRECT_DIMENSIONS,
                format!(
                    "{w}x{h} is outside the dynamic-resolution bounds {min} ..= {max} (per axis) \
                     of a feature created at {max}"
                ),
            ));
        }
        Ok(Size::new(w, h))
    }

    /// The render and output sizes (the graph's geometry).
    pub fn geometry(&self) -> Geometry {
        self.geometry
    }
    /// The render size.
    pub fn render(&self) -> Size {
        self.geometry.render
    }
    /// The output size.
    pub fn output(&self) -> Size {
        self.geometry.output
    }
    /// `PerfQualityValue` when given.
    pub fn perf_quality(&self) -> Option<i32> {
        self.perf_quality
    }
    /// The preset the feature runs.
    pub fn preset(&self) -> Preset {
        self.preset
    }
    /// The creation flags.
    pub fn flags(&self) -> CreateFlags {
        self.flags
    }
    /// `DLSS.Enable.Output.Subrects`.
    pub fn output_subrects(&self) -> bool {
        self.output_subrects
    }
    /// `DLSS.Roughness.Mode`.
    pub fn roughness_mode(&self) -> RoughnessMode {
        self.roughness
    }
    /// `DLSS.Use.HW.Depth`.
    pub fn depth_type(&self) -> DepthType {
        self.depth
    }
    /// `CreationNodeMask`, `VisibilityNodeMask`.
    pub fn node_masks(&self) -> [u32; 2] {
        self.node_masks
    }
}

/// The images of one evaluation besides the output, in the order [`RrInputs`] holds them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Guide {
    Color,
    Depth,
    MotionVectors,
    DiffuseAlbedo,
    SpecularAlbedo,
    Normals,
    Roughness,
    DiffuseHitDistance,
    SpecularHitDistance,
    DepthOfField,
    Exposure,
}

impl Guide {
    /// Every guide, in [`RrInputs`]' order.
    pub const ALL: [Guide; 11] = [
        Guide::Color,
        Guide::Depth,
        Guide::MotionVectors,
        Guide::DiffuseAlbedo,
        Guide::SpecularAlbedo,
        Guide::Normals,
        Guide::Roughness,
        Guide::DiffuseHitDistance,
        Guide::SpecularHitDistance,
        Guide::DepthOfField,
        Guide::Exposure,
    ];

    /// The parameter name.
    pub fn key(self) -> &'static str {
        match self {
            Guide::Color => keys::COLOR,
            Guide::Depth => keys::DEPTH,
            Guide::MotionVectors => keys::MOTION_VECTORS,
            Guide::DiffuseAlbedo => keys::DIFFUSE_ALBEDO,
            Guide::SpecularAlbedo => keys::SPECULAR_ALBEDO,
            Guide::Normals => keys::NORMALS,
            Guide::Roughness => keys::ROUGHNESS,
            Guide::DiffuseHitDistance => keys::DIFFUSE_HIT_DISTANCE,
            Guide::SpecularHitDistance => keys::SPECULAR_HIT_DISTANCE,
            Guide::DepthOfField => keys::DEPTH_OF_FIELD_GUIDE,
            Guide::Exposure => keys::EXPOSURE_TEXTURE,
        }
    }

    /// The alias the native feature also reads (§12.1), when there is one.
    pub fn alias(self) -> Option<&'static str> {
        match self {
            Guide::DiffuseAlbedo => Some(keys::DIFFUSE_ALBEDO_ALIAS),
            Guide::SpecularAlbedo => Some(keys::SPECULAR_ALBEDO_ALIAS),
            _ => None,
        }
    }

    /// The prefix of its sub-rectangle base keys (`<prefix>.X`, `<prefix>.Y`); the exposure
    /// texture has none (it is 1x1 at the origin).
    pub fn subrect_key(self) -> Option<&'static str> {
        Some(match self {
            Guide::Color => keys::COLOR_SUBRECT,
            Guide::Depth => keys::DEPTH_SUBRECT,
            Guide::MotionVectors => keys::MV_SUBRECT,
            Guide::DiffuseAlbedo => keys::DIFFUSE_ALBEDO_SUBRECT,
            Guide::SpecularAlbedo => keys::SPECULAR_ALBEDO_SUBRECT,
            Guide::Normals => keys::NORMALS_SUBRECT,
            Guide::Roughness => keys::ROUGHNESS_SUBRECT,
            Guide::DiffuseHitDistance => keys::DIFFUSE_HIT_DISTANCE_SUBRECT,
            Guide::SpecularHitDistance => keys::SPECULAR_HIT_DISTANCE_SUBRECT,
            Guide::DepthOfField => keys::DEPTH_OF_FIELD_GUIDE_SUBRECT,
            Guide::Exposure => return None,
        })
    }

    /// The first lane of the graph's `guides` tensor it fills and how many channels it gives
    /// (`rr::graph::guide`); `None` for the colour (its own tensor) and the exposure texture (a
    /// frame constant). Roughness packed into the normals' w fills the roughness lane from the
    /// normals image instead.
    pub fn lanes(self) -> Option<(usize, usize)> {
        match self {
            Guide::Color | Guide::Exposure => None,
            Guide::Depth => Some((guide::DEPTH, 1)),
            Guide::MotionVectors => Some((guide::MOTION, 2)),
            Guide::DiffuseAlbedo => Some((guide::DIFFUSE_ALBEDO, 3)),
            Guide::SpecularAlbedo => Some((guide::SPECULAR_ALBEDO, 3)),
            Guide::Normals => Some((guide::NORMALS, 3)),
            Guide::Roughness => Some((guide::ROUGHNESS, 1)),
            Guide::DiffuseHitDistance => Some((guide::DIFFUSE_HIT, 1)),
            Guide::SpecularHitDistance => Some((guide::SPECULAR_HIT, 1)),
            Guide::DepthOfField => Some((guide::DEPTH_OF_FIELD, 1)),
        }
    }

    /// Whether a frame without it is refused (`Roughness` only with unpacked roughness).
    pub fn required(self, created: &RrCreate) -> bool {
        match self {
            Guide::Color
            | Guide::Depth
            | Guide::MotionVectors
            | Guide::DiffuseAlbedo
            | Guide::SpecularAlbedo
            | Guide::Normals => true,
            Guide::Roughness => created.roughness == RoughnessMode::Unpacked,
            Guide::DiffuseHitDistance
            | Guide::SpecularHitDistance
            | Guide::DepthOfField
            | Guide::Exposure => false,
        }
    }

    /// The region the feature reads: the frame's render size (`RrCreate::frame_render`) at the
    /// given base (the exposure texture: 1x1 at the origin).
    pub fn rect(self, render: Size, base: (u32, u32)) -> Rect {
        match self {
            Guide::Exposure => Rect {
                x: 0,
                y: 0,
                width: 1,
                height: 1,
            },
            _ => Rect {
                x: base.0,
                y: base.1,
                width: render.w,
                height: render.h,
            },
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// The scalar parameters of one evaluation (defaults: no jitter, MV scale 1, no reset,
/// exposures 1, 16.6 ms).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RrFrame {
    /// `Jitter.Offset.X/Y` in render pixels.
    pub jitter: [f32; 2],
    /// `MV.Scale.X/Y` (0 is taken as 1, as the SDK's helper does).
    pub mv_scale: [f32; 2],
    /// `Reset`.
    pub reset: bool,
    /// `DLSS.Pre.Exposure` (0 is taken as 1).
    pub pre_exposure: f32,
    /// `DLSS.Exposure.Scale` (0 is taken as 1).
    pub exposure_scale: f32,
    /// `FrameTimeDeltaInMsec` (carried; the network does not read it).
    pub frame_time_ms: f32,
    /// `DLSS.Indicator.Invert.X/Y.Axis` (carried; openngx draws no indicator).
    pub indicator_invert: [bool; 2],
    /// `TonemapperType` when given (carried).
    pub tonemapper: Option<u32>,
    /// `WorldToViewMatrix` (16 floats, copied) when given (carried; the network does not read it).
    pub world_to_view: Option<[f32; 16]>,
    /// `ViewToClipMatrix` when given (carried).
    pub view_to_clip: Option<[f32; 16]>,
}

impl Default for RrFrame {
    fn default() -> Self {
        RrFrame {
            jitter: [0.0; 2],
            mv_scale: [1.0; 2],
            reset: false,
            pre_exposure: 1.0,
            exposure_scale: 1.0,
            frame_time_ms: 16.6,
            indicator_invert: [false; 2],
            tonemapper: None,
            world_to_view: None,
            view_to_clip: None,
        }
    }
}

/// The validated inputs of one RR evaluation.
#[derive(Debug, Clone)]
pub struct RrInputs {
    /// The frame's render size (`DLSS.Render.Subrect.Dimensions`, else the creation's).
    render: Size,
    images: [Option<ImageInput>; Guide::ALL.len()],
    output: ImageInput,
    frame: RrFrame,
    ignored: Vec<&'static str>,
}

impl RrInputs {
    /// The inputs of a feature created with `created`. `images` holds each guide's checked image
    /// in [`Guide::ALL`] order (`None` where absent), whose regions must be the render size
    /// (the exposure texture 1x1): the creation's, or `render_subrect` when given (dynamic
    /// resolution, within [`RrCreate::dynamic_bounds`]); `output` covers the output size.
    /// Refused: a render sub-rectangle outside the bounds, a required guide absent
    /// ([`FeatureError::MissingInput`] naming it), a region of the wrong size, the output
    /// aliasing an input, a non-finite scalar. `ignored` names the inputs given that the
    /// network does not read.
    pub fn new(
        created: &RrCreate,
        images: [Option<ImageInput>; Guide::ALL.len()],
        output: ImageInput,
        render_subrect: Option<(u32, u32)>,
        frame: RrFrame,
        ignored: Vec<&'static str>,
    ) -> Result<RrInputs, FeatureError> {
        let render = created.frame_render(render_subrect)?;
        for g in Guide::ALL {
            match &images[g.index()] {
                None if g.required(created) => {
                    return Err(FeatureError::MissingInput {
                        key: g.key().to_owned(),
                    })
                }
                None => {}
                Some(img) => {
                    let want = g.rect(render, (img.rect.x, img.rect.y));
                    if img.rect != want {
                        return Err(invalid(
                            g.key(),
                            format!(
                                "covers {}x{}, the feature reads {}x{}",
                                img.rect.width, img.rect.height, want.width, want.height
                            ),
                        ));
                    }
                    if img.image == output.image {
                        return Err(invalid(
                            keys::OUTPUT,
                            format!("must not alias {} (same VkImage)", g.key()),
                        ));
                    }
                }
            }
        }
        let out = created.output();
        if (output.rect.width, output.rect.height) != (out.w, out.h) {
            return Err(invalid(
                keys::OUTPUT,
                format!(
                    "covers {}x{}, the feature writes {out}",
                    output.rect.width, output.rect.height
                ),
            ));
        }
        let scalars = [
            (keys::JITTER_X, frame.jitter[0]),
            (keys::JITTER_Y, frame.jitter[1]),
            (keys::MV_SCALE_X, frame.mv_scale[0]),
            (keys::MV_SCALE_Y, frame.mv_scale[1]),
            (keys::PRE_EXPOSURE, frame.pre_exposure),
            (keys::EXPOSURE_SCALE, frame.exposure_scale),
            (keys::FRAME_TIME_DELTA, frame.frame_time_ms),
        ];
        for (key, v) in scalars {
            if !v.is_finite() {
                return Err(invalid(key, format!("{v} is not finite")));
            }
        }
        for (key, m) in [
            (keys::WORLD_TO_VIEW_MATRIX, &frame.world_to_view),
            (keys::VIEW_TO_CLIP_MATRIX, &frame.view_to_clip),
        ] {
            if m.is_some_and(|m| m.iter().any(|v| !v.is_finite())) {
                return Err(invalid(key, "holds a non-finite entry".into()));
            }
        }
        let one = |v: f32| if v == 0.0 { 1.0 } else { v };
        let frame = RrFrame {
            mv_scale: frame.mv_scale.map(one),
            pre_exposure: one(frame.pre_exposure),
            exposure_scale: one(frame.exposure_scale),
            ..frame
        };
        Ok(RrInputs {
            render,
            images,
            output,
            frame,
            ignored,
        })
    }

    /// A guide's image: always there for the guides [`Guide::required`] by the feature; `None`
    /// for an optional guide left out, or the roughness when packed into the normals.
    pub fn get(&self, g: Guide) -> Option<&ImageInput> {
        self.images[g.index()].as_ref()
    }

    /// The frame's render size (within the creation's dynamic-resolution bounds).
    pub fn render(&self) -> Size {
        self.render
    }

    /// `Output`.
    pub fn output(&self) -> &ImageInput {
        &self.output
    }

    /// The frame's scalars (zeros of the MV scale and exposures replaced by 1).
    pub fn frame(&self) -> &RrFrame {
        &self.frame
    }

    /// Inputs the caller gave that the network does not read, by name.
    pub fn ignored(&self) -> &[&'static str] {
        &self.ignored
    }

    /// The CPU reference's / GPU route's per-frame parameters: `exposure_value` is the exposure
    /// texture's first channel as the backend read it (`None` without one, or with
    /// `AutoExposure`: then the frame computes it).
    pub fn frame_params(&self, created: &RrCreate, exposure_value: Option<f32>) -> FrameParams {
        let f = &self.frame;
        FrameParams {
            jitter: f.jitter,
            mv_scale: f.mv_scale,
            pre_exposure: f.pre_exposure,
            exposure_scale: f.exposure_scale,
            exposure_value: if created.flags().auto_exposure() {
                None
            } else {
                exposure_value
            },
            reset: f.reset,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ash::vk::{self, Handle};

    fn create(flags: u32, roughness: u32) -> Result<RrCreate, FeatureError> {
        RrCreate::new(
            Size::new(64, 48),
            Size::new(96, 72),
            Some(5),
            Preset::E,
            CreateFlags(flags),
            false,
            1,
            roughness,
            0,
            [1, 1],
        )
    }

    fn img(id: u64, rect: Rect) -> ImageInput {
        ImageInput {
            view: vk::ImageView::from_raw(id + 1000),
            image: vk::Image::from_raw(id),
            subresource: vk::ImageSubresourceRange::default(),
            format: vk::Format::R16G16B16A16_SFLOAT,
            width: 128,
            height: 128,
            read_write: false,
            rect,
        }
    }

    fn rect(w: u32, h: u32) -> Rect {
        Rect {
            x: 0,
            y: 0,
            width: w,
            height: h,
        }
    }

    #[test]
    fn creation_checks_name_their_parameter() {
        let ok = create(CreateFlags::MV_LOW_RES, 0).expect("valid");
        assert_eq!(
            (ok.render(), ok.output()),
            (Size::new(64, 48), Size::new(96, 72))
        );
        let key = |r: Result<RrCreate, FeatureError>| match r {
            Err(FeatureError::InvalidParameter { key, .. })
            | Err(FeatureError::UnsupportedParameter { key, .. }) => key,
            other => panic!("{other:?}"),
        };
        assert_eq!(key(create(0, 0)), keys::CREATE_FLAGS);
        assert_eq!(
            key(create(
                CreateFlags::MV_LOW_RES | CreateFlags::MV_JITTERED,
                0
            )),
            keys::CREATE_FLAGS
        );
        assert_eq!(
            key(create(CreateFlags::MV_LOW_RES | CreateFlags::IS_INVALID, 0)),
            keys::CREATE_FLAGS
        );
        assert_eq!(
            key(create(CreateFlags::MV_LOW_RES, 2)),
            keys::ROUGHNESS_MODE
        );
        let sized = |r: Size, o: Size| {
            RrCreate::new(r, o, None, Preset::D, CreateFlags(2), true, 1, 0, 1, [0, 0])
        };
        assert_eq!(
            key(sized(Size::new(31, 48), Size::new(96, 72))),
            keys::WIDTH
        );
        assert_eq!(
            key(sized(Size::new(64, 48), Size::new(63, 72))),
            keys::OUT_WIDTH
        );
        // Downscaling is refused by the geometry, naming the output.
        assert_eq!(
            key(sized(Size::new(128, 48), Size::new(96, 72))),
            keys::OUT_WIDTH
        );
        assert_eq!(
            key(sized(Size::new(64, 48), Size::new(8192, 4096))),
            keys::OUT_WIDTH
        );
        let d = sized(Size::new(1280, 720), Size::new(3840, 2160)).expect("720p -> 4K");
        assert_eq!(
            (d.preset(), d.depth_type(), d.node_masks()),
            (Preset::D, DepthType::Hardware, [0, 0])
        );
        let e = RrCreate::new(
            Size::new(64, 48),
            Size::new(96, 72),
            None,
            Preset::E,
            CreateFlags(2),
            false,
            0,
            0,
            0,
            [1, 1],
        );
        assert_eq!(key(e), keys::DENOISE_MODE);
        let e = RrCreate::new(
            Size::new(64, 48),
            Size::new(96, 72),
            None,
            Preset::E,
            CreateFlags(2),
            false,
            1,
            0,
            0,
            [1, 2],
        );
        assert_eq!(key(e), keys::VISIBILITY_NODE_MASK);
    }

    fn full(created: &RrCreate) -> [Option<ImageInput>; 11] {
        let mut images: [Option<ImageInput>; 11] = Default::default();
        for (i, g) in Guide::ALL.into_iter().enumerate() {
            if g.required(created) {
                images[i] = Some(img(i as u64 + 1, rect(64, 48)));
            }
        }
        images
    }

    #[test]
    fn evaluation_checks_required_guides_sizes_and_scalars() {
        let c = create(CreateFlags::MV_LOW_RES, 0).expect("valid");
        let out = img(99, rect(96, 72));
        let ok = RrInputs::new(&c, full(&c), out, None, RrFrame::default(), vec![]).expect("valid");
        assert!(ok.get(Guide::DiffuseHitDistance).is_none());
        assert_eq!(ok.get(Guide::Roughness).map(|i| i.image.as_raw()), Some(7));
        // Every required guide, when missing, is named.
        for g in Guide::ALL.into_iter().filter(|g| g.required(&c)) {
            let mut images = full(&c);
            images[g.index()] = None;
            match RrInputs::new(&c, images, out, None, RrFrame::default(), vec![]) {
                Err(FeatureError::MissingInput { key }) => assert_eq!(key, g.key()),
                other => panic!("{g:?}: {other:?}"),
            }
        }
        // Packed roughness: no roughness image needed.
        let packed = create(CreateFlags::MV_LOW_RES, 1).expect("valid");
        let mut images = full(&c);
        images[Guide::Roughness.index()] = None;
        assert!(RrInputs::new(&packed, images, out, None, RrFrame::default(), vec![]).is_ok());
        // Wrong region sizes, aliasing, dynamic resolution, non-finite scalars.
        let mut images = full(&c);
        images[Guide::Depth.index()] = Some(img(2, rect(96, 72)));
        assert!(RrInputs::new(&c, images, out, None, RrFrame::default(), vec![]).is_err());
        assert!(RrInputs::new(
            &c,
            full(&c),
            img(99, rect(64, 48)),
            None,
            RrFrame::default(),
            vec![]
        )
        .is_err());
        assert!(RrInputs::new(
            &c,
            full(&c),
            img(1, rect(96, 72)),
            None,
            RrFrame::default(),
            vec![]
        )
        .is_err());
        // Dynamic resolution: a render sub-rectangle outside the bounds (32x32 ..= 64x48 for a
        // feature created at 64x48) is refused naming the key; inside, every guide covers it.
        assert_eq!(c.dynamic_bounds(), (Size::new(32, 32), Size::new(64, 48)));
        for sub in [(32, 24), (31, 40), (65, 48), (64, 49), (0, 48)] {
            match RrInputs::new(&c, full(&c), out, Some(sub), RrFrame::default(), vec![]) {
                Err(FeatureError::InvalidParameter { key, .. }) => {
                    assert_eq!(key, keys::RENDER_SUBRECT_DIMENSIONS, "{sub:?}")
                }
                other => panic!("{sub:?}: {other:?}"),
            }
        }
        let small = |w, h| {
            let mut images = full(&c);
            for i in images.iter_mut().flatten() {
                i.rect = rect(w, h);
            }
            images
        };
        let r = RrInputs::new(
            &c,
            small(56, 40),
            out,
            Some((56, 40)),
            RrFrame::default(),
            vec![],
        )
        .expect("56x40 inside the bounds");
        assert_eq!(r.render(), Size::new(56, 40));
        let r = RrInputs::new(
            &c,
            small(32, 32),
            out,
            Some((32, 32)),
            RrFrame::default(),
            vec![],
        )
        .expect("the smallest size");
        assert_eq!(r.render(), Size::new(32, 32));
        // The guides must cover the frame's size, not the creation's.
        assert!(RrInputs::new(
            &c,
            full(&c),
            out,
            Some((56, 40)),
            RrFrame::default(),
            vec![]
        )
        .is_err());
        assert!(RrInputs::new(
            &c,
            full(&c),
            out,
            Some((64, 48)),
            RrFrame::default(),
            vec![]
        )
        .is_ok());
        let nan = RrFrame {
            jitter: [f32::NAN, 0.0],
            ..RrFrame::default()
        };
        assert!(RrInputs::new(&c, full(&c), out, None, nan, vec![]).is_err());
        let mut m = [0.0; 16];
        m[3] = f32::INFINITY;
        let bad = RrFrame {
            view_to_clip: Some(m),
            ..RrFrame::default()
        };
        assert!(RrInputs::new(&c, full(&c), out, None, bad, vec![]).is_err());
        // Zeros of the scales become 1 (the helper's substitution), and reach the frame.
        let zeros = RrFrame {
            mv_scale: [0.0, -2.0],
            pre_exposure: 0.0,
            exposure_scale: 0.0,
            jitter: [0.25, -0.125],
            reset: true,
            ..RrFrame::default()
        };
        let r = RrInputs::new(&c, full(&c), out, None, zeros, vec!["DLSSD.Alpha"]).expect("valid");
        let p = r.frame_params(&c, Some(2.0));
        assert_eq!(
            (
                p.mv_scale,
                p.pre_exposure,
                p.exposure_scale,
                p.jitter,
                p.reset,
                p.exposure_value
            ),
            ([1.0, -2.0], 1.0, 1.0, [0.25, -0.125], true, Some(2.0))
        );
        assert_eq!(r.ignored(), ["DLSSD.Alpha"]);
        let auto = create(CreateFlags::MV_LOW_RES | CreateFlags::AUTO_EXPOSURE, 0).expect("valid");
        assert_eq!(r.frame_params(&auto, Some(2.0)).exposure_value, None);
    }

    #[test]
    fn dynamic_minimum_is_half_the_maximum_but_not_below_min_render() {
        assert_eq!(dynamic_min(Size::new(1280, 720)), Size::new(640, 360));
        assert_eq!(dynamic_min(Size::new(1281, 721)), Size::new(641, 361));
        assert_eq!(dynamic_min(Size::new(64, 48)), Size::new(32, 32));
        assert_eq!(dynamic_min(Size::new(32, 33)), Size::new(32, 32));
    }

    #[test]
    fn guide_lanes_tile_the_guides_tensor() {
        let mut seen = [false; guide::LANES];
        for g in Guide::ALL {
            if let Some((first, n)) = g.lanes() {
                for s in &mut seen[first..first + n] {
                    assert!(!*s, "{g:?} overlaps");
                    *s = true;
                }
            }
        }
        assert!(seen.iter().all(|s| *s), "every lane has a guide");
    }
}
