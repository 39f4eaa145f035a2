//! Feature 18 (DLSS-NR) at the ABI: parameter names, the capability map and its two callbacks,
//! and the validation that turns a caller's parameter object into [`CreateParams`] /
//! [`EvalInputs`] (nr-network.md §5, ngx-abi.md §8.5). Every refusal is a typed
//! [`FeatureError`] naming the parameter; nothing here touches Vulkan.
//!
//! Parameters are read through [`ParamRef`] (the object's own vtable). Any failed Get counts as
//! "absent": foreign maps disagree on the code they return for a missing key.

use std::ffi::CStr;
use std::os::raw::c_void;

use super::abi::*;
use super::backend::{backend_for, CreateParams, EvalInputs, FeatureError, Rect};
use super::guard::guard;
use super::params::{ParamObject, ParamRef, Value};
use super::resource::{check_image, read_resource, Role};

/// The feature id.
pub const FEATURE: NVSDK_NGX_Feature = NVSDK_NGX_Feature_Reserved18;

/// Smallest accepted width/height.
pub const MIN_SIZE: u32 = 64;
/// Largest accepted width/height.
pub const MAX_SIZE: u32 = 8192;
/// Largest accepted width*height.
pub const MAX_AREA: u64 = 16_777_216;

/// Parameter names.
pub mod keys {
    use std::ffi::CStr;
    /// Capability: 1 when a backend is registered (int).
    pub const AVAILABLE: &CStr = c"DLSSNR.Available";
    /// Capability: 0 (int).
    pub const NEEDS_UPDATED_DRIVER: &CStr = c"DLSSNR.NeedsUpdatedDriver";
    /// Capability: 0 (uint).
    pub const MIN_DRIVER_MAJOR: &CStr = c"DLSSNR.MinDriverVersionMajor";
    /// Capability: 0 (uint).
    pub const MIN_DRIVER_MINOR: &CStr = c"DLSSNR.MinDriverVersionMinor";
    /// Capability: Success, or FAIL_NotImplemented without a backend (int).
    pub const FEATURE_INIT_RESULT: &CStr = c"DLSSNR.FeatureInitResult";
    /// Capability: `PFN_NVSDK_NGX_DLSS_GetStatsCallback` (void*).
    pub const GET_STATS_CALLBACK: &CStr = c"DLSSNRGetStatsCallback";
    /// Capability: `PFN_NVSDK_NGX_DLSSNR_ComputeScalingRatioCallback` (void*).
    pub const COMPUTE_SCALING_RATIO_CALLBACK: &CStr = c"DLSSNRComputeScalingRatioCallback";
    /// Stats output: device memory in bytes (ull).
    pub const SIZE_IN_BYTES: &CStr = c"SizeInBytes";
    /// Stats output: optimisation level, EParameter form of `Snippet.OptLevel` (uint).
    pub const OPT_LEVEL_E: &CStr = c"#\x44";
    /// Stats output: dev-branch flag, EParameter form of `Snippet.IsDevBranch` (uint).
    pub const IS_DEV_BRANCH_E: &CStr = c"#\x45";
    /// Capability: optimisation level (uint).
    pub const OPT_LEVEL: &CStr = c"Snippet.OptLevel";
    /// Capability: dev-branch flag (uint).
    pub const IS_DEV_BRANCH: &CStr = c"Snippet.IsDevBranch";
    /// Scaling-ratio callback input (int).
    pub const PERF_QUALITY_VALUE: &CStr = c"PerfQualityValue";
    /// Create: width (uint, required).
    pub const WIDTH: &CStr = c"DLSSNR.Width";
    /// Create: height (uint, required).
    pub const HEIGHT: &CStr = c"DLSSNR.Height";
    /// Create / callback output: scaling ratio (float, must be 1).
    pub const SCALING_RATIO: &CStr = c"DLSSNR.ScalingRatio";
    /// Create: preset hint (uint, only 0).
    pub const PRESET: &CStr = c"DLSSNR.Hint.Render.Preset";
    /// Create: node mask (uint, 0 or 1).
    pub const CREATION_NODE_MASK: &CStr = c"CreationNodeMask";
    /// Create: node mask (uint, 0 or 1).
    pub const VISIBILITY_NODE_MASK: &CStr = c"VisibilityNodeMask";
    /// Create: custom allocator (must be absent).
    pub const RESOURCE_ALLOC_CALLBACK: &CStr = c"ResourceAllocCallback";
    /// Create: custom allocator (must be absent).
    pub const RESOURCE_RELEASE_CALLBACK: &CStr = c"ResourceReleaseCallback";
    /// Evaluate: colour input (Resource_VK*, required).
    pub const COLOR: &CStr = c"DLSSNR.Color";
    /// Evaluate: output (Resource_VK*, required).
    pub const OUTPUT: &CStr = c"DLSSNR.Output";
    /// Evaluate: motion vectors (Resource_VK*, optional).
    pub const MVEC: &CStr = c"DLSSNR.MVec";
    /// Evaluate: motion scale X (float, default 1).
    pub const MVEC_SCALE_X: &CStr = c"DLSSNR.MVecScaleX";
    /// Evaluate: motion scale Y (float, default 1).
    pub const MVEC_SCALE_Y: &CStr = c"DLSSNR.MVecScaleY";
    /// Evaluate: enable (uint, default 1).
    pub const ENABLED: &CStr = c"DLSSNR.Enabled";
    /// Evaluate: history reset (uint, default 0).
    pub const RESET: &CStr = c"DLSSNR.Reset";
    /// Evaluate: auto mask (uint, default 1).
    pub const USE_AUTO_MASK: &CStr = c"DLSSNR.UseAutoMask";
    /// Evaluate: intensity (float, default 1, 0..1).
    pub const INTENSITY: &CStr = c"DLSSNR.Intensity";
    /// Evaluate: conditioning (float, default 1).
    pub const LOCAL_TONE_STRENGTH: &CStr = c"DLSSNR.LocalToneStrength";
    /// Evaluate: conditioning (float, default 1).
    pub const LOCAL_STRUCTURE_STRENGTH: &CStr = c"DLSSNR.LocalStructureStrength";
    /// Evaluate: conditioning (float, default -1 = follow local structure).
    pub const SKIN_STRUCTURE_STRENGTH: &CStr = c"DLSSNR.SkinStructureStrength";
    /// Evaluate: conditioning (float, optional).
    pub const GLOBAL_TONE_STRENGTH: &CStr = c"DLSSNR.GlobalToneStrength";
    /// Evaluate: style (uint, only 0).
    pub const STYLE: &CStr = c"DLSSNR.Style";
    /// Evaluate: UI correction (uint, only 0).
    pub const UI_CORRECTION: &CStr = c"DLSSNR.UICorrection";
}

