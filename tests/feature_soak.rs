//! Lifetimes and soak of feature 18 through the NGX C ABI, on the harness's device (lavapipe in
//! CI) with the validation layer, synchronization validation included (issue 16, points 3
//! and 7):
//!
//! * a creation that fails once everything was built (`OPENNGX_TEST_FAIL_CREATION=1`, the
//!   library's test hook) returns `FAIL_OutOfGPUMemory` with a null handle and frees everything:
//!   `SizeInBytes` 0, flat RSS over the cycles, no child object left at `vkDestroyDevice`;
//! * a feature whose creation command buffer is never submitted is freed by `ReleaseFeature`
//!   (the application may not submit that work any more): the same checks;
//! * stale handles: a released handle gives `FAIL_FeatureNotFound` to Evaluate and Release,
//!   every call `FAIL_NotInitialized` after the last Shutdown;
//! * frames in flight: the creation and three evaluations submitted together, checked by the
//!   layer's synchronization validation between submissions;
//! * the soak: create / evaluate / release cycles over changing sizes with flat RSS and a clean
//!   validation log, and 4 threads each driving its own feature, parameter map, command pool
//!   and images at once;
//! * feature 13 (Ray Reconstruction, 32x32 -> 64x32): cycles of two creations sharing one copy
//!   of the weights, a creation failing once everything was built, and both releases, with flat
//!   RSS, `SizeInBytes` 0 and no live weights after each cycle, nothing left on the device (its
//!   evaluations, of two features too, are tests/rr_replay.rs's: byte-exact against the CPU).
//!
//! On lavapipe the evaluations are disabled frames (recorded, submitted, read back and compared
//! with the input truncated to f16: the network takes lavapipe minutes per frame). With
//! `OPENNGX_SOAK=large` (for a GPU, with `OPENNGX_TEST_REQUIRE_DEVICE=1`) the cycles use large
//! sizes and run the network (enabled frames), whose output is checked for being finite.
//!
//! RSS is the process's resident set (`/proc/self/status`): on lavapipe device memory is host
//! memory, so a leaked buffer shows there. Each bound is stated where it is checked.
//!
//! The library state and the RSS are process-wide, so every test takes `LOCK`.

mod common;

use std::ffi::{c_void, CStr};
use std::path::Path;
use std::sync::Mutex;
use std::time::Instant;

use ash::vk;
use common::ngx::{ok, stats_size_in_bytes};
use common::{Harness, HostBuffer, TestImage};
use openngx::feature::fault::FAIL_CREATION_ENV;
use openngx::ngx::abi::*;
use openngx::ngx::exports::*;
use openngx::ngx::param_exports::*;
use openngx::nr::frame::scene;
use openngx::numerics::f16;
use openngx::rr::record::RrGpuWeights;
use openngx_tools::devkit::{copy_region, ngx_resource};

static LOCK: Mutex<()> = Mutex::new(());

/// The validation message of a device destroyed with child objects still alive.
const CHILDREN_LEFT: &str = "VUID-vkDestroyDevice-device-00378";

/// The synthetic model (seed 0), written once per test process.
fn model_dir() -> &'static Path {
    common::synthetic_model_dir()
}

/// The process's resident set in MiB, after `malloc_trim(0)`: glibc's per-thread arenas keep
/// freed pages otherwise (4 threads grew it by 20-25 MiB a round without the trim, and not with
/// `MALLOC_ARENA_MAX=1`): memory the process can reuse, not a leak.
fn rss_mib() -> f64 {
    // SAFETY: malloc_trim only returns free memory of the allocator's arenas to the system.
    unsafe { libc::malloc_trim(0) };
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0)
}

/// Whether this is the large soak (`OPENNGX_SOAK=large`: a GPU's sizes, enabled frames).
fn large() -> bool {
    std::env::var("OPENNGX_SOAK").is_ok_and(|v| v == "large")
}

/// `OPENNGX_SOAK_CYCLES`, else `default`.
fn cycles(default: usize) -> usize {
    std::env::var("OPENNGX_SOAK_CYCLES")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&n| n >= 1)
        .unwrap_or(default)
}

/// Sets `OPENNGX_TEST_FAIL_CREATION=1` while alive (the tests hold `LOCK`, so no other test of
/// this process creates a feature meanwhile).
struct FailCreation;

impl FailCreation {
    fn on() -> FailCreation {
        std::env::set_var(FAIL_CREATION_ENV, "1");
        FailCreation
    }
}

impl Drop for FailCreation {
    fn drop(&mut self) {
        std::env::remove_var(FAIL_CREATION_ENV);
    }
}

/// What a recorded command buffer is then used for.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Then {
    /// Submitted and waited for.
    Submit,
    /// Ended and freed, never submitted.
    Discard,
}

