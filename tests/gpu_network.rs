//! The whole network on the test device against the CPU reference: at 64x64 (field 336x320) with
//! a synthetic model, all 75 boundaries and the head are byte-equal to `nr::reference::run`.
//!
//! A network evaluation takes lavapipe minutes and the default test run already compares all 75
//! boundaries, the head and the output of a GPU run with the CPU reference through
//! `openngx parity --route gpu` (`tests/tools_parity.rs`), so this library-level copy runs only
//! with `OPENNGX_GPU_NETWORK=1` (any machine with a real GPU: seconds).
//! `OPENNGX_GPU_NETWORK_SECOND=1` adds a 40x72 recorder on the same weights and a second 64x64
//! evaluation (identical bytes).

mod common;

use std::sync::Arc;
use std::time::Instant;

use common::Harness;
use openngx::gpu::{GpuContext, Recorder, UploadBatch};
use openngx::model::{LoadOptions, Model};
use openngx::nr::geometry::Geometry;
use openngx::nr::graph;
use openngx::nr::record::network::{Keep, NetworkOptions, NetworkRecorder};
use openngx::nr::record::strips::StripChoice;
use openngx::nr::record::GpuWeights;
use openngx::nr::reference;
use openngx::numerics::Profiles;
use openngx_tools::synth;

