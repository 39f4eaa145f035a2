//! Feature 18 end to end through the NGX C ABI on the harness's Vulkan device (lavapipe in CI)
//! with the validation layer: the built-in DLSS-NR backend creates, evaluates (recording into the
//! test's command buffers) and releases features on the synthetic model, and the outputs are
//! compared bit for bit with the CPU pipeline (`CpuPipeline`) frame by frame, temporal history
//! included. Also: Reset and Enabled = 0 semantics, two features of different sizes alive side
//! by side, the memory report, and a broken model directory.
//!
//! The library state is process-wide, so every test takes `LOCK`, initialises NGX on its own
//! harness and shuts it down again.

mod common;

use std::ffi::{c_void, CStr};
use std::path::Path;
use std::sync::{Mutex, OnceLock};
use std::time::Instant;

use ash::vk;
use common::ngx::{ok, stats_size_in_bytes};
use common::{Harness, HostBuffer, TestImage};
use openngx::model::{LoadOptions, Model};
use openngx::ngx::abi::*;
use openngx::ngx::exports::*;
use openngx::ngx::param_exports::*;
use openngx::nr::cpu_frame::CpuPipeline;
use openngx::nr::frame::{scene, FrameParams};
use openngx::numerics::{f16, Profiles};
use openngx_tools::devkit::{copy_region, ngx_resource};

static LOCK: Mutex<()> = Mutex::new(());

/// The synthetic model (seed 0), written once per test process.
fn model_dir() -> &'static Path {
    common::synthetic_model_dir()
}

fn model() -> &'static Model {
    static MODEL: OnceLock<Model> = OnceLock::new();
    MODEL.get_or_init(|| Model::load(model_dir(), LoadOptions { verify_sha: false }).expect("load"))
}

/// CPU outputs of the synthetic scene's frames 0..n at `w x h` with default parameters (cached).
fn cpu_outputs(w: u32, h: u32, n: u32) -> Vec<Vec<[u16; 4]>> {
    type Runs = Mutex<Vec<((u32, u32), Vec<Vec<[u16; 4]>>)>>;
    static RUNS: OnceLock<Runs> = OnceLock::new();
    let runs = RUNS.get_or_init(Default::default);
    let mut runs = runs.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, r)) = runs
        .iter()
        .find(|(k, r)| *k == (w, h) && r.len() >= n as usize)
    {
        return r[..n as usize].to_vec();
    }
    let mut pipe = CpuPipeline::new(model(), w, h, Profiles::NATIVE).expect("cpu pipeline");
    let mut out = Vec::new();
    for i in 0..n {
        let t = Instant::now();
        let s = scene::render(w, h, i);
        let r = pipe
            .run_frame(&FrameParams::default(), &s.proxy, Some(&s.motion))
            .expect("cpu frame");
        eprintln!(
            "CPU frame {i} at {w}x{h}: {:.1} s",
            t.elapsed().as_secs_f64()
        );
        out.push(r.output);
    }
    runs.push(((w, h), out.clone()));
    out
}

/// Record with `f` into a fresh command buffer, submit, wait. Unlike `Harness::submit` the wait
/// is long: a whole network takes lavapipe tens of seconds.
fn submit<R>(h: &Harness, f: impl FnOnce(vk::CommandBuffer) -> R) -> R {
    let info = vk::CommandBufferAllocateInfo::default()
        .command_pool(h.pool)
        .level(vk::CommandBufferLevel::PRIMARY)
        .command_buffer_count(1);
    // SAFETY: the harness's live device, pool and queue; the command buffer is freed after the
    // wait (or after the device is idle when the wait fails).
    unsafe {
        let cmd = h
            .device
            .allocate_command_buffers(&info)
            .expect("vkAllocateCommandBuffers")[0];
        h.device
            .begin_command_buffer(cmd, &vk::CommandBufferBeginInfo::default())
            .expect("vkBeginCommandBuffer");
        let r = f(cmd);
        h.device
            .end_command_buffer(cmd)
            .expect("vkEndCommandBuffer");
        let cmds = [cmd];
        h.device
            .queue_submit(
                h.queue,
                &[vk::SubmitInfo::default().command_buffers(&cmds)],
                vk::Fence::null(),
            )
            .expect("vkQueueSubmit");
        let waited = h.device.queue_wait_idle(h.queue);
        if waited.is_err() {
            let _ = h.device.device_wait_idle();
        }
        h.device.free_command_buffers(h.pool, &cmds);
        waited.expect("vkQueueWaitIdle");
        r
    }
}

