//! Result-code names: the table behind `GetNGXResultAsString` and the names used in log lines.
//!
//! Owns the process-lifetime wide strings that `GetNGXResultAsString` hands out (callers keep
//! the pointer indefinitely, so they are built once and never freed).

use once_cell::sync::Lazy;

use super::abi::*;
use crate::feature::FeatureError;

/// Every result code this library knows, with its SDK name.
pub const RESULT_NAMES: &[(NVSDK_NGX_Result, &str)] = &[
    (NVSDK_NGX_Result_Success, "NVSDK_NGX_Result_Success"),
    (NVSDK_NGX_Result_Fail, "NVSDK_NGX_Result_Fail"),
    (
        NVSDK_NGX_Result_FAIL_FeatureNotSupported,
        "NVSDK_NGX_Result_FAIL_FeatureNotSupported",
    ),
    (
        NVSDK_NGX_Result_FAIL_PlatformError,
        "NVSDK_NGX_Result_FAIL_PlatformError",
    ),
    (
        NVSDK_NGX_Result_FAIL_FeatureAlreadyExists,
        "NVSDK_NGX_Result_FAIL_FeatureAlreadyExists",
    ),
    (
        NVSDK_NGX_Result_FAIL_FeatureNotFound,
        "NVSDK_NGX_Result_FAIL_FeatureNotFound",
    ),
    (
        NVSDK_NGX_Result_FAIL_InvalidParameter,
        "NVSDK_NGX_Result_FAIL_InvalidParameter",
    ),
    (
        NVSDK_NGX_Result_FAIL_ScratchBufferTooSmall,
        "NVSDK_NGX_Result_FAIL_ScratchBufferTooSmall",
    ),
    (
        NVSDK_NGX_Result_FAIL_NotInitialized,
        "NVSDK_NGX_Result_FAIL_NotInitialized",
    ),
    (
        NVSDK_NGX_Result_FAIL_UnsupportedInputFormat,
        "NVSDK_NGX_Result_FAIL_UnsupportedInputFormat",
    ),
    (
        NVSDK_NGX_Result_FAIL_RWFlagMissing,
        "NVSDK_NGX_Result_FAIL_RWFlagMissing",
    ),
    (
        NVSDK_NGX_Result_FAIL_MissingInput,
        "NVSDK_NGX_Result_FAIL_MissingInput",
    ),
    (
        NVSDK_NGX_Result_FAIL_UnableToInitializeFeature,
        "NVSDK_NGX_Result_FAIL_UnableToInitializeFeature",
    ),
    (
        NVSDK_NGX_Result_FAIL_OutOfDate,
        "NVSDK_NGX_Result_FAIL_OutOfDate",
    ),
    (
        NVSDK_NGX_Result_FAIL_OutOfGPUMemory,
        "NVSDK_NGX_Result_FAIL_OutOfGPUMemory",
    ),
    (
        NVSDK_NGX_Result_FAIL_UnsupportedFormat,
        "NVSDK_NGX_Result_FAIL_UnsupportedFormat",
    ),
    (
        NVSDK_NGX_Result_FAIL_UnableToWriteToAppDataPath,
        "NVSDK_NGX_Result_FAIL_UnableToWriteToAppDataPath",
    ),
    (
        NVSDK_NGX_Result_FAIL_UnsupportedParameter,
        "NVSDK_NGX_Result_FAIL_UnsupportedParameter",
    ),
    (NVSDK_NGX_Result_FAIL_Denied, "NVSDK_NGX_Result_FAIL_Denied"),
    (
        NVSDK_NGX_Result_FAIL_NotImplemented,
        "NVSDK_NGX_Result_FAIL_NotImplemented",
    ),
];

/// The name returned for codes outside the table.
pub const UNKNOWN_RESULT_NAME: &str = "NVSDK_NGX_Result_Unknown";

/// The SDK name of a result code (`NVSDK_NGX_Result_Unknown` for codes outside the table).
pub fn result_name(code: NVSDK_NGX_Result) -> &'static str {
    RESULT_NAMES
        .iter()
        .find(|(c, _)| *c == code)
        .map_or(UNKNOWN_RESULT_NAME, |(_, n)| n)
}

/// True for codes the SDK's `NVSDK_NGX_FAILED` macro calls failures.
pub fn failed(code: NVSDK_NGX_Result) -> bool {
    (code & 0xFFF0_0000) == 0xBAD0_0000
}

