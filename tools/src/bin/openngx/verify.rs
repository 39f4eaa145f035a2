//! `openngx verify --model DIR (--fixture DIR | --width W --height H --synthetic)`: the GPU
//! network op by op against the CPU reference. The GPU runs the schedule keeping every tensor
//! (`Keep::All`: no memory shared, everything read back); then each node, in schedule order, is
//! executed by the CPU reference on the GPU's own inputs and its outputs are compared byte for
//! byte with the GPU's. The first op whose output differs is printed (op index, kind, block,
//! tensor, element position, got/expected bytes) and the exit status is 1; otherwise
//! "all N ops exact" and 0. Because every op sees the GPU's inputs, a difference is pinned to the
//! op that made it, not to the end of a chain of ops.
//!
//! Exit status: 0 exact, 1 an op differs, 2 nothing could be compared (bad input, model, device).

use std::path::PathBuf;
use std::process::ExitCode;

use openngx::gpu::{GpuBuffer, MemoryKind};
use openngx::model::{LoadOptions, Model};
use openngx::nr::geometry::Geometry;
use openngx::nr::graph::{self, DType, Graph, TensorId};
use openngx::nr::record::network::{Keep, NetworkOptions};
use openngx::nr::reference::{Executor, TensorData, Weights};
use openngx::numerics::{f16, Profiles};
use openngx_tools::compare;
use openngx_tools::fixture::Fixture;

use crate::gpu_net::{synthetic_features, GpuNet, Progress};
use crate::model_out::Network;

#[derive(clap::Args)]
#[command(group(clap::ArgGroup::new("input").required(true).args(["fixture", "synthetic"])))]
pub struct Args {
    /// The network: `nr` (DLSS-NR) or `rr` (Ray Reconstruction: `--width/--height` the render
    /// size, `--out-width/--out-height` the output size, or an RR fixture; whole frames of the
    /// exact route, every op compared).
    #[arg(long, value_enum, default_value = "nr")]
    pub(crate) feature: Network,
    /// Model directory (manifest.json + model/).
    #[arg(long)]
    pub(crate) model: PathBuf,
    /// Fixture directory: its network input (inputFeatures, or prepare of its proxy), its
    /// geometry and its MMA profile.
    #[arg(long)]
    pub(crate) fixture: Option<PathBuf>,
    /// Deterministic synthetic features of a WIDTH x HEIGHT frame instead of a fixture.
    #[arg(long, requires_all = ["width", "height"], conflicts_with = "fixture")]
    pub(crate) synthetic: bool,
    #[arg(long)]
    pub(crate) width: Option<u32>,
    #[arg(long)]
    pub(crate) height: Option<u32>,
    /// RR: the output width (default: the render width).
    #[arg(long)]
    pub(crate) out_width: Option<u32>,
    /// RR: the output height (default: the render height).
    #[arg(long)]
    pub(crate) out_height: Option<u32>,
    /// RR, synthetic scene: the preset, `d` or `e` (a fixture names its own).
    #[arg(long, default_value = "e")]
    pub(crate) preset: String,
    /// RR, synthetic scene: frames of the temporal sequence to check (the GPU keeps its own
    /// history between them; a fixture runs all of its frames).
    #[arg(long, default_value_t = 1)]
    pub(crate) frames: u32,
    /// MMA profile: f13 (native) or h25 (default: the fixture's, else f13).
    #[arg(long)]
    pub(crate) profile: Option<String>,
    /// Check only the first N ops of the schedule (the GPU runs only those).
    #[arg(long)]
    pub(crate) ops: Option<usize>,
    /// Device index among those that support the exact route.
    #[arg(long)]
    pub(crate) device: Option<usize>,
    /// Skip the SHA-256 check of the model's stage files.
    #[arg(long)]
    pub(crate) no_verify: bool,
    /// Test hook: flip the lowest bit of the first byte of op N's first output in what the GPU
    /// produced, before comparing (shows that a difference is found and where).
    #[arg(long, hide = true)]
    pub(crate) corrupt_op: Option<usize>,
    /// RR test hook: the GPU does not record op N, so its outputs keep the poison every tensor
    /// starts a frame with (a real GPU-side fault: an unwritten tensor).
    #[arg(long, hide = true)]
    pub(crate) skip_op: Option<usize>,
    /// RR test hook: the CPU reference runs this preset (`d`/`e`) instead of the GPU's, so the
    /// first op the preset changes must be named.
    #[arg(long, hide = true)]
    pub(crate) cpu_preset: Option<String>,
}