/// NGX initialised on the harness's device (shut down on drop).
struct Ngx<'h> {
    h: &'h Harness,
    params: *mut NVSDK_NGX_Parameter,
}

impl<'h> Ngx<'h> {
    fn init(h: &'h Harness) -> Ngx<'h> {
        std::env::set_var("OPENNGX_MODEL_DIR", model_dir());
        let path: Vec<wchar_t> = "/tmp".chars().map(|c| c as wchar_t).chain([0]).collect();
        // SAFETY: the harness's live handles and the loader's proc addrs.
        let r = unsafe {
            NVSDK_NGX_VULKAN_Init(
                7,
                path.as_ptr(),
                h.instance.handle(),
                h.physical,
                h.device.handle(),
                Some(h.gipa()),
                Some(h.gdpa()),
                std::ptr::null(),
                NVSDK_NGX_Version_API,
            )
        };
        ok("Init", r);
        let mut params = std::ptr::null_mut();
        // SAFETY: valid out pointer.
        ok("AllocateParameters", unsafe {
            NVSDK_NGX_VULKAN_AllocateParameters(&mut params)
        });
        Ngx { h, params }
    }

    fn set_ui(&self, k: &CStr, v: u32) {
        // SAFETY: live map, C string.
        unsafe { NVSDK_NGX_Parameter_SetUI(self.params, k.as_ptr(), v) }
    }

    fn set_f(&self, k: &CStr, v: f32) {
        // SAFETY: live map, C string.
        unsafe { NVSDK_NGX_Parameter_SetF(self.params, k.as_ptr(), v) }
    }

    fn set_vp(&self, k: &CStr, v: *mut c_void) {
        // SAFETY: live map, C string; the pointee outlives the Evaluate that reads it.
        unsafe { NVSDK_NGX_Parameter_SetVoidPointer(self.params, k.as_ptr(), v) }
    }

    /// CreateFeature1 recorded into its own submission.
    fn create(&self, w: u32, h: u32) -> Result<*mut NVSDK_NGX_Handle, NVSDK_NGX_Result> {
        self.set_ui(c"DLSSNR.Width", w);
        self.set_ui(c"DLSSNR.Height", h);
        let mut handle = std::ptr::null_mut();
        let t = Instant::now();
        // SAFETY: our device, a recording command buffer, a live map.
        let r = submit(self.h, |cmd| unsafe {
            NVSDK_NGX_VULKAN_CreateFeature1(
                self.h.device.handle(),
                cmd,
                NVSDK_NGX_Feature_Reserved18,
                self.params,
                &mut handle,
            )
        });
        eprintln!("create {w}x{h}: {:.2} s", t.elapsed().as_secs_f64());
        if r == NVSDK_NGX_Result_Success {
            Ok(handle)
        } else {
            Err(r)
        }
    }

    /// `SizeInBytes` from the stats callback of the capability map.
    fn memory_in_use(&self) -> u64 {
        stats_size_in_bytes(c"DLSSNRGetStatsCallback")
    }
}

impl Drop for Ngx<'_> {
    fn drop(&mut self) {
        // SAFETY: our map and device; every submission was waited for.
        unsafe {
            NVSDK_NGX_VULKAN_DestroyParameters(self.params);
            NVSDK_NGX_VULKAN_Shutdown1(self.h.device.handle());
        }
    }
}

/// The caller's images of one feature size, with views and staging.
struct Frames<'h> {
    h: &'h Harness,
    w: u32,
    ht: u32,
    color: (TestImage, vk::ImageView),
    motion: (TestImage, vk::ImageView),
    output: (TestImage, vk::ImageView),
    staging: HostBuffer,
    readback: HostBuffer,
}

fn resource(img: &TestImage, view: vk::ImageView, rw: bool) -> NVSDK_NGX_Resource_VK {
    ngx_resource(img, view, rw)
}

/// Per-frame controls.
#[derive(Clone, Copy)]
struct Controls {
    enabled: bool,
    reset: bool,
    motion: bool,
}

const DEFAULT: Controls = Controls {
    enabled: true,
    reset: false,
    motion: true,
};

