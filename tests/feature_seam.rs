//! The feature seam proven with a second feature: a trivial identity copy (compiled only for
//! this test) under an id no NGX feature uses, registered through the same path as DLSS-NR
//! (one `Description`, one `Backend`, one `register_backend` line) and driven end to end
//! through the exported C ABI on the harness's Vulkan device (lavapipe in CI), with the
//! validation layer: capabilities, discovery, create, evaluate (bytes compared), refusals,
//! release, a removed backend, shutdown.
//!
//! Contract of the copy feature: `TestCopy.Input` in `TRANSFER_SRC_OPTIMAL`,
//! `TestCopy.Output` in `TRANSFER_DST_OPTIMAL` when the recorded commands run; the feature
//! copies its `TestCopy.Width` x `TestCopy.Height` region.

mod common;

use std::ffi::{c_void, CStr};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use ash::vk;
use common::Harness;
use openngx::feature::{Backend, DeviceContext, FeatureError, ImageInput, Instance};
use openngx::ngx::abi::*;
use openngx::ngx::exports::*;
use openngx::ngx::param_exports::*;
use openngx::ngx::param_read::{invalid, opt_ui, required_image};
use openngx::ngx::params::{ParamObject, ParamRef, Value};
use openngx::ngx::resource::Role;
use openngx::ngx::{register_backend, unregister_backend, Description};
use openngx_tools::devkit::{copy_region, ngx_resource};

/// No NGX feature uses this id.
const COPY: NVSDK_NGX_Feature = 1000;
const FORMAT: vk::Format = vk::Format::R8G8B8A8_UNORM;

// ---------------------------------------------------------------------------------------------
// The feature: description, backend, instance.

struct CopyDescription;

/// The copy feature's creation parameters.
struct CopySize {
    width: u32,
    height: u32,
}

/// One evaluation: the two checked images.
struct CopyInputs {
    input: ImageInput,
    output: ImageInput,
}

impl Description for CopyDescription {
    type Create = CopySize;
    type Eval = CopyInputs;

    fn id(&self) -> NVSDK_NGX_Feature {
        COPY
    }
    fn label(&self) -> &'static str {
        "test copy"
    }
    fn model_subdir(&self) -> Option<&'static str> {
        None
    }
    fn capabilities(&self, o: &ParamObject, available: bool) {
        o.set(b"TestCopy.Available", Value::I(i32::from(available)));
    }
    fn parse_create(&self, p: &ParamRef) -> Result<CopySize, FeatureError> {
        let dim = |k: &str| match opt_ui(p, k) {
            Some(v) if v > 0 => Ok(v),
            _ => Err(invalid(k, "required, at least 1")),
        };
        Ok(CopySize {
            width: dim("TestCopy.Width")?,
            height: dim("TestCopy.Height")?,
        })
    }
    fn parse_eval(&self, p: &ParamRef, c: &CopySize) -> Result<CopyInputs, FeatureError> {
        let (w, h) = (c.width, c.height);
        Ok(CopyInputs {
            input: required_image(p, "TestCopy.Input", Role::Input(&[FORMAT]), w, h)?,
            output: required_image(p, "TestCopy.Output", Role::Output(&[FORMAT]), w, h)?,
        })
    }
    fn summary(&self, c: &CopySize) -> String {
        format!("{}x{}", c.width, c.height)
    }
}

struct CopyBackend {
    device: ash::Device,
    live: Arc<AtomicUsize>,
}

struct CopyInstance {
    device: ash::Device,
    width: u32,
    height: u32,
    live: Arc<AtomicUsize>,
}

impl Backend for CopyBackend {
    type Create = CopySize;
    type Eval = CopyInputs;

    fn name(&self) -> &str {
        "identity copy"
    }
    fn create(
        &self,
        ctx: &DeviceContext,
        model_dir: &Path,
        p: &CopySize,
        _cmd: vk::CommandBuffer,
    ) -> Result<Box<dyn Instance<CopyInputs>>, FeatureError> {
        if ctx.device != self.device.handle() {
            return Err(FeatureError::Platform("not the test's device".into()));
        }
        assert_eq!(
            model_dir,
            Path::new(""),
            "a feature without a model gets no directory"
        );
        self.live.fetch_add(1, Ordering::SeqCst);
        Ok(Box::new(CopyInstance {
            device: self.device.clone(),
            width: p.width,
            height: p.height,
            live: Arc::clone(&self.live),
        }))
    }
}

