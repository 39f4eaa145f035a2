//! Feature 13 (Ray Reconstruction, DLSS-D) at the ABI: its capability keys and their two
//! callbacks (optimal settings, stats), the image formats each guide accepts, and the parsing of
//! a caller's parameter objects straight into RR's own [`RrCreate`] and [`RrInputs`] (ngx-abi.md
//! §7.5-7.6, rr-network.md §12.1), which validate the values themselves. The parameter names are
//! `crate::rr::keys`; nothing here touches Vulkan, and the capability fill never queries a device
//! (applications and tests call it with fake handles).
//!
//! The built-in backend is RR's exact GPU route (`rr::feature::RrBackend`, `ngx::builtin`):
//! `SuperSamplingDenoising.Available` is 1. Without a backend (unregistered, as tests do) the
//! feature is described but not available: `Available` is 0 and a creation whose parameters
//! validate fails with `FAIL_NotImplemented` (the registry's rule for a feature without one).

use std::os::raw::c_void;
use std::path::Path;

use ash::vk;
use parking_lot::Mutex;

use super::abi::*;
use super::guard::guard;
use super::log;
use super::param_read::{
    key, opt_f, opt_i, opt_ui, present_pointer, refuse_custom_allocators, unsupported, write_stats,
};
use super::params::{ParamObject, ParamRef, Value};
use super::registry::{self, Description};
use super::resource::{check_image, read_resource, Role};
use crate::feature::{FeatureError, ImageInput, Rect};
use crate::rr::feature::{
    dynamic_min, CreateFlags, Guide, RrCreate, RrFrame, RrInputs, MIN_RENDER,
};
use crate::rr::geometry::Size;
use crate::rr::keys as k;
use crate::rr::preset::Preset;
use crate::rr::weights::model::{RrModel, MODEL_SUBDIR};

/// The environment variable naming RR's model directory (authoritative when set, like
/// `OPENNGX_MODEL_DIR` for DLSS-NR's).
pub const MODEL_DIR_ENV: &str = "OPENNGX_RR_MODEL_DIR";

/// The feature id.
pub const FEATURE: NVSDK_NGX_Feature = NVSDK_NGX_Feature_RayReconstruction;

/// Capability and callback keys (the ABI's own; the parameters are `crate::rr::keys`).
pub mod keys {
    use std::ffi::CStr;
    /// Capability: 1 when a backend is registered (int).
    pub const AVAILABLE: &CStr = c"SuperSamplingDenoising.Available";
    /// Capability: 0 (int).
    pub const NEEDS_UPDATED_DRIVER: &CStr = c"SuperSamplingDenoising.NeedsUpdatedDriver";
    /// Capability: 0 (uint).
    pub const MIN_DRIVER_MAJOR: &CStr = c"SuperSamplingDenoising.MinDriverVersionMajor";
    /// Capability: 0 (uint).
    pub const MIN_DRIVER_MINOR: &CStr = c"SuperSamplingDenoising.MinDriverVersionMinor";
    /// Capability: Success, or FAIL_NotImplemented without a backend (int).
    pub const FEATURE_INIT_RESULT: &CStr = c"SuperSamplingDenoising.FeatureInitResult";
    /// Capability: `PFN_NVSDK_NGX_DLSS_GetOptimalSettingsCallback` (void*).
    pub const OPTIMAL_SETTINGS_CALLBACK: &CStr = c"DLSSDOptimalSettingsCallback";
    /// Capability: `PFN_NVSDK_NGX_DLSS_GetStatsCallback` (void*).
    pub const GET_STATS_CALLBACK: &CStr = c"DLSSDGetStatsCallback";
    /// Optimal settings: the display size in (uint).
    pub const WIDTH: &CStr = c"Width";
    /// Optimal settings: the display size in (uint).
    pub const HEIGHT: &CStr = c"Height";
    /// Optimal settings: the quality mode in (int).
    pub const PERF_QUALITY_VALUE: &CStr = c"PerfQualityValue";
    /// Optimal settings: the render size out (uint).
    pub const OUT_WIDTH: &CStr = c"OutWidth";
    /// Optimal settings: the render size out (uint).
    pub const OUT_HEIGHT: &CStr = c"OutHeight";
    /// Optimal settings: dynamic-resolution bounds out (uint; the inclusive bounds of
    /// `DLSS.Render.Subrect.Dimensions` for a feature created at the optimal size).
    pub const DYNAMIC_MAX_WIDTH: &CStr = c"DLSS.Get.Dynamic.Max.Render.Width";
    /// See [`DYNAMIC_MAX_WIDTH`].
    pub const DYNAMIC_MAX_HEIGHT: &CStr = c"DLSS.Get.Dynamic.Max.Render.Height";
    /// See [`DYNAMIC_MAX_WIDTH`].
    pub const DYNAMIC_MIN_WIDTH: &CStr = c"DLSS.Get.Dynamic.Min.Render.Width";
    /// See [`DYNAMIC_MAX_WIDTH`].
    pub const DYNAMIC_MIN_HEIGHT: &CStr = c"DLSS.Get.Dynamic.Min.Render.Height";
    /// Optimal settings: sharpness out (float, 0: RR does not sharpen).
    pub const SHARPNESS: &CStr = c"Sharpness";
    pub use crate::ngx::param_read::shared_keys::*;
}