impl<'h> Frames<'h> {
    fn new(h: &'h Harness, w: u32, ht: u32) -> Frames<'h> {
        let sampled = vk::ImageUsageFlags::SAMPLED | vk::ImageUsageFlags::TRANSFER_DST;
        let color = h.image(w, ht, vk::Format::R32G32B32A32_SFLOAT, sampled);
        let motion = h.image(w, ht, vk::Format::R32G32_SFLOAT, sampled);
        let output = h.image(
            w,
            ht,
            vk::Format::R16G16B16A16_SFLOAT,
            vk::ImageUsageFlags::STORAGE | vk::ImageUsageFlags::TRANSFER_SRC,
        );
        let (cv, mv, ov) = (h.view(&color), h.view(&motion), h.view(&output));
        let n = u64::from(w) * u64::from(ht);
        // The output lives in GENERAL from the start.
        submit(h, |cmd| {
            h.barrier(
                cmd,
                output.image,
                (vk::ImageLayout::UNDEFINED, vk::ImageLayout::GENERAL),
                (vk::AccessFlags::empty(), vk::AccessFlags::SHADER_WRITE),
                (
                    vk::PipelineStageFlags::TOP_OF_PIPE,
                    vk::PipelineStageFlags::COMPUTE_SHADER,
                ),
            )
        });
        Frames {
            h,
            w,
            ht,
            color: (color, cv),
            motion: (motion, mv),
            output: (output, ov),
            staging: h.host_buffer(n * 24),
            readback: h.host_buffer(n * 8),
        }
    }

    fn upload(&self, cmd: vk::CommandBuffer, img: &TestImage, offset: u64) {
        self.h.upload_image(
            cmd,
            self.staging.buffer,
            img.image,
            vk::ImageAspectFlags::COLOR,
            copy_region(offset, self.w, self.ht),
            (
                vk::AccessFlags::empty(),
                vk::PipelineStageFlags::ALL_COMMANDS,
            ),
        );
    }

    /// Upload the proxy/motion, evaluate `handle` with `c`, read the output back.
    fn evaluate(
        &self,
        ngx: &Ngx,
        handle: *mut NVSDK_NGX_Handle,
        proxy: &[[f32; 4]],
        motion: &[[f32; 2]],
        c: Controls,
    ) -> Result<Vec<[u16; 4]>, NVSDK_NGX_Result> {
        let h = self.h;
        let pbytes: Vec<u8> = proxy
            .iter()
            .flat_map(|p| p.iter().flat_map(|v| v.to_le_bytes()))
            .collect();
        let mbytes: Vec<u8> = motion
            .iter()
            .flat_map(|p| p.iter().flat_map(|v| v.to_le_bytes()))
            .collect();
        self.staging.write(0, &pbytes);
        self.staging.write(pbytes.len(), &mbytes);
        let mut color = resource(&self.color.0, self.color.1, false);
        let mut mv = resource(&self.motion.0, self.motion.1, false);
        let mut out = resource(&self.output.0, self.output.1, true);
        ngx.set_vp(
            c"DLSSNR.Color",
            (&mut color as *mut NVSDK_NGX_Resource_VK).cast(),
        );
        ngx.set_vp(
            c"DLSSNR.Output",
            (&mut out as *mut NVSDK_NGX_Resource_VK).cast(),
        );
        ngx.set_vp(
            c"DLSSNR.MVec",
            if c.motion {
                (&mut mv as *mut NVSDK_NGX_Resource_VK).cast()
            } else {
                std::ptr::null_mut()
            },
        );
        ngx.set_ui(c"DLSSNR.Enabled", u32::from(c.enabled));
        ngx.set_ui(c"DLSSNR.Reset", u32::from(c.reset));
        ngx.set_f(c"DLSSNR.MVecScaleX", 1.0);
        ngx.set_f(c"DLSSNR.MVecScaleY", 1.0);
        let t = Instant::now();
        let r = submit(h, |cmd| {
            self.upload(cmd, &self.color.0, 0);
            self.upload(cmd, &self.motion.0, pbytes.len() as u64);
            // SAFETY: a recording command buffer, a live handle and map.
            let r = unsafe { NVSDK_NGX_VULKAN_EvaluateFeature_C(cmd, handle, ngx.params, None) };
            h.barrier(
                cmd,
                self.output.0.image,
                (vk::ImageLayout::GENERAL, vk::ImageLayout::GENERAL),
                (
                    vk::AccessFlags::SHADER_WRITE,
                    vk::AccessFlags::TRANSFER_READ,
                ),
                (
                    vk::PipelineStageFlags::COMPUTE_SHADER,
                    vk::PipelineStageFlags::TRANSFER,
                ),
            );
            h.copy_to_host(
                cmd,
                self.output.0.image,
                (self.w, self.ht),
                self.readback.buffer,
            );
            r
        });
        eprintln!(
            "evaluate {}x{} (enabled {}, reset {}): {:.1} s",
            self.w,
            self.ht,
            c.enabled,
            c.reset,
            t.elapsed().as_secs_f64()
        );
        if r != NVSDK_NGX_Result_Success {
            return Err(r);
        }
        Ok(self
            .readback
            .read()
            .chunks_exact(8)
            .map(|b| {
                [
                    u16::from_le_bytes([b[0], b[1]]),
                    u16::from_le_bytes([b[2], b[3]]),
                    u16::from_le_bytes([b[4], b[5]]),
                    u16::from_le_bytes([b[6], b[7]]),
                ]
            })
            .collect())
    }
}

impl Drop for Frames<'_> {
    fn drop(&mut self) {
        // SAFETY: every submission was waited for.
        unsafe {
            self.h.device.destroy_image_view(self.color.1, None);
            self.h.device.destroy_image_view(self.motion.1, None);
            self.h.device.destroy_image_view(self.output.1, None);
        }
    }
}

