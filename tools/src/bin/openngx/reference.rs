//! `openngx reference`: run the CPU reference on an input and write a fixture directory
//! ("captured frames") that `parity` and the C harness compare against.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use openngx::model::{LoadOptions, Model};
use openngx::nr::cpu_frame::{CpuPipeline, FrameResult};
use openngx::nr::frame::scene;
use openngx::nr::geometry::Geometry;
use openngx::nr::graph;
use openngx::nr::reference;
use openngx::numerics::Profiles;
use openngx_tools::fixture::{self, FrameParameters, RecordedFrame};
use openngx_tools::image;
use openngx_tools::rr_fixture::{self, RrRecordedFrame};

use crate::model_out::Network;

#[derive(clap::Args)]
#[command(group(clap::ArgGroup::new("input").required(true).args(["image", "features", "synthetic_scene"])))]
pub struct Args {
    /// The network: `nr` (DLSS-NR, feature 18) or `rr` (Ray Reconstruction, feature 13: the
    /// synthetic scene only, `--width/--height` the render size, `--out-width/--out-height` the
    /// output size; see `openngx_tools::rr_fixture` for the directory it writes).
    #[arg(long, value_enum, default_value = "nr")]
    feature: Network,
    /// Model directory.
    #[arg(long)]
    model: PathBuf,
    /// A PNG whose top-left WIDTH x HEIGHT pixels are the proxy (sRGB code values).
    #[arg(long)]
    image: Option<PathBuf>,
    /// Prepared network input: f32 [field rows][16] (only boundaries and head are checked then).
    #[arg(long)]
    features: Option<PathBuf>,
    /// The built-in animated scene with known motion vectors.
    #[arg(long)]
    synthetic_scene: bool,
    #[arg(long)]
    width: u32,
    #[arg(long)]
    height: u32,
    /// RR: the output width (default: the render width).
    #[arg(long)]
    out_width: Option<u32>,
    /// RR: the output height (default: the render height).
    #[arg(long)]
    out_height: Option<u32>,
    /// RR: the preset, `d` or `e` (default `e`).
    #[arg(long, default_value = "e")]
    preset: String,
    /// Output fixture directory (must not exist).
    #[arg(long)]
    out: PathBuf,
    /// Frames of a temporal sequence (1 = a single frame).
    #[arg(long, default_value_t = 1)]
    frames: u32,
    /// MMA profile: f13 (native, default) or h25 (H200 tensor cores).
    #[arg(long, default_value = "f13")]
    profile: String,
    /// Skip the SHA-256 check of the model's stage files.
    #[arg(long)]
    no_verify: bool,
}

