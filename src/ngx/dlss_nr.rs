//! Feature 18 (DLSS-NR) at the ABI: its capability keys and their two callbacks, its image
//! formats, and the parsing of a caller's parameter objects straight into DLSS-NR's own
//! [`NrCreate`] and [`NrInputs`] (nr-network.md §5, ngx-abi.md §8.5), which validate the
//! values themselves. The parameter names are `crate::nr::keys`; nothing here touches Vulkan.

use std::os::raw::c_void;
use std::path::Path;

use ash::vk;

use super::abi::*;
use super::guard::guard;
use super::model_dir::MODEL_SUBDIR;
use super::param_read::{
    image, opt_f, opt_i, opt_ui, present_pointer, refuse_custom_allocators, required_image,
    unsupported, write_stats,
};
use super::params::{ParamObject, ParamRef, Value};
use super::registry::{self, Description};
use super::resource::Role;
use crate::feature::{FeatureError, RouteRequest};
use crate::nr::feature::{NrCreate, NrInputs};
use crate::nr::frame::FrameParams;
use crate::nr::keys as k;

/// The feature id.
pub const FEATURE: NVSDK_NGX_Feature = NVSDK_NGX_Feature_Reserved18;

/// Capability and callback keys (the ABI's own; the parameters are `crate::nr::keys`).
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
    /// Capability: optimisation level (uint).
    pub const OPT_LEVEL: &CStr = c"Snippet.OptLevel";
    /// Capability: dev-branch flag (uint).
    pub const IS_DEV_BRANCH: &CStr = c"Snippet.IsDevBranch";
    /// Scaling-ratio callback input (int).
    pub const PERF_QUALITY_VALUE: &CStr = c"PerfQualityValue";
    /// Callback output: scaling ratio (float, always 1).
    pub const SCALING_RATIO: &CStr = c"DLSSNR.ScalingRatio";
    pub use crate::ngx::param_read::shared_keys::*;
}

/// The image roles of feature 18 and the formats each accepts.
pub mod roles {
    use super::{vk, Role};
    /// `DLSSNR.Color`: display-encoded colour (UNORM/SRGB/packed are read as their 0..1 value).
    pub const COLOR: Role = Role::Input(&[
        vk::Format::R16G16B16A16_SFLOAT,
        vk::Format::R32G32B32A32_SFLOAT,
        vk::Format::R8G8B8A8_UNORM,
        vk::Format::R8G8B8A8_SRGB,
        vk::Format::A2B10G10R10_UNORM_PACK32,
    ]);
    /// `DLSSNR.MVec`.
    pub const MOTION: Role = Role::Input(&[vk::Format::R16G16_SFLOAT, vk::Format::R32G32_SFLOAT]);
    /// `DLSSNR.Output` (storage-image capable formats).
    pub const OUTPUT: Role = Role::Output(&[
        vk::Format::R16G16B16A16_SFLOAT,
        vk::Format::R32G32B32A32_SFLOAT,
        vk::Format::R8G8B8A8_UNORM,
    ]);
}

/// The description of feature 18 in the feature table.
pub struct DlssNr;

impl Description for DlssNr {
    type Create = NrCreate;
    type Eval = NrInputs;

    fn id(&self) -> NVSDK_NGX_Feature {
        FEATURE
    }

    fn label(&self) -> &'static str {
        "DLSS-NR"
    }

    fn model_subdir(&self) -> Option<&'static str> {
        Some(MODEL_SUBDIR)
    }

    fn check_model(&self, dir: &Path) -> Result<(), String> {
        crate::nr::feature::quick_check(dir)
    }

    fn capabilities(&self, o: &ParamObject, available: bool) {
        populate_capabilities(o, available);
    }

    fn parse_create(&self, p: &ParamRef) -> Result<NrCreate, FeatureError> {
        parse_create(p)
    }

    fn parse_eval(&self, p: &ParamRef, created: &NrCreate) -> Result<NrInputs, FeatureError> {
        parse_eval(p, created)
    }

    fn summary(&self, created: &NrCreate) -> String {
        format!("{}x{}", created.width(), created.height())
    }

    fn device_extensions(&self) -> &'static [&'static std::ffi::CStr] {
        &crate::nr::route::tensor::EXTENSIONS
    }
}

// ---------------------------------------------------------------------------------------------
// Capabilities

/// Writes the DLSS-NR capability keys; `available` says whether a backend is installed.
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
        let bytes = registry::lookup(FEATURE).map_or(0, |f| f.memory_in_use());
        write_stats(&p, bytes);
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

