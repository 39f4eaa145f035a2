//! `openngx demo --feature rr`: Ray Reconstruction (feature 13, DLSS-D) end to end the way a
//! path-traced game uses it, through the public C ABI on the demo's own Vulkan device:
//! `NVSDK_NGX_VULKAN_Init` -> `CreateFeature1(RayReconstruction)` with the
//! `NGX_VULKAN_CREATE_DLSSD_EXT1` parameters -> `EvaluateFeature_C` per frame with the colour,
//! depth, motion vectors and every guide (`NGX_VULKAN_EVALUATE_DLSSD_EXT`) -> `ReleaseFeature`
//! -> `Shutdown1`. The frames are RR's synthetic path-traced-looking scene (`rr::frame::scene`:
//! per-pixel hashed sample noise and sparse fireflies over a smooth lit, textured surface that
//! pans, with albedos, normals, roughness, hit distances, depth, motion and a depth-of-field
//! guide). The model is synthesized on first use (as `synth-model --feature rr`) into the cache
//! directory. Each frame gives a side-by-side PNG `noisy input | output` (the render-size input
//! upscaled nearest to the output size), its GPU time (timestamps around the evaluation), and
//! every frame's output is compared bit for bit with the CPU reference (`rr::cpu_frame`) run on
//! the same inputs and parameters in sequence (the feature keeps its history on the GPU, the
//! CPU frame its own).

use std::ffi::{c_void, CString};
use std::path::Path;

use ash::vk;
use openngx::model::LoadOptions;
use openngx::ngx::abi::*;
use openngx::ngx::exports::*;
use openngx::ngx::param_exports::*;
use openngx::rr::cpu_frame::{CpuFrame, FrameParams};
use openngx::rr::feature::{Guide, MIN_OUTPUT, MIN_RENDER};
use openngx::rr::frame::scene::{self, SceneFrame};
use openngx::rr::geometry::{Geometry, Size};
use openngx::rr::graph::guide::LANES;
use openngx::rr::keys;
use openngx::rr::preset::Preset;
use openngx::rr::weights::model::RrModel;
use openngx_tools::devkit::ngx_resource;
use openngx_tools::rr_synth::{write_model, RrSynthParams};

use super::shared::{
    cached_model, check, create_feature, half_rgb, ngx_session, record_timed, step, with_params,
    write_side_by_side,
};
use super::vulkan::{demo_error, App, HostBuffer, Image};
use super::Args;
use crate::rr_gpu::parse_preset;

/// The caller's image of one guide (or the colour): `lanes` of the colour or guide values from
/// `first`, in a float format of `texel` channels (zero-padded), so the values reach the network
/// unchanged.
struct GuideImage {
    guide: Guide,
    first: usize,
    lanes: usize,
    texel: usize,
    img: Image,
}

/// Everything the app creates on its device for the frames.
struct Objects {
    guides: Vec<GuideImage>,
    output: Image,
    staging: HostBuffer,
    readback: HostBuffer,
    queries: Option<vk::QueryPool>,
}

impl Objects {
    fn new(app: &App, render: Size, output: Size, frames: u32) -> Result<Objects, String> {
        let sampled = vk::ImageUsageFlags::SAMPLED | vk::ImageUsageFlags::TRANSFER_DST;
        let mut guides = Vec::new();
        let mut staging = 0u64;
        for g in Guide::ALL {
            let (first, lanes) = match (g, g.lanes()) {
                (Guide::Color, _) => (0, 4),
                (_, Some(l)) => l,
                // The exposure texture: the feature's own exposure stage runs instead.
                (_, None) => continue,
            };
            // One float channel per lane; depth as one R32 channel (a format the DLSSD depth
            // accepts besides the depth formats).
            let (format, texel) = match lanes {
                1 => (vk::Format::R32_SFLOAT, 1),
                2 => (vk::Format::R32G32_SFLOAT, 2),
                _ => (vk::Format::R32G32B32A32_SFLOAT, 4),
            };
            staging += (render.area() * texel * 4) as u64;
            guides.push(GuideImage {
                guide: g,
                first,
                lanes,
                texel,
                img: app.image(format, render.w, render.h, sampled)?,
            });
        }
        Ok(Objects {
            guides,
            output: app.image(
                vk::Format::R16G16B16A16_SFLOAT,
                output.w,
                output.h,
                vk::ImageUsageFlags::STORAGE | vk::ImageUsageFlags::TRANSFER_SRC,
            )?,
            staging: app.host_buffer(staging, vk::BufferUsageFlags::TRANSFER_SRC)?,
            readback: app
                .host_buffer(output.area() as u64 * 8, vk::BufferUsageFlags::TRANSFER_DST)?,
            queries: app.query_pool(2 * frames.max(1))?,
        })
    }

