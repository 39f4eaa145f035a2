//! `openngx demo`: DLSS-NR end to end the way an application uses it. It synthesizes the model
//! on first use (into the user's cache directory), renders the animated synthetic scene with
//! motion vectors (or reads a PNG sequence), and runs the frames through the public C ABI
//! (`NVSDK_NGX_VULKAN_Init` -> `CreateFeature1` -> `EvaluateFeature_C` per frame ->
//! `ReleaseFeature` -> `Shutdown1`) on a Vulkan device it creates itself (lavapipe when there is
//! no GPU). It writes side-by-side `input | output` PNGs and a summary, prints the GPU time of
//! each evaluation (timestamps around it) and checks frame 0 bit for bit against the CPU
//! reference. `--feature rr` runs Ray Reconstruction (feature 13) the same way (`demo/rr.rs`);
//! what both share (NGX session, creation, timing, pictures, the cached model) is `demo/shared.rs`.

mod rr;
mod shared;
mod vulkan;

use std::ffi::{c_void, CStr};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use ash::vk;
use openngx::feature::Route;
use openngx::model::{LoadOptions, Model};
use openngx::ngx::abi::*;
use openngx::ngx::exports::*;
use openngx::ngx::param_exports::*;
use openngx::nr::cpu_frame::CpuPipeline;
use openngx::nr::frame::{scene, FrameParams};
use openngx::nr::geometry::Geometry;
use openngx::numerics::Profiles;
use openngx_tools::image;
use openngx_tools::synth::{self, SynthParams};

use crate::model_out::Network;
use shared::{
    cached_model, check, create_feature, half_rgb, ngx_session, record_timed, step, with_params,
    write_side_by_side,
};
use vulkan::{demo_error, App, HostBuffer, Image};

#[derive(clap::Args)]
pub struct Args {
    /// The network: `nr` (DLSS-NR) or `rr` (Ray Reconstruction, feature 13: `--width/--height`
    /// the render size, `--out-width/--out-height` the output size, the synthetic path-traced
    /// scene with every guide).
    #[arg(long, value_enum, default_value = "nr")]
    feature: Network,
    /// Frame width (default 64, or the first input PNG's width; RR: the render width, default 64).
    #[arg(long)]
    width: Option<u32>,
    /// Frame height (default 64, or the first input PNG's height; RR: the render height,
    /// default 48).
    #[arg(long)]
    height: Option<u32>,
    /// RR: the output width (default 3/2 of the render width).
    #[arg(long)]
    out_width: Option<u32>,
    /// RR: the output height (default 3/2 of the render height).
    #[arg(long)]
    out_height: Option<u32>,
    /// RR: the preset, `d` or `e`.
    #[arg(long, default_value = "e")]
    preset: String,
    /// Frames to run (default 3, 1 on a CPU Vulkan implementation such as lavapipe, or every
    /// input PNG; RR: 3 everywhere).
    #[arg(long)]
    frames: Option<u32>,
    /// Model directory (default: the synthetic model in the user's cache directory, written on
    /// first use).
    #[arg(long)]
    model: Option<PathBuf>,
    /// Input PNG sequence instead of the synthetic scene: a directory (every *.png in name
    /// order), a glob such as `shots/frame_*.png`, or one file. No motion vectors are passed.
    #[arg(long)]
    input: Option<String>,
    /// Output directory for the pictures and the summary.
    #[arg(long, default_value = "openngx-demo")]
    out: PathBuf,
    /// Vulkan physical device index (default: the first that can run the exact route, GPUs
    /// before CPU implementations).
    #[arg(long)]
    device: Option<usize>,
    /// Skip the bit-exactness check of frame 0 against the CPU reference (it takes about as
    /// long as a lavapipe frame; RR checks every frame).
    #[arg(long)]
    no_check: bool,
    /// Which implementation renders the frames: `exact` (the library through the public NGX
    /// C ABI on a Vulkan device), `tensor` (the same, asking for the tensor route, checked
    /// against the CPU reference in h25; refused where the device cannot run it) or `cpu` (the
    /// CPU reference alone, no Vulkan needed; frames carry their temporal history).
    #[arg(long, default_value = "exact")]
    route: Route,
}

