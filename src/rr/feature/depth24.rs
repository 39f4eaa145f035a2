//! The exact read of 24-bit depth (`D24_UNORM_S8_UINT`, `X8_D24_UNORM_PACK32`) into a lane of
//! RR's guides: a sampled f32 cannot give a 24-bit code back (the codes are 2^-24 apart, as f32's
//! ulp just below 1 is), so the depth aspect is copied to a buffer of 32-bit words (Vulkan packs
//! D24 into the low 24 bits, the top 8 undefined) and `shaders/rr/import_d24.comp` decodes each
//! masked code with `numerics::normalized::unorm(c, 24)` (`RN_f32(c / (2^24 - 1))`), then
//! `invert_depth` for `DepthInverted`.
//!
//! The copy needs what sampling does not: the caller's image must have `TRANSFER_SRC` usage, and
//! it is moved from its layout (`SHADER_READ_ONLY_OPTIMAL` or `GENERAL`) to
//! `TRANSFER_SRC_OPTIMAL` and back within the recorded commands, both aspects of `D24S8` together
//! (valid with or without `separateDepthStencilLayouts`; the stencil is assumed to be in the same
//! layout as the depth). Only the view's mip and layer are touched.

use std::sync::Arc;

use ash::vk;

use crate::gpu::{
    Bind, BufferBinding, CallerImage, CallerImages, GpuContext, GpuError, PipelineDesc, Recorder,
};

/// The decode kernel.
pub const SHADER: &str = "rr/import_d24";

/// Whether `format` is a 24-bit depth format read by this copy.
pub fn is_depth24(format: vk::Format) -> bool {
    matches!(
        format,
        vk::Format::D24_UNORM_S8_UINT | vk::Format::X8_D24_UNORM_PACK32
    )
}

/// Bytes of the word buffer for a `size` region.
pub fn words_bytes(size: (u32, u32)) -> u64 {
    u64::from(size.0) * u64::from(size.1) * 4
}

/// The aspects a layout transition of `format`'s image covers.
fn aspects(format: vk::Format) -> vk::ImageAspectFlags {
    if format == vk::Format::D24_UNORM_S8_UINT {
        vk::ImageAspectFlags::DEPTH | vk::ImageAspectFlags::STENCIL
    } else {
        vk::ImageAspectFlags::DEPTH
    }
}

