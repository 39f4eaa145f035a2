//! End-to-end tests of the NGX entry points through their C signatures, with a mock DLSS-NR
//! `Backend` (the real DLSS-NR recorder plugs in the same way). Vulkan handles are fake
//! non-null values: the ABI layer never calls Vulkan itself, only the backend would.
//!
//! The library state is process-wide, so every test takes `LOCK` and leaves the library shut down.

use std::ffi::{c_char, c_void, CStr};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use ash::vk::{self, Handle};
use openngx::feature::{Backend, DeviceContext, FeatureError, Instance};
use openngx::ngx::abi::*;
use openngx::ngx::dlss_nr::DlssNr;
use openngx::ngx::exports::*;
use openngx::ngx::param_exports::*;
use openngx::ngx::{self};
use openngx::nr::feature::{NrCreate, NrInputs};

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

fn logged(needle: &str) -> bool {
    take_log().iter().any(|l| l.contains(needle))
}

const INSTANCE: u64 = 0x1000;
const PD: u64 = 0x2000;
const DEVICE: u64 = 0x3000;
const CMD: u64 = 0x4000;

fn init() {
    let info = NVSDK_NGX_FeatureCommonInfo {
        PathListInfo: NVSDK_NGX_PathListInfo {
            Path: std::ptr::null(),
            Length: 0,
        },
        InternalData: std::ptr::null_mut(),
        LoggingInfo: NVSDK_NGX_LoggingInfo {
            LoggingCallback: Some(log_sink),
            MinimumLoggingLevel: NVSDK_NGX_LOGGING_LEVEL_VERBOSE,
            DisableOtherLoggingSinks: false,
        },
    };
    let path: Vec<wchar_t> = "/nonexistent-app-data"
        .chars()
        .map(|c| c as wchar_t)
        .chain([0])
        .collect();
    // SAFETY: valid pointers for the call.
    let r = unsafe {
        NVSDK_NGX_VULKAN_Init(
            42,
            path.as_ptr(),
            vk::Instance::from_raw(INSTANCE),
            vk::PhysicalDevice::from_raw(PD),
            vk::Device::from_raw(DEVICE),
            None,
            None,
            &info,
            NVSDK_NGX_Version_API,
        )
    };
    assert_eq!(r, NVSDK_NGX_Result_Success);
}

fn cmd() -> vk::CommandBuffer {
    vk::CommandBuffer::from_raw(CMD)
}

#[derive(Default)]
struct Seen {
    creates: Vec<(u32, u32, PathBuf)>,
    evals: Vec<NrInputs>,
    releases: usize,
}

struct MockBackend(Arc<Mutex<Seen>>);
struct MockInstance(Arc<Mutex<Seen>>);

impl Backend for MockBackend {
    type Create = NrCreate;
    type Eval = NrInputs;
    fn name(&self) -> &str {
        "mock"
    }
    fn create(
        &self,
        device: &DeviceContext,
        model_dir: &std::path::Path,
        p: &NrCreate,
        cmd: vk::CommandBuffer,
    ) -> Result<Box<dyn Instance<NrInputs>>, FeatureError> {
        assert_eq!(
            (
                device.device.as_raw(),
                device.instance.as_raw(),
                cmd.as_raw()
            ),
            (DEVICE, INSTANCE, CMD)
        );
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .creates
            .push((p.width(), p.height(), model_dir.to_path_buf()));
        Ok(Box::new(MockInstance(self.0.clone())))
    }
    fn memory_in_use(&self) -> u64 {
        12345
    }
}

impl Instance<NrInputs> for MockInstance {
    fn evaluate(&mut self, _cmd: vk::CommandBuffer, inputs: &NrInputs) -> Result<(), FeatureError> {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .evals
            .push(inputs.clone());
        Ok(())
    }
    fn release(self: Box<Self>) {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).releases += 1;
    }
}

fn model_dir(name: &str, with_manifest: bool) -> PathBuf {
    // Under one scratch directory removed at the process's exit (the environment keeps pointing
    // at these after the test that made them).
    static ROOT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    let root = ROOT.get_or_init(|| {
        openngx_tools::scratch::process_dir(&std::env::temp_dir(), "openngx-api")
            .expect("scratch dir")
    });
    let d = root.join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("temp dir");
    if with_manifest {
        std::fs::write(d.join("manifest.json"), "{}").expect("manifest");
    }
    d
}

