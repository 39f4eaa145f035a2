//! `openngx bench`: GPU time of the network (timestamps), warm-up, median and min over N frames,
//! per-stage profile, device memory, optional bit-exact check against the CPU reference, optional
//! driver statistics of every kernel (`--pipeline-stats`). `--feature rr` benches Ray
//! Reconstruction instead (`bench_rr`).

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use openngx::feature::Route;
use openngx::gpu::{GpuBuffer, MemoryKind, PipelineStatistics, TimestampPool};
use openngx::model::blocks::{self, Block, BlockKind, BLOCK_COUNT, VIT_ENTRY_BLOCK};
use openngx::model::{LoadOptions, Model};
use openngx::nr::geometry::Geometry;
use openngx::nr::graph;
use openngx::nr::record::network::{Keep, NetworkOptions};
use openngx::nr::record::strips::StripChoice;
use openngx::nr::reference;
use openngx::nr::route::Fusion;
use openngx::numerics::Profiles;
use openngx_tools::synth;

use crate::gpu_net::{synthetic_features, GpuNet};
use crate::model_out::Network;

#[derive(clap::Args)]
pub struct Args {
    /// The network: `nr` (DLSS-NR) or `rr` (Ray Reconstruction: `--width/--height` the render
    /// size, `--out-width/--out-height` the output size; the exact route, timed per layer).
    #[arg(long, value_enum, default_value = "nr")]
    pub(crate) feature: Network,
    /// Model directory; without it a synthetic model (seed 0) is written to a temporary directory
    /// (RR: synthesized in memory).
    #[arg(long)]
    pub(crate) model: Option<PathBuf>,
    #[arg(long, default_value_t = 768)]
    pub(crate) width: u32,
    #[arg(long, default_value_t = 768)]
    pub(crate) height: u32,
    /// RR: the output width (default: the render width).
    #[arg(long)]
    pub(crate) out_width: Option<u32>,
    /// RR: the output height (default: the render height).
    #[arg(long)]
    pub(crate) out_height: Option<u32>,
    /// RR: the preset, `d` or `e`.
    #[arg(long, default_value = "e")]
    pub(crate) preset: String,
    /// Timed frames (after the warm-up).
    #[arg(long, default_value_t = 20)]
    pub(crate) frames: usize,
    #[arg(long, default_value_t = 3)]
    pub(crate) warmup: usize,
    /// Routes to run, one after the other in this process: `exact`, `tensor` or both
    /// (`exact,tensor`). With two routes and --check, the second is also compared with the first
    /// (share of differing bytes per boundary, PSNR of the head).
    #[arg(long, default_value = "exact", value_delimiter = ',')]
    pub(crate) route: Vec<String>,
    /// MMA profile of the exact route: f13 (native) or h25. The tensor route computes h25.
    #[arg(long, default_value = "f13")]
    pub(crate) profile: String,
    /// Device index among those that support the exact route.
    #[arg(long)]
    pub(crate) device: Option<usize>,
    /// Also run the CPU reference and compare the 75 boundaries and the head byte for byte
    /// (with --blocks: the boundaries those blocks publish).
    #[arg(long)]
    pub(crate) check: bool,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub(crate) json: bool,
    /// Run and time only the first N of the 71 blocks (with the adapter before block 0): a
    /// quick run on a slow device; with --check, a partial evaluation compared with the CPU
    /// reference's first N blocks.
    #[arg(long)]
    pub(crate) blocks: Option<usize>,
    /// Lower the device's maxStorageBufferRange to BYTES when planning the launches: every
    /// binding above it runs in row bands (the split route that devices with a small range,
    /// like lavapipe's 128 MiB, take at large sizes), so it can be checked on small ones.
    #[arg(long, value_name = "BYTES")]
    pub(crate) max_binding_range: Option<u64>,
    /// Window blocks as strips (band by band, band-sized intermediates): `auto` (the route's
    /// default: on for both GPU routes), `per-token:N` (the default's pruned strips with N
    /// band-local bytes per field token), `off`, or the band-local BYTES per band (every strip).
    #[arg(long, value_name = "auto|per-token:N|off|BYTES", default_value = "auto", value_parser = parse_strips)]
    pub(crate) strips: StripChoice,
    /// Which neighbouring ops the route runs as one kernel where it can: `off` (none), `gemm`
    /// (the tensor route's window normalisation as the QKV GEMM's epilogue), `attention` (the
    /// normalisation in the window attention's staging), `ffn` (the library's default: each
    /// window block's first two FFN GEMMs as one kernel, the hidden channels kept on chip) or
    /// `block` (`ffn`, and each C = 32 block's QKV GEMM, normalisation, attention and projection
    /// as one kernel). The same bytes; the exact route fuses nothing.
    #[arg(long, value_name = "off|gemm|attention|ffn|block|ffn-gemm", default_value_t = Fusion::default(), value_parser = parse_fusion)]
    pub(crate) fusion: Fusion,
    /// Also print what the driver reports about each kernel (register counts and the like,
    /// through VK_KHR_pipeline_executable_properties where the device has it).
    #[arg(long)]
    pub(crate) pipeline_stats: bool,
    /// `nodes`: a timestamp after every op (the per-stage and per-op profile); `frame`: only
    /// before and after the network, as a feature records it (the frame time without the
    /// profile's timestamps, no per-op lines); `floor`: as `frame`, but every launch runs an
    /// empty kernel with its own grid behind the same barriers (what the launches and barriers
    /// cost without their work; no bytes, so not with `--check`).
    #[arg(long, value_name = "nodes|frame|floor", default_value = "nodes", value_parser = parse_timing)]
    pub(crate) timing: Timing,
}

