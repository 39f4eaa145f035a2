//! `openngx bench`: one timed frame of the first two blocks at 64x64 (the smallest size; a whole
//! frame takes lavapipe minutes, and `tools_parity` already runs one through the same recorder)
//! on the test device with the shared synthetic model; its JSON report carries positive times,
//! the per-stage and per-op-kind profiles and the frame count. The run is also the split
//! route's check in CI: with the binding range lowered to 1 MiB, 13 of its 14 ops run in row
//! bands, and `--check` compares the 3 boundaries blocks 0-1 publish with the CPU reference
//! byte for byte (a partial evaluation). Bad arguments are refused before any device work.

#[path = "../../tests/common/mod.rs"]
mod common;
mod tools_common;

use tools_common::{openngx, stderr, stdout, synthetic_model};

/// `openngx bench` of one frame at 64x64 (no warm-up unless `args` asks for one) on the shared
/// synthetic model with `args`, its time printed as `what`: the JSON report of a successful run.
fn bench_64x64(what: &str, args: &[&str]) -> serde_json::Value {
    let (model_dir, _) = synthetic_model();
    let mut all = vec![
        "bench",
        "--model",
        model_dir.to_str().expect("UTF-8 path"),
        "--width",
        "64",
        "--height",
        "64",
        "--frames",
        "1",
        "--json",
    ];
    if !args.contains(&"--warmup") {
        all.extend_from_slice(&["--warmup", "0"]);
    }
    all.extend_from_slice(args);
    let t = std::time::Instant::now();
    let o = openngx(&all, &[]);
    eprintln!("openngx bench ({what}): {:.1} s", t.elapsed().as_secs_f64());
    let text = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{text}\n{}", stderr(&o));
    serde_json::from_str(text.trim()).expect("one JSON object")
}