    /// Free the query pool (the images and buffers on drop), with the device idle.
    fn free(self, app: &App) {
        app.free_query_pool(self.queries);
    }
}

/// One frame of the sequence: the scene and the parameters it is evaluated with.
struct Frame {
    scene: SceneFrame,
    params: FrameParams,
}

/// What one evaluation gave.
struct FrameOut {
    /// The `Output` image's bytes (`R16G16B16A16_SFLOAT`, rows of the output width).
    output: Vec<u8>,
    gpu_ms: Option<f64>,
    wall_s: f64,
}

fn key(k: &str) -> Result<CString, String> {
    CString::new(k).map_err(|_| format!("parameter name `{k}` holds a NUL"))
}

fn set_ui(p: *mut NVSDK_NGX_Parameter, k: &str, v: u32) -> Result<(), String> {
    let k = key(k)?;
    // SAFETY: a live parameter map and a NUL-terminated name.
    unsafe { NVSDK_NGX_Parameter_SetUI(p, k.as_ptr(), v) };
    Ok(())
}

fn set_i(p: *mut NVSDK_NGX_Parameter, k: &str, v: i32) -> Result<(), String> {
    let k = key(k)?;
    // SAFETY: as in `set_ui`.
    unsafe { NVSDK_NGX_Parameter_SetI(p, k.as_ptr(), v) };
    Ok(())
}

fn set_f(p: *mut NVSDK_NGX_Parameter, k: &str, v: f32) -> Result<(), String> {
    let k = key(k)?;
    // SAFETY: as in `set_ui`.
    unsafe { NVSDK_NGX_Parameter_SetF(p, k.as_ptr(), v) };
    Ok(())
}

fn set_vp(p: *mut NVSDK_NGX_Parameter, k: &str, v: *mut c_void) -> Result<(), String> {
    let k = key(k)?;
    // SAFETY: as in `set_ui`; the pointee outlives every Evaluate that reads it.
    unsafe { NVSDK_NGX_Parameter_SetVoidPointer(p, k.as_ptr(), v) };
    Ok(())
}

/// The creation parameters (`NGX_VULKAN_CREATE_DLSSD_EXT1`): the sizes, DLAA with the preset's
/// hint, HDR colour with render-resolution motion vectors, the denoiser on, unpacked roughness,
/// linear depth.
fn set_create(p: *mut NVSDK_NGX_Parameter, g: &Geometry, preset: Preset) -> Result<(), String> {
    set_ui(p, keys::CREATION_NODE_MASK, 1)?;
    set_ui(p, keys::VISIBILITY_NODE_MASK, 1)?;
    set_ui(p, keys::WIDTH, g.render.w)?;
    set_ui(p, keys::HEIGHT, g.render.h)?;
    set_ui(p, keys::OUT_WIDTH, g.output.w)?;
    set_ui(p, keys::OUT_HEIGHT, g.output.h)?;
    set_i(
        p,
        keys::PERF_QUALITY_VALUE,
        NVSDK_NGX_PerfQuality_Value_DLAA as i32,
    )?;
    // NVSDK_NGX_DLSS_Feature_Flags_IsHDR | NVSDK_NGX_DLSS_Feature_Flags_MVLowRes.
    set_i(p, keys::CREATE_FLAGS, 0b11)?;
    set_i(p, keys::ENABLE_OUTPUT_SUBRECTS, 0)?;
    set_i(p, keys::DENOISE_MODE, 1)?;
    set_ui(p, keys::ROUGHNESS_MODE, 0)?;
    set_ui(p, keys::USE_HW_DEPTH, 0)?;
    set_ui(p, &format!("{}DLAA", keys::PRESET_PREFIX), preset.hint())
}