pub fn run(args: Args) -> ExitCode {
    let result = match args.feature {
        Network::Nr => run_inner(&args),
        Network::Rr => rr::run(&args),
    };
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("demo: {e}");
            ExitCode::FAILURE
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Inputs

/// `*` and `?` wildcards over one file name.
fn wildcard(pattern: &[u8], name: &[u8]) -> bool {
    match (pattern.first(), name.first()) {
        (None, None) => true,
        (Some(b'*'), _) => {
            wildcard(&pattern[1..], name) || (!name.is_empty() && wildcard(pattern, &name[1..]))
        }
        (Some(b'?'), Some(_)) => wildcard(&pattern[1..], &name[1..]),
        (Some(p), Some(n)) if p == n => wildcard(&pattern[1..], &name[1..]),
        _ => false,
    }
}

/// The PNG files `spec` names (directory, glob over file names, or one file), in name order.
fn input_files(spec: &str) -> Result<Vec<PathBuf>, String> {
    let path = Path::new(spec);
    let (dir, pattern) = if path.is_dir() {
        (path.to_path_buf(), "*.png".to_owned())
    } else {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if !name.contains(['*', '?']) {
            return if path.is_file() {
                Ok(vec![path.to_path_buf()])
            } else {
                Err(format!("--input {spec}: no such file or directory"))
            };
        }
        let parent = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        (parent, name)
    };
    let entries = std::fs::read_dir(&dir).map_err(|e| format!("--input {}: {e}", dir.display()))?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.is_file())
        .filter(|p| {
            p.file_name().is_some_and(|n| {
                let n = n.to_string_lossy();
                wildcard(pattern.as_bytes(), n.as_bytes())
                    && n.to_ascii_lowercase().ends_with(".png")
            })
        })
        .collect();
    files.sort();
    if files.is_empty() {
        return Err(format!("--input {spec}: no PNG file matches"));
    }
    Ok(files)
}

fn png_size(path: &Path) -> Result<(u32, u32), String> {
    let file = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let reader = png::Decoder::new(std::io::BufReader::new(file))
        .read_info()
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let info = reader.info();
    Ok((info.width, info.height))
}

/// One input frame: proxy colour and (for the scene) motion vectors.
struct InputFrame {
    proxy: Vec<[f32; 4]>,
    motion: Option<Vec<[f32; 2]>>,
    source: String,
}

// ---------------------------------------------------------------------------------------------
// NGX through the C ABI

fn set_ui(p: *mut NVSDK_NGX_Parameter, k: &CStr, v: u32) {
    // SAFETY: a live parameter map and a NUL-terminated name.
    unsafe { NVSDK_NGX_Parameter_SetUI(p, k.as_ptr(), v) }
}

fn set_vp(p: *mut NVSDK_NGX_Parameter, k: &CStr, v: *mut c_void) {
    // SAFETY: as in `set_ui`; the pointer stays valid through the Evaluate that reads it.
    unsafe { NVSDK_NGX_Parameter_SetVoidPointer(p, k.as_ptr(), v) }
}

fn resource(img: &Image, read_write: bool) -> NVSDK_NGX_Resource_VK {
    NVSDK_NGX_Resource_VK {
        Resource: NVSDK_NGX_Resource_VK_Resource {
            ImageViewInfo: NVSDK_NGX_ImageViewInfo_VK {
                ImageView: img.view,
                Image: img.image,
                SubresourceRange: vk::ImageSubresourceRange {
                    aspect_mask: vk::ImageAspectFlags::COLOR,
                    base_mip_level: 0,
                    level_count: 1,
                    base_array_layer: 0,
                    layer_count: 1,
                },
                Format: img.format,
                Width: img.width,
                Height: img.height,
            },
        },
        Type: NVSDK_NGX_RESOURCE_VK_TYPE_VK_IMAGEVIEW,
        ReadWrite: read_write,
    }
}

/// What one evaluated frame gave.
struct FrameOut {
    output: Vec<[u16; 4]>,
    gpu_ms: Option<f64>,
    wall_s: f64,
}

/// Everything the app creates on its device for the frames.
struct Objects {
    color: Image,
    motion: Image,
    output: Image,
    staging: HostBuffer,
    readback: HostBuffer,
    queries: Option<vk::QueryPool>,
}

impl Objects {
    fn new(app: &App, w: u32, h: u32, frames: u32) -> Result<Objects, String> {
        let sampled = vk::ImageUsageFlags::SAMPLED | vk::ImageUsageFlags::TRANSFER_DST;
        let n = u64::from(w) * u64::from(h);
        Ok(Objects {
            color: app.image(vk::Format::R32G32B32A32_SFLOAT, w, h, sampled)?,
            motion: app.image(vk::Format::R32G32_SFLOAT, w, h, sampled)?,
            output: app.image(
                vk::Format::R16G16B16A16_SFLOAT,
                w,
                h,
                vk::ImageUsageFlags::STORAGE | vk::ImageUsageFlags::TRANSFER_SRC,
            )?,
            staging: app.host_buffer(n * 24, vk::BufferUsageFlags::TRANSFER_SRC)?,
            readback: app.host_buffer(n * 8, vk::BufferUsageFlags::TRANSFER_DST)?,
            queries: app.query_pool(2 * frames.max(1))?,
        })
    }

