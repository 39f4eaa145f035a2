//! The public `NVSDK_NGX_VULKAN_*` entry points (ngx-abi.md §2) with NVIDIA's C signatures and
//! unmangled names. Each one is wrapped in [`guard`], checks its pointers, copies what it reads
//! and keeps no caller pointer after returning. Handles are looked up by address in the state
//! registry, never dereferenced.
//!
//! Check order in every call: initialisation state (where the SDK's static library would report
//! `FAIL_NotInitialized`), then NULL pointers, then handle/feature ids, then parameter values.
//! Every refusal is logged with the entry point's name and the reason.

use std::os::raw::{c_char, c_uint, c_ulonglong};
use std::path::PathBuf;
use std::sync::Arc;

use ash::vk;
use ash::vk::Handle;

use super::abi::*;
use super::guard::{c_str, guard, wide_path, write_out};
use super::log;
use super::model_dir::{find_model_dir, ModelLookup, MODEL_DIR_ENV};
use super::params::ParamRef;
use super::registry::{self, described_ids, lookup, Feature};
use super::result::{result_name, result_name_wide, ResultCode};
use super::state::{
    self, device_key, release_instance, AppIdentity, DeviceEntry, FeatureEntry, Owner,
};
use crate::feature::{DeviceContext, FeatureError, Route};

const SDK: NVSDK_NGX_Feature = NVSDK_NGX_Feature_Reserved_SDK;

/// Logs `msg` for `entry` and returns `code`.
fn refuse(
    entry: &str,
    feature: NVSDK_NGX_Feature,
    code: NVSDK_NGX_Result,
    msg: &str,
) -> NVSDK_NGX_Result {
    log::error(feature, &format!("{entry}: {msg} -> {}", result_name(code)));
    code
}

fn refuse_err(entry: &str, feature: NVSDK_NGX_Feature, e: &FeatureError) -> NVSDK_NGX_Result {
    refuse(entry, feature, e.code(), &e.to_string())
}

fn not_initialized(entry: &str) -> NVSDK_NGX_Result {
    refuse(
        entry,
        SDK,
        NVSDK_NGX_Result_FAIL_NotInitialized,
        "NVSDK_NGX_VULKAN_Init has not been called (or Shutdown already was)",
    )
}

fn null(entry: &str, what: &str) -> NVSDK_NGX_Result {
    refuse(
        entry,
        SDK,
        NVSDK_NGX_Result_FAIL_InvalidParameter,
        &format!("{what} is NULL"),
    )
}

fn initialized() -> bool {
    state::with(|s| s.initialized())
}

/// The table entry of `feature`, or the `FAIL_FeatureNotSupported` refusal (logged).
fn described(
    entry: &str,
    feature: NVSDK_NGX_Feature,
) -> Result<Arc<dyn Feature>, NVSDK_NGX_Result> {
    lookup(feature).ok_or_else(|| {
        refuse(
            entry,
            feature,
            NVSDK_NGX_Result_FAIL_FeatureNotSupported,
            &format!(
                "feature {feature} is not supported (only {})",
                described_ids()
            ),
        )
    })
}

// ---------------------------------------------------------------------------------------------
// Init / Shutdown

/// Longest `PathListInfo` accepted; longer lists are treated as garbage (one shipped game passes
/// junk there), as other implementations do.
const MAX_PATH_LIST: u32 = 10;

