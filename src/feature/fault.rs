//! Failure injection for the lifetime tests (`tests/feature_soak.rs`, `capi-tests/cycle.c`).
//!
//! With `OPENNGX_TEST_FAIL_CREATION=1` in the environment every feature creation fails with
//! [`FeatureError::OutOfGpuMemory`] at the last point where a real creation can fail: after the
//! model, the weights, the network and the frame were built, when only recording is left. That
//! is the failure a test cannot otherwise provoke on demand (device memory running out for the
//! last descriptor pool), and the one whose clean-up the tests check: everything the creation
//! made must be freed. Without the variable (production) it costs one environment lookup per
//! creation.

use super::FeatureError;

/// The variable that turns the injected failure on (value `1`).
pub const FAIL_CREATION_ENV: &str = "OPENNGX_TEST_FAIL_CREATION";

/// `Err` when the test hook asks creation to fail.
pub fn creation() -> Result<(), FeatureError> {
    if std::env::var_os(FAIL_CREATION_ENV).is_some_and(|v| v == "1") {
        return Err(FeatureError::OutOfGpuMemory(format!(
            "{FAIL_CREATION_ENV}=1: the test hook failed the creation once everything was built"
        )));
    }
    Ok(())
}
