//! The C-visible types and constants of the NGX Vulkan ABI (spec `ngx-abi.md` §1, §5, §6).
//!
//! cbindgen turns this file (plus `exports.rs` and `param_exports.rs`) into `include/openngx.h`.
//! C enums are 4-byte integers whose values callers may pick freely, so every enum is a `u32`
//! typedef plus constants — never a Rust enum read from C. Vulkan types are aliases of `ash`
//! types named like the Vulkan C names; cbindgen is told not to emit them (the header includes
//! `<vulkan/vulkan.h>`). `NVSDK_NGX_Parameter`, `NVSDK_NGX_Result`, the D3D resource types and
//! the C++ progress-callback typedef are written by hand in the header prologue (cbindgen.toml),
//! because the parameter object is a C++ abstract class there.
//!
//! Nothing here owns state; layouts are checked by the tests at the bottom.

use std::os::raw::{c_char, c_uint, c_ulonglong, c_void};

use ash::vk;

// ---------------------------------------------------------------------------------------------
// Vulkan and platform aliases (excluded from the header; <vulkan/vulkan.h> / <wchar.h> define them)

/// `VkInstance`.
pub type VkInstance = vk::Instance;
/// `VkPhysicalDevice`.
pub type VkPhysicalDevice = vk::PhysicalDevice;
/// `VkDevice`.
pub type VkDevice = vk::Device;
/// `VkCommandBuffer`.
pub type VkCommandBuffer = vk::CommandBuffer;
/// `VkImage` (non-dispatchable, 64-bit).
pub type VkImage = vk::Image;
/// `VkImageView` (non-dispatchable, 64-bit).
pub type VkImageView = vk::ImageView;
/// `VkBuffer` (non-dispatchable, 64-bit).
pub type VkBuffer = vk::Buffer;
/// `VkFormat` (a 32-bit C enum).
pub type VkFormat = vk::Format;
/// `VkImageSubresourceRange`.
pub type VkImageSubresourceRange = vk::ImageSubresourceRange;
/// `VkExtensionProperties`.
pub type VkExtensionProperties = vk::ExtensionProperties;
/// `PFN_vkGetInstanceProcAddr` (nullable).
pub type PFN_vkGetInstanceProcAddr = Option<vk::PFN_vkGetInstanceProcAddr>;
/// `PFN_vkGetDeviceProcAddr` (nullable).
pub type PFN_vkGetDeviceProcAddr = Option<vk::PFN_vkGetDeviceProcAddr>;
/// `wchar_t`: 32-bit (UTF-32) on Linux, 16-bit (UTF-16) on Windows.
pub type wchar_t = libc::wchar_t;

// ---------------------------------------------------------------------------------------------
// Opaque / hand-declared types

/// The parameter object. In C++ an abstract class whose only data is the vtable pointer at
/// offset 0 (17 virtual slots, see `params.rs`); in C an opaque struct. Declared by hand in the
/// header prologue.
#[repr(C)]
pub struct NVSDK_NGX_Parameter {
    /// Pointer to the first virtual slot (Itanium order on Linux).
    pub vtable: *const c_void,
}

/// Opaque D3D11 resource (only ever passed through as a pointer on Vulkan).
#[repr(C)]
pub struct ID3D11Resource {
    _opaque: [u8; 0],
}

/// Opaque D3D12 resource (only ever passed through as a pointer on Vulkan).
#[repr(C)]
pub struct ID3D12Resource {
    _opaque: [u8; 0],
}

/// Opaque internal data of `NVSDK_NGX_FeatureCommonInfo` (never read).
pub struct NVSDK_NGX_FeatureCommonInfo_Internal {
    _opaque: [u8; 0],
}

/// The result code every entry point returns (a C enum whose values exceed `INT_MAX`).
pub type NVSDK_NGX_Result = u32;

// ---------------------------------------------------------------------------------------------
// Result codes (ngx-abi.md §6). `NVSDK_NGX_FAILED(v)` <=> `(v & 0xFFF00000) == 0xBAD00000`.

