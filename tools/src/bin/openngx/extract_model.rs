//! `openngx extract-model [--feature nr|rr] --dll nvngx_dlssnr.dll|nvngx_dlssd.dll [--out DIR]
//! [--force]`: read the weights of the native DLL (never loading it) and write a model directory
//! in this project's format (by default into the user data directory, see `model_out`). DLSS-NR's
//! weights are the `WEIGHTS_HT` resource; Ray Reconstruction's are found by their structure
//! (`openngx_tools::rr_dll`).

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use openngx_tools::{dll, rr_dll, rr_stats};

use crate::model_out::Network;

#[derive(clap::Args)]
pub struct Args {
    /// The network: `nr` (DLSS-NR, from `nvngx_dlssnr.dll`) or `rr` (Ray Reconstruction, from
    /// `nvngx_dlssd.dll`).
    #[arg(long, value_enum, default_value = "nr")]
    feature: Network,
    /// The native DLL (`nvngx_dlssnr.dll`, `nvngx_dlssd.dll`); it is only read, never loaded.
    #[arg(long)]
    dll: PathBuf,
    /// Model directory to write (must not exist or be empty, unless --force). Default: the user
    /// data directory `$XDG_DATA_HOME/openngx/model` (`~/.local/share/openngx/model`;
    /// `openngx/rr-model` for `--feature rr`), where the library and the NGX Core look without
    /// any setting.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Replace a non-empty output directory (only once the new one is complete).
    #[arg(long)]
    force: bool,
}

pub fn run(args: Args) -> ExitCode {
    let start = Instant::now();
    let (out, default) = match crate::model_out::resolve(args.out.as_deref(), args.feature) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    if args.feature == Network::Rr {
        return run_rr(&args, &out, default, start);
    }
    match dll::extract_to_dir(&args.dll, &out, args.force) {
        Ok(ex) => {
            let total: usize = ex.stages.iter().map(|(_, b)| b.len()).sum();
            println!(
                "WEIGHTS_HT: {} bytes at file offset {:#x} (language {}), sha256 {}",
                ex.resource.len, ex.resource.offset, ex.resource.language, ex.resource_sha256
            );
            println!(
                "wrote {}: {} stages, {} records, {total} bytes ({:.2} s)",
                out.display(),
                ex.stages.len(),
                ex.manifest.tensors.len(),
                start.elapsed().as_secs_f64()
            );
            if default {
                println!("{}", crate::model_out::default_note(&out));
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {}: {e}", args.dll.display());
            ExitCode::FAILURE
        }
    }
}

fn run_rr(args: &Args, out: &std::path::Path, default: bool, start: Instant) -> ExitCode {
    match rr_dll::extract_to_dir(&args.dll, out, args.force) {
        Ok(ex) => {
            println!(
                "Ray Reconstruction stages: {} bytes in section `{}` at file offset {:#x}, sha256 {}",
                ex.located.len, ex.located.section, ex.located.offset, ex.stages_sha256
            );
            println!(
                "wrote {}: 11 images, {} bytes ({:.2} s); {} weights saturated to ±448, {} NaN",
                out.display(),
                ex.weights.total_bytes(),
                start.elapsed().as_secs_f64(),
                ex.saturated,
                ex.nan
            );
            crate::validate_model::print_rr_layers(&rr_stats::model_stats(&ex.weights));
            if default {
                println!("{}", crate::model_out::default_note(out));
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {}: {e}", args.dll.display());
            ExitCode::FAILURE
        }
    }
}