/// The formats each image accepts: what a backend must be able to read (every channel the
/// network takes is read as a float; UNORM/SNORM/SRGB and packed formats as their value).
pub mod roles {
    use super::{vk, Role};
    /// Colour: linear HDR or 0..1 colour, RGB (+A).
    pub const COLOR: Role = Role::Input(&[
        vk::Format::R16G16B16A16_SFLOAT,
        vk::Format::R32G32B32A32_SFLOAT,
        vk::Format::B10G11R11_UFLOAT_PACK32,
        vk::Format::A2B10G10R10_UNORM_PACK32,
        vk::Format::R8G8B8A8_UNORM,
        vk::Format::R8G8B8A8_SRGB,
        vk::Format::B8G8R8A8_UNORM,
        vk::Format::B8G8R8A8_SRGB,
    ]);
    /// Albedos: three channels (the colour formats).
    pub const ALBEDO: Role = COLOR;
    /// Normals: three (or four, roughness packed into w) signed channels.
    pub const NORMALS: Role = Role::Input(&[
        vk::Format::R16G16B16A16_SFLOAT,
        vk::Format::R32G32B32A32_SFLOAT,
        vk::Format::A2B10G10R10_UNORM_PACK32,
        vk::Format::R8G8B8A8_SNORM,
        vk::Format::R16G16B16A16_SNORM,
        vk::Format::R8G8B8A8_UNORM,
    ]);
    /// One channel read (roughness, hit distances, the depth-of-field guide, the exposure
    /// texture): single-channel formats, or the first channel of two- and four-channel ones.
    pub const SCALAR: Role = Role::Input(&[
        vk::Format::R16_SFLOAT,
        vk::Format::R32_SFLOAT,
        vk::Format::R8_UNORM,
        vk::Format::R16_UNORM,
        vk::Format::R16G16_SFLOAT,
        vk::Format::R32G32_SFLOAT,
        vk::Format::R16G16B16A16_SFLOAT,
        vk::Format::R32G32B32A32_SFLOAT,
    ]);
    /// Depth: a depth format (its depth aspect) or one float/unorm channel.
    pub const DEPTH: Role = Role::Input(&[
        vk::Format::D32_SFLOAT,
        vk::Format::D32_SFLOAT_S8_UINT,
        vk::Format::D24_UNORM_S8_UINT,
        vk::Format::X8_D24_UNORM_PACK32,
        vk::Format::D16_UNORM,
        vk::Format::R32_SFLOAT,
        vk::Format::R16_SFLOAT,
        vk::Format::R16_UNORM,
    ]);
    /// Motion vectors: the first two channels, render pixels.
    pub const MOTION: Role = Role::Input(&[
        vk::Format::R16G16_SFLOAT,
        vk::Format::R32G32_SFLOAT,
        vk::Format::R16G16B16A16_SFLOAT,
        vk::Format::R32G32B32A32_SFLOAT,
    ]);
    /// `Output` (storage-image capable formats).
    pub const OUTPUT: Role = Role::Output(&[
        vk::Format::R16G16B16A16_SFLOAT,
        vk::Format::R32G32B32A32_SFLOAT,
    ]);
}

/// The role (formats) of a guide.
pub fn role(g: Guide) -> Role {
    match g {
        Guide::Color => roles::COLOR,
        Guide::DiffuseAlbedo | Guide::SpecularAlbedo => roles::ALBEDO,
        Guide::Normals => roles::NORMALS,
        Guide::Depth => roles::DEPTH,
        Guide::MotionVectors => roles::MOTION,
        Guide::Roughness
        | Guide::DiffuseHitDistance
        | Guide::SpecularHitDistance
        | Guide::DepthOfField
        | Guide::Exposure => roles::SCALAR,
    }
}

/// The description of feature 13 in the feature table. It remembers the last set of ignored
/// inputs it logged, so a game that sets the same unused guides every frame gets one log line,
/// not one per frame.
#[derive(Default)]
pub struct DlssD {
    last_ignored: Mutex<Vec<&'static str>>,
}

impl DlssD {
    /// A description with nothing logged yet.
    pub fn new() -> DlssD {
        DlssD::default()
    }
}

impl Description for DlssD {
    type Create = RrCreate;
    type Eval = RrInputs;

    fn id(&self) -> NVSDK_NGX_Feature {
        FEATURE
    }