/// The call succeeded.
pub const NVSDK_NGX_Result_Success: NVSDK_NGX_Result = 0x1u32;
/// Generic failure (also: a parameter key is missing on Get).
pub const NVSDK_NGX_Result_Fail: NVSDK_NGX_Result = 0xBAD00000u32;
/// The feature id is not one this library implements.
pub const NVSDK_NGX_Result_FAIL_FeatureNotSupported: NVSDK_NGX_Result = 0xBAD00001u32;
/// A platform (Vulkan/OS) call failed.
pub const NVSDK_NGX_Result_FAIL_PlatformError: NVSDK_NGX_Result = 0xBAD00002u32;
/// The feature already exists.
pub const NVSDK_NGX_Result_FAIL_FeatureAlreadyExists: NVSDK_NGX_Result = 0xBAD00003u32;
/// The handle does not name a live feature (never created, or already released).
pub const NVSDK_NGX_Result_FAIL_FeatureNotFound: NVSDK_NGX_Result = 0xBAD00004u32;
/// A pointer is NULL or a parameter value is invalid.
pub const NVSDK_NGX_Result_FAIL_InvalidParameter: NVSDK_NGX_Result = 0xBAD00005u32;
/// The scratch buffer is too small.
pub const NVSDK_NGX_Result_FAIL_ScratchBufferTooSmall: NVSDK_NGX_Result = 0xBAD00006u32;
/// Init has not been called (or Shutdown already was) for this device.
pub const NVSDK_NGX_Result_FAIL_NotInitialized: NVSDK_NGX_Result = 0xBAD00007u32;
/// An input resource has a format the feature cannot read.
pub const NVSDK_NGX_Result_FAIL_UnsupportedInputFormat: NVSDK_NGX_Result = 0xBAD00008u32;
/// The output resource is not marked read-write (storage).
pub const NVSDK_NGX_Result_FAIL_RWFlagMissing: NVSDK_NGX_Result = 0xBAD00009u32;
/// A required input resource is missing.
pub const NVSDK_NGX_Result_FAIL_MissingInput: NVSDK_NGX_Result = 0xBAD0000Au32;
/// The feature could not be initialised (e.g. no usable model directory).
pub const NVSDK_NGX_Result_FAIL_UnableToInitializeFeature: NVSDK_NGX_Result = 0xBAD0000Bu32;
/// The SDK version passed to Init is too old.
pub const NVSDK_NGX_Result_FAIL_OutOfDate: NVSDK_NGX_Result = 0xBAD0000Cu32;
/// GPU memory ran out.
pub const NVSDK_NGX_Result_FAIL_OutOfGPUMemory: NVSDK_NGX_Result = 0xBAD0000Du32;
/// The output resource has a format the feature cannot write.
pub const NVSDK_NGX_Result_FAIL_UnsupportedFormat: NVSDK_NGX_Result = 0xBAD0000Eu32;
/// The application data path is not writable.
pub const NVSDK_NGX_Result_FAIL_UnableToWriteToAppDataPath: NVSDK_NGX_Result = 0xBAD0000Fu32;
/// A parameter is recognised but its value/presence is not supported by this implementation.
pub const NVSDK_NGX_Result_FAIL_UnsupportedParameter: NVSDK_NGX_Result = 0xBAD00010u32;
/// The feature is denied for this application.
pub const NVSDK_NGX_Result_FAIL_Denied: NVSDK_NGX_Result = 0xBAD00011u32;
/// The functionality is not implemented (here: no backend for the feature is built in).
pub const NVSDK_NGX_Result_FAIL_NotImplemented: NVSDK_NGX_Result = 0xBAD00012u32;

// ---------------------------------------------------------------------------------------------
// NVSDK_NGX_Version

/// `NVSDK_NGX_Version` (C enum).
pub type NVSDK_NGX_Version = u32;
/// The API version of the 310.1 SDK (logging callback since 0x14, `Shutdown1` since 0x15).
pub const NVSDK_NGX_Version_API: NVSDK_NGX_Version = 0x15;

/// Oldest `InSDKVersion` Init accepts (older ones get `FAIL_OutOfDate`).
pub const OPENNGX_MIN_SDK_VERSION: NVSDK_NGX_Version = 0x13;

// ---------------------------------------------------------------------------------------------
// NVSDK_NGX_Feature