/// Resource inputs of the native feature that this implementation does not take (must be absent).
pub const UNSUPPORTED_RESOURCES: &[&CStr] = &[
    c"DLSSNR.Depth",
    c"DLSSNR.ControlMask",
    c"DLSSNR.UI",
    c"DLSSNR.UIAlpha",
    c"DLSSNR.Backbuffer",
    c"DLSSNR.BidirectionalDistortionField",
];

// ---------------------------------------------------------------------------------------------
// Capabilities

/// Fills a capability map (GetCapabilityParameters / GetParameters; again on `Reset()`).
pub fn populate_capabilities(o: &ParamObject) {
    let available = backend_for(FEATURE).is_some();
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
    let [stats, ratio] = callback_addresses();
    o.set(
        keys::GET_STATS_CALLBACK.to_bytes(),
        Value::Vp(stats as usize),
    );
    o.set(
        keys::COMPUTE_SCALING_RATIO_CALLBACK.to_bytes(),
        Value::Vp(ratio as usize),
    );
    o.set(
        keys::OPT_LEVEL.to_bytes(),
        Value::Ui(NVSDK_NGX_OPT_LEVEL_RELEASE),
    );
    o.set(keys::IS_DEV_BRANCH.to_bytes(), Value::Ui(0));
    // Features this library does not provide say so explicitly, so engines do not probe them.
    for k in [
        "SuperSampling.Available",
        "SuperSamplingDenoising.Available",
        "FrameGeneration.Available",
        "FrameInterpolation.Available",
    ] {
        o.set(k.as_bytes(), Value::I(0));
    }
}