/// The addresses stored under `DLSSNRGetStatsCallback` and `DLSSNRComputeScalingRatioCallback`.
pub fn callback_addresses() -> [*mut c_void; 2] {
    type Cb = unsafe extern "C" fn(*mut NVSDK_NGX_Parameter) -> NVSDK_NGX_Result;
    let stats: Cb = get_stats_callback;
    let ratio: Cb = compute_scaling_ratio_callback;
    [stats as *mut c_void, ratio as *mut c_void]
}

// ---------------------------------------------------------------------------------------------
// Parameters

/// Reads the creation parameters of feature 18 into [`NrCreate`] (which checks the values).
/// The ABI's own rules are checked here: a given scaling ratio must be 1, and no custom
/// resource allocator may be installed.
pub fn parse_create(p: &ParamRef) -> Result<NrCreate, FeatureError> {
    let dim = |key: &str| {
        opt_ui(p, key).ok_or_else(|| FeatureError::InvalidParameter {
            key: key.to_owned(),
            reason: "required (SetUI) but missing or not numeric".into(),
        })
    };
    let width = dim(k::WIDTH)?;
    let height = dim(k::HEIGHT)?;
    if let Some(r) = opt_f(p, k::SCALING_RATIO) {
        if r != 1.0 {
            return Err(unsupported(
                k::SCALING_RATIO,
                format!("{r}: only 1.0 (same-resolution) is supported"),
            ));
        }
    }
    refuse_custom_allocators(p)?;
    let route = match opt_ui(p, k::ROUTE) {
        None => None,
        Some(v) => Some(RouteRequest::from_number(v).ok_or_else(|| {
            unsupported(
                k::ROUTE,
                format!("{v}: expected 0 (auto), 1 (exact) or 2 (tensor)"),
            )
        })?),
    };
    let tensor_features = opt_ui(p, k::TENSOR_FEATURES_ENABLED).map(|v| v != 0);
    Ok(NrCreate::new(
        width,
        height,
        opt_i(p, k::PERF_QUALITY_VALUE),
        opt_ui(p, k::PRESET).map_or(0, untag_preset),
        opt_ui(p, k::CREATION_NODE_MASK).unwrap_or(1),
        opt_ui(p, k::VISIBILITY_NODE_MASK).unwrap_or(1),
    )?
    .with_route(route, tensor_features))
}

/// Bit 31 on a preset hint marks a value NVIDIA's static library wrote because the application
/// chose none (ngx-abi.md §3.5: it tags its per-mode defaults `0x80000000 | N` before calling the
/// Core). Such a value is the application's "default", i.e. preset 0; untagged values are the
/// application's own choice and are checked as they are.
fn untag_preset(v: u32) -> u32 {
    const SDK_DEFAULT_TAG: u32 = 0x8000_0000;
    if v & SDK_DEFAULT_TAG != 0 {
        0
    } else {
        v
    }
}

