//! The `#[no_mangle]` symbols of the NGX Core, `libnvidia-ngx.so.1` (ngx-abi.md §3.3): exactly
//! the names NVIDIA's static library resolves with `dlsym`, with the Core's signatures. Compiled
//! only into the Core (`core/`, `--cfg openngx_core`); `libopenngx.so` never contains them,
//! since it exports the public functions of the same names.
//!
//! Nothing here has a body of its own beyond a verbose trace line (`core_abi::trace`, which
//! shows which Core function the static library chose): the functions whose signature differs
//! from the public one call `core_abi`, the others forward to the public function's Rust body in
//! `exports` (whose `#[no_mangle]` is off in this build). Both paths run behind `guard`, so no panic
//! reaches C. The parameter accessors `NVSDK_NGX_Parameter_*` are not here: the static
//! library exports them itself and calls through the object's vtable.

use std::os::raw::{c_char, c_uint, c_ulonglong};

use super::abi::*;
use super::{core_abi, exports};

/// Core `Init`: `(AppId, Path, Instance, PD, Device, Version)`.
///
/// # Safety
/// Pointer arguments must be NULL or valid for the duration of the call.
#[no_mangle]
pub unsafe extern "C" fn NVSDK_NGX_VULKAN_Init(
    InApplicationId: c_ulonglong,
    InApplicationDataPath: *const wchar_t,
    InInstance: VkInstance,
    InPD: VkPhysicalDevice,
    InDevice: VkDevice,
    InSDKVersion: NVSDK_NGX_Version,
) -> NVSDK_NGX_Result {
    core_abi::trace("NVSDK_NGX_VULKAN_Init");
    // SAFETY: forwarded contract.
    unsafe {
        core_abi::init(
            InApplicationId,
            InApplicationDataPath,
            InInstance,
            InPD,
            InDevice,
            InSDKVersion,
        )
    }
}

/// Core `Init_Ext`: `Init` plus the feature info, after the version.
///
/// # Safety
/// Pointer arguments must be NULL or valid for the duration of the call.
#[no_mangle]
pub unsafe extern "C" fn NVSDK_NGX_VULKAN_Init_Ext(
    InApplicationId: c_ulonglong,
    InApplicationDataPath: *const wchar_t,
    InInstance: VkInstance,
    InPD: VkPhysicalDevice,
    InDevice: VkDevice,
    InSDKVersion: NVSDK_NGX_Version,
    InFeatureInfo: *const NVSDK_NGX_FeatureCommonInfo,
) -> NVSDK_NGX_Result {
    core_abi::trace("NVSDK_NGX_VULKAN_Init_Ext");
    // SAFETY: forwarded contract.
    unsafe {
        core_abi::init_ext(
            InApplicationId,
            InApplicationDataPath,
            InInstance,
            InPD,
            InDevice,
            InSDKVersion,
            InFeatureInfo,
        )
    }
}

/// Core `Init_Ext2`: the public `Init`'s arguments with the version before the feature info.
///
/// # Safety
/// Pointer arguments must be NULL or valid for the duration of the call.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn NVSDK_NGX_VULKAN_Init_Ext2(
    InApplicationId: c_ulonglong,
    InApplicationDataPath: *const wchar_t,
    InInstance: VkInstance,
    InPD: VkPhysicalDevice,
    InDevice: VkDevice,
    InGIPA: PFN_vkGetInstanceProcAddr,
    InGDPA: PFN_vkGetDeviceProcAddr,
    InSDKVersion: NVSDK_NGX_Version,
    InFeatureInfo: *const NVSDK_NGX_FeatureCommonInfo,
) -> NVSDK_NGX_Result {
    core_abi::trace("NVSDK_NGX_VULKAN_Init_Ext2");
    // SAFETY: forwarded contract.
    unsafe {
        core_abi::init_ext2(
            InApplicationId,
            InApplicationDataPath,
            InInstance,
            InPD,
            InDevice,
            InGIPA,
            InGDPA,
            InSDKVersion,
            InFeatureInfo,
        )
    }
}

