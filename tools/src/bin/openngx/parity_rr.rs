//! `openngx parity --feature rr --model DIR --fixture DIR`: Ray Reconstruction's fixture (written
//! by `openngx reference --feature rr`, `openngx_tools::rr_fixture`) replayed frame by frame on
//! the exact GPU route (`rr::gpu_frame`, every tensor kept, the GPU's own history between
//! frames) and every published tensor the fixture holds (the output among them) compared byte
//! for byte. Every file's size and SHA-256 is checked against the manifest before it is used,
//! and the model must be the one the fixture was written with (manifest SHA-256).
//!
//! Exit status as NR's parity: 0 all exact, 1 any mismatch, 2 unusable (nothing compared).

use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

use openngx::model::LoadOptions;
use openngx::rr::cpu_frame::FrameParams;
use openngx::rr::geometry::{Geometry, Size};
use openngx::rr::weights::model::RrModel;
use openngx_tools::rr_fixture::{self, RrFixture};
use sha2::{Digest, Sha256};

use crate::rr_gpu::{compare, parse_preset, RrGpu};

/// The verdict of a run that compared something (an unusable fixture or model is an `Err`: exit 2).
enum Outcome {
    Exact,
    Mismatch,
}

pub fn run(model: &Path, fixture: &Path, no_verify: bool) -> ExitCode {
    match run_inner(model, fixture, no_verify) {
        Ok(Outcome::Exact) => ExitCode::SUCCESS,
        Ok(Outcome::Mismatch) => ExitCode::from(1),
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

fn run_inner(model_dir: &Path, dir: &Path, no_verify: bool) -> Result<Outcome, String> {
    let fx: RrFixture = rr_fixture::load(dir).map_err(|e| format!("fixture refused: {e}"))?;
    let manifest = std::fs::read(model_dir.join("manifest.json"))
        .map_err(|e| format!("{}: {e}", model_dir.display()))?;
    let sha = format!("{:x}", Sha256::digest(&manifest));
    if sha != fx.model_manifest_sha256 {
        return Err(format!(
            "the fixture was written with the model whose manifest hashes {}, {} hashes {sha}",
            fx.model_manifest_sha256,
            model_dir.display()
        ));
    }
    let model = RrModel::load(
        model_dir,
        LoadOptions {
            verify_sha: !no_verify,
        },
    )
    .map_err(|e| e.to_string())?;
    let preset = parse_preset(&fx.preset)?;
    let render = Size::new(fx.render[0], fx.render[1]);
    let output = Size::new(fx.output[0], fx.output[1]);
    let geometry = Geometry::new(render, output).map_err(|e| e.to_string())?;
    let t = Instant::now();
    let mut gpu = RrGpu::open(None, model.weights(), geometry, preset, true, false)?;
    println!(
        "{}: RR fixture {} ({} frames, {render} -> {output}, preset {}), exact route",
        gpu.device_name(),
        dir.display(),
        fx.frames.len(),
        preset.name()
    );
    let mut failures = 0;
    let mut compared = 0;
    for f in &fx.frames {
        let input = |name: &str| -> Result<Vec<f32>, String> {
            let e = f
                .files
                .iter()
                .find(|e| e.name == name)
                .ok_or_else(|| format!("frame {}: no `{name}` file", f.index))?;
            let bytes = rr_fixture::read_file(dir, e).map_err(|e| e.to_string())?;
            rr_fixture::f32_values(&bytes).ok_or_else(|| format!("{}: not f32 values", e.file))
        };
        let (color, guides) = (input("color")?, input("guides")?);
        let params = FrameParams {
            jitter: f.jitter,
            mv_scale: f.mv_scale,
            pre_exposure: f.pre_exposure,
            exposure_scale: f.exposure_scale,
            reset: f.reset,
            ..FrameParams::default()
        };
        let got = gpu.run_frame(&params, &color, &guides, true)?;
        let mut bad = Vec::new();
        let mut exact = 0;
        for e in f
            .files
            .iter()
            .filter(|e| e.name != "color" && e.name != "guides")
        {
            let want = rr_fixture::read_file(dir, e).map_err(|e| e.to_string())?;
            let verdict = match got.published.iter().find(|g| g.0 == e.name) {
                Some((_, bytes)) => compare(&e.name, bytes, &want),
                None => Some(format!(
                    "{}: the GPU route publishes no such tensor",
                    e.name
                )),
            };
            match verdict {
                None => exact += 1,
                Some(v) => bad.push(v),
            }
        }
        if exact + bad.len() == 0 {
            return Err(format!("frame {}: no published tensor to compare", f.index));
        }
        compared += exact + bad.len();
        println!(
            "frame {}: {exact} of {} published tensors byte-exact",
            f.index,
            exact + bad.len()
        );
        for b in &bad {
            println!("  MISMATCH {b}");
        }
        failures += bad.len();
    }
    println!(
        "{} over {} frames ({compared} tensors compared, {:.1} s)",
        if failures == 0 {
            "bit-exact".to_string()
        } else {
            format!("{failures} MISMATCHES")
        },
        fx.frames.len(),
        t.elapsed().as_secs_f64()
    );
    Ok(if failures == 0 {
        Outcome::Exact
    } else {
        Outcome::Mismatch
    })
}
