//! `openngx synth-model [--out DIR] [--seed N] [--force]`: write a synthetic model directory
//! (by default into the user data directory, see `model_out`).

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use openngx_tools::synth::{self, SynthParams};

#[derive(clap::Args)]
pub struct Args {
    /// Output model directory (written atomically: it appears only when complete). Default: the
    /// user data directory `$XDG_DATA_HOME/openngx/model` (`~/.local/share/openngx/model`),
    /// where the library and the NGX Core look without any setting.
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
    let (out, default) = match crate::model_out::resolve(args.out.as_deref()) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("synth-model: {e}");
            return ExitCode::FAILURE;
        }
    };
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
