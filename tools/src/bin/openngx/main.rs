//! `openngx` command-line tool. This file only parses the command line and dispatches; every
//! subcommand lives in its own module with its own `Args` and `run`.

mod bench;
mod bench_rr;
mod demo;
mod doctor;
mod doctor_model;
mod doctor_rr;
mod extract_model;
mod gpu_frames;
mod gpu_net;
mod model_out;
mod parity;
mod parity_rr;
mod reference;
mod rr_gpu;
mod standalone;
mod synth_model;
mod validate_model;
mod verify;
mod verify_rr;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "openngx",
    version,
    about = "openngx tools (DLSS-NR and Ray Reconstruction on Vulkan)"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run DLSS-NR (or with --feature rr Ray Reconstruction) end to end through the C ABI on the
    /// synthetic scene (or PNGs) and write pictures.
    Demo(demo::Args),
    /// Write a deterministic synthetic model directory (same structure as the shipped model).
    SynthModel(synth_model::Args),
    /// GPU time per frame (timestamps), per-stage profile, memory; --check compares with the CPU.
    Bench(bench::Args),
    /// Check a model directory and print a summary; exit 0 if valid, 1 if not.
    ValidateModel(validate_model::Args),
    /// Extract the weights of nvngx_dlssnr.dll (RCDATA `WEIGHTS_HT`) into a model directory.
    ExtractModel(extract_model::Args),
    /// Run the CPU reference and write a fixture directory (captured frames).
    Reference(reference::Args),
    /// Run the network on a captured-frame fixture and compare with its references; exit 0 only
    /// when every check is bit-exact.
    Parity(parity::Args),
    /// Run the GPU network (NR, or with --feature rr RR's exact route) op by op against the CPU
    /// reference on the GPU's own inputs; print the first op that differs (exit 1) or "all N ops
    /// exact" (exit 0).
    Verify(verify::Args),
    /// Report the Vulkan devices, what the routes need, and where the model is looked for.
    Doctor(doctor::Args),
}

fn main() -> ExitCode {
    match Cli::parse().command {
        Command::Demo(args) => demo::run(args),
        Command::SynthModel(args) => synth_model::run(args),
        Command::ValidateModel(args) => validate_model::run(args),
        Command::ExtractModel(args) => extract_model::run(args),
        Command::Reference(args) => reference::run(args),
        Command::Parity(args) => parity::run(args),
        Command::Doctor(args) => doctor::run(args),
        Command::Bench(args) => bench::run(args),
        Command::Verify(args) => verify::run(args),
    }
}