fn release(h: *mut NVSDK_NGX_Handle) {
    // SAFETY: a handle from CreateFeature1 (or a dead one: the library checks).
    ok("ReleaseFeature", unsafe {
        NVSDK_NGX_VULKAN_ReleaseFeature(h)
    });
}

/// First differing half, for a readable failure.
fn first_difference(got: &[[u16; 4]], want: &[[u16; 4]], w: u32) -> Option<String> {
    got.iter()
        .zip(want)
        .enumerate()
        .find(|(_, (g, e))| g != e)
        .map(|(i, (g, e))| {
            format!(
                "pixel ({}, {}): got {g:04X?}, want {e:04X?}",
                i as u32 % w,
                i as u32 / w
            )
        })
}

/// Frames of the scene the sequence test runs (`OPENNGX_FEATURE_FRAMES`, default 1): each 64x64
/// network evaluation takes lavapipe minutes, and the 3-frame temporal sequence through the same
/// code is already proven by `capi-tests/replay.c` (through the C ABI, against a fixture).
fn frames() -> u32 {
    std::env::var("OPENNGX_FEATURE_FRAMES")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&n| n >= 1)
        .unwrap_or(1)
}

/// Everything that needs the network, in one sequence (a 64x64 network evaluation takes lavapipe
/// minutes): a 64x64 feature runs frames 0..frames() of the scene and must equal the CPU pipeline
/// frame by frame (history, seed and motion included); a 96x64 feature lives beside it (its own memory, not
/// a second copy of the weights) and passes disabled frames through; Reset on frame 0's input
/// must give frame 0's bytes again (seed 0, history ignored though valid); a disabled frame is
/// the proxy truncated to f16; then release, double release and evaluate-after-release.
#[test]
fn temporal_sequence_reset_and_disabled_frames_match_the_cpu_pipeline() {
    let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let Some(h) = Harness::new() else { return };
    let want = cpu_outputs(64, 64, frames());
    {
        let ngx = Ngx::init(&h);
        let small = Frames::new(&h, 64, 64);
        let wide = Frames::new(&h, 96, 64);
        let a = ngx.create(64, 64).expect("create 64x64");
        let one = ngx.memory_in_use();
        let b = ngx.create(96, 64).expect("create 96x64");
        let two = ngx.memory_in_use();
        assert!(one > 0);
        assert!(two > one && two - one < one / 2, "{one} then {two}");
        let off = Controls {
            enabled: false,
            ..DEFAULT
        };
        let sb = scene::render(96, 64, 0);
        let truncated = |p: &[[f32; 4]]| -> Vec<[u16; 4]> {
            p.iter().map(|p| p.map(f16::from_f32_rtz)).collect()
        };

        for (i, want) in want.iter().enumerate() {
            let s = scene::render(64, 64, i as u32);
            let got = small
                .evaluate(&ngx, a, &s.proxy, &s.motion, DEFAULT)
                .expect("evaluate");
            assert_eq!(got.len(), want.len());
            assert!(
                got == *want,
                "frame {i}: {}",
                first_difference(&got, want, 64).unwrap_or_default()
            );
            if i == 0 {
                // The other feature, between two frames of the first.
                let pb = wide
                    .evaluate(&ngx, b, &sb.proxy, &sb.motion, off)
                    .expect("96x64 disabled");
                assert!(pb == truncated(&sb.proxy));
                // Images of the other size are refused.
                assert_eq!(
                    small.evaluate(&ngx, b, &s.proxy, &s.motion, off).err(),
                    Some(NVSDK_NGX_Result_FAIL_InvalidParameter)
                );
            }
        }
        // Reset: frame 0's input gives frame 0's bytes although history is valid by now.
        let s0 = scene::render(64, 64, 0);
        let reset = Controls {
            reset: true,
            ..DEFAULT
        };
        let r = small
            .evaluate(&ngx, a, &s0.proxy, &s0.motion, reset)
            .expect("reset");
        assert!(
            r == want[0],
            "reset: {}",
            first_difference(&r, &want[0], 64).unwrap_or_default()
        );
        // Disabled: the proxy truncated to f16 (alpha included), without motion too.
        let s1 = scene::render(64, 64, 1);
        let no_motion = Controls {
            motion: false,
            ..off
        };
        let d = small
            .evaluate(&ngx, a, &s1.proxy, &s1.motion, no_motion)
            .expect("disabled");
        assert!(
            d == truncated(&s1.proxy),
            "{}",
            first_difference(&d, &truncated(&s1.proxy), 64).unwrap_or_default()
        );

        release(a);
        assert_eq!(
            // SAFETY: ReleaseFeature only compares the pointer against its registry (its
            // contract), so the released handle `a` is never dereferenced.
            unsafe { NVSDK_NGX_VULKAN_ReleaseFeature(a) },
            NVSDK_NGX_Result_FAIL_FeatureNotFound
        );
        assert_eq!(
            small.evaluate(&ngx, a, &s0.proxy, &s0.motion, off).err(),
            Some(NVSDK_NGX_Result_FAIL_FeatureNotFound)
        );
        // The 96x64 feature's buffers and the weights it still holds are left.
        let left = ngx.memory_in_use();
        assert!(left > two - one && left < two, "{left} of {two}");
        release(b);
        assert_eq!(ngx.memory_in_use(), 0, "released features still reported");
    }
    h.assert_validation_clean();
}

