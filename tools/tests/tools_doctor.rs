//! `openngx doctor` on lavapipe: the device, the exact route's features, the routes and the
//! model search of an unmodified game's Core (valid, invalid and missing model; the order of the
//! candidates with a Core installed under a temporary prefix).

mod tools_common;

use std::path::Path;

use tools_common::{openngx, stderr, stdout, synthetic_model, tempdir};

const LAVAPIPE: &str = "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json";

/// Run doctor on lavapipe with the given model directory (`""` = unset), user data home and
/// Core (a path under a private prefix, so that nothing of the machine's own is searched).
fn doctor_for(model_dir: &str, data_home: &Path, core: &Path) -> Option<(Option<i32>, String)> {
    if !Path::new(LAVAPIPE).exists() {
        println!("SKIP: lavapipe is not installed ({LAVAPIPE})");
        return None;
    }
    let o = openngx(
        &["doctor", "--core", core.to_str().unwrap()],
        &[
            ("VK_DRIVER_FILES", LAVAPIPE),
            ("OPENNGX_MODEL_DIR", model_dir),
            ("XDG_DATA_HOME", data_home.to_str().unwrap()),
        ],
    );
    Some((o.status.code(), stdout(&o)))
}

/// [`doctor_for`] with a Core path under `data_home` that does not exist.
fn doctor(model_dir: &str, data_home: &Path) -> Option<(Option<i32>, String)> {
    doctor_for(
        model_dir,
        data_home,
        &data_home.join("prefix/lib/openngx/libnvidia-ngx.so.1"),
    )
}

fn assert_lines(text: &str, lines: &[&str]) {
    for line in lines {
        assert!(text.contains(line), "missing `{line}` in:\n{text}");
    }
}

