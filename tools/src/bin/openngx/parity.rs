//! `openngx parity --model DIR --fixture DIR [--repeat N] [--dump DIR] [--route cpu|gpu]
//! [--no-verify]`: validate a captured-frame fixture strictly, run the network on its input and
//! compare boundaries / head / output with the verdicts of spec nr-network §4.2.
//! `--from-dump DIR` compares what an earlier `--dump` (from any route or machine) holds instead
//! of running; no model is needed then.
//!
//! `--route gpu` runs whole frames the way the NGX feature does (prepare -> network -> compose
//! with the temporal state, `gpu_frames`) on a device the tool opens, so every frame of a
//! sequence fixture is checked: frame 0 against its boundaries / head / output, each later
//! frame against its output (and head, when recorded). Its `--repeat` runs (3 by default) must
//! all give the same bytes. The CPU route checks frame 0 only.
//!
//! `--feature rr` replays a Ray Reconstruction fixture on RR's exact GPU route instead
//! (`parity_rr`; `--model`, `--fixture` and `--no-verify` only).
//!
//! Exit status: 0 when every check is bit-exact, 1 when any check fails (sign of zero and within
//! one code included), 2 when the fixture, the model or the route cannot be used (nothing ran or
//! the run failed).

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use openngx::model::{LoadOptions, Model};
use openngx::nr::frame::{FrameConstants, FrameParams, FrameState};
use openngx::nr::graph;
use openngx::nr::reference;
use openngx::numerics::{f16, Profiles};
use openngx_tools::compare::{self, FixtureInput, Produced};
use openngx_tools::fixture::{bytes_to_f32, f32_to_bytes, Fixture, FixtureError};

use crate::gpu_frames::{FrameIn, FrameOut, GpuFrames};
use crate::gpu_net::Progress;
use crate::model_out::Network;
use openngx::feature::Route;

#[derive(clap::Args)]
pub struct Args {
    /// The network: `nr` (DLSS-NR) or `rr` (Ray Reconstruction: the fixture of
    /// `reference --feature rr`, replayed on RR's exact GPU route).
    #[arg(long, value_enum, default_value = "nr")]
    feature: Network,
    /// Model directory (manifest.json + model/).
    #[arg(long, required_unless_present = "from_dump")]
    model: Option<PathBuf>,
    /// Fixture directory (manifest.json + references).
    #[arg(long)]
    fixture: PathBuf,
    /// Runs of the network whose head and output must all be equal (default: 1 on the CPU,
    /// 3 on the GPU).
    #[arg(long)]
    repeat: Option<usize>,
    /// Write what the run produced here: `<boundary>.u8`, `features.f32`, `head.f32`, `output.f32`
    /// (and `frames/NNN/{head,output}.f32` for the later frames of a sequence on the GPU).
    #[arg(long)]
    dump: Option<PathBuf>,
    /// Which executor runs the network: `cpu` (the CPU reference, in the fixture's MMA
    /// profile) or `exact` (the GPU exact route; `gpu` is accepted for it too).
    #[arg(long, default_value = "cpu")]
    route: Route,
    /// Skip the SHA-256 check of the model's stage files.
    #[arg(long)]
    no_verify: bool,
    /// Compare the results an earlier `--dump` wrote to DIR instead of running the network.
    #[arg(long, conflicts_with_all = ["model", "dump", "repeat"])]
    from_dump: Option<PathBuf>,
}

const EXIT_FAIL: u8 = 1;
const EXIT_UNUSABLE: u8 = 2;

fn unusable(msg: impl std::fmt::Display) -> ExitCode {
    eprintln!("error: {msg}");
    ExitCode::from(EXIT_UNUSABLE)
}

