//! Feature sizes against the device's limits, through the NGX C ABI on the harness's device
//! (lavapipe in CI: `maxStorageBufferRange` 128 MiB, `maxMemoryAllocationSize` 2 GiB, 65535
//! workgroups per axis) with the validation layer: 1920x1080 and 3840x2160 features are
//! created (their field tensors exceed the binding range and run in row bands, `docs/
//! architecture.md`), and a size a device cannot hold (8192x2048 on lavapipe without strips) is
//! refused before anything is recorded, with `FAIL_UnsupportedParameter` and a log line naming
//! the limit; in the exact route's default strips it is created. Nothing is evaluated here
//! (creation only); the split route's bytes are proven by `bench --blocks N --check`
//! (`tools/tests/tools_bench.rs`, `docs/testing.md`).

mod common;

use std::ffi::{c_char, CStr};
use std::path::Path;
use std::sync::Mutex;
use std::time::Instant;

use common::Harness;
use openngx::ngx::abi::*;
use openngx::ngx::exports::*;
use openngx::ngx::param_exports::*;
use openngx::nr::geometry::Geometry;
use openngx::nr::gpu_frame;
use openngx::nr::graph;
use openngx::nr::record::network::NetworkOptions;

static LOCK: Mutex<()> = Mutex::new(());
static LOG: Mutex<Vec<String>> = Mutex::new(Vec::new());

unsafe extern "C" fn log_sink(
    msg: *const c_char,
    _level: NVSDK_NGX_Logging_Level,
    _f: NVSDK_NGX_Feature,
) {
    // SAFETY: the library passes a NUL-terminated message valid during the call.
    let s = unsafe { CStr::from_ptr(msg) }
        .to_string_lossy()
        .into_owned();
    LOG.lock().unwrap_or_else(|e| e.into_inner()).push(s);
}

fn take_log() -> Vec<String> {
    std::mem::take(&mut *LOG.lock().unwrap_or_else(|e| e.into_inner()))
}

/// The synthetic model (seed 0), written once per test process.
fn model_dir() -> &'static Path {
    common::synthetic_model_dir()
}

/// NGX initialised on the harness's device with a log sink (shut down on drop).
struct Ngx<'h> {
    h: &'h Harness,
    params: *mut NVSDK_NGX_Parameter,
}