/// The body of every Init: the public ones here and the Core's (`core_abi`), which reach it with
/// their own argument order; `entry` names the caller in log lines.
#[allow(clippy::too_many_arguments)]
pub(crate) fn init_common(
    entry: &str,
    app: AppIdentity,
    data_path: *const wchar_t,
    instance: VkInstance,
    pd: VkPhysicalDevice,
    device: VkDevice,
    gipa: PFN_vkGetInstanceProcAddr,
    gdpa: PFN_vkGetDeviceProcAddr,
    info: *const NVSDK_NGX_FeatureCommonInfo,
    version: NVSDK_NGX_Version,
) -> NVSDK_NGX_Result {
    if instance.is_null() {
        return null(entry, "InInstance");
    }
    if pd.is_null() {
        return null(entry, "InPD");
    }
    if device.is_null() {
        return null(entry, "InDevice");
    }
    if version < OPENNGX_MIN_SDK_VERSION {
        return refuse(
            entry,
            SDK,
            NVSDK_NGX_Result_FAIL_OutOfDate,
            &format!("SDK version {version:#x} is older than {OPENNGX_MIN_SDK_VERSION:#x}"),
        );
    }
    // SAFETY: NULL or a NUL-terminated wide string (NGX contract); copied here.
    let app_data = match unsafe { wide_path(data_path) } {
        Ok(p) => p,
        Err(e) => {
            return refuse(
                entry,
                SDK,
                NVSDK_NGX_Result_FAIL_InvalidParameter,
                &format!("InApplicationDataPath: {e}"),
            )
        }
    };
    let mut extra_paths = Vec::new();
    // SAFETY: NULL or a valid FeatureCommonInfo for the duration of the call; copied.
    if let Some(fi) = unsafe { info.as_ref() } {
        let list = fi.PathListInfo;
        if !list.Path.is_null() && list.Length < MAX_PATH_LIST {
            for i in 0..list.Length as usize {
                // SAFETY: `Path` holds `Length` entries.
                let p = unsafe { *list.Path.add(i) };
                // SAFETY: each entry is NULL or a wide string.
                match unsafe { wide_path(p) } {
                    Ok(Some(p)) => extra_paths.push(p),
                    Ok(None) => {}
                    Err(e) => log::error(
                        SDK,
                        &format!("{entry}: ignoring PathListInfo.Path[{i}]: {e}"),
                    ),
                }
            }
        }
        // The logging block exists only from API 0x14 on.
        if version >= 0x14 {
            log::add_sink(device_key(device), &fi.LoggingInfo);
        } else {
            log::remove_sink(device_key(device));
        }
    } else {
        // A repeated Init without logging info drops the device's earlier callback.
        log::remove_sink(device_key(device));
    }
    let ctx = DeviceContext {
        instance,
        physical_device: pd,
        device,
        get_instance_proc_addr: gipa,
        get_device_proc_addr: gdpa,
    };
    let app_text = format!("{app:?}");
    let offered: Vec<String> = registry::features()
        .iter()
        .map(|f| {
            let backend = f
                .backend_name()
                .map_or("not available".to_string(), |b| format!("`{b}`"));
            format!("{} backend {backend}", f.label())
        })
        .collect();
    let fresh = state::with(|s| {
        let fresh = s.device(device_key(device)).is_none();
        s.add_device(DeviceEntry {
            ctx,
            app_data: app_data.clone(),
            extra_paths,
            app,
            sdk_version: version,
        });
        fresh
    });
    if fresh {
        // A device not initialised until now: anything a backend still keeps under its handle
        // belongs to a destroyed device whose handle value came back (one destroyed without
        // Shutdown), never to this one.
        for f in registry::features() {
            f.device_shutdown(device);
        }
    }
    log::info(
        SDK,
        &format!(
            "{entry}: initialised (device {:#x}, SDK version {version:#x}, {app_text}, data path {}); {}",
            device.as_raw(),
            app_data.as_ref().map_or("<none>".to_string(), |p| p.display().to_string()),
            offered.join("; "),
        ),
    );
    NVSDK_NGX_Result_Success
}

/// Initialises the library for one device (API >= 0x15 allows one Init per device; a repeated
/// Init of the same device replaces its settings).
///
/// # Safety
/// Pointer arguments must be NULL or valid for the duration of the call.
#[cfg_attr(not(openngx_core), no_mangle)]
pub unsafe extern "C" fn NVSDK_NGX_VULKAN_Init(
    InApplicationId: c_ulonglong,
    InApplicationDataPath: *const wchar_t,
    InInstance: VkInstance,
    InPD: VkPhysicalDevice,
    InDevice: VkDevice,
    InGIPA: PFN_vkGetInstanceProcAddr,
    InGDPA: PFN_vkGetDeviceProcAddr,
    InFeatureInfo: *const NVSDK_NGX_FeatureCommonInfo,
    InSDKVersion: NVSDK_NGX_Version,
) -> NVSDK_NGX_Result {
    let e = "NVSDK_NGX_VULKAN_Init";
    guard(e, || {
        init_common(
            e,
            AppIdentity::ApplicationId(InApplicationId),
            InApplicationDataPath,
            InInstance,
            InPD,
            InDevice,
            InGIPA,
            InGDPA,
            InFeatureInfo,
            InSDKVersion,
        )
    })
}

/// Initialises the library for one device, identifying the application by project id.
///
/// # Safety
/// Pointer arguments must be NULL or valid for the duration of the call.
#[cfg_attr(not(openngx_core), no_mangle)]
pub unsafe extern "C" fn NVSDK_NGX_VULKAN_Init_with_ProjectID(
    InProjectId: *const c_char,
    InEngineType: NVSDK_NGX_EngineType,
    InEngineVersion: *const c_char,
    InApplicationDataPath: *const wchar_t,
    InInstance: VkInstance,
    InPD: VkPhysicalDevice,
    InDevice: VkDevice,
    InGIPA: PFN_vkGetInstanceProcAddr,
    InGDPA: PFN_vkGetDeviceProcAddr,
    InFeatureInfo: *const NVSDK_NGX_FeatureCommonInfo,
    InSDKVersion: NVSDK_NGX_Version,
) -> NVSDK_NGX_Result {
    let e = "NVSDK_NGX_VULKAN_Init_with_ProjectID";
    guard(e, || {
        // SAFETY: forwarded contract.
        unsafe {
            init_project(
                e,
                InProjectId,
                InEngineType,
                InEngineVersion,
                InApplicationDataPath,
                InInstance,
                InPD,
                InDevice,
                InGIPA,
                InGDPA,
                InFeatureInfo,
                InSDKVersion,
            )
        }
    })
}

