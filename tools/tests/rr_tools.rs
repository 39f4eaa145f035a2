//! `openngx bench --feature rr` and `openngx parity --feature rr` at 64x48 -> 96x72 on the test
//! device (lavapipe in CI) with the synthetic RR model:
//!
//! * bench times one frame of the exact GPU route per layer and stage (GPU timestamps; its JSON
//!   lists every stage and layer in graph order with a positive time) and `--check` compares
//!   frame 0's 39 published tensors with the CPU reference byte for byte (and the timed,
//!   shared-arena instance's frame 0 output and alpha with those);
//! * parity replays the 3-frame fixture of `reference --feature rr` on the GPU route (the GPU's
//!   own history between frames) and finds every published tensor byte-exact; a fixture whose
//!   frame-2 output has one byte flipped (its SHA-256 updated in the manifest) fails with exit 1
//!   naming `output`, and a file that no longer matches its manifest SHA-256 is refused (exit 2).
//!
//! Both run with the Khronos validation layer and its synchronization validation where it is
//! installed (`OPENNGX_VALIDATION=1`), and their output must hold no validation message.
//! Skipped (and says so) without a Vulkan device that runs the exact route.

#[path = "../../tests/common/mod.rs"]
mod common;
mod tools_common;

use std::path::Path;

use std::process::Output;

use tools_common::{openngx, stderr, stdout, tempdir};

/// The validation layer with synchronization validation (where installed).
const VALIDATION: [(&str, &str); 2] = [
    ("OPENNGX_VALIDATION", "1"),
    (
        "VK_LAYER_ENABLES",
        openngx_tools::devkit::SYNC_VALIDATION_ENABLES,
    ),
];

/// `openngx ARGS` under [`VALIDATION`]; panics on any validation message.
fn validated(args: &[&str]) -> Output {
    let o = openngx(args, &VALIDATION);
    let all = format!("{}{}", stdout(&o), stderr(&o));
    assert!(
        !all.contains("Validation Error") && !all.contains("SYNC-HAZARD") && !all.contains("VUID"),
        "validation messages:\n{all}"
    );
    o
}

const SIZE: [&str; 8] = [
    "--width",
    "64",
    "--height",
    "48",
    "--out-width",
    "96",
    "--out-height",
    "72",
];

/// The published tensors of the RR graph at any size (`rr::graph::Graph::published`).
fn published_count() -> usize {
    use openngx::rr::geometry::{Geometry, Size};
    let geo = Geometry::new(Size::new(64, 48), Size::new(96, 72)).expect("geometry");
    openngx::rr::graph::build(&geo, openngx::rr::preset::Preset::E)
        .published
        .len()
}

#[test]
fn bench_rr_times_every_layer_and_checks_frame_0_against_the_cpu() {
    if common::Harness::new().is_none() {
        return; // SKIP printed
    }
    let t = std::time::Instant::now();
    let mut args = vec!["bench", "--feature", "rr"];
    args.extend(SIZE);
    args.extend(["--frames", "1", "--warmup", "0", "--check", "--json"]);
    let o = validated(&args);
    eprintln!(
        "openngx bench --feature rr (64x48 -> 96x72, checked): {:.1} s",
        t.elapsed().as_secs_f64()
    );
    let text = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{text}\n{}", stderr(&o));
    let j: serde_json::Value = serde_json::from_str(text.trim()).expect("one JSON object");
    assert_eq!(j["feature"], "rr");
    assert_eq!(j["render"], serde_json::json!([64, 48]));
    assert_eq!(j["output"], serde_json::json!([96, 72]));
    assert_eq!(j["frames"], 1);
    assert_eq!(j["exact"], true, "{j}");
    assert_eq!(j["mismatches"], serde_json::json!([]), "{j}");
    assert_eq!(
        j["compared_tensors"].as_u64(),
        Some(published_count() as u64),
        "{j}"
    );
    // The shared arena's frame 0: output and alpha.
    assert_eq!(j["compared_shared_arena"], 2, "{j}");
    let layers = j["layers"].as_array().expect("layers");
    let labels: Vec<&str> = layers
        .iter()
        .map(|l| l["label"].as_str().expect("label"))
        .collect();
    for want in [
        "exposure",
        "reproject",
        "features",
        "enc0",
        "enc5",
        "dec4",
        "dec0",
        "output",
    ] {
        assert!(labels.contains(&want), "{want} not timed: {labels:?}");
    }
    assert!(
        labels.iter().position(|&l| l == "enc0") < labels.iter().position(|&l| l == "dec0"),
        "{labels:?}"
    );
    let ms: Vec<f64> = layers
        .iter()
        .map(|l| l["median_ms"].as_f64().expect("ms"))
        .collect();
    assert!(ms.iter().all(|&m| m > 0.0), "{j}");
    let total = j["median_ms"].as_f64().expect("median_ms");
    assert!(
        (total - ms.iter().sum::<f64>()).abs() < 1e-6 * total.max(1.0),
        "{j}"
    );
}