pub fn run(args: Args) -> ExitCode {
    if args.feature == Network::Rr {
        if args.repeat.is_some() || args.dump.is_some() || args.from_dump.is_some() {
            return unusable("--feature rr takes --model, --fixture and --no-verify only");
        }
        return match &args.model {
            Some(m) => crate::parity_rr::run(m, &args.fixture, args.no_verify),
            None => unusable("--feature rr needs --model"),
        };
    }
    // Everything that can be refused is refused before the network runs.
    let fx = match Fixture::load(&args.fixture) {
        Ok(f) => f,
        Err(e) => return unusable(format!("fixture refused: {e}")),
    };
    let runs = match &args.from_dump {
        Some(dir) => match compare::read_dump(dir, &fx.geometry).and_then(|p| {
            let n = fx.manifest.sequence.as_ref().map_or(0, |s| s.frames.len());
            Ok((p, read_frame_dumps(dir, n)?))
        }) {
            Ok((p, later)) => {
                println!(
                    "fixture {}: comparing the dump in {}",
                    args.fixture.display(),
                    dir.display()
                );
                Runs {
                    produced: p,
                    features: None,
                    later,
                    errors: Vec::new(),
                }
            }
            Err(e) => return unusable(format!("--from-dump: {e}")),
        },
        None => match run_network(&args, &fx) {
            Ok(r) => r,
            Err(msg) => return unusable(msg),
        },
    };

    let mut report = match compare::compare_fixture(&fx, &runs.produced) {
        Ok(r) => r,
        Err(e) => return unusable(format!("fixture: {e}")),
    };
    compare_sequence(&fx, &runs.later, &mut report);
    report.errors.extend(runs.errors);
    for c in &report.comparisons {
        println!("{c}");
    }
    for (name, why) in &report.omitted {
        println!("{name}: omitted ({why})");
    }
    for e in &report.errors {
        println!("error: {e}");
    }
    println!("{}", report.summary());
    if report.all_exact() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_FAIL)
    }
}

/// What the runs produced: frame 0 (compared with the fixture's references), the later frames of
/// a sequence, and the differences between runs.
struct Runs {
    produced: Produced,
    /// Frame 0's network input as the route made it (`None`: the fixture input's).
    features: Option<Vec<f32>>,
    later: Vec<FrameOut>,
    errors: Vec<String>,
}

/// Run the network on the fixture's input `--repeat` times: the first run's results and the
/// differences of later runs from it, or why nothing could run.
fn run_network(args: &Args, fx: &Fixture) -> Result<Runs, String> {
    let repeat = args.repeat.unwrap_or(match args.route {
        Route::Cpu => 1,
        Route::Exact => 3,
        Route::Tensor => {
            return Err("parity checks the cpu and exact routes; the tensor route is checked by `bench --route tensor --check`".into())
        }
    });
    if repeat == 0 {
        return Err("--repeat must be at least 1".into());
    }
    let Some(model_dir) = &args.model else {
        return Err("--model is required to run the network".into());
    };
    let start = Instant::now();
    let opts = LoadOptions {
        verify_sha: !args.no_verify,
    };
    let model = Model::load(model_dir, opts).map_err(|e| format!("model refused: {e}"))?;
    let blend_scale = f16::to_f32(model.blend_scale());
    let input =
        compare::fixture_input(fx, blend_scale).map_err(|e| format!("fixture refused: {e}"))?;
    // Later frames of a sequence are planned (files read, parameters validated) before anything
    // runs; only the GPU route runs them.
    let frames = match args.route {
        Route::Exact | Route::Tensor => plan_frames(fx, &input, blend_scale)?,
        Route::Cpu => Vec::new(),
    };
    let g = &fx.geometry;
    println!(
        "fixture {}: {}x{} (field {}x{}), checks {}, features from {}",
        args.fixture.display(),
        g.valid.w,
        g.valid.h,
        g.field.w,
        g.field.h,
        fx.manifest.checks.join(","),
        input.source
    );
    // The references were made in the fixture's MMA profile (native f13/f24 unless it says).
    let profiles = match &fx.manifest.profile {
        None => Profiles::NATIVE,
        Some(p) => Profiles::by_name(p)
            .ok_or_else(|| format!("fixture refused: unknown profile `{p}` (f13, h25)"))?,
    };
    if let Some(seq) = &fx.manifest.sequence {
        if args.route == Route::Cpu {
            println!(
                "note: the fixture's {} later sequence frame(s) are not checked by the CPU route (frame 0 only; --route gpu runs them all)",
                seq.frames.len()
            );
        }
    }
    println!(
        "model {} loaded in {:.2} s",
        model_dir.display(),
        start.elapsed().as_secs_f64()
    );

    let graph = graph::build(g);
    let ops = graph.nodes.len();
    let mut gpu = match args.route {
        Route::Exact | Route::Tensor => {
            Some(GpuFrames::new(&model, graph.clone(), profiles, None)?)
        }
        Route::Cpu => None,
    };
    let mut first: Option<Runs> = None;
    let mut errors = Vec::new();
    for run in 1..=repeat {
        let t = Instant::now();
        let (produced, features, later, route) = match gpu.as_mut() {
            None => {
                let out = reference::run(&graph, &model, &input.features, profiles)
                    .map_err(|e| format!("route cpu: run {run} failed: {e}"))?;
                let output = compare::compose_output(&input, &out.head)
                    .map_err(|e| format!("compose: {e}"))?;
                let p = Produced {
                    boundaries: out.boundaries,
                    head: out.head,
                    output,
                };
                (p, None, Vec::new(), "route cpu".to_string())
            }
            Some(gpu) => {
                let mut outs = Vec::with_capacity(1 + frames.len());
                outs.push(gpu.run(&frame0(&input))?);
                for (n, f) in frames.iter().enumerate() {
                    let progress = Progress::new(format!("run {run}: frame {}", n + 1));
                    outs.push(gpu.run(&f.frame_in())?);
                    progress.done();
                }
                let mut outs = outs.into_iter();
                let f0 = outs.next().ok_or("no frame")?;
                let p = Produced {
                    boundaries: f0.boundaries,
                    head: f0.head.unwrap_or_default(),
                    output: f0.output,
                };
                let route = format!("route gpu ({})", gpu.gpu.device_name());
                (p, f0.features, outs.collect(), route)
            }
        };
        println!(
            "run {run}/{repeat}: {route} (profile {}), {} frame(s), {ops} graph ops, {:.2} s",
            profiles.name,
            1 + later.len(),
            t.elapsed().as_secs_f64()
        );
        match &first {
            None => {
                first = Some(Runs {
                    produced,
                    features,
                    later,
                    errors: Vec::new(),
                })
            }
            Some(f) => {
                let bits = |h: &[f32]| h.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                let p = &f.produced;
                let same = bits(&p.head) == bits(&produced.head)
                    && p.output == produced.output
                    && p.boundaries == produced.boundaries
                    && f.later.len() == later.len()
                    && f.later.iter().zip(&later).all(|(a, b)| {
                        a.head.as_deref().map(bits) == b.head.as_deref().map(bits)
                            && a.output == b.output
                    });
                if !same {
                    errors.push(format!(
                        "run {run}: results differ from run 1 (the route is not deterministic)"
                    ));
                }
            }
        }
    }
    let mut runs = first.ok_or("no run")?;
    runs.errors = errors;
    if let Some(dir) = &args.dump {
        let features = runs.features.as_ref().unwrap_or(&input.features);
        compare::write_dump(dir, features, &runs.produced)
            .map_err(|e| format!("--dump {}: {e}", dir.display()))?;
        for (n, f) in runs.later.iter().enumerate() {
            write_frame_dump(&dir.join(format!("frames/{:03}", n + 1)), f)
                .map_err(|e| format!("--dump {}: {e}", dir.display()))?;
        }
        println!("dumped to {}", dir.display());
    }
    Ok(runs)
}

