//! Feature 13 (Ray Reconstruction, DLSS-D) through the exported C entry points, driven the way
//! NVIDIA's helper functions do it (ngx-abi.md §7.5 `NGX_VULKAN_CREATE_DLSSD_EXT1`, §7.6
//! `NGX_VULKAN_EVALUATE_DLSSD_EXT`: every key with its setter's type, absent resources as NULL).
//! Vulkan handles are fake non-null values: the ABI layer never calls Vulkan for feature 13
//! (the capability fill included), only a backend would.
//!
//! * As built (RR's GPU route registered): capabilities say available and discovery supported,
//!   without touching the (fake) device; a valid creation without a model directory is refused
//!   before the backend uses the device. Real creation and evaluation: tests/rr_replay.rs.
//! * Without a backend (unregistered): capabilities say unavailable, discovery says not
//!   implemented, scratch size 0, creation checks its parameters (named refusals) and then fails
//!   with `FAIL_NotImplemented`.
//! * With a mock backend registered through the same seam a GPU backend will use: capabilities
//!   say available (still without touching a device), creation reaches the backend with the
//!   typed `RrCreate`, evaluation with the typed `RrInputs` (every guide, scalar and matrix
//!   checked), missing guides are `FAIL_MissingInput` with the guide named in the log, unused
//!   guides are named in the log once.
//!
//! The library state is process-wide, so every test takes `LOCK` and leaves it shut down.

use std::ffi::{c_char, c_void, CStr, CString};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use ash::vk::{self, Handle};
use openngx::feature::{Backend, DeviceContext, FeatureError, Instance};
use openngx::ngx::abi::*;
use openngx::ngx::dlss_d::DlssD;
use openngx::ngx::exports::*;
use openngx::ngx::param_exports::*;
use openngx::ngx::{self};
use openngx::rr::feature::{DepthType, Guide, RoughnessMode, RrBackend, RrCreate, RrInputs};
use openngx::rr::geometry::Size;
use openngx::rr::preset::Preset;

static LOCK: Mutex<()> = Mutex::new(());
static LOG: Mutex<Vec<String>> = Mutex::new(Vec::new());

const RR: NVSDK_NGX_Feature = NVSDK_NGX_Feature_RayReconstruction;
const INSTANCE: u64 = 0x1000;
const PD: u64 = 0x2000;
const DEVICE: u64 = 0x3000;
const CMD: u64 = 0x4000;

unsafe extern "C" fn log_sink(
    msg: *const c_char,
    _level: NVSDK_NGX_Logging_Level,
    _f: NVSDK_NGX_Feature,
) {
    // SAFETY: the library passes a NUL-terminated message valid during the call.
    let s = unsafe { CStr::from_ptr(msg) }
        .to_string_lossy()
        .into_owned();
    LOG.lock().unwrap_or_else(|e| e.into_inner()).push(s);
}

fn take_log() -> Vec<String> {
    std::mem::take(&mut *LOG.lock().unwrap_or_else(|e| e.into_inner()))
}

/// The log lines since the last call that contain `needle`.
fn logged(needle: &str) -> usize {
    take_log().iter().filter(|l| l.contains(needle)).count()
}

fn init() {
    let info = NVSDK_NGX_FeatureCommonInfo {
        PathListInfo: NVSDK_NGX_PathListInfo {
            Path: std::ptr::null(),
            Length: 0,
        },
        InternalData: std::ptr::null_mut(),
        LoggingInfo: NVSDK_NGX_LoggingInfo {
            LoggingCallback: Some(log_sink),
            MinimumLoggingLevel: NVSDK_NGX_LOGGING_LEVEL_VERBOSE,
            DisableOtherLoggingSinks: true,
        },
    };
    let path: Vec<wchar_t> = "/nonexistent-app-data"
        .chars()
        .map(|c| c as wchar_t)
        .chain([0])
        .collect();
    // SAFETY: valid pointers for the call; fake Vulkan handles the library only stores.
    let r = unsafe {
        NVSDK_NGX_VULKAN_Init(
            42,
            path.as_ptr(),
            vk::Instance::from_raw(INSTANCE),
            vk::PhysicalDevice::from_raw(PD),
            vk::Device::from_raw(DEVICE),
            None,
            None,
            &info,
            NVSDK_NGX_Version_API,
        )
    };
    assert_eq!(r, NVSDK_NGX_Result_Success);
}

fn shutdown() {
    assert_eq!(NVSDK_NGX_VULKAN_Shutdown(), NVSDK_NGX_Result_Success);
}

// ---------------------------------------------------------------------------------------------
// The parameter map, written as NVIDIA's helpers write it.

fn alloc() -> *mut NVSDK_NGX_Parameter {
    let mut p = std::ptr::null_mut();
    assert_eq!(
        // SAFETY: a local out pointer.
        unsafe { NVSDK_NGX_VULKAN_AllocateParameters(&mut p) },
        NVSDK_NGX_Result_Success
    );
    p
}

fn destroy(p: *mut NVSDK_NGX_Parameter) {
    assert_eq!(
        // SAFETY: an application-owned map, destroyed once.
        unsafe { NVSDK_NGX_VULKAN_DestroyParameters(p) },
        NVSDK_NGX_Result_Success
    );
}

