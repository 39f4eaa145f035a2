//! The NGX Core ABI (ngx-abi.md §3.3): the bodies of the functions NVIDIA's static library
//! `libnvsdk_ngx.a` resolves with `dlsym` in `libnvidia-ngx.so.1` once it has `dlopen`ed it.
//!
//! The Core reuses the public names with other signatures (the Init family takes the SDK
//! version *before* the feature info, `Shutdown1` has an out-count), so it cannot live in
//! `libopenngx.so`. This module holds the Core's entry points as ordinary Rust functions of the
//! library, built from the public ones' own bodies (`exports::init_common`, `init_project`,
//! `shutdown`): same checks, codes and log lines, the log naming the Core entry point. The
//! `#[no_mangle]` symbols are in `core_exports.rs`, compiled only into the Core
//! (`--cfg openngx_core`, see `docs/architecture.md`); the calls whose signature the Core
//! shares with the public ABI forward there to `exports` unchanged.
//!
//! What this module must not do: keep anything that would make unloading the Core unsafe
//! (threads, TLS destructors, pointers handed out that outlive what [`Remaining`] counts).

use std::os::raw::{c_char, c_uint, c_ulonglong};

use ash::vk::Handle;

use super::abi::*;
use super::exports::{init_common, init_project, shutdown};
use super::guard::{guard, guard_void, write_out};
use super::state::{self, device_key, AppIdentity, Remaining};

/// A verbose log line naming a Core entry point as it is entered: which Core function serves an
/// application's call is the static library's choice, and `OPENNGX_LOG=verbose` (or a verbose
/// log callback) shows it. Never panics.
pub fn trace(entry: &str) {
    guard_void(entry, || {
        super::log::verbose(
            NVSDK_NGX_Feature_Reserved_SDK,
            &format!("{entry}: called (NGX Core)"),
        )
    });
}

/// The body the three application-id Inits share: the public Init's, under the Core entry's
/// name `e` (its logs and its panic guard).
fn by_app_id(
    e: &str,
    app_id: c_ulonglong,
    data_path: *const wchar_t,
    (instance, pd, device): (VkInstance, VkPhysicalDevice, VkDevice),
    (gipa, gdpa): (PFN_vkGetInstanceProcAddr, PFN_vkGetDeviceProcAddr),
    version: NVSDK_NGX_Version,
    info: *const NVSDK_NGX_FeatureCommonInfo,
) -> NVSDK_NGX_Result {
    guard(e, || {
        init_common(
            e,
            AppIdentity::ApplicationId(app_id),
            data_path,
            instance,
            pd,
            device,
            gipa,
            gdpa,
            info,
            version,
        )
    })
}

/// `NVSDK_NGX_VULKAN_Init` of the Core: no proc-address functions, no feature info (the static
/// library uses it only when the application gave neither).
///
/// # Safety
/// Pointer arguments must be NULL or valid for the duration of the call.
pub unsafe fn init(
    app_id: c_ulonglong,
    data_path: *const wchar_t,
    instance: VkInstance,
    pd: VkPhysicalDevice,
    device: VkDevice,
    version: NVSDK_NGX_Version,
) -> NVSDK_NGX_Result {
    by_app_id(
        "NVSDK_NGX_VULKAN_Init",
        app_id,
        data_path,
        (instance, pd, device),
        (None, None),
        version,
        std::ptr::null(),
    )
}

/// `NVSDK_NGX_VULKAN_Init_Ext` of the Core: as [`init`] plus the feature info (paths, logging).
///
/// # Safety
/// Pointer arguments must be NULL or valid for the duration of the call.
pub unsafe fn init_ext(
    app_id: c_ulonglong,
    data_path: *const wchar_t,
    instance: VkInstance,
    pd: VkPhysicalDevice,
    device: VkDevice,
    version: NVSDK_NGX_Version,
    info: *const NVSDK_NGX_FeatureCommonInfo,
) -> NVSDK_NGX_Result {
    by_app_id(
        "NVSDK_NGX_VULKAN_Init_Ext",
        app_id,
        data_path,
        (instance, pd, device),
        (None, None),
        version,
        info,
    )
}

