//! Public C ABI helpers the feature tests share: the result check and `SizeInBytes` read the way
//! an application reads it, through a feature's stats callback in the capability map.

use std::ffi::{c_void, CStr};

use openngx::ngx::abi::*;
use openngx::ngx::exports::*;
use openngx::ngx::param_exports::*;

/// Fails the test unless `r` is `NVSDK_NGX_Result_Success`, naming the call and the code.
pub fn ok(call: &str, r: NVSDK_NGX_Result) {
    assert_eq!(r, NVSDK_NGX_Result_Success, "{call} returned {r:#x}");
}

/// `SizeInBytes` of the feature whose stats callback the capability map holds under `callback`
/// (`DLSSNRGetStatsCallback` for feature 18, `DLSSDGetStatsCallback` for feature 13).
pub fn stats_size_in_bytes(callback: &CStr) -> u64 {
    let mut caps = std::ptr::null_mut();
    let mut cb: *mut c_void = std::ptr::null_mut();
    let mut bytes = 0u64;
    // SAFETY: valid out pointers; the callback address is a PFN_NVSDK_NGX_DLSS_GetStatsCallback.
    unsafe {
        ok(
            "GetCapabilityParameters",
            NVSDK_NGX_VULKAN_GetCapabilityParameters(&mut caps),
        );
        ok(
            "GetVoidPointer",
            NVSDK_NGX_Parameter_GetVoidPointer(caps, callback.as_ptr(), &mut cb),
        );
        assert!(!cb.is_null(), "{callback:?} is null");
        let stats: unsafe extern "C" fn(*mut NVSDK_NGX_Parameter) -> NVSDK_NGX_Result =
            std::mem::transmute(cb);
        ok("stats callback", stats(caps));
        ok(
            "GetULL",
            NVSDK_NGX_Parameter_GetULL(caps, c"SizeInBytes".as_ptr(), &mut bytes),
        );
        ok(
            "DestroyParameters",
            NVSDK_NGX_VULKAN_DestroyParameters(caps),
        );
    }
    bytes
}
