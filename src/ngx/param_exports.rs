//! The `NVSDK_NGX_Parameter_Set*/Get*` C accessors (ngx-abi.md §4.3). Like NVIDIA's, each one
//! calls the object's own virtual method, so they work on the library's maps and on parameter
//! objects the application implemented in C++. NULL object or name: setters do nothing, getters
//! return `FAIL_InvalidParameter` (outputs untouched).

use std::os::raw::{c_char, c_int, c_uint, c_ulonglong, c_void};

use super::abi::*;
use super::guard::{c_str, guard, guard_void};
use super::params::{Method, ParamRef};

fn set_with(
    entry: &str,
    p: *mut NVSDK_NGX_Parameter,
    name: *const c_char,
    f: impl FnOnce(&ParamRef, &std::ffi::CStr),
) {
    guard_void(entry, || {
        // SAFETY: NULL or a live parameter object (accessor contract); NULL name is skipped.
        if let (Some(obj), Some(k)) = (unsafe { ParamRef::new(p) }, unsafe { c_str(name) }) {
            f(&obj, k);
        }
    });
}

fn get_with<T>(
    entry: &str,
    p: *mut NVSDK_NGX_Parameter,
    name: *const c_char,
    out: *mut T,
    m: Method,
) -> NVSDK_NGX_Result {
    guard(entry, || {
        // SAFETY: NULL or a live parameter object (accessor contract).
        let (Some(obj), Some(k)) = (unsafe { ParamRef::new(p) }, unsafe { c_str(name) }) else {
            return NVSDK_NGX_Result_FAIL_InvalidParameter;
        };
        if out.is_null() {
            return NVSDK_NGX_Result_FAIL_InvalidParameter;
        }
        // SAFETY: each accessor below pairs `m` with its out type `T`.
        unsafe { obj.get_raw(m, k, out) }
    })
}

/// `Set(name, unsigned long long)`.
///
/// # Safety
/// `InParameter` must be NULL or a live parameter object; `InName` NULL or a C string.
#[cfg_attr(not(openngx_core), no_mangle)]
pub unsafe extern "C" fn NVSDK_NGX_Parameter_SetULL(
    InParameter: *mut NVSDK_NGX_Parameter,
    InName: *const c_char,
    InValue: c_ulonglong,
) {
    set_with("NVSDK_NGX_Parameter_SetULL", InParameter, InName, |o, k| {
        o.set_ull(k, InValue)
    });
}

/// `Set(name, float)`.
///
/// # Safety
/// As for [`NVSDK_NGX_Parameter_SetULL`].
#[cfg_attr(not(openngx_core), no_mangle)]
pub unsafe extern "C" fn NVSDK_NGX_Parameter_SetF(
    InParameter: *mut NVSDK_NGX_Parameter,
    InName: *const c_char,
    InValue: f32,
) {
    set_with("NVSDK_NGX_Parameter_SetF", InParameter, InName, |o, k| {
        o.set_f(k, InValue)
    });
}

/// `Set(name, double)`.
///
/// # Safety
/// As for [`NVSDK_NGX_Parameter_SetULL`].
#[cfg_attr(not(openngx_core), no_mangle)]
pub unsafe extern "C" fn NVSDK_NGX_Parameter_SetD(
    InParameter: *mut NVSDK_NGX_Parameter,
    InName: *const c_char,
    InValue: f64,
) {
    set_with("NVSDK_NGX_Parameter_SetD", InParameter, InName, |o, k| {
        o.set_d(k, InValue)
    });
}

/// `Set(name, unsigned int)`.
///
/// # Safety
/// As for [`NVSDK_NGX_Parameter_SetULL`].
#[cfg_attr(not(openngx_core), no_mangle)]
pub unsafe extern "C" fn NVSDK_NGX_Parameter_SetUI(
    InParameter: *mut NVSDK_NGX_Parameter,
    InName: *const c_char,
    InValue: c_uint,
) {
    set_with("NVSDK_NGX_Parameter_SetUI", InParameter, InName, |o, k| {
        o.set_ui(k, InValue)
    });
}