/// Record with `f` into a fresh command buffer of `pool`, then submit it on `queue` (taking
/// `queue_lock` for the submission: the queue is externally synchronised) and wait on a fence,
/// or free it unsubmitted.
fn record<R>(
    device: &ash::Device,
    pool: vk::CommandPool,
    queue: vk::Queue,
    queue_lock: &Mutex<()>,
    then: Then,
    f: impl FnOnce(vk::CommandBuffer) -> R,
) -> R {
    let info = vk::CommandBufferAllocateInfo::default()
        .command_pool(pool)
        .level(vk::CommandBufferLevel::PRIMARY)
        .command_buffer_count(1);
    // SAFETY: a live device and a pool used by this thread only; the command buffer is freed
    // after its fence signalled (or unsubmitted).
    unsafe {
        let cmd = device
            .allocate_command_buffers(&info)
            .expect("vkAllocateCommandBuffers")[0];
        device
            .begin_command_buffer(cmd, &vk::CommandBufferBeginInfo::default())
            .expect("vkBeginCommandBuffer");
        let r = f(cmd);
        device.end_command_buffer(cmd).expect("vkEndCommandBuffer");
        if then == Then::Submit {
            let fence = device
                .create_fence(&vk::FenceCreateInfo::default(), None)
                .expect("vkCreateFence");
            let cmds = [cmd];
            {
                let _q = queue_lock.lock().unwrap_or_else(|e| e.into_inner());
                device
                    .queue_submit(
                        queue,
                        &[vk::SubmitInfo::default().command_buffers(&cmds)],
                        fence,
                    )
                    .expect("vkQueueSubmit");
            }
            device
                .wait_for_fences(&[fence], true, 1_800_000_000_000)
                .expect("vkWaitForFences");
            device.destroy_fence(fence, None);
        }
        device.free_command_buffers(pool, &[cmd]);
        r
    }
}

/// NGX initialised on the harness's device, with one parameter map.
struct Ngx<'h> {
    h: &'h Harness,
    params: *mut NVSDK_NGX_Parameter,
    queue_lock: Mutex<()>,
}

impl<'h> Ngx<'h> {
    fn init(h: &'h Harness) -> Ngx<'h> {
        std::env::set_var("OPENNGX_MODEL_DIR", model_dir());
        let path: Vec<wchar_t> = "/tmp".chars().map(|c| c as wchar_t).chain([0]).collect();
        // SAFETY: the harness's live handles and the loader's proc addrs.
        ok("Init", unsafe {
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
        });
        Ngx {
            h,
            params: allocate_params(),
            queue_lock: Mutex::new(()),
        }
    }

    /// CreateFeature1 at `w x ht`, recorded into a command buffer that is then `then`.
    fn create(
        &self,
        w: u32,
        ht: u32,
        then: Then,
    ) -> Result<*mut NVSDK_NGX_Handle, NVSDK_NGX_Result> {
        let h = self.h;
        create_in(
            &h.device,
            h.pool,
            h.queue,
            &self.queue_lock,
            self.params,
            (w, ht),
            then,
        )
    }

    /// `SizeInBytes` from the stats callback of a capability map.
    fn memory_in_use(&self) -> u64 {
        size_in_bytes()
    }

    /// Destroys the map and shuts NGX down on the device.
    fn shutdown(self) {
        // SAFETY: our map and device; every submission was waited for.
        unsafe {
            ok(
                "DestroyParameters",
                NVSDK_NGX_VULKAN_DestroyParameters(self.params),
            );
            ok(
                "Shutdown1",
                NVSDK_NGX_VULKAN_Shutdown1(self.h.device.handle()),
            );
        }
    }
}

fn allocate_params() -> *mut NVSDK_NGX_Parameter {
    let mut params = std::ptr::null_mut();
    // SAFETY: valid out pointer.
    ok("AllocateParameters", unsafe {
        NVSDK_NGX_VULKAN_AllocateParameters(&mut params)
    });
    params
}

fn set_ui(p: *mut NVSDK_NGX_Parameter, k: &CStr, v: u32) {
    // SAFETY: a live map, a C string.
    unsafe { NVSDK_NGX_Parameter_SetUI(p, k.as_ptr(), v) }
}

fn set_vp(p: *mut NVSDK_NGX_Parameter, k: &CStr, v: *mut c_void) {
    // SAFETY: a live map, a C string; the pointee outlives the Evaluate that reads it.
    unsafe { NVSDK_NGX_Parameter_SetVoidPointer(p, k.as_ptr(), v) }
}

fn create_in(
    device: &ash::Device,
    pool: vk::CommandPool,
    queue: vk::Queue,
    queue_lock: &Mutex<()>,
    params: *mut NVSDK_NGX_Parameter,
    (w, ht): (u32, u32),
    then: Then,
) -> Result<*mut NVSDK_NGX_Handle, NVSDK_NGX_Result> {
    set_ui(params, c"DLSSNR.Width", w);
    set_ui(params, c"DLSSNR.Height", ht);
    let mut handle = std::ptr::null_mut();
    // SAFETY: our device, a recording command buffer, a live map, a valid out pointer.
    let r = record(device, pool, queue, queue_lock, then, |cmd| unsafe {
        NVSDK_NGX_VULKAN_CreateFeature1(
            device.handle(),
            cmd,
            NVSDK_NGX_Feature_Reserved18,
            params,
            &mut handle,
        )
    });
    if r == NVSDK_NGX_Result_Success {
        assert!(!handle.is_null(), "Success with a null handle");
        Ok(handle)
    } else {
        assert!(handle.is_null(), "result {r:#x} with a handle");
        Err(r)
    }
}

fn size_in_bytes() -> u64 {
    stats_size_in_bytes(c"DLSSNRGetStatsCallback")
}

/// `SizeInBytes` after the last Shutdown: the capability map needs NGX, so NGX is initialised
/// on the device again for the query (the backend, and whatever it still holds, outlive a
/// Shutdown) and shut down once more.
fn size_after_shutdown(h: &Harness) -> u64 {
    let ngx = Ngx::init(h);
    let bytes = ngx.memory_in_use();
    ngx.shutdown();
    bytes
}

fn release(handle: *mut NVSDK_NGX_Handle) -> NVSDK_NGX_Result {
    // SAFETY: ReleaseFeature only compares the pointer against its registry.
    unsafe { NVSDK_NGX_VULKAN_ReleaseFeature(handle) }
}

/// The resources a parameter map points at (boxed: their addresses are in the map).
struct Bound {
    color: Box<NVSDK_NGX_Resource_VK>,
    output: Box<NVSDK_NGX_Resource_VK>,
}

/// The caller's images of one size: the colour input (filled once with the scene's proxy, then
/// in SHADER_READ_ONLY_OPTIMAL), the output (GENERAL), their views, and what the output should
/// be after a disabled frame (the input truncated to f16).
struct Images {
    w: u32,
    ht: u32,
    color: TestImage,
    color_view: vk::ImageView,
    output: TestImage,
    output_view: vk::ImageView,
    disabled: Vec<[u16; 4]>,
}

impl Images {
    fn new(h: &Harness, w: u32, ht: u32) -> Images {
        let color = h.image(
            w,
            ht,
            vk::Format::R32G32B32A32_SFLOAT,
            vk::ImageUsageFlags::SAMPLED | vk::ImageUsageFlags::TRANSFER_DST,
        );
        let output = h.image(
            w,
            ht,
            vk::Format::R16G16B16A16_SFLOAT,
            vk::ImageUsageFlags::STORAGE | vk::ImageUsageFlags::TRANSFER_SRC,
        );
        let (color_view, output_view) = (h.view(&color), h.view(&output));
        let proxy = scene::render(w, ht, 0).proxy;
        let bytes: Vec<u8> = proxy
            .iter()
            .flat_map(|p| p.iter().flat_map(|v| v.to_le_bytes()))
            .collect();
        let staging = h.host_buffer(bytes.len() as u64);
        staging.write(0, &bytes);
        h.submit(|cmd| {
            h.upload_image(
                cmd,
                staging.buffer,
                color.image,
                vk::ImageAspectFlags::COLOR,
                copy_region(0, w, ht),
                (
                    vk::AccessFlags::empty(),
                    vk::PipelineStageFlags::TOP_OF_PIPE,
                ),
            );
            h.barrier(
                cmd,
                output.image,
                (vk::ImageLayout::UNDEFINED, vk::ImageLayout::GENERAL),
                (vk::AccessFlags::empty(), vk::AccessFlags::SHADER_WRITE),
                (
                    vk::PipelineStageFlags::TOP_OF_PIPE,
                    vk::PipelineStageFlags::COMPUTE_SHADER,
                ),
            );
        });
        Images {
            w,
            ht,
            color,
            color_view,
            output,
            output_view,
            disabled: proxy.iter().map(|p| p.map(f16::from_f32_rtz)).collect(),
        }
    }