fn synthetic_model() -> Model {
    let dir = std::env::temp_dir().join(format!("openngx-gpu-network-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    if let Err(e) = synth::write_model(&dir, 11, &synth::SynthParams::DEFAULT, true) {
        panic!("synthesize model into {}: {e}", dir.display());
    }
    let m = match Model::load(&dir, LoadOptions { verify_sha: false }) {
        Ok(m) => m,
        Err(e) => panic!("load synthetic model: {e}"),
    };
    let _ = std::fs::remove_dir_all(&dir);
    m
}

/// Deterministic features in the ranges the prepare pass produces (colours, depth, motion, ...).
fn features(rows: usize, seed: u32) -> Vec<f32> {
    (0..rows * 16)
        .map(|i| {
            let x = (i as u32)
                .wrapping_mul(2_654_435_761)
                .wrapping_add(seed.wrapping_mul(97));
            let u = (x >> 8) as f32 / (1u32 << 24) as f32;
            match i % 16 {
                15 => 0.0,
                l if l < 3 => u,
                _ => 2.0 * u - 1.0,
            }
        })
        .collect()
}

fn evaluate(h: &Harness, ctx: &Arc<GpuContext>, net: &mut NetworkRecorder, feats: &[f32]) -> f64 {
    let mut batch = UploadBatch::new(ctx);
    let t = Instant::now();
    // One submission per block: lavapipe needs tens of seconds for the whole network and the
    // harness waits at most 60 s per submission.
    let blocks: Vec<usize> = net.graph().nodes.iter().map(|n| n.block).collect();
    let mut cuts = vec![0];
    cuts.extend((1..blocks.len()).filter(|&i| blocks[i] != blocks[i - 1]));
    cuts.push(blocks.len());
    for (n, w) in cuts.windows(2).enumerate() {
        let tb = Instant::now();
        h.submit(|cmd| {
            // SAFETY: the harness's command buffer is recording on the context's device.
            let mut rec = unsafe { Recorder::new(ctx, cmd) }.expect("recorder");
            if n == 0 {
                net.upload_features(&mut rec, &mut batch, feats)
                    .expect("features");
            }
            if let Err(e) = net.record_nodes(&mut rec, w[0]..w[1]) {
                panic!("record network: {e}");
            }
        });
        if std::env::var_os("OPENNGX_TEST_VERBOSE").is_some() {
            println!(
                "block {}: {:.2} s",
                blocks[w[0]],
                tb.elapsed().as_secs_f64()
            );
        }
    }
    batch.release();
    t.elapsed().as_secs_f64()
}

/// `model`'s weights on the harness's device.
fn upload_weights(h: &Harness, ctx: &Arc<GpuContext>, model: &Model) -> Arc<GpuWeights> {
    let mut batch = UploadBatch::new(ctx);
    let weights = h.submit(|cmd| {
        // SAFETY: the harness's command buffer is recording on the context's device.
        let mut rec = unsafe { Recorder::new(ctx, cmd) }.expect("recorder");
        GpuWeights::shared(ctx, model, &mut rec, &mut batch)
    });
    batch.release();
    match weights {
        Ok(w) => w,
        Err(e) => panic!("upload weights: {e}"),
    }
}

/// Every boundary and the head `net` computed, byte for byte against `want`; returns them.
fn assert_matches(
    net: &NetworkRecorder,
    g: &graph::Graph,
    want: &reference::Output,
    what: &str,
) -> (Vec<Vec<u8>>, Vec<f32>) {
    let boundaries: Vec<Vec<u8>> = g
        .boundaries
        .iter()
        .map(|(_, t)| net.read_tensor(*t).expect("boundary"))
        .collect();
    let head = net.read_head().expect("head");
    assert_eq!(want.boundaries.len(), 75);
    for ((name, w), got) in want.boundaries.iter().zip(&boundaries) {
        if let Some(at) = w.iter().zip(got).position(|(a, b)| a != b) {
            panic!(
                "{what}: boundary {name}: byte {at} gpu {:#04x} cpu {:#04x}",
                got[at], w[at]
            );
        }
        assert_eq!(w.len(), got.len(), "{what}: boundary {name}");
    }
    assert_eq!(head.len(), want.head.len());
    for (i, (a, b)) in head.iter().zip(&want.head).enumerate() {
        // The head is an f16 stored as f32: NaNs are the canonical quiet NaN on both sides.
        assert_eq!(
            a.to_bits(),
            b.to_bits(),
            "{what}: head element {i}: gpu {a} cpu {b}"
        );
    }
    let informative = head.iter().filter(|x| x.is_finite() && **x != 0.0).count();
    assert!(
        informative * 2 > head.len(),
        "{what}: head is mostly zero/non-finite"
    );
    (boundaries, head)
}

/// The tensor route's whole schedule with its cooperative-matrix kernels in their emulated
/// builds (`TensorRoute::emulated`: every MMA in integer arithmetic as the H25 model, the
/// device builds' bytes) against the CPU reference in h25 at 64x64: all 75 boundaries and the
/// head, byte for byte, with each fusion
/// (`OPENNGX_GPU_TENSOR_FUSIONS=off,gemm,attention,ffn,block,ffn-gemm`; by default `gemm`,
/// `attention` and `block`, which between them run every emulated kernel: the window
/// normalisation as the QKV GEMM's epilogue, then inside the attention's staging, then the
/// window blocks' FFN pairs and the C = 32 blocks' attention halves as one kernel each). On
/// lavapipe this is the route's wiring and every one of its kernels, checked without tensor
/// cores; the device's MMA is the probe's and `bench --route tensor --check`'s to prove.
#[test]
fn tensor_route_with_emulated_tiles_matches_h25() {
    use openngx::nr::route::{Fusion, TensorRoute};
    let Some(h) = Harness::new() else { return };
    let ctx = h.context();
    let model = synthetic_model();
    let g = graph::build(&Geometry::new(64, 64).expect("64x64"));
    let feats = features(g.rows(g.features), 3);
    let t = Instant::now();
    let want = match reference::run(&g, &model, &feats, Profiles::H25) {
        Ok(o) => o,
        Err(e) => panic!("reference: {e}"),
    };
    let t_cpu = t.elapsed().as_secs_f64();
    let weights = upload_weights(&h, &ctx, &model);
    let fusions = std::env::var("OPENNGX_GPU_TENSOR_FUSIONS")
        .unwrap_or_else(|_| "gemm,attention,block".to_owned());
    for name in fusions.split(',') {
        let fusion: Fusion = match name.parse() {
            Ok(f) => f,
            Err(e) => panic!("OPENNGX_GPU_TENSOR_FUSIONS: {e}"),
        };
        let route = match TensorRoute::emulated(ctx.capabilities()) {
            Ok(r) => Box::new(r),
            Err(e) => panic!("emulated tensor route: {e}"),
        };
        // The C = 32 blocks' attention halves also run per band of window rows in strips: 32 MiB
        // strips make the field's two blocks strips at 64x64, as the default strips do at
        // 1080p (30 launches more). Strips of 64 KiB (every window block one, a window row per
        // band) passed too, but took 14 minutes on lavapipe.
        let strips = match fusion {
            Fusion::Block => StripChoice::Budget(32 << 20),
            _ => StripChoice::Auto,
        };
        let opts = NetworkOptions {
            profiles: Profiles::H25,
            keep: Keep::Boundaries,
            readback: true,
            fusion,
            strips,
            ..NetworkOptions::default()
        };
        let mut net =
            match NetworkRecorder::with_route(&ctx, g.clone(), Arc::clone(&weights), route, opts) {
                Ok(n) => n,
                Err(e) => panic!("network recorder: {e}"),
            };
        if fusion == Fusion::Block {
            let in_strips = (0..g.nodes.len())
                .filter(|&i| net.fusions().runs_inside_next(i) && net.strips().of_node[i].is_some())
                .count();
            assert!(in_strips > 0, "no fused node runs in a strip");
            println!(
                "fusion block: {} nodes fused, {in_strips} of them in {} strips",
                net.fusions().count(),
                net.strips().strips.len()
            );
        }
        let t_gpu = evaluate(&h, &ctx, &mut net, &feats);
        assert_matches(
            &net,
            &g,
            &want,
            &format!("emulated tensor route, fusion {name}"),
        );
        println!(
            "64x64 {}, fusion {name}: cpu reference {t_cpu:.1} s, gpu {t_gpu:.1} s",
            net.route().describe()
        );
    }
    drop(weights);
}

#[test]
fn whole_network_matches_the_reference_byte_for_byte() {
    if std::env::var_os("OPENNGX_GPU_NETWORK").is_none() {
        println!("SKIP: set OPENNGX_GPU_NETWORK=1 (tests/tools_parity.rs covers this by default)");
        return;
    }
    let Some(h) = Harness::new() else { return };
    let ctx = h.context();
    let t = Instant::now();
    let model = synthetic_model();
    let t_model = t.elapsed().as_secs_f64();

    let g = graph::build(&Geometry::new(64, 64).expect("64x64"));
    let feats = features(g.rows(g.features), 1);
    let t = Instant::now();
    let want = match reference::run(&g, &model, &feats, Profiles::NATIVE) {
        Ok(o) => o,
        Err(e) => panic!("reference: {e}"),
    };
    let t_cpu = t.elapsed().as_secs_f64();

    let weights = upload_weights(&h, &ctx, &model);
    let opts = NetworkOptions {
        keep: Keep::Boundaries,
        readback: true,
        timestamps: true,
        ..NetworkOptions::default()
    };
    let mut net = match NetworkRecorder::new(&ctx, g.clone(), Arc::clone(&weights), opts) {
        Ok(n) => n,
        Err(e) => panic!("network recorder: {e}"),
    };
    let t_gpu = evaluate(&h, &ctx, &mut net, &feats);
    let (boundaries, head) = assert_matches(&net, &g, &want, "exact route");
    if let Ok(Some(times)) = net.timings() {
        let total: f64 = times.iter().map(|s| s.ms).sum();
        let slowest = times
            .iter()
            .max_by(|a, b| a.ms.total_cmp(&b.ms))
            .map(|s| format!("{} {:.0} ms", s.label, s.ms));
        println!(
            "gpu timestamps: {total:.0} ms over {} blocks, slowest {slowest:?}",
            times.len()
        );
    }

    if std::env::var_os("OPENNGX_GPU_NETWORK_SECOND").is_some() {
        // A second, different size on the same device and weights.
        let g2 = graph::build(&Geometry::new(40, 72).expect("40x72"));
        let feats2 = features(g2.rows(g2.features), 2);
        let mut net2 = match NetworkRecorder::new(&ctx, g2.clone(), Arc::clone(&weights), opts) {
            Ok(n) => n,
            Err(e) => panic!("second network recorder: {e}"),
        };

        // Run the other size in between, then the first again: identical bytes.
        let t_gpu2 = evaluate(&h, &ctx, &mut net2, &feats2);
        let want2 = match reference::run(&g2, &model, &feats2, Profiles::NATIVE) {
            Ok(o) => o,
            Err(e) => panic!("reference 40x72: {e}"),
        };
        for ((name, w), (_, t)) in want2.boundaries.iter().zip(&g2.boundaries) {
            assert_eq!(
                &net2.read_tensor(*t).expect("boundary"),
                w,
                "40x72 boundary {name}"
            );
        }
        let head2 = net2.read_head().expect("head");
        assert!(head2
            .iter()
            .zip(&want2.head)
            .all(|(a, b)| a.to_bits() == b.to_bits()));
        evaluate(&h, &ctx, &mut net, &feats);
        for ((_, t), first) in g.boundaries.iter().zip(&boundaries) {
            assert_eq!(
                &net.read_tensor(*t).expect("boundary"),
                first,
                "second evaluation"
            );
        }
        assert_eq!(net.read_head().expect("head"), head);
        println!("40x72 gpu {t_gpu2:.1} s; second 64x64 evaluation identical");
        drop(net2);
    }
    println!(
        "64x64: model {t_model:.1} s, cpu reference {t_cpu:.1} s, gpu {t_gpu:.1} s; \
         workspace {} KiB (boundaries kept)",
        net.workspace_bytes() / 1024
    );
    drop(net);
    drop(weights);
}