/// `NVSDK_NGX_Feature` (C enum; any integer may arrive).
pub type NVSDK_NGX_Feature = u32;
/// Reserved0.
pub const NVSDK_NGX_Feature_Reserved0: NVSDK_NGX_Feature = 0;
/// DLSS super resolution.
pub const NVSDK_NGX_Feature_SuperSampling: NVSDK_NGX_Feature = 1;
/// InPainting.
pub const NVSDK_NGX_Feature_InPainting: NVSDK_NGX_Feature = 2;
/// ImageSuperResolution.
pub const NVSDK_NGX_Feature_ImageSuperResolution: NVSDK_NGX_Feature = 3;
/// SlowMotion.
pub const NVSDK_NGX_Feature_SlowMotion: NVSDK_NGX_Feature = 4;
/// VideoSuperResolution.
pub const NVSDK_NGX_Feature_VideoSuperResolution: NVSDK_NGX_Feature = 5;
/// ImageSignalProcessing.
pub const NVSDK_NGX_Feature_ImageSignalProcessing: NVSDK_NGX_Feature = 9;
/// DeepResolve.
pub const NVSDK_NGX_Feature_DeepResolve: NVSDK_NGX_Feature = 10;
/// Frame generation.
pub const NVSDK_NGX_Feature_FrameGeneration: NVSDK_NGX_Feature = 11;
/// DeepDVC.
pub const NVSDK_NGX_Feature_DeepDVC: NVSDK_NGX_Feature = 12;
/// Ray reconstruction (DLSS-D).
pub const NVSDK_NGX_Feature_RayReconstruction: NVSDK_NGX_Feature = 13;
/// Feature 18: DLSS neural rendering ("DLSS-NR"), the feature this library implements.
pub const NVSDK_NGX_Feature_Reserved18: NVSDK_NGX_Feature = 18;
/// Reserved for the SDK (also the source component of library log messages).
pub const NVSDK_NGX_Feature_Reserved_SDK: NVSDK_NGX_Feature = 32764;
/// Reserved for the core.
pub const NVSDK_NGX_Feature_Reserved_Core: NVSDK_NGX_Feature = 32765;
/// Unknown.
pub const NVSDK_NGX_Feature_Reserved_Unknown: NVSDK_NGX_Feature = 32766;

// ---------------------------------------------------------------------------------------------
// Other enums

/// `NVSDK_NGX_PerfQuality_Value` (C enum).
pub type NVSDK_NGX_PerfQuality_Value = u32;
/// Performance.
pub const NVSDK_NGX_PerfQuality_Value_MaxPerf: NVSDK_NGX_PerfQuality_Value = 0;
/// Balanced.
pub const NVSDK_NGX_PerfQuality_Value_Balanced: NVSDK_NGX_PerfQuality_Value = 1;
/// Quality.
pub const NVSDK_NGX_PerfQuality_Value_MaxQuality: NVSDK_NGX_PerfQuality_Value = 2;
/// Ultra performance (refused by the DLSS-NR scaling-ratio callback).
pub const NVSDK_NGX_PerfQuality_Value_UltraPerformance: NVSDK_NGX_PerfQuality_Value = 3;
/// Ultra quality.
pub const NVSDK_NGX_PerfQuality_Value_UltraQuality: NVSDK_NGX_PerfQuality_Value = 4;
/// DLAA.
pub const NVSDK_NGX_PerfQuality_Value_DLAA: NVSDK_NGX_PerfQuality_Value = 5;