/// Core `Init_ProjectID`: project id, engine, then as `Init_Ext`.
///
/// # Safety
/// Pointer arguments must be NULL or valid for the duration of the call.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn NVSDK_NGX_VULKAN_Init_ProjectID(
    InProjectId: *const c_char,
    InEngineType: NVSDK_NGX_EngineType,
    InEngineVersion: *const c_char,
    InApplicationDataPath: *const wchar_t,
    InInstance: VkInstance,
    InPD: VkPhysicalDevice,
    InDevice: VkDevice,
    InSDKVersion: NVSDK_NGX_Version,
    InFeatureInfo: *const NVSDK_NGX_FeatureCommonInfo,
) -> NVSDK_NGX_Result {
    core_abi::trace("NVSDK_NGX_VULKAN_Init_ProjectID");
    // SAFETY: forwarded contract.
    unsafe {
        core_abi::init_project_id(
            InProjectId,
            InEngineType,
            InEngineVersion,
            InApplicationDataPath,
            InInstance,
            InPD,
            InDevice,
            InSDKVersion,
            InFeatureInfo,
        )
    }
}

/// Core `Init_ProjectID_Ext`: project id, engine, then as `Init_Ext2`.
///
/// # Safety
/// Pointer arguments must be NULL or valid for the duration of the call.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn NVSDK_NGX_VULKAN_Init_ProjectID_Ext(
    InProjectId: *const c_char,
    InEngineType: NVSDK_NGX_EngineType,
    InEngineVersion: *const c_char,
    InApplicationDataPath: *const wchar_t,
    InInstance: VkInstance,
    InPD: VkPhysicalDevice,
    InDevice: VkDevice,
    InGIPA: PFN_vkGetInstanceProcAddr,
    InGDPA: PFN_vkGetDeviceProcAddr,
    InSDKVersion: NVSDK_NGX_Version,
    InFeatureInfo: *const NVSDK_NGX_FeatureCommonInfo,
) -> NVSDK_NGX_Result {
    core_abi::trace("NVSDK_NGX_VULKAN_Init_ProjectID_Ext");
    // SAFETY: forwarded contract.
    unsafe {
        core_abi::init_project_id_ext(
            InProjectId,
            InEngineType,
            InEngineVersion,
            InApplicationDataPath,
            InInstance,
            InPD,
            InDevice,
            InGIPA,
            InGDPA,
            InSDKVersion,
            InFeatureInfo,
        )
    }
}

/// Core `Shutdown`: every device.
#[no_mangle]
pub extern "C" fn NVSDK_NGX_VULKAN_Shutdown() -> NVSDK_NGX_Result {
    core_abi::trace("NVSDK_NGX_VULKAN_Shutdown");
    core_abi::shutdown_all()
}

/// Core `Shutdown1`: one device (NULL: all), with the count of what still needs the Core.
///
/// # Safety
/// `OutRemaining` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn NVSDK_NGX_VULKAN_Shutdown1(
    InDevice: VkDevice,
    OutRemaining: *mut c_uint,
) -> NVSDK_NGX_Result {
    core_abi::trace("NVSDK_NGX_VULKAN_Shutdown1");
    // SAFETY: forwarded contract.
    unsafe { core_abi::shutdown1(InDevice, OutRemaining) }
}

/// Same as the public function.
///
/// # Safety
/// `OutParameters` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn NVSDK_NGX_VULKAN_GetParameters(
    OutParameters: *mut *mut NVSDK_NGX_Parameter,
) -> NVSDK_NGX_Result {
    core_abi::trace("NVSDK_NGX_VULKAN_GetParameters");
    // SAFETY: forwarded contract.
    unsafe { exports::NVSDK_NGX_VULKAN_GetParameters(OutParameters) }
}

/// Same as the public function.
///
/// # Safety
/// `OutParameters` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn NVSDK_NGX_VULKAN_AllocateParameters(
    OutParameters: *mut *mut NVSDK_NGX_Parameter,
) -> NVSDK_NGX_Result {
    core_abi::trace("NVSDK_NGX_VULKAN_AllocateParameters");
    // SAFETY: forwarded contract.
    unsafe { exports::NVSDK_NGX_VULKAN_AllocateParameters(OutParameters) }
}

