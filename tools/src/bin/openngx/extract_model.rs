//! `openngx extract-model --dll nvngx_dlssnr.dll [--out DIR] [--force]`: read the weights
//! resource of the native DLL (never loading it) and write a model directory in this project's
//! format (by default into the user data directory, see `model_out`).

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use openngx_tools::dll;

#[derive(clap::Args)]
pub struct Args {
    /// The native DLL (`nvngx_dlssnr.dll`); it is only read, never loaded.
    #[arg(long)]
    dll: PathBuf,
    /// Model directory to write (must not exist or be empty, unless --force). Default: the user
    /// data directory `$XDG_DATA_HOME/openngx/model` (`~/.local/share/openngx/model`), where the
    /// library and the NGX Core look without any setting.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Replace a non-empty output directory (only once the new one is complete).
    #[arg(long)]
    force: bool,
}

pub fn run(args: Args) -> ExitCode {
    let start = Instant::now();
    let (out, default) =
        match crate::model_out::resolve(args.out.as_deref(), crate::model_out::Network::Nr) {
            Ok(o) => o,
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::FAILURE;
            }
        };
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