/// Where `bench` writes its timestamps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Timing {
    /// After every op (and every launch of a strip's op).
    Nodes,
    /// Around the whole network only.
    Frame,
    /// Around the whole network, every launch with an empty kernel (the launch floor).
    Floor,
}

fn parse_timing(s: &str) -> Result<Timing, String> {
    match s {
        "nodes" => Ok(Timing::Nodes),
        "frame" => Ok(Timing::Frame),
        "floor" => Ok(Timing::Floor),
        t => Err(format!("`{t}`: expected nodes, frame or floor")),
    }
}

fn parse_strips(s: &str) -> Result<StripChoice, String> {
    match s {
        "auto" => Ok(StripChoice::Auto),
        "off" | "0" => Ok(StripChoice::Off),
        n if n.starts_with("per-token:") => n["per-token:".len()..]
            .parse::<u64>()
            .ok()
            .filter(|&b| b > 0)
            .map(StripChoice::PerToken)
            .ok_or_else(|| format!("`{n}`: expected per-token:N with N > 0 bytes")),
        n => n
            .parse::<u64>()
            .map(StripChoice::Budget)
            .map_err(|_| format!("`{n}`: expected auto, per-token:N, off or a number of bytes")),
    }
}

fn parse_fusion(s: &str) -> Result<Fusion, String> {
    s.parse()
}

pub fn run(args: Args) -> ExitCode {
    let result = match args.feature {
        Network::Nr => run_inner(&args),
        Network::Rr => crate::bench_rr::run(&args),
    };
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("bench: {e}");
            ExitCode::FAILURE
        }
    }
}

pub(crate) fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

/// What the profile table groups by: blocks of one family on one level.
#[derive(PartialEq)]
enum Family {
    Field,
    Window,
    Split,
    Vit,
    VitExit,
}

fn family(b: Block) -> Family {
    match b.kind {
        BlockKind::Pre | BlockKind::Post => Family::Field,
        BlockKind::Window | BlockKind::EncoderLast | BlockKind::DecoderFirst => Family::Window,
        BlockKind::Split512 => Family::Split,
        BlockKind::Vit => Family::Vit,
        BlockKind::VitExit => Family::VitExit,
    }
}

/// Stage of a block for the profile table, from the block table: the run of neighbouring blocks
/// of its family on its level ("enc C64 (5-8)"), the ViT, block 39, or a field block.
fn stage(b: usize) -> String {
    let Some(this) = blocks::block(b) else {
        return "other".into();
    };
    let same = |n: usize| {
        blocks::block(n).is_some_and(|o| family(o) == family(this) && o.level == this.level)
    };
    let first = (0..b).rev().take_while(|&n| same(n)).last().unwrap_or(b);
    let last = (b + 1..BLOCK_COUNT)
        .take_while(|&n| same(n))
        .last()
        .unwrap_or(b);
    let side = if b <= VIT_ENTRY_BLOCK { "enc" } else { "dec" };
    match family(this) {
        Family::Field if this.kind == BlockKind::Pre => format!("block {b} (field)"),
        Family::Field => format!("block {b} + head (field)"),
        Family::Vit => format!("ViT ({first}-{last})"),
        Family::VitExit => format!("ViT exit ({b})"),
        Family::Split => format!("{side} split-{} ({first}-{last})", this.channels),
        Family::Window => format!("{side} C{} ({first}-{last})", this.channels),
    }
}