/// Same as the public function.
///
/// # Safety
/// `OutParameters` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn NVSDK_NGX_VULKAN_GetCapabilityParameters(
    OutParameters: *mut *mut NVSDK_NGX_Parameter,
) -> NVSDK_NGX_Result {
    core_abi::trace("NVSDK_NGX_VULKAN_GetCapabilityParameters");
    // SAFETY: forwarded contract.
    unsafe { exports::NVSDK_NGX_VULKAN_GetCapabilityParameters(OutParameters) }
}

/// Same as the public function.
///
/// # Safety
/// The pointer is only compared against the registry.
#[no_mangle]
pub unsafe extern "C" fn NVSDK_NGX_VULKAN_DestroyParameters(
    InParameters: *mut NVSDK_NGX_Parameter,
) -> NVSDK_NGX_Result {
    core_abi::trace("NVSDK_NGX_VULKAN_DestroyParameters");
    // SAFETY: forwarded contract.
    unsafe { exports::NVSDK_NGX_VULKAN_DestroyParameters(InParameters) }
}

/// Same as the public function.
///
/// # Safety
/// `OutSizeInBytes` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn NVSDK_NGX_VULKAN_GetScratchBufferSize(
    InFeatureId: NVSDK_NGX_Feature,
    InParameters: *const NVSDK_NGX_Parameter,
    OutSizeInBytes: *mut usize,
) -> NVSDK_NGX_Result {
    core_abi::trace("NVSDK_NGX_VULKAN_GetScratchBufferSize");
    // SAFETY: forwarded contract.
    unsafe {
        exports::NVSDK_NGX_VULKAN_GetScratchBufferSize(InFeatureId, InParameters, OutSizeInBytes)
    }
}

/// Same as the public function (the static library has rewritten the preset hints before;
/// feature 18 reads a bit-31-tagged preset as "no choice", docs/ngx.md).
///
/// # Safety
/// Pointer arguments must be NULL or valid for the duration of the call.
#[no_mangle]
pub unsafe extern "C" fn NVSDK_NGX_VULKAN_CreateFeature(
    InCmdBuffer: VkCommandBuffer,
    InFeatureID: NVSDK_NGX_Feature,
    InParameters: *mut NVSDK_NGX_Parameter,
    OutHandle: *mut *mut NVSDK_NGX_Handle,
) -> NVSDK_NGX_Result {
    core_abi::trace("NVSDK_NGX_VULKAN_CreateFeature");
    // SAFETY: forwarded contract.
    unsafe {
        exports::NVSDK_NGX_VULKAN_CreateFeature(InCmdBuffer, InFeatureID, InParameters, OutHandle)
    }
}

/// Same as the public function.
///
/// # Safety
/// Pointer arguments must be NULL or valid for the duration of the call.
#[no_mangle]
pub unsafe extern "C" fn NVSDK_NGX_VULKAN_CreateFeature1(
    InDevice: VkDevice,
    InCmdList: VkCommandBuffer,
    InFeatureID: NVSDK_NGX_Feature,
    InParameters: *mut NVSDK_NGX_Parameter,
    OutHandle: *mut *mut NVSDK_NGX_Handle,
) -> NVSDK_NGX_Result {
    core_abi::trace("NVSDK_NGX_VULKAN_CreateFeature1");
    // SAFETY: forwarded contract.
    unsafe {
        exports::NVSDK_NGX_VULKAN_CreateFeature1(
            InDevice,
            InCmdList,
            InFeatureID,
            InParameters,
            OutHandle,
        )
    }
}

/// The C++-callback form, the only Evaluate the Core has: the static library's
/// `EvaluateFeature_C` passes its own trampoline here. The callback is accepted and, as in the
/// public library, never called (evaluation only records commands).
///
/// # Safety
/// Pointer arguments must be NULL or valid for the duration of the call.
#[no_mangle]
pub unsafe extern "C" fn NVSDK_NGX_VULKAN_EvaluateFeature(
    InCmdList: VkCommandBuffer,
    InFeatureHandle: *const NVSDK_NGX_Handle,
    InParameters: *const NVSDK_NGX_Parameter,
    InCallback: PFN_NVSDK_NGX_ProgressCallback,
) -> NVSDK_NGX_Result {
    core_abi::trace("NVSDK_NGX_VULKAN_EvaluateFeature");
    // SAFETY: forwarded contract.
    unsafe {
        exports::NVSDK_NGX_VULKAN_EvaluateFeature(
            InCmdList,
            InFeatureHandle,
            InParameters,
            InCallback,
        )
    }
}