fn c(k: &str) -> CString {
    CString::new(k).expect("key without NUL")
}
fn set_ui(p: *mut NVSDK_NGX_Parameter, k: &str, v: u32) {
    // SAFETY: live map, C string.
    unsafe { NVSDK_NGX_Parameter_SetUI(p, c(k).as_ptr(), v) };
}
fn set_i(p: *mut NVSDK_NGX_Parameter, k: &str, v: i32) {
    // SAFETY: live map, C string.
    unsafe { NVSDK_NGX_Parameter_SetI(p, c(k).as_ptr(), v) };
}
fn set_f(p: *mut NVSDK_NGX_Parameter, k: &str, v: f32) {
    // SAFETY: live map, C string.
    unsafe { NVSDK_NGX_Parameter_SetF(p, c(k).as_ptr(), v) };
}
fn set_vp(p: *mut NVSDK_NGX_Parameter, k: &str, v: *const c_void) {
    // SAFETY: live map, C string.
    unsafe { NVSDK_NGX_Parameter_SetVoidPointer(p, c(k).as_ptr(), v as *mut c_void) };
}
fn get_i(p: *mut NVSDK_NGX_Parameter, k: &str) -> Option<i32> {
    let mut v = 0;
    // SAFETY: live map, C string, local out pointer.
    let r = unsafe { NVSDK_NGX_Parameter_GetI(p, c(k).as_ptr(), &mut v) };
    (r == NVSDK_NGX_Result_Success).then_some(v)
}
fn get_ui(p: *mut NVSDK_NGX_Parameter, k: &str) -> Option<u32> {
    let mut v = 0;
    // SAFETY: live map, C string, local out pointer.
    let r = unsafe { NVSDK_NGX_Parameter_GetUI(p, c(k).as_ptr(), &mut v) };
    (r == NVSDK_NGX_Result_Success).then_some(v)
}
fn get_vp(p: *mut NVSDK_NGX_Parameter, k: &str) -> Option<*mut c_void> {
    let mut v = std::ptr::null_mut();
    // SAFETY: live map, C string, local out pointer.
    let r = unsafe { NVSDK_NGX_Parameter_GetVoidPointer(p, c(k).as_ptr(), &mut v) };
    (r == NVSDK_NGX_Result_Success).then_some(v)
}

/// `NVSDK_NGX_DLSSD_Create_Params` as the helper reads it.
struct CreateParams {
    roughness_mode: u32,
    hw_depth: u32,
    render: (u32, u32),
    target: (u32, u32),
    quality: i32,
    flags: i32,
    output_subrects: bool,
}

/// `NGX_VULKAN_CREATE_DLSSD_EXT1`: the keys of §7.5, then `CreateFeature1`.
fn create(
    p: *mut NVSDK_NGX_Parameter,
    cp: &CreateParams,
) -> (NVSDK_NGX_Result, *mut NVSDK_NGX_Handle) {
    set_ui(p, "CreationNodeMask", 1);
    set_ui(p, "VisibilityNodeMask", 1);
    set_ui(p, "Width", cp.render.0);
    set_ui(p, "Height", cp.render.1);
    set_ui(p, "OutWidth", cp.target.0);
    set_ui(p, "OutHeight", cp.target.1);
    set_i(p, "PerfQualityValue", cp.quality);
    set_i(p, "DLSS.Feature.Create.Flags", cp.flags);
    set_i(
        p,
        "DLSS.Enable.Output.Subrects",
        i32::from(cp.output_subrects),
    );
    set_i(p, "DLSS.Denoise.Mode", 1);
    set_ui(p, "DLSS.Roughness.Mode", cp.roughness_mode);
    set_ui(p, "DLSS.Use.HW.Depth", cp.hw_depth);
    let mut h = std::ptr::null_mut();
    // SAFETY: live map and local out pointer; fake device and command buffer.
    let r = unsafe {
        NVSDK_NGX_VULKAN_CreateFeature1(
            vk::Device::from_raw(DEVICE),
            vk::CommandBuffer::from_raw(CMD),
            RR,
            p,
            &mut h,
        )
    };
    (r, h)
}

const MV_LOW_RES: i32 = 1 << 1;
const IS_HDR: i32 = 1;

fn default_create() -> CreateParams {
    CreateParams {
        roughness_mode: 0,
        hw_depth: 0,
        render: (64, 48),
        target: (96, 72),
        quality: 5,
        flags: IS_HDR | MV_LOW_RES,
        output_subrects: false,
    }
}

fn image(id: u64, format: vk::Format, w: u32, h: u32, rw: bool) -> NVSDK_NGX_Resource_VK {
    NVSDK_NGX_Resource_VK {
        Resource: NVSDK_NGX_Resource_VK_Resource {
            ImageViewInfo: NVSDK_NGX_ImageViewInfo_VK {
                ImageView: vk::ImageView::from_raw(id + 1),
                Image: vk::Image::from_raw(id),
                SubresourceRange: vk::ImageSubresourceRange {
                    aspect_mask: vk::ImageAspectFlags::COLOR,
                    base_mip_level: 0,
                    level_count: 1,
                    base_array_layer: 0,
                    layer_count: 1,
                },
                Format: format,
                Width: w,
                Height: h,
            },
        },
        Type: NVSDK_NGX_RESOURCE_VK_TYPE_VK_IMAGEVIEW,
        ReadWrite: rw,
    }
}