    /// Free the objects (the images and buffers on drop), with the device idle.
    fn free(self, app: &App) {
        app.free_query_pool(self.queries);
    }
}

/// Init -> CreateFeature1 -> EvaluateFeature_C per frame -> ReleaseFeature -> Shutdown1.
fn run_ngx(
    app: &App,
    obj: &Objects,
    w: u32,
    h: u32,
    inputs: &[InputFrame],
    route: Route,
) -> Result<Vec<FrameOut>, String> {
    ngx_session(app, || {
        with_params(c"DLSSNR.Available", |params| {
            frames_on(app, obj, w, h, inputs, params, route)
        })
    })
}

fn frames_on(
    app: &App,
    obj: &Objects,
    w: u32,
    h: u32,
    inputs: &[InputFrame],
    params: *mut NVSDK_NGX_Parameter,
    route: Route,
) -> Result<Vec<FrameOut>, String> {
    set_ui(params, c"DLSSNR.Width", w);
    set_ui(params, c"DLSSNR.Height", h);
    let tensor = route == Route::Tensor;
    set_ui(params, c"OpenNGX.Route", if tensor { 2 } else { 1 });
    set_ui(params, c"OpenNGX.TensorFeaturesEnabled", u32::from(tensor));
    let handle = create_feature(app, NVSDK_NGX_Feature_Reserved18, params, &obj.output)?;
    let mut active = 0u32;
    // SAFETY: a live map and a valid out pointer; a missing key leaves 0.
    unsafe { NVSDK_NGX_Parameter_GetUI(params, c"OpenNGX.ActiveRoute".as_ptr(), &mut active) };
    println!(
        "route: {}",
        match active {
            2 => "tensor (h25, cooperative matrices)",
            1 => "exact (f13)",
            _ => "unknown",
        }
    );
    let mut color = resource(&obj.color, false);
    let mut motion = resource(&obj.motion, false);
    let mut output = resource(&obj.output, true);
    set_vp(
        params,
        c"DLSSNR.Color",
        (&mut color as *mut NVSDK_NGX_Resource_VK).cast(),
    );
    set_vp(
        params,
        c"DLSSNR.Output",
        (&mut output as *mut NVSDK_NGX_Resource_VK).cast(),
    );
    let mut outs = Vec::new();
    let mut failure = None;
    for (i, f) in inputs.iter().enumerate() {
        let label = format!("frame {i}: EvaluateFeature on {}", app.device_name);
        let (r, wall_s) = step(&label, || {
            evaluate_frame(app, obj, w, h, f, i as u32, params, handle, &mut motion)
        });
        match r {
            Ok((output, gpu_ms)) => outs.push(FrameOut {
                output,
                gpu_ms,
                wall_s,
            }),
            Err(e) => {
                failure = Some(e);
                break;
            }
        }
    }
    // SAFETY: the handle came from CreateFeature1; its work has completed.
    let r = unsafe { NVSDK_NGX_VULKAN_ReleaseFeature(handle) };
    if let Some(e) = failure {
        return Err(e);
    }
    check("NVSDK_NGX_VULKAN_ReleaseFeature", r)?;
    Ok(outs)
}

