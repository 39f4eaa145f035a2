//! What both demos (DLSS-NR's in `demo.rs`, Ray Reconstruction's in `demo/rr.rs`) share: the
//! progress lines, the synthetic model in the cache directory, the NGX session (Init and
//! Shutdown), the parameter map behind a capability check, the feature's creation, the timed
//! evaluation and the side-by-side picture.

use std::ffi::CStr;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use ash::vk::{self, Handle};
use openngx::ngx::abi::*;
use openngx::ngx::exports::*;
use openngx::ngx::param_exports::*;
use openngx::numerics::f16;
use openngx_tools::image;

use super::vulkan::{App, Image};

/// Runs `f` while a line on stderr shows the step and its elapsed time (a terminal gets a live
/// line, anything else one line when the step ends). Returns the result and the seconds taken.
pub fn step<T>(label: &str, f: impl FnOnce() -> T) -> (T, f64) {
    let start = Instant::now();
    let live = std::io::stderr().is_terminal();
    let stop = Arc::new(AtomicBool::new(false));
    let ticker = live.then(|| {
        let stop = Arc::clone(&stop);
        let label = label.to_owned();
        std::thread::spawn(move || {
            const SPIN: [char; 4] = ['|', '/', '-', '\\'];
            let mut i = 0;
            while !stop.load(Ordering::Relaxed) {
                std::thread::sleep(std::time::Duration::from_millis(200));
                let t = start.elapsed().as_secs_f64();
                if t >= 1.0 {
                    eprint!("\r\x1b[2K{} {label} {t:.0} s", SPIN[i % 4]);
                    let _ = std::io::stderr().flush();
                    i += 1;
                }
            }
        })
    });
    let r = f();
    stop.store(true, Ordering::Relaxed);
    if let Some(t) = ticker {
        let _ = t.join();
    }
    let secs = start.elapsed().as_secs_f64();
    if live {
        eprintln!("\r\x1b[2K{label}: {secs:.1} s");
    } else {
        eprintln!("{label}: {secs:.1} s");
    }
    (r, secs)
}

/// A default model location: `$XDG_CACHE_HOME/openngx/NAME` or `~/.cache/openngx/NAME`
/// (`model-seed0` for DLSS-NR, `rr-model-seed0` for RR).
pub fn default_model_dir(name: &str) -> Result<PathBuf, String> {
    let base = match std::env::var_os("XDG_CACHE_HOME").filter(|v| !v.is_empty()) {
        Some(d) => PathBuf::from(d),
        None => match std::env::var_os("HOME").filter(|v| !v.is_empty()) {
            Some(h) => PathBuf::from(h).join(".cache"),
            None => return Err("neither XDG_CACHE_HOME nor HOME is set: pass --model DIR".into()),
        },
    };
    Ok(base.join("openngx").join(name))
}

/// The synthetic model in the cache directory `name` (see [`default_model_dir`]), written by
/// `synthesize` on first use.
pub fn cached_model(
    name: &str,
    synthesize: impl FnOnce(&Path) -> Result<(), String>,
) -> Result<PathBuf, String> {
    let d = default_model_dir(name)?;
    if !d.join("manifest.json").is_file() {
        let parent = d.parent().ok_or("bad cache directory")?;
        std::fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
        let (r, _) = step(
            &format!("synthesizing the model into {}", d.display()),
            || synthesize(&d),
        );
        r?;
    }
    Ok(d)
}

/// `Ok` for `NVSDK_NGX_Result_Success`, else the call, the code and its name.
pub fn check(call: &str, r: NVSDK_NGX_Result) -> Result<(), String> {
    if r == NVSDK_NGX_Result_Success {
        return Ok(());
    }
    // SAFETY: the library returns a static NUL-terminated wide string.
    let name = unsafe {
        let p = GetNGXResultAsString(r);
        let mut s = String::new();
        if !p.is_null() {
            let mut i = 0;
            while *p.add(i) != 0 && i < 128 {
                s.push(char::from_u32(*p.add(i) as u32).unwrap_or('?'));
                i += 1;
            }
        }
        s
    };
    Err(format!(
        "{call} returned {r:#010x} ({name}); run with OPENNGX_LOG=1 for the library's reason"
    ))
}