/// The resource fields of `NVSDK_NGX_VK_DLSSD_Eval_Params` the test fills (NULL when `None`).
#[derive(Default, Clone, Copy)]
struct Eval<'a> {
    color: Option<&'a NVSDK_NGX_Resource_VK>,
    output: Option<&'a NVSDK_NGX_Resource_VK>,
    depth: Option<&'a NVSDK_NGX_Resource_VK>,
    motion: Option<&'a NVSDK_NGX_Resource_VK>,
    diffuse_albedo: Option<&'a NVSDK_NGX_Resource_VK>,
    specular_albedo: Option<&'a NVSDK_NGX_Resource_VK>,
    normals: Option<&'a NVSDK_NGX_Resource_VK>,
    roughness: Option<&'a NVSDK_NGX_Resource_VK>,
    specular_hit: Option<&'a NVSDK_NGX_Resource_VK>,
    reflected_albedo: Option<&'a NVSDK_NGX_Resource_VK>,
    exposure: Option<&'a NVSDK_NGX_Resource_VK>,
    jitter: (f32, f32),
    reset: i32,
    mv_scale: (f32, f32),
    pre_exposure: f32,
    world_to_view: Option<&'a [f32; 16]>,
}

fn vp(r: Option<&NVSDK_NGX_Resource_VK>) -> *const c_void {
    r.map_or(std::ptr::null(), |r| r as *const _ as *const c_void)
}