impl<'h> Ngx<'h> {
    fn init(h: &'h Harness) -> Ngx<'h> {
        std::env::set_var("OPENNGX_MODEL_DIR", model_dir());
        let info = NVSDK_NGX_FeatureCommonInfo {
            PathListInfo: NVSDK_NGX_PathListInfo {
                Path: std::ptr::null(),
                Length: 0,
            },
            InternalData: std::ptr::null_mut(),
            LoggingInfo: NVSDK_NGX_LoggingInfo {
                LoggingCallback: Some(log_sink),
                MinimumLoggingLevel: NVSDK_NGX_LOGGING_LEVEL_ON,
                DisableOtherLoggingSinks: false,
            },
        };
        let path: Vec<wchar_t> = "/tmp".chars().map(|c| c as wchar_t).chain([0]).collect();
        // SAFETY: the harness's live handles and the loader's proc addrs.
        let r = unsafe {
            NVSDK_NGX_VULKAN_Init(
                11,
                path.as_ptr(),
                h.instance.handle(),
                h.physical,
                h.device.handle(),
                Some(h.gipa()),
                Some(h.gdpa()),
                &info,
                NVSDK_NGX_Version_API,
            )
        };
        assert_eq!(r, NVSDK_NGX_Result_Success, "Init");
        let mut params = std::ptr::null_mut();
        // SAFETY: valid out pointer.
        let r = unsafe { NVSDK_NGX_VULKAN_AllocateParameters(&mut params) };
        assert_eq!(r, NVSDK_NGX_Result_Success, "AllocateParameters");
        Ngx { h, params }
    }

    /// CreateFeature1 of a `w x h` feature recorded into its own submission.
    fn create(&self, w: u32, h: u32) -> Result<*mut NVSDK_NGX_Handle, NVSDK_NGX_Result> {
        // SAFETY: live map, C strings.
        unsafe {
            NVSDK_NGX_Parameter_SetUI(self.params, c"DLSSNR.Width".as_ptr(), w);
            NVSDK_NGX_Parameter_SetUI(self.params, c"DLSSNR.Height".as_ptr(), h);
        }
        let mut handle = std::ptr::null_mut();
        let t = Instant::now();
        // SAFETY: our device, a recording command buffer, a live map.
        let r = self.h.submit(|cmd| unsafe {
            NVSDK_NGX_VULKAN_CreateFeature1(
                self.h.device.handle(),
                cmd,
                NVSDK_NGX_Feature_Reserved18,
                self.params,
                &mut handle,
            )
        });
        eprintln!(
            "create {w}x{h}: {r:#x} in {:.2} s",
            t.elapsed().as_secs_f64()
        );
        if r == NVSDK_NGX_Result_Success {
            Ok(handle)
        } else {
            Err(r)
        }
    }

    /// `SizeInBytes` of the stats callback: device bytes the library holds.
    fn memory_in_use(&self) -> u64 {
        common::ngx::stats_size_in_bytes(c"DLSSNRGetStatsCallback")
    }

    fn release(&self, handle: *mut NVSDK_NGX_Handle) {
        // SAFETY: a live handle of this library; its creation was submitted and waited for.
        let r = unsafe { NVSDK_NGX_VULKAN_ReleaseFeature(handle) };
        assert_eq!(r, NVSDK_NGX_Result_Success, "ReleaseFeature");
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

/// 1920x1080 and 3840x2160 features are created on the device (before the split route, lavapipe
/// refused both with `FAIL_PlatformError`: the field's tensors exceed its 128 MiB binding range).
#[test]
fn hd_and_4k_features_are_created() {
    let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let Some(h) = Harness::new() else { return };
    let ngx = Ngx::init(&h);
    take_log();
    // Both alive at once: the second shares the weights the first uploaded.
    let mut handles = Vec::new();
    let mut floor = 0;
    for (w, ht) in [(1920, 1080), (3840, 2160)] {
        let handle = ngx
            .create(w, ht)
            .unwrap_or_else(|r| panic!("{w}x{ht}: {r:#x}; log: {:?}", take_log()));
        assert!(!handle.is_null());
        // At least the frame buffers (48 bytes per pixel) and the f32 input (64 per field pixel).
        let geometry = Geometry::new(w, ht).expect("size");
        floor += 48 * u64::from(w * ht) + 64 * geometry.field.area() as u64;
        let bytes = ngx.memory_in_use();
        assert!(
            bytes > floor,
            "{w}x{ht}: {bytes} bytes reported, under {floor}"
        );
        handles.push(handle);
    }
    for handle in handles {
        ngx.release(handle);
    }
    assert_eq!(ngx.memory_in_use(), 0, "memory left after release");
    drop(ngx);
    h.assert_validation_clean();
}

/// The largest feature the API accepts (8192x2048). Without strips (`OPENNGX_STRIP_BUDGET_MIB=0`)
/// it needs a 2 GiB field tensor in one buffer: a device that allocates less at once (lavapipe:
/// 2 GiB) refuses it at creation with `FAIL_UnsupportedParameter` and a log line naming
/// `maxMemoryAllocationSize`, before the weights are uploaded (nothing is held afterwards); a
/// device that can allocate it creates it. With the exact route's default strips the field
/// block's intermediates hold one band, and the size is created on lavapipe too.
#[test]
fn a_size_beyond_the_device_is_refused_naming_the_limit() {
    let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let Some(h) = Harness::new() else { return };
    let (w, ht) = (8192, 2048);
    let g = graph::build(&Geometry::new(w, ht).expect("size"));
    let largest = (0..g.tensors.len())
        .map(|t| (g.rows(t) * g.tensors[t].channels * g.tensors[t].dtype.size()) as u64)
        .max()
        .unwrap_or(0);
    let caps = h.context().capabilities().clone();
    let fits = largest <= caps.max_memory_allocation_size.min(caps.max_buffer_size);
    eprintln!(
        "{}: largest tensor {largest} bytes, maxMemoryAllocationSize {}, maxBufferSize {}",
        h.device_name, caps.max_memory_allocation_size, caps.max_buffer_size
    );
    // Serialised by LOCK with every other creation of this file; restored below.
    std::env::set_var("OPENNGX_STRIP_BUDGET_MIB", "0");
    let ngx = Ngx::init(&h);
    take_log();
    let refused = match ngx.create(w, ht) {
        Ok(handle) => {
            ngx.release(handle);
            None
        }
        Err(r) => Some((r, take_log(), ngx.memory_in_use())),
    };
    drop(ngx);
    std::env::remove_var("OPENNGX_STRIP_BUDGET_MIB");
    match refused {
        None => assert!(fits, "created although a tensor exceeds one allocation"),
        Some((r, log, held)) => {
            assert!(!fits, "refused with {r:#x}: {log:?}");
            assert_eq!(r, NVSDK_NGX_Result_FAIL_UnsupportedParameter);
            eprintln!("refused without strips: {log:?}");
            assert!(
                log.iter().any(|l| l.contains("maxMemoryAllocationSize")
                    && l.contains("8192x2048")
                    && l.contains("FAIL_UnsupportedParameter")),
                "no log line names the limit: {log:?}"
            );
            // Refused before the weights were uploaded: nothing is held.
            assert_eq!(held, 0);
        }
    }
    // The default: strips on the exact route. What the plan of the feature's options says
    // decides; on lavapipe (2 GiB allocations, 128 MiB bindings) it fits.
    let opts = NetworkOptions {
        input_per_frame: true,
        ..NetworkOptions::default()
    };
    let plan = gpu_frame::check_limits(&caps, &g, &opts);
    if caps.max_memory_allocation_size >= 2 << 30 {
        let l = plan.as_ref().expect("8192x2048 fits in strips");
        assert!(!l.strips.strips.is_empty());
        eprintln!(
            "in strips: workspace {:.1} MiB, {} window blocks in {} bands",
            l.workspace_bytes() as f64 / (1u64 << 20) as f64,
            l.strips.strips.len(),
            l.strips.band_count()
        );
    }
    let ngx = Ngx::init(&h);
    take_log();
    match ngx.create(w, ht) {
        Ok(handle) => {
            assert!(plan.is_ok(), "created although the plan refuses it");
            let log = take_log();
            assert!(
                log.iter().any(|l| l.contains("window blocks in strips")),
                "{log:?}"
            );
            ngx.release(handle);
            assert_eq!(ngx.memory_in_use(), 0);
        }
        Err(r) => panic!(
            "refused with {r:#x} in strips (plan: {:?}): {:?}",
            plan.map(|l| l.workspace_bytes()),
            take_log()
        ),
    }
    drop(ngx);
    h.assert_validation_clean();
}