pub(crate) const EXIT_DIFFERS: u8 = 1;
pub(crate) const EXIT_UNUSABLE: u8 = 2;

pub fn run(args: Args) -> ExitCode {
    let result = match args.feature {
        Network::Nr => nr_only(&args).and_then(|()| run_inner(&args)),
        Network::Rr => crate::verify_rr::run(&args),
    };
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(EXIT_DIFFERS),
        Err(e) => {
            eprintln!("verify: {e}");
            ExitCode::from(EXIT_UNUSABLE)
        }
    }
}

/// Refuses RR's options on an NR run.
fn nr_only(args: &Args) -> Result<(), String> {
    if args.out_width.is_some()
        || args.out_height.is_some()
        || args.skip_op.is_some()
        || args.cpu_preset.is_some()
        || args.frames != 1
        || args.preset != "e"
    {
        return Err(
            "--out-width, --out-height, --preset, --frames, --skip-op and --cpu-preset are RR's \
             (--feature rr)"
                .into(),
        );
    }
    Ok(())
}

/// The network input and profile of the run.
fn input(args: &Args, model: &Model) -> Result<(Geometry, Vec<f32>, Profiles, String), String> {
    let by_name =
        |p: &str| Profiles::by_name(p).ok_or_else(|| format!("unknown profile `{p}` (f13, h25)"));
    match &args.fixture {
        Some(dir) => {
            let fx = Fixture::load(dir).map_err(|e| format!("fixture refused: {e}"))?;
            let blend = f16::to_f32(model.blend_scale());
            let inp =
                compare::fixture_input(&fx, blend).map_err(|e| format!("fixture refused: {e}"))?;
            let profile = args
                .profile
                .as_deref()
                .or(fx.manifest.profile.as_deref())
                .unwrap_or("f13");
            let what = format!("fixture {} (features from {})", dir.display(), inp.source);
            Ok((fx.geometry, inp.features, by_name(profile)?, what))
        }
        None => {
            let (Some(w), Some(h)) = (args.width, args.height) else {
                return Err("--synthetic needs --width and --height".into());
            };
            let g = Geometry::new(w, h).map_err(|e| format!("{w}x{h}: {e}"))?;
            let rows = g.field.w as usize * g.field.h as usize;
            let profile = by_name(args.profile.as_deref().unwrap_or("f13"))?;
            Ok((
                g,
                synthetic_features(rows),
                profile,
                "synthetic features".into(),
            ))
        }
    }
}

/// Bytes of a tensor.
fn tensor_bytes(g: &Graph, t: TensorId) -> u64 {
    (g.rows(t) * g.tensors[t].channels * g.tensors[t].dtype.size()) as u64
}

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

