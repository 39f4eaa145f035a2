//! `openngx bench`: one timed frame at 64x64 (the smallest size) on the test device with the
//! shared synthetic model; its JSON report carries positive times, the per-stage profile and the
//! frame count. Bad arguments are refused before any device work.

mod common;
mod tools_common;

use tools_common::{openngx, stderr, stdout, synthetic_model};

#[test]
fn bench_json_reports_times_stages_and_memory() {
    if common::Harness::new().is_none() {
        return; // SKIP printed
    }
    let (_, model_dir, _) = synthetic_model();
    let t = std::time::Instant::now();
    let o = openngx(
        &[
            "bench",
            "--model",
            model_dir.to_str().unwrap(),
            "--width",
            "64",
            "--height",
            "64",
            "--frames",
            "1",
            "--warmup",
            "0",
            "--json",
        ],
        &[],
    );
    eprintln!(
        "openngx bench (one frame at 64x64): {:.1} s",
        t.elapsed().as_secs_f64()
    );
    let text = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{text}\n{}", stderr(&o));
    let j: serde_json::Value = serde_json::from_str(text.trim()).expect("one JSON object");
    assert_eq!(j["width"], 64);
    assert_eq!(j["height"], 64);
    assert_eq!(j["field"], serde_json::json!([336, 320]));
    assert_eq!(j["profile"], "f13");
    assert_eq!(j["frames"], 1);
    let f = |k: &str| j[k].as_f64().unwrap_or_else(|| panic!("{k} in {j}"));
    assert!(f("median_ms") > 0.0 && f("min_ms") > 0.0, "{j}");
    assert!(f("min_ms") <= f("median_ms"), "{j}");
    assert!(j["dispatches"].as_u64().is_some_and(|d| d > 500), "{j}");
    assert!(
        f("weights_bytes") > 1e6 && f("workspace_bytes") > 1e6,
        "{j}"
    );
    // Without --check there is no verdict.
    assert!(j["exact"].is_null() && j["mismatches"].is_null(), "{j}");
    // The per-stage profile (timestamps): every stage of the network, each positive, summing to
    // the frame's time.
    let stages = j["stages_median_ms"].as_object().expect("stages object");
    for s in [
        "block 0 (field)",
        "enc C32 (1-4)",
        "enc split-512 (23-30)",
        "ViT (31-38)",
        "ViT exit (39)",
        "dec C32 (66-69)",
        "block 70 + head (field)",
    ] {
        let ms = stages.get(s).and_then(|v| v.as_f64());
        assert!(ms.is_some_and(|ms| ms > 0.0), "stage `{s}` in {j}");
    }
    let sum: f64 = stages.values().filter_map(|v| v.as_f64()).sum();
    assert!(
        (sum - f("median_ms")).abs() <= 1e-6 * sum.max(1.0) + 1e-3,
        "{sum} vs {j}"
    );
}

#[test]
fn bench_refuses_bad_arguments_before_running() {
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