/// The per-frame scalars of `NGX_VULKAN_EVALUATE_DLSSD_EXT` from `f` (one source for the GPU
/// and the CPU reference).
fn set_frame(p: *mut NVSDK_NGX_Parameter, f: &FrameParams) -> Result<(), String> {
    set_f(p, keys::JITTER_X, f.jitter[0])?;
    set_f(p, keys::JITTER_Y, f.jitter[1])?;
    set_f(p, keys::MV_SCALE_X, f.mv_scale[0])?;
    set_f(p, keys::MV_SCALE_Y, f.mv_scale[1])?;
    set_f(p, keys::PRE_EXPOSURE, f.pre_exposure)?;
    set_f(p, keys::EXPOSURE_SCALE, f.exposure_scale)?;
    set_i(p, keys::RESET, i32::from(f.reset))
}

/// Record the upload of one frame's images from the staging buffer (filled by the caller at
/// `offsets`), each ending in `SHADER_READ_ONLY_OPTIMAL`.
fn upload(app: &App, obj: &Objects, offsets: &[u64]) {
    for (gi, &o) in obj.guides.iter().zip(offsets) {
        app.upload_image(&obj.staging, o, &gi.img);
    }
}

/// Fill the staging buffer with frame `s`'s texels, image after image; returns the offsets.
fn stage(obj: &Objects, s: &SceneFrame, render: Size) -> Result<Vec<u64>, String> {
    let mut offsets = Vec::new();
    let mut off = 0u64;
    for gi in &obj.guides {
        let (src, stride) = if gi.guide == Guide::Color {
            (&s.color, 4)
        } else {
            (&s.guides, LANES)
        };
        let mut bytes = Vec::with_capacity(render.area() * gi.texel * 4);
        for px in 0..render.area() {
            for ch in 0..gi.texel {
                let v = if ch < gi.lanes {
                    src.get(px * stride + gi.first + ch).copied().unwrap_or(0.0)
                } else {
                    0.0
                };
                bytes.extend_from_slice(&v.to_le_bytes());
            }
        }
        obj.staging.write(off, &bytes).map_err(demo_error)?;
        offsets.push(off);
        off += bytes.len() as u64;
    }
    Ok(offsets)
}

/// Create, evaluate every frame, release (inside an NGX session and a parameter map).
fn frames_on(
    app: &App,
    obj: &Objects,
    geometry: &Geometry,
    preset: Preset,
    frames: &[Frame],
    params: *mut NVSDK_NGX_Parameter,
) -> Result<Vec<FrameOut>, String> {
    set_create(params, geometry, preset)?;
    let handle = create_feature(
        app,
        NVSDK_NGX_Feature_RayReconstruction,
        params,
        &obj.output,
    )?;
    // The resources the map points at live until the feature's release.
    let mut resources: Vec<NVSDK_NGX_Resource_VK> = obj
        .guides
        .iter()
        .map(|gi| ngx_resource(&gi.img, gi.img.view, false))
        .collect();
    let mut output = ngx_resource(&obj.output, obj.output.view, true);
    let result = (|| -> Result<Vec<FrameOut>, String> {
        for (gi, res) in obj.guides.iter().zip(resources.iter_mut()) {
            set_vp(
                params,
                gi.guide.key(),
                (res as *mut NVSDK_NGX_Resource_VK).cast(),
            )?;
        }
        set_vp(
            params,
            keys::OUTPUT,
            (&mut output as *mut NVSDK_NGX_Resource_VK).cast(),
        )?;
        let mut outs = Vec::new();
        for (i, f) in frames.iter().enumerate() {
            let label = format!("frame {i}: EvaluateFeature on {}", app.device_name);
            let (r, wall_s) = step(&label, || {
                evaluate(app, obj, geometry.render, f, i as u32, params, handle)
            });
            let (output, gpu_ms) = r?;
            outs.push(FrameOut {
                output,
                gpu_ms,
                wall_s,
            });
        }
        Ok(outs)
    })();
    // SAFETY: the handle came from CreateFeature1; every submission was waited for.
    let r = unsafe { NVSDK_NGX_VULKAN_ReleaseFeature(handle) };
    let outs = result?;
    check("NVSDK_NGX_VULKAN_ReleaseFeature", r)?;
    Ok(outs)
}