    /// Sets the evaluation parameters of one frame on `params`; the returned resources must
    /// outlive every Evaluate that reads the map.
    fn set(&self, params: *mut NVSDK_NGX_Parameter, enabled: bool) -> Bound {
        let mut bound = Bound {
            color: Box::new(ngx_resource(&self.color, self.color_view, false)),
            output: Box::new(ngx_resource(&self.output, self.output_view, true)),
        };
        set_vp(
            params,
            c"DLSSNR.Color",
            (&mut *bound.color as *mut NVSDK_NGX_Resource_VK).cast(),
        );
        set_vp(
            params,
            c"DLSSNR.Output",
            (&mut *bound.output as *mut NVSDK_NGX_Resource_VK).cast(),
        );
        set_vp(params, c"DLSSNR.MVec", std::ptr::null_mut());
        set_ui(params, c"DLSSNR.Enabled", u32::from(enabled));
        set_ui(params, c"DLSSNR.Reset", 0);
        bound
    }

    /// Records one evaluation of `handle` into `cmd`, followed by the barrier that makes the
    /// output visible to a later transfer (the read-back).
    fn record_evaluate(
        &self,
        device: &ash::Device,
        cmd: vk::CommandBuffer,
        handle: *mut NVSDK_NGX_Handle,
        params: *mut NVSDK_NGX_Parameter,
    ) -> NVSDK_NGX_Result {
        // SAFETY: a recording command buffer, a live (or stale: checked) handle and a live map.
        let r = unsafe { NVSDK_NGX_VULKAN_EvaluateFeature_C(cmd, handle, params, None) };
        let b = [openngx_tools::devkit::image_barrier(
            self.output.image,
            (vk::ImageLayout::GENERAL, vk::ImageLayout::GENERAL),
            (
                vk::AccessFlags::SHADER_WRITE,
                vk::AccessFlags::TRANSFER_READ,
            ),
        )];
        // SAFETY: a recording command buffer of `device`; the image is ours.
        unsafe {
            device.cmd_pipeline_barrier(
                cmd,
                vk::PipelineStageFlags::COMPUTE_SHADER,
                vk::PipelineStageFlags::TRANSFER,
                vk::DependencyFlags::empty(),
                &[],
                &[],
                &b,
            )
        };
        r
    }

