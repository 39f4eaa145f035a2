//! Ray Reconstruction's test scaffolding shared by `rr_replay` and `rr_dynamic`: C strings,
//! `SizeInBytes` from RR's stats callback, and the caller's guide images with their barriers.

use std::ffi::CString;

use ash::vk;
use openngx::rr::feature::Guide;
use openngx_tools::devkit::copy_region;

use super::{Harness, TestImage};

pub fn c(k: &str) -> CString {
    CString::new(k).expect("key")
}

/// `SizeInBytes` from the stats callback of the capability map (`NGX_DLSSD_GET_STATS`).
pub fn size_in_bytes() -> u64 {
    super::ngx::stats_size_in_bytes(c"DLSSDGetStatsCallback")
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
    h.barrier_aspect(
        cmd,
        gi.img.image,
        layout_aspect(gi),
        layouts,
        access,
        stages,
    );
}

/// The aspect `gi`'s layout transitions name: both aspects of a combined depth/stencil image
/// move together (no separateDepthStencilLayouts needed); the copies name the depth aspect alone.
fn layout_aspect(gi: &GuideImage) -> vk::ImageAspectFlags {
    if gi.img.format == vk::Format::D24_UNORM_S8_UINT {
        vk::ImageAspectFlags::DEPTH | vk::ImageAspectFlags::STENCIL
    } else {
        gi.aspect
    }
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
    let region = copy_region(offset, w, ht);
    h.upload_image(
        cmd,
        staging,
        gi.img.image,
        layout_aspect(gi),
        vk::BufferImageCopy {
            image_subresource: vk::ImageSubresourceLayers {
                aspect_mask: gi.aspect,
                ..region.image_subresource
            },
            ..region
        },
        (
            vk::AccessFlags::SHADER_READ,
            vk::PipelineStageFlags::ALL_COMMANDS,
        ),
    );
}