/// `DLSSNRGetStatsCallback`: writes `SizeInBytes` (ull), `#\x44` = 40 and `#\x45` = 0 (uint).
///
/// # Safety
/// `params` must be NULL or a live parameter object.
pub unsafe extern "C" fn get_stats_callback(params: *mut NVSDK_NGX_Parameter) -> NVSDK_NGX_Result {
    guard("DLSSNRGetStatsCallback", || {
        // SAFETY: caller contract.
        let Some(p) = (unsafe { ParamRef::new(params) }) else {
            return NVSDK_NGX_Result_FAIL_InvalidParameter;
        };
        let bytes = backend_for(FEATURE).map_or(0, |b| b.memory_in_use());
        p.set_ull(keys::SIZE_IN_BYTES, bytes);
        p.set_ui(keys::OPT_LEVEL_E, NVSDK_NGX_OPT_LEVEL_RELEASE);
        p.set_ui(keys::IS_DEV_BRANCH_E, 0);
        NVSDK_NGX_Result_Success
    })
}

/// `DLSSNRComputeScalingRatioCallback`: reads `PerfQualityValue` (0..=5 except UltraPerformance)
/// and writes `DLSSNR.ScalingRatio` = 1.0 (NR never changes resolution).
///
/// # Safety
/// `params` must be NULL or a live parameter object.
pub unsafe extern "C" fn compute_scaling_ratio_callback(
    params: *mut NVSDK_NGX_Parameter,
) -> NVSDK_NGX_Result {
    guard("DLSSNRComputeScalingRatioCallback", || {
        // SAFETY: caller contract.
        let Some(p) = (unsafe { ParamRef::new(params) }) else {
            return NVSDK_NGX_Result_FAIL_InvalidParameter;
        };
        match p.get_i(keys::PERF_QUALITY_VALUE) {
            Ok(q)
                if (0..=5).contains(&q)
                    && q as u32 != NVSDK_NGX_PerfQuality_Value_UltraPerformance =>
            {
                p.set_f(keys::SCALING_RATIO, 1.0);
                NVSDK_NGX_Result_Success
            }
            _ => NVSDK_NGX_Result_FAIL_InvalidParameter,
        }
    })
}

// ---------------------------------------------------------------------------------------------
// Typed reads

fn name(k: &CStr) -> String {
    k.to_string_lossy().into_owned()
}

fn invalid(k: &CStr, reason: impl Into<String>) -> FeatureError {
    FeatureError::InvalidParameter {
        key: name(k),
        reason: reason.into(),
    }
}

fn unsupported(k: &CStr, reason: impl Into<String>) -> FeatureError {
    FeatureError::UnsupportedParameter {
        key: name(k),
        reason: reason.into(),
    }
}

fn opt_ui(p: &ParamRef, k: &CStr) -> Option<u32> {
    p.get_ui(k).ok()
}

fn opt_finite_f(p: &ParamRef, k: &CStr) -> Result<Option<f32>, FeatureError> {
    match p.get_f(k) {
        Ok(v) if v.is_finite() => Ok(Some(v)),
        Ok(v) => Err(invalid(k, format!("{v} is not finite"))),
        Err(_) => Ok(None),
    }
}

fn present_pointer(p: &ParamRef, k: &CStr) -> bool {
    p.get_vp(k).is_ok_and(|v| !v.is_null())
}

/// Creation parameters before the model directory is known.
#[derive(Debug, Clone, PartialEq)]
pub struct CreateRequest {
    /// Width.
    pub width: u32,
    /// Height.
    pub height: u32,
    /// `PerfQualityValue`.
    pub perf_quality: Option<i32>,
    /// Preset.
    pub preset: u32,
    /// Creation node mask.
    pub creation_node_mask: u32,
    /// Visibility node mask.
    pub visibility_node_mask: u32,
}

impl CreateRequest {
    /// Completes the request with the model directory.
    pub fn with_model_dir(self, model_dir: std::path::PathBuf) -> CreateParams {
        CreateParams {
            width: self.width,
            height: self.height,
            model_dir,
            perf_quality: self.perf_quality,
            preset: self.preset,
            creation_node_mask: self.creation_node_mask,
            visibility_node_mask: self.visibility_node_mask,
        }
    }
}