#[allow(clippy::too_many_arguments)]
fn evaluate_frame(
    app: &App,
    obj: &Objects,
    w: u32,
    h: u32,
    f: &InputFrame,
    index: u32,
    params: *mut NVSDK_NGX_Parameter,
    handle: *mut NVSDK_NGX_Handle,
    motion: &mut NVSDK_NGX_Resource_VK,
) -> Result<(Vec<[u16; 4]>, Option<f64>), String> {
    let proxy: Vec<u8> = f
        .proxy
        .iter()
        .flat_map(|p| p.iter().flat_map(|c| c.to_le_bytes()))
        .collect();
    obj.staging.write(0, &proxy).map_err(demo_error)?;
    app.begin()?;
    app.upload_image(&obj.staging, 0, &obj.color);
    match &f.motion {
        Some(m) => {
            let bytes: Vec<u8> = m
                .iter()
                .flat_map(|p| p.iter().flat_map(|c| c.to_le_bytes()))
                .collect();
            obj.staging
                .write(proxy.len() as u64, &bytes)
                .map_err(demo_error)?;
            app.upload_image(&obj.staging, proxy.len() as u64, &obj.motion);
            set_vp(
                params,
                c"DLSSNR.MVec",
                (motion as *mut NVSDK_NGX_Resource_VK).cast(),
            );
        }
        None => set_vp(params, c"DLSSNR.MVec", std::ptr::null_mut()),
    }
    let (r, q) = record_timed(app, obj.queries, index, || {
        // SAFETY: a recording command buffer, a live handle and map.
        unsafe { NVSDK_NGX_VULKAN_EvaluateFeature_C(app.cmd, handle, params, None) }
    });
    app.read_image(&obj.output, &obj.readback);
    let submitted = app.submit_and_wait();
    check("NVSDK_NGX_VULKAN_EvaluateFeature_C", r)?;
    submitted?;
    let bytes = obj
        .readback
        .read((w * h * 8) as usize)
        .map_err(demo_error)?;
    let output = bytes
        .chunks_exact(8)
        .map(|c| {
            [
                u16::from_le_bytes([c[0], c[1]]),
                u16::from_le_bytes([c[2], c[3]]),
                u16::from_le_bytes([c[4], c[5]]),
                u16::from_le_bytes([c[6], c[7]]),
            ]
        })
        .collect();
    Ok((
        output,
        q.and_then(|(pool, first)| app.elapsed_ms(pool, first)),
    ))
}

// ---------------------------------------------------------------------------------------------
// The CPU route

/// Every frame through the CPU reference pipeline (prepare, network, compose, history).
fn run_cpu(
    model_dir: &Path,
    w: u32,
    h: u32,
    inputs: &[InputFrame],
) -> Result<Vec<FrameOut>, String> {
    let (model, _) = step("loading the model", || {
        Model::load(model_dir, LoadOptions { verify_sha: false }).map_err(|e| e.to_string())
    });
    let model = model?;
    let mut pipe = CpuPipeline::new(&model, w, h, Profiles::NATIVE).map_err(|e| e.to_string())?;
    let mut outs = Vec::with_capacity(inputs.len());
    for (i, f) in inputs.iter().enumerate() {
        let (r, wall_s) = step(&format!("frame {i} on the CPU reference"), || {
            pipe.run_frame(&FrameParams::default(), &f.proxy, f.motion.as_deref())
                .map_err(|e| e.to_string())
        });
        outs.push(FrameOut {
            output: r?.output,
            gpu_ms: None,
            wall_s,
        });
    }
    Ok(outs)
}

// ---------------------------------------------------------------------------------------------
// The demo