/// A later frame of a sequence, ready to run.
struct PlannedFrame {
    constants: FrameConstants,
    read_slot: usize,
    proxy: Vec<[f32; 4]>,
    motion: Vec<[f32; 2]>,
}

impl PlannedFrame {
    fn frame_in(&self) -> FrameIn<'_> {
        FrameIn {
            constants: Some(self.constants),
            read_slot: self.read_slot,
            proxy: &self.proxy,
            motion: Some(&self.motion),
            features: None,
        }
    }
}

/// Frame 0 of the fixture: its first-frame constants (no history, the manifest's seed), the
/// given features when it has `inputFeatures` (the GPU's prepare pass otherwise).
fn frame0(input: &FixtureInput) -> FrameIn<'_> {
    FrameIn {
        constants: input.constants,
        read_slot: 0,
        proxy: input.proxy.as_deref().unwrap_or(&[]),
        motion: input.motion.as_deref(),
        features: (input.source != "proxy").then_some(&input.features[..]),
    }
}

/// The later frames of a sequence fixture, with the temporal state carried from frame 0 by the
/// feature's rules (`FrameState`: seed + 1 per frame, history from the previous output, Reset,
/// disabled frames).
fn plan_frames(
    fx: &Fixture,
    input: &FixtureInput,
    blend_scale: f32,
) -> Result<Vec<PlannedFrame>, String> {
    let Some(seq) = &fx.manifest.sequence else {
        return Ok(Vec::new());
    };
    let (Some(p), Some(c0)) = (&fx.manifest.proxy, &input.constants) else {
        return Err("fixture refused: a sequence needs a proxy for frame 0".into());
    };
    let g = &fx.geometry;
    let mut state = FrameState {
        seed: p.seed,
        ..FrameState::default()
    };
    let setup0 = state.begin(&FrameParams::default());
    if (setup0.seed, setup0.history_valid as u32) != (c0.seed, c0.history_valid) {
        return Err("frame 0 constants disagree with the temporal state".into());
    }
    state.end(&setup0);
    let pixels = |v: Vec<f32>| -> Vec<[f32; 4]> {
        v.chunks_exact(4)
            .map(|c| [c[0], c[1], c[2], c[3]])
            .collect()
    };
    let refused = |n: usize, e: String| format!("fixture refused: sequence frame {n}: {e}");
    let mut out = Vec::new();
    for (i, f) in seq.frames.iter().enumerate() {
        let n = i + 1;
        let params = f.parameters.to_frame_params();
        params
            .validate(g.valid.w, g.valid.h)
            .map_err(|e| refused(n, e.to_string()))?;
        let setup = state.begin(&params);
        let constants = FrameConstants::new(g, &params, &setup, blend_scale, true);
        state.end(&setup);
        let proxy = pixels(
            fx.read_f32(&f.proxy)
                .map_err(|e| refused(n, e.to_string()))?,
        );
        let motion = fx
            .read_f32(&f.motion)
            .map_err(|e| refused(n, e.to_string()))?
            .chunks_exact(2)
            .map(|c| [c[0], c[1]])
            .collect();
        out.push(PlannedFrame {
            constants,
            read_slot: setup.read_slot,
            proxy,
            motion,
        });
    }
    Ok(out)
}

