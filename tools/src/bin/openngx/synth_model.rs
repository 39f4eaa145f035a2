//! `openngx synth-model [--feature nr|rr] [--out DIR] [--seed N] [--force]`: write a synthetic
//! model directory (by default into the user data directory, see `model_out`).

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use openngx_tools::rr_stats;
use openngx_tools::rr_synth::{self, RrSynthParams};
use openngx_tools::synth::{self, SynthParams};

use crate::model_out::Network;

#[derive(clap::Args)]
pub struct Args {
    /// The network: `nr` (DLSS-NR, feature 18) or `rr` (Ray Reconstruction, feature 13).
    #[arg(long, value_enum, default_value = "nr")]
    feature: Network,
    /// Output model directory (written atomically: it appears only when complete). Default: the
    /// user data directory `$XDG_DATA_HOME/openngx/model` (`~/.local/share/openngx/model`;
    /// `openngx/rr-model` for `--feature rr`), where the library and the NGX Core look without
    /// any setting.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Seed of the weight stream.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Replace an existing non-empty output directory.
    #[arg(long)]
    force: bool,
}

pub fn run(args: Args) -> ExitCode {
    let start = Instant::now();
    let (out, default) = match crate::model_out::resolve(args.out.as_deref(), args.feature) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("synth-model: {e}");
            return ExitCode::FAILURE;
        }
    };
    if args.feature == Network::Rr {
        return run_rr(&args, &out, default, start);
    }
    match synth::write_model(&out, args.seed, &SynthParams::DEFAULT, args.force) {
        Ok(report) => {
            println!(
                "wrote {} (seed {}): {} stages, {} records, {} bytes in {:.2} s",
                report.dir.display(),
                args.seed,
                report.manifest.stages.len(),
                report.manifest.tensors.len(),
                report.total_bytes,
                start.elapsed().as_secs_f64()
            );
            if default {
                println!("{}", crate::model_out::default_note(&out));
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("synth-model: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run_rr(args: &Args, out: &std::path::Path, default: bool, start: Instant) -> ExitCode {
    match rr_synth::write_model(out, args.seed, &RrSynthParams::DEFAULT, args.force) {
        Ok(report) => {
            println!(
                "wrote {} (Ray Reconstruction, seed {}): {} stages, {} images, {} bytes in {:.2} s",
                report.dir.display(),
                args.seed,
                report.manifest.stages.len(),
                report.manifest.tensors.len(),
                report.weights.total_bytes(),
                start.elapsed().as_secs_f64()
            );
            crate::validate_model::print_rr_layers(&rr_stats::model_stats(&report.weights));
            if default {
                println!("{}", crate::model_out::default_note(out));
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("synth-model: {e}");
            ExitCode::FAILURE
        }
    }
}