    /// Copies the output into `readback` (the previous frame's writes are visible: see
    /// `record_evaluate`), waits, and returns its texels.
    fn read(&self, h: &Harness, readback: &HostBuffer) -> Vec<[u16; 4]> {
        h.submit(|cmd| {
            h.copy_to_host(cmd, self.output.image, (self.w, self.ht), readback.buffer);
        });
        readback
            .read()
            .chunks_exact(8)
            .take((self.w * self.ht) as usize)
            .map(|b| {
                [
                    u16::from_le_bytes([b[0], b[1]]),
                    u16::from_le_bytes([b[2], b[3]]),
                    u16::from_le_bytes([b[4], b[5]]),
                    u16::from_le_bytes([b[6], b[7]]),
                ]
            })
            .collect()
    }

    /// Checks an output: a disabled frame's bytes exactly, an enabled frame's for being finite.
    fn check(&self, got: &[[u16; 4]], enabled: bool, what: &str) {
        if enabled {
            let bad = got
                .iter()
                .flatten()
                .filter(|&&x| x & 0x7C00 == 0x7C00)
                .count();
            assert_eq!(bad, 0, "{what}: {bad} non-finite output halves");
        } else {
            assert!(
                got == self.disabled.as_slice(),
                "{what}: a disabled frame is not the input truncated to f16"
            );
        }
    }

    fn destroy(self, h: &Harness) {
        // SAFETY: every submission using the views was waited for.
        unsafe {
            h.device.destroy_image_view(self.color_view, None);
            h.device.destroy_image_view(self.output_view, None);
        }
    }
}

/// Runs `cycles` calls of `cycle` after `warm_up` calls; returns the RSS (MiB) before and after
/// them. The warm-up fills the caches that are meant to stay (pipelines of each size the
/// cycles use, the driver's and the allocator's pools).
fn rss_over(what: &str, warm_up: usize, cycles: usize, mut cycle: impl FnMut(usize)) -> Rss {
    for i in 0..warm_up {
        cycle(i);
    }
    let before = rss_mib();
    let t = Instant::now();
    for i in 0..cycles {
        cycle(warm_up + i);
    }
    let after = rss_mib();
    eprintln!(
        "{what}: {cycles} cycles in {:.1} s, RSS {before:.1} -> {after:.1} MiB",
        t.elapsed().as_secs_f64()
    );
    Rss {
        what: what.to_owned(),
        cycles,
        before,
        after,
    }
}

/// The RSS around a run of cycles.
struct Rss {
    what: String,
    cycles: usize,
    before: f64,
    after: f64,
}

impl Rss {
    /// Whether it grew by at most `bound` MiB; `Err` says by how much.
    fn within(&self, bound: f64) -> Result<(), String> {
        if self.after - self.before <= bound {
            Ok(())
        } else {
            Err(format!(
                "{}: RSS grew from {:.1} to {:.1} MiB over {} cycles (bound +{bound} MiB)",
                self.what, self.before, self.after, self.cycles
            ))
        }
    }
}

/// Destroys the device; `Err` lists the validation errors reported, the ones at
/// `vkDestroyDevice` (child objects the library left, [`CHILDREN_LEFT`]) first.
fn close(h: Harness) -> Result<(), String> {
    let mut errors = h.close();
    errors.sort_by_key(|e| !e.contains(CHILDREN_LEFT));
    if errors.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "{} validation error(s), {} of them objects left at vkDestroyDevice:\n{}",
            errors.len(),
            errors.iter().filter(|e| e.contains(CHILDREN_LEFT)).count(),
            errors.join("\n")
        ))
    }
}

/// Fails with every problem found (so that a failure shows the whole picture).
fn verdict(what: &str, problems: Vec<String>) {
    assert!(problems.is_empty(), "{what}:\n{}", problems.join("\n"));
}

/// A creation that fails once everything was built frees everything: the code, the null
/// handle, `SizeInBytes` 0 while NGX is up and after Shutdown, flat RSS over the cycles, and no
/// child object left on the device. The command buffer is submitted (an application that
/// ignores the failure) on even cycles and discarded on odd ones.
#[test]
fn a_failed_creation_frees_everything() {
    let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let Some(h) = Harness::new() else { return };
    model_dir();
    let n = cycles(12);
    let mut problems = Vec::new();
    {
        let ngx = Ngx::init(&h);
        let _fail = FailCreation::on();
        let mut held = 0u64;
        let rss = rss_over("failed creations", 2, n, |i| {
            let then = if i % 2 == 0 {
                Then::Submit
            } else {
                Then::Discard
            };
            assert_eq!(
                ngx.create(64, 64, then),
                Err(NVSDK_NGX_Result_FAIL_OutOfGPUMemory),
                "cycle {i}"
            );
            held = held.max(ngx.memory_in_use());
        });
        problems.extend(rss.within(16.0).err());
        if held != 0 {
            problems.push(format!("SizeInBytes after a failed creation: up to {held}"));
        }
        ngx.shutdown();
    }
    let after = size_after_shutdown(&h);
    if after != 0 {
        problems.push(format!("SizeInBytes after Shutdown: {after}"));
    }
    problems.extend(close(h).err());
    verdict("failed creations", problems);
}

/// A feature whose creation command buffer is never submitted is freed by ReleaseFeature (the
/// application may not submit that work any more): flat RSS, `SizeInBytes` 0, nothing left on
/// the device.
#[test]
fn a_never_submitted_feature_is_freed_at_release() {
    let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let Some(h) = Harness::new() else { return };
    model_dir();
    let n = cycles(12);
    let mut problems = Vec::new();
    {
        let ngx = Ngx::init(&h);
        let mut held = 0u64;
        let rss = rss_over("never-submitted creations", 2, n, |i| {
            let handle = ngx.create(64, 64, Then::Discard).expect("create");
            assert!(ngx.memory_in_use() > 0, "cycle {i}: the feature's memory");
            ok("ReleaseFeature", release(handle));
            held = held.max(ngx.memory_in_use());
        });
        problems.extend(rss.within(16.0).err());
        if held != 0 {
            problems.push(format!("SizeInBytes after a release: up to {held}"));
        }
        ngx.shutdown();
    }
    let after = size_after_shutdown(&h);
    if after != 0 {
        problems.push(format!("SizeInBytes after Shutdown: {after}"));
    }
    problems.extend(close(h).err());
    verdict("never-submitted creations", problems);
}