/// Validates the creation parameters of feature 18.
pub fn parse_create(p: &ParamRef) -> Result<CreateRequest, FeatureError> {
    let dim = |k: &CStr| -> Result<u32, FeatureError> {
        let v = opt_ui(p, k)
            .ok_or_else(|| invalid(k, "required (SetUI) but missing or not numeric"))?;
        if !(MIN_SIZE..=MAX_SIZE).contains(&v) {
            return Err(invalid(
                k,
                format!("{v} is outside {MIN_SIZE}..={MAX_SIZE}"),
            ));
        }
        Ok(v)
    };
    let width = dim(keys::WIDTH)?;
    let height = dim(keys::HEIGHT)?;
    if u64::from(width) * u64::from(height) > MAX_AREA {
        return Err(invalid(
            keys::WIDTH,
            format!("{width}x{height} exceeds the maximum area of {MAX_AREA} pixels"),
        ));
    }
    if let Some(r) = opt_finite_f(p, keys::SCALING_RATIO)? {
        if r != 1.0 {
            return Err(unsupported(
                keys::SCALING_RATIO,
                format!("{r}: only 1.0 (same-resolution) is supported"),
            ));
        }
    }
    let preset = opt_ui(p, keys::PRESET).unwrap_or(0);
    if preset != 0 {
        return Err(unsupported(
            keys::PRESET,
            format!("{preset}: only preset 0 is supported"),
        ));
    }
    let mask = |k: &CStr| -> Result<u32, FeatureError> {
        let v = opt_ui(p, k).unwrap_or(1);
        if v > 1 {
            return Err(unsupported(
                k,
                format!("{v:#x}: multi-GPU node masks are not supported"),
            ));
        }
        Ok(v)
    };
    let creation_node_mask = mask(keys::CREATION_NODE_MASK)?;
    let visibility_node_mask = mask(keys::VISIBILITY_NODE_MASK)?;
    for k in [
        keys::RESOURCE_ALLOC_CALLBACK,
        keys::RESOURCE_RELEASE_CALLBACK,
    ] {
        if present_pointer(p, k) {
            return Err(unsupported(
                k,
                "custom resource allocators are not supported",
            ));
        }
    }
    Ok(CreateRequest {
        width,
        height,
        perf_quality: p.get_i(keys::PERF_QUALITY_VALUE).ok(),
        preset,
        creation_node_mask,
        visibility_node_mask,
    })
}

/// Names of the four subrect keys of a resource (`DLSSNR.<Name>Subrect{BaseX,BaseY,Width,Height}`).
fn subrect_keys(resource: &CStr) -> [std::ffi::CString; 4] {
    let base = resource.to_string_lossy();
    ["BaseX", "BaseY", "Width", "Height"]
        .map(|s| std::ffi::CString::new(format!("{base}Subrect{s}")).unwrap_or_default())
}

fn subrect(p: &ParamRef, resource: &CStr, width: u32, height: u32) -> Result<Rect, FeatureError> {
    let [bx, by, bw, bh] = subrect_keys(resource);
    let w = opt_ui(p, &bw).unwrap_or(width);
    let h = opt_ui(p, &bh).unwrap_or(height);
    if w != width || h != height {
        return Err(invalid(
            &bw,
            format!("subrect {w}x{h} must equal the feature size {width}x{height}"),
        ));
    }
    Ok(Rect {
        x: opt_ui(p, &bx).unwrap_or(0),
        y: opt_ui(p, &by).unwrap_or(0),
        width,
        height,
    })
}