/// Init by project id (public `Init_with_ProjectID`, the Core's `Init_ProjectID[_Ext]`): the
/// project id must be a non-empty string; then as [`init_common`].
///
/// # Safety
/// Pointer arguments must be NULL or valid for the duration of the call.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn init_project(
    entry: &str,
    project_id: *const c_char,
    engine_type: NVSDK_NGX_EngineType,
    engine_version: *const c_char,
    data_path: *const wchar_t,
    instance: VkInstance,
    pd: VkPhysicalDevice,
    device: VkDevice,
    gipa: PFN_vkGetInstanceProcAddr,
    gdpa: PFN_vkGetDeviceProcAddr,
    info: *const NVSDK_NGX_FeatureCommonInfo,
    version: NVSDK_NGX_Version,
) -> NVSDK_NGX_Result {
    // SAFETY: NULL or NUL-terminated strings; copied.
    let Some(project) = (unsafe { c_str(project_id) })
        .map(|s| s.to_string_lossy().into_owned())
        .filter(|s| !s.is_empty())
    else {
        return refuse(
            entry,
            SDK,
            NVSDK_NGX_Result_FAIL_InvalidParameter,
            "InProjectId is NULL or empty",
        );
    };
    // SAFETY: as above.
    let engine_version = unsafe { c_str(engine_version) }
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let app = AppIdentity::Project {
        project_id: project,
        engine_type,
        engine_version,
    };
    init_common(
        entry, app, data_path, instance, pd, device, gipa, gdpa, info, version,
    )
}

/// The body of every Shutdown (public and Core): shuts down `device` (`None`: all), releasing
/// the features still alive on it.
pub(crate) fn shutdown(entry: &str, device: Option<u64>) -> NVSDK_NGX_Result {
    let (gone, features) = state::with(|s| s.shutdown(device));
    if gone.is_empty() {
        return not_initialized(entry);
    }
    for f in &features {
        log::error(
            f.feature,
            &format!(
                "{entry}: feature handle {} was not released; releasing it now",
                f.id
            ),
        );
        release_instance(f);
    }
    for d in &gone {
        // What the backends keep for the device between features (its context, pipelines).
        for f in registry::features() {
            f.device_shutdown(vk::Device::from_raw(*d));
        }
        log::info(SDK, &format!("{entry}: device {d:#x} shut down"));
        log::remove_sink(*d);
    }
    if !initialized() {
        log::clear_sinks();
    }
    NVSDK_NGX_Result_Success
}

/// Shuts down every device (the deprecated form; same as `Shutdown1(NULL)`).
#[cfg_attr(not(openngx_core), no_mangle)]
pub extern "C" fn NVSDK_NGX_VULKAN_Shutdown() -> NVSDK_NGX_Result {
    let e = "NVSDK_NGX_VULKAN_Shutdown";
    guard(e, || shutdown(e, None))
}

/// Shuts down `InDevice` (NULL: every device). Features still alive on it are released (logged).
#[cfg_attr(not(openngx_core), no_mangle)]
pub extern "C" fn NVSDK_NGX_VULKAN_Shutdown1(InDevice: VkDevice) -> NVSDK_NGX_Result {
    let e = "NVSDK_NGX_VULKAN_Shutdown1";
    guard(e, || {
        shutdown(e, (!InDevice.is_null()).then(|| device_key(InDevice)))
    })
}

// ---------------------------------------------------------------------------------------------
// Parameter maps

fn make_params(
    entry: &str,
    out: *mut *mut NVSDK_NGX_Parameter,
    populated: bool,
) -> NVSDK_NGX_Result {
    if !initialized() {
        return not_initialized(entry);
    }
    if out.is_null() {
        return null(entry, "OutParameters");
    }
    let populate = populated.then_some(registry::populate_capabilities as super::params::Populate);
    let p = state::with(|s| s.new_params(Owner::App, populate));
    // SAFETY: non-NULL out pointer (checked).
    unsafe { write_out(out, p) };
    NVSDK_NGX_Result_Success
}

/// Library-owned, pre-populated map (freed by the final Shutdown; never pass it to
/// DestroyParameters). Every call returns the same object.
///
/// # Safety
/// `OutParameters` must be NULL or writable.
#[cfg_attr(not(openngx_core), no_mangle)]
pub unsafe extern "C" fn NVSDK_NGX_VULKAN_GetParameters(
    OutParameters: *mut *mut NVSDK_NGX_Parameter,
) -> NVSDK_NGX_Result {
    let e = "NVSDK_NGX_VULKAN_GetParameters";
    guard(e, || {
        if !initialized() {
            return not_initialized(e);
        }
        if OutParameters.is_null() {
            return null(e, "OutParameters");
        }
        let p = state::with(|s| match s.library_params {
            Some(p) => p as *mut NVSDK_NGX_Parameter,
            None => {
                let p = s.new_params(Owner::Library, Some(registry::populate_capabilities));
                s.library_params = Some(p as usize);
                p
            }
        });
        // SAFETY: checked non-NULL.
        unsafe { write_out(OutParameters, p) };
        NVSDK_NGX_Result_Success
    })
}

/// New empty, application-owned map (free with DestroyParameters).
///
/// # Safety
/// `OutParameters` must be NULL or writable.
#[cfg_attr(not(openngx_core), no_mangle)]
pub unsafe extern "C" fn NVSDK_NGX_VULKAN_AllocateParameters(
    OutParameters: *mut *mut NVSDK_NGX_Parameter,
) -> NVSDK_NGX_Result {
    let e = "NVSDK_NGX_VULKAN_AllocateParameters";
    guard(e, || make_params(e, OutParameters, false))
}