/// `NVSDK_NGX_VULKAN_Init_Ext2` of the Core, the static library's first choice for the public
/// `Init`: the public arguments with the version moved before the feature info.
///
/// # Safety
/// Pointer arguments must be NULL or valid for the duration of the call.
#[allow(clippy::too_many_arguments)]
pub unsafe fn init_ext2(
    app_id: c_ulonglong,
    data_path: *const wchar_t,
    instance: VkInstance,
    pd: VkPhysicalDevice,
    device: VkDevice,
    gipa: PFN_vkGetInstanceProcAddr,
    gdpa: PFN_vkGetDeviceProcAddr,
    version: NVSDK_NGX_Version,
    info: *const NVSDK_NGX_FeatureCommonInfo,
) -> NVSDK_NGX_Result {
    by_app_id(
        "NVSDK_NGX_VULKAN_Init_Ext2",
        app_id,
        data_path,
        (instance, pd, device),
        (gipa, gdpa),
        version,
        info,
    )
}

/// `NVSDK_NGX_VULKAN_Init_ProjectID` of the Core (no proc-address functions).
///
/// # Safety
/// Pointer arguments must be NULL or valid for the duration of the call.
#[allow(clippy::too_many_arguments)]
pub unsafe fn init_project_id(
    project_id: *const c_char,
    engine_type: NVSDK_NGX_EngineType,
    engine_version: *const c_char,
    data_path: *const wchar_t,
    instance: VkInstance,
    pd: VkPhysicalDevice,
    device: VkDevice,
    version: NVSDK_NGX_Version,
    info: *const NVSDK_NGX_FeatureCommonInfo,
) -> NVSDK_NGX_Result {
    let e = "NVSDK_NGX_VULKAN_Init_ProjectID";
    guard(e, || {
        // SAFETY: forwarded contract.
        unsafe {
            init_project(
                e,
                project_id,
                engine_type,
                engine_version,
                data_path,
                instance,
                pd,
                device,
                None,
                None,
                info,
                version,
            )
        }
    })
}

/// `NVSDK_NGX_VULKAN_Init_ProjectID_Ext` of the Core, the static library's first choice for the
/// public `Init_with_ProjectID` (version before the feature info).
///
/// # Safety
/// Pointer arguments must be NULL or valid for the duration of the call.
#[allow(clippy::too_many_arguments)]
pub unsafe fn init_project_id_ext(
    project_id: *const c_char,
    engine_type: NVSDK_NGX_EngineType,
    engine_version: *const c_char,
    data_path: *const wchar_t,
    instance: VkInstance,
    pd: VkPhysicalDevice,
    device: VkDevice,
    gipa: PFN_vkGetInstanceProcAddr,
    gdpa: PFN_vkGetDeviceProcAddr,
    version: NVSDK_NGX_Version,
    info: *const NVSDK_NGX_FeatureCommonInfo,
) -> NVSDK_NGX_Result {
    let e = "NVSDK_NGX_VULKAN_Init_ProjectID_Ext";
    guard(e, || {
        // SAFETY: forwarded contract.
        unsafe {
            init_project(
                e,
                project_id,
                engine_type,
                engine_version,
                data_path,
                instance,
                pd,
                device,
                gipa,
                gdpa,
                info,
                version,
            )
        }
    })
}

/// `NVSDK_NGX_VULKAN_Shutdown` of the Core: every device.
pub fn shutdown_all() -> NVSDK_NGX_Result {
    let e = "NVSDK_NGX_VULKAN_Shutdown";
    guard(e, || shutdown(e, None))
}