/// `NGX_VULKAN_EVALUATE_DLSSD_EXT`: every key of §7.6 in the helper's order (absent resources
/// as NULL, subrect bases 0, zero scales as 1), then `EvaluateFeature_C`.
fn evaluate(h: *mut NVSDK_NGX_Handle, p: *mut NVSDK_NGX_Parameter, e: &Eval) -> NVSDK_NGX_Result {
    let one = |v: f32| if v == 0.0 { 1.0 } else { v };
    set_vp(p, "Color", vp(e.color));
    set_vp(p, "Output", vp(e.output));
    set_vp(p, "Depth", vp(e.depth));
    set_vp(p, "MotionVectors", vp(e.motion));
    set_f(p, "Jitter.Offset.X", e.jitter.0);
    set_f(p, "Jitter.Offset.Y", e.jitter.1);
    set_i(p, "Reset", e.reset);
    set_f(p, "MV.Scale.X", one(e.mv_scale.0));
    set_f(p, "MV.Scale.Y", one(e.mv_scale.1));
    for k in ["TransparencyMask", "DLSS.Input.Bias.Current.Color.Mask"] {
        set_vp(p, k, std::ptr::null());
    }
    set_vp(p, "ExposureTexture", vp(e.exposure));
    // The G-buffer surface's sixteen attributes (all NULL here), attribute 10 as the specular
    // motion vectors, 12 also as the emissive.
    for k in [
        "GBuffer.Albedo",
        "GBuffer.Roughness",
        "GBuffer.Metallic",
        "GBuffer.Specular",
        "GBuffer.Subsurface",
        "GBuffer.Normals",
        "GBuffer.ShadingModelId",
        "GBuffer.MaterialId",
        "GBuffer.Attrib.8",
        "GBuffer.Attrib.9",
        "GBuffer.SpecularMvec",
        "GBuffer.Attrib.11",
        "GBuffer.Attrib.12",
        "GBuffer.Emissive",
        "GBuffer.Attrib.13",
        "GBuffer.Attrib.14",
        "GBuffer.Attrib.15",
    ] {
        set_vp(p, k, std::ptr::null());
    }
    set_ui(p, "TonemapperType", 0);
    for k in [
        "MotionVectors3D",
        "IsParticleMask",
        "AnimatedTextureMask",
        "DepthHighRes",
        "Position.ViewSpace",
    ] {
        set_vp(p, k, std::ptr::null());
    }
    set_f(p, "FrameTimeDeltaInMsec", 16.6);
    set_vp(p, "RayTracingHitDistance", std::ptr::null());
    for k in [
        "DLSS.Input.Color.Subrect.Base",
        "DLSS.Input.Depth.Subrect.Base",
        "DLSS.Input.MV.Subrect.Base",
        "DLSS.Input.Translucency.Subrect.Base",
        "DLSS.Input.Bias.Current.Color.Subrect.Base",
        "DLSS.Output.Subrect.Base",
        "DLSS.Input.DiffuseAlbedo.Subrect.Base",
        "DLSS.Input.SpecularAlbedo.Subrect.Base",
        "DLSS.Input.Normals.Subrect.Base",
        "DLSS.Input.Roughness.Subrect.Base",
    ] {
        set_ui(p, &format!("{k}.X"), 0);
        set_ui(p, &format!("{k}.Y"), 0);
    }
    set_ui(p, "DLSS.Render.Subrect.Dimensions.Width", 0);
    set_ui(p, "DLSS.Render.Subrect.Dimensions.Height", 0);
    set_f(p, "DLSS.Pre.Exposure", one(e.pre_exposure));
    set_f(p, "DLSS.Exposure.Scale", 1.0);
    set_i(p, "DLSS.Indicator.Invert.X.Axis", 0);
    set_i(p, "DLSS.Indicator.Invert.Y.Axis", 0);
    set_vp(p, "DLSS.Input.DiffuseAlbedo", vp(e.diffuse_albedo));
    set_vp(p, "DLSS.Input.SpecularAlbedo", vp(e.specular_albedo));
    set_vp(p, "GBuffer.Normals", vp(e.normals));
    set_vp(p, "GBuffer.Roughness", vp(e.roughness));
    let guides: [(&str, *const c_void); 22] = [
        ("DLSSD.ReflectedAlbedo", vp(e.reflected_albedo)),
        ("DLSSD.ColorBeforeParticles", std::ptr::null()),
        ("DLSSD.ColorAfterParticles", std::ptr::null()),
        ("DLSSD.ColorBeforeTransparency", std::ptr::null()),
        ("DLSSD.ColorAfterTransparency", std::ptr::null()),
        ("DLSSD.ColorBeforeFog", std::ptr::null()),
        ("DLSSD.ColorAfterFog", std::ptr::null()),
        (
            "DLSSD.ScreenSpaceSubsurfaceScatteringGuide",
            std::ptr::null(),
        ),
        (
            "DLSSD.ColorBeforeScreenSpaceSubsurfaceScattering",
            std::ptr::null(),
        ),
        (
            "DLSSD.ColorAfterScreenSpaceSubsurfaceScattering",
            std::ptr::null(),
        ),
        ("DLSSD.ScreenSpaceRefractionGuide", std::ptr::null()),
        ("DLSSD.ColorBeforeScreenSpaceRefraction", std::ptr::null()),
        ("DLSSD.ColorAfterScreenSpaceRefraction", std::ptr::null()),
        ("DLSSD.DepthOfFieldGuide", std::ptr::null()),
        ("DLSSD.ColorBeforeDepthOfField", std::ptr::null()),
        ("DLSSD.ColorAfterDepthOfField", std::ptr::null()),
        ("DLSSD.DiffuseHitDistance", std::ptr::null()),
        ("DLSSD.SpecularHitDistance", vp(e.specular_hit)),
        ("DLSSD.DiffuseRayDirection", std::ptr::null()),
        ("DLSSD.SpecularRayDirection", std::ptr::null()),
        ("DLSSD.DiffuseRayDirectionHitDistance", std::ptr::null()),
        ("DLSSD.SpecularRayDirectionHitDistance", std::ptr::null()),
    ];
    for (k, v) in guides {
        set_vp(p, k, v);
    }
    for (k, _) in guides {
        set_ui(p, &format!("{k}.Subrect.Base.X"), 0);
        set_ui(p, &format!("{k}.Subrect.Base.Y"), 0);
    }
    set_vp(
        p,
        "WorldToViewMatrix",
        e.world_to_view
            .map_or(std::ptr::null(), |m| m.as_ptr() as *const c_void),
    );
    set_vp(p, "ViewToClipMatrix", std::ptr::null());
    for k in [
        "DLSS.TransparencyLayer",
        "DLSS.TransparencyLayerOpacity",
        "DLSS.TransparencyLayerMvecs",
        "DLSS.DisocclusionMask",
    ] {
        set_vp(p, k, std::ptr::null());
        set_ui(p, &format!("{k}.Subrect.Base.X"), 0);
        set_ui(p, &format!("{k}.Subrect.Base.Y"), 0);
    }
    // SAFETY: a live handle (or one the library refuses by lookup), a live map whose resource
    // pointers point at the caller's locals for the call; the fake command buffer is never used.
    unsafe { NVSDK_NGX_VULKAN_EvaluateFeature_C(vk::CommandBuffer::from_raw(CMD), h, p, None) }
}

// ---------------------------------------------------------------------------------------------
// Feature 13 as built (the GPU route) and without a backend.

fn requirements() -> (NVSDK_NGX_Result, u32) {
    // SAFETY: zeroed plain-old-data struct.
    let mut info: NVSDK_NGX_FeatureDiscoveryInfo = unsafe { std::mem::zeroed() };
    info.SDKVersion = NVSDK_NGX_Version_API;
    info.FeatureID = RR;
    // SAFETY: zeroed plain-old-data struct.
    let mut req: NVSDK_NGX_FeatureRequirement = unsafe { std::mem::zeroed() };
    req.FeatureSupported = 0xFF;
    // SAFETY: initialised locals; fake handles the library ignores.
    let r = unsafe {
        NVSDK_NGX_VULKAN_GetFeatureRequirements(
            vk::Instance::from_raw(INSTANCE),
            vk::PhysicalDevice::from_raw(PD),
            &info,
            &mut req,
        )
    };
    (r, req.FeatureSupported)
}

fn caps() -> *mut NVSDK_NGX_Parameter {
    let mut caps = std::ptr::null_mut();
    assert_eq!(
        // SAFETY: a local out pointer.
        unsafe { NVSDK_NGX_VULKAN_GetCapabilityParameters(&mut caps) },
        NVSDK_NGX_Result_Success
    );
    caps
}

