//! Pipeline barriers written into the caller's command buffer: compute->compute (global and per
//! buffer), transfer<->compute, compute->host, image layout transitions for the caller's images,
//! and dependencies on a caller image that keep its layout. Vulkan 1.0 `vkCmdPipelineBarrier`
//! only, so nothing beyond 1.2 core is needed.

use ash::vk;

use super::buffer::BufferBinding;
use super::caller_image::CallerImage;
use super::dispatch::Recorder;

/// A dependency on one [`CallerImage`] that keeps its layout (the library never changes a
/// caller image's layout), with an optional global memory dependency `(src, dst)` recorded in
/// the same barrier (for the buffers the kernel touches beside the image).
#[derive(Clone, Copy, Debug)]
pub struct ImageDependency {
    pub src_stage: vk::PipelineStageFlags,
    pub src_access: vk::AccessFlags,
    pub dst_stage: vk::PipelineStageFlags,
    pub dst_access: vk::AccessFlags,
    pub memory: Option<(vk::AccessFlags, vk::AccessFlags)>,
}

/// One image layout transition (whole color subresource range unless `aspect` says otherwise).
#[derive(Clone, Copy, Debug)]
pub struct ImageTransition {
    pub image: vk::Image,
    pub aspect: vk::ImageAspectFlags,
    pub old_layout: vk::ImageLayout,
    pub new_layout: vk::ImageLayout,
    pub src_stage: vk::PipelineStageFlags,
    pub src_access: vk::AccessFlags,
    pub dst_stage: vk::PipelineStageFlags,
    pub dst_access: vk::AccessFlags,
}

impl ImageTransition {
    /// The caller's image (in `old_layout`, last used by any stage) made readable by transfers.
    pub fn to_transfer_src(image: vk::Image, old_layout: vk::ImageLayout) -> Self {
        ImageTransition {
            image,
            aspect: vk::ImageAspectFlags::COLOR,
            old_layout,
            new_layout: vk::ImageLayout::TRANSFER_SRC_OPTIMAL,
            src_stage: vk::PipelineStageFlags::ALL_COMMANDS,
            src_access: vk::AccessFlags::MEMORY_WRITE,
            dst_stage: vk::PipelineStageFlags::TRANSFER,
            dst_access: vk::AccessFlags::TRANSFER_READ,
        }
    }

    /// The caller's image made writable by transfers (its old contents are kept).
    pub fn to_transfer_dst(image: vk::Image, old_layout: vk::ImageLayout) -> Self {
        ImageTransition {
            new_layout: vk::ImageLayout::TRANSFER_DST_OPTIMAL,
            dst_access: vk::AccessFlags::TRANSFER_WRITE,
            ..Self::to_transfer_src(image, old_layout)
        }
    }

    /// Back to `layout` after transfers, visible to every later stage.
    pub fn back_to(image: vk::Image, from: vk::ImageLayout, layout: vk::ImageLayout) -> Self {
        ImageTransition {
            image,
            aspect: vk::ImageAspectFlags::COLOR,
            old_layout: from,
            new_layout: layout,
            src_stage: vk::PipelineStageFlags::TRANSFER,
            src_access: vk::AccessFlags::TRANSFER_WRITE,
            dst_stage: vk::PipelineStageFlags::ALL_COMMANDS,
            dst_access: vk::AccessFlags::MEMORY_READ | vk::AccessFlags::MEMORY_WRITE,
        }
    }
}