fn alloc() -> *mut NVSDK_NGX_Parameter {
    let mut p = std::ptr::null_mut();
    assert_eq!(
        // SAFETY: `p` is a local `*mut NVSDK_NGX_Parameter`, a writable out pointer for the call.
        unsafe { NVSDK_NGX_VULKAN_AllocateParameters(&mut p) },
        NVSDK_NGX_Result_Success
    );
    assert!(!p.is_null());
    p
}

fn image(id: u64, format: vk::Format, w: u32, h: u32, rw: bool) -> NVSDK_NGX_Resource_VK {
    NVSDK_NGX_Resource_VK {
        Resource: NVSDK_NGX_Resource_VK_Resource {
            ImageViewInfo: NVSDK_NGX_ImageViewInfo_VK {
                ImageView: vk::ImageView::from_raw(id + 1),
                Image: vk::Image::from_raw(id),
                SubresourceRange: vk::ImageSubresourceRange {
                    aspect_mask: vk::ImageAspectFlags::COLOR,
                    base_mip_level: 0,
                    level_count: 1,
                    base_array_layer: 0,
                    layer_count: 1,
                },
                Format: format,
                Width: w,
                Height: h,
            },
        },
        Type: NVSDK_NGX_RESOURCE_VK_TYPE_VK_IMAGEVIEW,
        ReadWrite: rw,
    }
}

fn set_vp(p: *mut NVSDK_NGX_Parameter, k: &CStr, v: *const c_void) {
    // SAFETY: live map, C string.
    unsafe { NVSDK_NGX_Parameter_SetVoidPointer(p, k.as_ptr(), v as *mut c_void) };
}
fn set_ui(p: *mut NVSDK_NGX_Parameter, k: &CStr, v: u32) {
    // SAFETY: live map, C string.
    unsafe { NVSDK_NGX_Parameter_SetUI(p, k.as_ptr(), v) };
}

fn create(p: *mut NVSDK_NGX_Parameter) -> (NVSDK_NGX_Result, *mut NVSDK_NGX_Handle) {
    let mut h = std::ptr::null_mut();
    // SAFETY: valid pointers.
    let r = unsafe {
        NVSDK_NGX_VULKAN_CreateFeature1(
            vk::Device::from_raw(DEVICE),
            cmd(),
            NVSDK_NGX_Feature_Reserved18,
            p,
            &mut h,
        )
    };
    (r, h)
}

