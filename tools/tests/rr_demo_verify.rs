//! `openngx verify --feature rr` and `openngx demo --feature rr` at 64x48 -> 96x72 on the test
//! device (lavapipe in CI):
//!
//! * verify runs a frame of the synthetic scene and a two-frame fixture of `reference --feature
//!   rr` on RR's exact GPU route and finds every op exact on the GPU's own inputs (exit 0); with the GPU skipping one op (`--skip-op`: its
//!   outputs keep the frame's poison) it names that op, its layer and tensor (exit 1); with the
//!   CPU reference on preset D against the GPU's E (`--cpu-preset`) it names the features op,
//!   the one the presets tell apart, at channel 25 (the depth-of-field slot) (exit 1); bad
//!   options exit 2. verify runs under the validation layer with synchronization validation
//!   where it is installed.
//! * demo runs three frames through the public C ABI (its own device under the same validation),
//!   synthesizing the model into the cache directory on first use, writes `noisy input | output` PNGs of twice the output width and
//!   finds every frame bit-exact against the CPU reference.
//!
//! Skipped (and says so) without a Vulkan device that runs the exact route.

#[path = "../../tests/common/mod.rs"]
mod common;
mod tools_common;

use std::process::Output;

use openngx::rr::geometry::{Geometry, Size};
use openngx::rr::graph::{self, Graph};
use openngx::rr::preset::Preset;
use openngx_tools::rr_synth::{write_model, RrSynthParams};
use tools_common::{openngx, stderr, stdout, tempdir};

/// The validation layer with synchronization validation (where installed).
const VALIDATION: [(&str, &str); 2] = [
    ("OPENNGX_VALIDATION", "1"),
    (
        "VK_LAYER_ENABLES",
        openngx_tools::devkit::SYNC_VALIDATION_ENABLES,
    ),
];

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

/// Panics on any validation-layer message in the run's output.
fn no_validation_messages(o: &Output) {
    let all = format!("{}{}", stdout(o), stderr(o));
    assert!(
        !all.contains("Validation Error") && !all.contains("SYNC-HAZARD") && !all.contains("VUID"),
        "validation messages:\n{all}"
    );
}

fn graph() -> Graph {
    let geo = Geometry::new(Size::new(64, 48), Size::new(96, 72)).expect("geometry");
    graph::build(&geo, Preset::E)
}

/// `openngx verify --feature rr --model MODEL --synthetic SIZE EXTRA` under [`VALIDATION`];
/// panics on any validation message.
fn verify(model: &str, extra: &[&str]) -> (Output, String) {
    let mut args = vec![
        "verify",
        "--feature",
        "rr",
        "--model",
        model,
        "--no-verify",
        "--synthetic",
    ];
    args.extend(SIZE);
    args.extend(extra);
    let t = std::time::Instant::now();
    let o = openngx(&args, &VALIDATION);
    let text = stdout(&o);
    no_validation_messages(&o);
    eprintln!(
        "openngx verify {extra:?}: {:.1} s",
        t.elapsed().as_secs_f64()
    );
    (o, text)
}