/// Same as the public function.
///
/// # Safety
/// The pointer is only compared against the registry.
#[no_mangle]
pub unsafe extern "C" fn NVSDK_NGX_VULKAN_ReleaseFeature(
    InHandle: *mut NVSDK_NGX_Handle,
) -> NVSDK_NGX_Result {
    core_abi::trace("NVSDK_NGX_VULKAN_ReleaseFeature");
    // SAFETY: forwarded contract.
    unsafe { exports::NVSDK_NGX_VULKAN_ReleaseFeature(InHandle) }
}

/// Same as the public function.
///
/// # Safety
/// Pointer arguments must be NULL or valid for the duration of the call.
#[no_mangle]
pub unsafe extern "C" fn NVSDK_NGX_VULKAN_GetFeatureRequirements(
    Instance: VkInstance,
    PhysicalDevice: VkPhysicalDevice,
    FeatureDiscoveryInfo: *const NVSDK_NGX_FeatureDiscoveryInfo,
    OutSupported: *mut NVSDK_NGX_FeatureRequirement,
) -> NVSDK_NGX_Result {
    core_abi::trace("NVSDK_NGX_VULKAN_GetFeatureRequirements");
    // SAFETY: forwarded contract.
    unsafe {
        exports::NVSDK_NGX_VULKAN_GetFeatureRequirements(
            Instance,
            PhysicalDevice,
            FeatureDiscoveryInfo,
            OutSupported,
        )
    }
}

/// Same as the public function.
///
/// # Safety
/// Pointer arguments must be NULL or valid for the duration of the call.
#[no_mangle]
pub unsafe extern "C" fn NVSDK_NGX_VULKAN_GetFeatureInstanceExtensionRequirements(
    FeatureDiscoveryInfo: *const NVSDK_NGX_FeatureDiscoveryInfo,
    OutExtensionCount: *mut u32,
    OutExtensionProperties: *mut *mut VkExtensionProperties,
) -> NVSDK_NGX_Result {
    core_abi::trace("NVSDK_NGX_VULKAN_GetFeatureInstanceExtensionRequirements");
    // SAFETY: forwarded contract.
    unsafe {
        exports::NVSDK_NGX_VULKAN_GetFeatureInstanceExtensionRequirements(
            FeatureDiscoveryInfo,
            OutExtensionCount,
            OutExtensionProperties,
        )
    }
}

/// Same as the public function.
///
/// # Safety
/// Pointer arguments must be NULL or valid for the duration of the call.
#[no_mangle]
pub unsafe extern "C" fn NVSDK_NGX_VULKAN_GetFeatureDeviceExtensionRequirements(
    Instance: VkInstance,
    PhysicalDevice: VkPhysicalDevice,
    FeatureDiscoveryInfo: *const NVSDK_NGX_FeatureDiscoveryInfo,
    OutExtensionCount: *mut u32,
    OutExtensionProperties: *mut *mut VkExtensionProperties,
) -> NVSDK_NGX_Result {
    core_abi::trace("NVSDK_NGX_VULKAN_GetFeatureDeviceExtensionRequirements");
    // SAFETY: forwarded contract.
    unsafe {
        exports::NVSDK_NGX_VULKAN_GetFeatureDeviceExtensionRequirements(
            Instance,
            PhysicalDevice,
            FeatureDiscoveryInfo,
            OutExtensionCount,
            OutExtensionProperties,
        )
    }
}

/// Same as the public function (the static library's `nvsdk_ngx_lib_unix.o` resolves it).
///
/// # Safety
/// `ApplicationId` must be NULL or valid for the duration of the call.
#[no_mangle]
pub unsafe extern "C" fn NVSDK_NGX_UpdateFeature(
    ApplicationId: *const NVSDK_NGX_Application_Identifier,
    FeatureID: NVSDK_NGX_Feature,
) -> NVSDK_NGX_Result {
    core_abi::trace("NVSDK_NGX_UpdateFeature");
    // SAFETY: forwarded contract.
    unsafe { exports::NVSDK_NGX_UpdateFeature(ApplicationId, FeatureID) }
}