pub fn run(args: Args) -> ExitCode {
    match run_inner(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("reference: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run_inner(args: &Args) -> Result<(), String> {
    if args.feature == Network::Rr {
        return rr(args);
    }
    let profiles = Profiles::by_name(&args.profile)
        .ok_or_else(|| format!("unknown profile `{}` (f13, h25)", args.profile))?;
    let geometry = Geometry::new(args.width, args.height).map_err(|e| e.to_string())?;
    let t = Instant::now();
    let model = Model::load(
        &args.model,
        LoadOptions {
            verify_sha: !args.no_verify,
        },
    )
    .map_err(|e| e.to_string())?;
    eprintln!(
        "model {} loaded in {:.2} s",
        args.model.display(),
        t.elapsed().as_secs_f64()
    );
    if args.frames == 0 {
        return Err("--frames must be at least 1".into());
    }

    if let Some(path) = &args.features {
        return features_only(args, &model, &geometry, path, profiles);
    }
    let (w, h) = (args.width, args.height);
    let still = match &args.image {
        Some(p) => Some(image::read_png_rgba(p, w, h).map_err(|e| e.to_string())?),
        None => None,
    };
    let mut pipe = CpuPipeline::new(&model, w, h, profiles).map_err(|e| e.to_string())?;
    let mut inputs = Vec::new();
    let mut results: Vec<FrameResult> = Vec::new();
    for n in 0..args.frames {
        let (proxy, motion) = match &still {
            Some(px) => (px.clone(), vec![[0.0f32; 2]; (w * h) as usize]),
            None => {
                let s = scene::render(w, h, n);
                (s.proxy, s.motion)
            }
        };
        let params = FrameParameters::default();
        let t = Instant::now();
        let r = pipe
            .run_frame(&params.to_frame_params(), &proxy, Some(&motion))
            .map_err(|e| e.to_string())?;
        eprintln!("frame {n}: {:.1} s", t.elapsed().as_secs_f64());
        inputs.push((proxy, motion, params));
        results.push(r);
    }
    let frames: Vec<RecordedFrame> = inputs
        .iter()
        .zip(&results)
        .map(|((proxy, motion, params), result)| RecordedFrame {
            proxy,
            motion,
            parameters: params.clone(),
            result,
        })
        .collect();
    fixture::write(&args.out, &geometry, &frames, profiles.name).map_err(|e| e.to_string())?;
    println!(
        "wrote fixture {} ({} frame(s), {}x{}, field {}x{})",
        args.out.display(),
        args.frames,
        w,
        h,
        geometry.field.w,
        geometry.field.h
    );
    Ok(())
}

/// `--features`: the network alone on prepared input; boundaries and head only.
fn features_only(
    args: &Args,
    model: &Model,
    geometry: &Geometry,
    path: &PathBuf,
    profiles: Profiles,
) -> Result<(), String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let feats = fixture::bytes_to_f32(&bytes);
    let g = graph::build(geometry);
    let out = reference::run(&g, model, &feats, profiles)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let result = FrameResult {
        output: Vec::new(),
        features: Some(feats),
        network: Some(out),
    };
    let (w, h) = (geometry.valid.w as usize, geometry.valid.h as usize);
    let proxy = vec![[0.0f32; 4]; w * h];
    let motion = vec![[0.0f32; 2]; w * h];
    let frame = RecordedFrame {
        proxy: &proxy,
        motion: &motion,
        parameters: FrameParameters::default(),
        result: &result,
    };
    let mut manifest =
        fixture::write(&args.out, geometry, &[frame], profiles.name).map_err(|e| e.to_string())?;
    // Without a proxy there is no composed output: keep the network checks only.
    manifest.proxy = None;
    manifest.native_output = None;
    manifest.checks = vec!["boundaries".into(), "head".into()];
    let json = serde_json::to_string_pretty(&manifest).map_err(|e| e.to_string())?;
    for f in ["proxy.f32", "motion.f32", "output.f32"] {
        let _ = std::fs::remove_file(args.out.join(f));
    }
    std::fs::write(args.out.join("manifest.json"), json).map_err(|e| e.to_string())?;
    println!(
        "wrote fixture {} (features input, boundaries + head)",
        args.out.display()
    );
    Ok(())
}

/// `--feature rr`: the CPU reference on the synthetic scene, a temporal sequence with the Halton
/// jitter of `rr::frame::scene::JITTER`, written as an RR fixture.
fn rr(args: &Args) -> Result<(), String> {
    use openngx::rr::cpu_frame::{CpuFrame, FrameParams, FrameResult};
    use openngx::rr::frame::scene;
    use openngx::rr::geometry::{Geometry, Size};
    use openngx::rr::preset::Preset;
    use openngx::rr::weights::model::RrModel;

    if !args.synthetic_scene {
        return Err("--feature rr takes --synthetic-scene only".into());
    }
    if args.frames == 0 {
        return Err("--frames must be at least 1".into());
    }
    let preset = match args.preset.as_str() {
        "d" | "D" => Preset::D,
        "e" | "E" => Preset::E,
        other => return Err(format!("unknown preset `{other}` (d, e)")),
    };
    let render = Size::new(args.width, args.height);
    let output = Size::new(
        args.out_width.unwrap_or(args.width),
        args.out_height.unwrap_or(args.height),
    );
    let geometry = Geometry::new(render, output).map_err(|e| e.to_string())?;
    let t = Instant::now();
    let model = RrModel::load(
        &args.model,
        LoadOptions {
            verify_sha: !args.no_verify,
        },
    )
    .map_err(|e| e.to_string())?;
    let manifest = std::fs::read(args.model.join("manifest.json"))
        .map_err(|e| format!("{}: {e}", args.model.display()))?;
    eprintln!(
        "RR model {} loaded in {:.2} s",
        args.model.display(),
        t.elapsed().as_secs_f64()
    );
    let mut pipe = CpuFrame::new(model.weights(), geometry, preset).map_err(|e| e.to_string())?;
    let mut inputs = Vec::new();
    let mut results: Vec<FrameResult> = Vec::new();
    for n in 0..args.frames {
        let s = scene::render(render, n);
        let params = FrameParams {
            jitter: scene::JITTER[n as usize % scene::JITTER.len()],
            ..FrameParams::default()
        };
        let t = Instant::now();
        let r = pipe
            .run(&params, &s.color, &s.guides)
            .map_err(|e| e.to_string())?;
        eprintln!("frame {n}: {:.1} s", t.elapsed().as_secs_f64());
        inputs.push((s, params));
        results.push(r);
    }
    let frames: Vec<RrRecordedFrame> = inputs
        .iter()
        .zip(&results)
        .map(|((s, params), result)| RrRecordedFrame {
            params: *params,
            color: &s.color,
            guides: &s.guides,
            result,
        })
        .collect();
    rr_fixture::write(&args.out, render, output, preset, &manifest, &frames)
        .map_err(|e| e.to_string())?;
    println!(
        "wrote RR fixture {} ({} frame(s), {render} -> {output}, preset {})",
        args.out.display(),
        args.frames,
        preset.name()
    );
    Ok(())
}