/// `Set(name, int)`.
///
/// # Safety
/// As for [`NVSDK_NGX_Parameter_SetULL`].
#[cfg_attr(not(openngx_core), no_mangle)]
pub unsafe extern "C" fn NVSDK_NGX_Parameter_SetI(
    InParameter: *mut NVSDK_NGX_Parameter,
    InName: *const c_char,
    InValue: c_int,
) {
    set_with("NVSDK_NGX_Parameter_SetI", InParameter, InName, |o, k| {
        o.set_i(k, InValue)
    });
}

/// `Set(name, ID3D11Resource*)` (stored and returned, never used on Vulkan).
///
/// # Safety
/// As for [`NVSDK_NGX_Parameter_SetULL`].
#[cfg_attr(not(openngx_core), no_mangle)]
pub unsafe extern "C" fn NVSDK_NGX_Parameter_SetD3d11Resource(
    InParameter: *mut NVSDK_NGX_Parameter,
    InName: *const c_char,
    InValue: *mut ID3D11Resource,
) {
    set_with(
        "NVSDK_NGX_Parameter_SetD3d11Resource",
        InParameter,
        InName,
        |o, k| o.set_ptr(Method::SetD3d11, k, InValue as *mut c_void),
    );
}

/// `Set(name, ID3D12Resource*)` (stored and returned, never used on Vulkan).
///
/// # Safety
/// As for [`NVSDK_NGX_Parameter_SetULL`].
#[cfg_attr(not(openngx_core), no_mangle)]
pub unsafe extern "C" fn NVSDK_NGX_Parameter_SetD3d12Resource(
    InParameter: *mut NVSDK_NGX_Parameter,
    InName: *const c_char,
    InValue: *mut ID3D12Resource,
) {
    set_with(
        "NVSDK_NGX_Parameter_SetD3d12Resource",
        InParameter,
        InName,
        |o, k| o.set_ptr(Method::SetD3d12, k, InValue as *mut c_void),
    );
}

/// `Set(name, void*)` — how Vulkan resources (`NVSDK_NGX_Resource_VK*`) and callbacks are passed.
///
/// # Safety
/// As for [`NVSDK_NGX_Parameter_SetULL`].
#[cfg_attr(not(openngx_core), no_mangle)]
pub unsafe extern "C" fn NVSDK_NGX_Parameter_SetVoidPointer(
    InParameter: *mut NVSDK_NGX_Parameter,
    InName: *const c_char,
    InValue: *mut c_void,
) {
    set_with(
        "NVSDK_NGX_Parameter_SetVoidPointer",
        InParameter,
        InName,
        |o, k| o.set_ptr(Method::SetVp, k, InValue),
    );
}

/// `Get(name, unsigned long long*)`.
///
/// # Safety
/// `InParameter` NULL or a live parameter object; `InName` NULL or a C string; `OutValue` NULL or
/// writable.
#[cfg_attr(not(openngx_core), no_mangle)]
pub unsafe extern "C" fn NVSDK_NGX_Parameter_GetULL(
    InParameter: *mut NVSDK_NGX_Parameter,
    InName: *const c_char,
    OutValue: *mut c_ulonglong,
) -> NVSDK_NGX_Result {
    get_with(
        "NVSDK_NGX_Parameter_GetULL",
        InParameter,
        InName,
        OutValue,
        Method::GetUll,
    )
}

/// `Get(name, float*)`.
///
/// # Safety
/// As for [`NVSDK_NGX_Parameter_GetULL`].
#[cfg_attr(not(openngx_core), no_mangle)]
pub unsafe extern "C" fn NVSDK_NGX_Parameter_GetF(
    InParameter: *mut NVSDK_NGX_Parameter,
    InName: *const c_char,
    OutValue: *mut f32,
) -> NVSDK_NGX_Result {
    get_with(
        "NVSDK_NGX_Parameter_GetF",
        InParameter,
        InName,
        OutValue,
        Method::GetF,
    )
}

