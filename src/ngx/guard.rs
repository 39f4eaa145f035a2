//! The panic firewall of every export and the helpers that read caller memory (C strings, wide
//! strings) into owned Rust values, so no caller pointer outlives the call.

use std::ffi::CStr;
use std::os::raw::c_char;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;

use super::abi::*;
use super::log;

/// Runs `body`; a panic becomes `NVSDK_NGX_Result_Fail` plus an error log line naming `entry`.
pub fn guard(entry: &str, body: impl FnOnce() -> NVSDK_NGX_Result) -> NVSDK_NGX_Result {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(code) => code,
        Err(payload) => {
            report_panic(entry, payload.as_ref());
            NVSDK_NGX_Result_Fail
        }
    }
}

/// `guard` for entry points without a result (the parameter setters): a panic is logged and
/// swallowed so it never unwinds into C.
pub fn guard_void(entry: &str, body: impl FnOnce()) {
    if let Err(payload) = catch_unwind(AssertUnwindSafe(body)) {
        report_panic(entry, payload.as_ref());
    }
}

fn report_panic(entry: &str, payload: &(dyn std::any::Any + Send)) {
    let what = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_string());
    // Logging itself must not panic back out of the firewall.
    let _ = catch_unwind(AssertUnwindSafe(|| {
        log::error(
            NVSDK_NGX_Feature_Reserved_SDK,
            &format!("{entry}: internal error: {what}"),
        )
    }));
}

/// Longest wide string read from a caller (paths); longer input is treated as invalid.
pub const MAX_WIDE_LEN: usize = 32 * 1024;

/// Copies a NUL-terminated C string. `None` for NULL.
///
/// # Safety
/// `p` must be NULL or point to a NUL-terminated string.
pub unsafe fn c_str<'a>(p: *const c_char) -> Option<&'a CStr> {
    if p.is_null() {
        None
    } else {
        // SAFETY: the caller guarantees NUL termination.
        Some(unsafe { CStr::from_ptr(p) })
    }
}

/// Why a wide string could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WideError {
    /// No terminator within `MAX_WIDE_LEN` code units.
    #[error("wide string longer than {MAX_WIDE_LEN} code units (missing terminator?)")]
    TooLong,
    /// A code unit that is not a Unicode scalar value.
    #[error("wide string holds an invalid code unit {0:#x} at index {1}")]
    Invalid(u32, usize),
}

/// Copies a NUL-terminated `wchar_t` string (UTF-32 on Linux) into a `String`. `Ok(None)` for NULL.
///
/// # Safety
/// `p` must be NULL or point to a NUL-terminated wide string.
pub unsafe fn wide_str(p: *const wchar_t) -> Result<Option<String>, WideError> {
    if p.is_null() {
        return Ok(None);
    }
    let mut units = Vec::new();
    for i in 0..MAX_WIDE_LEN {
        // SAFETY: reading stops at the terminator the caller guarantees.
        let u = unsafe { *p.add(i) };
        if u == 0 {
            return decode_wide(&units).map(Some);
        }
        units.push(u as u32);
    }
    Err(WideError::TooLong)
}

#[cfg(not(windows))]
fn decode_wide(units: &[u32]) -> Result<String, WideError> {
    units
        .iter()
        .enumerate()
        .map(|(i, &u)| char::from_u32(u).ok_or(WideError::Invalid(u, i)))
        .collect()
}

#[cfg(windows)]
fn decode_wide(units: &[u32]) -> Result<String, WideError> {
    let u16s: Vec<u16> = units.iter().map(|&u| u as u16).collect();
    char::decode_utf16(u16s.iter().copied())
        .enumerate()
        .map(|(i, r)| r.map_err(|e| WideError::Invalid(u32::from(e.unpaired_surrogate()), i)))
        .collect()
}

/// Copies a wide path string. `Ok(None)` for NULL or empty.
///
/// # Safety
/// As for [`wide_str`].
pub unsafe fn wide_path(p: *const wchar_t) -> Result<Option<PathBuf>, WideError> {
    // SAFETY: forwarded contract.
    Ok(unsafe { wide_str(p) }?
        .filter(|s| !s.is_empty())
        .map(PathBuf::from))
}

/// Writes `value` through `out` when `out` is not NULL.
///
/// # Safety
/// `out` must be NULL or valid for a write of `T`.
pub unsafe fn write_out<T>(out: *mut T, value: T) -> bool {
    if out.is_null() {
        false
    } else {
        // SAFETY: caller contract; unaligned-safe write because C callers may pack oddly.
        unsafe { out.write_unaligned(value) };
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guard_turns_panics_into_fail() {
        assert_eq!(guard("test", || panic!("boom")), NVSDK_NGX_Result_Fail);
        assert_eq!(
            guard("test", || NVSDK_NGX_Result_Success),
            NVSDK_NGX_Result_Success
        );
        guard_void("test", || panic!("boom"));
    }

    #[test]
    fn wide_strings_decode_and_reject_garbage() {
        let w: Vec<wchar_t> = "/tmp/ä".chars().map(|c| c as wchar_t).chain([0]).collect();
        assert_eq!(
            // SAFETY: `w` is a local, NUL-terminated wide string that outlives the call.
            unsafe { wide_str(w.as_ptr()) },
            Ok(Some("/tmp/ä".to_string()))
        );
        // SAFETY: NULL is allowed.
        assert_eq!(unsafe { wide_str(std::ptr::null()) }, Ok(None));
        #[cfg(not(windows))]
        {
            let bad: Vec<wchar_t> = vec![0x41, 0xD800, 0];
            assert_eq!(
                // SAFETY: `bad` is a local, NUL-terminated wide string that outlives the call.
                unsafe { wide_str(bad.as_ptr()) },
                Err(WideError::Invalid(0xD800, 1))
            );
        }
        let empty: Vec<wchar_t> = vec![0];
        // SAFETY: NUL-terminated local buffer.
        assert_eq!(unsafe { wide_path(empty.as_ptr()) }, Ok(None));
    }
}
