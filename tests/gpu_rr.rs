//! Ray Reconstruction's GPU route (`rr::gpu_frame`, kernels `shaders/rr`) against the CPU
//! reference (`rr::reference`), byte for byte, over a three-frame temporal sequence of the
//! synthetic scene on the synthetic model (as `tests/rr_reference.rs`), on the harness's device
//! (lavapipe in CI) with the validation layer.
//!
//! Every tensor a GPU kernel writes is compared with the CPU executor's tensor of the same op
//! (so a mismatch names the first kernel that differs), which covers every published tensor the
//! GPU writes. Tensors start poisoned each frame, so an unwritten byte fails. The GPU keeps its
//! own history (the previous frame's GPU output), so the three frames are a temporal sequence on
//! both sides. The GPU's only uploads are the colour, the guides and the first frame's (zero)
//! history. The same frames also run through a `GpuFrame` in its production layout, where
//! tensors share one arena by lifetime (`rr::record::slots`), and its output and alpha are compared
//! too. A third instance runs the split route (`rr::record::bands`): every op with a band rule
//! cut into up to three bands (`Cut::min_bands`, the test hook that makes a small size split as
//! 1920x1080 does within a 128 MiB binding range), every tensor it writes compared like the first's.
//!
//! `OPENNGX_RR_GPU_SIZE=WxH:WxH` (render:output) picks another size (the default is the golden
//! test's 64x48 -> 96x72), `OPENNGX_RR_GPU_FRAMES=N` another number of frames (default 4: the
//! golden test's three temporal frames, then a Reset frame, which must ignore the history the
//! GPU holds while still writing the next one, and which takes the caller's exposure, scale,
//! pre-exposure and MV scale).

mod common;

use std::time::Instant;

use common::Harness;
use openngx::gpu::{GpuBuffer, MemoryKind, Recorder, UploadBatch};
use openngx::rr::frame::temporal::{FrameParams, Temporal};
use openngx::rr::frame::{scene, FrameConstants};
use openngx::rr::geometry::{Geometry, Size};
use openngx::rr::gpu_frame::{GpuFrame, GpuFrameOptions};
use openngx::rr::preset::Preset;
use openngx::rr::record::bands::Cut;
use openngx::rr::reference::{Executor, TensorData, Weights};
use openngx_tools::rr_synth::{synthesize, RrSynthParams};

const FRAMES: u32 = 3;
/// The exactness test's frames: [`FRAMES`], then one Reset.
const FRAMES_WITH_RESET: u32 = FRAMES + 1;
/// The index of the Reset frame.
const RESET: u32 = 3;
const JITTER: [[f32; 2]; 3] = [[0.0, -0.16666667], [-0.25, 0.16666667], [0.25, -0.3888889]];

fn parse_size(s: &str) -> Option<Size> {
    let (w, h) = s.split_once('x')?;
    Some(Size::new(w.trim().parse().ok()?, h.trim().parse().ok()?))
}

fn sizes() -> (Size, Size) {
    match std::env::var("OPENNGX_RR_GPU_SIZE") {
        Ok(v) => {
            let parsed = v
                .split_once(':')
                .and_then(|(r, o)| Some((parse_size(r)?, parse_size(o)?)));
            parsed.unwrap_or_else(|| panic!("OPENNGX_RR_GPU_SIZE={v}: expected WxH:WxH"))
        }
        Err(_) => (Size::new(64, 48), Size::new(96, 72)),
    }
}

/// Frames of the exactness test.
fn frames() -> u32 {
    std::env::var("OPENNGX_RR_GPU_FRAMES").map_or(FRAMES_WITH_RESET, |v| {
        v.parse()
            .unwrap_or_else(|_| panic!("OPENNGX_RR_GPU_FRAMES={v}: expected a count"))
    })
}

