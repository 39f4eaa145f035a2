//! The C-visible types of the NGX ABI (what cbindgen turns into `include/openngx.h`).

/// The result code every NGX entry point returns.
pub type NVSDK_NGX_Result = u32;

/// The call succeeded.
pub const NVSDK_NGX_Result_Success: NVSDK_NGX_Result = 0x1;
/// The generic failure code.
pub const NVSDK_NGX_Result_Fail: NVSDK_NGX_Result = 0xBAD00000;