/// Validates the evaluation parameters of feature 18 for an instance of `width`x`height`.
pub fn parse_eval(p: &ParamRef, width: u32, height: u32) -> Result<EvalInputs, FeatureError> {
    for k in UNSUPPORTED_RESOURCES {
        if present_pointer(p, k) {
            return Err(unsupported(
                k,
                "this input is not implemented; leave it unset",
            ));
        }
    }
    let image = |k: &CStr,
                 role: Role,
                 required: bool|
     -> Result<Option<super::backend::ImageInput>, FeatureError> {
        match read_resource(p, k)? {
            Some(res) => {
                let rect = subrect(p, k, width, height)?;
                check_image(&name(k), role, &res, rect).map(Some)
            }
            None if required => Err(FeatureError::MissingInput { key: name(k) }),
            None => Ok(None),
        }
    };
    let color =
        image(keys::COLOR, Role::Color, true)?.ok_or_else(|| FeatureError::MissingInput {
            key: name(keys::COLOR),
        })?;
    let output =
        image(keys::OUTPUT, Role::Output, true)?.ok_or_else(|| FeatureError::MissingInput {
            key: name(keys::OUTPUT),
        })?;
    if output.image == color.image {
        return Err(invalid(
            keys::OUTPUT,
            "must not alias DLSSNR.Color (same VkImage)",
        ));
    }
    let motion = image(keys::MVEC, Role::Motion, false)?;
    let motion_scale = [
        opt_finite_f(p, keys::MVEC_SCALE_X)?.unwrap_or(1.0),
        opt_finite_f(p, keys::MVEC_SCALE_Y)?.unwrap_or(1.0),
    ];
    let intensity = opt_finite_f(p, keys::INTENSITY)?.unwrap_or(1.0);
    if !(0.0..=1.0).contains(&intensity) {
        return Err(invalid(
            keys::INTENSITY,
            format!("{intensity} is outside 0..=1"),
        ));
    }
    let style = opt_ui(p, keys::STYLE).unwrap_or(0);
    if style != 0 {
        return Err(unsupported(
            keys::STYLE,
            format!("{style}: only style 0 is implemented"),
        ));
    }
    if let Some(u) = opt_ui(p, keys::UI_CORRECTION).filter(|&u| u != 0) {
        return Err(unsupported(
            keys::UI_CORRECTION,
            format!("{u}: UI correction is not implemented"),
        ));
    }
    Ok(EvalInputs {
        color,
        output,
        motion,
        motion_scale,
        enabled: opt_ui(p, keys::ENABLED).unwrap_or(1) != 0,
        reset: opt_ui(p, keys::RESET).unwrap_or(0) != 0,
        use_auto_mask: opt_ui(p, keys::USE_AUTO_MASK).unwrap_or(1) != 0,
        intensity,
        local_tone_strength: opt_finite_f(p, keys::LOCAL_TONE_STRENGTH)?.unwrap_or(1.0),
        local_structure_strength: opt_finite_f(p, keys::LOCAL_STRUCTURE_STRENGTH)?.unwrap_or(1.0),
        skin_structure_strength: opt_finite_f(p, keys::SKIN_STRUCTURE_STRENGTH)?.unwrap_or(-1.0),
        global_tone_strength: opt_finite_f(p, keys::GLOBAL_TONE_STRENGTH)?,
        style,
    })
}

