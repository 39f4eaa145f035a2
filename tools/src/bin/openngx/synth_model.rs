//! `openngx synth-model --out DIR [--seed N] [--force]`: write a synthetic model directory.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use openngx_tools::synth::{self, SynthParams};

#[derive(clap::Args)]
pub struct Args {
    /// Output model directory (written atomically: it appears only when complete).
    #[arg(long)]
    out: PathBuf,
    /// Seed of the weight stream.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Replace an existing non-empty output directory.
    #[arg(long)]
    force: bool,
}

pub fn run(args: Args) -> ExitCode {
    let start = Instant::now();
    match synth::write_model(&args.out, args.seed, &SynthParams::DEFAULT, args.force) {
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
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("synth-model: {e}");
            ExitCode::FAILURE
        }
    }
}