/// New application-owned map pre-filled with the capabilities (free with DestroyParameters).
///
/// # Safety
/// `OutParameters` must be NULL or writable.
#[cfg_attr(not(openngx_core), no_mangle)]
pub unsafe extern "C" fn NVSDK_NGX_VULKAN_GetCapabilityParameters(
    OutParameters: *mut *mut NVSDK_NGX_Parameter,
) -> NVSDK_NGX_Result {
    let e = "NVSDK_NGX_VULKAN_GetCapabilityParameters";
    guard(e, || make_params(e, OutParameters, true))
}

/// Frees a map from AllocateParameters / GetCapabilityParameters. Refuses (without touching it)
/// the GetParameters map, objects the library did not make, and objects already destroyed.
/// Works after Shutdown too.
///
/// # Safety
/// No other requirement: the pointer is only compared against the registry.
#[cfg_attr(not(openngx_core), no_mangle)]
pub unsafe extern "C" fn NVSDK_NGX_VULKAN_DestroyParameters(
    InParameters: *mut NVSDK_NGX_Parameter,
) -> NVSDK_NGX_Result {
    let e = "NVSDK_NGX_VULKAN_DestroyParameters";
    guard(e, || {
        if InParameters.is_null() {
            return null(e, "InParameters");
        }
        let key = InParameters as usize;
        let removed = state::with(|s| match s.params.get(&key).map(|(o, _)| *o) {
            Some(Owner::App) => s.params.remove(&key).map(|(_, obj)| obj).ok_or(None),
            Some(Owner::Library) => Err(Some(Owner::Library)),
            None => Err(None),
        });
        match removed {
            Ok(obj) => {
                // Not freed: retired, so that its address is never reused (state::retire).
                state::retire(obj);
                NVSDK_NGX_Result_Success
            }
            Err(Some(_)) => refuse(e, SDK, NVSDK_NGX_Result_FAIL_InvalidParameter, "the GetParameters map is owned by the library and freed by Shutdown"),
            Err(None) => refuse(e, SDK, NVSDK_NGX_Result_FAIL_InvalidParameter, "not a live parameter map allocated by this library (already destroyed, or made elsewhere)"),
        }
    })
}

/// Scratch memory the feature needs from the application: always 0 (the library allocates its
/// own device memory).
///
/// # Safety
/// `OutSizeInBytes` must be NULL or writable.
#[cfg_attr(not(openngx_core), no_mangle)]
pub unsafe extern "C" fn NVSDK_NGX_VULKAN_GetScratchBufferSize(
    InFeatureId: NVSDK_NGX_Feature,
    InParameters: *const NVSDK_NGX_Parameter,
    OutSizeInBytes: *mut usize,
) -> NVSDK_NGX_Result {
    let e = "NVSDK_NGX_VULKAN_GetScratchBufferSize";
    let _ = InParameters;
    guard(e, || {
        if !initialized() {
            return not_initialized(e);
        }
        if OutSizeInBytes.is_null() {
            return null(e, "OutSizeInBytes");
        }
        if let Err(code) = described(e, InFeatureId) {
            return code;
        }
        // SAFETY: checked non-NULL.
        unsafe { write_out(OutSizeInBytes, 0) };
        NVSDK_NGX_Result_Success
    })
}

// ---------------------------------------------------------------------------------------------
// Features