#[test]
fn bench_json_reports_times_stages_and_memory() {
    if common::Harness::new().is_none() {
        return; // SKIP printed
    }
    let (_, model) = synthetic_model();
    let j = bench_64x64(
        "blocks 0-1 of one frame at 64x64, split, checked",
        &[
            "--blocks",
            "2",
            "--check",
            "--max-binding-range",
            "1048576",
            // The split route alone (strips: bench_strips_are_exact_over_the_whole_network).
            "--strips",
            "off",
            "--pipeline-stats",
        ],
    );
    assert_eq!(j["width"], 64);
    assert_eq!(j["height"], 64);
    assert_eq!(j["field"], serde_json::json!([336, 320]));
    assert_eq!(j["profile"], "f13");
    assert_eq!(j["frames"], 1);
    assert_eq!(j["blocks"], 2);
    let f = |k: &str| j[k].as_f64().unwrap_or_else(|| panic!("{k} in {j}"));
    assert!(f("median_ms") > 0.0 && f("min_ms") > 0.0, "{j}");
    assert!(f("min_ms") <= f("median_ms"), "{j}");
    // The adapter, blocks 0-1 and the pool between them, not the whole network's 512 ops;
    // in row bands all but block 1's window attention (its L0 tensors are 840 KiB), one
    // dispatch per band.
    assert_eq!(j["nodes"], 14, "{j}");
    assert_eq!(j["max_binding_range"], 1 << 20, "{j}");
    assert_eq!(j["split_nodes"], 13, "{j}");
    assert_eq!(j["strips"], 0, "{j}");
    assert!(j["launches"].as_u64().is_some_and(|n| n > 50), "{j}");
    assert_eq!(j["dispatches"], j["launches"], "{j}");
    assert!(
        f("weights_bytes") > 1e6 && f("workspace_bytes") > 1e6,
        "{j}"
    );
    // The bench's own copy of the input: [field tokens][16] f32, outside the feature's memory.
    assert_eq!(j["input_copy_bytes"], 336 * 320 * 16 * 4, "{j}");
    // Every weight byte is resident once but the f16 copies of the C = 32 and 64 FFNs' W1 and
    // W2 (10 blocks of 2 x 4,096 codes, 8 of 2 x 8,192 + 8,192; two bytes each): the device
    // holds at most the model's bytes plus those, the 512 KiB of lookup tables and 256-byte
    // alignment (before, the records and the re-laid matrices were both kept: 278.5 MiB for
    // this model's 140.9 MiB).
    let widened = f("weights_widened_bytes");
    assert_eq!(widened, (2 * (10 * 8_192 + 8 * 24_576)) as f64, "{j}");
    let model_bytes: u64 = model.stages().iter().map(|s| s.bytes.len() as u64).sum();
    assert!(
        f("weights_bytes") <= (model_bytes + (1 << 20)) as f64 + widened,
        "weights on the device {} > model {model_bytes} + 1 MiB + {widened}: {j}",
        f("weights_bytes")
    );
    // The partial evaluation in bands is exact: block-0, transition-0-1 and block-1.
    assert_eq!(j["exact"], true, "{j}");
    assert_eq!(j["compared_boundaries"], 3, "{j}");
    assert_eq!(j["mismatches"], serde_json::json!([]), "{j}");
    // The per-stage profile (timestamps): the two stages run, each positive, summing to the
    // frame's time; nothing of the later stages.
    let stages = j["stages_median_ms"].as_object().expect("stages object");
    assert_eq!(stages.len(), 2, "{j}");
    for s in ["block 0 (field)", "enc C32 (1-4)"] {
        let ms = stages.get(s).and_then(|v| v.as_f64());
        assert!(ms.is_some_and(|ms| ms > 0.0), "stage `{s}` in {j}");
    }
    let sum: f64 = stages.values().filter_map(|v| v.as_f64()).sum();
    assert!(
        (sum - f("median_ms")).abs() <= 1e-6 * sum.max(1.0) + 1e-3,
        "{sum} vs {j}"
    );
    // Per op kind: the GEMMs with their MACs, the window attention, the adapter.
    let kinds = j["op_kinds"].as_object().expect("op_kinds object");
    let gemm = kinds
        .get("gemm 32x128 x1 @Field")
        .unwrap_or_else(|| panic!("field expand GEMM in {j}"));
    assert!(gemm["ms"].as_f64().is_some_and(|ms| ms > 0.0), "{j}");
    // 336 x 320 tokens x 32 x 128 MACs in each of blocks 0 (field) ...
    assert_eq!(
        gemm["macs"].as_f64(),
        Some(336.0 * 320.0 * 32.0 * 128.0),
        "{j}"
    );
    for k in [
        "adapter",
        "window attention C32 @Field",
        "window attention C32 @L(0)",
    ] {
        assert!(kinds.contains_key(k), "`{k}` in {j}");
    }
    // Per op class (#14's profile): the kinds summed without their shapes and levels, every
    // kind's time and MACs counted once, and the MACs of the timed ops in all.
    let classes = j["op_classes"].as_object().expect("op_classes object");
    for c in ["gemm", "window attention", "adapter", "normalize"] {
        assert!(classes.contains_key(c), "`{c}` in {j}");
    }
    assert!(classes.keys().all(|c| !c.contains('@')), "{j}");
    let total = |o: &serde_json::Map<String, serde_json::Value>, f: &str| -> f64 {
        o.values().filter_map(|v| v[f].as_f64()).sum()
    };
    for field in ["ms", "macs"] {
        let (a, b) = (total(kinds, field), total(classes, field));
        assert!(
            (a - b).abs() <= 1e-9 * a.max(1.0),
            "{field}: kinds {a}, classes {b}: {j}"
        );
    }
    let timed = f("timed_macs");
    assert!((timed - total(kinds, "macs")).abs() <= 1e-9 * timed, "{j}");
    assert!(f("timed_macs") >= 2.0 * 336.0 * 320.0 * 32.0 * 128.0, "{j}");
    // Driver statistics per kernel where the device offers VK_KHR_pipeline_executable_properties
    // (lavapipe does not: then the reason), never silently nothing.
    let stats = &j["pipeline_stats"];
    match stats.as_array() {
        Some(list) => {
            assert!(list.iter().any(|p| p["shader"] == "nr/adapter"), "{stats}");
            assert!(list.iter().all(|p| p["stats"].is_object()), "{stats}");
        }
        None => assert!(
            stats["unavailable"]
                .as_str()
                .is_some_and(|e| e.contains("VK_KHR_pipeline_executable_properties")),
            "{stats}"
        ),
    }
}