    fn label(&self) -> &'static str {
        "DLSS-RR"
    }

    fn model_subdir(&self) -> Option<&'static str> {
        Some(MODEL_SUBDIR)
    }

    fn model_env(&self) -> &'static str {
        MODEL_DIR_ENV
    }

    fn check_model(&self, dir: &Path) -> Result<(), String> {
        RrModel::check_files(dir).map_err(|e| e.to_string())
    }

    fn capabilities(&self, o: &ParamObject, available: bool) {
        populate_capabilities(o, available);
    }

    fn parse_create(&self, p: &ParamRef) -> Result<RrCreate, FeatureError> {
        parse_create(p)
    }

    fn parse_eval(&self, p: &ParamRef, created: &RrCreate) -> Result<RrInputs, FeatureError> {
        let inputs = parse_eval(p, created)?;
        let mut last = self.last_ignored.lock();
        if inputs.ignored() != last.as_slice() {
            if !inputs.ignored().is_empty() {
                log::info(
                    FEATURE,
                    &format!(
                        "DLSS-RR: ignoring inputs this implementation does not read: {}",
                        inputs.ignored().join(", ")
                    ),
                );
            }
            *last = inputs.ignored().to_vec();
        }
        Ok(inputs)
    }

    fn summary(&self, c: &RrCreate) -> String {
        format!(
            "{} -> {} preset {} flags {:#x}",
            c.render(),
            c.output(),
            c.preset().name(),
            c.flags().0
        )
    }
}

// ---------------------------------------------------------------------------------------------
// Capabilities

/// Writes the RR capability keys; `available` says whether a backend is installed. Never
/// touches a device.
fn populate_capabilities(o: &ParamObject, available: bool) {
    o.set(keys::AVAILABLE.to_bytes(), Value::I(i32::from(available)));
    o.set(keys::NEEDS_UPDATED_DRIVER.to_bytes(), Value::I(0));
    o.set(keys::MIN_DRIVER_MAJOR.to_bytes(), Value::Ui(0));
    o.set(keys::MIN_DRIVER_MINOR.to_bytes(), Value::Ui(0));
    let init = if available {
        NVSDK_NGX_Result_Success
    } else {
        NVSDK_NGX_Result_FAIL_NotImplemented
    };
    o.set(keys::FEATURE_INIT_RESULT.to_bytes(), Value::I(init as i32));
    let [optimal, stats] = callback_addresses();
    o.set(
        keys::OPTIMAL_SETTINGS_CALLBACK.to_bytes(),
        Value::Vp(optimal as usize),
    );
    o.set(
        keys::GET_STATS_CALLBACK.to_bytes(),
        Value::Vp(stats as usize),
    );
}

/// The addresses stored under `DLSSDOptimalSettingsCallback` and `DLSSDGetStatsCallback`.
pub fn callback_addresses() -> [*mut c_void; 2] {
    type Cb = unsafe extern "C" fn(*mut NVSDK_NGX_Parameter) -> NVSDK_NGX_Result;
    let optimal: Cb = optimal_settings_callback;
    let stats: Cb = get_stats_callback;
    [optimal as *mut c_void, stats as *mut c_void]
}

/// `DLSSDGetStatsCallback`: writes `SizeInBytes` (ull, device memory of every RR feature),
/// `#\x44` = 40 and `#\x45` = 0 (uint).
///
/// # Safety
/// `params` must be NULL or a live parameter object.
pub unsafe extern "C" fn get_stats_callback(params: *mut NVSDK_NGX_Parameter) -> NVSDK_NGX_Result {
    guard("DLSSDGetStatsCallback", || {
        // SAFETY: caller contract.
        let Some(p) = (unsafe { ParamRef::new(params) }) else {
            return NVSDK_NGX_Result_FAIL_InvalidParameter;
        };
        let bytes = registry::lookup(FEATURE).map_or(0, |f| f.memory_in_use());
        write_stats(&p, bytes);
        NVSDK_NGX_Result_Success
    })
}

/// Render size per display size of a quality mode, as the exact fraction `num / den` per axis
/// (ngx-abi.md §8.1: Performance 1/2, Balanced 0.58, Quality 2/3, UltraPerformance 1/3, DLAA 1;
/// UltraQuality is no RR mode). `None`: the mode is unavailable.
fn render_fraction(quality: i32) -> Option<(u64, u64)> {
    match quality {
        0 => Some((1, 2)),
        1 => Some((29, 50)),
        2 => Some((2, 3)),
        3 => Some((1, 3)),
        5 => Some((1, 1)),
        _ => None,
    }
}

/// The optimal render size for a display size and quality mode (rounded to nearest, ties up);
/// `(0, 0)` when the mode is unavailable or the size would fall below RR's smallest render size.
pub fn optimal_render_size(display: Size, quality: i32) -> Size {
    let Some((num, den)) = render_fraction(quality) else {
        return Size::new(0, 0);
    };
    let axis = |d: u32| ((u64::from(d) * num * 2 + den) / (2 * den)) as u32;
    let r = Size::new(axis(display.w), axis(display.h));
    if r.w < MIN_RENDER || r.h < MIN_RENDER {
        Size::new(0, 0)
    } else {
        r
    }
}