#[test]
fn a_broken_model_directory_is_refused_at_creation() {
    let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let Some(h) = Harness::new() else { return };
    let ngx = Ngx::init(&h);
    // A manifest whose stage files are missing: the quick check refuses it.
    let broken = tempfile::tempdir().expect("temp dir");
    std::fs::copy(
        model_dir().join("manifest.json"),
        broken.path().join("manifest.json"),
    )
    .expect("copy");
    std::env::set_var("OPENNGX_MODEL_DIR", broken.path());
    assert_eq!(
        ngx.create(64, 64).err(),
        Some(NVSDK_NGX_Result_FAIL_UnableToInitializeFeature)
    );
    std::env::set_var("OPENNGX_MODEL_DIR", model_dir());
    drop(ngx);
    h.assert_validation_clean();
}

/// `OPENNGX_FUSION` is read at creation: a name the library does not know is refused with
/// `FAIL_UnsupportedParameter` (never ignored), a known one creates the feature (on lavapipe the
/// exact route, which fuses nothing).
#[test]
fn an_unknown_fusion_is_refused_at_creation() {
    let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let Some(h) = Harness::new() else { return };
    let ngx = Ngx::init(&h);
    std::env::set_var("OPENNGX_FUSION", "everything");
    let refused = ngx.create(64, 64).err();
    std::env::set_var("OPENNGX_FUSION", "ffn");
    let created = ngx.create(64, 64);
    std::env::remove_var("OPENNGX_FUSION");
    assert_eq!(refused, Some(NVSDK_NGX_Result_FAIL_UnsupportedParameter));
    match created {
        Ok(f) => release(f),
        Err(e) => panic!("OPENNGX_FUSION=ffn: creation failed with {e:#x}"),
    }
    drop(ngx);
    h.assert_validation_clean();
}