/// `NVSDK_NGX_VULKAN_Init` on the app's device, `f`, then `Shutdown1` (also when `f` failed).
pub fn ngx_session<T>(app: &App, f: impl FnOnce() -> Result<T, String>) -> Result<T, String> {
    let data_path: Vec<wchar_t> = std::env::temp_dir()
        .to_string_lossy()
        .chars()
        .map(|c| c as wchar_t)
        .chain([0])
        .collect();
    // SAFETY: the app's live handles, the loader's proc addrs, a NUL-terminated wide path.
    let r = unsafe {
        NVSDK_NGX_VULKAN_Init(
            0x0de3,
            data_path.as_ptr(),
            vk::Instance::from_raw(app.kit.instance.handle().as_raw()),
            app.kit.physical,
            app.kit.device.handle(),
            Some(app.kit.entry.static_fn().get_instance_proc_addr),
            Some(app.kit.instance.fp_v1_0().get_device_proc_addr),
            std::ptr::null(),
            NVSDK_NGX_Version_API,
        )
    };
    check("NVSDK_NGX_VULKAN_Init", r)?;
    let result = f();
    let r = NVSDK_NGX_VULKAN_Shutdown1(app.kit.device.handle());
    let out = result?;
    check("NVSDK_NGX_VULKAN_Shutdown1", r)?;
    Ok(out)
}

/// Refuses to go on unless the capability `available` (an int) is 1; then allocates a
/// parameter map for `f` and destroys it after.
pub fn with_params<T>(
    available: &CStr,
    f: impl FnOnce(*mut NVSDK_NGX_Parameter) -> Result<T, String>,
) -> Result<T, String> {
    let mut caps = std::ptr::null_mut();
    // SAFETY: valid out pointer.
    check("GetCapabilityParameters", unsafe {
        NVSDK_NGX_VULKAN_GetCapabilityParameters(&mut caps)
    })?;
    let mut value = 0i32;
    // SAFETY: a live map; a missing key leaves `value` at 0.
    unsafe {
        NVSDK_NGX_Parameter_GetI(caps, available.as_ptr(), &mut value);
        NVSDK_NGX_VULKAN_DestroyParameters(caps);
    }
    if value != 1 {
        return Err(format!(
            "{} is 0: this build has no backend for the feature",
            available.to_string_lossy()
        ));
    }
    let mut params = std::ptr::null_mut();
    // SAFETY: valid out pointer.
    check("AllocateParameters", unsafe {
        NVSDK_NGX_VULKAN_AllocateParameters(&mut params)
    })?;
    let r = f(params);
    // SAFETY: our map.
    unsafe { NVSDK_NGX_VULKAN_DestroyParameters(params) };
    r
}

/// `CreateFeature1` of `feature` with the creation parameters already in `params`, recorded
/// into the app's command buffer after the transition of `output` to `GENERAL` and submitted on
/// its own (the one-time uploads, the weights), so that the frames' timestamps measure the
/// evaluations alone.
pub fn create_feature(
    app: &App,
    feature: NVSDK_NGX_Feature,
    params: *mut NVSDK_NGX_Parameter,
    output: &Image,
) -> Result<*mut NVSDK_NGX_Handle, String> {
    let mut handle: *mut NVSDK_NGX_Handle = std::ptr::null_mut();
    let (created, _) = step(
        "creating the feature (model load, weight upload)",
        || -> Result<(), String> {
            app.begin()?;
            app.transition(
                output.image,
                vk::ImageLayout::UNDEFINED,
                vk::ImageLayout::GENERAL,
                vk::AccessFlags::empty(),
                vk::AccessFlags::SHADER_WRITE,
                vk::PipelineStageFlags::TOP_OF_PIPE,
                vk::PipelineStageFlags::COMPUTE_SHADER,
            );
            // SAFETY: our device, a recording command buffer, a live map, a valid out pointer.
            let r = unsafe {
                NVSDK_NGX_VULKAN_CreateFeature1(
                    app.kit.device.handle(),
                    app.cmd,
                    feature,
                    params,
                    &mut handle,
                )
            };
            let submitted = app.submit_and_wait();
            check("NVSDK_NGX_VULKAN_CreateFeature1", r)?;
            submitted
        },
    );
    created?;
    Ok(handle)
}