/// `NVSDK_NGX_VULKAN_Shutdown1` of the Core: shuts down `device` (NULL: every device) and writes
/// to `out_remaining` how many objects still need the library ([`Remaining`]: devices still
/// initialised, live features, application-owned parameter maps). The static library unloads
/// the Core when this returns Success with 0, so 0 is written only when nothing the application
/// holds points into the library's code any more. The count is written whatever the result
/// (the static library pre-zeroes it and reads it only after a Success); NULL is allowed.
///
/// # Safety
/// `out_remaining` must be NULL or writable.
pub unsafe fn shutdown1(device: VkDevice, out_remaining: *mut c_uint) -> NVSDK_NGX_Result {
    let e = "NVSDK_NGX_VULKAN_Shutdown1";
    guard(e, || {
        let code = shutdown(e, (!device.is_null()).then(|| device_key(device)));
        let left = remaining();
        if left.total() != 0 {
            super::log::info(
                NVSDK_NGX_Feature_Reserved_SDK,
                &format!(
                    "{e}: the Core stays loaded: {} device(s), {} feature(s), \
                     {} parameter map(s) still live",
                    left.devices, left.features, left.app_maps
                ),
            );
        }
        // SAFETY: NULL or writable (contract); `write_out` skips NULL.
        unsafe { write_out(out_remaining, left.total()) };
        code
    })
}

/// What still keeps the library in use (see [`shutdown1`]).
pub fn remaining() -> Remaining {
    state::with(|s| s.remaining())
}

#[cfg(test)]
mod tests {
    use super::*;
    use ash::vk;
    use parking_lot::Mutex;
    use std::ffi::CStr;

    /// The state is process-wide: these tests run one at a time.
    static SERIAL: Mutex<()> = Mutex::new(());
    static LOGGED: Mutex<Vec<String>> = Mutex::new(Vec::new());

    unsafe extern "C" fn sink(msg: *const c_char, _level: u32, _feature: NVSDK_NGX_Feature) {
        // SAFETY: the library passes a NUL-terminated message valid for the call.
        let text = unsafe { CStr::from_ptr(msg) }
            .to_string_lossy()
            .into_owned();
        LOGGED.lock().push(text);
    }

    fn handles(n: u64) -> (VkInstance, VkPhysicalDevice, VkDevice) {
        (
            vk::Instance::from_raw(0x1000 + n),
            vk::PhysicalDevice::from_raw(0x2000 + n),
            vk::Device::from_raw(0x3000 + n),
        )
    }

    fn logging_info() -> NVSDK_NGX_FeatureCommonInfo {
        // SAFETY: a plain C struct; all-zero is its "nothing given" value.
        let mut info: NVSDK_NGX_FeatureCommonInfo = unsafe { std::mem::zeroed() };
        info.LoggingInfo.LoggingCallback = Some(sink);
        info.LoggingInfo.MinimumLoggingLevel = NVSDK_NGX_LOGGING_LEVEL_VERBOSE;
        info
    }

    fn app_maps() -> usize {
        remaining().app_maps
    }