/// Upload frame `f`, evaluate it between timestamps, read the output back.
fn evaluate(
    app: &App,
    obj: &Objects,
    render: Size,
    f: &Frame,
    index: u32,
    params: *mut NVSDK_NGX_Parameter,
    handle: *mut NVSDK_NGX_Handle,
) -> Result<(Vec<u8>, Option<f64>), String> {
    let offsets = stage(obj, &f.scene, render)?;
    set_frame(params, &f.params)?;
    app.begin()?;
    upload(app, obj, &offsets);
    let (r, q) = record_timed(app, obj.queries, index, || {
        // SAFETY: a recording command buffer, a live handle and map.
        unsafe { NVSDK_NGX_VULKAN_EvaluateFeature_C(app.cmd, handle, params, None) }
    });
    app.read_image(&obj.output, &obj.readback);
    let submitted = app.submit_and_wait();
    check("NVSDK_NGX_VULKAN_EvaluateFeature_C", r)?;
    submitted?;
    let len = obj.output.width as usize * obj.output.height as usize * 8;
    let bytes = obj.readback.read(len).map_err(demo_error)?;
    Ok((
        bytes,
        q.and_then(|(pool, first)| app.elapsed_ms(pool, first)),
    ))
}

/// The sizes: the render size (default 64x48) and the output size (default 3/2 of it).
fn geometry(args: &Args) -> Result<Geometry, String> {
    if args.input.is_some() {
        return Err("--feature rr runs its synthetic scene (no --input)".into());
    }
    if args.route != openngx::feature::Route::Exact {
        return Err("--feature rr has the exact route only".into());
    }
    let render = Size::new(args.width.unwrap_or(64), args.height.unwrap_or(48));
    let output = Size::new(
        args.out_width.unwrap_or(render.w * 3 / 2),
        args.out_height.unwrap_or(render.h * 3 / 2),
    );
    // The creation's own limits (refused there too, but only after the device is made).
    if render.w < MIN_RENDER
        || render.h < MIN_RENDER
        || output.w < MIN_OUTPUT[0]
        || output.h < MIN_OUTPUT[1]
    {
        return Err(format!(
            "{render} -> {output}: RR takes a render size of at least {MIN_RENDER}x{MIN_RENDER} \
             and an output size of at least {}x{}",
            MIN_OUTPUT[0], MIN_OUTPUT[1]
        ));
    }
    Geometry::new(render, output).map_err(|e| format!("{render} -> {output}: {e}"))
}

/// The CPU reference over the whole sequence: for each frame, whether its output equals the
/// GPU's byte for byte.
fn check_frames(
    model_dir: &Path,
    geometry: Geometry,
    preset: Preset,
    frames: &[Frame],
    outs: &[FrameOut],
) -> Result<Vec<bool>, String> {
    let model =
        RrModel::load(model_dir, LoadOptions { verify_sha: false }).map_err(|e| e.to_string())?;
    let mut cpu = CpuFrame::new(model.weights(), geometry, preset).map_err(|e| e.to_string())?;
    let mut exact = Vec::new();
    for (f, o) in frames.iter().zip(outs) {
        let r = cpu
            .run(&f.params, &f.scene.color, &f.scene.guides)
            .map_err(|e| e.to_string())?;
        let want = r
            .get("output")
            .ok_or("the CPU frame published no output")?
            .to_bytes();
        exact.push(want == o.output);
    }
    Ok(exact)
}