/// `DLSSDOptimalSettingsCallback` (the `NGX_DLSSD_GET_OPTIMAL_SETTINGS` helper's, ngx-abi.md
/// §7.2): reads `Width`, `Height` (the display size, uint) and `PerfQualityValue` (int, 0..=5),
/// writes `OutWidth`, `OutHeight` (the render size; 0x0 for a mode RR does not offer), the
/// dynamic-resolution bounds (max: the optimal size, the size to create the feature at; min:
/// `params::dynamic_min` of it, half per axis but at least 32) and `Sharpness` = 0.
///
/// # Safety
/// `params` must be NULL or a live parameter object.
pub unsafe extern "C" fn optimal_settings_callback(
    params: *mut NVSDK_NGX_Parameter,
) -> NVSDK_NGX_Result {
    guard("DLSSDOptimalSettingsCallback", || {
        // SAFETY: caller contract.
        let Some(p) = (unsafe { ParamRef::new(params) }) else {
            return NVSDK_NGX_Result_FAIL_InvalidParameter;
        };
        let (Ok(w), Ok(h), Ok(q)) = (
            p.get_ui(keys::WIDTH),
            p.get_ui(keys::HEIGHT),
            p.get_i(keys::PERF_QUALITY_VALUE),
        ) else {
            return NVSDK_NGX_Result_FAIL_InvalidParameter;
        };
        if !(0..=5).contains(&q) {
            return NVSDK_NGX_Result_FAIL_InvalidParameter;
        }
        let r = optimal_render_size(Size::new(w, h), q);
        // A feature created at the optimal size accepts frames down to `dynamic_min` of it
        // (0x0 stays 0x0: the mode is unavailable).
        let min = if r.w == 0 { r } else { dynamic_min(r) };
        for (key, v) in [
            (keys::OUT_WIDTH, r.w),
            (keys::OUT_HEIGHT, r.h),
            (keys::DYNAMIC_MAX_WIDTH, r.w),
            (keys::DYNAMIC_MAX_HEIGHT, r.h),
            (keys::DYNAMIC_MIN_WIDTH, min.w),
            (keys::DYNAMIC_MIN_HEIGHT, min.h),
        ] {
            p.set_ui(key, v);
        }
        p.set_f(keys::SHARPNESS, 0.0);
        NVSDK_NGX_Result_Success
    })
}

// ---------------------------------------------------------------------------------------------
// Creation

/// Bit 31 on a preset hint marks a default NVIDIA's static library wrote (ngx-abi.md §3.5).
const SDK_DEFAULT_TAG: u32 = 0x8000_0000;

/// The preset of the quality mode's hint key `RayReconstruction.Hint.Render.Preset.<mode>`:
/// absent, 0 (Default) or a bit-31-tagged value is openngx's default, E (d4r's default,
/// rr-network.md §10); 4 = D, 5 = E; anything else is `FAIL_UnsupportedParameter` naming the key.
fn preset(p: &ParamRef, quality: Option<i32>) -> Result<Preset, FeatureError> {
    // Without a quality mode the DLAA key is the one that applies (no scaling chosen).
    let mode = quality
        .and_then(|q| usize::try_from(q).ok())
        .and_then(|q| k::PRESET_MODES.get(q))
        .copied()
        .unwrap_or("DLAA");
    let name = format!("{}{mode}", k::PRESET_PREFIX);
    match opt_ui(p, &name) {
        None | Some(0) => Ok(Preset::default()),
        Some(v) if v & SDK_DEFAULT_TAG != 0 => Ok(Preset::default()),
        Some(v) => Preset::from_hint(v).ok_or_else(|| {
            unsupported(
                &name,
                format!("{v}: only presets D (4) and E (5) are implemented"),
            )
        }),
    }
}

/// Reads the creation parameters of feature 13 (the keys `NGX_VULKAN_CREATE_DLSSD_EXT1` sets,
/// §7.5) into [`RrCreate`], which checks the values. The ABI's own rule is checked here: no
/// custom resource allocator may be installed.
pub fn parse_create(p: &ParamRef) -> Result<RrCreate, FeatureError> {
    let dim = |name: &str| {
        opt_ui(p, name).ok_or_else(|| FeatureError::InvalidParameter {
            key: name.to_owned(),
            reason: "required (SetUI) but missing or not numeric".into(),
        })
    };
    let render = Size::new(dim(k::WIDTH)?, dim(k::HEIGHT)?);
    let output = Size::new(dim(k::OUT_WIDTH)?, dim(k::OUT_HEIGHT)?);
    refuse_custom_allocators(p)?;
    let quality = opt_i(p, k::PERF_QUALITY_VALUE);
    let flags = CreateFlags(opt_i(p, k::CREATE_FLAGS).unwrap_or(0) as u32);
    RrCreate::new(
        render,
        output,
        quality,
        preset(p, quality)?,
        flags,
        opt_i(p, k::ENABLE_OUTPUT_SUBRECTS).is_some_and(|v| v != 0),
        opt_i(p, k::DENOISE_MODE).unwrap_or(1),
        opt_ui(p, k::ROUGHNESS_MODE).unwrap_or(0),
        opt_ui(p, k::USE_HW_DEPTH).unwrap_or(0),
        [
            opt_ui(p, k::CREATION_NODE_MASK).unwrap_or(1),
            opt_ui(p, k::VISIBILITY_NODE_MASK).unwrap_or(1),
        ],
    )
}

// ---------------------------------------------------------------------------------------------
// Evaluation

/// A sub-rectangle base `<prefix>.X`, `<prefix>.Y` (absent: 0).
fn base(p: &ParamRef, prefix: &str) -> (u32, u32) {
    (
        opt_ui(p, &format!("{prefix}.X")).unwrap_or(0),
        opt_ui(p, &format!("{prefix}.Y")).unwrap_or(0),
    )
}