fn create_feature(
    entry: &str,
    device: Option<VkDevice>,
    cmd: VkCommandBuffer,
    feature: NVSDK_NGX_Feature,
    params: *mut NVSDK_NGX_Parameter,
    out: *mut *mut NVSDK_NGX_Handle,
) -> NVSDK_NGX_Result {
    let dev = state::with(|s| match device {
        Some(d) => s.device(device_key(d)).cloned().ok_or(false),
        // The single-device form: unambiguous only with exactly one initialised device.
        None => match s.devices.as_slice() {
            [(_, d)] => Ok(d.clone()),
            [] => Err(false),
            _ => Err(true),
        },
    });
    let dev =
        match dev {
            Ok(d) => d,
            Err(false) => return not_initialized(entry),
            Err(true) => return refuse(
                entry,
                feature,
                NVSDK_NGX_Result_FAIL_InvalidParameter,
                "several devices are initialised; use NVSDK_NGX_VULKAN_CreateFeature1 to name one",
            ),
        };
    if out.is_null() {
        return null(entry, "OutHandle");
    }
    if cmd.is_null() {
        return null(entry, "InCmdBuffer");
    }
    // SAFETY: a live parameter object for the duration of the call (NGX contract).
    let Some(p) = (unsafe { ParamRef::new(params) }) else {
        return null(entry, "InParameters");
    };
    let described = match described(entry, feature) {
        Ok(f) => f,
        Err(code) => return code,
    };
    let request = match Arc::clone(&described).parse_create(&p) {
        Ok(r) => r,
        Err(e) => return refuse_err(entry, feature, &e),
    };
    // A described feature without a backend (one whose route is not built yet) stops here, once
    // its parameters are known to be valid: no model is looked up that nothing would use.
    let Some(backend) = described.backend_name() else {
        let e = FeatureError::BackendUnavailable { feature };
        return refuse(
            entry,
            feature,
            e.code(),
            &format!(
                "{e}: the {} parameters are valid ({}), nothing was created",
                described.label(),
                request.summary()
            ),
        );
    };
    // A feature without a model gets an empty path.
    let model_dir = match described.model_subdir() {
        Some(subdir) => {
            let env = std::env::var_os(described.model_env());
            let check = |d: &std::path::Path| described.check_model(d);
            let lookup = ModelLookup {
                subdir,
                check: &check,
            };
            match find_model_dir(
                &lookup,
                env.as_deref(),
                dev.app_data.as_deref(),
                &dev.extra_paths,
            ) {
                Ok(d) => d,
                Err(e) => {
                    // The error's text names DLSS-NR's variable; name this feature's.
                    let text = e.to_string().replace(MODEL_DIR_ENV, described.model_env());
                    return refuse(
                        entry,
                        feature,
                        NVSDK_NGX_Result_FAIL_UnableToInitializeFeature,
                        &text,
                    );
                }
            }
        }
        None => PathBuf::new(),
    };
    let summary = request.summary();
    let instance = match request.create(&dev.ctx, &model_dir, cmd) {
        Ok(i) => i,
        Err(e) => return refuse_err(entry, feature, &e),
    };
    let report = instance.route_report();
    let mut route_note = String::new();
    if let Some(r) = &report {
        let route = match r.route {
            Route::Exact => 1,
            Route::Tensor => 2,
            Route::Cpu => 0,
        };
        let frac = match r.profile {
            "h25" => 25,
            _ => 13,
        };
        p.set_ui(registry::ACTIVE_ROUTE, route);
        p.set_ui(registry::ACTIVE_PROFILE, frac);
        route_note = format!(", route {}", r.detail);
        if let Some(why) = &r.not_tensor {
            route_note.push_str(&format!(" (not the tensor route: {why})"));
        }
    }
    let key = device_key(dev.ctx.device);
    let handle = state::with(|s| {
        // The device may have been shut down by another thread meanwhile.
        s.device(key).is_some().then(|| {
            s.add_feature(FeatureEntry {
                id: 0,
                feature,
                device: key,
                instance: parking_lot::Mutex::new(Some(instance)),
            })
        })
    });
    let Some(handle) = handle else {
        return not_initialized(entry);
    };
    // SAFETY: checked non-NULL.
    unsafe { write_out(out, handle) };
    // SAFETY: our own live handle.
    let id = unsafe { (*handle).Id };
    log::info(
        feature,
        &format!(
            "{entry}: created {} {summary} (handle {id}, backend `{backend}`, model {}{route_note})",
            described.label(),
            model_dir.display()
        ),
    );
    NVSDK_NGX_Result_Success
}

/// Creates a feature on the single initialised device. `InCmdBuffer` must be recording; the
/// library may record one-time work into it.
///
/// # Safety
/// Pointer arguments must be NULL or valid for the duration of the call.
#[cfg_attr(not(openngx_core), no_mangle)]
pub unsafe extern "C" fn NVSDK_NGX_VULKAN_CreateFeature(
    InCmdBuffer: VkCommandBuffer,
    InFeatureID: NVSDK_NGX_Feature,
    InParameters: *mut NVSDK_NGX_Parameter,
    OutHandle: *mut *mut NVSDK_NGX_Handle,
) -> NVSDK_NGX_Result {
    let e = "NVSDK_NGX_VULKAN_CreateFeature";
    guard(e, || {
        create_feature(e, None, InCmdBuffer, InFeatureID, InParameters, OutHandle)
    })
}

/// Creates a feature on `InDevice` (which must have been initialised).
///
/// # Safety
/// Pointer arguments must be NULL or valid for the duration of the call.
#[cfg_attr(not(openngx_core), no_mangle)]
pub unsafe extern "C" fn NVSDK_NGX_VULKAN_CreateFeature1(
    InDevice: VkDevice,
    InCmdList: VkCommandBuffer,
    InFeatureID: NVSDK_NGX_Feature,
    InParameters: *mut NVSDK_NGX_Parameter,
    OutHandle: *mut *mut NVSDK_NGX_Handle,
) -> NVSDK_NGX_Result {
    let e = "NVSDK_NGX_VULKAN_CreateFeature1";
    guard(e, || {
        if InDevice.is_null() {
            if !initialized() {
                return not_initialized(e);
            }
            return null(e, "InDevice");
        }
        create_feature(
            e,
            Some(InDevice),
            InCmdList,
            InFeatureID,
            InParameters,
            OutHandle,
        )
    })
}