/// The addresses stored under `DLSSNRGetStatsCallback` and `DLSSNRComputeScalingRatioCallback`.
pub fn callback_addresses() -> [*mut c_void; 2] {
    type Cb = unsafe extern "C" fn(*mut NVSDK_NGX_Parameter) -> NVSDK_NGX_Result;
    let stats: Cb = get_stats_callback;
    let ratio: Cb = compute_scaling_ratio_callback;
    [stats as *mut c_void, ratio as *mut c_void]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ngx::params::Method;
    use ash::vk::{self, Handle};

    fn obj() -> Box<ParamObject> {
        ParamObject::new(None)
    }
    fn pref(o: &ParamObject) -> ParamRef {
        // SAFETY: a live object of ours.
        unsafe { ParamRef::new(o.as_c()) }.expect("non-null")
    }

    #[test]
    fn create_parameters_are_validated_with_named_reasons() {
        let o = obj();
        let p = pref(&o);
        let e = parse_create(&p).expect_err("empty");
        assert_eq!(e.code(), NVSDK_NGX_Result_FAIL_InvalidParameter);
        assert!(e.to_string().contains("DLSSNR.Width"), "{e}");
        p.set_ui(keys::WIDTH, 128);
        p.set_ui(keys::HEIGHT, 63);
        assert!(parse_create(&p)
            .expect_err("small")
            .to_string()
            .contains("63 is outside"));
        p.set_ui(keys::HEIGHT, 8192);
        p.set_ui(keys::WIDTH, 4096);
        assert!(parse_create(&p)
            .expect_err("area")
            .to_string()
            .contains("maximum area"));
        p.set_i(keys::WIDTH, 256); // an int setter is accepted (numeric conversion)
        p.set_ui(keys::HEIGHT, 128);
        let r = parse_create(&p).expect("valid");
        assert_eq!(
            (r.width, r.height, r.preset, r.creation_node_mask),
            (256, 128, 0, 1)
        );
        p.set_f(keys::SCALING_RATIO, 2.0);
        assert_eq!(
            parse_create(&p).map_err(|e| e.code()).err(),
            Some(NVSDK_NGX_Result_FAIL_UnsupportedParameter)
        );
        p.set_f(keys::SCALING_RATIO, 1.0);
        p.set_ui(keys::PRESET, 0x8000_0002);
        assert_eq!(
            parse_create(&p).map_err(|e| e.code()).err(),
            Some(NVSDK_NGX_Result_FAIL_UnsupportedParameter)
        );
        p.set_ui(keys::PRESET, 0);
        p.set_ui(keys::VISIBILITY_NODE_MASK, 3);
        assert_eq!(
            parse_create(&p).map_err(|e| e.code()).err(),
            Some(NVSDK_NGX_Result_FAIL_UnsupportedParameter)
        );
        p.set_ui(keys::VISIBILITY_NODE_MASK, 1);
        p.set_ptr(
            Method::SetVp,
            keys::RESOURCE_ALLOC_CALLBACK,
            8usize as *mut c_void,
        );
        assert_eq!(
            parse_create(&p).map_err(|e| e.code()).err(),
            Some(NVSDK_NGX_Result_FAIL_UnsupportedParameter)
        );
    }

    fn resource(image: u64, format: vk::Format, rw: bool) -> Box<NVSDK_NGX_Resource_VK> {
        Box::new(NVSDK_NGX_Resource_VK {
            Resource: NVSDK_NGX_Resource_VK_Resource {
                ImageViewInfo: NVSDK_NGX_ImageViewInfo_VK {
                    ImageView: vk::ImageView::from_raw(image + 100),
                    Image: vk::Image::from_raw(image),
                    SubresourceRange: vk::ImageSubresourceRange::default(),
                    Format: format,
                    Width: 128,
                    Height: 96,
                },
            },
            Type: NVSDK_NGX_RESOURCE_VK_TYPE_VK_IMAGEVIEW,
            ReadWrite: rw,
        })
    }

    #[test]
    fn eval_parameters_have_defaults_and_checks() {
        let o = obj();
        let p = pref(&o);
        assert_eq!(
            parse_eval(&p, 128, 96).map_err(|e| e.code()).err(),
            Some(NVSDK_NGX_Result_FAIL_MissingInput)
        );
        let color = resource(1, vk::Format::R8G8B8A8_SRGB, false);
        let out = resource(2, vk::Format::R16G16B16A16_SFLOAT, true);
        let vp = |r: &NVSDK_NGX_Resource_VK| r as *const _ as *mut c_void;
        p.set_ptr(Method::SetVp, keys::COLOR, vp(&color));
        assert!(parse_eval(&p, 128, 96)
            .expect_err("no output")
            .to_string()
            .contains("DLSSNR.Output"));
        p.set_ptr(Method::SetVp, keys::OUTPUT, vp(&out));
        let e = parse_eval(&p, 128, 96).expect("valid");
        assert_eq!(
            (
                e.enabled,
                e.reset,
                e.use_auto_mask,
                e.intensity,
                e.skin_structure_strength
            ),
            (true, false, true, 1.0, -1.0)
        );
        assert_eq!(e.motion_scale, [1.0, 1.0]);
        assert_eq!(
            e.color.rect,
            Rect {
                x: 0,
                y: 0,
                width: 128,
                height: 96
            }
        );
        assert!(e.motion.is_none());
        // A larger feature than the images: size error.
        assert_eq!(
            parse_eval(&p, 256, 96).map_err(|e| e.code()).err(),
            Some(NVSDK_NGX_Result_FAIL_InvalidParameter)
        );
        // Subrect size must equal the feature size; base offsets must fit in the image.
        p.set_ui(c"DLSSNR.ColorSubrectWidth", 64);
        assert!(parse_eval(&p, 128, 96)
            .expect_err("subrect")
            .to_string()
            .contains("DLSSNR.ColorSubrectWidth"));
        p.set_ui(c"DLSSNR.ColorSubrectWidth", 128);
        p.set_ui(c"DLSSNR.ColorSubrectBaseX", 1);
        assert!(parse_eval(&p, 128, 96).is_err());
        p.set_ui(c"DLSSNR.ColorSubrectBaseX", 0);
        p.set_f(keys::INTENSITY, 1.5);
        assert_eq!(
            parse_eval(&p, 128, 96).map_err(|e| e.code()).err(),
            Some(NVSDK_NGX_Result_FAIL_InvalidParameter)
        );
        p.set_f(keys::INTENSITY, 0.25);
        p.set_ui(keys::ENABLED, 0);
        p.set_i(keys::RESET, 1);
        p.set_f(keys::MVEC_SCALE_X, -2.0);
        let mv = resource(3, vk::Format::R16G16_SFLOAT, false);
        p.set_ptr(Method::SetVp, keys::MVEC, vp(&mv));
        let e = parse_eval(&p, 128, 96).expect("valid");
        assert_eq!(
            (e.enabled, e.reset, e.intensity, e.motion_scale),
            (false, true, 0.25, [-2.0, 1.0])
        );
        assert_eq!(e.motion.map(|m| m.format), Some(vk::Format::R16G16_SFLOAT));
        p.set_ui(keys::STYLE, 2);
        assert_eq!(
            parse_eval(&p, 128, 96).map_err(|e| e.code()).err(),
            Some(NVSDK_NGX_Result_FAIL_UnsupportedParameter)
        );
        p.set_ui(keys::STYLE, 0);
        p.set_ptr(Method::SetVp, c"DLSSNR.Depth", vp(&mv));
        assert_eq!(
            parse_eval(&p, 128, 96).map_err(|e| e.code()).err(),
            Some(NVSDK_NGX_Result_FAIL_UnsupportedParameter)
        );
        p.set_ptr(Method::SetVp, c"DLSSNR.Depth", std::ptr::null_mut());
        p.set_ptr(Method::SetVp, keys::OUTPUT, vp(&color));
        assert!(parse_eval(&p, 128, 96).is_err());
    }

    #[test]
    fn callbacks_write_their_outputs() {
        let o = obj();
        let p = pref(&o);
        // SAFETY: live object.
        assert_eq!(
            unsafe { get_stats_callback(o.as_c()) },
            NVSDK_NGX_Result_Success
        );
        assert_eq!(o.raw(b"#\x44"), Some(Value::Ui(40)));
        assert!(matches!(o.raw(b"SizeInBytes"), Some(Value::Ull(_))));
        // SAFETY: live object.
        assert_eq!(
            unsafe { compute_scaling_ratio_callback(o.as_c()) },
            NVSDK_NGX_Result_FAIL_InvalidParameter
        );
        p.set_i(keys::PERF_QUALITY_VALUE, 3);
        // SAFETY: live object.
        assert_eq!(
            unsafe { compute_scaling_ratio_callback(o.as_c()) },
            NVSDK_NGX_Result_FAIL_InvalidParameter
        );
        p.set_i(keys::PERF_QUALITY_VALUE, 5);
        // SAFETY: live object.
        assert_eq!(
            unsafe { compute_scaling_ratio_callback(o.as_c()) },
            NVSDK_NGX_Result_Success
        );
        assert_eq!(p.get_f(keys::SCALING_RATIO), Ok(1.0));
        // SAFETY: NULL is rejected.
        assert_eq!(
            unsafe { get_stats_callback(std::ptr::null_mut()) },
            NVSDK_NGX_Result_FAIL_InvalidParameter
        );
    }
}