/// The image under `name` checked for `role` over `rect`; `Ok(None)` when absent or NULL.
fn image_at(
    p: &ParamRef,
    name: &str,
    role: Role,
    rect: Rect,
) -> Result<Option<ImageInput>, FeatureError> {
    match read_resource(p, &key(name))? {
        Some(res) => check_image(name, role, &res, rect).map(Some),
        None => Ok(None),
    }
}

/// A guide's image: its own key, else its alias (§12.1).
fn guide_image(p: &ParamRef, g: Guide, render: Size) -> Result<Option<ImageInput>, FeatureError> {
    let rect = g.rect(render, g.subrect_key().map_or((0, 0), |s| base(p, s)));
    if let Some(img) = image_at(p, g.key(), role(g), rect)? {
        return Ok(Some(img));
    }
    match g.alias() {
        Some(alias) => image_at(p, alias, role(g), rect),
        None => Ok(None),
    }
}

/// A `float[16]` matrix stored with SetVoidPointer, copied; `None` when absent or NULL.
fn matrix(p: &ParamRef, name: &str) -> Option<[f32; 16]> {
    let ptr = p.get_vp(&key(name)).ok().filter(|v| !v.is_null())?;
    // SAFETY: the NGX contract for these keys (§7.6): a `float*` to 16 floats valid during the
    // call; copied at once, unaligned (the caller owns the alignment).
    Some(unsafe { (ptr as *const [f32; 16]).read_unaligned() })
}