fn evaluate(
    entry: &str,
    cmd: VkCommandBuffer,
    handle: *const NVSDK_NGX_Handle,
    params: *const NVSDK_NGX_Parameter,
) -> NVSDK_NGX_Result {
    if !initialized() {
        return not_initialized(entry);
    }
    if handle.is_null() {
        return null(entry, "InFeatureHandle");
    }
    if cmd.is_null() {
        return null(entry, "InCmdList");
    }
    // SAFETY: a live parameter object for the duration of the call (NGX contract).
    let Some(p) = (unsafe { ParamRef::new(params) }) else {
        return null(entry, "InParameters");
    };
    let Some(f) = state::with(|s| s.feature(handle)) else {
        return refuse(
            entry,
            SDK,
            NVSDK_NGX_Result_FAIL_FeatureNotFound,
            "the handle is not a live feature (never created, or already released)",
        );
    };
    let mut inst = f.instance.lock();
    let Some(inst) = inst.as_mut() else {
        return refuse(
            entry,
            f.feature,
            NVSDK_NGX_Result_FAIL_FeatureNotFound,
            "the feature was released",
        );
    };
    match inst.evaluate(cmd, &p) {
        Ok(()) => {
            log::verbose(f.feature, &format!("{entry}: handle {} recorded", f.id));
            NVSDK_NGX_Result_Success
        }
        Err(e) => refuse_err(entry, f.feature, &e),
    }
}

/// Records one evaluation into `InCmdList` (C++ form; the progress callback is never called
/// because evaluation only records commands).
///
/// # Safety
/// Pointer arguments must be NULL or valid for the duration of the call.
#[cfg_attr(not(openngx_core), no_mangle)]
pub unsafe extern "C" fn NVSDK_NGX_VULKAN_EvaluateFeature(
    InCmdList: VkCommandBuffer,
    InFeatureHandle: *const NVSDK_NGX_Handle,
    InParameters: *const NVSDK_NGX_Parameter,
    InCallback: PFN_NVSDK_NGX_ProgressCallback,
) -> NVSDK_NGX_Result {
    let e = "NVSDK_NGX_VULKAN_EvaluateFeature";
    let _ = InCallback;
    guard(e, || evaluate(e, InCmdList, InFeatureHandle, InParameters))
}

/// Records one evaluation into `InCmdList` (C form).
///
/// # Safety
/// Pointer arguments must be NULL or valid for the duration of the call.
#[cfg_attr(not(openngx_core), no_mangle)]
pub unsafe extern "C" fn NVSDK_NGX_VULKAN_EvaluateFeature_C(
    InCmdList: VkCommandBuffer,
    InFeatureHandle: *const NVSDK_NGX_Handle,
    InParameters: *const NVSDK_NGX_Parameter,
    InCallback: PFN_NVSDK_NGX_ProgressCallback_C,
) -> NVSDK_NGX_Result {
    let e = "NVSDK_NGX_VULKAN_EvaluateFeature_C";
    let _ = InCallback;
    guard(e, || evaluate(e, InCmdList, InFeatureHandle, InParameters))
}

/// Releases a feature. The handle is invalid afterwards; releasing it again returns
/// `FAIL_FeatureNotFound`. The application must ensure no command buffer using it is in flight.
///
/// # Safety
/// The pointer is only compared against the registry.
#[cfg_attr(not(openngx_core), no_mangle)]
pub unsafe extern "C" fn NVSDK_NGX_VULKAN_ReleaseFeature(
    InHandle: *mut NVSDK_NGX_Handle,
) -> NVSDK_NGX_Result {
    let e = "NVSDK_NGX_VULKAN_ReleaseFeature";
    guard(e, || {
        if !initialized() {
            return not_initialized(e);
        }
        if InHandle.is_null() {
            return null(e, "InHandle");
        }
        let Some(f) = state::with(|s| s.remove_feature(InHandle)) else {
            return refuse(
                e,
                SDK,
                NVSDK_NGX_Result_FAIL_FeatureNotFound,
                "the handle is not a live feature (never created, or already released)",
            );
        };
        release_instance(&f);
        log::info(f.feature, &format!("{e}: released handle {}", f.id));
        NVSDK_NGX_Result_Success
    })
}

// ---------------------------------------------------------------------------------------------
// Discovery (callable before Init)

/// Fills `OutSupported` for `FeatureDiscoveryInfo->FeatureID`: supported (0) for feature 18 when
/// a backend is registered, `NotImplemented` otherwise; unknown features also return
/// `FAIL_FeatureNotSupported`.
///
/// # Safety
/// Pointer arguments must be NULL or valid for the duration of the call.
#[cfg_attr(not(openngx_core), no_mangle)]
pub unsafe extern "C" fn NVSDK_NGX_VULKAN_GetFeatureRequirements(
    Instance: VkInstance,
    PhysicalDevice: VkPhysicalDevice,
    FeatureDiscoveryInfo: *const NVSDK_NGX_FeatureDiscoveryInfo,
    OutSupported: *mut NVSDK_NGX_FeatureRequirement,
) -> NVSDK_NGX_Result {
    let e = "NVSDK_NGX_VULKAN_GetFeatureRequirements";
    let _ = (Instance, PhysicalDevice);
    guard(e, || {
        // SAFETY: NULL or valid for the call.
        let Some(info) = (unsafe { FeatureDiscoveryInfo.as_ref() }) else {
            return null(e, "FeatureDiscoveryInfo");
        };
        if OutSupported.is_null() {
            return null(e, "OutSupported");
        }
        let feature = info.FeatureID;
        let described = lookup(feature);
        let (support, code) = match &described {
            None => (
                NVSDK_NGX_FeatureSupportResult_NotImplemented,
                NVSDK_NGX_Result_FAIL_FeatureNotSupported,
            ),
            Some(f) if f.backend_name().is_some() => (
                NVSDK_NGX_FeatureSupportResult_Supported,
                NVSDK_NGX_Result_Success,
            ),
            Some(f) => {
                log::info(
                    feature,
                    &format!(
                        "{e}: feature {feature} reported as not implemented: no {} backend in this build",
                        f.label()
                    ),
                );
                (
                    NVSDK_NGX_FeatureSupportResult_NotImplemented,
                    NVSDK_NGX_Result_Success,
                )
            }
        };
        let req = NVSDK_NGX_FeatureRequirement {
            FeatureSupported: support,
            MinHWArchitecture: 0,
            MinOSVersion: [0; 255],
        };
        // SAFETY: checked non-NULL.
        unsafe { write_out(OutSupported, req) };
        if code != NVSDK_NGX_Result_Success {
            return refuse(
                e,
                feature,
                code,
                &format!(
                    "feature {feature} is not supported (only {})",
                    described_ids()
                ),
            );
        }
        code
    })
}