/// The kind of an op for the per-kind profile (GEMMs by shape) and its multiply-accumulates.
fn op_kind(g: &graph::Graph, n: &graph::Node) -> (String, f64) {
    use graph::Op;
    match &n.op {
        Op::Gemm {
            input,
            mat,
            partition,
            ..
        } => {
            let rows = g.rows(*input);
            let split = partition.map_or(String::new(), |p| format!(" /{p}"));
            (
                format!(
                    "gemm {}x{}{} x{} @{:?}",
                    mat.k, mat.n, split, mat.groups, g.tensors[*input].level
                ),
                (rows * mat.k * mat.n * mat.groups) as f64,
            )
        }
        Op::Adapter { .. } => ("adapter".into(), 0.0),
        Op::Head { .. } => ("head".into(), 0.0),
        Op::Normalize { .. } => ("normalize".into(), 0.0),
        Op::WindowAttention { q, heads, .. } => (
            format!(
                "window attention C{} @{:?}",
                32 * heads,
                g.tensors[*q].level
            ),
            // S = q.k and O = P.V: 2 x 64 keys x 32 channels per token and head.
            (g.rows(*q) * heads * 2 * 64 * 32) as f64,
        ),
        Op::VitAttention { q, heads, .. } => {
            let t = g.rows(*q);
            (
                "vit attention".into(),
                (t * t.div_ceil(64) * 64 * heads * 2 * 32) as f64,
            )
        }
        Op::Pool { .. } | Op::UpMerge { .. } | Op::PostBlend { .. } => ("elementwise".into(), 0.0),
    }
}

/// The per-kind profile's key and MACs of each of the first `nodes` nodes that launches
/// kernels (`None` for a node that runs inside the next one's kernel, `fused(i)`): a fused
/// chain's kinds joined by " + ", with all of its MACs, so the time measured around the launch
/// and the work done in it meet under one key.
fn launch_kinds(
    g: &graph::Graph,
    nodes: usize,
    fused: impl Fn(usize) -> bool,
) -> Vec<Option<(String, f64)>> {
    let mut out = Vec::with_capacity(nodes);
    let mut chain: Vec<(String, f64)> = Vec::new();
    for i in 0..nodes {
        chain.push(op_kind(g, &g.nodes[i]));
        if fused(i) && i + 1 < nodes {
            out.push(None);
            continue;
        }
        let key = chain
            .iter()
            .map(|(k, _)| k.as_str())
            .collect::<Vec<_>>()
            .join(" + ");
        let macs = chain.iter().map(|(_, m)| m).sum();
        out.push(Some((key, macs)));
        chain.clear();
    }
    out
}

