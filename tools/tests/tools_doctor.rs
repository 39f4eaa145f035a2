//! `openngx doctor` on lavapipe: the device, the exact route's features, the routes and the
//! model search (valid, invalid and missing model).

mod tools_common;

use std::path::Path;

use tools_common::{openngx, stdout, synthetic_model, tempdir};

const LAVAPIPE: &str = "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json";

/// Run doctor on lavapipe with the given model directory (`""` = unset) and cache home.
fn doctor(model_dir: &str, cache_home: &Path) -> Option<(Option<i32>, String)> {
    if !Path::new(LAVAPIPE).exists() {
        println!("SKIP: lavapipe is not installed ({LAVAPIPE})");
        return None;
    }
    let o = openngx(
        &["doctor"],
        &[
            ("VK_DRIVER_FILES", LAVAPIPE),
            ("OPENNGX_MODEL_DIR", model_dir),
            ("XDG_CACHE_HOME", cache_home.to_str().unwrap()),
        ],
    );
    Some((o.status.code(), stdout(&o)))
}

fn assert_lines(text: &str, lines: &[&str]) {
    for line in lines {
        assert!(text.contains(line), "missing `{line}` in:\n{text}");
    }
}

#[test]
fn doctor_on_lavapipe_with_a_valid_model() {
    let (_, model_dir, _) = synthetic_model();
    let cache = tempdir("tools-doctor-cache-");
    let Some((code, text)) = doctor(model_dir.to_str().unwrap(), cache.path()) else {
        return;
    };
    assert_eq!(code, Some(0), "{text}");
    assert_lines(
        &text,
        &[
            "vulkan: loader instance version 1.",
            "vulkan: 1 device(s)",
            "device 0: llvmpipe",
            "(CPU, vendor 0x10005",
            "  Vulkan 1.2+: yes",
            "  shaderFloat16: yes",
            "  shaderInt8: yes",
            "  storageBuffer8BitAccess: yes",
            "  storageBuffer16BitAccess: yes",
            "  maxPushConstantsSize >= 128: yes",
            "  timestamps: yes",
            "  route exact: available",
            "  route tensor: unavailable",
            &format!("  $OPENNGX_MODEL_DIR: {} (found)", model_dir.display()),
            &format!(
                "  user cache: {} (not found)",
                cache.path().join("openngx/model").display()
            ),
            &format!(
                "model: {} valid (11 stages, 153 records, 147683778 bytes, SHA-256 verified",
                model_dir.display()
            ),
            "doctor: OK",
        ],
    );
}

#[test]
fn doctor_reports_invalid_and_missing_models() {
    let cache = tempdir("tools-doctor-cache-");
    // $OPENNGX_MODEL_DIR set to a directory without a model: authoritative, so invalid -> exit 1.
    let empty = tempdir("tools-doctor-empty-");
    let Some((code, text)) = doctor(empty.path().to_str().unwrap(), cache.path()) else {
        return;
    };
    assert_eq!(code, Some(1), "{text}");
    assert_lines(
        &text,
        &[
            "route exact: available",
            &format!("model: {} INVALID: ", empty.path().display()),
            "manifest.json",
            "doctor: PROBLEMS FOUND",
        ],
    );
    // Set to a path that does not exist: still the one used (no silent fallback).
    let gone = empty.path().join("gone");
    let Some((code, text)) = doctor(gone.to_str().unwrap(), cache.path()) else {
        return;
    };
    assert_eq!(code, Some(1), "{text}");
    assert_lines(
        &text,
        &[
            &format!("  $OPENNGX_MODEL_DIR: {} (not found)", gone.display()),
            &format!("model: {} INVALID", gone.display()),
        ],
    );
    // Unset and nothing installed: a warning only.
    let Some((code, text)) = doctor("", cache.path()) else {
        return;
    };
    assert_eq!(code, Some(0), "{text}");
    assert_lines(
        &text,
        &[
            "  $OPENNGX_MODEL_DIR: not set",
            "model: none found (warning",
            "doctor: OK",
        ],
    );
}