/// Static, empty extension list handed out by the extension queries (valid forever).
struct EmptyExtensions([VkExtensionProperties; 1]);
// SAFETY: immutable, no pointers.
unsafe impl Sync for EmptyExtensions {}
static NO_EXTENSIONS: EmptyExtensions = EmptyExtensions([vk::ExtensionProperties {
    extension_name: [0; 256],
    spec_version: 0,
}]);

/// Static, empty extension-name list of `RequiredExtensions`.
struct EmptyNames([*const c_char; 1]);
// SAFETY: immutable; holds only NULL.
unsafe impl Sync for EmptyNames {}
static NO_NAMES: EmptyNames = EmptyNames([std::ptr::null()]);

/// The extensions of `wanted` that `physical` offers, as a list owned by the library (one per
/// physical device and feature, kept for the process: a few hundred bytes each).
fn offered_extensions(
    instance: VkInstance,
    physical: VkPhysicalDevice,
    feature: NVSDK_NGX_Feature,
    wanted: &'static [&'static std::ffi::CStr],
) -> &'static [VkExtensionProperties] {
    use std::collections::HashMap;
    type Lists = HashMap<(u64, u64, NVSDK_NGX_Feature), &'static [VkExtensionProperties]>;
    static LISTS: once_cell::sync::Lazy<parking_lot::Mutex<Lists>> =
        once_cell::sync::Lazy::new(|| parking_lot::Mutex::new(HashMap::new()));
    if wanted.is_empty()
        || instance == vk::Instance::null()
        || physical == vk::PhysicalDevice::null()
    {
        return &[];
    }
    let key = (instance.as_raw(), physical.as_raw(), feature);
    if let Some(l) = LISTS.lock().get(&key) {
        return l;
    }
    // SAFETY: loading the system Vulkan loader, the one the caller's instance came from.
    let Ok(entry) = (unsafe { ash::Entry::load() }) else {
        return &[];
    };
    // SAFETY: the caller passes a live instance; the function table is loaded from it.
    let ash_instance = unsafe { ash::Instance::load(entry.static_fn(), instance) };
    // SAFETY: `physical` belongs to `instance` (the caller's promise).
    let offered =
        unsafe { ash_instance.enumerate_device_extension_properties(physical) }.unwrap_or_default();
    let list: Vec<VkExtensionProperties> = offered
        .into_iter()
        .filter(|e| {
            e.extension_name_as_c_str()
                .is_ok_and(|n| wanted.contains(&n))
        })
        .collect();
    let list: &'static [VkExtensionProperties] = Box::leak(list.into_boxed_slice());
    LISTS.lock().insert(key, list);
    list
}

fn extension_query(
    entry: &str,
    info: *const NVSDK_NGX_FeatureDiscoveryInfo,
    count: *mut u32,
    props: *mut *mut VkExtensionProperties,
) -> NVSDK_NGX_Result {
    extension_query_on(entry, None, info, count, props)
}

/// As `extension_query`, for a physical device (`Some((instance, physical))`): the device
/// extensions the feature uses where offered.
fn extension_query_on(
    entry: &str,
    device: Option<(VkInstance, VkPhysicalDevice)>,
    info: *const NVSDK_NGX_FeatureDiscoveryInfo,
    count: *mut u32,
    props: *mut *mut VkExtensionProperties,
) -> NVSDK_NGX_Result {
    // SAFETY: NULL or valid for the call.
    let Some(info) = (unsafe { info.as_ref() }) else {
        return null(entry, "FeatureDiscoveryInfo");
    };
    if count.is_null() {
        return null(entry, "OutExtensionCount");
    }
    if props.is_null() {
        return null(entry, "OutExtensionProperties");
    }
    let feature = match described(entry, info.FeatureID) {
        Ok(f) => f,
        Err(code) => return code,
    };
    // The exact route needs only core Vulkan 1.2 features; a faster route's extensions are
    // listed where the physical device offers them.
    let list = match device {
        Some((i, p)) => offered_extensions(i, p, info.FeatureID, feature.device_extensions()),
        None => &[],
    };
    // SAFETY: both checked non-NULL; the list lives for the process.
    unsafe {
        write_out(count, list.len() as u32);
        write_out(
            props,
            if list.is_empty() {
                NO_EXTENSIONS.0.as_ptr() as *mut VkExtensionProperties
            } else {
                list.as_ptr() as *mut VkExtensionProperties
            },
        );
    }
    NVSDK_NGX_Result_Success
}

