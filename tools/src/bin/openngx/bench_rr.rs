//! `openngx bench --feature rr`: Ray Reconstruction's exact GPU route (`rr::gpu_frame`) on the
//! synthetic scene, timed with GPU timestamps per layer and per frame stage in the production
//! layout (tensors sharing one arena), median and min over N frames after the warm-up; with
//! `--check` the first frame also runs on an instance that keeps every tensor and each published
//! tensor is compared byte for byte with the CPU reference's (`rr::cpu_frame`), and the timed
//! instance's frame 0 output and alpha (what the shared arena keeps) with those.

use std::time::Instant;

use openngx::model::LoadOptions;
use openngx::rr::cpu_frame::{CpuFrame, FrameParams};
use openngx::rr::frame::scene;
use openngx::rr::geometry::{Geometry, Size};
use openngx::rr::weights::model::RrModel;
use openngx::rr::weights::RrWeights;
use openngx_tools::rr_synth::{synthesize, RrSynthParams};

use crate::bench::{median, Args};
use crate::rr_gpu::{compare, parse_preset, RrGpu};

/// The frame parameters of sequence frame `n` (the jitter of `openngx reference --feature rr`).
fn params(n: usize) -> FrameParams {
    FrameParams {
        jitter: scene::JITTER[n % scene::JITTER.len()],
        ..FrameParams::default()
    }
}

/// Runs the RR bench; `Ok(false)` when `--check` found a mismatch.
pub fn run(args: &Args) -> Result<bool, String> {
    if args.frames == 0 {
        return Err("--frames must be at least 1".into());
    }
    if args.blocks.is_some() || args.max_binding_range.is_some() || args.pipeline_stats {
        return Err("--blocks, --max-binding-range and --pipeline-stats are NR's".into());
    }
    if args.route.iter().any(|r| r != "exact") {
        return Err("--feature rr has the exact route only".into());
    }
    let preset = parse_preset(&args.preset)?;
    let render = Size::new(args.width, args.height);
    let output = Size::new(
        args.out_width.unwrap_or(args.width),
        args.out_height.unwrap_or(args.height),
    );
    let geometry = Geometry::new(render, output).map_err(|e| e.to_string())?;
    let loaded;
    let synthetic;
    let weights: &RrWeights = match &args.model {
        Some(dir) => {
            loaded =
                RrModel::load(dir, LoadOptions { verify_sha: false }).map_err(|e| e.to_string())?;
            loaded.weights()
        }
        None => {
            synthetic = synthesize(0, &RrSynthParams::DEFAULT).map_err(|e| e.to_string())?;
            &synthetic
        }
    };

    let mut mismatches = None;
    let mut compared = 0;
    let mut compared_arena = 0;
    // Frame 0's published tensors from the instance keeping every tensor (with --check).
    let mut kept_frame0 = Vec::new();
    if args.check {
        let s = scene::render(render, 0);
        let mut gpu = RrGpu::open(args.device, weights, geometry, preset, true, false)?;
        let got = gpu.run_frame(&params(0), &s.color, &s.guides, true)?;
        drop(gpu);
        let t = Instant::now();
        let mut cpu = CpuFrame::new(weights, geometry, preset).map_err(|e| e.to_string())?;
        let want = cpu
            .run(&params(0), &s.color, &s.guides)
            .map_err(|e| e.to_string())?;
        eprintln!("CPU reference: {:.1} s", t.elapsed().as_secs_f64());
        let mut bad = Vec::new();
        for (name, data) in &want.published {
            compared += 1;
            match got.published.iter().find(|g| &g.0 == name) {
                Some((_, bytes)) => bad.extend(compare(name, bytes, &data.to_bytes())),
                None => bad.push(format!("{name}: not read back from the GPU")),
            }
        }
        if got.published.len() != want.published.len() {
            bad.push(format!(
                "the GPU published {} tensors, the CPU {}",
                got.published.len(),
                want.published.len()
            ));
        }
        mismatches = Some(bad);
        kept_frame0 = got.published;
    }

    let mut gpu = RrGpu::open(args.device, weights, geometry, preset, false, true)?;
    if !gpu.timed() {
        return Err(format!("{}: no compute timestamps", gpu.device_name()));
    }
    let mut totals = Vec::new();
    let mut per_group: Vec<(String, Vec<f64>)> = Vec::new();
    for n in 0..args.warmup + args.frames {
        let s = scene::render(render, n as u32);
        // With --check, frame 0 of the timed (shared-arena) instance is read back too (after its
        // last timestamp): its output and alpha must equal the kept instance's.
        let read = args.check && n == 0;
        let out = gpu.run_frame(&params(n), &s.color, &s.guides, read)?;
        if read {
            let bad = mismatches.get_or_insert_with(Vec::new);
            for (name, bytes) in &out.published {
                compared_arena += 1;
                match kept_frame0.iter().find(|k| &k.0 == name) {
                    Some((_, want)) => {
                        bad.extend(compare(name, bytes, want).map(|v| format!("shared arena: {v}")))
                    }
                    None => bad.push(format!("shared arena: {name} not in the kept frame")),
                }
            }
            if compared_arena == 0 {
                bad.push("shared arena: nothing read back".into());
            }
        }
        if n < args.warmup {
            continue;
        }
        totals.push(out.timings.iter().map(|t| t.ms).sum::<f64>());
        for (i, t) in out.timings.iter().enumerate() {
            match per_group.get_mut(i) {
                Some((_, v)) => v.push(t.ms),
                None => per_group.push((t.label.clone(), vec![t.ms])),
            }
        }
    }
    let min = totals.iter().cloned().fold(f64::INFINITY, f64::min);
    let med = median(&mut totals);
    let groups: Vec<(String, f64)> = per_group
        .into_iter()
        .map(|(l, mut v)| (l, median(&mut v)))
        .collect();
    let device = gpu.device_name();
    let memory = gpu.tensor_memory();
    let ok = mismatches.as_ref().is_none_or(|b| b.is_empty());
    if args.json {
        // In graph order: the frame stages and layers as they run.
        let layers: Vec<serde_json::Value> = groups
            .iter()
            .map(|(l, ms)| serde_json::json!({"label": l, "median_ms": ms}))
            .collect();
        let j = serde_json::json!({
            "feature": "rr", "device": device, "render": [render.w, render.h],
            "output": [output.w, output.h], "preset": preset.name(), "route": "exact",
            "frames": args.frames, "median_ms": med, "min_ms": min, "tensor_bytes": memory,
            "layers": layers, "compared_tensors": compared,
            "compared_shared_arena": compared_arena,
            "exact": mismatches.as_ref().map(|b| b.is_empty()), "mismatches": mismatches,
        });
        println!("{j}");
        return Ok(ok);
    }
    println!(
        "{device}: RR {render} -> {output}, preset {}, exact route, tensors {:.1} MiB",
        preset.name(),
        memory as f64 / 1048576.0
    );
    println!(
        "GPU time per frame: median {med:.2} ms, min {min:.2} ms over {} frames",
        args.frames
    );
    println!("per layer / stage (median ms, GPU timestamps):");
    for (label, ms) in &groups {
        println!("  {label:<24} {ms:9.3} ms");
    }
    if let Some(bad) = &mismatches {
        if bad.is_empty() {
            println!(
                "bit-exact: the {compared} published tensors of frame 0 equal the CPU reference; \
                 the shared arena's frame 0 ({compared_arena} tensors: output, alpha) equal them"
            );
        } else {
            println!("MISMATCH against the CPU reference:");
            for b in bad {
                println!("  {b}");
            }
        }
    }
    Ok(ok)
}