/// Records `evaluate` (the app's command buffer is recording) between timestamps `2 * index`
/// and `2 * index + 1` of `pool`, after a barrier that makes everything recorded before it (the
/// uploads) finish first, so the span is the evaluation's. Returns its result and the query
/// pair to read after the submission.
pub fn record_timed<R>(
    app: &App,
    pool: Option<vk::QueryPool>,
    index: u32,
    evaluate: impl FnOnce() -> R,
) -> (R, Option<(vk::QueryPool, u32)>) {
    let q = pool.map(|pool| (pool, 2 * index));
    // SAFETY: recording command buffer; queries `first`, `first + 1` exist in the pool.
    unsafe {
        if let Some((pool, first)) = q {
            app.kit.device.cmd_reset_query_pool(app.cmd, pool, first, 2);
            let all = [vk::MemoryBarrier::default()
                .src_access_mask(vk::AccessFlags::MEMORY_WRITE)
                .dst_access_mask(vk::AccessFlags::MEMORY_READ | vk::AccessFlags::MEMORY_WRITE)];
            app.kit.device.cmd_pipeline_barrier(
                app.cmd,
                vk::PipelineStageFlags::ALL_COMMANDS,
                vk::PipelineStageFlags::ALL_COMMANDS,
                vk::DependencyFlags::empty(),
                &all,
                &[],
                &[],
            );
            app.kit.device.cmd_write_timestamp(
                app.cmd,
                vk::PipelineStageFlags::BOTTOM_OF_PIPE,
                pool,
                first,
            );
        }
    }
    let r = evaluate();
    if let Some((pool, first)) = q {
        // SAFETY: as above.
        unsafe {
            app.kit.device.cmd_write_timestamp(
                app.cmd,
                vk::PipelineStageFlags::BOTTOM_OF_PIPE,
                pool,
                first + 1,
            )
        };
    }
    (r, q)
}

/// `output` (`R16G16B16A16_SFLOAT` texels) as RGB.
pub fn half_rgb(output: &[[u16; 4]]) -> Vec<[f32; 3]> {
    output
        .iter()
        .map(|p| [f16::to_f32(p[0]), f16::to_f32(p[1]), f16::to_f32(p[2])])
        .collect()
}

/// Writes `input | output` side by side as one PNG of `2 * out.0` x `out.1`: the input
/// (`inp.0` x `inp.1`) upscaled to the output's size by nearest neighbour (pixel centres), so
/// a render-resolution input and an upscaled output line up.
pub fn write_side_by_side(
    path: &Path,
    input: &[[f32; 3]],
    inp: (u32, u32),
    output: &[[f32; 3]],
    out: (u32, u32),
) -> Result<(), String> {
    let (ow, oh) = (out.0 as usize, out.1 as usize);
    let (iw, ih) = (inp.0 as usize, inp.1 as usize);
    if input.len() != iw * ih || output.len() != ow * oh || ow == 0 || oh == 0 {
        return Err(format!("{}: picture sizes do not match", path.display()));
    }
    let mut rgb = Vec::with_capacity(2 * ow * oh);
    for y in 0..oh {
        let sy = (y * ih) / oh;
        rgb.extend((0..ow).map(|x| input[sy * iw + (x * iw) / ow]));
        rgb.extend_from_slice(&output[y * ow..(y + 1) * ow]);
    }
    image::write_png_rgb(path, 2 * out.0, out.1, &rgb).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn side_by_side_upscales_the_input_by_nearest_neighbour() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("p.png");
        let (red, blue, green) = ([1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, 1.0, 0.0]);
        // A 2x1 input beside a 4x2 output: each input pixel covers 2x2 output pixels.
        write_side_by_side(&path, &[red, blue], (2, 1), &[green; 8], (4, 2)).expect("write");
        let px = image::read_png_rgba(&path, 8, 2).expect("read");
        let want = [red, red, blue, blue, green, green, green, green];
        for y in 0..2 {
            for (x, w) in want.iter().enumerate() {
                let p = px[y * 8 + x];
                assert_eq!([p[0], p[1], p[2]], *w, "pixel ({x}, {y})");
            }
        }
        // Sizes that do not match the pixels are refused.
        assert!(write_side_by_side(&path, &[red], (2, 1), &[green; 8], (4, 2)).is_err());
    }
}