/// Reads the evaluation parameters of a feature created with `created` (the keys
/// `NGX_VULKAN_EVALUATE_DLSSD_EXT` sets, §7.6) into [`RrInputs`], which checks them. Every
/// resource is read as an `NVSDK_NGX_Resource_VK`; the exposure texture is not read with
/// `AutoExposure`. Inputs the network does not read are collected by name.
pub fn parse_eval(p: &ParamRef, created: &RrCreate) -> Result<RrInputs, FeatureError> {
    // The frame's render size first (dynamic resolution): every guide's region is that size.
    let render_subrect = match (
        opt_ui(p, &format!("{}.Width", k::RENDER_SUBRECT_DIMENSIONS)),
        opt_ui(p, &format!("{}.Height", k::RENDER_SUBRECT_DIMENSIONS)),
    ) {
        // The helper writes 0x0 when the application gives no render sub-rectangle.
        (Some(0), Some(0)) | (None, None) => None,
        (w, h) => Some((
            w.unwrap_or(created.render().w),
            h.unwrap_or(created.render().h),
        )),
    };
    let render = created.frame_render(render_subrect)?;
    let mut images: [Option<ImageInput>; Guide::ALL.len()] = Default::default();
    for (slot, g) in images.iter_mut().zip(Guide::ALL) {
        if g == Guide::Exposure && created.flags().auto_exposure() {
            continue;
        }
        *slot = guide_image(p, g, render)?;
    }
    let out = created.output();
    let out_rect = Rect {
        x: 0,
        y: 0,
        width: out.w,
        height: out.h,
    };
    let out_rect = if created.output_subrects() {
        let (x, y) = base(p, k::OUTPUT_SUBRECT);
        Rect { x, y, ..out_rect }
    } else {
        out_rect
    };
    let output = image_at(p, k::OUTPUT, roles::OUTPUT, out_rect)?.ok_or_else(|| {
        FeatureError::MissingInput {
            key: k::OUTPUT.to_owned(),
        }
    })?;
    let ignored: Vec<&'static str> = k::IGNORED_RESOURCES
        .iter()
        .copied()
        .filter(|name| present_pointer(p, name))
        .collect();
    let d = RrFrame::default();
    let f = |name: &str, default: f32| opt_f(p, name).unwrap_or(default);
    let flag = |name: &str| opt_i(p, name).is_some_and(|v| v != 0);
    let frame = RrFrame {
        jitter: [f(k::JITTER_X, d.jitter[0]), f(k::JITTER_Y, d.jitter[1])],
        mv_scale: [
            f(k::MV_SCALE_X, d.mv_scale[0]),
            f(k::MV_SCALE_Y, d.mv_scale[1]),
        ],
        reset: flag(k::RESET),
        pre_exposure: f(k::PRE_EXPOSURE, d.pre_exposure),
        exposure_scale: f(k::EXPOSURE_SCALE, d.exposure_scale),
        frame_time_ms: f(k::FRAME_TIME_DELTA, d.frame_time_ms),
        indicator_invert: [flag(k::INDICATOR_INVERT_X), flag(k::INDICATOR_INVERT_Y)],
        tonemapper: opt_ui(p, k::TONEMAPPER_TYPE),
        world_to_view: matrix(p, k::WORLD_TO_VIEW_MATRIX),
        view_to_clip: matrix(p, k::VIEW_TO_CLIP_MATRIX),
    };
    RrInputs::new(created, images, output, render_subrect, frame, ignored)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ngx::params::Method;
    use crate::ngx::result::ResultCode;
    use ash::vk::Handle;

    fn obj() -> Box<ParamObject> {
        ParamObject::new(None)
    }
    fn pref(o: &ParamObject) -> ParamRef {
        // SAFETY: a live object of ours.
        unsafe { ParamRef::new(o.as_c()) }.expect("non-null")
    }

    fn set_create(p: &ParamRef) {
        p.set_ui(&key(k::WIDTH), 64);
        p.set_ui(&key(k::HEIGHT), 48);
        p.set_ui(&key(k::OUT_WIDTH), 96);
        p.set_ui(&key(k::OUT_HEIGHT), 72);
        p.set_i(&key(k::PERF_QUALITY_VALUE), 2);
        p.set_i(&key(k::CREATE_FLAGS), CreateFlags::MV_LOW_RES as i32);
        p.set_i(&key(k::DENOISE_MODE), 1);
    }

    #[test]
    fn create_reads_sizes_preset_and_modes() {
        let o = obj();
        let p = pref(&o);
        let e = parse_create(&p).expect_err("empty");
        assert_eq!(e.code(), NVSDK_NGX_Result_FAIL_InvalidParameter);
        assert!(e.to_string().contains("Width"), "{e}");
        set_create(&p);
        let c = parse_create(&p).expect("valid");
        assert_eq!(
            (c.render(), c.output(), c.preset()),
            (Size::new(64, 48), Size::new(96, 72), Preset::E)
        );
        // The quality mode's preset key (Quality = 2) applies, not another mode's.
        p.set_ui(c"RayReconstruction.Hint.Render.Preset.DLAA", 4);
        assert_eq!(parse_create(&p).map(|c| c.preset()).ok(), Some(Preset::E));
        p.set_ui(c"RayReconstruction.Hint.Render.Preset.Quality", 4);
        assert_eq!(parse_create(&p).map(|c| c.preset()).ok(), Some(Preset::D));
        p.set_ui(c"RayReconstruction.Hint.Render.Preset.Quality", 0x8000_0004);
        assert_eq!(parse_create(&p).map(|c| c.preset()).ok(), Some(Preset::E));
        p.set_ui(c"RayReconstruction.Hint.Render.Preset.Quality", 3);
        let e = parse_create(&p).expect_err("preset C");
        assert_eq!(e.code(), NVSDK_NGX_Result_FAIL_UnsupportedParameter);
        assert!(e.to_string().contains("Preset.Quality"), "{e}");
        p.set_ui(c"RayReconstruction.Hint.Render.Preset.Quality", 5);
        p.set_ui(&key(k::ROUGHNESS_MODE), 1);
        p.set_ui(&key(k::USE_HW_DEPTH), 1);
        p.set_i(&key(k::ENABLE_OUTPUT_SUBRECTS), 1);
        let c = parse_create(&p).expect("valid");
        assert_eq!(
            (c.roughness_mode(), c.depth_type(), c.output_subrects()),
            (
                crate::rr::feature::RoughnessMode::Packed,
                crate::rr::feature::DepthType::Hardware,
                true
            )
        );
        p.set_i(&key(k::CREATE_FLAGS), 0);
        assert_eq!(
            parse_create(&p).map_err(|e| e.code()).err(),
            Some(NVSDK_NGX_Result_FAIL_UnsupportedParameter)
        );
        p.set_i(&key(k::CREATE_FLAGS), CreateFlags::MV_LOW_RES as i32);
        p.set_ptr(
            Method::SetVp,
            &key(keys::RESOURCE_ALLOC_CALLBACK),
            8usize as *mut c_void,
        );
        assert_eq!(
            parse_create(&p).map_err(|e| e.code()).err(),
            Some(NVSDK_NGX_Result_FAIL_UnsupportedParameter)
        );
    }

    fn resource(
        id: u64,
        format: vk::Format,
        w: u32,
        h: u32,
        rw: bool,
    ) -> Box<NVSDK_NGX_Resource_VK> {
        Box::new(NVSDK_NGX_Resource_VK {
            Resource: NVSDK_NGX_Resource_VK_Resource {
                ImageViewInfo: NVSDK_NGX_ImageViewInfo_VK {
                    ImageView: vk::ImageView::from_raw(id + 100),
                    Image: vk::Image::from_raw(id),
                    SubresourceRange: vk::ImageSubresourceRange::default(),
                    Format: format,
                    Width: w,
                    Height: h,
                },
            },
            Type: NVSDK_NGX_RESOURCE_VK_TYPE_VK_IMAGEVIEW,
            ReadWrite: rw,
        })
    }

    #[test]
    fn evaluate_reads_every_guide_and_names_what_is_missing() {
        let o = obj();
        let p = pref(&o);
        set_create(&p);
        let c = parse_create(&p).expect("valid");
        let vp = |r: &NVSDK_NGX_Resource_VK| r as *const _ as *mut c_void;
        let f16 = vk::Format::R16G16B16A16_SFLOAT;
        let color = resource(1, f16, 64, 48, false);
        let depth = resource(2, vk::Format::D32_SFLOAT, 64, 48, false);
        let mv = resource(3, vk::Format::R16G16_SFLOAT, 64, 48, false);
        let diff = resource(4, f16, 64, 48, false);
        let spec = resource(5, f16, 64, 48, false);
        let nrm = resource(6, f16, 64, 48, false);
        let rough = resource(7, vk::Format::R16_SFLOAT, 64, 48, false);
        let out = resource(8, f16, 96, 72, true);
        let all: [(&str, &NVSDK_NGX_Resource_VK); 8] = [
            (k::COLOR, &*color),
            (k::DEPTH, &*depth),
            (k::MOTION_VECTORS, &*mv),
            (k::DIFFUSE_ALBEDO, &*diff),
            (k::SPECULAR_ALBEDO_ALIAS, &*spec),
            (k::NORMALS, &*nrm),
            (k::ROUGHNESS, &*rough),
            (k::OUTPUT, &*out),
        ];
        for (i, (name, _)) in all.iter().enumerate() {
            // Everything but `name`: the frame is refused with FAIL_MissingInput naming it.
            let o = obj();
            let q = pref(&o);
            for (j, (other, r)) in all.iter().enumerate() {
                if i != j {
                    q.set_ptr(Method::SetVp, &key(other), vp(r));
                }
            }
            let e = parse_eval(&q, &c).expect_err("missing");
            assert_eq!(e.code(), NVSDK_NGX_Result_FAIL_MissingInput, "{name}");
            let want = if *name == k::SPECULAR_ALBEDO_ALIAS {
                k::SPECULAR_ALBEDO
            } else {
                *name
            };
            assert!(e.to_string().contains(want), "{e}");
        }
        for (name, r) in all {
            p.set_ptr(Method::SetVp, &key(name), vp(r));
        }
        // NULL values of optional guides (what the helper writes for absent ones) are absent.
        p.set_ptr(
            Method::SetVp,
            &key(k::DIFFUSE_HIT_DISTANCE),
            std::ptr::null_mut(),
        );
        p.set_ptr(
            Method::SetVp,
            c"DLSSD.ReflectedAlbedo",
            std::ptr::null_mut(),
        );
        let world = [1.0f32; 16];
        p.set_ptr(
            Method::SetVp,
            &key(k::WORLD_TO_VIEW_MATRIX),
            world.as_ptr() as *mut c_void,
        );
        p.set_f(&key(k::JITTER_X), 0.25);
        p.set_f(&key(k::MV_SCALE_X), 0.0);
        p.set_i(&key(k::RESET), 1);
        p.set_ui(c"DLSS.Render.Subrect.Dimensions.Width", 0);
        p.set_ui(c"DLSS.Render.Subrect.Dimensions.Height", 0);
        let e = parse_eval(&p, &c).expect("valid");
        assert_eq!(
            e.get(Guide::SpecularAlbedo).map(|i| i.image.as_raw()),
            Some(5)
        );
        assert_eq!(
            e.get(Guide::Depth).map(|i| i.format),
            Some(vk::Format::D32_SFLOAT)
        );
        assert!(e.get(Guide::DiffuseHitDistance).is_none());
        assert!(e.ignored().is_empty());
        assert_eq!(
            (
                e.frame().jitter,
                e.frame().mv_scale,
                e.frame().reset,
                e.frame().world_to_view
            ),
            ([0.25, 0.0], [1.0, 1.0], true, Some(world))
        );
        assert_eq!(
            e.output().rect,
            Rect {
                x: 0,
                y: 0,
                width: 96,
                height: 72
            }
        );
        // A given but unused guide is named, not refused.
        p.set_ptr(Method::SetVp, c"DLSSD.ReflectedAlbedo", vp(&diff));
        assert_eq!(
            parse_eval(&p, &c).expect("valid").ignored(),
            ["DLSSD.ReflectedAlbedo"]
        );
        // Subrect bases move the region; beyond the image it is refused.
        p.set_ui(c"DLSS.Input.Color.Subrect.Base.X", 1);
        assert_eq!(
            parse_eval(&p, &c).map_err(|e| e.code()).err(),
            Some(NVSDK_NGX_Result_FAIL_InvalidParameter)
        );
        p.set_ui(c"DLSS.Input.Color.Subrect.Base.X", 0);
        // Formats, read-write, resource type.
        let bad = resource(9, vk::Format::R8_UNORM, 64, 48, false);
        p.set_ptr(Method::SetVp, &key(k::MOTION_VECTORS), vp(&bad));
        assert_eq!(
            parse_eval(&p, &c).map_err(|e| e.code()).err(),
            Some(NVSDK_NGX_Result_FAIL_UnsupportedInputFormat)
        );
        p.set_ptr(Method::SetVp, &key(k::MOTION_VECTORS), vp(&mv));
        let ro = resource(8, f16, 96, 72, false);
        p.set_ptr(Method::SetVp, &key(k::OUTPUT), vp(&ro));
        assert_eq!(
            parse_eval(&p, &c).map_err(|e| e.code()).err(),
            Some(NVSDK_NGX_Result_FAIL_RWFlagMissing)
        );
        let mut buf = resource(8, f16, 96, 72, true);
        buf.Type = NVSDK_NGX_RESOURCE_VK_TYPE_VK_BUFFER;
        p.set_ptr(Method::SetVp, &key(k::OUTPUT), vp(&buf));
        assert_eq!(
            parse_eval(&p, &c).map_err(|e| e.code()).err(),
            Some(NVSDK_NGX_Result_FAIL_InvalidParameter)
        );
        p.set_ptr(Method::SetVp, &key(k::OUTPUT), vp(&out));
        // Dynamic resolution: a render sub-rectangle below the bounds (32x32 ..= 64x48) is
        // refused naming the key; one inside them is the frame's render size.
        p.set_ui(c"DLSS.Render.Subrect.Dimensions.Width", 32);
        p.set_ui(c"DLSS.Render.Subrect.Dimensions.Height", 31);
        match parse_eval(&p, &c) {
            Err(FeatureError::InvalidParameter { key, .. }) => {
                assert_eq!(key, k::RENDER_SUBRECT_DIMENSIONS)
            }
            other => panic!("{other:?}"),
        }
        p.set_ui(c"DLSS.Render.Subrect.Dimensions.Height", 32);
        assert_eq!(
            parse_eval(&p, &c).map(|i| i.render()).ok(),
            Some(Size::new(32, 32))
        );
    }

    #[test]
    fn the_typed_flags_are_the_abis() {
        let pairs = [
            (CreateFlags::IS_HDR, NVSDK_NGX_DLSS_Feature_Flags_IsHDR),
            (
                CreateFlags::MV_LOW_RES,
                NVSDK_NGX_DLSS_Feature_Flags_MVLowRes,
            ),
            (
                CreateFlags::MV_JITTERED,
                NVSDK_NGX_DLSS_Feature_Flags_MVJittered,
            ),
            (
                CreateFlags::DEPTH_INVERTED,
                NVSDK_NGX_DLSS_Feature_Flags_DepthInverted,
            ),
            (
                CreateFlags::DO_SHARPENING,
                NVSDK_NGX_DLSS_Feature_Flags_DoSharpening,
            ),
            (
                CreateFlags::AUTO_EXPOSURE,
                NVSDK_NGX_DLSS_Feature_Flags_AutoExposure,
            ),
            (
                CreateFlags::ALPHA_UPSCALING,
                NVSDK_NGX_DLSS_Feature_Flags_AlphaUpscaling,
            ),
        ];
        for (typed, abi) in pairs {
            assert_eq!(typed, abi as u32);
        }
        assert_eq!(
            Preset::from_hint(NVSDK_NGX_RayReconstruction_Hint_Render_Preset_D),
            Some(Preset::D)
        );
        assert_eq!(
            Preset::from_hint(NVSDK_NGX_RayReconstruction_Hint_Render_Preset_E),
            Some(Preset::E)
        );
    }

    #[test]
    fn optimal_settings_follow_the_quality_table() {
        let s = |w, h, q| optimal_render_size(Size::new(w, h), q);
        assert_eq!(s(3840, 2160, 0), Size::new(1920, 1080));
        assert_eq!(s(3840, 2160, 1), Size::new(2227, 1253));
        assert_eq!(s(3840, 2160, 2), Size::new(2560, 1440));
        assert_eq!(s(3840, 2160, 3), Size::new(1280, 720));
        assert_eq!(s(3840, 2160, 4), Size::new(0, 0));
        assert_eq!(s(3840, 2160, 5), Size::new(3840, 2160));
        assert_eq!(s(64, 32, 3), Size::new(0, 0));
        let o = obj();
        let p = pref(&o);
        assert_eq!(
            // SAFETY: `o` is a live parameter object of ours.
            unsafe { optimal_settings_callback(o.as_c()) },
            NVSDK_NGX_Result_FAIL_InvalidParameter
        );
        p.set_ui(keys::WIDTH, 3840);
        p.set_ui(keys::HEIGHT, 2160);
        p.set_i(keys::PERF_QUALITY_VALUE, 3);
        assert_eq!(
            // SAFETY: as above.
            unsafe { optimal_settings_callback(o.as_c()) },
            NVSDK_NGX_Result_Success
        );
        assert_eq!(
            (p.get_ui(keys::OUT_WIDTH), p.get_ui(keys::OUT_HEIGHT)),
            (Ok(1280), Ok(720))
        );
        // Dynamic resolution: max the optimal size, min half of it per axis.
        assert_eq!(
            [
                keys::DYNAMIC_MAX_WIDTH,
                keys::DYNAMIC_MAX_HEIGHT,
                keys::DYNAMIC_MIN_WIDTH,
                keys::DYNAMIC_MIN_HEIGHT
            ]
            .map(|k| p.get_ui(k)),
            [Ok(1280), Ok(720), Ok(640), Ok(360)]
        );
        p.set_i(keys::PERF_QUALITY_VALUE, 6);
        assert_eq!(
            // SAFETY: as above.
            unsafe { optimal_settings_callback(o.as_c()) },
            NVSDK_NGX_Result_FAIL_InvalidParameter
        );
        assert_eq!(
            // SAFETY: as above.
            unsafe { get_stats_callback(o.as_c()) },
            NVSDK_NGX_Result_Success
        );
        assert_eq!(o.raw(b"#\x44"), Some(Value::Ui(40)));
        assert_eq!(
            // SAFETY: NULL is allowed by the contract and refused.
            unsafe { get_stats_callback(std::ptr::null_mut()) },
            NVSDK_NGX_Result_FAIL_InvalidParameter
        );
    }
}