/// Stale handles: after ReleaseFeature the handle gives `FAIL_FeatureNotFound` to Evaluate and
/// to Release (also while a new feature lives); after the last Shutdown every call on it gives
/// `FAIL_NotInitialized`.
#[test]
fn stale_handles_are_refused_with_their_codes() {
    let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let Some(h) = Harness::new() else { return };
    let images = Images::new(&h, 64, 64);
    let ngx = Ngx::init(&h);
    let a = ngx.create(64, 64, Then::Submit).expect("create");
    ok("ReleaseFeature", release(a));
    let b = ngx.create(64, 64, Then::Submit).expect("create again");
    let _bound = images.set(ngx.params, false);
    let eval = |handle| {
        record(
            &h.device,
            h.pool,
            h.queue,
            &ngx.queue_lock,
            Then::Discard,
            |cmd| images.record_evaluate(&h.device, cmd, handle, ngx.params),
        )
    };
    assert_eq!(
        eval(a),
        NVSDK_NGX_Result_FAIL_FeatureNotFound,
        "evaluate a released handle"
    );
    assert_eq!(
        release(a),
        NVSDK_NGX_Result_FAIL_FeatureNotFound,
        "release it again"
    );
    assert_eq!(
        eval(b),
        NVSDK_NGX_Result_Success,
        "the live feature still works"
    );
    ok("ReleaseFeature", release(b));
    assert_eq!(release(b), NVSDK_NGX_Result_FAIL_FeatureNotFound);
    let c = ngx.create(64, 64, Then::Submit).expect("a third feature");
    let params = ngx.params;
    ngx.shutdown();
    // Shutdown released `c` (logged); every handle is now refused as not initialised.
    for (name, handle) in [("released", a), ("live at Shutdown", c)] {
        assert_eq!(
            release(handle),
            NVSDK_NGX_Result_FAIL_NotInitialized,
            "release {name} after Shutdown"
        );
        let code = record(
            &h.device,
            h.pool,
            h.queue,
            &Mutex::new(()),
            Then::Discard,
            |cmd| {
                // SAFETY: a recording command buffer; the library checks its state before touching
                // the handle or the (destroyed) map.
                unsafe { NVSDK_NGX_VULKAN_EvaluateFeature_C(cmd, handle, params, None) }
            },
        );
        assert_eq!(
            code, NVSDK_NGX_Result_FAIL_NotInitialized,
            "evaluate {name} after Shutdown"
        );
    }
    images.destroy(&h);
    verdict("stale handles", close(h).err().into_iter().collect());
}

/// The sizes the soak cycles through: small ones on lavapipe, large ones on a GPU.
fn soak_sizes() -> &'static [(u32, u32)] {
    if large() {
        &[
            (1920, 1080),
            (1280, 720),
            (3840, 2160),
            (2560, 1440),
            (1024, 1024),
            (1600, 900),
            (3440, 1440),
        ]
    } else {
        &[
            (64, 64),
            (96, 64),
            (128, 72),
            (64, 128),
            (160, 96),
            (128, 128),
            (200, 120),
        ]
    }
}

/// 100 create / evaluate / release cycles over changing sizes (7 sizes, each feature evaluated
/// twice, its output read back and checked): `SizeInBytes` 0 between cycles, a clean validation
/// log, nothing left on the device, flat RSS.
///
/// The cycles run twice. First under the validation layer with synchronization validation, which
/// must report nothing; the layer keeps state of its own for the objects each cycle creates and
/// destroys, so this pass's RSS is held only to a loose bound (measured 2026-12-05: +0.05 MiB a
/// cycle on lavapipe under Debian 12's layer 1.3.239 without the anchor below, 0.00 without the
/// layer; +0.39 MiB a cycle on the H200's large soak under the layer 1.4.309). Then the same
/// cycles without the layer, where the RSS is the library's (and the driver's) alone and must stay
/// flat.
#[test]
fn soak_create_evaluate_release_over_changing_sizes() {
    let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let Some(h) = Harness::new() else { return };
    let layered = h.validation;
    let (rss, mut problems) = soak_pass(h, "soak");
    let loose = if layered { 48.0 } else { SOAK_FLAT_MIB };
    problems.extend(rss.and_then(|r| r.within(loose).err()));
    if layered {
        let Some(h) = Harness::without_validation() else {
            panic!("the device opened with the layer but not without it")
        };
        let (rss, more) = soak_pass(h, "soak without the layer");
        problems.extend(more);
        problems.extend(rss.and_then(|r| r.within(SOAK_FLAT_MIB).err()));
    }
    verdict("soak", problems);
}

/// What the soak's cycles may add to the RSS without the validation layer: a few pages of the
/// allocator's and the driver's pools; a leak of one feature's host objects per cycle (about
/// 0.1 MiB and up) exceeds it over 100 cycles.
const SOAK_FLAT_MIB: f64 = 6.0;