#[test]
fn doctor_on_lavapipe_with_a_valid_model() {
    let (model_dir, _) = synthetic_model();
    let data = tempdir("tools-doctor-data-");
    let Some((code, text)) = doctor(model_dir.to_str().unwrap(), data.path()) else {
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
            "  limits: maxStorageBufferRange 134217728, maxComputeWorkGroupCount [65535, 65535, 65535], maxMemoryAllocationSize 2147483648",
            // lavapipe's 128 MiB range: the field's tensors run in row bands; in strips even
            // the API's largest size needs no field tensor over one 2 GiB allocation.
            "  size 1920x1080: fits, exact route workspace ",
            "  size 3840x2160: fits, exact route workspace ",
            "  size 8192x2048: fits, exact route workspace ",
            "  route tensor: unavailable",
            &format!(
                "  $OPENNGX_MODEL_DIR: {} (found) - authoritative",
                model_dir.display()
            ),
            &format!(
                "  4. user data directory: {} (not searched: $OPENNGX_MODEL_DIR is set)",
                data.path().join("openngx/model").display()
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
    let data = tempdir("tools-doctor-data-");
    // $OPENNGX_MODEL_DIR set to a directory without a model: authoritative, so invalid -> exit 1.
    let empty = tempdir("tools-doctor-empty-");
    let Some((code, text)) = doctor(empty.path().to_str().unwrap(), data.path()) else {
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
    let Some((code, text)) = doctor(gone.to_str().unwrap(), data.path()) else {
        return;
    };
    assert_eq!(code, Some(1), "{text}");
    assert_lines(
        &text,
        &[
            &format!("  $OPENNGX_MODEL_DIR: {} (not found)", gone.display()),
            &format!("model: {} INVALID: not a directory", gone.display()),
        ],
    );
    // Unset and nothing installed: a warning only.
    let Some((code, text)) = doctor("", data.path()) else {
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

/// An unmodified game's Core under a prefix: the search shows every candidate in the library's
/// order, the user data directory written by `synth-model` without `--out` is found, an empty
/// directory earlier in the order is final, and the installed data directory is used when it is
/// the first that exists.
#[test]
fn doctor_follows_the_cores_search_order() {
    let root = tempdir("tools-doctor-order-");
    let prefix = root.path().join("prefix");
    let core = prefix.join("lib/openngx/libnvidia-ngx.so.1");
    std::fs::create_dir_all(core.parent().unwrap()).unwrap();
    std::fs::write(&core, b"").unwrap();
    let data = root.path().join("data");
    let user_model = data.join("openngx/model");
    let installed = prefix.join("share/openngx/model");

    let Some((code, text)) = doctor_for("", &data, &core) else {
        return;
    };
    assert_eq!(code, Some(0), "{text}");
    assert_lines(
        &text,
        &[
            &format!(
                "model search of an unmodified game's Core, {} (present):",
                core.display()
            ),
            "  $OPENNGX_MODEL_DIR: not set",
            &format!(
                "  1. next to the library: {} (not found)",
                prefix.join("lib/openngx/openngx-model").display()
            ),
            "  2. application data path: <the data path the game gives to Init>/openngx-model",
            "  3. PathListInfo path: <each PathListInfo path the game gives to Init>/openngx-model",
            &format!(
                "  4. user data directory: {} (not found)",
                user_model.display()
            ),
            &format!(
                "  5. installed data directory: {} (not found)",
                installed.display()
            ),
            "model: none found (warning",
        ],
    );

    // `synth-model` without --out writes the user data directory (parents created).
    let o = openngx(
        &["synth-model", "--seed", "5"],
        &[("XDG_DATA_HOME", data.to_str().unwrap())],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stdout(&o).contains(&format!(
            "{} is the user data directory",
            user_model.display()
        )),
        "{}",
        stdout(&o)
    );
    let Some((code, text)) = doctor_for("", &data, &core) else {
        return;
    };
    assert_eq!(code, Some(0), "{text}");
    assert_lines(
        &text,
        &[
            &format!("  4. user data directory: {} (found)", user_model.display()),
            &format!("model: {} valid (11 stages", user_model.display()),
        ],
    );
    // A second run without --force refuses to replace it.
    let o = openngx(
        &["synth-model"],
        &[("XDG_DATA_HOME", data.to_str().unwrap())],
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("exists and is not empty"),
        "{}",
        stderr(&o)
    );

    // An empty directory next to the Core comes first and is final: no fallback to the user's.
    let beside = prefix.join("lib/openngx/openngx-model");
    std::fs::create_dir_all(&beside).unwrap();
    let Some((code, text)) = doctor_for("", &data, &core) else {
        return;
    };
    assert_eq!(code, Some(1), "{text}");
    assert_lines(
        &text,
        &[
            &format!("  1. next to the library: {} (found)", beside.display()),
            &format!("model: {} INVALID: ", beside.display()),
            "doctor: PROBLEMS FOUND",
        ],
    );
    std::fs::remove_dir(&beside).unwrap();

    // With the user's model gone, the installed data directory is the one.
    std::fs::create_dir_all(installed.parent().unwrap()).unwrap();
    std::fs::rename(&user_model, &installed).unwrap();
    let Some((code, text)) = doctor_for("", &data, &core) else {
        return;
    };
    assert_eq!(code, Some(0), "{text}");
    assert_lines(
        &text,
        &[
            &format!(
                "  4. user data directory: {} (not found)",
                user_model.display()
            ),
            &format!(
                "  5. installed data directory: {} (found)",
                installed.display()
            ),
            &format!("model: {} valid (11 stages", installed.display()),
        ],
    );
}

/// Without --out, HOME alone names the default (`~/.local/share/openngx/model`), and with neither
/// HOME nor XDG_DATA_HOME the tools refuse with a clear message and write nothing.
#[test]
fn model_writers_default_to_the_user_data_directory() {
    let root = tempdir("tools-model-default-");
    let home = root.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let o = openngx(
        &["synth-model"],
        &[
            ("XDG_DATA_HOME", "relative/ignored"),
            ("HOME", home.to_str().unwrap()),
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let dir = home.join(".local/share/openngx/model");
    assert!(dir.join("manifest.json").is_file());
    assert!(
        stdout(&o).contains(&format!("wrote {} (seed 0)", dir.display())),
        "{}",
        stdout(&o)
    );
    assert!(!root.path().join("relative").exists());

    for cmd in [
        &["synth-model"][..],
        &["extract-model", "--dll", "/nonexistent.dll"][..],
    ] {
        let o = openngx(cmd, &[("XDG_DATA_HOME", ""), ("HOME", "")]);
        assert_eq!(o.status.code(), Some(1), "{cmd:?}");
        assert!(
            stderr(&o).contains(
                "no user data directory (neither XDG_DATA_HOME nor HOME is set): pass --out DIR"
            ),
            "{cmd:?}: {}",
            stderr(&o)
        );
    }
}

/// Ray Reconstruction's section: the route the library's feature table gives feature 13 (no GPU
/// route yet), and RR's own model lookup (`$OPENNGX_RR_MODEL_DIR`, `openngx/rr-model`): missing
/// is a warning, a valid synthetic RR model is reported with its size, DLSS-NR's model where RR's
/// is expected is invalid (exit 1).
#[test]
fn doctor_reports_rrs_route_and_model() {
    if !Path::new(LAVAPIPE).exists() {
        println!("SKIP: lavapipe is not installed ({LAVAPIPE})");
        return;
    }
    let (nr_model, _) = synthetic_model();
    let data = tempdir("tools-doctor-rr-");
    let core = data.path().join("prefix/lib/openngx/libnvidia-ngx.so.1");
    let rr_model = data.path().join("rr-model");
    let o = openngx(
        &[
            "synth-model",
            "--feature",
            "rr",
            "--out",
            rr_model.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let run = |rr_dir: &str| {
        let o = openngx(
            &["doctor", "--core", core.to_str().unwrap()],
            &[
                ("VK_DRIVER_FILES", LAVAPIPE),
                ("OPENNGX_MODEL_DIR", nr_model.to_str().unwrap()),
                ("OPENNGX_RR_MODEL_DIR", rr_dir),
                ("XDG_DATA_HOME", data.path().to_str().unwrap()),
            ],
        );
        (o.status.code(), stdout(&o))
    };
    let route =
        "rr (feature 13, DLSS-RR): route: backend `dlss-rr` (SuperSamplingDenoising.Available = 1)";
    let (code, text) = run("");
    assert_eq!(code, Some(0), "{text}");
    assert_lines(
        &text,
        &[
            route,
            "  $OPENNGX_RR_MODEL_DIR: not set",
            &format!(
                "user data directory: {} (not found)",
                data.path().join("openngx/rr-model").display()
            ),
            "rr model: none found (feature 13's creation fails until there is one",
            "doctor: OK",
        ],
    );
    let (code, text) = run(rr_model.to_str().unwrap());
    assert_eq!(code, Some(0), "{text}");
    assert_lines(
        &text,
        &[
            route,
            &format!(
                "rr model: {} valid (11 stages, 11 layer images, 2852736 bytes, SHA-256 verified",
                rr_model.display()
            ),
        ],
    );
    let (code, text) = run(nr_model.to_str().unwrap());
    assert_eq!(code, Some(1), "{text}");
    assert_lines(
        &text,
        &[
            &format!("rr model: {} INVALID: ", nr_model.display()),
            "doctor: PROBLEMS FOUND",
        ],
    );
}