type Cb = unsafe extern "C" fn(*mut NVSDK_NGX_Parameter) -> NVSDK_NGX_Result;

fn callback(caps: *mut NVSDK_NGX_Parameter, k: &str) -> Cb {
    let v = get_vp(caps, k).expect("callback stored");
    assert!(!v.is_null(), "{k}");
    // SAFETY: the capability map stores a `NVSDK_NGX_Result (*)(NVSDK_NGX_Parameter*)` here.
    unsafe { std::mem::transmute::<*mut c_void, Cb>(v) }
}

/// The built-in backend again (other tests unregister it or register a mock).
fn restore_builtin() {
    ngx::register_backend(DlssD::new(), Arc::new(RrBackend::new()));
}

#[test]
fn as_built_feature_13_is_available_without_touching_the_device() {
    let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    assert_eq!(
        requirements(),
        (
            NVSDK_NGX_Result_Success,
            NVSDK_NGX_FeatureSupportResult_Supported
        )
    );
    init();
    take_log();
    // Fake handles: a capability fill that queried the device would crash here.
    let caps = caps();
    assert_eq!(get_i(caps, "SuperSamplingDenoising.Available"), Some(1));
    assert_eq!(
        get_i(caps, "SuperSamplingDenoising.FeatureInitResult"),
        Some(NVSDK_NGX_Result_Success as i32)
    );
    destroy(caps);
    // No model directory: refused before the backend touches the (fake) device.
    std::env::set_var("OPENNGX_RR_MODEL_DIR", "/nonexistent-rr-model");
    let p = alloc();
    let (r, h) = create(p, &default_create());
    assert_eq!(
        (r, h),
        (
            NVSDK_NGX_Result_FAIL_UnableToInitializeFeature,
            std::ptr::null_mut()
        )
    );
    assert!(logged("OPENNGX_RR_MODEL_DIR") >= 1);
    destroy(p);
    shutdown();
    std::env::remove_var("OPENNGX_RR_MODEL_DIR");
}