fn to_bytes(d: &TensorData) -> Vec<u8> {
    match d {
        TensorData::E4(v) => v.clone(),
        TensorData::F16(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
        TensorData::F32(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
    }
}

/// Bytes as one little-endian hex number (most significant first).
pub(crate) fn hex(b: &[u8]) -> String {
    b.iter().rev().map(|x| format!("{x:02x}")).collect()
}

fn run_inner(args: &Args) -> Result<bool, String> {
    let model = Model::load(
        &args.model,
        LoadOptions {
            verify_sha: !args.no_verify,
        },
    )
    .map_err(|e| format!("model refused: {e}"))?;
    let (geometry, features, profiles, what) = input(args, &model)?;
    let graph = graph::build(&geometry);
    let total = graph.nodes.len();
    let n = args.ops.unwrap_or(total).min(total);
    if n == 0 {
        return Err("--ops must be at least 1".into());
    }
    println!(
        "{what}: {}x{} (field {}x{}), profile {}, {n} of {total} ops",
        geometry.valid.w, geometry.valid.h, geometry.field.w, geometry.field.h, profiles.name
    );

    // The GPU: every tensor kept (no memory shared), one block per submission.
    let opts = NetworkOptions {
        profiles,
        keep: Keep::All,
        readback: false,
        timestamps: false,
        ..NetworkOptions::default()
    };
    let mut gpu = GpuNet::open(&model, graph.clone(), args.device, opts)?;
    println!("device: {}", gpu.device_name());
    gpu.upload_features(&features)?;
    // Every tensor the checked nodes read or write, copied to one host-visible buffer.
    let mut at: Vec<Option<u64>> = vec![None; graph.tensors.len()];
    let mut end = 0u64;
    for node in &graph.nodes[..n] {
        for t in node.op.inputs().into_iter().chain(node.op.outputs()) {
            if at[t].is_none() {
                at[t] = Some(end);
                end += tensor_bytes(&graph, t).div_ceil(4) * 4;
            }
        }
    }
    let readback = GpuBuffer::new(
        gpu.ctx(),
        "verify readback",
        end.max(4),
        MemoryKind::Readback,
    )
    .map_err(|e| format!("readback buffer: {e}"))?;
    gpu.run_nodes(
        n,
        "GPU",
        |_, _, _| Ok(()),
        |net, rec, _| {
            for (t, a) in at.iter().enumerate() {
                if let Some(a) = a {
                    let size = tensor_bytes(&graph, t);
                    let dst = readback.range(*a, size).map_err(|e| e.to_string())?;
                    rec.copy(net.tensor(t), dst, size)
                        .map_err(|e| e.to_string())?;
                }
            }
            rec.to_host();
            Ok(())
        },
    )?;
    let read = |t: TensorId| -> Result<Vec<u8>, String> {
        let a = at[t].ok_or("tensor not read back")?;
        let mut v = vec![0u8; tensor_bytes(&graph, t) as usize];
        readback
            .read(a, &mut v)
            .map_err(|e| format!("reading `{}`: {e}", graph.tensors[t].name))?;
        Ok(v)
    };

    // The CPU reference, one node at a time on the GPU's inputs.
    let weights = Weights::new(&model);
    let mut progress = Progress::new("CPU reference");
    for (i, node) in graph.nodes[..n].iter().enumerate() {
        // A fresh executor per node holds only that node's tensors.
        let mut ex = Executor::new(&graph, &weights, profiles);
        for t in node.op.inputs() {
            ex.set_tensor(t, to_data(graph.tensors[t].dtype, &read(t)?))
                .map_err(|e| format!("op {i} ({}): {e}", node.label))?;
        }
        let outs = ex
            .exec(node)
            .map_err(|e| format!("op {i} ({}): CPU reference: {e}", node.label))?;
        for (k, (t, want)) in outs.iter().enumerate() {
            let mut got = read(*t)?;
            if args.corrupt_op == Some(i) && k == 0 {
                got[0] ^= 1;
            }
            let want = to_bytes(want);
            if got == want {
                continue;
            }
            let tensor = &graph.tensors[*t];
            let es = tensor.dtype.size();
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
            let (w, _) = graph.dims(*t);
            let (row, c) = (e / tensor.channels, e % tensor.channels);
            println!(
                "op {i} ({}, block {}, {}): tensor `{}` ({:?}) differs in {differing} of {} elements; first at element {e} (x={} y={} c={c}): got 0x{} expected 0x{}",
                node.op.kind(),
                node.block,
                node.label,
                tensor.name,
                tensor.dtype,
                got.len() / es,
                row % w,
                row / w,
                hex(&got[e * es..(e + 1) * es]),
                hex(&want[e * es..(e + 1) * es]),
            );
            return Ok(false);
        }
        progress.tick(|| format!("{} of {n} ops exact (now {})", i + 1, node.label));
    }
    progress.done();
    if n == total {
        println!("all {n} ops exact");
    } else {
        println!("all {n} ops exact (the first {n} of {total} in the schedule)");
    }
    Ok(true)
}
