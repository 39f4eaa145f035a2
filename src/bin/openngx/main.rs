//! `openngx` command-line tool. This file only parses the command line and dispatches; every
//! subcommand lives in its own module with its own `Args` and `run`.

mod doctor;
mod extract_model;
mod parity;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(name = "openngx", version, about = "openngx tools (DLSS-NR on Vulkan)")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Extract the weights of nvngx_dlssnr.dll (RCDATA `WEIGHTS_HT`) into a model directory.
    ExtractModel(extract_model::Args),
    /// Run the network on a captured-frame fixture and compare with its references; exit 0 only
    /// when every check is bit-exact.
    Parity(parity::Args),
    /// Report the Vulkan devices, what the routes need, and where the model is looked for.
    Doctor(doctor::Args),
}

fn main() -> ExitCode {
    match Cli::parse().command {
        Command::ExtractModel(args) => extract_model::run(args),
        Command::Parity(args) => parity::run(args),
        Command::Doctor(args) => doctor::run(args),
    }
}