impl Instance<CopyInputs> for CopyInstance {
    fn evaluate(&mut self, cmd: vk::CommandBuffer, io: &CopyInputs) -> Result<(), FeatureError> {
        let layers = vk::ImageSubresourceLayers {
            aspect_mask: vk::ImageAspectFlags::COLOR,
            mip_level: 0,
            base_array_layer: 0,
            layer_count: 1,
        };
        let offset = |r: openngx::feature::Rect| vk::Offset3D {
            x: r.x as i32,
            y: r.y as i32,
            z: 0,
        };
        let region = vk::ImageCopy {
            src_subresource: layers,
            src_offset: offset(io.input.rect),
            dst_subresource: layers,
            dst_offset: offset(io.output.rect),
            extent: vk::Extent3D {
                width: self.width,
                height: self.height,
                depth: 1,
            },
        };
        // SAFETY: the caller's recording command buffer of this device; the images were checked
        // by the description and are in the layouts of the feature's contract.
        unsafe {
            self.device.cmd_copy_image(
                cmd,
                io.input.image,
                vk::ImageLayout::TRANSFER_SRC_OPTIMAL,
                io.output.image,
                vk::ImageLayout::TRANSFER_DST_OPTIMAL,
                &[region],
            )
        };
        Ok(())
    }
    fn release(self: Box<Self>) {
        self.live.fetch_sub(1, Ordering::SeqCst);
    }
}

// ---------------------------------------------------------------------------------------------
// The caller.

fn ok(call: &str, r: NVSDK_NGX_Result) {
    assert_eq!(r, NVSDK_NGX_Result_Success, "{call} returned {r:#x}");
}

fn set_ui(p: *mut NVSDK_NGX_Parameter, k: &CStr, v: u32) {
    // SAFETY: a live map and a C string.
    unsafe { NVSDK_NGX_Parameter_SetUI(p, k.as_ptr(), v) }
}

fn set_vp(p: *mut NVSDK_NGX_Parameter, k: &CStr, v: *mut c_void) {
    // SAFETY: a live map and a C string; the pointee outlives the call that reads it.
    unsafe { NVSDK_NGX_Parameter_SetVoidPointer(p, k.as_ptr(), v) }
}