/// Compare the later frames of a sequence with the fixture's references (output, and the head
/// where the fixture has one).
fn compare_sequence(fx: &Fixture, later: &[FrameOut], report: &mut compare::Report) {
    let Some(seq) = &fx.manifest.sequence else {
        return;
    };
    let g = &fx.geometry;
    for (i, f) in seq.frames.iter().enumerate() {
        let n = i + 1;
        let Some(got) = later.get(i) else {
            report.omitted.push((
                format!("frame {n}"),
                "not run (the CPU route and dumps without frames/ hold frame 0 only)".into(),
            ));
            continue;
        };
        let valid = compare::Shape {
            width: g.valid.w as usize,
            height: g.valid.h as usize,
            channels: 4,
        };
        let output: Option<Vec<f32>> = got
            .output
            .as_ref()
            .map(|o| o.iter().flatten().map(|&h| f16::to_f32(h)).collect());
        let mut check = |name: String, shape, got: Option<&[f32]>, file: &str| {
            let result = match (got, fx.read_f32(file)) {
                (_, Err(e)) => Err(e.to_string()),
                (None, _) => Err(format!("{name}: the run produced none")),
                (Some(got), Ok(want)) => {
                    compare::compare_f32(&name, shape, got, &want).map_err(|e| e.to_string())
                }
            };
            match result {
                Ok(c) => report.comparisons.push(c),
                Err(e) => report.errors.push(e),
            }
        };
        if let Some(h) = &f.head {
            let field = compare::Shape {
                width: g.field.w as usize,
                height: g.field.h as usize,
                channels: 4,
            };
            check(format!("frame {n} head"), field, got.head.as_deref(), h);
        }
        check(
            format!("frame {n} output"),
            valid,
            output.as_deref(),
            &f.output,
        );
    }
}

/// `features.f32`, `head.f32` and `output.f32` of a later frame (what exists of them).
fn write_frame_dump(dir: &std::path::Path, f: &FrameOut) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    if let Some(x) = &f.features {
        std::fs::write(dir.join("features.f32"), f32_to_bytes(x))?;
    }
    if let Some(h) = &f.head {
        std::fs::write(dir.join("head.f32"), f32_to_bytes(h))?;
    }
    if let Some(o) = &f.output {
        let v: Vec<f32> = o.iter().flatten().map(|&h| f16::to_f32(h)).collect();
        std::fs::write(dir.join("output.f32"), f32_to_bytes(&v))?;
    }
    Ok(())
}

/// The later frames of a dump (`frames/NNN/`, as [`write_frame_dump`] writes them; a frame
/// directory that does not exist is a frame the run did not produce).
fn read_frame_dumps(dir: &std::path::Path, frames: usize) -> Result<Vec<FrameOut>, FixtureError> {
    let read = |path: std::path::PathBuf| -> Result<Option<Vec<f32>>, FixtureError> {
        match std::fs::read(&path) {
            Ok(b) => Ok(Some(bytes_to_f32(&b))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(source) => Err(FixtureError::Io { path, source }),
        }
    };
    let mut out = Vec::new();
    for n in 1..=frames {
        let d = dir.join(format!("frames/{n:03}"));
        if !d.is_dir() {
            break;
        }
        out.push(FrameOut {
            features: read(d.join("features.f32"))?,
            boundaries: Vec::new(),
            head: read(d.join("head.f32"))?,
            // Halves stored as f32: the conversion back is exact.
            output: read(d.join("output.f32"))?.map(|v| {
                v.chunks_exact(4)
                    .map(|c| [c[0], c[1], c[2], c[3]].map(f16::from_f32_rne))
                    .collect()
            }),
        });
    }
    Ok(out)
}