/// `NVSDK_NGX_DLSS_Feature_Flags` (C enum of bits; `DLSS.Feature.Create.Flags`, written with
/// SetI). `IsInvalid` (bit 31) is left out of the header: a negative `#define` in C is a trap.
pub type NVSDK_NGX_DLSS_Feature_Flags = i32;
/// No flag.
pub const NVSDK_NGX_DLSS_Feature_Flags_None: NVSDK_NGX_DLSS_Feature_Flags = 0;
/// Colour is linear HDR.
pub const NVSDK_NGX_DLSS_Feature_Flags_IsHDR: NVSDK_NGX_DLSS_Feature_Flags = 1 << 0;
/// Motion vectors at render resolution.
pub const NVSDK_NGX_DLSS_Feature_Flags_MVLowRes: NVSDK_NGX_DLSS_Feature_Flags = 1 << 1;
/// Motion vectors include the jitter.
pub const NVSDK_NGX_DLSS_Feature_Flags_MVJittered: NVSDK_NGX_DLSS_Feature_Flags = 1 << 2;
/// Depth is 1 near, 0 far.
pub const NVSDK_NGX_DLSS_Feature_Flags_DepthInverted: NVSDK_NGX_DLSS_Feature_Flags = 1 << 3;
/// Reserved.
pub const NVSDK_NGX_DLSS_Feature_Flags_Reserved_0: NVSDK_NGX_DLSS_Feature_Flags = 1 << 4;
/// Sharpening (deprecated; RR has none).
pub const NVSDK_NGX_DLSS_Feature_Flags_DoSharpening: NVSDK_NGX_DLSS_Feature_Flags = 1 << 5;
/// The feature computes the exposure.
pub const NVSDK_NGX_DLSS_Feature_Flags_AutoExposure: NVSDK_NGX_DLSS_Feature_Flags = 1 << 6;
/// Alpha upscaling.
pub const NVSDK_NGX_DLSS_Feature_Flags_AlphaUpscaling: NVSDK_NGX_DLSS_Feature_Flags = 1 << 7;

/// `NVSDK_NGX_DLSS_Denoise_Mode` (`DLSS.Denoise.Mode`, SetI).
pub type NVSDK_NGX_DLSS_Denoise_Mode = i32;
/// Off.
pub const NVSDK_NGX_DLSS_Denoise_Mode_Off: NVSDK_NGX_DLSS_Denoise_Mode = 0;
/// The unified denoiser (the only mode; the SDK's helper always writes it).
pub const NVSDK_NGX_DLSS_Denoise_Mode_DLUnified: NVSDK_NGX_DLSS_Denoise_Mode = 1;

/// `NVSDK_NGX_DLSS_Roughness_Mode` (`DLSS.Roughness.Mode`, SetUI).
pub type NVSDK_NGX_DLSS_Roughness_Mode = u32;
/// A separate roughness image.
pub const NVSDK_NGX_DLSS_Roughness_Mode_Unpacked: NVSDK_NGX_DLSS_Roughness_Mode = 0;
/// Roughness in the normals' w.
pub const NVSDK_NGX_DLSS_Roughness_Mode_Packed: NVSDK_NGX_DLSS_Roughness_Mode = 1;

/// `NVSDK_NGX_DLSS_Depth_Type` (`DLSS.Use.HW.Depth`, SetUI).
pub type NVSDK_NGX_DLSS_Depth_Type = u32;
/// Linear view-space depth.
pub const NVSDK_NGX_DLSS_Depth_Type_Linear: NVSDK_NGX_DLSS_Depth_Type = 0;
/// Hardware depth.
pub const NVSDK_NGX_DLSS_Depth_Type_HW: NVSDK_NGX_DLSS_Depth_Type = 1;

/// `NVSDK_NGX_RayReconstruction_Hint_Render_Preset` (`RayReconstruction.Hint.Render.Preset.*`,
/// SetUI): the values feature 13 accepts (Default means E here).
pub type NVSDK_NGX_RayReconstruction_Hint_Render_Preset = u32;
/// The default (E).
pub const NVSDK_NGX_RayReconstruction_Hint_Render_Preset_Default:
    NVSDK_NGX_RayReconstruction_Hint_Render_Preset = 0;
/// Preset D.
pub const NVSDK_NGX_RayReconstruction_Hint_Render_Preset_D:
    NVSDK_NGX_RayReconstruction_Hint_Render_Preset = 4;
/// Preset E.
pub const NVSDK_NGX_RayReconstruction_Hint_Render_Preset_E:
    NVSDK_NGX_RayReconstruction_Hint_Render_Preset = 5;