/// Reads the evaluation parameters of a feature created with `created` into [`NrInputs`]
/// (which checks the values); absent values take [`FrameParams::default`].
pub fn parse_eval(p: &ParamRef, created: &NrCreate) -> Result<NrInputs, FeatureError> {
    for key in k::UNSUPPORTED_RESOURCES {
        if present_pointer(p, key) {
            return Err(unsupported(
                key,
                "this input is not implemented; leave it unset",
            ));
        }
    }
    let (w, h) = (created.width(), created.height());
    let color = required_image(p, k::COLOR, roles::COLOR, w, h)?;
    let output = required_image(p, k::OUTPUT, roles::OUTPUT, w, h)?;
    let motion = image(p, k::MVEC, roles::MOTION, w, h)?;
    let d = FrameParams::default();
    let f = |key: &str, default: f32| opt_f(p, key).unwrap_or(default);
    let flag = |key: &str, default: bool| opt_ui(p, key).map_or(default, |v| v != 0);
    let controls = FrameParams {
        enabled: flag(k::ENABLED, d.enabled),
        reset: flag(k::RESET, d.reset),
        use_auto_mask: flag(k::USE_AUTO_MASK, d.use_auto_mask),
        intensity: f(k::INTENSITY, d.intensity),
        local_tone_strength: f(k::LOCAL_TONE_STRENGTH, d.local_tone_strength),
        local_structure_strength: f(k::LOCAL_STRUCTURE_STRENGTH, d.local_structure_strength),
        skin_structure_strength: f(k::SKIN_STRUCTURE_STRENGTH, d.skin_structure_strength),
        global_tone_strength: opt_f(p, k::GLOBAL_TONE_STRENGTH),
        style: opt_ui(p, k::STYLE).unwrap_or(d.style),
        ui_correction: opt_ui(p, k::UI_CORRECTION).unwrap_or(d.ui_correction),
        depth_inverted: opt_ui(p, k::DEPTH_INVERTED),
        mvec_scale: [
            f(k::MVEC_SCALE_X, d.mvec_scale[0]),
            f(k::MVEC_SCALE_Y, d.mvec_scale[1]),
        ],
        ..d
    };
    NrInputs::new(w, h, color, output, motion, controls)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::feature::Rect;
    use crate::ngx::param_read::key;
    use crate::ngx::params::Method;
    use crate::ngx::result::ResultCode;
    use ash::vk::Handle;

    fn created(width: u32, height: u32) -> NrCreate {
        NrCreate::new(width, height, None, 0, 1, 1).expect("valid size")
    }

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
        p.set_ui(&key(k::WIDTH), 128);
        p.set_ui(&key(k::HEIGHT), 63);
        assert!(parse_create(&p)
            .expect_err("small")
            .to_string()
            .contains("63 is outside"));
        p.set_ui(&key(k::HEIGHT), 8192);
        p.set_ui(&key(k::WIDTH), 4096);
        assert!(parse_create(&p)
            .expect_err("area")
            .to_string()
            .contains("maximum area"));
        p.set_i(&key(k::WIDTH), 256); // an int setter is accepted (numeric conversion)
        p.set_ui(&key(k::HEIGHT), 128);
        let r = parse_create(&p).expect("valid");
        assert_eq!(
            (r.width(), r.height(), r.preset(), r.creation_node_mask()),
            (256, 128, 0, 1)
        );
        p.set_f(keys::SCALING_RATIO, 2.0);
        assert_eq!(
            parse_create(&p).map_err(|e| e.code()).err(),
            Some(NVSDK_NGX_Result_FAIL_UnsupportedParameter)
        );
        p.set_f(keys::SCALING_RATIO, 1.0);
        p.set_ui(&key(k::PRESET), 2);
        assert_eq!(
            parse_create(&p).map_err(|e| e.code()).err(),
            Some(NVSDK_NGX_Result_FAIL_UnsupportedParameter)
        );
        // A default the static library filled in (bit 31) is no choice: preset 0.
        p.set_ui(&key(k::PRESET), 0x8000_0002);
        assert_eq!(parse_create(&p).map(|r| r.preset()).ok(), Some(0));
        p.set_ui(&key(k::PRESET), 0);
        p.set_ui(&key(k::VISIBILITY_NODE_MASK), 3);
        assert_eq!(
            parse_create(&p).map_err(|e| e.code()).err(),
            Some(NVSDK_NGX_Result_FAIL_UnsupportedParameter)
        );
        p.set_ui(&key(k::VISIBILITY_NODE_MASK), 1);
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
            parse_eval(&p, &created(128, 96))
                .map_err(|e| e.code())
                .err(),
            Some(NVSDK_NGX_Result_FAIL_MissingInput)
        );
        let color = resource(1, vk::Format::R8G8B8A8_SRGB, false);
        let out = resource(2, vk::Format::R16G16B16A16_SFLOAT, true);
        let vp = |r: &NVSDK_NGX_Resource_VK| r as *const _ as *mut c_void;
        p.set_ptr(Method::SetVp, &key(k::COLOR), vp(&color));
        assert!(parse_eval(&p, &created(128, 96))
            .expect_err("no output")
            .to_string()
            .contains("DLSSNR.Output"));
        p.set_ptr(Method::SetVp, &key(k::OUTPUT), vp(&out));
        let e = parse_eval(&p, &created(128, 96)).expect("valid");
        assert_eq!(
            (
                e.frame().enabled,
                e.frame().reset,
                e.frame().use_auto_mask,
                e.frame().intensity,
                e.frame().skin_structure_strength
            ),
            (true, false, true, 1.0, -1.0)
        );
        assert_eq!(e.frame().mvec_scale, [1.0, 1.0]);
        assert_eq!(
            e.color().rect,
            Rect {
                x: 0,
                y: 0,
                width: 128,
                height: 96
            }
        );
        assert!(e.motion().is_none());
        // A larger feature than the images: size error.
        assert_eq!(
            parse_eval(&p, &created(256, 96))
                .map_err(|e| e.code())
                .err(),
            Some(NVSDK_NGX_Result_FAIL_InvalidParameter)
        );
        // Subrect size must equal the feature size; base offsets must fit in the image.
        p.set_ui(c"DLSSNR.ColorSubrectWidth", 64);
        assert!(parse_eval(&p, &created(128, 96))
            .expect_err("subrect")
            .to_string()
            .contains("DLSSNR.ColorSubrectWidth"));
        p.set_ui(c"DLSSNR.ColorSubrectWidth", 128);
        p.set_ui(c"DLSSNR.ColorSubrectBaseX", 1);
        assert!(parse_eval(&p, &created(128, 96)).is_err());
        p.set_ui(c"DLSSNR.ColorSubrectBaseX", 0);
        p.set_f(&key(k::INTENSITY), 1.5);
        assert_eq!(
            parse_eval(&p, &created(128, 96))
                .map_err(|e| e.code())
                .err(),
            Some(NVSDK_NGX_Result_FAIL_InvalidParameter)
        );
        p.set_f(&key(k::INTENSITY), 0.25);
        p.set_ui(&key(k::ENABLED), 0);
        p.set_i(&key(k::RESET), 1);
        p.set_f(&key(k::MVEC_SCALE_X), -2.0);
        let mv = resource(3, vk::Format::R16G16_SFLOAT, false);
        p.set_ptr(Method::SetVp, &key(k::MVEC), vp(&mv));
        let e = parse_eval(&p, &created(128, 96)).expect("valid");
        assert_eq!(
            (
                e.frame().enabled,
                e.frame().reset,
                e.frame().intensity,
                e.frame().mvec_scale
            ),
            (false, true, 0.25, [-2.0, 1.0])
        );
        assert_eq!(
            e.motion().map(|m| m.format),
            Some(vk::Format::R16G16_SFLOAT)
        );
        p.set_ui(&key(k::STYLE), 2);
        assert_eq!(
            parse_eval(&p, &created(128, 96))
                .map_err(|e| e.code())
                .err(),
            Some(NVSDK_NGX_Result_FAIL_UnsupportedParameter)
        );
        p.set_ui(&key(k::STYLE), 0);
        p.set_ptr(Method::SetVp, c"DLSSNR.Depth", vp(&mv));
        assert_eq!(
            parse_eval(&p, &created(128, 96))
                .map_err(|e| e.code())
                .err(),
            Some(NVSDK_NGX_Result_FAIL_UnsupportedParameter)
        );
        p.set_ptr(Method::SetVp, c"DLSSNR.Depth", std::ptr::null_mut());
        p.set_ptr(Method::SetVp, &key(k::OUTPUT), vp(&color));
        assert!(parse_eval(&p, &created(128, 96)).is_err());
    }

    #[test]
    fn callbacks_write_their_outputs() {
        let o = obj();
        let p = pref(&o);
        assert_eq!(
            // SAFETY: `o` is a live parameter object of ours, alive for the whole test.
            unsafe { get_stats_callback(o.as_c()) },
            NVSDK_NGX_Result_Success
        );
        assert_eq!(o.raw(b"#\x44"), Some(Value::Ui(40)));
        assert!(matches!(o.raw(b"SizeInBytes"), Some(Value::Ull(_))));
        assert_eq!(
            // SAFETY: `o` is a live parameter object of ours, alive for the whole test.
            unsafe { compute_scaling_ratio_callback(o.as_c()) },
            NVSDK_NGX_Result_FAIL_InvalidParameter
        );
        p.set_i(keys::PERF_QUALITY_VALUE, 3);
        assert_eq!(
            // SAFETY: `o` is a live parameter object of ours, alive for the whole test.
            unsafe { compute_scaling_ratio_callback(o.as_c()) },
            NVSDK_NGX_Result_FAIL_InvalidParameter
        );
        p.set_i(keys::PERF_QUALITY_VALUE, 5);
        assert_eq!(
            // SAFETY: `o` is a live parameter object of ours, alive for the whole test.
            unsafe { compute_scaling_ratio_callback(o.as_c()) },
            NVSDK_NGX_Result_Success
        );
        assert_eq!(p.get_f(keys::SCALING_RATIO), Ok(1.0));
        assert_eq!(
            // SAFETY: the contract allows NULL (or a live object); NULL is rejected.
            unsafe { get_stats_callback(std::ptr::null_mut()) },
            NVSDK_NGX_Result_FAIL_InvalidParameter
        );
    }
}