/// The route a feature runs follows `OpenNGX.Route`, the application's statement that it
/// enabled the tensor route's device features, and what the device offers: the exact route when
/// asked or when the tensor route cannot run (never a cooperative-matrix shader without the
/// statement), the tensor route where it can, and a refusal for a tensor request that cannot be
/// met. The chosen route and profile are written back into the creation parameters, and the
/// device-extension query lists `VK_KHR_cooperative_matrix` exactly where the device offers the
/// route. On lavapipe (no cooperative matrices) the tensor side is the refusal; on the H200 the
/// tensor route is created.
#[test]
fn the_route_follows_the_request_the_statement_and_the_device() {
    use openngx::nr::route::TensorRoute;
    let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let Some(h) = Harness::new() else { return };
    let tensor_ok = TensorRoute::missing(h.context().capabilities()).is_empty();
    if !tensor_ok {
        eprintln!(
            "note: {} cannot run the tensor route; only the fallback and the refusal are checked",
            h.device_name
        );
    }
    // The extension query.
    let info = NVSDK_NGX_FeatureDiscoveryInfo {
        FeatureID: NVSDK_NGX_Feature_Reserved18,
        // SAFETY: a plain C struct of integers, pointers and a union, for which all-zero is
        // valid (NULL pointers, an empty identifier).
        ..unsafe { std::mem::zeroed() }
    };
    let (mut count, mut props) = (0u32, std::ptr::null_mut());
    // SAFETY: the harness's live instance and physical device; valid out pointers.
    ok("GetFeatureDeviceExtensionRequirements", unsafe {
        NVSDK_NGX_VULKAN_GetFeatureDeviceExtensionRequirements(
            h.instance.handle(),
            h.physical,
            &info,
            &mut count,
            &mut props,
        )
    });
    let names: Vec<String> = (0..count as usize)
        // SAFETY: the library's list of `count` entries, valid for the process.
        .map(|i| unsafe { &*props.add(i) })
        .map(|e| {
            e.extension_name_as_c_str()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        })
        .collect();
    assert_eq!(
        names.contains(&"VK_KHR_cooperative_matrix".to_owned()),
        tensor_ok,
        "device extensions listed: {names:?}"
    );

    let ngx = Ngx::init(&h);
    let get = |k: &CStr| {
        let mut v = 0u32;
        // SAFETY: live map, C string, valid out pointer.
        let r = unsafe { NVSDK_NGX_Parameter_GetUI(ngx.params, k.as_ptr(), &mut v) };
        (r == NVSDK_NGX_Result_Success).then_some(v)
    };
    // (route request, statement) -> Ok((active route, active profile bits)) or the refusal.
    let case = |route: u32, stated: u32| {
        ngx.set_ui(c"OpenNGX.Route", route);
        ngx.set_ui(c"OpenNGX.TensorFeaturesEnabled", stated);
        ngx.set_ui(c"OpenNGX.ActiveRoute", 0);
        ngx.set_ui(c"OpenNGX.ActiveProfile", 0);
        let r = ngx.create(64, 64).map(|handle| {
            release(handle);
            (
                get(c"OpenNGX.ActiveRoute").unwrap_or(0),
                get(c"OpenNGX.ActiveProfile").unwrap_or(0),
            )
        });
        eprintln!("route {route}, statement {stated}: {r:x?}");
        r
    };
    assert_eq!(case(1, 1), Ok((1, 13)), "exact when asked");
    assert_eq!(
        case(0, 0),
        Ok((1, 13)),
        "no tensor shader without the statement"
    );
    let auto = if tensor_ok { (2, 25) } else { (1, 13) };
    assert_eq!(case(0, 1), Ok(auto), "auto with the statement");
    assert_eq!(
        case(2, 0),
        Err(NVSDK_NGX_Result_FAIL_UnsupportedParameter),
        "a tensor request without the statement is refused"
    );
    let tensor = if tensor_ok {
        Ok((2, 25))
    } else {
        Err(NVSDK_NGX_Result_FAIL_UnsupportedParameter)
    };
    assert_eq!(case(2, 1), tensor, "a tensor request");
    assert_eq!(
        case(7, 1),
        Err(NVSDK_NGX_Result_FAIL_UnsupportedParameter),
        "an unknown route number"
    );
    drop(ngx);
    h.assert_validation_clean();
}