/// `NVSDK_NGX_Logging_Level` (C enum).
pub type NVSDK_NGX_Logging_Level = u32;
/// No messages.
pub const NVSDK_NGX_LOGGING_LEVEL_OFF: NVSDK_NGX_Logging_Level = 0;
/// Errors, warnings and lifecycle messages.
pub const NVSDK_NGX_LOGGING_LEVEL_ON: NVSDK_NGX_Logging_Level = 1;
/// Everything, including per-call detail.
pub const NVSDK_NGX_LOGGING_LEVEL_VERBOSE: NVSDK_NGX_Logging_Level = 2;
/// Count.
pub const NVSDK_NGX_LOGGING_LEVEL_NUM: NVSDK_NGX_Logging_Level = 3;

/// `NVSDK_NGX_EngineType` (C enum).
pub type NVSDK_NGX_EngineType = u32;
/// Custom engine.
pub const NVSDK_NGX_ENGINE_TYPE_CUSTOM: NVSDK_NGX_EngineType = 0;
/// Unreal.
pub const NVSDK_NGX_ENGINE_TYPE_UNREAL: NVSDK_NGX_EngineType = 1;
/// Unity.
pub const NVSDK_NGX_ENGINE_TYPE_UNITY: NVSDK_NGX_EngineType = 2;
/// Omniverse.
pub const NVSDK_NGX_ENGINE_TYPE_OMNIVERSE: NVSDK_NGX_EngineType = 3;
/// Count.
pub const NVSDK_NGX_ENGINE_COUNT: NVSDK_NGX_EngineType = 4;

/// `NVSDK_NGX_Application_Identifier_Type` (C enum).
pub type NVSDK_NGX_Application_Identifier_Type = u32;
/// `v.ApplicationId` is valid.
pub const NVSDK_NGX_Application_Identifier_Type_Application_Id:
    NVSDK_NGX_Application_Identifier_Type = 0;
/// `v.ProjectDesc` is valid.
pub const NVSDK_NGX_Application_Identifier_Type_Project_Id: NVSDK_NGX_Application_Identifier_Type =
    1;

/// `NVSDK_NGX_Feature_Support_Result` (bit field, 0 = supported).
pub type NVSDK_NGX_Feature_Support_Result = u32;
/// Supported.
pub const NVSDK_NGX_FeatureSupportResult_Supported: NVSDK_NGX_Feature_Support_Result = 0;
/// The check could not be made.
pub const NVSDK_NGX_FeatureSupportResult_CheckNotPresent: NVSDK_NGX_Feature_Support_Result = 1;
/// The driver is too old.
pub const NVSDK_NGX_FeatureSupportResult_DriverVersionUnsupported:
    NVSDK_NGX_Feature_Support_Result = 2;
/// The adapter cannot run the feature.
pub const NVSDK_NGX_FeatureSupportResult_AdapterUnsupported: NVSDK_NGX_Feature_Support_Result = 4;
/// The OS is too old.
pub const NVSDK_NGX_FeatureSupportResult_OSVersionBelowMinimumSupported:
    NVSDK_NGX_Feature_Support_Result = 8;
/// The feature is not implemented (here: unknown id, or no backend built in).
pub const NVSDK_NGX_FeatureSupportResult_NotImplemented: NVSDK_NGX_Feature_Support_Result = 16;

/// `NVSDK_NGX_Resource_VK_Type` (C enum).
pub type NVSDK_NGX_Resource_VK_Type = u32;
/// `Resource.ImageViewInfo` is valid (the only kind features accept).
pub const NVSDK_NGX_RESOURCE_VK_TYPE_VK_IMAGEVIEW: NVSDK_NGX_Resource_VK_Type = 0;
/// `Resource.BufferInfo` is valid.
pub const NVSDK_NGX_RESOURCE_VK_TYPE_VK_BUFFER: NVSDK_NGX_Resource_VK_Type = 1;

/// `NVSDK_NGX_Opt_Level` (C enum).
pub type NVSDK_NGX_Opt_Level = u32;
/// Undefined.
pub const NVSDK_NGX_OPT_LEVEL_UNDEFINED: NVSDK_NGX_Opt_Level = 0;
/// Debug.
pub const NVSDK_NGX_OPT_LEVEL_DEBUG: NVSDK_NGX_Opt_Level = 20;
/// Develop.
pub const NVSDK_NGX_OPT_LEVEL_DEVELOP: NVSDK_NGX_Opt_Level = 30;
/// Release (what the stats callback reports).
pub const NVSDK_NGX_OPT_LEVEL_RELEASE: NVSDK_NGX_Opt_Level = 40;