#[test]
fn gpu_route_matches_the_cpu_reference_op_by_op_over_three_frames_and_a_reset() {
    let Some(h) = Harness::new() else { return };
    let ctx = h.context();
    let (render, output) = sizes();
    let frame_count = frames();
    let t0 = Instant::now();
    let model = synthesize(0, &RrSynthParams::DEFAULT).expect("synthesize");
    let geo = Geometry::new(render, output).expect("geometry");
    // Every tensor in a buffer of its own (op by op), and the production layout whose tensors
    // share one arena by lifetime (its output and alpha compared).
    let mut gpu = GpuFrame::keeping_every_tensor(&ctx, &model, geo, Preset::E).expect("GpuFrame");
    let mut shared = GpuFrame::new(&ctx, &model, geo, Preset::E).expect("GpuFrame::new");
    // The split route: every op with a band rule in up to three bands.
    let mut banded = GpuFrame::with_options(
        &ctx,
        &model,
        geo,
        Preset::E,
        GpuFrameOptions {
            keep_every_tensor: true,
            cut: Cut {
                band_range: None,
                min_bands: Some(3),
            },
        },
    )
    .expect("GpuFrame::with_options");
    let per_node = banded.launches_per_node();
    let single = gpu.launches_per_node();
    let split_ops = per_node.iter().zip(&single).filter(|(b, s)| b > s).count();
    println!(
        "split route: {split_ops} of {} ops in bands, {} launches (single route: {})",
        per_node.len(),
        per_node.iter().sum::<usize>(),
        single.iter().sum::<usize>()
    );
    assert!(split_ops > 40, "the split route splits {split_ops} ops");
    println!(
        "RR GPU tensor memory at {render} -> {output}: {} KiB in the shared arena, {} KiB one buffer each",
        shared.tensor_memory() >> 10,
        gpu.tensor_memory() >> 10
    );
    let weights = Weights::new(&model).expect("weights");
    let graph = gpu.graph().clone();
    let mut batch = UploadBatch::new(&ctx);
    h.submit(|cmd| {
        // SAFETY: the harness's command buffer is recording on the context's device.
        let mut rec = unsafe { Recorder::new(&ctx, cmd) }.unwrap();
        gpu.record_setup(&mut rec, &mut batch).expect("setup");
        shared.record_setup(&mut rec, &mut batch).expect("setup");
        banded.record_setup(&mut rec, &mut batch).expect("setup");
    });
    batch.release();
    let on_gpu: Vec<usize> = (0..graph.nodes.len()).collect();
    // Every tensor the GPU writes, read back at these offsets.
    let written: Vec<usize> = on_gpu
        .iter()
        .flat_map(|&i| graph.nodes[i].op.outputs())
        .collect();
    let mut offsets = Vec::new();
    let mut total = 0u64;
    for &t in &written {
        offsets.push(total);
        total += gpu.tensor(t).unwrap().range.div_ceil(4) * 4;
    }
    let readback = GpuBuffer::new(&ctx, "rr readback", total, MemoryKind::Readback).unwrap();
    let banded_back =
        GpuBuffer::new(&ctx, "rr split-route readback", total, MemoryKind::Readback).unwrap();
    let finals = [graph.output, graph.alpha];
    let final_bytes: Vec<u64> = finals
        .iter()
        .map(|&t| gpu.tensor(t).unwrap().range)
        .collect();
    let shared_back = GpuBuffer::new(
        &ctx,
        "rr shared-arena readback",
        final_bytes.iter().sum(),
        MemoryKind::Readback,
    )
    .unwrap();
    let mut history = vec![0u16; output.area() * 4];
    let (mut cpu_s, mut gpu_s) = (0.0, 0.0);
    let mut temporal = Temporal::default();
    let mut exact_ops = 0;
    let mut banded_exact = 0;
    let mut shared_exact = 0;
    let mut failures = Vec::new();
    for f in 0..frame_count {
        let s = scene::render(render, f);
        let mut params = FrameParams {
            jitter: JITTER[f as usize % JITTER.len()],
            reset: f == RESET,
            ..FrameParams::default()
        };
        if f == RESET {
            // The caller's exposure (the exposure stage's other branch) and MV scale.
            params.exposure_value = Some(0.8);
            params.exposure_scale = 1.25;
            params.pre_exposure = 2.0;
            params.mv_scale = [0.5, -1.5];
        }
        // The CPU side's temporal state; each GPU frame keeps its own and must agree.
        let constants = temporal.constants(&params);
        temporal.advance();
        let t = Instant::now();
        let mut ex = Executor::new(&graph, &weights, constants);
        ex.keep_all = true;
        ex.set(graph.color, TensorData::F32(s.color.clone()))
            .unwrap();
        ex.set(graph.guides, TensorData::F32(s.guides.clone()))
            .unwrap();
        ex.set(graph.history, TensorData::F16(history.clone()))
            .unwrap();
        ex.run_all().expect("CPU reference");
        cpu_s += t.elapsed().as_secs_f64();

        let t = Instant::now();
        let mut batch = UploadBatch::new(&ctx);
        h.submit(|cmd| {
            // SAFETY: as above.
            let mut rec = unsafe { Recorder::new(&ctx, cmd) }.unwrap();
            gpu.poison(&mut rec, 0xA5A5_A5A5).unwrap();
            shared.poison(&mut rec, 0x5A5A_5A5A).unwrap();
            banded.poison(&mut rec, 0xC3C3_C3C3).unwrap();
            rec.transfer_to_compute();
            // The history is uploaded (zeros) for the first frame only: later frames read the
            // GPU's own previous output.
            let mut inputs = vec![graph.color, graph.guides];
            if f == 0 {
                inputs.push(graph.history);
            }
            for t in inputs {
                let data = ex.tensor(t).expect("CPU tensor").to_bytes();
                gpu.upload(&mut rec, &mut batch, t, &data).unwrap();
                shared.upload(&mut rec, &mut batch, t, &data).unwrap();
                banded.upload(&mut rec, &mut batch, t, &data).unwrap();
            }
            rec.transfer_to_compute();
            for g in [&mut gpu, &mut shared, &mut banded] {
                let c = g.record_frame(&mut rec, &params).expect("record");
                assert_eq!(c, constants, "the GPU frame's temporal state");
            }
            rec.compute_to_transfer();
            let mut off = 0;
            for (&t, &len) in finals.iter().zip(&final_bytes) {
                let src = shared.tensor(t).unwrap();
                rec.copy(src, shared_back.range(off, len).unwrap(), len)
                    .unwrap();
                off += len;
            }
            for (&t, &off) in written.iter().zip(&offsets) {
                let src = gpu.tensor(t).unwrap();
                let dst = readback.range(off, src.range).unwrap();
                rec.copy(src, dst, src.range).unwrap();
                let src = banded.tensor(t).unwrap();
                let dst = banded_back.range(off, src.range).unwrap();
                rec.copy(src, dst, src.range).unwrap();
            }
            rec.to_host();
        });
        batch.release();
        gpu_s += t.elapsed().as_secs_f64();
        let bytes = readback.read_all().unwrap();
        let split_bytes = banded_back.read_all().unwrap();
        let mut frame_exact = 0;
        let mut frame_banded = 0;
        for &i in &on_gpu {
            let node = &graph.nodes[i];
            let mut exact = [true, true];
            for t in node.op.outputs() {
                let k = written.iter().position(|&w| w == t).unwrap();
                let want = ex.tensor(t).expect("CPU tensor").to_bytes();
                let off = offsets[k] as usize;
                for (route, (bytes, ok)) in [&bytes, &split_bytes]
                    .into_iter()
                    .zip(&mut exact)
                    .enumerate()
                {
                    let got = &bytes[off..off + want.len()];
                    if got != want.as_slice() {
                        *ok = false;
                        let bad = got.iter().zip(&want).filter(|(a, b)| a != b).count();
                        let first = got.iter().zip(&want).position(|(a, b)| a != b).unwrap();
                        failures.push(format!(
                            "frame {f} {} ({}, {} route, {} launches): tensor `{}`: {bad} of {} \
                             bytes differ, first at byte {first} (got {:#04x}, want {:#04x})",
                            node.label,
                            node.op.kind(),
                            ["single", "split"][route],
                            [single[i], per_node[i]][route],
                            graph.tensors[t].name,
                            want.len(),
                            got[first],
                            want[first]
                        ));
                    }
                }
            }
            frame_exact += usize::from(exact[0]);
            frame_banded += usize::from(exact[1]);
        }
        banded_exact += frame_banded;
        exact_ops += frame_exact;
        // The shared-arena frame's output and alpha.
        let got = shared_back.read_all().unwrap();
        let mut off = 0;
        for (&t, &len) in finals.iter().zip(&final_bytes) {
            let want = ex.tensor(t).expect("CPU tensor").to_bytes();
            if got[off..off + len as usize] == want[..] {
                shared_exact += 1;
            } else {
                failures.push(format!(
                    "frame {f}: the shared-arena frame's `{}` differs from the CPU's",
                    graph.tensors[t].name
                ));
            }
            off += len as usize;
        }
        println!(
            "frame {f}: {frame_exact} of {} GPU ops byte-exact ({frame_banded} on the split route)",
            on_gpu.len()
        );
        history = match ex.take(graph.output) {
            Some(TensorData::F16(v)) => v,
            _ => panic!("the CPU frame wrote no output"),
        };
    }
    let published: Vec<&str> = graph
        .published
        .iter()
        .filter(|(_, t)| written.contains(t))
        .map(|(n, _)| n.as_str())
        .collect();
    println!(
        "RR GPU route: {exact_ops} of {} op runs byte-exact over {frame_count} frames at {render} \
         -> {output} ({banded_exact} on the split route); published tensors compared: {} of {} ({}); the shared-arena frames' output and \
         alpha byte-exact {shared_exact} of {} times; CPU {cpu_s:.2} s, GPU {gpu_s:.2} s, total \
         {:.2} s",
        frame_count as usize * on_gpu.len(),
        published.len(),
        graph.published.len(),
        published.join(" "),
        2 * frame_count,
        t0.elapsed().as_secs_f64()
    );
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures
            .iter()
            .take(30)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
    drop(readback);
    drop(banded_back);
    drop(banded);
    drop(shared_back);
    drop(shared);
    drop(gpu);
    drop(ctx);
    h.assert_validation_clean();
}