/// One pass of the soak on `h` (which it closes): the RSS around the timed cycles and the
/// problems found (validation errors, objects left on the device).
fn soak_pass(h: Harness, what: &str) -> (Option<Rss>, Vec<String>) {
    model_dir();
    let enabled = large();
    let sizes = soak_sizes();
    let n = cycles(if enabled { 21 } else { 100 });
    let trace = enabled || std::env::var_os("OPENNGX_SOAK_TRACE").is_some();
    let images: Vec<Images> = sizes
        .iter()
        .map(|&(w, ht)| Images::new(&h, w, ht))
        .collect();
    let readback = h.host_buffer(
        images
            .iter()
            .map(|i| u64::from(i.w * i.ht) * 8)
            .max()
            .unwrap_or(8),
    );
    let rss;
    {
        let ngx = Ngx::init(&h);
        // On lavapipe a feature of another size lives through the soak, so that the model (read
        // and hashed, 150 MB) and the weights are not loaded again each cycle: that costs about
        // 0.6 s a cycle, and the failed and never-submitted cycles above already load them each
        // time. The large soak loads them every cycle (and so does OPENNGX_SOAK_ANCHOR=0).
        let anchored = !enabled && std::env::var("OPENNGX_SOAK_ANCHOR").map_or(true, |v| v != "0");
        let anchor = anchored.then(|| ngx.create(72, 64, Then::Submit).expect("anchor"));
        let t0 = Instant::now();
        let base = ngx.memory_in_use();
        // On a GPU device memory is not the process's: the bound is then on the host side only.
        rss = Some(rss_over(what, images.len(), n, |i| {
            let img = &images[i % images.len()];
            let handle = ngx.create(img.w, img.ht, Then::Submit).expect("create");
            let _bound = img.set(ngx.params, enabled);
            for frame in 0..2 {
                let r = record(
                    &h.device,
                    h.pool,
                    h.queue,
                    &ngx.queue_lock,
                    Then::Submit,
                    |cmd| img.record_evaluate(&h.device, cmd, handle, ngx.params),
                );
                ok("EvaluateFeature_C", r);
                let got = img.read(&h, &readback);
                img.check(
                    &got,
                    enabled,
                    &format!("cycle {i} ({}x{}) frame {frame}", img.w, img.ht),
                );
            }
            ok("ReleaseFeature", release(handle));
            assert_eq!(
                ngx.memory_in_use(),
                base,
                "cycle {i}: SizeInBytes after release"
            );
            if trace {
                eprintln!(
                    "{what}: cycle {i}: {}x{} created, 2 frames checked, released at {:.1} s (RSS {:.1} MiB)",
                    img.w,
                    img.ht,
                    t0.elapsed().as_secs_f64(),
                    rss_mib()
                );
            }
        }));
        if let Some(a) = anchor {
            ok("ReleaseFeature", release(a));
        }
        assert_eq!(ngx.memory_in_use(), 0, "SizeInBytes with no feature");
        ngx.shutdown();
    }
    for img in images {
        img.destroy(&h);
    }
    drop(readback);
    (rss, close(h).err().into_iter().collect())
}

/// A resettable command pool on `family`, for one thread.
fn command_pool(device: &ash::Device, family: u32) -> vk::CommandPool {
    let info = vk::CommandPoolCreateInfo::default()
        .queue_family_index(family)
        .flags(vk::CommandPoolCreateFlags::RESET_COMMAND_BUFFER);
    // SAFETY: a live device and a valid create info.
    unsafe { device.create_command_pool(&info, None) }.expect("vkCreateCommandPool")
}