/// The class of a per-kind profile key: the kind without its shape and level ("gemm 32x128 x1
/// @Field" -> "gemm", "window attention C32 @L(0)" -> "window attention"), a fused chain's classes
/// joined by " + " ("gemm + gemm" for the FFN pairs). The classes are what #14's profile sets
/// against the frame's FLOPs (docs/tensor-route-targets.md).
fn op_class(kind: &str) -> String {
    kind.split(" + ")
        .map(|part| {
            part.split(' ')
                .take_while(|w| !w.contains(|c: char| c.is_ascii_digit() || c == '@'))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect::<Vec<_>>()
        .join(" + ")
}

/// The per-kind medians (ms) and MACs summed by [`op_class`]: (ms, MACs) per class.
fn by_class<'a>(
    kinds: impl IntoIterator<Item = (&'a str, f64, f64)>,
) -> BTreeMap<String, (f64, f64)> {
    let mut out: BTreeMap<String, (f64, f64)> = BTreeMap::new();
    for (k, ms, m) in kinds {
        let e = out.entry(op_class(k)).or_default();
        e.0 += ms;
        e.1 += m;
    }
    out
}

/// What one route's run leaves for a comparison with another: the boundaries and the head
/// (with --check).
struct RouteRun {
    ok: bool,
    tensors: Option<(Boundaries, Vec<f32>)>,
}

/// Each boundary's name and bytes.
type Boundaries = Vec<(String, Vec<u8>)>;

fn run_inner(args: &Args) -> Result<bool, String> {
    let mut runs = Vec::new();
    for name in &args.route {
        let route: Route = name.parse()?;
        let profiles = match route {
            Route::Tensor => Profiles::H25,
            Route::Exact => Profiles::by_name(&args.profile)
                .ok_or_else(|| format!("unknown profile `{}`", args.profile))?,
            Route::Cpu => return Err("bench times GPU routes: exact or tensor".into()),
        };
        runs.push((route, profiles, run_route(args, route, profiles)?));
    }
    let mut ok = runs.iter().all(|r| r.2.ok);
    if let [(r0, p0, a), (r1, p1, b), ..] = &runs[..] {
        if let (Some((ta, ha)), Some((tb, hb))) = (&a.tensors, &b.tensors) {
            println!("{r1} ({}) against {r0} ({}):", p1.name, p0.name);
            let mut worst = (0.0f64, String::new());
            for ((name, x), (_, y)) in ta.iter().zip(tb) {
                let diff = x.iter().zip(y).filter(|(p, q)| p != q).count();
                let share = diff as f64 / x.len().max(1) as f64;
                println!("  {name:<40} {:8.4} % bytes differ", 100.0 * share);
                if share >= worst.0 {
                    worst = (share, name.clone());
                }
            }
            println!("  worst boundary: {} ({:.4} %)", worst.1, 100.0 * worst.0);
            if !ha.is_empty() {
                println!("  head PSNR (peak 1): {:.2} dB", psnr(ha, hb));
            }
        } else if args.check {
            ok = false;
        }
    }
    Ok(ok)
}

/// PSNR of `b` against `a` with peak 1 (the head is image-space colour); inf when equal.
fn psnr(a: &[f32], b: &[f32]) -> f64 {
    let n = a.len().max(1) as f64;
    let mse = a
        .iter()
        .zip(b)
        .map(|(x, y)| (*x as f64 - *y as f64).powi(2))
        .sum::<f64>()
        / n;
    if mse == 0.0 {
        f64::INFINITY
    } else {
        10.0 * (1.0 / mse).log10()
    }
}

fn run_route(args: &Args, route: Route, profiles: Profiles) -> Result<RouteRun, String> {
    if args.frames == 0 {
        return Err("--frames must be at least 1".into());
    }
    if args.check && args.timing == Timing::Floor {
        return Err("--timing floor runs empty kernels, so it has no bytes to --check".into());
    }
    if let Some(b) = args.blocks {
        if !(1..=BLOCK_COUNT).contains(&b) {
            return Err(format!("--blocks must be 1..={BLOCK_COUNT}"));
        }
    }
    let geometry = Geometry::new(args.width, args.height).map_err(|e| e.to_string())?;
    let _tmp;
    let model_dir = match &args.model {
        Some(d) => d.clone(),
        None => {
            let t =
                std::env::temp_dir().join(format!("openngx-bench-model-{}", std::process::id()));
            synth::write_model(&t, 0, &synth::SynthParams::DEFAULT, true)
                .map_err(|e| e.to_string())?;
            _tmp = TempDir(t.clone());
            t
        }
    };
    let model =
        Model::load(&model_dir, LoadOptions { verify_sha: false }).map_err(|e| e.to_string())?;
    let graph = graph::build(&geometry);
    let features = synthetic_features(graph.rows(graph.features));
    let opts = NetworkOptions {
        route,
        profiles,
        keep: if args.check {
            Keep::Boundaries
        } else {
            Keep::Head
        },
        readback: args.check,
        timestamps: args.timing == Timing::Nodes,
        max_binding_range: args.max_binding_range,
        strips: args.strips,
        fusion: args.fusion,
        // A feature's plan: its frame pipeline rewrites the input every frame, so the workspace
        // reuses the input's bytes once the adapter has read them (135 MiB less at 1080p; the
        // strips there are the same). The bench restores the input from a copy of its own
        // before each frame.
        input_per_frame: true,
        ..NetworkOptions::default()
    };
    let mut gpu = GpuNet::open_with(
        &model,
        graph.clone(),
        args.device,
        opts,
        args.pipeline_stats,
    )?;
    // The input's copy, outside the feature's memory (a feature's prepare pass writes the input
    // from the caller's images instead), copied into the workspace before every frame, before
    // the frame's first timestamp.
    let input_bytes: Vec<u8> = features.iter().flat_map(|x| x.to_le_bytes()).collect();
    let input_len = input_bytes.len() as u64;
    let input_copy = GpuBuffer::new(gpu.ctx(), "bench input", input_len, MemoryKind::DeviceLocal)
        .map_err(|e| e.to_string())?;
    gpu.submit("uploading the features", |_, rec, batch| {
        batch
            .upload(rec, &input_copy, 0, &input_bytes)
            .map_err(|e| e.to_string())
    })?;
    drop(input_bytes);
    let input_at = gpu.net.tensor(graph.features);

    let mut totals = Vec::new();
    let mut per_stage: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    let mut per_kind: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    let by_label: HashMap<&str, usize> = graph
        .nodes
        .iter()
        .enumerate()
        .map(|(i, n)| (n.label.as_str(), i))
        .collect();
    // The timed prefix of the schedule (nodes are in block order).
    let nodes = match args.blocks {
        Some(b) => graph.nodes.iter().take_while(|n| n.block < b).count(),
        None => graph.nodes.len(),
    };
    // Each launching node's kind: its own, or its fused chain's (a fused node has no timestamp
    // of its own; its time is in the node that launches it, and so are its MACs here).
    let kinds = launch_kinds(&graph, nodes, |i| gpu.net.fusions().runs_inside_next(i));
    let mut macs: BTreeMap<String, f64> = BTreeMap::new();
    for (k, m) in kinds.iter().flatten() {
        *macs.entry(k.clone()).or_default() += m;
    }
    let partial = nodes < graph.nodes.len();
    // Launches of the timed nodes, and how many nodes run in row bands.
    let launches = gpu.net.launches();
    let strips = gpu.net.strips();
    let split_nodes = launches[..nodes]
        .iter()
        .zip(&strips.of_node)
        .filter(|(&l, s)| l > 1 && s.is_none())
        .count();
    let strip_count = strips
        .strips
        .iter()
        .filter(|s| s.nodes.end <= nodes)
        .count();
    let strip_bands: usize = strips
        .strips
        .iter()
        .filter(|s| s.nodes.end <= nodes)
        .map(|s| s.rows.len())
        .sum();
    let fused = (0..nodes)
        .filter(|&i| gpu.net.fusions().runs_inside_next(i))
        .count();
    // `--timing frame`: two timestamps of the bench's own around the network.
    let mut frame_pool = match args.timing {
        Timing::Frame | Timing::Floor => {
            TimestampPool::new(gpu.ctx(), 2).map_err(|e| e.to_string())?
        }
        Timing::Nodes => None,
    };
    let floor = args.timing == Timing::Floor;
    let mut dispatches = 0;
    for i in 0..args.warmup + args.frames {
        let t = Instant::now();
        let pool = &mut frame_pool;
        dispatches = gpu.submit("the network", |net, rec, _| {
            // Earlier frames' reads of these bytes are done before the copy writes them.
            rec.compute_to_transfer();
            rec.copy(input_copy.binding(), input_at, input_len)
                .map_err(|e| e.to_string())?;
            rec.transfer_to_compute();
            if let Some(p) = pool.as_mut() {
                p.reset(rec);
                p.mark(rec, "start").map_err(|e| e.to_string())?;
            }
            if floor {
                net.record_launch_floor(rec, 0..nodes)
            } else {
                net.record_nodes(rec, 0..nodes)
            }
            .map_err(|e| e.to_string())?;
            if let Some(p) = pool.as_mut() {
                p.mark(rec, "frame").map_err(|e| e.to_string())?;
            }
            let count = rec.dispatch_count();
            if partial && args.check {
                net.record_readback(rec).map_err(|e| e.to_string())?;
            }
            Ok(count)
        })?;
        let wall = t.elapsed().as_secs_f64() * 1e3;
        if i < args.warmup {
            continue;
        }
        let times = match &frame_pool {
            Some(p) => p.read(),
            None => gpu.net.timings(),
        }
        .map_err(|e| e.to_string())?
        .unwrap_or_default();
        let total: f64 = times.iter().map(|s| s.ms).sum();
        totals.push(if times.is_empty() { wall } else { total });
        let mut frame_stage: BTreeMap<String, f64> = BTreeMap::new();
        let mut frame_kind: BTreeMap<String, f64> = BTreeMap::new();
        for s in &times {
            if let Some(&i) = by_label.get(s.label.as_str()) {
                *frame_stage.entry(stage(graph.nodes[i].block)).or_default() += s.ms;
                let kind = match kinds.get(i) {
                    Some(Some((k, _))) => k.clone(),
                    _ => op_kind(&graph, &graph.nodes[i]).0,
                };
                *frame_kind.entry(kind).or_default() += s.ms;
            }
        }
        for (k, v) in frame_stage {
            per_stage.entry(k).or_default().push(v);
        }
        for (k, v) in frame_kind {
            per_kind.entry(k).or_default().push(v);
        }
    }
    let min = totals.iter().cloned().fold(f64::INFINITY, f64::min);
    let med = median(&mut totals.clone());
    let (weights_bytes, workspace_bytes) = (gpu.weights.bytes(), gpu.net.workspace_bytes());
    let mem = weights_bytes + workspace_bytes;

    let mut exact = None;
    let mut tensors = None;
    let mut compared = 0;
    if args.check {
        let t = Instant::now();
        let cpu = if partial {
            reference::Output {
                boundaries: reference::run_prefix(&graph, &model, &features, profiles, nodes)
                    .map_err(|e| e.to_string())?,
                head: Vec::new(),
            }
        } else {
            reference::run(&graph, &model, &features, profiles).map_err(|e| e.to_string())?
        };
        let cpu_s = t.elapsed().as_secs_f64();
        let mut bad = Vec::new();
        let mut kept = Vec::new();
        compared = cpu.boundaries.len();
        for (name, want) in &cpu.boundaries {
            let t = graph
                .boundaries
                .iter()
                .find(|b| &b.0 == name)
                .map(|b| b.1)
                .ok_or("boundary")?;
            let got = gpu.net.read_tensor(t).map_err(|e| e.to_string())?;
            if &got != want {
                let diff = got.iter().zip(want).filter(|(a, b)| a != b).count();
                bad.push(format!("{name} ({diff} bytes differ)"));
            }
            kept.push((name.clone(), got));
        }
        // A partial run has no head.
        let head = if partial {
            Vec::new()
        } else {
            gpu.net.read_head().map_err(|e| e.to_string())?
        };
        if head
            .iter()
            .map(|x| x.to_bits())
            .ne(cpu.head.iter().map(|x| x.to_bits()))
        {
            bad.push("head".into());
        }
        tensors = Some((kept, head));
        eprintln!("CPU reference: {cpu_s:.1} s");
        exact = Some(bad);
    }

    let device = gpu.device_name();
    let stats = args
        .pipeline_stats
        .then(|| gpu.ctx().pipeline_statistics().map_err(|e| e.to_string()));
    // The kinds summed per class (#14's profile by op kind against the frame's FLOPs).
    let classes = by_class(
        per_kind
            .iter_mut()
            .map(|(k, v)| (k.as_str(), median(v), macs.get(k).copied().unwrap_or(0.0))),
    );
    if args.json {
        let stages: BTreeMap<&str, f64> = per_stage
            .iter_mut()
            .map(|(k, v)| (k.as_str(), median(v)))
            .collect();
        let classes: BTreeMap<&str, serde_json::Value> = classes
            .iter()
            .map(|(c, (ms, m))| (c.as_str(), serde_json::json!({"ms": ms, "macs": m})))
            .collect();
        let kinds: BTreeMap<&str, serde_json::Value> = per_kind
            .iter_mut()
            .map(|(k, v)| {
                let m = macs.get(k).copied().unwrap_or(0.0);
                (k.as_str(), serde_json::json!({"ms": median(v), "macs": m}))
            })
            .collect();
        let j = serde_json::json!({
            "device": device, "width": args.width, "height": args.height,
            "field": [geometry.field.w, geometry.field.h], "profile": profiles.name,
            "route": route.name(), "route_detail": gpu.net.route().describe(),
            "frames": args.frames, "launch_floor": floor, "blocks": args.blocks.unwrap_or(BLOCK_COUNT), "median_ms": med, "min_ms": min, "dispatches": dispatches,
            "nodes": nodes, "launches": launches[..nodes].iter().sum::<usize>(), "split_nodes": split_nodes,
            "max_binding_range": gpu.net.limits().max_range, "compared_boundaries": compared,
            "strips": strip_count, "strip_bands": strip_bands, "fused": fused,
            "weights_bytes": weights_bytes, "workspace_bytes": workspace_bytes, "input_copy_bytes": input_len,
            "weights_widened_bytes": gpu.weights.widened_bytes(),
            "stages_median_ms": stages, "op_kinds": kinds, "op_classes": classes,
            "timed_macs": macs.values().sum::<f64>(),
            "exact": exact.as_ref().map(|b| b.is_empty()),
            "mismatches": exact,
            "pipeline_stats": stats.as_ref().map(stats_json),
        });
        println!("{j}");
    } else {
        println!(
            "{device}: {}x{} (field {}x{}), route {}, profile {}, {} dispatches",
            args.width,
            args.height,
            geometry.field.w,
            geometry.field.h,
            gpu.net.route().describe(),
            profiles.name,
            dispatches
        );
        if let Some(b) = args.blocks {
            println!(
                "timing only blocks 0-{} ({nodes} of {} ops)",
                b - 1,
                graph.nodes.len()
            );
        }
        if strip_count > 0 {
            println!(
                "{strip_count} window blocks run as strips, {strip_bands} bands in all (band-sized \
                 intermediates)"
            );
        }
        if fused > 0 {
            println!("{fused} ops run inside the next op's kernel (fused)");
        }
        if split_nodes > 0 {
            println!(
                "{split_nodes} of {nodes} ops in row bands ({} launches) within a binding range \
                 of {} bytes",
                launches[..nodes].iter().sum::<usize>(),
                gpu.net.limits().max_range
            );
        }
        if floor {
            println!(
                "launch floor (the same {dispatches} launches and barriers, empty kernels): \
                 median {med:.2} ms, min {min:.2} ms over {} frames",
                args.frames
            );
        } else {
            println!(
                "GPU time per frame: median {med:.2} ms, min {min:.2} ms over {} frames",
                args.frames
            );
        }
        println!(
            "device memory: weights {:.1} MiB + workspace {:.1} MiB = {:.1} MiB (the bench's copy \
             of the input, {:.1} MiB, besides)",
            weights_bytes as f64 / 1048576.0,
            workspace_bytes as f64 / 1048576.0,
            mem as f64 / 1048576.0,
            input_len as f64 / 1048576.0
        );
        for (k, v) in per_stage.iter_mut() {
            println!("  {k:<26} {:9.2} ms", median(v));
        }
        if !per_kind.is_empty() {
            println!("per op kind (median ms, MACs, MAC/s):");
        }
        for (k, v) in per_kind.iter_mut() {
            let ms = median(v);
            let m = macs.get(k).copied().unwrap_or(0.0);
            if m > 0.0 {
                println!(
                    "  {k:<40} {ms:9.2} ms {m:10.3e} MAC {:9.3e} MAC/s",
                    m / (ms * 1e-3)
                );
            } else {
                println!("  {k:<40} {ms:9.2} ms");
            }
        }
        if !per_kind.is_empty() {
            println!("per op class (the kinds' medians summed, MACs, TFLOP/s):");
            for (c, (ms, m)) in &classes {
                if *m > 0.0 {
                    println!(
                        "  {c:<40} {ms:9.2} ms {m:10.3e} MAC {:8.2} TFLOP/s",
                        2.0 * m / (ms * 1e-3) / 1e12
                    );
                } else {
                    println!("  {c:<40} {ms:9.2} ms");
                }
            }
            let total: f64 = macs.values().sum();
            println!(
                "  timed ops: {total:.3e} MACs ({:.3} TFLOP), {:.2} TFLOP/s at this run's median \
                 of {med:.2} ms",
                2.0 * total / 1e12,
                2.0 * total / (med * 1e-3) / 1e12
            );
        }
        if let Some(stats) = &stats {
            print_pipeline_stats(stats);
        }
        if let Some(bad) = &exact {
            if bad.is_empty() && partial {
                println!(
                    "bit-exact: the {compared} boundaries of blocks 0-{} equal the CPU reference",
                    args.blocks.unwrap_or(BLOCK_COUNT) - 1
                );
            } else if bad.is_empty() {
                println!("bit-exact: 75 boundaries and the head equal the CPU reference");
            } else {
                println!("MISMATCH against the CPU reference: {}", bad.join(", "));
            }
        }
    }
    Ok(RouteRun {
        ok: exact.is_none_or(|b| b.is_empty()),
        tensors,
    })
}

/// One line per kernel: shader, specialization constants, then the driver's statistics.
fn print_pipeline_stats(stats: &Result<Vec<PipelineStatistics>, String>) {
    match stats {
        Ok(list) => {
            println!("pipeline statistics (driver; spec constants as id=value):");
            for p in list {
                let spec: Vec<String> = p
                    .spec
                    .iter()
                    .map(|s| format!("{}={}", s.id, s.bits))
                    .collect();
                let st: Vec<String> = p.stats.iter().map(|(k, v)| format!("{k} {v}")).collect();
                println!("  {} [{}]: {}", p.shader, spec.join(" "), st.join("; "));
            }
        }
        Err(e) => println!("{e}"),
    }
}

fn stats_json(stats: &Result<Vec<PipelineStatistics>, String>) -> serde_json::Value {
    match stats {
        Ok(list) => serde_json::Value::Array(
            list.iter()
                .map(|p| {
                    let spec: BTreeMap<String, u32> =
                        p.spec.iter().map(|s| (s.id.to_string(), s.bits)).collect();
                    let st: BTreeMap<&str, &str> = p
                        .stats
                        .iter()
                        .map(|(k, v)| (k.as_str(), v.as_str()))
                        .collect();
                    serde_json::json!({"shader": p.shader, "spec": spec, "stats": st})
                })
                .collect(),
        ),
        Err(e) => serde_json::json!({ "unavailable": e }),
    }
}

/// Removes a temporary directory on drop.
struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[cfg(test)]
mod tests {
    use super::{
        by_class, launch_kinds, op_class, op_kind, stage, Args, Fusion, StripChoice, Timing,
    };
    use clap::Parser;
    use openngx::nr::geometry::Geometry;
    use openngx::nr::graph;

    /// The classes drop shapes and levels and keep a fused chain's parts; the sums per class
    /// keep every kind's time and MACs once.
    #[test]
    fn op_classes_sum_the_kinds() {
        for (kind, class) in [
            ("gemm 32x128 x1 @Field", "gemm"),
            ("gemm 1024x1024 /256 x1 @L(5)", "gemm"),
            ("gemm 32x128 x1 @L(0) + gemm 128x32 x1 @L(0)", "gemm + gemm"),
            ("window attention C32 @Field", "window attention"),
            ("window attention C512 @L(4)", "window attention"),
            ("vit attention", "vit attention"),
            ("normalize", "normalize"),
            ("gemm 32x96 x1 @L(0) + normalize", "gemm + normalize"),
            ("adapter", "adapter"),
        ] {
            assert_eq!(op_class(kind), class, "{kind}");
        }
        let classes = by_class([
            ("gemm 32x32 x1 @Field", 1.5, 10.0),
            ("gemm 64x64 x1 @L(1)", 0.25, 5.0),
            ("window attention C32 @Field", 2.0, 7.0),
            ("window attention C64 @L(1)", 1.0, 3.0),
            ("normalize", 0.5, 0.0),
        ]);
        assert_eq!(classes.len(), 3);
        assert_eq!(classes["gemm"], (1.75, 15.0));
        assert_eq!(classes["window attention"], (3.0, 10.0));
        assert_eq!(classes["normalize"], (0.5, 0.0));
    }

    /// A fused chain's time and work meet under one key: a C = 128 block's `ffn1` run inside
    /// its `ffn2` has no key of its own, the launch's key names both and has both MACs (rows x
    /// 4 experts x (128 x 128 + 128 x 32)); unfused nodes keep their own; every MAC of the
    /// schedule is counted once; a fused last node is counted as a launch.
    #[test]
    fn a_fused_chain_is_one_profile_key_with_all_its_macs() {
        let geometry = Geometry::new(64, 64).expect("geometry");
        let g = graph::build(&geometry);
        let at = |label: &str| match g.nodes.iter().position(|n| n.label == label) {
            Some(i) => i,
            None => panic!("no node `{label}`"),
        };
        let (ffn1, ffn2) = (at("block-9.ffn1"), at("block-9.ffn2"));
        assert_eq!(ffn2, ffn1 + 1);
        let n = g.nodes.len();
        let kinds = launch_kinds(&g, n, |i| i == ffn1 || i == n - 1);
        assert!(kinds[ffn1].is_none());
        let (key, macs) = kinds[ffn2].clone().expect("the launch");
        let (k1, m1) = op_kind(&g, &g.nodes[ffn1]);
        let (k2, m2) = op_kind(&g, &g.nodes[ffn2]);
        assert_eq!(key, format!("{k1} + {k2}"));
        let graph::Op::Gemm { input, .. } = &g.nodes[ffn1].op else {
            panic!("ffn1 is not a GEMM");
        };
        let rows = g.rows(*input) as f64;
        assert!(rows > 0.0);
        assert_eq!(macs, rows * 4.0 * (128.0 * 128.0 + 128.0 * 32.0));
        assert_eq!(macs, m1 + m2);
        for i in (0..n).filter(|&i| i != ffn1 && i != ffn2) {
            assert_eq!(kinds[i], Some(op_kind(&g, &g.nodes[i])), "node {i}");
        }
        let all: f64 = (0..n).map(|i| op_kind(&g, &g.nodes[i]).1).sum();
        let counted: f64 = kinds.iter().flatten().map(|(_, m)| m).sum();
        assert_eq!(counted, all);
    }

    /// The bench's flags as the command line gives them.
    #[derive(Parser)]
    struct Line {
        #[command(flatten)]
        args: Args,
    }

    /// One flag of the bench: its default, each accepted value, each refused one, and the flag
    /// without a value (refused).
    fn check_flag<T: PartialEq + std::fmt::Debug>(
        flag: &str,
        pick: fn(Args) -> T,
        default: T,
        accepted: &[(&str, T)],
        refused: &[&str],
    ) {
        let parse = |extra: &[&str]| {
            Line::try_parse_from(["bench"].iter().chain(extra).copied()).map(|l| pick(l.args))
        };
        assert_eq!(parse(&[]).expect("default"), default, "{flag}'s default");
        for (value, want) in accepted {
            assert_eq!(parse(&[flag, value]).expect(value), *want, "{flag} {value}");
        }
        for value in refused {
            assert!(parse(&[flag, value]).is_err(), "{flag} {value} is refused");
        }
        assert!(parse(&[flag]).is_err(), "{flag} without a value is refused");
    }

    #[test]
    fn the_fusion_flag_takes_its_value() {
        assert_eq!(Fusion::default(), Fusion::Ffn);
        check_flag(
            "--fusion",
            |a| a.fusion,
            Fusion::Ffn,
            &[
                ("off", Fusion::Off),
                ("gemm", Fusion::NormInGemm),
                ("attention", Fusion::NormInAttention),
                ("ffn", Fusion::Ffn),
                ("block", Fusion::Block),
                ("ffn-gemm", Fusion::FfnNormInGemm),
            ],
            &["on"],
        );
    }

    #[test]
    fn the_strips_flag_takes_its_value() {
        check_flag(
            "--strips",
            |a| a.strips,
            StripChoice::Auto,
            &[
                ("off", StripChoice::Off),
                ("70778880", StripChoice::Budget(70778880)),
                ("per-token:48", StripChoice::PerToken(48)),
            ],
            &[
                "per-token:0",
                "per-token:",
                "per-token:x",
                "per-token",
                "-1",
            ],
        );
    }

    #[test]
    fn the_timing_flag_takes_its_value() {
        check_flag(
            "--timing",
            |a| a.timing,
            Timing::Nodes,
            &[
                ("frame", Timing::Frame),
                ("nodes", Timing::Nodes),
                ("floor", Timing::Floor),
            ],
            &["ops"],
        );
    }

    #[test]
    fn stage_labels_follow_the_block_table() {
        let want = |b: usize| match b {
            0 => "block 0 (field)",
            1..=4 => "enc C32 (1-4)",
            5..=8 => "enc C64 (5-8)",
            9..=14 => "enc C128 (9-14)",
            15..=22 => "enc C256 (15-22)",
            23..=30 => "enc split-512 (23-30)",
            31..=38 => "ViT (31-38)",
            39 => "ViT exit (39)",
            40..=47 => "dec split-512 (40-47)",
            48..=55 => "dec C256 (48-55)",
            56..=61 => "dec C128 (56-61)",
            62..=65 => "dec C64 (62-65)",
            66..=69 => "dec C32 (66-69)",
            70 => "block 70 + head (field)",
            _ => "other",
        };
        for b in 0..80 {
            assert_eq!(stage(b), want(b), "block {b}");
        }
    }
}
