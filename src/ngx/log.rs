//! Library log messages and their sinks: the applications' `NVSDK_NGX_AppLogCallback`s
//! (registered per device by Init through `FeatureCommonInfo.LoggingInfo`) and stderr when
//! `OPENNGX_LOG` is set (`1`/`on`: lifecycle and errors, `2`/`verbose`: everything).
//!
//! The sink list has its own lock, separate from the library state, so that logging never waits
//! on (or deadlocks with) an entry point that holds the state lock.

use std::ffi::CString;

use parking_lot::RwLock;

use super::abi::*;

/// Environment variable that turns on the stderr sink.
pub const LOG_ENV: &str = "OPENNGX_LOG";

#[derive(Clone, Copy)]
struct Sink {
    owner: u64,
    callback: unsafe extern "C" fn(
        *const std::os::raw::c_char,
        NVSDK_NGX_Logging_Level,
        NVSDK_NGX_Feature,
    ),
    level: NVSDK_NGX_Logging_Level,
    exclusive: bool,
}

static SINKS: RwLock<Vec<Sink>> = RwLock::new(Vec::new());

/// Registers an application callback for `owner` (a device handle), replacing an earlier one.
pub fn add_sink(owner: u64, info: &NVSDK_NGX_LoggingInfo) {
    let mut sinks = SINKS.write();
    sinks.retain(|s| s.owner != owner);
    if let Some(callback) = info.LoggingCallback {
        if info.MinimumLoggingLevel > NVSDK_NGX_LOGGING_LEVEL_OFF {
            sinks.push(Sink {
                owner,
                callback,
                level: info.MinimumLoggingLevel,
                exclusive: info.DisableOtherLoggingSinks,
            });
        }
    }
}

/// Drops the callback registered for `owner`.
pub fn remove_sink(owner: u64) {
    SINKS.write().retain(|s| s.owner != owner);
}

/// Drops every callback (final Shutdown).
pub fn clear_sinks() {
    SINKS.write().clear();
}

fn stderr_level() -> NVSDK_NGX_Logging_Level {
    match std::env::var(LOG_ENV).as_deref().map(str::trim) {
        Ok("2") | Ok("verbose") | Ok("VERBOSE") => NVSDK_NGX_LOGGING_LEVEL_VERBOSE,
        Ok("") | Ok("0") | Ok("off") | Ok("OFF") | Err(_) => NVSDK_NGX_LOGGING_LEVEL_OFF,
        Ok(_) => NVSDK_NGX_LOGGING_LEVEL_ON,
    }
}

/// Sends `msg` at `level` from component `feature` to every sink that wants it.
pub fn emit(level: NVSDK_NGX_Logging_Level, feature: NVSDK_NGX_Feature, msg: &str) {
    let text = format!("openngx: {msg}");
    // Copy the sink list so no lock is held while application code runs.
    let sinks: Vec<Sink> = SINKS.read().clone();
    let exclusive = sinks.iter().any(|s| s.exclusive);
    if !exclusive && level <= stderr_level() {
        eprintln!("{text}");
    }
    if sinks.iter().all(|s| level > s.level) {
        return;
    }
    let c = CString::new(text.replace('\0', " ")).unwrap_or_default();
    for s in sinks.iter().filter(|s| level <= s.level) {
        // SAFETY: the application registered this callback through Init and promised it may be
        // called from any thread; the message outlives the call.
        unsafe { (s.callback)(c.as_ptr(), level, feature) };
    }
}

/// An error or a refused call (level ON).
pub fn error(feature: NVSDK_NGX_Feature, msg: &str) {
    emit(NVSDK_NGX_LOGGING_LEVEL_ON, feature, msg);
}

/// A lifecycle message (level ON).
pub fn info(feature: NVSDK_NGX_Feature, msg: &str) {
    emit(NVSDK_NGX_LOGGING_LEVEL_ON, feature, msg);
}

/// Per-call detail (level VERBOSE).
pub fn verbose(feature: NVSDK_NGX_Feature, msg: &str) {
    emit(NVSDK_NGX_LOGGING_LEVEL_VERBOSE, feature, msg);
}