/// Record the copy of `src`'s depth (the `size` region at `base`) into `words` and its decode
/// into lane `first` of `dst` (`stride` f32 words per texel), inverted with `invert`. Everything
/// that can fail (checks, pipeline, descriptor set) happens before the first command.
#[allow(clippy::too_many_arguments)]
pub fn record(
    ctx: &Arc<GpuContext>,
    rec: &mut Recorder,
    bridge: &mut CallerImages,
    src: &CallerImage,
    words: BufferBinding,
    dst: BufferBinding,
    (stride, first): (u32, u32),
    base: (u32, u32),
    size: (u32, u32),
    invert: bool,
) -> Result<(), GpuError> {
    let what = "24-bit depth import";
    if !is_depth24(src.format) {
        return Err(GpuError::invalid(what, format!("format {:?}", src.format)));
    }
    src.check_rect(what, base, size)?;
    if src.layout != vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL
        && src.layout != vk::ImageLayout::GENERAL
    {
        return Err(GpuError::invalid(
            what,
            format!(
                "image layout {:?}: SHADER_READ_ONLY_OPTIMAL or GENERAL expected",
                src.layout
            ),
        ));
    }
    let texels = u64::from(size.0) * u64::from(size.1);
    if words.range < words_bytes(size)
        || first >= stride
        || stride > 0xFFFF
        || dst.range < texels * u64::from(stride) * 4
    {
        return Err(GpuError::invalid(
            what,
            format!(
                "buffers of {} and {} bytes for {}x{} texels at lane {first} of {stride}",
                words.range, dst.range, size.0, size.1
            ),
        ));
    }
    let groups = [size.0.div_ceil(8), size.1.div_ceil(8), 1];
    let max = ctx.capabilities().max_compute_work_group_count;
    if groups[0] > max[0] || groups[1] > max[1] {
        return Err(GpuError::invalid(
            what,
            format!("{groups:?} workgroups exceed {max:?}"),
        ));
    }
    let pipeline = ctx.pipeline(&PipelineDesc::new(SHADER, 2, 16))?;
    let set = bridge.descriptor_set(&pipeline, &[Bind::Buffer(words), Bind::Buffer(dst)])?;

    let range = vk::ImageSubresourceRange {
        aspect_mask: aspects(src.format),
        base_mip_level: src.mip_level,
        level_count: 1,
        base_array_layer: src.array_layer,
        layer_count: 1,
    };
    let transition = |old, new, src_access, dst_access| {
        [vk::ImageMemoryBarrier::default()
            .src_access_mask(src_access)
            .dst_access_mask(dst_access)
            .old_layout(old)
            .new_layout(new)
            .src_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
            .dst_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
            .image(src.image)
            .subresource_range(range)]
    };
    let device = rec.context().device();
    let cmd = rec.command_buffer();
    // The caller's writes of the image become visible to the copy, which also waits for
    // earlier work on `words` (a previous frame's decode read it).
    let to_copy = transition(
        src.layout,
        vk::ImageLayout::TRANSFER_SRC_OPTIMAL,
        vk::AccessFlags::MEMORY_WRITE,
        vk::AccessFlags::TRANSFER_READ,
    );
    let mem = [vk::MemoryBarrier::default()
        .src_access_mask(vk::AccessFlags::MEMORY_WRITE)
        .dst_access_mask(vk::AccessFlags::TRANSFER_WRITE)];
    let region = vk::BufferImageCopy {
        buffer_offset: words.offset,
        buffer_row_length: 0,
        buffer_image_height: 0,
        image_subresource: vk::ImageSubresourceLayers {
            aspect_mask: vk::ImageAspectFlags::DEPTH,
            mip_level: src.mip_level,
            base_array_layer: src.array_layer,
            layer_count: 1,
        },
        image_offset: vk::Offset3D {
            x: base.0 as i32,
            y: base.1 as i32,
            z: 0,
        },
        image_extent: vk::Extent3D {
            width: size.0,
            height: size.1,
            depth: 1,
        },
    };
    // Back to the caller's layout (later work of any stage sees it so), and the copied words
    // visible to the decode.
    let back = transition(
        vk::ImageLayout::TRANSFER_SRC_OPTIMAL,
        src.layout,
        vk::AccessFlags::empty(),
        vk::AccessFlags::MEMORY_READ | vk::AccessFlags::MEMORY_WRITE,
    );
    let copied = [vk::MemoryBarrier::default()
        .src_access_mask(vk::AccessFlags::TRANSFER_WRITE)
        .dst_access_mask(vk::AccessFlags::SHADER_READ)];
    // SAFETY: `Recorder` holds a command buffer recording on this device; the image is the
    // caller's, live while the commands run (the NGX contract), the buffers are ours and large
    // enough (checked above), the region lies inside the image (`check_rect`).
    unsafe {
        device.cmd_pipeline_barrier(
            cmd,
            vk::PipelineStageFlags::ALL_COMMANDS,
            vk::PipelineStageFlags::TRANSFER,
            vk::DependencyFlags::empty(),
            &mem,
            &[],
            &to_copy,
        );
        device.cmd_copy_image_to_buffer(
            cmd,
            src.image,
            vk::ImageLayout::TRANSFER_SRC_OPTIMAL,
            words.buffer,
            &[region],
        );
        device.cmd_pipeline_barrier(
            cmd,
            vk::PipelineStageFlags::TRANSFER,
            vk::PipelineStageFlags::ALL_COMMANDS,
            vk::DependencyFlags::empty(),
            &copied,
            &[],
            &back,
        );
    }
    rec.bind(&pipeline, set);
    rec.push_words(&[size.0, size.1, stride | (first << 16), u32::from(invert)])?;
    rec.dispatch(groups)?;
    rec.compute_to_compute_buffers(&[dst]);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_and_aspects() {
        assert!(is_depth24(vk::Format::D24_UNORM_S8_UINT));
        assert!(is_depth24(vk::Format::X8_D24_UNORM_PACK32));
        assert!(!is_depth24(vk::Format::D16_UNORM));
        assert!(!is_depth24(vk::Format::D32_SFLOAT));
        assert_eq!(
            aspects(vk::Format::D24_UNORM_S8_UINT),
            vk::ImageAspectFlags::DEPTH | vk::ImageAspectFlags::STENCIL
        );
        assert_eq!(
            aspects(vk::Format::X8_D24_UNORM_PACK32),
            vk::ImageAspectFlags::DEPTH
        );
        assert_eq!(words_bytes((64, 48)), 64 * 48 * 4);
    }
}