fn to_wide(s: &str) -> Box<[wchar_t]> {
    // All names are ASCII, so one code unit per char on both 16- and 32-bit wchar_t.
    s.bytes()
        .map(|b| b as wchar_t)
        .chain(std::iter::once(0))
        .collect()
}

static WIDE_NAMES: Lazy<Vec<(NVSDK_NGX_Result, Box<[wchar_t]>)>> =
    Lazy::new(|| RESULT_NAMES.iter().map(|&(c, n)| (c, to_wide(n))).collect());
static WIDE_UNKNOWN: Lazy<Box<[wchar_t]>> = Lazy::new(|| to_wide(UNKNOWN_RESULT_NAME));

/// A NUL-terminated wide string naming `code`, valid for the life of the process.
pub fn result_name_wide(code: NVSDK_NGX_Result) -> *const wchar_t {
    WIDE_NAMES
        .iter()
        .find(|(c, _)| *c == code)
        .map_or(WIDE_UNKNOWN.as_ptr(), |(_, w)| w.as_ptr())
}

/// The result code a value stands for at the C boundary.
pub trait ResultCode {
    /// The NGX result code reported for this value.
    fn code(&self) -> NVSDK_NGX_Result;
}

impl ResultCode for FeatureError {
    fn code(&self) -> NVSDK_NGX_Result {
        match self {
            FeatureError::InvalidParameter { .. } => NVSDK_NGX_Result_FAIL_InvalidParameter,
            FeatureError::UnsupportedParameter { .. } => NVSDK_NGX_Result_FAIL_UnsupportedParameter,
            FeatureError::UnsupportedInputFormat { .. } => {
                NVSDK_NGX_Result_FAIL_UnsupportedInputFormat
            }
            FeatureError::UnsupportedOutputFormat { .. } => NVSDK_NGX_Result_FAIL_UnsupportedFormat,
            FeatureError::NotReadWrite { .. } => NVSDK_NGX_Result_FAIL_RWFlagMissing,
            FeatureError::MissingInput { .. } => NVSDK_NGX_Result_FAIL_MissingInput,
            FeatureError::Model { .. } => NVSDK_NGX_Result_FAIL_UnableToInitializeFeature,
            FeatureError::OutOfGpuMemory(_) => NVSDK_NGX_Result_FAIL_OutOfGPUMemory,
            FeatureError::Platform(_) => NVSDK_NGX_Result_FAIL_PlatformError,
            FeatureError::BackendUnavailable { .. } => NVSDK_NGX_Result_FAIL_NotImplemented,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_wide_strings_terminate() {
        for (i, (code, name)) in RESULT_NAMES.iter().enumerate() {
            assert_eq!(
                RESULT_NAMES.iter().filter(|(c, _)| c == code).count(),
                1,
                "{name}"
            );
            let p = result_name_wide(*code);
            let mut s = String::new();
            for k in 0.. {
                // SAFETY: the table strings are NUL-terminated and live for the process.
                let ch = unsafe { *p.add(k) };
                if ch == 0 {
                    break;
                }
                s.push(char::from_u32(ch as u32).unwrap_or('?'));
            }
            assert_eq!(&s, name, "entry {i}");
        }
        assert_eq!(result_name(0xBAD0_00FF), UNKNOWN_RESULT_NAME);
        assert!(failed(NVSDK_NGX_Result_FAIL_Denied));
        assert!(!failed(NVSDK_NGX_Result_Success));
    }

    #[test]
    fn feature_errors_map_to_distinct_codes() {
        let e = FeatureError::UnsupportedInputFormat {
            key: "DLSSNR.Color".into(),
            format: ash::vk::Format::R8_UNORM,
        };
        assert_eq!(e.code(), NVSDK_NGX_Result_FAIL_UnsupportedInputFormat);
        assert!(e.to_string().contains("DLSSNR.Color"));
        assert_eq!(
            FeatureError::BackendUnavailable { feature: 18 }.code(),
            NVSDK_NGX_Result_FAIL_NotImplemented
        );
        assert_eq!(
            FeatureError::NotReadWrite { key: "o".into() }.code(),
            NVSDK_NGX_Result_FAIL_RWFlagMissing
        );
        assert_eq!(
            FeatureError::OutOfGpuMemory("x".into()).code(),
            NVSDK_NGX_Result_FAIL_OutOfGPUMemory
        );
    }
}