/// Instance extensions feature 18 needs: none. The array is owned by the library.
///
/// # Safety
/// Pointer arguments must be NULL or valid for the duration of the call.
#[cfg_attr(not(openngx_core), no_mangle)]
pub unsafe extern "C" fn NVSDK_NGX_VULKAN_GetFeatureInstanceExtensionRequirements(
    FeatureDiscoveryInfo: *const NVSDK_NGX_FeatureDiscoveryInfo,
    OutExtensionCount: *mut u32,
    OutExtensionProperties: *mut *mut VkExtensionProperties,
) -> NVSDK_NGX_Result {
    let e = "NVSDK_NGX_VULKAN_GetFeatureInstanceExtensionRequirements";
    guard(e, || {
        extension_query(
            e,
            FeatureDiscoveryInfo,
            OutExtensionCount,
            OutExtensionProperties,
        )
    })
}

/// Device extensions feature 18 needs: none. The array is owned by the library.
///
/// # Safety
/// Pointer arguments must be NULL or valid for the duration of the call.
#[cfg_attr(not(openngx_core), no_mangle)]
pub unsafe extern "C" fn NVSDK_NGX_VULKAN_GetFeatureDeviceExtensionRequirements(
    Instance: VkInstance,
    PhysicalDevice: VkPhysicalDevice,
    FeatureDiscoveryInfo: *const NVSDK_NGX_FeatureDiscoveryInfo,
    OutExtensionCount: *mut u32,
    OutExtensionProperties: *mut *mut VkExtensionProperties,
) -> NVSDK_NGX_Result {
    let e = "NVSDK_NGX_VULKAN_GetFeatureDeviceExtensionRequirements";
    guard(e, || {
        extension_query_on(
            e,
            Some((Instance, PhysicalDevice)),
            FeatureDiscoveryInfo,
            OutExtensionCount,
            OutExtensionProperties,
        )
    })
}

/// Deprecated: extensions the library needs (none; NVIDIA's list of NVX extensions does not
/// apply). The arrays are owned by the library.
///
/// # Safety
/// Pointer arguments must be NULL or valid for the duration of the call.
#[cfg_attr(not(openngx_core), no_mangle)]
pub unsafe extern "C" fn NVSDK_NGX_VULKAN_RequiredExtensions(
    OutInstanceExtCount: *mut c_uint,
    OutInstanceExts: *mut *mut *const c_char,
    OutDeviceExtCount: *mut c_uint,
    OutDeviceExts: *mut *mut *const c_char,
) -> NVSDK_NGX_Result {
    let e = "NVSDK_NGX_VULKAN_RequiredExtensions";
    guard(e, || {
        if OutInstanceExtCount.is_null()
            || OutInstanceExts.is_null()
            || OutDeviceExtCount.is_null()
            || OutDeviceExts.is_null()
        {
            return null(e, "an output pointer");
        }
        let names = NO_NAMES.0.as_ptr() as *mut *const c_char;
        // SAFETY: all four checked non-NULL.
        unsafe {
            write_out(OutInstanceExtCount, 0);
            write_out(OutInstanceExts, names);
            write_out(OutDeviceExtCount, 0);
            write_out(OutDeviceExts, names);
        }
        NVSDK_NGX_Result_Success
    })
}

/// Asks for an over-the-air update of a feature: nothing to update (the library ships its own
/// implementation); Success for feature 18.
///
/// # Safety
/// `ApplicationId` must be NULL or valid for the duration of the call.
#[cfg_attr(not(openngx_core), no_mangle)]
pub unsafe extern "C" fn NVSDK_NGX_UpdateFeature(
    ApplicationId: *const NVSDK_NGX_Application_Identifier,
    FeatureID: NVSDK_NGX_Feature,
) -> NVSDK_NGX_Result {
    let e = "NVSDK_NGX_UpdateFeature";
    guard(e, || {
        if ApplicationId.is_null() {
            return null(e, "ApplicationId");
        }
        if let Err(code) = described(e, FeatureID) {
            return code;
        }
        NVSDK_NGX_Result_Success
    })
}

/// The SDK name of a result code as a wide string owned by the library (valid forever).
#[cfg_attr(not(openngx_core), no_mangle)]
pub extern "C" fn GetNGXResultAsString(InNGXResult: NVSDK_NGX_Result) -> *const wchar_t {
    match std::panic::catch_unwind(|| result_name_wide(InNGXResult)) {
        Ok(p) => p,
        Err(_) => std::ptr::null(),
    }
}

/// The devices' model lookup inputs, for tools (`doctor`) that want to show where the model is
/// searched: (application data path, PathListInfo entries) of every initialised device.
pub fn model_search_inputs() -> Vec<(Option<PathBuf>, Vec<PathBuf>)> {
    state::with(|s| {
        s.devices
            .iter()
            .map(|(_, d)| (d.app_data.clone(), d.extra_paths.clone()))
            .collect()
    })
}