impl Recorder<'_> {
    fn memory_barrier(
        &mut self,
        src_stage: vk::PipelineStageFlags,
        src_access: vk::AccessFlags,
        dst_stage: vk::PipelineStageFlags,
        dst_access: vk::AccessFlags,
    ) {
        let barrier = vk::MemoryBarrier::default()
            .src_access_mask(src_access)
            .dst_access_mask(dst_access);
        // SAFETY: `Recorder::new` established that the command buffer is recording.
        unsafe {
            self.device().cmd_pipeline_barrier(
                self.command_buffer(),
                src_stage,
                dst_stage,
                vk::DependencyFlags::empty(),
                &[barrier],
                &[],
                &[],
            )
        };
    }

    /// Every earlier shader write is visible to later shader reads and writes (the barrier
    /// between dependent dispatches).
    pub fn compute_to_compute(&mut self) {
        self.memory_barrier(
            vk::PipelineStageFlags::COMPUTE_SHADER,
            vk::AccessFlags::SHADER_WRITE,
            vk::PipelineStageFlags::COMPUTE_SHADER,
            vk::AccessFlags::SHADER_READ | vk::AccessFlags::SHADER_WRITE,
        );
    }

    /// Like [`Self::compute_to_compute`] but limited to the given buffer ranges.
    pub fn compute_to_compute_buffers(&mut self, buffers: &[BufferBinding]) {
        let barriers: Vec<_> = buffers
            .iter()
            .map(|b| {
                vk::BufferMemoryBarrier::default()
                    .src_access_mask(vk::AccessFlags::SHADER_WRITE)
                    .dst_access_mask(vk::AccessFlags::SHADER_READ | vk::AccessFlags::SHADER_WRITE)
                    .src_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
                    .dst_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
                    .buffer(b.buffer)
                    .offset(b.offset)
                    .size(b.range)
            })
            .collect();
        // SAFETY: as above.
        unsafe {
            self.device().cmd_pipeline_barrier(
                self.command_buffer(),
                vk::PipelineStageFlags::COMPUTE_SHADER,
                vk::PipelineStageFlags::COMPUTE_SHADER,
                vk::DependencyFlags::empty(),
                &[],
                &barriers,
                &[],
            )
        };
    }

    /// Copies and fills done so far are visible to later shaders.
    pub fn transfer_to_compute(&mut self) {
        self.memory_barrier(
            vk::PipelineStageFlags::TRANSFER,
            vk::AccessFlags::TRANSFER_WRITE,
            vk::PipelineStageFlags::COMPUTE_SHADER,
            vk::AccessFlags::SHADER_READ | vk::AccessFlags::SHADER_WRITE,
        );
    }

    /// Shader writes done so far are visible to later copies.
    pub fn compute_to_transfer(&mut self) {
        self.memory_barrier(
            vk::PipelineStageFlags::COMPUTE_SHADER,
            vk::AccessFlags::SHADER_WRITE,
            vk::PipelineStageFlags::TRANSFER,
            vk::AccessFlags::TRANSFER_READ | vk::AccessFlags::TRANSFER_WRITE,
        );
    }

    /// Shader and transfer writes done so far are visible to the host once the submission has
    /// completed (for readback buffers).
    pub fn to_host(&mut self) {
        self.memory_barrier(
            vk::PipelineStageFlags::COMPUTE_SHADER | vk::PipelineStageFlags::TRANSFER,
            vk::AccessFlags::SHADER_WRITE | vk::AccessFlags::TRANSFER_WRITE,
            vk::PipelineStageFlags::HOST,
            vk::AccessFlags::HOST_READ,
        );
    }

    /// Image layout transitions (mip 0..all, layer 0..all of the given aspect).
    pub fn image_transitions(&mut self, transitions: &[ImageTransition]) {
        if transitions.is_empty() {
            return;
        }
        let mut src_stage = vk::PipelineStageFlags::empty();
        let mut dst_stage = vk::PipelineStageFlags::empty();
        let barriers: Vec<_> = transitions
            .iter()
            .map(|t| {
                src_stage |= t.src_stage;
                dst_stage |= t.dst_stage;
                vk::ImageMemoryBarrier::default()
                    .src_access_mask(t.src_access)
                    .dst_access_mask(t.dst_access)
                    .old_layout(t.old_layout)
                    .new_layout(t.new_layout)
                    .src_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
                    .dst_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
                    .image(t.image)
                    .subresource_range(vk::ImageSubresourceRange {
                        aspect_mask: t.aspect,
                        base_mip_level: 0,
                        level_count: vk::REMAINING_MIP_LEVELS,
                        base_array_layer: 0,
                        layer_count: vk::REMAINING_ARRAY_LAYERS,
                    })
            })
            .collect();
        // SAFETY: as above.
        unsafe {
            self.device().cmd_pipeline_barrier(
                self.command_buffer(),
                src_stage,
                dst_stage,
                vk::DependencyFlags::empty(),
                &[],
                &[],
                &barriers,
            )
        };
    }
}

impl Recorder<'_> {
    /// One `vkCmdPipelineBarrier`: `dep` on `img`'s subresource (old layout = new layout =
    /// `img.layout`) and, if asked, the global memory barrier beside it.
    pub fn image_dependency(&mut self, img: &CallerImage, dep: &ImageDependency) {
        let image = [vk::ImageMemoryBarrier::default()
            .src_access_mask(dep.src_access)
            .dst_access_mask(dep.dst_access)
            .old_layout(img.layout)
            .new_layout(img.layout)
            .src_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
            .dst_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
            .image(img.image)
            .subresource_range(img.subresource())];
        let mem: Vec<vk::MemoryBarrier> = dep
            .memory
            .map(|(s, d)| {
                vec![vk::MemoryBarrier::default()
                    .src_access_mask(s)
                    .dst_access_mask(d)]
            })
            .unwrap_or_default();
        // SAFETY: `Recorder::new` established that the command buffer is recording on this
        // device; the image is the caller's, live while the commands run (their contract).
        unsafe {
            self.device().cmd_pipeline_barrier(
                self.command_buffer(),
                dep.src_stage,
                dep.dst_stage,
                vk::DependencyFlags::empty(),
                &mem,
                &[],
                &image,
            )
        };
    }
}
