//! Ray Reconstruction's test scaffolding shared by `rr_replay` and `rr_dynamic`: result checks,
//! C strings, `SizeInBytes` from RR's stats callback, and the caller's guide images with their
//! barriers.

use std::ffi::{c_void, CString};

use ash::vk;
use openngx::ngx::abi::*;
use openngx::ngx::exports::*;
use openngx::ngx::param_exports::*;
use openngx::rr::feature::Guide;
use openngx_tools::devkit::copy_region;

use super::{Harness, TestImage};

pub fn ok(call: &str, r: NVSDK_NGX_Result) {
    assert_eq!(r, NVSDK_NGX_Result_Success, "{call} returned {r:#x}");
}

pub fn c(k: &str) -> CString {
    CString::new(k).expect("key")
}

/// `SizeInBytes` from the stats callback of the capability map (`NGX_DLSSD_GET_STATS`).
pub fn size_in_bytes() -> u64 {
    let mut caps = std::ptr::null_mut();
    let mut cb: *mut c_void = std::ptr::null_mut();
    let mut bytes = 0u64;
    // SAFETY: local out pointers; the callback address is a PFN_NVSDK_NGX_DLSS_GetStatsCallback.
    unsafe {
        ok(
            "GetCapabilityParameters",
            NVSDK_NGX_VULKAN_GetCapabilityParameters(&mut caps),
        );
        ok(
            "GetVoidPointer",
            NVSDK_NGX_Parameter_GetVoidPointer(caps, c"DLSSDGetStatsCallback".as_ptr(), &mut cb),
        );
        assert!(!cb.is_null());
        let stats: unsafe extern "C" fn(*mut NVSDK_NGX_Parameter) -> NVSDK_NGX_Result =
            std::mem::transmute(cb);
        ok("stats callback", stats(caps));
        ok(
            "GetULL",
            NVSDK_NGX_Parameter_GetULL(caps, c"SizeInBytes".as_ptr(), &mut bytes),
        );
        ok(
            "DestroyParameters",
            NVSDK_NGX_VULKAN_DestroyParameters(caps),
        );
    }
    bytes
}

/// One caller image per guide (and the colour): `channels` of the guide in a float format (the
/// depth in `D32_SFLOAT`, as a renderer's depth buffer).
pub struct GuideImage {
    pub guide: Guide,
    pub first: usize,
    pub lanes: usize,
    pub texel: usize,
    pub aspect: vk::ImageAspectFlags,
    pub img: TestImage,
    pub view: vk::ImageView,
}

pub fn range(aspect: vk::ImageAspectFlags) -> vk::ImageSubresourceRange {
    vk::ImageSubresourceRange {
        aspect_mask: aspect,
        ..openngx_tools::devkit::color_range()
    }
}

/// A barrier on the whole subresource of `gi`'s image.
pub fn barrier(
    h: &Harness,
    cmd: vk::CommandBuffer,
    gi: &GuideImage,
    layouts: (vk::ImageLayout, vk::ImageLayout),
    access: (vk::AccessFlags, vk::AccessFlags),
    stages: (vk::PipelineStageFlags, vk::PipelineStageFlags),
) {
    // Both aspects of a combined depth/stencil image move together (no
    // separateDepthStencilLayouts needed); the copies name the depth aspect alone.
    let aspect = if gi.img.format == vk::Format::D24_UNORM_S8_UINT {
        vk::ImageAspectFlags::DEPTH | vk::ImageAspectFlags::STENCIL
    } else {
        gi.aspect
    };
    let b = [
        openngx_tools::devkit::image_barrier(gi.img.image, layouts, access)
            .subresource_range(range(aspect)),
    ];
    // SAFETY: a recording command buffer of the harness and a live image of its device.
    unsafe {
        h.device.cmd_pipeline_barrier(
            cmd,
            stages.0,
            stages.1,
            vk::DependencyFlags::empty(),
            &[],
            &[],
            &b,
        )
    };
}

/// Records the upload of `gi`'s texels, tightly packed at `offset` of `staging`, into its image's
/// top-left `w` x `h` (the aspect of the guide), leaving it in `SHADER_READ_ONLY_OPTIMAL` for the
/// evaluation; the barrier before waits for any earlier frame's reads of the image.
pub fn upload_guide(
    h: &Harness,
    cmd: vk::CommandBuffer,
    gi: &GuideImage,
    staging: vk::Buffer,
    offset: u64,
    (w, ht): (u32, u32),
) {
    barrier(
        h,
        cmd,
        gi,
        (
            vk::ImageLayout::UNDEFINED,
            vk::ImageLayout::TRANSFER_DST_OPTIMAL,
        ),
        (
            vk::AccessFlags::SHADER_READ,
            vk::AccessFlags::TRANSFER_WRITE,
        ),
        (
            vk::PipelineStageFlags::ALL_COMMANDS,
            vk::PipelineStageFlags::TRANSFER,
        ),
    );
    let region = copy_region(offset, w, ht);
    // SAFETY: callers pass a recording command buffer of the harness, a live image of its device
    // and a staging buffer holding the texels at `offset`.
    unsafe {
        h.device.cmd_copy_buffer_to_image(
            cmd,
            staging,
            gi.img.image,
            vk::ImageLayout::TRANSFER_DST_OPTIMAL,
            &[vk::BufferImageCopy {
                image_subresource: vk::ImageSubresourceLayers {
                    aspect_mask: gi.aspect,
                    ..region.image_subresource
                },
                ..region
            }],
        )
    };
    barrier(
        h,
        cmd,
        gi,
        (
            vk::ImageLayout::TRANSFER_DST_OPTIMAL,
            vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL,
        ),
        (
            vk::AccessFlags::TRANSFER_WRITE,
            vk::AccessFlags::SHADER_READ,
        ),
        (
            vk::PipelineStageFlags::TRANSFER,
            vk::PipelineStageFlags::COMPUTE_SHADER,
        ),
    );
}
