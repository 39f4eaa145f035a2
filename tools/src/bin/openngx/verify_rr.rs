//! `openngx verify --feature rr --model DIR (--synthetic --width W --height H --out-width OW
//! --out-height OH | --fixture DIR)`: Ray Reconstruction's exact GPU route (`rr::gpu_frame`,
//! every tensor in a buffer of its own) op by op against the CPU reference (`rr::reference`).
//! Each frame runs whole on the GPU (the synthetic scene with the jitter of `reference --feature
//! rr`, or a fixture's recorded inputs and parameters; the GPU keeps its own history between
//! frames), every tensor is read back, and then each op, in schedule order, is executed by the
//! CPU reference on the GPU's own inputs with the frame's constants and its outputs compared
//! byte for byte with the GPU's. The first op that differs is printed (frame, op index, kind,
//! layer, label, tensor, element, got/expected bytes) and the exit status is 1; otherwise "all
//! N ops exact" and 0; 2 when nothing could be compared. As NR's verify, a difference is pinned
//! to the op that made it, not to the end of a chain.

use std::time::Instant;

use openngx::model::LoadOptions;
use openngx::rr::frame::scene;
use openngx::rr::frame::temporal::FrameParams;
use openngx::rr::geometry::{Geometry, Size};
use openngx::rr::graph::{self, DType, Graph, TensorId};
use openngx::rr::preset::Preset;
use openngx::rr::reference::{Executor, TensorData, Weights};
use openngx::rr::weights::model::RrModel;
use openngx_tools::rr_fixture;

use crate::gpu_net::Progress;
use crate::rr_gpu::{parse_preset, RrGpu};
use crate::verify::{hex, Args};

/// One frame to check: its inputs and parameters.
struct Frame {
    color: Vec<f32>,
    guides: Vec<f32>,
    params: FrameParams,
}

/// The geometry, preset and frames of the run, and what they are.
fn input(args: &Args) -> Result<(Geometry, Preset, Vec<Frame>, String), String> {
    if args.profile.is_some() {
        return Err("--feature rr has one numerics (no --profile)".into());
    }
    match &args.fixture {
        Some(dir) => {
            let fx = rr_fixture::load(dir).map_err(|e| format!("fixture refused: {e}"))?;
            let render = Size::new(fx.render[0], fx.render[1]);
            let output = Size::new(fx.output[0], fx.output[1]);
            let geometry = Geometry::new(render, output).map_err(|e| e.to_string())?;
            let preset = parse_preset(&fx.preset)?;
            let mut frames = Vec::new();
            for f in &fx.frames {
                let input = |name: &str| -> Result<Vec<f32>, String> {
                    let e =
                        f.files.iter().find(|e| e.name == name).ok_or_else(|| {
                            format!("fixture frame {}: no `{name}` file", f.index)
                        })?;
                    let bytes = rr_fixture::read_file(dir, e).map_err(|e| e.to_string())?;
                    rr_fixture::f32_values(&bytes)
                        .ok_or_else(|| format!("{}: not f32 values", e.file))
                };
                frames.push(Frame {
                    color: input("color")?,
                    guides: input("guides")?,
                    params: FrameParams {
                        jitter: f.jitter,
                        mv_scale: f.mv_scale,
                        pre_exposure: f.pre_exposure,
                        exposure_scale: f.exposure_scale,
                        reset: f.reset,
                        ..FrameParams::default()
                    },
                });
            }
            if frames.is_empty() {
                return Err("fixture refused: no frames".into());
            }
            let what = format!(
                "RR fixture {} ({})",
                dir.display(),
                frames_text(frames.len())
            );
            Ok((geometry, preset, frames, what))
        }
        None => {
            let (Some(w), Some(h)) = (args.width, args.height) else {
                return Err("--synthetic needs --width and --height".into());
            };
            let render = Size::new(w, h);
            let output = Size::new(args.out_width.unwrap_or(w), args.out_height.unwrap_or(h));
            let geometry = Geometry::new(render, output).map_err(|e| e.to_string())?;
            if args.frames == 0 {
                return Err("--frames must be at least 1".into());
            }
            let frames: Vec<Frame> = (0..args.frames)
                .map(|n| {
                    let s = scene::render(render, n);
                    Frame {
                        color: s.color,
                        guides: s.guides,
                        params: FrameParams {
                            jitter: scene::JITTER[n as usize % scene::JITTER.len()],
                            ..FrameParams::default()
                        },
                    }
                })
                .collect();
            let what = format!("RR synthetic scene ({})", frames_text(frames.len()));
            Ok((geometry, parse_preset(&args.preset)?, frames, what))
        }
    }
}