/// Flip byte 0 of `file` of the fixture; with `manifest` also update its SHA-256 there.
fn flip(fixture: &Path, file: &str, manifest: bool) {
    use sha2::{Digest, Sha256};
    let path = fixture.join(file);
    let mut bytes = std::fs::read(&path).expect("fixture file");
    let old = format!("{:x}", Sha256::digest(&bytes));
    bytes[0] ^= 1;
    std::fs::write(&path, &bytes).expect("write");
    if manifest {
        let m = fixture.join("manifest.json");
        let text = std::fs::read_to_string(&m).expect("manifest");
        assert_eq!(
            text.matches(&old).count(),
            1,
            "{file}'s hash in the manifest"
        );
        let new = format!("{:x}", Sha256::digest(&bytes));
        std::fs::write(&m, text.replace(&old, &new)).expect("write");
    }
}

#[test]
fn parity_rr_replays_the_fixture_exactly_and_catches_a_flipped_byte() {
    if common::Harness::new().is_none() {
        return; // SKIP printed
    }
    let dir = tempdir("rr-parity-");
    let model = dir.path().join("rr-model");
    let model_s = model.to_str().expect("utf-8 path");
    let o = openngx(
        &[
            "synth-model",
            "--feature",
            "rr",
            "--seed",
            "0",
            "--out",
            model_s,
        ],
        &[],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let fx = dir.path().join("fixture");
    let fx_s = fx.to_str().expect("utf-8 path");
    let mut args = vec![
        "reference",
        "--feature",
        "rr",
        "--model",
        model_s,
        "--synthetic-scene",
        "--frames",
        "3",
        "--out",
        fx_s,
    ];
    args.extend(SIZE);
    let o = openngx(&args, &[]);
    assert!(o.status.success(), "{}", stderr(&o));

    let parity = || {
        validated(&[
            "parity",
            "--feature",
            "rr",
            "--model",
            model_s,
            "--fixture",
            fx_s,
        ])
    };
    let t = std::time::Instant::now();
    let o = parity();
    eprintln!(
        "openngx parity --feature rr (3 frames, 64x48 -> 96x72): {:.1} s",
        t.elapsed().as_secs_f64()
    );
    let text = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{text}\n{}", stderr(&o));
    let n = published_count();
    for f in 0..3 {
        assert!(
            text.contains(&format!(
                "frame {f}: {n} of {n} published tensors byte-exact"
            )),
            "{text}"
        );
    }
    assert!(text.contains("bit-exact over 3 frames"), "{text}");

    // A later frame's output differs by one bit: a mismatch that names it.
    flip(&fx, "frame-002/output.bin", true);
    let o = parity();
    let text = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{text}\n{}", stderr(&o));
    assert!(
        text.contains("MISMATCH output: 1 of 55296 bytes differ, first at byte 0"),
        "{text}"
    );
    assert!(text.contains(&format!("frame 0: {n} of {n}")), "{text}");

    // A file that is not what the manifest says: refused before any comparison.
    flip(&fx, "frame-000/dec0.bin", false);
    let o = parity();
    assert_eq!(o.status.code(), Some(2), "{}\n{}", stdout(&o), stderr(&o));
    assert!(stderr(&o).contains("SHA-256"), "{}", stderr(&o));
}