/// The whole network at 64x64 with its window blocks as strips of at most 100,000 band-local
/// bytes per band (at this size the default budget makes none) and the binding range lowered to
/// 1 MiB: every boundary and the head byte-equal to the CPU reference. Strips and row bands
/// together are what lavapipe runs at 1920x1080 and larger.
#[test]
fn bench_strips_are_exact_over_the_whole_network() {
    if common::Harness::new().is_none() {
        return; // SKIP printed
    }
    // Two frames: the bench plans a feature's schedule, whose workspace reuses the input's
    // bytes after the adapter, and restores the input before each frame; the second frame's
    // bytes are the ones compared.
    let j = bench_64x64(
        "two frames at 64x64 in strips, split, checked",
        &[
            "--warmup",
            "1",
            "--check",
            "--strips",
            "100000",
            "--max-binding-range",
            "1048576",
        ],
    );
    // 46 of the 62 window blocks (the others' bands would not hold less), 443 bands.
    assert!(j["strips"].as_u64().is_some_and(|n| n >= 40), "{j}");
    assert!(j["strip_bands"].as_u64().is_some_and(|n| n >= 400), "{j}");
    // One dispatch per launch, and one more for the sum of each of the ViT's 25 split-K GEMMs.
    assert_eq!(
        j["dispatches"].as_u64(),
        j["launches"].as_u64().map(|l| l + 25),
        "{j}"
    );
    assert_eq!(j["compared_boundaries"], 75, "{j}");
    assert_eq!(j["exact"], true, "{j}");
    assert_eq!(j["mismatches"], serde_json::json!([]), "{j}");
}

/// `--timing floor` records the same launches as a timed frame (same count, the floor flagged in
/// the report) with empty kernels, and takes GPU time of its own.
#[test]
fn bench_launch_floor_runs_the_frames_launches() {
    if common::Harness::new().is_none() {
        return; // SKIP printed
    }
    let frame = bench_64x64("blocks 0-1, frame", &["--blocks", "2", "--timing", "frame"]);
    let floor = bench_64x64("blocks 0-1, floor", &["--blocks", "2", "--timing", "floor"]);
    assert_eq!(frame["launch_floor"], false, "{frame}");
    assert_eq!(floor["launch_floor"], true, "{floor}");
    let launches = frame["dispatches"].as_u64().expect("dispatches");
    assert!(launches > 0, "{frame}");
    assert_eq!(floor["dispatches"].as_u64(), Some(launches), "{floor}");
    let ms = floor["median_ms"].as_f64().expect("median");
    assert!(ms > 0.0 && ms.is_finite(), "{floor}");
}

#[test]
fn bench_refuses_bad_arguments_before_running() {
    for blocks in ["0", "72"] {
        let o = openngx(&["bench", "--blocks", blocks, "--check"], &[]);
        assert_eq!(o.status.code(), Some(1));
        assert!(
            stderr(&o).contains("--blocks must be 1..=71"),
            "{}",
            stderr(&o)
        );
    }
    let o = openngx(&["bench", "--timing", "floor", "--check"], &[]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("--timing floor runs empty kernels"),
        "{}",
        stderr(&o)
    );
    let o = openngx(&["bench", "--frames", "0"], &[]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("--frames must be at least 1"),
        "{}",
        stderr(&o)
    );
    let o = openngx(&["bench", "--profile", "f99"], &[]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("unknown profile `f99`"),
        "{}",
        stderr(&o)
    );
    let o = openngx(&["bench", "--width", "0", "--height", "64"], &[]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert!(stderr(&o).starts_with("bench: "), "{}", stderr(&o));
}
