//! `openngx validate-model DIR [--no-verify]`: load a model directory with every check, then print
//! a one-screen summary of its stages and weight statistics. The manifest's `network` key says
//! which network's checks apply: DLSS-NR's (no key) or Ray Reconstruction's (`dlss-rr`).

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use openngx::model::{layout, LoadOptions, Manifest, Model, ShaStatus, StageData};
use openngx::numerics::f16;
use openngx::rr::weights::model::{RrModel, NETWORK as RR_NETWORK};
use openngx_tools::rr_stats::{self, LayerStats};
use openngx_tools::stats::{ModelStats, Range};

#[derive(clap::Args)]
pub struct Args {
    /// Model directory (holds manifest.json and model/).
    dir: PathBuf,
    /// Skip the SHA-256 check of the stage files.
    #[arg(long)]
    no_verify: bool,
}

pub fn run(args: Args) -> ExitCode {
    let start = Instant::now();
    let opts = LoadOptions {
        verify_sha: !args.no_verify,
    };
    // Which network: read the manifest once for its key (a manifest that cannot be read is
    // reported by the full load below, with the same message).
    let network = Manifest::read(&args.dir).ok().and_then(|m| m.network);
    if network.as_deref() == Some(RR_NETWORK) {
        return run_rr(&args, opts, start);
    }
    let model = match Model::load(&args.dir, opts) {
        Ok(m) => m,
        Err(e) => {
            println!("{}: INVALID", args.dir.display());
            println!("  {e}");
            return ExitCode::FAILURE;
        }
    };
    let load_s = start.elapsed().as_secs_f64();
    let stats = ModelStats::compute(&model);
    print_summary(&model, &stats, load_s);
    ExitCode::SUCCESS
}

fn range(r: &Range) -> String {
    if r.count == 0 {
        return "none".into();
    }
    let mut s = format!("{} values in [{}, {}]", r.count, r.min, r.max);
    if r.nonfinite > 0 {
        s += &format!(", {} non-finite", r.nonfinite);
    }
    s
}

fn run_rr(args: &Args, opts: LoadOptions, start: Instant) -> ExitCode {
    let model = match RrModel::load(&args.dir, opts) {
        Ok(m) => m,
        Err(e) => {
            println!("{}: INVALID (Ray Reconstruction model)", args.dir.display());
            println!("  {e}");
            return ExitCode::FAILURE;
        }
    };
    let load_s = start.elapsed().as_secs_f64();
    let w = model.weights();
    println!("model {}", model.dir().display());
    println!("  network: Ray Reconstruction (DLSS-D, feature 13; manifest network `{RR_NETWORK}`)");
    print_stages(model.manifest(), model.stages());
    println!(
        "  images: {} (enc0..enc5, dec4..dec0), total {} bytes (loaded in {load_s:.2} s)",
        model.manifest().tensors.len(),
        w.total_bytes()
    );
    let stats = rr_stats::model_stats(w);
    print_rr_layers(&stats);
    println!("valid");
    ExitCode::SUCCESS
}

/// Per-layer statistics of an RR model (also printed by `synth-model --feature rr`).
pub fn print_rr_layers(stats: &[LayerStats]) {
    println!(
        "  {:<5} {:>4} {:>5} {:>8} {:>8} {:>8} {:>5} {:>4} {:>8} {:>7}  {:<16} {:<18} {:<18}",
        "layer",
        "C",
        "heads",
        "bytes",
        "E4M3",
        "nonzero",
        "±448",
        "NaN",
        "distinct",
        "max|w|",
        "norm gains",
        "biases",
        "score bias"
    );
    let short = |r: &Range| {
        if r.count == 0 {
            "none".to_string()
        } else {
            format!("[{:.3}, {:.3}]", r.min, r.max)
        }
    };
    for s in stats {
        let l = s.layer.layer();
        println!(
            "  {:<5} {:>4} {:>5} {:>8} {:>8} {:>7.2}% {:>5} {:>4} {:>8} {:>7}  {:<16} {:<18} {:<18}",
            l.name,
            l.channels,
            l.heads,
            l.image_bytes(),
            s.elements(),
            100.0 * s.nonzero_share(),
            s.saturated(),
            s.nan(),
            s.distinct(),
            s.max_abs(),
            short(&s.gains),
            short(&s.biases),
            short(&s.score_bias)
        );
        if let Some(n) = s.noise_nonzero {
            println!("        enc0 bytes [0, 4096) (never read by the network): {n} nonzero");
        }
    }
}

fn print_stages(m: &Manifest, stages: &[StageData]) {
    if let Some(g) = &m.generator {
        println!("  generator: {g}");
    }
    println!("  {:<10} {:<16} {:>12}  sha256", "stage", "file", "bytes");
    for st in stages {
        let status = match st.sha_status {
            ShaStatus::Verified => "ok",
            ShaStatus::NotChecked => "not checked",
        };
        let short = st.sha256.get(..12).unwrap_or(&st.sha256);
        println!(
            "  {:<10} {:<16} {:>12}  {short}… {status}",
            st.id,
            st.file,
            st.bytes.len()
        );
    }
}

fn print_summary(model: &Model, s: &ModelStats, load_s: f64) {
    let m = model.manifest();
    println!("model {}", model.dir().display());
    print_stages(m, model.stages());
    println!(
        "  records: {} (blockCount {}), total {} bytes (loaded in {load_s:.2} s)",
        m.tensors.len(),
        m.totals.block_count,
        model.total_bytes()
    );
    println!(
        "  E4M3: {} elements, max |w| {}, +0 {}, -0 {}, |w|>=0.125 {}, |w|>=0.5 {}, NaN codes {}",
        s.fp8_elements(),
        s.fp8_max_abs(),
        s.fp8_histogram[0x00],
        s.fp8_histogram[0x80],
        s.fp8_at_least(0.125),
        s.fp8_at_least(0.5),
        s.fp8_nan_codes()
    );
    let big = s.fp8_at_least(9.0);
    if big > 0 {
        println!("  warning: {big} E4M3 weights with |w| > 9 (outside the shipped range)");
    }
    println!("  ViT exit (1024->512): max |w| {}", s.vit_exit_max_abs());
    println!(
        "  priors: {}; zeros {}, at -126.5 {}",
        range(&s.priors),
        s.prior_zeros,
        s.prior_at_floor
    );
    println!("  temperatures: {}", range(&s.temperatures));
    println!("  skip/merge scales: {}", range(&s.scales));
    println!(
        "  f16 adapter/head: {}; adapter lane-15 nonzero {}",
        range(&s.f16_matrices),
        s.adapter_lane15_nonzero
    );
    println!(
        "  padding: {} bytes ({} nonzero); unused head halves {} ({} nonzero)",
        s.pad_bytes, s.pad_nonzero, s.head_unused_halves, s.head_unused_nonzero
    );
    let blend = model.blend_scale();
    let note = if blend == layout::SHIPPED_BLEND_SCALE {
        " (shipped value)"
    } else {
        ""
    };
    println!(
        "  blend_scale: 0x{blend:04X} = {}{note}",
        f16::to_f32(blend)
    );
    println!("valid");
}