// ---------------------------------------------------------------------------------------------
// Callbacks

/// Application log sink: `message` is valid only during the call; may be called from any thread.
pub type NVSDK_NGX_AppLogCallback = Option<
    unsafe extern "C" fn(
        message: *const c_char,
        loggingLevel: NVSDK_NGX_Logging_Level,
        sourceComponent: NVSDK_NGX_Feature,
    ),
>;

/// C progress callback of `EvaluateFeature_C` (never called by this library: evaluation only
/// records commands).
pub type PFN_NVSDK_NGX_ProgressCallback_C =
    Option<unsafe extern "C" fn(InCurrentProgress: f32, OutShouldCancel: *mut bool)>;

/// C++ progress callback of `EvaluateFeature` (`void (float, bool &)`; a reference is a pointer at
/// the ABI level). Declared by hand in the header so C++ sees the reference form.
pub type PFN_NVSDK_NGX_ProgressCallback =
    Option<unsafe extern "C" fn(InCurrentProgress: f32, OutShouldCancel: *mut bool)>;

/// Callback stored in capability maps under `DLSSNRGetStatsCallback` (and the DLSS equivalents):
/// writes `SizeInBytes` (ULL), `"#\x44"` (opt level, UI) and `"#\x45"` (dev branch, UI).
pub type PFN_NVSDK_NGX_DLSS_GetStatsCallback =
    Option<unsafe extern "C" fn(InParams: *mut NVSDK_NGX_Parameter) -> NVSDK_NGX_Result>;

/// Callback stored in capability maps under `DLSSDOptimalSettingsCallback` (feature 13): reads
/// `Width`, `Height` (display size, UI) and `PerfQualityValue` (I), writes `OutWidth`,
/// `OutHeight` (render size, UI), the `DLSS.Get.Dynamic.{Max,Min}.Render.{Width,Height}` bounds
/// (UI) and `Sharpness` (F).
pub type PFN_NVSDK_NGX_DLSS_GetOptimalSettingsCallback =
    Option<unsafe extern "C" fn(InParams: *mut NVSDK_NGX_Parameter) -> NVSDK_NGX_Result>;

/// Callback stored under `DLSSNRComputeScalingRatioCallback`: reads `PerfQualityValue`, writes
/// `DLSSNR.ScalingRatio` (F).
pub type PFN_NVSDK_NGX_DLSSNR_ComputeScalingRatioCallback =
    Option<unsafe extern "C" fn(InParams: *mut NVSDK_NGX_Parameter) -> NVSDK_NGX_Result>;

// ---------------------------------------------------------------------------------------------
// Structs (x86-64 layout, ngx-abi.md §5)

/// A feature handle. The memory is owned by the library; the pointer is valid from CreateFeature
/// until ReleaseFeature (or Shutdown).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NVSDK_NGX_Handle {
    /// Unique, never reused within a process.
    pub Id: c_uint,
}

/// An image view with the facts the library cannot query from Vulkan itself. 48 bytes.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct NVSDK_NGX_ImageViewInfo_VK {
    /// The view to read/write.
    pub ImageView: VkImageView,
    /// The image the view belongs to.
    pub Image: VkImage,
    /// The subresource the view covers.
    pub SubresourceRange: VkImageSubresourceRange,
    /// The view's format.
    pub Format: VkFormat,
    /// Image width in pixels.
    pub Width: c_uint,
    /// Image height in pixels.
    pub Height: c_uint,
}

/// A buffer. 16 bytes.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct NVSDK_NGX_BufferInfo_VK {
    /// The buffer.
    pub Buffer: VkBuffer,
    /// Its size.
    pub SizeInBytes: c_uint,
}