#[test]
fn a_second_feature_plugs_in_through_the_same_path() {
    let Some(h) = Harness::new() else {
        println!("SKIP feature_seam: no Vulkan device; the test feature was not exercised");
        return;
    };
    let live = Arc::new(AtomicUsize::new(0));
    register_backend(
        CopyDescription,
        Arc::new(CopyBackend {
            device: h.device.clone(),
            live: Arc::clone(&live),
        }),
    );
    // SAFETY: the harness's live handles and proc addrs.
    ok("Init", unsafe {
        NVSDK_NGX_VULKAN_Init(
            3,
            std::ptr::null(),
            h.instance.handle(),
            h.physical,
            h.device.handle(),
            Some(h.gipa()),
            Some(h.gdpa()),
            std::ptr::null(),
            NVSDK_NGX_Version_API,
        )
    });

    // Capabilities come from the table: the copy feature's key, and DLSS-NR's still there.
    let mut caps = std::ptr::null_mut();
    // SAFETY: a valid out pointer.
    ok("GetCapabilityParameters", unsafe {
        NVSDK_NGX_VULKAN_GetCapabilityParameters(&mut caps)
    });
    let get_i = |k: &CStr| {
        let mut v = -1;
        // SAFETY: a live map.
        let r = unsafe { NVSDK_NGX_Parameter_GetI(caps, k.as_ptr(), &mut v) };
        (r, v)
    };
    assert_eq!(get_i(c"TestCopy.Available"), (NVSDK_NGX_Result_Success, 1));
    assert_eq!(get_i(c"DLSSNR.Available"), (NVSDK_NGX_Result_Success, 1));
    // SAFETY: our map.
    ok("DestroyParameters", unsafe {
        NVSDK_NGX_VULKAN_DestroyParameters(caps)
    });

    // Discovery answers for the new id.
    // SAFETY: zeroed plain-old-data structs.
    let mut info: NVSDK_NGX_FeatureDiscoveryInfo = unsafe { std::mem::zeroed() };
    info.SDKVersion = NVSDK_NGX_Version_API;
    info.FeatureID = COPY;
    // SAFETY: as above.
    let mut req: NVSDK_NGX_FeatureRequirement = unsafe { std::mem::zeroed() };
    // SAFETY: valid pointers.
    ok("GetFeatureRequirements", unsafe {
        NVSDK_NGX_VULKAN_GetFeatureRequirements(h.instance.handle(), h.physical, &info, &mut req)
    });
    assert_eq!(
        req.FeatureSupported,
        NVSDK_NGX_FeatureSupportResult_Supported
    );
    let mut scratch = usize::MAX;
    // SAFETY: valid pointers.
    ok("GetScratchBufferSize", unsafe {
        NVSDK_NGX_VULKAN_GetScratchBufferSize(COPY, std::ptr::null(), &mut scratch)
    });
    assert_eq!(scratch, 0);

    // The caller's images and a known pattern.
    let (w, ht) = (37u32, 23u32);
    let usage = vk::ImageUsageFlags::TRANSFER_SRC
        | vk::ImageUsageFlags::TRANSFER_DST
        | vk::ImageUsageFlags::SAMPLED;
    let input = h.image(w, ht, FORMAT, usage);
    let output = h.image(w, ht, FORMAT, usage);
    let (iv, ov) = (h.view(&input), h.view(&output));
    let bytes = (w * ht * 4) as usize;
    let staging = h.host_buffer(bytes as u64);
    let readback = h.host_buffer(bytes as u64);
    let pattern: Vec<u8> = (0..bytes).map(|i| (i * 7 + i / 13) as u8).collect();
    staging.write(0, &pattern);
    readback.write(0, &vec![0xAA; bytes]);

    let mut params = std::ptr::null_mut();
    // SAFETY: a valid out pointer.
    ok("AllocateParameters", unsafe {
        NVSDK_NGX_VULKAN_AllocateParameters(&mut params)
    });
    let create = |params| {
        let mut handle = std::ptr::null_mut();
        // SAFETY: our device, a recording command buffer, a live map.
        let r = h.submit(|cmd| unsafe {
            NVSDK_NGX_VULKAN_CreateFeature1(h.device.handle(), cmd, COPY, params, &mut handle)
        });
        (r, handle)
    };
    // Creation parameters are the description's: a missing size is refused, naming it.
    assert_eq!(create(params).0, NVSDK_NGX_Result_FAIL_InvalidParameter);
    set_ui(params, c"TestCopy.Width", w);
    set_ui(params, c"TestCopy.Height", ht);
    let (r, handle) = create(params);
    ok("CreateFeature1", r);
    assert_eq!(live.load(Ordering::SeqCst), 1);

    let mut in_res = ngx_resource(&input, iv, false);
    let mut out_res = ngx_resource(&output, ov, true);
    let evaluate = |handle: *mut NVSDK_NGX_Handle, cmd| {
        // SAFETY: a recording command buffer, a handle of ours (or a stale one), a live map.
        unsafe { NVSDK_NGX_VULKAN_EvaluateFeature_C(cmd, handle, params, None) }
    };
    // A missing input is the description's refusal, before anything is recorded.
    set_vp(
        params,
        c"TestCopy.Output",
        &mut out_res as *mut _ as *mut c_void,
    );
    assert_eq!(
        h.submit(|cmd| evaluate(handle, cmd)),
        NVSDK_NGX_Result_FAIL_MissingInput
    );
    set_vp(
        params,
        c"TestCopy.Input",
        &mut in_res as *mut _ as *mut c_void,
    );
    let r = h.submit(|cmd| {
        h.barrier(
            cmd,
            input.image,
            (
                vk::ImageLayout::UNDEFINED,
                vk::ImageLayout::TRANSFER_DST_OPTIMAL,
            ),
            (vk::AccessFlags::empty(), vk::AccessFlags::TRANSFER_WRITE),
            (
                vk::PipelineStageFlags::ALL_COMMANDS,
                vk::PipelineStageFlags::ALL_COMMANDS,
            ),
        );
        // SAFETY: a recording command buffer; the staging buffer holds the pattern.
        unsafe {
            h.device.cmd_copy_buffer_to_image(
                cmd,
                staging.buffer,
                input.image,
                vk::ImageLayout::TRANSFER_DST_OPTIMAL,
                &[copy_region(0, w, ht)],
            )
        };
        h.barrier(
            cmd,
            input.image,
            (
                vk::ImageLayout::TRANSFER_DST_OPTIMAL,
                vk::ImageLayout::TRANSFER_SRC_OPTIMAL,
            ),
            (
                vk::AccessFlags::TRANSFER_WRITE,
                vk::AccessFlags::TRANSFER_READ,
            ),
            (
                vk::PipelineStageFlags::ALL_COMMANDS,
                vk::PipelineStageFlags::ALL_COMMANDS,
            ),
        );
        h.barrier(
            cmd,
            output.image,
            (
                vk::ImageLayout::UNDEFINED,
                vk::ImageLayout::TRANSFER_DST_OPTIMAL,
            ),
            (vk::AccessFlags::empty(), vk::AccessFlags::TRANSFER_WRITE),
            (
                vk::PipelineStageFlags::ALL_COMMANDS,
                vk::PipelineStageFlags::ALL_COMMANDS,
            ),
        );
        let r = evaluate(handle, cmd);
        h.barrier(
            cmd,
            output.image,
            (
                vk::ImageLayout::TRANSFER_DST_OPTIMAL,
                vk::ImageLayout::TRANSFER_SRC_OPTIMAL,
            ),
            (
                vk::AccessFlags::TRANSFER_WRITE,
                vk::AccessFlags::TRANSFER_READ,
            ),
            (
                vk::PipelineStageFlags::ALL_COMMANDS,
                vk::PipelineStageFlags::ALL_COMMANDS,
            ),
        );
        // SAFETY: a recording command buffer; the readback buffer is large enough.
        unsafe {
            h.device.cmd_copy_image_to_buffer(
                cmd,
                output.image,
                vk::ImageLayout::TRANSFER_SRC_OPTIMAL,
                readback.buffer,
                &[copy_region(0, w, ht)],
            )
        };
        r
    });
    ok("EvaluateFeature_C", r);
    assert!(
        readback.read() == pattern,
        "the copy feature's output differs from its input"
    );

    // Release, then the handle is stale.
    // SAFETY: our handle.
    ok("ReleaseFeature", unsafe {
        NVSDK_NGX_VULKAN_ReleaseFeature(handle)
    });
    assert_eq!(live.load(Ordering::SeqCst), 0);
    assert_eq!(
        h.submit(|cmd| evaluate(handle, cmd)),
        NVSDK_NGX_Result_FAIL_FeatureNotFound
    );

    // Without its backend the feature stays described but cannot be created.
    unregister_backend(COPY);
    assert_eq!(create(params).0, NVSDK_NGX_Result_FAIL_NotImplemented);
    // An id nobody describes is not supported.
    let mut other = std::ptr::null_mut();
    // SAFETY: as above.
    let r = h.submit(|cmd| unsafe {
        NVSDK_NGX_VULKAN_CreateFeature1(h.device.handle(), cmd, COPY + 1, params, &mut other)
    });
    assert_eq!(r, NVSDK_NGX_Result_FAIL_FeatureNotSupported);

    // SAFETY: our map and device; every submission was waited for.
    unsafe {
        ok(
            "DestroyParameters",
            NVSDK_NGX_VULKAN_DestroyParameters(params),
        );
        ok("Shutdown1", NVSDK_NGX_VULKAN_Shutdown1(h.device.handle()));
        h.device.destroy_image_view(iv, None);
        h.device.destroy_image_view(ov, None);
    }
    h.assert_validation_clean();
}