/// GPU timestamps per layer (consecutive ops of one layer, the frame stages by name; per op with
/// `OPENNGX_RR_GPU_TIMINGS_OPS=1`) of whole frames at `OPENNGX_RR_GPU_TIMINGS=WxH:WxH`
/// (render:output; e.g. 1280x720:3840x2160 on the H200); skipped (and says so) when the
/// variable is not set. No CPU reference runs here: the
/// exactness is the other test's.
#[test]
fn gpu_route_layer_timings() {
    let Ok(spec) = std::env::var("OPENNGX_RR_GPU_TIMINGS") else {
        println!("SKIP: set OPENNGX_RR_GPU_TIMINGS=WxH:WxH for RR GPU timings per layer");
        return;
    };
    let (render, output) = spec
        .split_once(':')
        .and_then(|(r, o)| Some((parse_size(r)?, parse_size(o)?)))
        .unwrap_or_else(|| panic!("OPENNGX_RR_GPU_TIMINGS={spec}: expected WxH:WxH"));
    let Some(h) = Harness::new() else { return };
    let ctx = h.context();
    let model = synthesize(0, &RrSynthParams::DEFAULT).expect("synthesize");
    let geo = Geometry::new(render, output).expect("geometry");
    let mut gpu = GpuFrame::new(&ctx, &model, geo, Preset::E).expect("GpuFrame::new");
    let graph = gpu.graph().clone();
    // Groups of consecutive nodes of one layer (or one frame stage); one per op with
    // OPENNGX_RR_GPU_TIMINGS_OPS=1.
    let per_op = std::env::var("OPENNGX_RR_GPU_TIMINGS_OPS").is_ok_and(|v| v == "1");
    let mut groups: Vec<(String, std::ops::Range<usize>)> = Vec::new();
    for (i, n) in graph.nodes.iter().enumerate() {
        let name = match n.layer {
            Some(l) if !per_op => l.to_string(),
            _ => n.label.clone(),
        };
        match groups.last_mut() {
            Some((g, r)) if *g == name => r.end = i + 1,
            _ => groups.push((name, i..i + 1)),
        }
    }
    let Some(mut pool) =
        openngx::gpu::TimestampPool::new(&ctx, groups.len() as u32 + 1).expect("query pool")
    else {
        println!("SKIP: the device has no timestamps");
        return;
    };
    let s = scene::render(render, 0);
    let mut batch = UploadBatch::new(&ctx);
    h.submit(|cmd| {
        // SAFETY: as above.
        let mut rec = unsafe { Recorder::new(&ctx, cmd) }.unwrap();
        gpu.record_setup(&mut rec, &mut batch).expect("setup");
        let f32s = |v: &[f32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
        gpu.upload(&mut rec, &mut batch, graph.color, &f32s(&s.color))
            .unwrap();
        gpu.upload(&mut rec, &mut batch, graph.guides, &f32s(&s.guides))
            .unwrap();
        let zeros = vec![0u8; output.area() * 8];
        gpu.upload(&mut rec, &mut batch, graph.history, &zeros)
            .unwrap();
        rec.transfer_to_compute();
    });
    batch.release();
    for f in 0..FRAMES {
        let constants = FrameConstants {
            jitter: JITTER[f as usize % JITTER.len()],
            history_valid: f > 0,
            frame_index: f as u64,
            ..FrameConstants::default()
        };
        h.submit(|cmd| {
            // SAFETY: as above.
            let mut rec = unsafe { Recorder::new(&ctx, cmd) }.unwrap();
            pool.reset(&mut rec);
            pool.mark(&mut rec, "start").unwrap();
            for (name, r) in &groups {
                gpu.record(&mut rec, &constants, r.clone()).unwrap();
                pool.mark(&mut rec, name).unwrap();
            }
            gpu.record_keep_history(&mut rec).unwrap();
        });
        let times = pool.read().unwrap().expect("timestamps after the wait");
        let total: f64 = times.iter().map(|t| t.ms).sum();
        let per: Vec<String> = times
            .iter()
            .map(|t| format!("{} {:.2}", t.label, t.ms))
            .collect();
        println!(
            "RR GPU frame {f} at {render} -> {output}: {total:.2} ms (GPU timestamps; tensors in \
             {} MiB): {}",
            gpu.tensor_memory() >> 20,
            per.join(", ")
        );
    }
    drop(pool);
    drop(gpu);
    drop(ctx);
    h.assert_validation_clean();
}

/// Where even the smallest band of an op does not fit (here: bands planned as if the binding
/// range were 300 bytes, `Cut::band_range`), creation is refused before anything is allocated,
/// naming the op, the tensor and the limit.
#[test]
fn a_size_no_band_fits_is_refused_at_creation_naming_the_tensor() {
    let Some(h) = Harness::new() else { return };
    let ctx = h.context();
    let model = synthesize(0, &RrSynthParams::DEFAULT).expect("synthesize");
    let geo = Geometry::new(Size::new(64, 48), Size::new(96, 72)).expect("geometry");
    let options = GpuFrameOptions {
        keep_every_tensor: false,
        cut: Cut {
            band_range: Some(300),
            min_bands: None,
        },
    };
    let e = match GpuFrame::with_options(&ctx, &model, geo, Preset::E, options) {
        Ok(_) => panic!("created although no band fits 300 bytes"),
        Err(e) => e.to_string(),
    };
    println!("refused: {e}");
    assert!(
        e.contains("64x48 -> 96x72")
            && e.contains("rr op `")
            && e.contains("tensor `")
            && e.contains("maxStorageBufferRange"),
        "{e}"
    );
    drop(ctx);
    h.assert_validation_clean();
}