/// The union inside `NVSDK_NGX_Resource_VK` (anonymous in NVIDIA's header; same layout).
#[repr(C)]
#[derive(Clone, Copy)]
pub union NVSDK_NGX_Resource_VK_Resource {
    /// Valid when `Type == NVSDK_NGX_RESOURCE_VK_TYPE_VK_IMAGEVIEW`.
    pub ImageViewInfo: NVSDK_NGX_ImageViewInfo_VK,
    /// Valid when `Type == NVSDK_NGX_RESOURCE_VK_TYPE_VK_BUFFER`.
    pub BufferInfo: NVSDK_NGX_BufferInfo_VK,
}

/// A Vulkan resource passed to a feature with `SetVoidPointer`. 56 bytes. The library copies it
/// during the call and keeps no pointer to it.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct NVSDK_NGX_Resource_VK {
    /// The view or buffer.
    pub Resource: NVSDK_NGX_Resource_VK_Resource,
    /// Which union member is valid.
    pub Type: NVSDK_NGX_Resource_VK_Type,
    /// True when the image has `VK_IMAGE_USAGE_STORAGE_BIT` (required for outputs).
    pub ReadWrite: bool,
}

/// Extra search paths (`Path[0..Length]`, wide strings).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct NVSDK_NGX_PathListInfo {
    /// Array of `Length` wide-string pointers.
    pub Path: *const *const wchar_t,
    /// Number of entries.
    pub Length: c_uint,
}

/// Application logging (read when the SDK version passed to Init is >= 0x14).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct NVSDK_NGX_LoggingInfo {
    /// Receives every library message up to `MinimumLoggingLevel`.
    pub LoggingCallback: NVSDK_NGX_AppLogCallback,
    /// Highest level delivered to the callback.
    pub MinimumLoggingLevel: NVSDK_NGX_Logging_Level,
    /// When true, messages go only to the callback (not to stderr even if `OPENNGX_LOG` is set).
    pub DisableOtherLoggingSinks: bool,
}

/// Common feature information passed to Init. 40 bytes.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct NVSDK_NGX_FeatureCommonInfo {
    /// Extra search paths (each is also searched for `openngx-model/`).
    pub PathListInfo: NVSDK_NGX_PathListInfo,
    /// Never read.
    pub InternalData: *mut NVSDK_NGX_FeatureCommonInfo_Internal,
    /// Logging callback (API >= 0x14).
    pub LoggingInfo: NVSDK_NGX_LoggingInfo,
}

/// Project id, engine type and engine version. 24 bytes.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct NVSDK_NGX_ProjectIdDescription {
    /// Project id (GUID-like for custom engines).
    pub ProjectId: *const c_char,
    /// Engine type.
    pub EngineType: NVSDK_NGX_EngineType,
    /// Engine version string.
    pub EngineVersion: *const c_char,
}

/// The union inside `NVSDK_NGX_Application_Identifier` (named `v` in the struct).
#[repr(C)]
#[derive(Clone, Copy)]
pub union NVSDK_NGX_Application_Identifier_v {
    /// Valid for `Project_Id`.
    pub ProjectDesc: NVSDK_NGX_ProjectIdDescription,
    /// Valid for `Application_Id`.
    pub ApplicationId: c_ulonglong,
}

/// Application identity. 32 bytes.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct NVSDK_NGX_Application_Identifier {
    /// Which member of `v` is valid.
    pub IdentifierType: NVSDK_NGX_Application_Identifier_Type,
    /// Project description or application id.
    pub v: NVSDK_NGX_Application_Identifier_v,
}

/// Input of the feature-discovery queries. 56 bytes.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct NVSDK_NGX_FeatureDiscoveryInfo {
    /// SDK version of the caller.
    pub SDKVersion: NVSDK_NGX_Version,
    /// The feature asked about.
    pub FeatureID: NVSDK_NGX_Feature,
    /// Application identity.
    pub Identifier: NVSDK_NGX_Application_Identifier,
    /// Application data path (wide string).
    pub ApplicationDataPath: *const wchar_t,
    /// Optional common info.
    pub FeatureInfo: *const NVSDK_NGX_FeatureCommonInfo,
}