fn run_inner(args: &Args) -> Result<bool, String> {
    // Model: given, or the synthetic one in the cache directory.
    let model_dir = match &args.model {
        Some(d) => d.clone(),
        None => cached_model("model-seed0", |d| {
            synth::write_model(d, 0, &SynthParams::DEFAULT, false)
                .map(|_| ())
                .map_err(|e| e.to_string())
        })?,
    };
    // The library finds the model through its documented lookup; an explicit directory wins.
    std::env::set_var("OPENNGX_MODEL_DIR", &model_dir);

    // Inputs.
    let files = match &args.input {
        Some(spec) => Some(input_files(spec)?),
        None => None,
    };
    let (w, h) = match (&files, args.width, args.height) {
        (_, Some(w), Some(h)) => (w, h),
        (Some(f), w, h) => {
            let (pw, ph) = png_size(&f[0])?;
            (w.unwrap_or(pw), h.unwrap_or(ph))
        }
        (None, w, h) => (w.unwrap_or(64), h.unwrap_or(64)),
    };
    if !(64..=8192).contains(&w) || !(64..=8192).contains(&h) {
        return Err(format!("{w}x{h}: DLSS-NR takes 64..8192 pixels per axis"));
    }
    let geometry = Geometry::new(w, h).map_err(|e| e.to_string())?;
    // The application's device (exact route). On a CPU implementation such as lavapipe each
    // network evaluation takes minutes, so the synthetic scene defaults to one frame there.
    // `tensor`: the kit enables the tensor route's features where the device offers them, and
    // the creation asks for the route and states them (docs/ngx.md "Route choice").
    let app = match args.route {
        Route::Exact | Route::Tensor => Some(App::new(args.device)?),
        Route::Cpu => None,
    };
    let on_cpu_device = app.as_ref().is_some_and(|a| a.is_cpu);
    let count = args.frames.unwrap_or(match &files {
        Some(f) => f.len() as u32,
        None if on_cpu_device => 1,
        None => 3,
    });
    if count == 0 {
        return Err("--frames must be at least 1".into());
    }
    let inputs: Vec<InputFrame> = match &files {
        Some(f) => f
            .iter()
            .cycle()
            .take(count as usize)
            .map(|p| {
                Ok(InputFrame {
                    proxy: image::read_png_rgba(p, w, h).map_err(|e| e.to_string())?,
                    motion: None,
                    source: p.display().to_string(),
                })
            })
            .collect::<Result<_, String>>()?,
        None => (0..count)
            .map(|n| {
                let s = scene::render(w, h, n);
                InputFrame {
                    proxy: s.proxy,
                    motion: Some(s.motion),
                    source: format!("synthetic scene frame {n}"),
                }
            })
            .collect(),
    };
    println!(
        "openngx demo: {w}x{h} (field {}x{}), {count} frame(s), model {}",
        geometry.field.w,
        geometry.field.h,
        model_dir.display()
    );

    let outs = match app {
        Some(app) => {
            // The frames through NGX on the application's device.
            println!("device: {}", app.device_name);
            let obj = Objects::new(&app, w, h, count)?;
            let result = run_ngx(&app, &obj, w, h, &inputs, args.route);
            // SAFETY: our device.
            unsafe {
                let _ = app.kit.device.device_wait_idle();
            }
            obj.free(&app);
            drop(app);
            result?
        }
        None => run_cpu(&model_dir, w, h, &inputs)?,
    };

    // Frame 0 against the CPU reference (the CPU route is the reference itself).
    let exact = if args.no_check || args.route == Route::Cpu {
        None
    } else {
        let (r, _) = step(
            "CPU reference of frame 0 (bit-exactness check)",
            || -> Result<bool, String> {
                let model = Model::load(&model_dir, LoadOptions { verify_sha: false })
                    .map_err(|e| e.to_string())?;
                // The reference in the profile the route computes.
                let profiles = if args.route == Route::Tensor {
                    Profiles::H25
                } else {
                    Profiles::NATIVE
                };
                let mut pipe =
                    CpuPipeline::new(&model, w, h, profiles).map_err(|e| e.to_string())?;
                let f = &inputs[0];
                let cpu = pipe
                    .run_frame(&FrameParams::default(), &f.proxy, f.motion.as_deref())
                    .map_err(|e| e.to_string())?;
                Ok(cpu.output == outs[0].output)
            },
        );
        Some(r?)
    };

    // Pictures and summary.
    std::fs::create_dir_all(&args.out).map_err(|e| format!("{}: {e}", args.out.display()))?;
    let mut summary = format!(
        "openngx demo\nsize {w}x{h} (field {}x{})\nmodel {}\nframes {count}\n",
        geometry.field.w,
        geometry.field.h,
        model_dir.display()
    );
    for (i, (f, o)) in inputs.iter().zip(&outs).enumerate() {
        let path = args.out.join(format!("frame_{i:03}.png"));
        let input: Vec<[f32; 3]> = f.proxy.iter().map(|p| [p[0], p[1], p[2]]).collect();
        write_side_by_side(&path, &input, (w, h), &half_rgb(&o.output), (w, h))?;
        let gpu = o
            .gpu_ms
            .map_or("n/a".to_owned(), |ms| format!("{ms:.1} ms"));
        let line = format!(
            "frame {i}: GPU {gpu}, wall {:.1} s, {} -> {}",
            o.wall_s,
            f.source,
            path.display()
        );
        println!("{line}");
        summary += &line;
        summary.push('\n');
    }
    let verdict = match exact {
        Some(true) => "frame 0: bit-exact against the CPU reference".to_owned(),
        Some(false) => "frame 0: DIFFERS from the CPU reference".to_owned(),
        None if args.route == Route::Cpu => "frame 0: the CPU reference itself".to_owned(),
        None => "frame 0: not checked (--no-check)".to_owned(),
    };
    println!("{verdict}");
    summary += &verdict;
    summary.push('\n');
    let path = args.out.join("summary.txt");
    std::fs::write(&path, summary).map_err(|e| format!("{}: {e}", path.display()))?;
    println!(
        "wrote {} (input | output side by side) and summary.txt",
        args.out.display()
    );
    Ok(exact != Some(false))
}

#[cfg(test)]
mod tests {
    use super::wildcard;

    #[test]
    fn wildcards_match_file_names() {
        assert!(wildcard(b"frame_*.png", b"frame_001.png"));
        assert!(wildcard(b"*.png", b".png"));
        assert!(wildcard(b"f?.png", b"f1.png"));
        assert!(!wildcard(b"f?.png", b"f12.png"));
        assert!(!wildcard(b"frame_*.png", b"frame_001.jpg"));
        assert!(wildcard(b"*", b"anything"));
    }
}