/// `Get(name, double*)`.
///
/// # Safety
/// As for [`NVSDK_NGX_Parameter_GetULL`].
#[cfg_attr(not(openngx_core), no_mangle)]
pub unsafe extern "C" fn NVSDK_NGX_Parameter_GetD(
    InParameter: *mut NVSDK_NGX_Parameter,
    InName: *const c_char,
    OutValue: *mut f64,
) -> NVSDK_NGX_Result {
    get_with(
        "NVSDK_NGX_Parameter_GetD",
        InParameter,
        InName,
        OutValue,
        Method::GetD,
    )
}

/// `Get(name, unsigned int*)`.
///
/// # Safety
/// As for [`NVSDK_NGX_Parameter_GetULL`].
#[cfg_attr(not(openngx_core), no_mangle)]
pub unsafe extern "C" fn NVSDK_NGX_Parameter_GetUI(
    InParameter: *mut NVSDK_NGX_Parameter,
    InName: *const c_char,
    OutValue: *mut c_uint,
) -> NVSDK_NGX_Result {
    get_with(
        "NVSDK_NGX_Parameter_GetUI",
        InParameter,
        InName,
        OutValue,
        Method::GetUi,
    )
}

/// `Get(name, int*)`.
///
/// # Safety
/// As for [`NVSDK_NGX_Parameter_GetULL`].
#[cfg_attr(not(openngx_core), no_mangle)]
pub unsafe extern "C" fn NVSDK_NGX_Parameter_GetI(
    InParameter: *mut NVSDK_NGX_Parameter,
    InName: *const c_char,
    OutValue: *mut c_int,
) -> NVSDK_NGX_Result {
    get_with(
        "NVSDK_NGX_Parameter_GetI",
        InParameter,
        InName,
        OutValue,
        Method::GetI,
    )
}

/// `Get(name, ID3D11Resource**)`.
///
/// # Safety
/// As for [`NVSDK_NGX_Parameter_GetULL`].
#[cfg_attr(not(openngx_core), no_mangle)]
pub unsafe extern "C" fn NVSDK_NGX_Parameter_GetD3d11Resource(
    InParameter: *mut NVSDK_NGX_Parameter,
    InName: *const c_char,
    OutValue: *mut *mut ID3D11Resource,
) -> NVSDK_NGX_Result {
    get_with(
        "NVSDK_NGX_Parameter_GetD3d11Resource",
        InParameter,
        InName,
        OutValue as *mut *mut c_void,
        Method::GetD3d11,
    )
}

/// `Get(name, ID3D12Resource**)`.
///
/// # Safety
/// As for [`NVSDK_NGX_Parameter_GetULL`].
#[cfg_attr(not(openngx_core), no_mangle)]
pub unsafe extern "C" fn NVSDK_NGX_Parameter_GetD3d12Resource(
    InParameter: *mut NVSDK_NGX_Parameter,
    InName: *const c_char,
    OutValue: *mut *mut ID3D12Resource,
) -> NVSDK_NGX_Result {
    get_with(
        "NVSDK_NGX_Parameter_GetD3d12Resource",
        InParameter,
        InName,
        OutValue as *mut *mut c_void,
        Method::GetD3d12,
    )
}

/// `Get(name, void**)`.
///
/// # Safety
/// As for [`NVSDK_NGX_Parameter_GetULL`].
#[cfg_attr(not(openngx_core), no_mangle)]
pub unsafe extern "C" fn NVSDK_NGX_Parameter_GetVoidPointer(
    InParameter: *mut NVSDK_NGX_Parameter,
    InName: *const c_char,
    OutValue: *mut *mut c_void,
) -> NVSDK_NGX_Result {
    get_with(
        "NVSDK_NGX_Parameter_GetVoidPointer",
        InParameter,
        InName,
        OutValue,
        Method::GetVp,
    )
}