/// 4 threads at once, each with its own feature (of its own size), parameter map, command pool
/// and images: create, 3 evaluations, release, in rounds; after each round the outputs are read
/// back and checked. The RSS must stay flat (+16 MiB) over the rounds after two warm-up rounds.
#[test]
fn four_threads_drive_their_own_features() {
    let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    // One malloc arena for the threads to come: each new thread otherwise may get an arena of its
    // own, whose freed pages glibc keeps (about 20 MiB a round here, even after malloc_trim) and
    // the RSS could not tell a leak from that.
    // SAFETY: mallopt only changes the allocator's tuning; M_ARENA_MAX limits new arenas.
    unsafe { libc::mallopt(libc::M_ARENA_MAX, 1) };
    let Some(h) = Harness::new() else { return };
    model_dir();
    let images: Vec<Images> = soak_sizes()[..4]
        .iter()
        .map(|&(w, ht)| Images::new(&h, w, ht))
        .collect();
    let readback = h.host_buffer(
        images
            .iter()
            .map(|i| u64::from(i.w * i.ht) * 8)
            .max()
            .unwrap_or(8),
    );
    let rss;
    {
        let ngx = Ngx::init(&h);
        let (device, queue, family) = (&h.device, h.queue, h.queue_family);
        let queue_lock = &ngx.queue_lock;
        // Four long-lived threads, each running its feature's round when told: threads made
        // anew each round would get their malloc arenas anew too (reused among the process's
        // earlier arenas, whose cached pages made the RSS jump by about 20 MiB in some runs),
        // which the RSS cannot tell from a leak.
        rss = Some(std::thread::scope(|s| {
            let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
            let mut starts = Vec::new();
            for img in &images {
                let (tx, rx) = std::sync::mpsc::channel::<()>();
                starts.push(tx);
                let done = done_tx.clone();
                s.spawn(move || {
                    while rx.recv().is_ok() {
                        let pool = command_pool(device, family);
                        let params = allocate_params();
                        let size = (img.w, img.ht);
                        let handle =
                            create_in(device, pool, queue, queue_lock, params, size, Then::Submit)
                                .expect("create");
                        let _bound = img.set(params, false);
                        for _ in 0..3 {
                            let r = record(device, pool, queue, queue_lock, Then::Submit, |cmd| {
                                img.record_evaluate(device, cmd, handle, params)
                            });
                            ok("EvaluateFeature_C", r);
                        }
                        ok("ReleaseFeature", release(handle));
                        // SAFETY: our map; the pool's command buffers were all waited for.
                        unsafe {
                            ok(
                                "DestroyParameters",
                                NVSDK_NGX_VULKAN_DestroyParameters(params),
                            );
                            device.destroy_command_pool(pool, None);
                        }
                        if done.send(()).is_err() {
                            return;
                        }
                    }
                });
            }
            drop(done_tx);
            // Dropping `starts` (at the end, or when a check panics) ends the threads.
            let mut round_of_four = |round: usize| {
                for tx in &starts {
                    tx.send(()).expect("a worker thread ended");
                }
                for _ in &starts {
                    done_rx
                        .recv_timeout(std::time::Duration::from_secs(900))
                        .expect("a worker thread failed (its panic is above)");
                }
                for img in &images {
                    let got = img.read(&h, &readback);
                    img.check(&got, false, &format!("round {round}, {}x{}", img.w, img.ht));
                }
                assert_eq!(ngx.memory_in_use(), 0, "round {round}: SizeInBytes");
            };
            let n = cycles(2);
            let first = rss_over("4 threads", 2, n, &mut round_of_four);
            if first.within(16.0).is_ok() {
                return first;
            }
            // lavapipe's RSS sometimes jumps once by about 20 MiB in these rounds (seen in 1 of 3
            // runs of the whole binary, never again in the rounds after it); a leak grows again
            // in every window, so the verdict is the next window's.
            eprintln!("4 threads: a jump in the first window; measuring {n} more cycles");
            rss_over("4 threads (again)", 0, n, |r| round_of_four(2 + n + r))
        }));
        ngx.shutdown();
    }
    for img in images {
        img.destroy(&h);
    }
    drop(readback);
    let mut problems: Vec<String> = rss.and_then(|r| r.within(16.0).err()).into_iter().collect();
    problems.extend(close(h).err());
    verdict("4 threads", problems);
}

/// Frames in flight: the creation and three evaluations recorded into four command buffers and
/// submitted together in one `vkQueueSubmit` (no host wait between them, as an engine submits),
/// so that the check between submissions sees every access the library records across them: the
/// weight upload and history clear against the frames, each frame's history, output and image
/// accesses against the next. The last output is checked, and the log must stay clean.
#[test]
fn frames_in_flight_are_hazard_free() {
    let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let Some(h) = Harness::new() else {
        return;
    };
    model_dir();
    let enabled = large();
    let (w, ht) = soak_sizes()[1];
    let images = Images::new(&h, w, ht);
    let readback = h.host_buffer(u64::from(w * ht) * 8);
    {
        let ngx = Ngx::init(&h);
        set_ui(ngx.params, c"DLSSNR.Width", w);
        set_ui(ngx.params, c"DLSSNR.Height", ht);
        let info = vk::CommandBufferAllocateInfo::default()
            .command_pool(h.pool)
            .level(vk::CommandBufferLevel::PRIMARY)
            .command_buffer_count(4);
        let mut handle = std::ptr::null_mut();
        // SAFETY: the harness's live device, pool and queue, used by this thread only; the
        // command buffers are freed once the queue is idle; the NGX calls get a recording
        // command buffer, a live map and valid out pointers.
        unsafe {
            let cmds = h.device.allocate_command_buffers(&info).expect("allocate");
            let begin = vk::CommandBufferBeginInfo::default();
            h.device
                .begin_command_buffer(cmds[0], &begin)
                .expect("begin");
            ok(
                "CreateFeature1",
                NVSDK_NGX_VULKAN_CreateFeature1(
                    h.device.handle(),
                    cmds[0],
                    NVSDK_NGX_Feature_Reserved18,
                    ngx.params,
                    &mut handle,
                ),
            );
            h.device.end_command_buffer(cmds[0]).expect("end");
            let _bound = images.set(ngx.params, enabled);
            for &cmd in &cmds[1..] {
                h.device.begin_command_buffer(cmd, &begin).expect("begin");
                ok(
                    "EvaluateFeature_C",
                    images.record_evaluate(&h.device, cmd, handle, ngx.params),
                );
                h.device.end_command_buffer(cmd).expect("end");
            }
            let submits: Vec<vk::SubmitInfo> = cmds
                .chunks(1)
                .map(|c| vk::SubmitInfo::default().command_buffers(c))
                .collect();
            h.device
                .queue_submit(h.queue, &submits, vk::Fence::null())
                .expect("vkQueueSubmit");
            h.device.queue_wait_idle(h.queue).expect("vkQueueWaitIdle");
            h.device.free_command_buffers(h.pool, &cmds);
        }
        let got = images.read(&h, &readback);
        images.check(&got, enabled, "the third frame in flight");
        ok("ReleaseFeature", release(handle));
        ngx.shutdown();
    }
    images.destroy(&h);
    drop(readback);
    verdict("frames in flight", close(h).err().into_iter().collect());
}

