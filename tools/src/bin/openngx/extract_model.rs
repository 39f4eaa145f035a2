//! `openngx extract-model --dll nvngx_dlssnr.dll --out DIR [--force]`: read the weights resource
//! of the native DLL (never loading it) and write a model directory in this project's format.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use openngx_tools::dll;

#[derive(clap::Args)]
pub struct Args {
    /// The native DLL (`nvngx_dlssnr.dll`); it is only read, never loaded.
    #[arg(long)]
    dll: PathBuf,
    /// Model directory to write (must not exist or be empty, unless --force).
    #[arg(long)]
    out: PathBuf,
    /// Replace a non-empty output directory (only once the new one is complete).
    #[arg(long)]
    force: bool,
}

pub fn run(args: Args) -> ExitCode {
    let start = Instant::now();
    match dll::extract_to_dir(&args.dll, &args.out, args.force) {
        Ok(ex) => {
            let total: usize = ex.stages.iter().map(|(_, b)| b.len()).sum();
            println!(
                "WEIGHTS_HT: {} bytes at file offset {:#x} (language {}), sha256 {}",
                ex.resource.len, ex.resource.offset, ex.resource.language, ex.resource_sha256
            );
            println!(
                "wrote {}: {} stages, {} records, {total} bytes ({:.2} s)",
                args.out.display(),
                ex.stages.len(),
                ex.manifest.tensors.len(),
                start.elapsed().as_secs_f64()
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {}: {e}", args.dll.display());
            ExitCode::FAILURE
        }
    }
}
