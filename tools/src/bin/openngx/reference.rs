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

#[derive(clap::Args)]
#[command(group(clap::ArgGroup::new("input").required(true).args(["image", "features", "synthetic_scene"])))]
pub struct Args {
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