#[test]
fn verify_rr_is_exact_op_by_op_and_names_the_op_that_differs() {
    if common::Harness::new().is_none() {
        return; // SKIP printed
    }
    let dir = tempdir("rr-verify-");
    let model = dir.path().join("rr-model");
    write_model(&model, 0, &RrSynthParams::DEFAULT, false).expect("synthetic RR model");
    let model = model.to_str().expect("utf-8 path");
    let g = graph();
    let n = g.nodes.len();

    // The real route on the synthetic scene: one frame, every op exact.
    let (o, text) = verify(model, &[]);
    assert_eq!(o.status.code(), Some(0), "{text}\n{}", stderr(&o));
    assert!(text.contains(&format!("frame 0: {n} ops exact")), "{text}");
    assert!(
        text.contains(&format!("all {n} ops exact (1 frame x {n}")),
        "{text}"
    );

    // On a two-frame fixture of `reference --feature rr` (its inputs and per-frame parameters;
    // the second frame reads the GPU's own history): every op exact.
    let fx = dir.path().join("fixture");
    let fx = fx.to_str().expect("utf-8 path");
    let mut args = vec![
        "reference",
        "--feature",
        "rr",
        "--model",
        model,
        "--synthetic-scene",
        "--frames",
        "2",
        "--out",
        fx,
    ];
    args.extend(SIZE);
    let o = openngx(&args, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let mut args = vec![
        "verify",
        "--feature",
        "rr",
        "--model",
        model,
        "--fixture",
        fx,
    ];
    args.push("--no-verify");
    let o = openngx(&args, &VALIDATION);
    let text = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{text}\n{}", stderr(&o));
    no_validation_messages(&o);
    assert!(text.contains("preset E"), "{text}");
    assert!(text.contains(&format!("frame 1: {n} ops exact")), "{text}");
    assert!(
        text.contains(&format!("all {} ops exact (2 frames x {n}", 2 * n)),
        "{text}"
    );

    // The GPU leaves one op unrecorded (enc2's first value GEMM): named with its layer and
    // tensor, the poison byte as what the GPU holds. The run stops after it (`--ops`).
    let k = g
        .nodes
        .iter()
        .position(|nd| nd.label == "enc2.v")
        .expect("enc2.v in the schedule");
    let node = &g.nodes[k];
    let tensor = &g.tensors[node.op.outputs()[0]].name;
    let (o, text) = verify(
        model,
        &["--ops", &(k + 1).to_string(), "--skip-op", &k.to_string()],
    );
    assert_eq!(o.status.code(), Some(1), "{text}\n{}", stderr(&o));
    let line = format!(
        "frame 0 op {k} ({}, layer enc2, enc2.v): tensor `{tensor}`",
        node.op.kind()
    );
    assert!(text.contains(&line), "want `{line}` in:\n{text}");
    assert!(text.contains("got 0xa5"), "{text}");

    // The CPU reference on preset D against the GPU's preset E: the features op differs, first
    // at the depth-of-field slot (channel 25) of a pixel where the guide is 1.
    let f = g
        .nodes
        .iter()
        .position(|nd| nd.op.kind() == "Features")
        .expect("the features op");
    let (o, text) = verify(model, &["--ops", &(f + 1).to_string(), "--cpu-preset", "d"]);
    assert_eq!(o.status.code(), Some(1), "{text}\n{}", stderr(&o));
    assert!(
        text.contains(&format!("frame 0 op {f} (Features, layer -, features)")),
        "{text}"
    );
    assert!(text.contains("c=25)"), "{text}");

    // Unusable: exit 2 before anything is compared.
    for bad in [
        &["--profile", "h25"][..],
        &["--ops", "0"][..],
        &["--skip-op", "100000"][..],
        &["--preset", "x"][..],
    ] {
        let (o, text) = verify(model, bad);
        assert_eq!(o.status.code(), Some(2), "{bad:?}: {text}\n{}", stderr(&o));
    }
}

/// The width and height in a PNG's IHDR.
fn png_size(path: &std::path::Path) -> (u32, u32) {
    let png = std::fs::read(path).expect("PNG");
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    let be = |i: usize| u32::from_be_bytes([png[i], png[i + 1], png[i + 2], png[i + 3]]);
    (be(16), be(20))
}

#[test]
fn demo_rr_runs_the_c_abi_and_every_frame_is_bit_exact() {
    if common::Harness::new().is_none() {
        return; // SKIP printed
    }
    let dir = tempdir("rr-demo-");
    let cache = dir.path().join("cache");
    let out = dir.path().join("out");
    let mut args = vec!["demo", "--feature", "rr", "--frames", "3"];
    args.extend(SIZE);
    args.extend(["--out", out.to_str().expect("utf-8 path")]);
    let t = std::time::Instant::now();
    let mut envs = vec![("XDG_CACHE_HOME", cache.to_str().expect("utf-8 path"))];
    envs.extend(VALIDATION);
    let o = openngx(&args, &envs);
    eprintln!(
        "openngx demo --feature rr (3 frames, checked): {:.1} s",
        t.elapsed().as_secs_f64()
    );
    let text = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{text}\n{}", stderr(&o));
    no_validation_messages(&o);
    // The model synthesized on first use, where the demo said.
    let model = cache.join("openngx/rr-model-seed0");
    assert!(model.join("manifest.json").is_file(), "{text}");
    assert!(
        text.contains("64x48 -> 96x72, preset E, 3 frame(s)"),
        "{text}"
    );
    for i in 0..3 {
        assert!(
            text.contains(&format!("frame {i}: GPU ")),
            "frame {i} not timed:\n{text}"
        );
        assert_eq!(
            png_size(&out.join(format!("frame_{i:03}.png"))),
            (192, 72),
            "noisy input | output at the output size"
        );
    }
    assert!(
        text.contains("all 3 frames: bit-exact against the CPU reference"),
        "{text}"
    );
    let summary = std::fs::read_to_string(out.join("summary.txt")).expect("summary.txt");
    assert!(
        summary.contains("all 3 frames: bit-exact against the CPU reference"),
        "{summary}"
    );
    // Bad arguments: refused before any work.
    for (bad, want) in [
        (&["--input", "shots"][..], "no --input"),
        (&["--route", "cpu"][..], "exact route only"),
        (&["--width", "16"][..], "16x48"),
    ] {
        let mut args = vec!["demo", "--feature", "rr", "--out", "/nonexistent/out"];
        args.extend(bad);
        let o = openngx(&args, &[("XDG_CACHE_HOME", "/nonexistent")]);
        assert_eq!(o.status.code(), Some(1), "{bad:?}");
        assert!(stderr(&o).contains(want), "{bad:?}: {}", stderr(&o));
    }
}