    #[test]
    fn init_family_reads_the_version_before_the_feature_info() {
        let _g = SERIAL.lock();
        LOGGED.lock().clear();
        let info = logging_info();
        let (i, p, d) = handles(1);
        // SAFETY: fake non-NULL handles are only stored; `info` outlives the call.
        let r = unsafe { init_ext2(7, std::ptr::null(), i, p, d, None, None, 0x15, &info) };
        assert_eq!(r, NVSDK_NGX_Result_Success);
        // The feature info arrived where the Core reads it: its log callback got the Init line,
        // which names the Core entry point and the version.
        assert!(
            LOGGED
                .lock()
                .iter()
                .any(|l| l.contains("NVSDK_NGX_VULKAN_Init_Ext2: initialised")
                    && l.contains("SDK version 0x15")),
            "{:?}",
            LOGGED.lock()
        );
        let (i2, p2, d2) = handles(2);
        let project = c"a0f57b54-1daf-4934-90ae-c4035c19df04";
        let engine = c"1.0";
        // SAFETY: as above; the strings are NUL-terminated.
        let r = unsafe {
            init_project_id_ext(
                project.as_ptr(),
                0,
                engine.as_ptr(),
                std::ptr::null(),
                i2,
                p2,
                d2,
                None,
                None,
                0x15,
                &info,
            )
        };
        assert_eq!(r, NVSDK_NGX_Result_Success);
        assert!(LOGGED
            .lock()
            .iter()
            .any(|l| l.contains("NVSDK_NGX_VULKAN_Init_ProjectID_Ext: initialised")));
        // The same checks as the public Init: old version, NULL device, empty project id.
        // SAFETY: as above.
        unsafe {
            assert_eq!(
                init_ext(7, std::ptr::null(), i, p, d, 0x12, &info),
                NVSDK_NGX_Result_FAIL_OutOfDate
            );
            assert_eq!(
                init(7, std::ptr::null(), i, p, vk::Device::null(), 0x15),
                NVSDK_NGX_Result_FAIL_InvalidParameter
            );
            assert_eq!(
                init_project_id(
                    c"".as_ptr(),
                    0,
                    std::ptr::null(),
                    std::ptr::null(),
                    i,
                    p,
                    d,
                    0x15,
                    std::ptr::null()
                ),
                NVSDK_NGX_Result_FAIL_InvalidParameter
            );
        }
        let mut left: c_uint = 99;
        // SAFETY: `left` is writable.
        let r = unsafe { shutdown1(vk::Device::null(), &mut left) };
        assert_eq!(r, NVSDK_NGX_Result_Success);
        assert_eq!(left, 0);
        assert_eq!(shutdown_all(), NVSDK_NGX_Result_FAIL_NotInitialized);
    }

    #[test]
    fn shutdown1_counts_what_still_needs_the_library() {
        let _g = SERIAL.lock();
        let (i, p, d) = handles(3);
        let (i2, p2, d2) = handles(4);
        // SAFETY: fake handles are only stored.
        unsafe {
            assert_eq!(
                init(1, std::ptr::null(), i, p, d, 0x15),
                NVSDK_NGX_Result_Success
            );
            assert_eq!(
                init(1, std::ptr::null(), i2, p2, d2, 0x15),
                NVSDK_NGX_Result_Success
            );
        }
        let mut map: *mut NVSDK_NGX_Parameter = std::ptr::null_mut();
        // SAFETY: `map` is writable; the same body as the public function serves the Core.
        let r = unsafe { super::super::exports::NVSDK_NGX_VULKAN_AllocateParameters(&mut map) };
        assert_eq!(r, NVSDK_NGX_Result_Success);
        assert_eq!(app_maps(), 1);
        let mut left: c_uint = 0;
        // One device goes: the other and the map remain.
        // SAFETY: `left` is writable.
        assert_eq!(unsafe { shutdown1(d, &mut left) }, NVSDK_NGX_Result_Success);
        assert_eq!(left, 2);
        // The last device goes; the application still holds a map, whose vtable is the
        // library's code: the Core must stay loaded.
        // SAFETY: as above.
        let r = unsafe { shutdown1(d2, &mut left) };
        assert_eq!(r, NVSDK_NGX_Result_Success);
        assert_eq!(left, 1);
        // SAFETY: `map` came from AllocateParameters.
        let r = unsafe { super::super::exports::NVSDK_NGX_VULKAN_DestroyParameters(map) };
        assert_eq!(r, NVSDK_NGX_Result_Success);
        assert_eq!(remaining().total(), 0);
        // A Shutdown1 with nothing initialised fails (no unload) and still reports 0; NULL out.
        left = 5;
        // SAFETY: as above; NULL is allowed.
        unsafe {
            assert_eq!(
                shutdown1(vk::Device::null(), &mut left),
                NVSDK_NGX_Result_FAIL_NotInitialized
            );
            assert_eq!(
                shutdown1(vk::Device::null(), std::ptr::null_mut()),
                NVSDK_NGX_Result_FAIL_NotInitialized
            );
        }
        assert_eq!(left, 0);
    }
}