/// The synthetic RR model (seed 0), written once per test process (into a scratch directory
/// removed at the process's exit).
fn rr_model_dir() -> &'static Path {
    static DIR: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let scratch = openngx_tools::scratch::process_dir(&std::env::temp_dir(), "openngx-soak-rr")
            .expect("scratch dir");
        let path = scratch.join("rr-model");
        openngx_tools::rr_synth::write_model(
            &path,
            0,
            &openngx_tools::rr_synth::RrSynthParams::DEFAULT,
            false,
        )
        .expect("synthesize");
        path
    })
}

/// CreateFeature1 of feature 13 at its smallest sizes (render 32x32, output 64x32; DLAA mode,
/// preset E, `MVLowRes`) with the map's other keys left unset, recorded into a command buffer then `then`.
fn rr_create(ngx: &Ngx<'_>, then: Then) -> Result<*mut NVSDK_NGX_Handle, NVSDK_NGX_Result> {
    let (h, p) = (ngx.h, ngx.params);
    set_ui(p, c"Width", 32);
    set_ui(p, c"Height", 32);
    set_ui(p, c"OutWidth", 64);
    set_ui(p, c"OutHeight", 32);
    // SAFETY: a live map, C strings.
    unsafe {
        NVSDK_NGX_Parameter_SetI(
            p,
            c"PerfQualityValue".as_ptr(),
            NVSDK_NGX_PerfQuality_Value_DLAA as i32,
        );
        NVSDK_NGX_Parameter_SetI(p, c"DLSS.Denoise.Mode".as_ptr(), 1);
        // Motion vectors at render resolution (required).
        NVSDK_NGX_Parameter_SetI(
            p,
            c"DLSS.Feature.Create.Flags".as_ptr(),
            openngx::rr::feature::CreateFlags::MV_LOW_RES as i32,
        );
    }
    set_ui(p, c"RayReconstruction.Hint.Render.Preset.DLAA", 5);
    let mut handle = std::ptr::null_mut();
    // SAFETY: our device, a recording command buffer, a live map, a valid out pointer.
    let r = record(
        &h.device,
        h.pool,
        h.queue,
        &ngx.queue_lock,
        then,
        |cmd| unsafe {
            NVSDK_NGX_VULKAN_CreateFeature1(
                h.device.handle(),
                cmd,
                NVSDK_NGX_Feature_RayReconstruction,
                p,
                &mut handle,
            )
        },
    );
    if r == NVSDK_NGX_Result_Success {
        assert!(!handle.is_null(), "Success with a null handle");
        Ok(handle)
    } else {
        assert!(handle.is_null(), "result {r:#x} with a handle");
        Err(r)
    }
}

/// Feature 13's lifetimes: per cycle a feature, a second one sharing its weights and tables
/// (`SizeInBytes` grows by less than the first's: only the tensors; its command buffer submitted
/// on even cycles, never submitted on odd ones), a creation failing once everything was built
/// (nothing added), both released: `SizeInBytes` 0 and no live weights copy (so the next cycle
/// uploads them again), flat RSS over the cycles, and after Shutdown nothing held and no child
/// object left on the device.
#[test]
fn rr_creations_share_the_weights_and_free_everything() {
    let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let Some(h) = Harness::new() else { return };
    std::env::set_var("OPENNGX_RR_MODEL_DIR", rr_model_dir());
    let n = cycles(4);
    let mut problems = Vec::new();
    {
        let ngx = Ngx::init(&h);
        let rr_size = || stats_size_in_bytes(c"DLSSDGetStatsCallback");
        let uploads = RrGpuWeights::uploads();
        let rss = rss_over("rr creations", 20, n, |i| {
            let a = rr_create(&ngx, Then::Submit).expect("create");
            let one = rr_size();
            let then = if i % 2 == 0 {
                Then::Submit
            } else {
                Then::Discard
            };
            let b = rr_create(&ngx, then).expect("create a second");
            let two = rr_size();
            assert!(
                one > 0 && two > one && two - one < one,
                "cycle {i}: SizeInBytes {one} then {two}: the weights are not shared"
            );
            {
                let _fail = FailCreation::on();
                assert_eq!(
                    rr_create(&ngx, Then::Discard),
                    Err(NVSDK_NGX_Result_FAIL_OutOfGPUMemory),
                    "cycle {i}"
                );
            }
            assert_eq!(
                rr_size(),
                two,
                "cycle {i}: the failed creation kept something"
            );
            assert_eq!(RrGpuWeights::live(), 1, "cycle {i}");
            ok("ReleaseFeature", release(a));
            ok("ReleaseFeature", release(b));
            assert_eq!(
                (rr_size(), RrGpuWeights::live()),
                (0, 0),
                "cycle {i}: released"
            );
            // One upload per cycle: the failed creation shared the live copy.
            assert_eq!(RrGpuWeights::uploads() - uploads, i as u64 + 1, "cycle {i}");
        });
        problems.extend(rss.within(16.0).err());
        ngx.shutdown();
    }
    let after = {
        let ngx = Ngx::init(&h);
        let bytes = stats_size_in_bytes(c"DLSSDGetStatsCallback");
        ngx.shutdown();
        bytes
    };
    if after != 0 {
        problems.push(format!("SizeInBytes after Shutdown: {after}"));
    }
    std::env::remove_var("OPENNGX_RR_MODEL_DIR");
    problems.extend(close(h).err());
    verdict("rr creations", problems);
}
