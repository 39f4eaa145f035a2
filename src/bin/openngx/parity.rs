//! `openngx parity --model DIR --fixture DIR [--repeat N] [--dump DIR] [--route cpu|gpu]
//! [--no-verify]`: validate a captured-frame fixture strictly, run the network on its input and
//! compare boundaries / head / output with the verdicts of spec nr-network §4.2.
//! `--from-dump DIR` compares what an earlier `--dump` (from any route or machine) holds instead
//! of running; no model is needed then.
//!
//! Exit status: 0 when every check is bit-exact, 1 when any check fails (sign of zero and within
//! one code included), 2 when the fixture, the model or the route cannot be used (nothing ran or
//! the run failed).

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use openngx::model::{LoadOptions, Model};
use openngx::nr::compare::{self, Produced};
use openngx::nr::fixture::Fixture;
use openngx::nr::graph;
use openngx::nr::reference::{self, Profiles};
use openngx::numerics::f16;

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Route {
    /// The CPU reference (native F13/F24 numerics).
    Cpu,
    /// The GPU exact route.
    Gpu,
}

#[derive(clap::Args)]
pub struct Args {
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
    /// Write what the run produced here: `<boundary>.u8`, `features.f32`, `head.f32`, `output.f32`.
    #[arg(long)]
    dump: Option<PathBuf>,
    /// Which executor runs the network.
    #[arg(long, value_enum, default_value = "cpu")]
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
    // Everything that can be refused is refused before the network runs.
    let fx = match Fixture::load(&args.fixture) {
        Ok(f) => f,
        Err(e) => return unusable(format!("fixture refused: {e}")),
    };
    let (produced, run_errors) = match &args.from_dump {
        Some(dir) => match compare::read_dump(dir, &fx.geometry) {
            Ok(p) => {
                println!(
                    "fixture {}: comparing the dump in {}",
                    args.fixture.display(),
                    dir.display()
                );
                (p, Vec::new())
            }
            Err(e) => return unusable(format!("--from-dump: {e}")),
        },
        None => match run_network(&args, &fx) {
            Ok(r) => r,
            Err(msg) => return unusable(msg),
        },
    };

    let mut report = match compare::compare_fixture(&fx, &produced) {
        Ok(r) => r,
        Err(e) => return unusable(format!("fixture: {e}")),
    };
    report.errors.extend(run_errors);
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

/// Run the network on the fixture's input `--repeat` times: the first run's results and the
/// differences of later runs from it, or why nothing could run.
fn run_network(args: &Args, fx: &Fixture) -> Result<(Produced, Vec<String>), String> {
    if args.route == Route::Gpu {
        return Err(
            "route gpu: the GPU recorder (nr::record) is not part of this build yet; use --route cpu"
                .into(),
        );
    }
    let repeat = args.repeat.unwrap_or(1);
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
    if let Some(p) = &fx.manifest.profile {
        if Profiles::by_name(p) != Some(Profiles::NATIVE) {
            println!(
                "note: the fixture's references were made with profile `{p}`; route cpu runs f13/f24"
            );
        }
    }
    println!(
        "model {} loaded in {:.2} s",
        model_dir.display(),
        start.elapsed().as_secs_f64()
    );

    let graph = graph::build(g);
    let mut first: Option<Produced> = None;
    let mut errors = Vec::new();
    for run in 1..=repeat {
        let t = Instant::now();
        let out = reference::run(&graph, &model, &input.features, Profiles::NATIVE)
            .map_err(|e| format!("route cpu: run {run} failed: {e}"))?;
        let output =
            compare::compose_output(&input, &out.head).map_err(|e| format!("compose: {e}"))?;
        println!(
            "run {run}/{repeat}: route cpu (profile f13/f24), {} graph ops, {:.2} s",
            graph.nodes.len(),
            t.elapsed().as_secs_f64()
        );
        let produced = Produced {
            boundaries: out.boundaries,
            head: out.head,
            output,
        };
        match &first {
            None => first = Some(produced),
            Some(f) => {
                let same_head = f.head.len() == produced.head.len()
                    && f.head
                        .iter()
                        .zip(&produced.head)
                        .all(|(a, b)| a.to_bits() == b.to_bits());
                if !same_head || f.output != produced.output || f.boundaries != produced.boundaries
                {
                    errors.push(format!(
                        "run {run}: results differ from run 1 (the route is not deterministic)"
                    ));
                }
            }
        }
    }
    let produced = first.ok_or("no run")?;
    if let Some(dir) = &args.dump {
        compare::write_dump(dir, &input.features, &produced)
            .map_err(|e| format!("--dump {}: {e}", dir.display()))?;
        println!("dumped to {}", dir.display());
    }
    Ok((produced, errors))
}
