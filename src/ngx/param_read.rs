//! Typed reads of a caller's parameter object for feature descriptions: optional numbers,
//! pointers, sub-rectangles and checked image resources, by key name. A failed Get counts as
//! "absent" (foreign maps disagree on the code they return for a missing key); value checks
//! are the network's, not these helpers'.

use std::ffi::CString;

use super::abi::NVSDK_NGX_OPT_LEVEL_RELEASE;
use super::params::ParamRef;
use super::resource::{check_image, read_resource, Role};
use crate::feature::{FeatureError, ImageInput, Rect};

/// The key as a C string. Key names are static text without NUL bytes; one that had one would
/// read as the empty key, which no map holds.
pub fn key(name: &str) -> CString {
    CString::new(name).unwrap_or_default()
}

/// An unsigned value, when present and numeric.
pub fn opt_ui(p: &ParamRef, name: &str) -> Option<u32> {
    p.get_ui(&key(name)).ok()
}

/// A signed value, when present and numeric.
pub fn opt_i(p: &ParamRef, name: &str) -> Option<i32> {
    p.get_i(&key(name)).ok()
}

/// A float value, when present and numeric (finite or not: the network decides).
pub fn opt_f(p: &ParamRef, name: &str) -> Option<f32> {
    p.get_f(&key(name)).ok()
}

/// True when `name` holds a non-NULL pointer.
pub fn present_pointer(p: &ParamRef, name: &str) -> bool {
    p.get_vp(&key(name)).is_ok_and(|v| !v.is_null())
}

/// An [`FeatureError::InvalidParameter`] naming `name`.
pub fn invalid(name: &str, reason: impl Into<String>) -> FeatureError {
    FeatureError::InvalidParameter {
        key: name.to_owned(),
        reason: reason.into(),
    }
}

/// An [`FeatureError::UnsupportedParameter`] naming `name`.
pub fn unsupported(name: &str, reason: impl Into<String>) -> FeatureError {
    FeatureError::UnsupportedParameter {
        key: name.to_owned(),
        reason: reason.into(),
    }
}

/// The region `<resource>Subrect{BaseX,BaseY,Width,Height}`; absent values default to the
/// origin and the feature size `width`x`height`.
pub fn subrect(p: &ParamRef, resource: &str, width: u32, height: u32) -> Rect {
    let part = |s: &str| opt_ui(p, &format!("{resource}Subrect{s}"));
    Rect {
        x: part("BaseX").unwrap_or(0),
        y: part("BaseY").unwrap_or(0),
        width: part("Width").unwrap_or(width),
        height: part("Height").unwrap_or(height),
    }
}

/// The image resource under `name`, checked for `role` and its sub-rectangle (defaults: the
/// feature size at the origin). `Ok(None)` when absent.
pub fn image(
    p: &ParamRef,
    name: &str,
    role: Role,
    width: u32,
    height: u32,
) -> Result<Option<ImageInput>, FeatureError> {
    match read_resource(p, &key(name))? {
        Some(res) => check_image(name, role, &res, subrect(p, name, width, height)).map(Some),
        None => Ok(None),
    }
}

/// A required image resource: [`FeatureError::MissingInput`] when absent.
pub fn required_image(
    p: &ParamRef,
    name: &str,
    role: Role,
    width: u32,
    height: u32,
) -> Result<ImageInput, FeatureError> {
    image(p, name, role, width, height)?.ok_or_else(|| FeatureError::MissingInput {
        key: name.to_owned(),
    })
}

/// Keys every feature's stats callback and creation share (ngx-abi.md): one definition, re-exported
/// by each feature's `keys`.
pub mod shared_keys {
    use std::ffi::CStr;
    /// Stats output: device memory in bytes (ull).
    pub const SIZE_IN_BYTES: &CStr = c"SizeInBytes";
    /// Stats output: optimisation level, EParameter form of `Snippet.OptLevel` (uint).
    pub const OPT_LEVEL_E: &CStr = c"#\x44";
    /// Stats output: dev-branch flag, EParameter form of `Snippet.IsDevBranch` (uint).
    pub const IS_DEV_BRANCH_E: &CStr = c"#\x45";
    /// Create: custom allocator (must be absent).
    pub const RESOURCE_ALLOC_CALLBACK: &str = "ResourceAllocCallback";
    /// Create: custom allocator (must be absent).
    pub const RESOURCE_RELEASE_CALLBACK: &str = "ResourceReleaseCallback";
}

/// What a feature's `Get…StatsCallback` writes: `SizeInBytes` = `bytes` (ull), `#\x44` = 40
/// (release build) and `#\x45` = 0 (not a dev branch), both uint.
pub fn write_stats(p: &ParamRef, bytes: u64) {
    p.set_ull(shared_keys::SIZE_IN_BYTES, bytes);
    p.set_ui(shared_keys::OPT_LEVEL_E, NVSDK_NGX_OPT_LEVEL_RELEASE);
    p.set_ui(shared_keys::IS_DEV_BRANCH_E, 0);
}

/// Creation refuses the application's own resource allocators (`ResourceAllocCallback`,
/// `ResourceReleaseCallback`): the library allocates its memory itself.
pub fn refuse_custom_allocators(p: &ParamRef) -> Result<(), FeatureError> {
    for name in [
        shared_keys::RESOURCE_ALLOC_CALLBACK,
        shared_keys::RESOURCE_RELEASE_CALLBACK,
    ] {
        if present_pointer(p, name) {
            return Err(unsupported(
                name,
                "custom resource allocators are not supported",
            ));
        }
    }
    Ok(())
}