#[test]
fn without_a_backend_feature_13_is_described_but_not_implemented() {
    let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    ngx::unregister_backend(RR);
    assert_eq!(
        requirements(),
        (
            NVSDK_NGX_Result_Success,
            NVSDK_NGX_FeatureSupportResult_NotImplemented
        )
    );
    init();
    take_log();
    let caps = caps();
    assert_eq!(get_i(caps, "SuperSamplingDenoising.Available"), Some(0));
    assert_eq!(
        get_i(caps, "SuperSamplingDenoising.NeedsUpdatedDriver"),
        Some(0)
    );
    assert_eq!(
        get_ui(caps, "SuperSamplingDenoising.MinDriverVersionMajor"),
        Some(0)
    );
    assert_eq!(
        get_i(caps, "SuperSamplingDenoising.FeatureInitResult"),
        Some(NVSDK_NGX_Result_FAIL_NotImplemented as i32)
    );
    // NGX_DLSSD_GET_OPTIMAL_SETTINGS: Width/Height/PerfQualityValue/RTXValue in, render size out.
    let optimal = callback(caps, "DLSSDOptimalSettingsCallback");
    set_ui(caps, "Width", 3840);
    set_ui(caps, "Height", 2160);
    set_i(caps, "PerfQualityValue", 3);
    set_i(caps, "RTXValue", 0);
    // SAFETY: a live map.
    assert_eq!(unsafe { optimal(caps) }, NVSDK_NGX_Result_Success);
    assert_eq!(
        (get_ui(caps, "OutWidth"), get_ui(caps, "OutHeight")),
        (Some(1280), Some(720))
    );
    assert_eq!(
        [
            "DLSS.Get.Dynamic.Max.Render.Width",
            "DLSS.Get.Dynamic.Max.Render.Height",
            "DLSS.Get.Dynamic.Min.Render.Width",
            "DLSS.Get.Dynamic.Min.Render.Height"
        ]
        .map(|k| get_ui(caps, k)),
        [Some(1280), Some(720), Some(640), Some(360)]
    );
    set_i(caps, "PerfQualityValue", 4); // UltraQuality: not an RR mode, 0x0
                                        // SAFETY: a live map.
    assert_eq!(unsafe { optimal(caps) }, NVSDK_NGX_Result_Success);
    assert_eq!(get_ui(caps, "OutWidth"), Some(0));
    // NGX_DLSSD_GET_STATS: SizeInBytes (ull) and the EParameter opt level.
    let stats = callback(caps, "DLSSDGetStatsCallback");
    // SAFETY: a live map.
    assert_eq!(unsafe { stats(caps) }, NVSDK_NGX_Result_Success);
    let mut bytes = 7u64;
    assert_eq!(
        // SAFETY: live map, C string, local out pointer.
        unsafe { NVSDK_NGX_Parameter_GetULL(caps, c"SizeInBytes".as_ptr(), &mut bytes) },
        NVSDK_NGX_Result_Success
    );
    assert_eq!((bytes, get_ui(caps, "#\x44")), (0, Some(40)));
    destroy(caps);
    assert_eq!(
        requirements(),
        (
            NVSDK_NGX_Result_Success,
            NVSDK_NGX_FeatureSupportResult_NotImplemented
        )
    );
    let mut scratch = 99usize;
    assert_eq!(
        // SAFETY: a local out pointer; the parameters are not read.
        unsafe { NVSDK_NGX_VULKAN_GetScratchBufferSize(RR, std::ptr::null(), &mut scratch) },
        NVSDK_NGX_Result_Success
    );
    assert_eq!(scratch, 0);

    // Creation: parameter errors first, each naming its parameter; no model directory needed.
    std::env::set_var("OPENNGX_RR_MODEL_DIR", "/nonexistent-rr-model");
    let p = alloc();
    let mut h = std::ptr::null_mut();
    // SAFETY: live map, local out pointer, fake device and command buffer.
    let r = unsafe {
        NVSDK_NGX_VULKAN_CreateFeature1(
            vk::Device::from_raw(DEVICE),
            vk::CommandBuffer::from_raw(CMD),
            RR,
            p,
            &mut h,
        )
    };
    assert_eq!(r, NVSDK_NGX_Result_FAIL_InvalidParameter);
    assert_eq!(logged("Width"), 1);
    let refusals: [(CreateParams, NVSDK_NGX_Result, &str); 4] = [
        (
            CreateParams {
                target: (32, 72),
                ..default_create()
            },
            NVSDK_NGX_Result_FAIL_InvalidParameter,
            "OutWidth",
        ),
        (
            CreateParams {
                flags: IS_HDR,
                ..default_create()
            },
            NVSDK_NGX_Result_FAIL_UnsupportedParameter,
            "MVLowRes",
        ),
        (
            CreateParams {
                roughness_mode: 7,
                ..default_create()
            },
            NVSDK_NGX_Result_FAIL_InvalidParameter,
            "DLSS.Roughness.Mode",
        ),
        (
            CreateParams {
                render: (128, 48),
                ..default_create()
            },
            NVSDK_NGX_Result_FAIL_InvalidParameter,
            "smaller than the render size",
        ),
    ];
    for (cp, code, needle) in refusals {
        let (r, h) = create(p, &cp);
        assert_eq!((r, h), (code, std::ptr::null_mut()), "{needle}");
        assert_eq!(logged(needle), 1, "{needle}");
    }
    set_ui(p, "RayReconstruction.Hint.Render.Preset.DLAA", 3);
    assert_eq!(
        create(p, &default_create()).0,
        NVSDK_NGX_Result_FAIL_UnsupportedParameter
    );
    assert_eq!(logged("RayReconstruction.Hint.Render.Preset.DLAA"), 1);
    set_ui(p, "RayReconstruction.Hint.Render.Preset.DLAA", 4);
    // Valid parameters: FAIL_NotImplemented, with a line saying why and what was asked.
    let (r, h) = create(p, &default_create());
    assert_eq!(
        (r, h),
        (NVSDK_NGX_Result_FAIL_NotImplemented, std::ptr::null_mut())
    );
    let log = take_log();
    assert!(
        log.iter()
            .any(|l| l.contains("no backend for feature 13")
                && l.contains("64x48 -> 96x72 preset D")),
        "{log:?}"
    );
    destroy(p);
    shutdown();
    std::env::remove_var("OPENNGX_RR_MODEL_DIR");
    restore_builtin();
}

// ---------------------------------------------------------------------------------------------
// With a backend: the seam a GPU backend plugs into.

#[derive(Default)]
struct Seen {
    creates: Vec<(RrCreate, PathBuf)>,
    evals: Vec<RrInputs>,
    releases: usize,
}

struct MockBackend(Arc<Mutex<Seen>>);
struct MockInstance(Arc<Mutex<Seen>>);

impl Backend for MockBackend {
    type Create = RrCreate;
    type Eval = RrInputs;
    fn name(&self) -> &str {
        "mock-rr"
    }
    fn create(
        &self,
        device: &DeviceContext,
        model_dir: &std::path::Path,
        p: &RrCreate,
        cmd: vk::CommandBuffer,
    ) -> Result<Box<dyn Instance<RrInputs>>, FeatureError> {
        assert_eq!((device.device.as_raw(), cmd.as_raw()), (DEVICE, CMD));
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .creates
            .push((p.clone(), model_dir.to_path_buf()));
        Ok(Box::new(MockInstance(self.0.clone())))
    }
    fn memory_in_use(&self) -> u64 {
        4242
    }
}

impl Instance<RrInputs> for MockInstance {
    fn evaluate(&mut self, _cmd: vk::CommandBuffer, inputs: &RrInputs) -> Result<(), FeatureError> {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .evals
            .push(inputs.clone());
        Ok(())
    }
    fn release(self: Box<Self>) {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).releases += 1;
    }
}