#[test]
fn full_lifecycle_with_a_registered_backend() {
    let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let seen = Arc::new(Mutex::new(Seen::default()));
    ngx::register_backend(DlssNr, Arc::new(MockBackend(seen.clone())));
    init();
    take_log();

    // Capabilities report the backend and expose working callbacks.
    let mut caps = std::ptr::null_mut();
    assert_eq!(
        // SAFETY: `caps` is a local out pointer of the matching type.
        unsafe { NVSDK_NGX_VULKAN_GetCapabilityParameters(&mut caps) },
        NVSDK_NGX_Result_Success
    );
    let mut avail = -1;
    assert_eq!(
        // SAFETY: `caps` is the live map GetCapabilityParameters just returned; the key is a
        // C-string literal and `avail` a local `i32`.
        unsafe { NVSDK_NGX_Parameter_GetI(caps, c"DLSSNR.Available".as_ptr(), &mut avail) },
        NVSDK_NGX_Result_Success
    );
    assert_eq!(avail, 1);
    let mut cb: *mut c_void = std::ptr::null_mut();
    assert_eq!(
        // SAFETY: the same live map and a C-string literal key; `cb` is a local `*mut c_void` out
        // pointer.
        unsafe {
            NVSDK_NGX_Parameter_GetVoidPointer(caps, c"DLSSNRGetStatsCallback".as_ptr(), &mut cb)
        },
        NVSDK_NGX_Result_Success
    );
    // SAFETY: the map stores a PFN_NVSDK_NGX_DLSS_GetStatsCallback under this key.
    let stats: unsafe extern "C" fn(*mut NVSDK_NGX_Parameter) -> NVSDK_NGX_Result =
        unsafe { std::mem::transmute(cb) };
    // SAFETY: live map.
    assert_eq!(unsafe { stats(caps) }, NVSDK_NGX_Result_Success);
    let mut bytes = 0u64;
    assert_eq!(
        // SAFETY: the same live map and a C-string literal key; `bytes` is a local `u64` out
        // pointer.
        unsafe { NVSDK_NGX_Parameter_GetULL(caps, c"SizeInBytes".as_ptr(), &mut bytes) },
        NVSDK_NGX_Result_Success
    );
    assert_eq!(bytes, 12345);
    assert_eq!(
        // SAFETY: `caps` is an application-owned map from GetCapabilityParameters, destroyed once
        // and not used afterwards.
        unsafe { NVSDK_NGX_VULKAN_DestroyParameters(caps) },
        NVSDK_NGX_Result_Success
    );

    // No model directory: a clean failure naming the path.
    let p = alloc();
    set_ui(p, c"DLSSNR.Width", 128);
    set_ui(p, c"DLSSNR.Height", 96);
    let missing = model_dir("missing", false).join("nope");
    std::env::set_var("OPENNGX_MODEL_DIR", &missing);
    assert_eq!(create(p).0, NVSDK_NGX_Result_FAIL_UnableToInitializeFeature);
    assert!(logged(&missing.display().to_string()));
    // A validator refusal is reported with its reason.
    let dir = model_dir("ok", true);
    std::env::set_var("OPENNGX_MODEL_DIR", &dir);
    ngx::set_model_validator(Arc::new(|_: &std::path::Path| {
        Err("stage `vit`: SHA-256 mismatch".to_string())
    }));
    assert_eq!(create(p).0, NVSDK_NGX_Result_FAIL_UnableToInitializeFeature);
    assert!(logged("SHA-256 mismatch"));
    ngx::clear_model_validator();

    let (r, h) = create(p);
    assert_eq!(r, NVSDK_NGX_Result_Success);
    assert!(!h.is_null());
    assert_eq!(
        seen.lock().unwrap_or_else(|e| e.into_inner()).creates,
        vec![(128, 96, dir.clone())]
    );

    // Evaluate with the required resources; defaults reach the backend.
    let color = image(10, vk::Format::R16G16B16A16_SFLOAT, 128, 96, false);
    let out = image(20, vk::Format::R16G16B16A16_SFLOAT, 128, 96, true);
    let e = alloc();
    set_vp(e, c"DLSSNR.Color", &color as *const _ as *const c_void);
    set_vp(e, c"DLSSNR.Output", &out as *const _ as *const c_void);
    assert_eq!(
        // SAFETY: `h` is the live handle CreateFeature1 returned; `e` is a live map whose resource
        // pointers point to locals (`color`, `out`) alive for the call. The Vulkan handles are
        // fake, but the mock backend never hands them to Vulkan.
        unsafe { NVSDK_NGX_VULKAN_EvaluateFeature_C(cmd(), h, e, None) },
        NVSDK_NGX_Result_Success
    );
    // SAFETY: live map.
    unsafe { NVSDK_NGX_Parameter_SetF(e, c"DLSSNR.Intensity".as_ptr(), 0.5) };
    assert_eq!(
        // SAFETY: as above: the same live handle, map and local resources.
        unsafe { NVSDK_NGX_VULKAN_EvaluateFeature(cmd(), h, e, None) },
        NVSDK_NGX_Result_Success
    );
    {
        let s = seen.lock().unwrap_or_else(|e| e.into_inner());
        assert_eq!(s.evals.len(), 2);
        assert_eq!(
            (s.evals[0].frame().intensity, s.evals[1].frame().intensity),
            (1.0, 0.5)
        );
        assert_eq!(s.evals[0].color().image.as_raw(), 10);
        assert_eq!(s.evals[0].output().view.as_raw(), 21);
    }
    // Wrong output format and a too-small colour image are refused with their codes.
    let bad_out = image(30, vk::Format::B8G8R8A8_UNORM, 128, 96, true);
    set_vp(e, c"DLSSNR.Output", &bad_out as *const _ as *const c_void);
    assert_eq!(
        // SAFETY: as above; `bad_out` is a local alive for the call too.
        unsafe { NVSDK_NGX_VULKAN_EvaluateFeature_C(cmd(), h, e, None) },
        NVSDK_NGX_Result_FAIL_UnsupportedFormat
    );
    assert!(logged("DLSSNR.Output"));
    let small = image(40, vk::Format::R8G8B8A8_UNORM, 64, 96, false);
    set_vp(e, c"DLSSNR.Output", &out as *const _ as *const c_void);
    set_vp(e, c"DLSSNR.Color", &small as *const _ as *const c_void);
    assert_eq!(
        // SAFETY: as above; `small` is a local alive for the call too.
        unsafe { NVSDK_NGX_VULKAN_EvaluateFeature_C(cmd(), h, e, None) },
        NVSDK_NGX_Result_FAIL_InvalidParameter
    );
    assert!(logged("64x96"));

    // Release, then every later use of the handle is refused.
    assert_eq!(
        // SAFETY: `h` is the live handle CreateFeature1 returned; the library finds it in its
        // registry and releases it once.
        unsafe { NVSDK_NGX_VULKAN_ReleaseFeature(h) },
        NVSDK_NGX_Result_Success
    );
    assert_eq!(
        // SAFETY: ReleaseFeature only compares the pointer against its registry (its contract); the
        // released handle is never dereferenced.
        unsafe { NVSDK_NGX_VULKAN_ReleaseFeature(h) },
        NVSDK_NGX_Result_FAIL_FeatureNotFound
    );
    set_vp(e, c"DLSSNR.Color", &color as *const _ as *const c_void);
    assert_eq!(
        // SAFETY: `e` is still a live map with local resources; the released handle `h` is only
        // looked up in the registry, never dereferenced.
        unsafe { NVSDK_NGX_VULKAN_EvaluateFeature_C(cmd(), h, e, None) },
        NVSDK_NGX_Result_FAIL_FeatureNotFound
    );
    assert_eq!(seen.lock().unwrap_or_else(|e| e.into_inner()).releases, 1);

    // A feature left alive is released by Shutdown.
    let (r, h2) = create(p);
    assert_eq!(r, NVSDK_NGX_Result_Success);
    // SAFETY: our handles.
    assert_ne!(unsafe { (*h2).Id }, 0);
    // SAFETY: our maps.
    unsafe {
        assert_eq!(
            NVSDK_NGX_VULKAN_DestroyParameters(p),
            NVSDK_NGX_Result_Success
        );
        assert_eq!(
            NVSDK_NGX_VULKAN_DestroyParameters(e),
            NVSDK_NGX_Result_Success
        );
    }
    assert_eq!(
        NVSDK_NGX_VULKAN_Shutdown1(vk::Device::null()),
        NVSDK_NGX_Result_Success
    );
    assert_eq!(seen.lock().unwrap_or_else(|e| e.into_inner()).releases, 2);
    assert_eq!(
        NVSDK_NGX_VULKAN_Shutdown(),
        NVSDK_NGX_Result_FAIL_NotInitialized
    );
    ngx::unregister_backend(NVSDK_NGX_Feature_Reserved18);
    std::env::remove_var("OPENNGX_MODEL_DIR");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn without_a_backend_creation_fails_cleanly() {
    let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    ngx::unregister_backend(NVSDK_NGX_Feature_Reserved18);
    init();
    take_log();
    let dir = model_dir("nobackend", true);
    std::env::set_var("OPENNGX_MODEL_DIR", &dir);
    let p = alloc();
    // Parameter errors come first, with the parameter named.
    assert_eq!(create(p).0, NVSDK_NGX_Result_FAIL_InvalidParameter);
    assert!(logged("DLSSNR.Width"));
    set_ui(p, c"DLSSNR.Width", 256);
    set_ui(p, c"DLSSNR.Height", 256);
    let (r, h) = create(p);
    assert_eq!(
        (r, h),
        (NVSDK_NGX_Result_FAIL_NotImplemented, std::ptr::null_mut())
    );
    assert!(logged("no backend for feature 18"));
    let mut caps = std::ptr::null_mut();
    assert_eq!(
        // SAFETY: `caps` is a local out pointer of the matching type.
        unsafe { NVSDK_NGX_VULKAN_GetParameters(&mut caps) },
        NVSDK_NGX_Result_Success
    );
    let mut avail = -1;
    assert_eq!(
        // SAFETY: `caps` is the live library-owned map GetParameters returned; the key is a
        // C-string literal and `avail` a local `i32`.
        unsafe { NVSDK_NGX_Parameter_GetI(caps, c"DLSSNR.Available".as_ptr(), &mut avail) },
        NVSDK_NGX_Result_Success
    );
    assert_eq!(avail, 0);
    // The library-owned map cannot be destroyed by the application.
    assert_eq!(
        // SAFETY: DestroyParameters only compares the pointer against its registry (its contract)
        // and refuses the library-owned map untouched.
        unsafe { NVSDK_NGX_VULKAN_DestroyParameters(caps) },
        NVSDK_NGX_Result_FAIL_InvalidParameter
    );
    assert_eq!(
        // SAFETY: `p` is an application-owned map from `alloc`, destroyed once here and not used
        // afterwards.
        unsafe { NVSDK_NGX_VULKAN_DestroyParameters(p) },
        NVSDK_NGX_Result_Success
    );
    assert_eq!(
        // SAFETY: DestroyParameters only compares the pointer against its registry (its contract);
        // the destroyed map is never dereferenced.
        unsafe { NVSDK_NGX_VULKAN_DestroyParameters(p) },
        NVSDK_NGX_Result_FAIL_InvalidParameter
    );
    assert_eq!(NVSDK_NGX_VULKAN_Shutdown(), NVSDK_NGX_Result_Success);
    std::env::remove_var("OPENNGX_MODEL_DIR");
    let _ = std::fs::remove_dir_all(&dir);
}

// A parameter object implemented "by the application": its own layout and vtable, in the
// Itanium slot order. The library must read it only through the vtable.
#[repr(C)]
struct Foreign {
    vtable: *const [*const c_void; 17],
    width: u32,
    height: u32,
    gets: u32,
}

unsafe extern "C" fn foreign_get_ui(
    this: *mut Foreign,
    name: *const c_char,
    out: *mut u32,
) -> NVSDK_NGX_Result {
    // SAFETY: called through the vtable with our object and valid pointers.
    unsafe {
        (*this).gets += 1;
        match CStr::from_ptr(name).to_bytes() {
            b"DLSSNR.Width" => *out = (*this).width,
            b"DLSSNR.Height" => *out = (*this).height,
            _ => return NVSDK_NGX_Result_FAIL_InvalidParameter,
        }
    }
    NVSDK_NGX_Result_Success
}
unsafe extern "C" fn foreign_get_other(
    _: *mut Foreign,
    _: *const c_char,
    _: *mut c_void,
) -> NVSDK_NGX_Result {
    NVSDK_NGX_Result_FAIL_InvalidParameter
}
unsafe extern "C" fn foreign_set(_: *mut Foreign, _: *const c_char, _: u64) {}

struct Vt([*const c_void; 17]);
// SAFETY: immutable function addresses.
unsafe impl Sync for Vt {}

#[test]
fn foreign_parameter_objects_are_read_through_their_vtable() {
    let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    ngx::unregister_backend(NVSDK_NGX_Feature_Reserved18);
    // The placeholder model directory holds only `{}`: use the manifest-exists check.
    ngx::clear_model_validator();
    init();
    let dir = model_dir("foreign", true);
    std::env::set_var("OPENNGX_MODEL_DIR", &dir);
    type G = unsafe extern "C" fn(*mut Foreign, *const c_char, *mut c_void) -> NVSDK_NGX_Result;
    type S = unsafe extern "C" fn(*mut Foreign, *const c_char, u64);
    let other = foreign_get_other as G as *const c_void;
    let set = foreign_set as S as *const c_void;
    let mut slots = [set; 17];
    for s in slots.iter_mut().skip(8) {
        *s = other;
    }
    type GU = unsafe extern "C" fn(*mut Foreign, *const c_char, *mut u32) -> NVSDK_NGX_Result;
    slots[11] = foreign_get_ui as GU as *const c_void; // Get(const char*, unsigned int*) in Itanium order
    let vt = Box::new(Vt(slots));
    // Raw allocation: the library reads and the test writes the object only through pointers.
    let obj = Box::into_raw(Box::new(Foreign {
        vtable: &vt.0,
        width: 512,
        height: 512,
        gets: 0,
    }));
    let p = obj as *mut NVSDK_NGX_Parameter;
    let mut h = std::ptr::null_mut();
    // SAFETY: valid pointers; `obj` behaves as a parameter object.
    let r =
        unsafe { NVSDK_NGX_VULKAN_CreateFeature(cmd(), NVSDK_NGX_Feature_Reserved18, p, &mut h) };
    // Width/height were read (so validation passed) and creation stopped at the missing backend.
    assert_eq!(r, NVSDK_NGX_Result_FAIL_NotImplemented);
    // SAFETY: live allocation.
    assert!(unsafe { (*obj).gets } >= 2);
    // SAFETY: live allocation.
    unsafe { (*obj).width = 10 };
    // SAFETY: as above.
    let r =
        unsafe { NVSDK_NGX_VULKAN_CreateFeature(cmd(), NVSDK_NGX_Feature_Reserved18, p, &mut h) };
    assert_eq!(r, NVSDK_NGX_Result_FAIL_InvalidParameter);
    // The C accessors dispatch through the object's vtable too.
    let mut w = 0u32;
    assert_eq!(
        // SAFETY: `p` is the live `Foreign` object, whose first word points at a 17-slot vtable in
        // Itanium order whose UI getter reads only its fields; the key is a C-string literal and
        // `w` a local `u32`.
        unsafe { NVSDK_NGX_Parameter_GetUI(p, c"DLSSNR.Height".as_ptr(), &mut w) },
        NVSDK_NGX_Result_Success
    );
    assert_eq!(w, 512);
    // And DestroyParameters refuses it without touching it.
    assert_eq!(
        // SAFETY: DestroyParameters only compares the pointer against its registry (its contract)
        // and refuses a foreign object without touching it.
        unsafe { NVSDK_NGX_VULKAN_DestroyParameters(p) },
        NVSDK_NGX_Result_FAIL_InvalidParameter
    );
    assert_eq!(
        NVSDK_NGX_VULKAN_Shutdown1(vk::Device::from_raw(DEVICE)),
        NVSDK_NGX_Result_Success
    );
    // SAFETY: allocated above, no longer used by anyone.
    drop(unsafe { Box::from_raw(obj) });
    std::env::remove_var("OPENNGX_MODEL_DIR");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn discovery_queries_and_result_strings() {
    let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    ngx::unregister_backend(NVSDK_NGX_Feature_Reserved18);
    // SAFETY: zeroed plain-old-data struct.
    let mut info: NVSDK_NGX_FeatureDiscoveryInfo = unsafe { std::mem::zeroed() };
    info.SDKVersion = NVSDK_NGX_Version_API;
    info.FeatureID = NVSDK_NGX_Feature_Reserved18;
    // SAFETY: zeroed plain-old-data struct.
    let mut req: NVSDK_NGX_FeatureRequirement = unsafe { std::mem::zeroed() };
    req.FeatureSupported = 0xFF;
    let (i, pd) = (
        vk::Instance::from_raw(INSTANCE),
        vk::PhysicalDevice::from_raw(PD),
    );
    assert_eq!(
        // SAFETY: `info` and `req` are initialised locals; the instance and physical device are
        // fake but ignored by the library, and the query is callable before Init.
        unsafe { NVSDK_NGX_VULKAN_GetFeatureRequirements(i, pd, &info, &mut req) },
        NVSDK_NGX_Result_Success
    );
    assert_eq!(
        req.FeatureSupported,
        NVSDK_NGX_FeatureSupportResult_NotImplemented
    );
    info.FeatureID = NVSDK_NGX_Feature_SuperSampling;
    assert_eq!(
        // SAFETY: as above (the same locals, only the feature id changed).
        unsafe { NVSDK_NGX_VULKAN_GetFeatureRequirements(i, pd, &info, &mut req) },
        NVSDK_NGX_Result_FAIL_FeatureNotSupported
    );
    info.FeatureID = NVSDK_NGX_Feature_Reserved18;
    let mut n = 99u32;
    let mut props: *mut VkExtensionProperties = std::ptr::null_mut();
    assert_eq!(
        // SAFETY: `n` and `props` are local out pointers of the matching types. The device query
        // reads the physical device's extensions, so it gets NULL handles here (nothing to
        // check, so nothing listed); `feature_nr` checks it on a real device.
        unsafe {
            NVSDK_NGX_VULKAN_GetFeatureDeviceExtensionRequirements(
                vk::Instance::null(),
                vk::PhysicalDevice::null(),
                &info,
                &mut n,
                &mut props,
            )
        },
        NVSDK_NGX_Result_Success
    );
    assert_eq!(n, 0);
    assert!(!props.is_null());
    assert_eq!(
        // SAFETY: `info` and `n` are locals and NULL out arrays are allowed by the contract (and
        // rejected).
        unsafe {
            NVSDK_NGX_VULKAN_GetFeatureInstanceExtensionRequirements(
                &info,
                &mut n,
                std::ptr::null_mut(),
            )
        },
        NVSDK_NGX_Result_FAIL_InvalidParameter
    );
    let s = GetNGXResultAsString(NVSDK_NGX_Result_FAIL_RWFlagMissing);
    let text: String = (0..)
        .map_while(|k| {
            // SAFETY: NUL-terminated static string.
            let c = unsafe { *s.add(k) };
            (c != 0).then(|| char::from_u32(c as u32).unwrap_or('?'))
        })
        .collect();
    assert_eq!(text, "NVSDK_NGX_Result_FAIL_RWFlagMissing");
}

/// A destroyed map's address is never given to a new map, so destroying a stale pointer again is
/// refused even after many new maps, and never frees a live one. (Before, the allocator handed
/// the address straight back: the second DestroyParameters returned Success and freed the new
/// map.) A stale pointer used through the accessors answers as a destroyed map.
#[test]
fn a_destroyed_map_is_refused_even_after_its_address_could_be_reused() {
    let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    init();
    let old = alloc();
    let key = c"Test.Key";
    // SAFETY: `old` is a live map of ours; `key` a C string.
    unsafe { NVSDK_NGX_Parameter_SetUI(old, key.as_ptr(), 1) };
    assert_eq!(
        // SAFETY: a live application-owned map, destroyed once.
        unsafe { NVSDK_NGX_VULKAN_DestroyParameters(old) },
        NVSDK_NGX_Result_Success
    );
    // Allocate as the application would; with a plain free the very next map took `old`'s place.
    let fresh: Vec<_> = (0..1000).map(|_| alloc()).collect();
    assert!(
        !fresh.contains(&old),
        "a new map got a destroyed map's address"
    );
    assert_eq!(
        // SAFETY: DestroyParameters only compares the pointer against its registry.
        unsafe { NVSDK_NGX_VULKAN_DestroyParameters(old) },
        NVSDK_NGX_Result_FAIL_InvalidParameter
    );
    // The stale pointer through the accessors: Set ignored, Get refused with the output untouched.
    let mut v = 0xDEAD_BEEFu32;
    // SAFETY: the shell of a destroyed map of ours stays valid for the process (its contract).
    unsafe { NVSDK_NGX_Parameter_SetUI(old, key.as_ptr(), 2) };
    assert_eq!(
        // SAFETY: as above; `v` is writable.
        unsafe { NVSDK_NGX_Parameter_GetUI(old, key.as_ptr(), &mut v) },
        NVSDK_NGX_Result_FAIL_InvalidParameter
    );
    assert_eq!(v, 0xDEAD_BEEF);
    // Every new map is live and works, and each is destroyed exactly once.
    for (i, &q) in fresh.iter().enumerate() {
        let mut got = 0u32;
        // SAFETY: `q` is a live map of ours; `got` is writable.
        unsafe { NVSDK_NGX_Parameter_SetUI(q, key.as_ptr(), i as u32) };
        assert_eq!(
            // SAFETY: as above.
            unsafe { NVSDK_NGX_Parameter_GetUI(q, key.as_ptr(), &mut got) },
            NVSDK_NGX_Result_Success
        );
        assert_eq!(got, i as u32);
        assert_eq!(
            // SAFETY: live, destroyed once.
            unsafe { NVSDK_NGX_VULKAN_DestroyParameters(q) },
            NVSDK_NGX_Result_Success
        );
    }
    assert_eq!(NVSDK_NGX_VULKAN_Shutdown(), NVSDK_NGX_Result_Success);
}

/// Float and double values read through the integer getters saturate (truncated toward zero,
/// clamped to the type's range, NaN -> 0), as docs/ngx.md says. Before: `SetF(1e10)` read as
/// `GetUI` 1410065408 and `SetF(-5)` as `GetULL` 18446744073709551611.
#[test]
fn float_to_integer_reads_saturate() {
    let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    init();
    let p = alloc();
    let k = c"Test.Value";
    let read = |what: &str| -> (u32, i32, u64) {
        let (mut ui, mut i, mut ull) = (0u32, 0i32, 0u64);
        // SAFETY: `p` is a live map of ours; the outputs are writable locals.
        let r = unsafe {
            [
                NVSDK_NGX_Parameter_GetUI(p, k.as_ptr(), &mut ui),
                NVSDK_NGX_Parameter_GetI(p, k.as_ptr(), &mut i),
                NVSDK_NGX_Parameter_GetULL(p, k.as_ptr(), &mut ull),
            ]
        };
        assert_eq!(r, [NVSDK_NGX_Result_Success; 3], "{what}");
        (ui, i, ull)
    };
    let (max_u, max_i, min_i) = (u32::MAX, i32::MAX, i32::MIN);
    let floats: [(f32, (u32, i32, u64)); 8] = [
        (1e10, (max_u, max_i, 10_000_000_000)),
        (-5.0, (0, -5, 0)),
        (-5.9, (0, -5, 0)),
        (2.99, (2, 2, 2)),
        (1e30, (max_u, max_i, u64::MAX)),
        (-1e30, (0, min_i, 0)),
        (f32::INFINITY, (max_u, max_i, u64::MAX)),
        (f32::NAN, (0, 0, 0)),
    ];
    for (f, want) in floats {
        // SAFETY: as above.
        unsafe { NVSDK_NGX_Parameter_SetF(p, k.as_ptr(), f) };
        assert_eq!(read(&format!("SetF({f})")), want, "SetF({f})");
    }
    let doubles: [(f64, (u32, i32, u64)); 7] = [
        (4294967295.9, (max_u, max_i, 4_294_967_295)),
        (4294967296.0, (max_u, max_i, 4_294_967_296)),
        (-2147483649.0, (0, min_i, 0)),
        (1.8446744073709552e19, (max_u, max_i, u64::MAX)),
        (-1e300, (0, min_i, 0)),
        (f64::NEG_INFINITY, (0, min_i, 0)),
        (f64::NAN, (0, 0, 0)),
    ];
    for (d, want) in doubles {
        // SAFETY: as above.
        unsafe { NVSDK_NGX_Parameter_SetD(p, k.as_ptr(), d) };
        assert_eq!(read(&format!("SetD({d})")), want, "SetD({d})");
    }
    // Integer -> integer stays C's modular conversion.
    // SAFETY: as above.
    unsafe { NVSDK_NGX_Parameter_SetI(p, k.as_ptr(), -1) };
    assert_eq!(read("SetI(-1)"), (max_u, -1, u64::MAX));
    assert_eq!(
        // SAFETY: live, destroyed once.
        unsafe { NVSDK_NGX_VULKAN_DestroyParameters(p) },
        NVSDK_NGX_Result_Success
    );
    assert_eq!(NVSDK_NGX_VULKAN_Shutdown(), NVSDK_NGX_Result_Success);
}