/// Runs the RR demo; `Ok(false)` when a frame differs from the CPU reference.
pub fn run(args: &Args) -> Result<bool, String> {
    let geometry = geometry(args)?;
    let (render, output) = (geometry.render, geometry.output);
    let preset = parse_preset(&args.preset)?;
    let model_dir = match &args.model {
        Some(d) => d.clone(),
        None => cached_model("rr-model-seed0", |d| {
            write_model(d, 0, &RrSynthParams::DEFAULT, false)
                .map(|_| ())
                .map_err(|e| e.to_string())
        })?,
    };
    // The library finds RR's model through its documented lookup; an explicit directory wins.
    std::env::set_var(openngx::ngx::dlss_d::MODEL_DIR_ENV, &model_dir);
    let count = args.frames.unwrap_or(3);
    if count == 0 {
        return Err("--frames must be at least 1".into());
    }
    let frames: Vec<Frame> = (0..count)
        .map(|n| Frame {
            scene: scene::render(render, n),
            params: FrameParams {
                jitter: scene::JITTER[n as usize % scene::JITTER.len()],
                ..FrameParams::default()
            },
        })
        .collect();
    println!(
        "openngx demo --feature rr: {render} -> {output}, preset {}, {count} frame(s), model {}",
        preset.name(),
        model_dir.display()
    );
    let app = App::new(args.device)?;
    println!("device: {}", app.device_name);
    let obj = Objects::new(&app, render, output, count)?;
    let result = ngx_session(&app, || {
        with_params(c"SuperSamplingDenoising.Available", |params| {
            frames_on(&app, &obj, &geometry, preset, &frames, params)
        })
    });
    // SAFETY: our device.
    unsafe {
        let _ = app.kit.device.device_wait_idle();
    }
    obj.free(&app);
    drop(app);
    let outs = result?;

    // Every frame against the CPU reference, run in sequence with the same parameters.
    let exact = if args.no_check {
        None
    } else {
        let (r, _) = step("CPU reference of every frame (bit-exactness check)", || {
            check_frames(&model_dir, geometry, preset, &frames, &outs)
        });
        Some(r?)
    };

    // Pictures and summary.
    std::fs::create_dir_all(&args.out).map_err(|e| format!("{}: {e}", args.out.display()))?;
    let mut summary = format!(
        "openngx demo --feature rr\nrender {render}\noutput {output}\npreset {}\nmodel {}\nframes {count}\n",
        preset.name(),
        model_dir.display()
    );
    for (i, (f, o)) in frames.iter().zip(&outs).enumerate() {
        let path = args.out.join(format!("frame_{i:03}.png"));
        let input: Vec<[f32; 3]> = f
            .scene
            .color
            .chunks_exact(4)
            .map(|p| [p[0], p[1], p[2]])
            .collect();
        let texels: Vec<[u16; 4]> = o
            .output
            .chunks_exact(8)
            .map(|c| [0, 2, 4, 6].map(|k| u16::from_le_bytes([c[k], c[k + 1]])))
            .collect();
        write_side_by_side(
            &path,
            &input,
            (render.w, render.h),
            &half_rgb(&texels),
            (output.w, output.h),
        )?;
        let gpu = o
            .gpu_ms
            .map_or("n/a".to_owned(), |ms| format!("{ms:.1} ms"));
        let verdict = match exact.as_ref().and_then(|e| e.get(i)) {
            Some(true) => ", bit-exact against the CPU reference",
            Some(false) => ", DIFFERS from the CPU reference",
            None => "",
        };
        let line = format!(
            "frame {i}: GPU {gpu}, wall {:.1} s{verdict} -> {}",
            o.wall_s,
            path.display()
        );
        println!("{line}");
        summary += &line;
        summary.push('\n');
    }
    let verdict = match &exact {
        Some(e) if e.iter().all(|&x| x) => {
            format!(
                "all {} frames: bit-exact against the CPU reference",
                e.len()
            )
        }
        Some(e) => format!(
            "{} of {} frames DIFFER from the CPU reference",
            e.iter().filter(|&&x| !x).count(),
            e.len()
        ),
        None => "not checked (--no-check)".to_owned(),
    };
    println!("{verdict}");
    summary += &verdict;
    summary.push('\n');
    let path = args.out.join("summary.txt");
    std::fs::write(&path, summary).map_err(|e| format!("{}: {e}", path.display()))?;
    println!(
        "wrote {} (noisy input | output side by side) and summary.txt",
        args.out.display()
    );
    Ok(exact.is_none_or(|e| e.iter().all(|&x| x)))
}