#[test]
fn with_a_backend_the_typed_inputs_reach_it() {
    let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let seen = Arc::new(Mutex::new(Seen::default()));
    ngx::register_backend(DlssD::new(), Arc::new(MockBackend(seen.clone())));
    // The placeholder model directory holds an empty manifest.json.
    ngx::clear_model_validator();
    // Removed at the process's exit: the variable below points at it after this test returns.
    let dir = openngx_tools::scratch::process_dir(&std::env::temp_dir(), "openngx-rr-placeholder")
        .expect("scratch dir");
    std::fs::write(dir.join("manifest.json"), "{}").expect("manifest");
    std::env::set_var("OPENNGX_RR_MODEL_DIR", &dir);
    assert_eq!(
        requirements(),
        (
            NVSDK_NGX_Result_Success,
            NVSDK_NGX_FeatureSupportResult_Supported
        )
    );
    init();
    take_log();
    // The capability fill with a backend registered still touches no device (fake handles).
    let caps = caps();
    assert_eq!(get_i(caps, "SuperSamplingDenoising.Available"), Some(1));
    assert_eq!(
        get_i(caps, "SuperSamplingDenoising.FeatureInitResult"),
        Some(NVSDK_NGX_Result_Success as i32)
    );
    let stats = callback(caps, "DLSSDGetStatsCallback");
    // SAFETY: a live map.
    assert_eq!(unsafe { stats(caps) }, NVSDK_NGX_Result_Success);
    let mut bytes = 0u64;
    // SAFETY: live map, C string, local out pointer.
    unsafe { NVSDK_NGX_Parameter_GetULL(caps, c"SizeInBytes".as_ptr(), &mut bytes) };
    assert_eq!(bytes, 4242);
    destroy(caps);

    let p = alloc();
    // RR's model is looked up with its own variable (DLSS-NR's is not read for it), and the
    // refusal names it.
    let gone = dir.join("gone");
    std::env::set_var("OPENNGX_MODEL_DIR", &dir);
    std::env::set_var("OPENNGX_RR_MODEL_DIR", &gone);
    assert_eq!(
        create(p, &default_create()).0,
        NVSDK_NGX_Result_FAIL_UnableToInitializeFeature
    );
    assert_eq!(
        logged(&format!(
            "OPENNGX_RR_MODEL_DIR={}: not a directory",
            gone.display()
        )),
        1
    );
    std::env::remove_var("OPENNGX_MODEL_DIR");
    std::env::set_var("OPENNGX_RR_MODEL_DIR", &dir);
    set_ui(p, "RayReconstruction.Hint.Render.Preset.Quality", 4);
    set_ui(p, "RayReconstruction.Hint.Render.Preset.DLAA", 0x8000_0004); // the SDK's default tag
    let cp = CreateParams {
        quality: 2,
        hw_depth: 1,
        ..default_create()
    };
    let (r, h) = create(p, &cp);
    assert_eq!(r, NVSDK_NGX_Result_Success);
    {
        let s = seen.lock().unwrap_or_else(|e| e.into_inner());
        let (c, d) = &s.creates[0];
        assert_eq!(d, &dir);
        assert_eq!(
            (
                c.render(),
                c.output(),
                c.preset(),
                c.perf_quality(),
                c.depth_type(),
                c.roughness_mode()
            ),
            (
                Size::new(64, 48),
                Size::new(96, 72),
                Preset::D,
                Some(2),
                DepthType::Hardware,
                RoughnessMode::Unpacked
            )
        );
        assert!(c.flags().is_hdr() && c.flags().mv_low_res() && !c.output_subrects());
    }

    let f16 = vk::Format::R16G16B16A16_SFLOAT;
    let color = image(10, f16, 64, 48, false);
    let output = image(20, f16, 96, 72, true);
    let depth = image(30, vk::Format::D32_SFLOAT, 64, 48, false);
    let motion = image(40, vk::Format::R16G16_SFLOAT, 64, 48, false);
    let diffuse = image(50, vk::Format::R8G8B8A8_UNORM, 64, 48, false);
    let specular = image(60, f16, 64, 48, false);
    let normals = image(70, f16, 64, 48, false);
    let roughness = image(80, vk::Format::R16_SFLOAT, 64, 48, false);
    let spec_hit = image(90, vk::Format::R32_SFLOAT, 64, 48, false);
    let reflected = image(100, f16, 64, 48, false);
    let world = [0.5f32; 16];
    let full = Eval {
        color: Some(&color),
        output: Some(&output),
        depth: Some(&depth),
        motion: Some(&motion),
        diffuse_albedo: Some(&diffuse),
        specular_albedo: Some(&specular),
        normals: Some(&normals),
        roughness: Some(&roughness),
        specular_hit: Some(&spec_hit),
        jitter: (0.25, -0.125),
        reset: 1,
        mv_scale: (0.0, -64.0),
        pre_exposure: 2.0,
        world_to_view: Some(&world),
        ..Eval::default()
    };
    let e = alloc();
    assert_eq!(evaluate(h, e, &full), NVSDK_NGX_Result_Success);
    {
        let s = seen.lock().unwrap_or_else(|e| e.into_inner());
        let i = &s.evals[0];
        for (g, id) in [
            (Guide::Color, 10),
            (Guide::Depth, 30),
            (Guide::MotionVectors, 40),
            (Guide::DiffuseAlbedo, 50),
            (Guide::SpecularAlbedo, 60),
            (Guide::Normals, 70),
            (Guide::Roughness, 80),
            (Guide::SpecularHitDistance, 90),
        ] {
            let img = i.get(g).unwrap_or_else(|| panic!("{g:?} missing"));
            assert_eq!(
                (img.image.as_raw(), img.view.as_raw()),
                (id, id + 1),
                "{g:?}"
            );
            assert_eq!((img.rect.width, img.rect.height), (64, 48), "{g:?}");
        }
        assert!(i.get(Guide::DiffuseHitDistance).is_none() && i.get(Guide::DepthOfField).is_none());
        assert_eq!(i.output().image.as_raw(), 20);
        let f = i.frame();
        assert_eq!(
            (
                f.jitter,
                f.mv_scale,
                f.reset,
                f.pre_exposure,
                f.world_to_view,
                f.view_to_clip
            ),
            ([0.25, -0.125], [1.0, -64.0], true, 2.0, Some(world), None)
        );
        assert!(i.ignored().is_empty());
    }
    // Each required guide missing: FAIL_MissingInput and a log line naming it.
    let without: [(&str, Eval); 8] = [
        (
            "Color",
            Eval {
                color: None,
                ..full
            },
        ),
        (
            "Output",
            Eval {
                output: None,
                ..full
            },
        ),
        (
            "Depth",
            Eval {
                depth: None,
                ..full
            },
        ),
        (
            "MotionVectors",
            Eval {
                motion: None,
                ..full
            },
        ),
        (
            "DLSS.Input.DiffuseAlbedo",
            Eval {
                diffuse_albedo: None,
                ..full
            },
        ),
        (
            "DLSS.Input.SpecularAlbedo",
            Eval {
                specular_albedo: None,
                ..full
            },
        ),
        (
            "GBuffer.Normals",
            Eval {
                normals: None,
                ..full
            },
        ),
        (
            "GBuffer.Roughness",
            Eval {
                roughness: None,
                ..full
            },
        ),
    ];
    take_log();
    for (name, ev) in &without {
        assert_eq!(
            evaluate(h, e, ev),
            NVSDK_NGX_Result_FAIL_MissingInput,
            "{name}"
        );
        assert_eq!(
            logged(&format!("missing required input {name}")),
            1,
            "{name}"
        );
    }
    // An input the network does not read is named in the log once, and the frame runs.
    let extra = Eval {
        reflected_albedo: Some(&reflected),
        ..full
    };
    for _ in 0..3 {
        assert_eq!(evaluate(h, e, &extra), NVSDK_NGX_Result_Success);
    }
    assert_eq!(
        logged("ignoring inputs this implementation does not read: DLSSD.ReflectedAlbedo"),
        1
    );
    assert_eq!(
        seen.lock()
            .unwrap_or_else(|e| e.into_inner())
            .evals
            .last()
            .map(|i| i.ignored().to_vec()),
        Some(vec!["DLSSD.ReflectedAlbedo"])
    );
    // The integer-coded formats the exact route reads (docs/rr.md "Input formats"; its backend
    // used to refuse them at evaluation): accepted through the ABI and handed to the backend
    // as given, the exposure texture as its 1x1 region.
    let d24 = image(110, vk::Format::D24_UNORM_S8_UINT, 64, 48, false);
    let snorm = image(120, vk::Format::R8G8B8A8_SNORM, 64, 48, false);
    let r16 = image(130, vk::Format::R16_UNORM, 64, 48, false);
    let r8 = image(140, vk::Format::R8_UNORM, 64, 48, false);
    let expo = image(150, vk::Format::R16_UNORM, 1, 1, false);
    let coded = Eval {
        depth: Some(&d24),
        normals: Some(&snorm),
        roughness: Some(&r16),
        specular_hit: Some(&r8),
        exposure: Some(&expo),
        ..full
    };
    assert_eq!(evaluate(h, e, &coded), NVSDK_NGX_Result_Success);
    {
        let s = seen.lock().unwrap_or_else(|e| e.into_inner());
        let i = s.evals.last().expect("the coded frame reached the backend");
        for (g, f) in [
            (Guide::Depth, vk::Format::D24_UNORM_S8_UINT),
            (Guide::Normals, vk::Format::R8G8B8A8_SNORM),
            (Guide::Roughness, vk::Format::R16_UNORM),
            (Guide::SpecularHitDistance, vk::Format::R8_UNORM),
            (Guide::Exposure, vk::Format::R16_UNORM),
        ] {
            assert_eq!(i.get(g).map(|img| img.format), Some(f), "{g:?}");
        }
        let r = i.get(Guide::Exposure).expect("exposure").rect;
        assert_eq!((r.x, r.y, r.width, r.height), (0, 0, 1, 1));
    }
    assert_eq!(
        // SAFETY: the live handle, released once.
        unsafe { NVSDK_NGX_VULKAN_ReleaseFeature(h) },
        NVSDK_NGX_Result_Success
    );
    assert_eq!(seen.lock().unwrap_or_else(|e| e.into_inner()).releases, 1);
    destroy(e);
    destroy(p);
    shutdown();
    restore_builtin();
    std::env::remove_var("OPENNGX_RR_MODEL_DIR");
    let _ = std::fs::remove_dir_all(&dir);
}