/// `1 frame`, `N frames`.
fn frames_text(n: usize) -> String {
    if n == 1 {
        "1 frame".into()
    } else {
        format!("{n} frames")
    }
}

/// A tensor's bytes as the CPU executor's data.
fn to_data(dtype: DType, b: &[u8]) -> TensorData {
    match dtype {
        DType::E4 => TensorData::E4(b.to_vec()),
        DType::F16 => TensorData::F16(
            b.chunks_exact(2)
                .map(|c| u16::from_le_bytes([c[0], c[1]]))
                .collect(),
        ),
        DType::F32 => TensorData::F32(
            b.chunks_exact(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect(),
        ),
    }
}

/// Whether two graphs have the same schedule and tensors (so one's ops can be run on the
/// other's data).
fn same_shape(a: &Graph, b: &Graph) -> bool {
    a.nodes.len() == b.nodes.len()
        && a.tensors.len() == b.tensors.len()
        && a.nodes.iter().zip(&b.nodes).all(|(x, y)| {
            x.label == y.label && x.op.inputs() == y.op.inputs() && x.op.outputs() == y.op.outputs()
        })
        && (0..a.tensors.len())
            .all(|t| a.elements(t) == b.elements(t) && a.tensors[t].dtype == b.tensors[t].dtype)
}

/// Runs RR's verify; `Ok(false)` when an op differs.
pub fn run(args: &Args) -> Result<bool, String> {
    let model = RrModel::load(
        &args.model,
        LoadOptions {
            verify_sha: !args.no_verify,
        },
    )
    .map_err(|e| format!("model refused: {e}"))?;
    let (geometry, preset, frames, what) = input(args)?;
    // The schedule the GPU runs (checked against the instance's below), so that bad options
    // are refused before the device is set up.
    let graph = graph::build(&geometry, preset);
    // The CPU side's graph: the GPU's, or the one of the hook's preset (same shape, different
    // behaviour where the preset matters).
    let cpu_preset = match &args.cpu_preset {
        Some(p) => parse_preset(p)?,
        None => preset,
    };
    let cpu_graph = graph::build(&geometry, cpu_preset);
    if !same_shape(&graph, &cpu_graph) {
        return Err("the CPU preset's schedule differs from the GPU's".into());
    }
    let total = graph.nodes.len();
    let n = args.ops.unwrap_or(total).min(total);
    if n == 0 {
        return Err("--ops must be at least 1".into());
    }
    if frames.len() > 1 && n < total {
        return Err(
            "--ops checks one frame only (later frames need the whole frame's history)".into(),
        );
    }
    if let Some(s) = args.skip_op.filter(|&s| s >= n) {
        return Err(format!("--skip-op {s}: the run has {n} ops"));
    }
    let mut gpu = RrGpu::open(args.device, model.weights(), geometry, preset, true, false)?;
    if !same_shape(&graph, gpu.graph()) {
        return Err("the GPU instance's schedule is not the one built for it".into());
    }
    println!(
        "{what}: {} -> {}, preset {}{}, {n} of {total} ops per frame",
        geometry.render,
        geometry.output,
        preset.name(),
        if cpu_preset == preset {
            String::new()
        } else {
            format!(" (CPU reference: preset {})", cpu_preset.name())
        }
    );
    println!("device: {}", gpu.device_name());
    // Every tensor the checked ops read or write, and where each is in the read-back list.
    let mut ids: Vec<TensorId> = Vec::new();
    let mut at: Vec<Option<usize>> = vec![None; graph.tensors.len()];
    for node in &graph.nodes[..n] {
        for t in node.op.inputs().into_iter().chain(node.op.outputs()) {
            if at[t].is_none() {
                at[t] = Some(ids.len());
                ids.push(t);
            }
        }
    }
    let weights = Weights::new(model.weights()).map_err(|e| e.to_string())?;
    let t0 = Instant::now();
    for (f, frame) in frames.iter().enumerate() {
        let ran = gpu.run(
            &frame.params,
            &frame.color,
            &frame.guides,
            &ids,
            Some((n, args.skip_op)),
        )?;
        let read = |t: TensorId| -> Result<&[u8], String> {
            at[t]
                .and_then(|k| ran.tensors.get(k))
                .map(Vec::as_slice)
                .ok_or_else(|| format!("`{}` was not read back", graph.tensors[t].name))
        };
        let mut progress = Progress::new(format!("frame {f}: CPU reference"));
        for (i, node) in cpu_graph.nodes[..n].iter().enumerate() {
            // A fresh executor per op holds only that op's tensors.
            let mut ex = Executor::new(&cpu_graph, &weights, ran.constants);
            for t in node.op.inputs() {
                ex.set(t, to_data(cpu_graph.tensors[t].dtype, read(t)?))
                    .map_err(|e| format!("frame {f} op {i} ({}): {e}", node.label))?;
            }
            let outs = ex
                .exec(node)
                .map_err(|e| format!("frame {f} op {i} ({}): CPU reference: {e}", node.label))?;
            for (k, (t, want)) in outs.iter().enumerate() {
                let mut got = read(*t)?.to_vec();
                if args.corrupt_op == Some(i) && k == 0 {
                    if let Some(b) = got.first_mut() {
                        *b ^= 1;
                    }
                }
                let want = want.to_bytes();
                if got == want {
                    continue;
                }
                let tensor = &graph.tensors[*t];
                let es = tensor.dtype.size();
                if got.len() != want.len() {
                    println!(
                        "frame {f} op {i} ({}, {}): tensor `{}`: the GPU has {} bytes, the CPU {}",
                        node.op.kind(),
                        node.label,
                        tensor.name,
                        got.len(),
                        want.len()
                    );
                    return Ok(false);
                }
                let differing = got
                    .chunks(es)
                    .zip(want.chunks(es))
                    .filter(|(a, b)| a != b)
                    .count();
                let e = got
                    .chunks(es)
                    .zip(want.chunks(es))
                    .position(|(a, b)| a != b)
                    .unwrap_or(0);
                let w = graph.grid_size(tensor.grid).w as usize;
                let (row, c) = (e / tensor.channels, e % tensor.channels);
                println!(
                    "frame {f} op {i} ({}, layer {}, {}): tensor `{}` ({:?}) differs in {differing} of {} elements; first at element {e} (x={} y={} c={c}): got 0x{} expected 0x{}",
                    node.op.kind(),
                    node.layer.map_or_else(|| "-".to_owned(), |l| l.to_string()),
                    node.label,
                    tensor.name,
                    tensor.dtype,
                    got.len() / es,
                    row % w.max(1),
                    row / w.max(1),
                    hex(&got[e * es..(e + 1) * es]),
                    hex(&want[e * es..(e + 1) * es]),
                );
                return Ok(false);
            }
            progress.tick(|| format!("{} of {n} ops exact (now {})", i + 1, node.label));
        }
        progress.done();
        println!("frame {f}: {n} ops exact");
    }
    let runs = n * frames.len();
    if n == total {
        println!(
            "all {runs} ops exact ({} x {n}, {:.1} s)",
            frames_text(frames.len()),
            t0.elapsed().as_secs_f64()
        );
    } else {
        println!("all {n} ops exact (the first {n} of {total} in the schedule)");
    }
    Ok(true)
}