/// Output of `NVSDK_NGX_VULKAN_GetFeatureRequirements`. 264 bytes.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct NVSDK_NGX_FeatureRequirement {
    /// Bit field, 0 = supported.
    pub FeatureSupported: NVSDK_NGX_Feature_Support_Result,
    /// Minimum GPU architecture (0: any Vulkan 1.2 device with the needed features).
    pub MinHWArchitecture: c_uint,
    /// Minimum OS version (NUL-terminated; empty: none).
    pub MinOSVersion: [c_char; 255],
}

/// A pixel coordinate.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NVSDK_NGX_Coordinates {
    /// Column.
    pub X: c_uint,
    /// Row.
    pub Y: c_uint,
}

/// A size in pixels.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NVSDK_NGX_Dimensions {
    /// Width.
    pub Width: c_uint,
    /// Height.
    pub Height: c_uint,
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{offset_of, size_of};

    #[test]
    fn struct_layouts_match_the_x86_64_abi() {
        assert_eq!(size_of::<NVSDK_NGX_ImageViewInfo_VK>(), 48);
        assert_eq!(offset_of!(NVSDK_NGX_ImageViewInfo_VK, SubresourceRange), 16);
        assert_eq!(offset_of!(NVSDK_NGX_ImageViewInfo_VK, Format), 36);
        assert_eq!(offset_of!(NVSDK_NGX_ImageViewInfo_VK, Width), 40);
        assert_eq!(offset_of!(NVSDK_NGX_ImageViewInfo_VK, Height), 44);
        assert_eq!(size_of::<NVSDK_NGX_BufferInfo_VK>(), 16);
        assert_eq!(size_of::<NVSDK_NGX_Resource_VK>(), 56);
        assert_eq!(offset_of!(NVSDK_NGX_Resource_VK, Type), 48);
        assert_eq!(offset_of!(NVSDK_NGX_Resource_VK, ReadWrite), 52);
        assert_eq!(size_of::<NVSDK_NGX_PathListInfo>(), 16);
        assert_eq!(size_of::<NVSDK_NGX_LoggingInfo>(), 16);
        assert_eq!(offset_of!(NVSDK_NGX_LoggingInfo, MinimumLoggingLevel), 8);
        assert_eq!(
            offset_of!(NVSDK_NGX_LoggingInfo, DisableOtherLoggingSinks),
            12
        );
        assert_eq!(size_of::<NVSDK_NGX_FeatureCommonInfo>(), 40);
        assert_eq!(offset_of!(NVSDK_NGX_FeatureCommonInfo, InternalData), 16);
        assert_eq!(offset_of!(NVSDK_NGX_FeatureCommonInfo, LoggingInfo), 24);
        assert_eq!(size_of::<NVSDK_NGX_ProjectIdDescription>(), 24);
        assert_eq!(size_of::<NVSDK_NGX_Application_Identifier>(), 32);
        assert_eq!(offset_of!(NVSDK_NGX_Application_Identifier, v), 8);
        assert_eq!(size_of::<NVSDK_NGX_FeatureDiscoveryInfo>(), 56);
        assert_eq!(
            offset_of!(NVSDK_NGX_FeatureDiscoveryInfo, ApplicationDataPath),
            40
        );
        assert_eq!(offset_of!(NVSDK_NGX_FeatureDiscoveryInfo, FeatureInfo), 48);
        assert_eq!(size_of::<NVSDK_NGX_FeatureRequirement>(), 264);
        assert_eq!(offset_of!(NVSDK_NGX_FeatureRequirement, MinOSVersion), 8);
        assert_eq!(size_of::<NVSDK_NGX_Handle>(), 4);
        assert_eq!(size_of::<NVSDK_NGX_Parameter>(), 8);
    }

    #[test]
    fn failure_codes_satisfy_the_sdk_failed_macro() {
        let failed = |v: u32| (v & 0xFFF0_0000) == 0xBAD0_0000;
        assert!(!failed(NVSDK_NGX_Result_Success));
        for code in [
            NVSDK_NGX_Result_Fail,
            NVSDK_NGX_Result_FAIL_FeatureNotSupported,
            NVSDK_NGX_Result_FAIL_InvalidParameter,
            NVSDK_NGX_Result_FAIL_NotImplemented,
        ] {
            assert!(failed(code), "{code:#x}");
        }
    }
}
