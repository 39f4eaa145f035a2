//! Descriptor sets for the one layout style (storage buffers at bindings `0..n`).
//!
//! A [`DescriptorArena`] owns a pool; a feature allocates the sets of its whole schedule once at
//! creation (the buffers it binds never change between frames: per-frame values travel as push
//! constants) and frees them all with the arena.

use std::sync::Arc;

use ash::vk;

use super::buffer::BufferBinding;
use super::context::GpuContext;
use super::error::{GpuError, VkContext};
use super::pipeline::ComputePipeline;

/// A descriptor pool with a fixed capacity of sets and storage-buffer descriptors.
pub struct DescriptorArena {
    ctx: Arc<GpuContext>,
    pool: vk::DescriptorPool,
    max_sets: u32,
    max_buffers: u32,
    used_sets: u32,
    used_buffers: u32,
}

impl DescriptorArena {
    pub fn new(ctx: &Arc<GpuContext>, max_sets: u32, max_buffers: u32) -> Result<Self, GpuError> {
        if max_sets == 0 || max_buffers == 0 {
            return Err(GpuError::invalid(
                "descriptor arena",
                "needs at least one set and one buffer",
            ));
        }
        let sizes = [vk::DescriptorPoolSize {
            ty: vk::DescriptorType::STORAGE_BUFFER,
            descriptor_count: max_buffers,
        }];
        let info = vk::DescriptorPoolCreateInfo::default()
            .max_sets(max_sets)
            .pool_sizes(&sizes);
        // SAFETY: valid create info on the caller's device.
        let pool = unsafe { ctx.device().create_descriptor_pool(&info, None) }
            .vk("vkCreateDescriptorPool")?;
        Ok(DescriptorArena {
            ctx: Arc::clone(ctx),
            pool,
            max_sets,
            max_buffers,
            used_sets: 0,
            used_buffers: 0,
        })
    }

    /// Allocate a set for `pipeline` and point its bindings at `buffers` (binding i = buffers[i]).
    pub fn allocate(
        &mut self,
        pipeline: &ComputePipeline,
        buffers: &[BufferBinding],
    ) -> Result<vk::DescriptorSet, GpuError> {
        if buffers.len() as u32 != pipeline.buffers {
            return Err(GpuError::invalid(
                "descriptor set",
                format!(
                    "{} buffers given, the pipeline layout has {}",
                    buffers.len(),
                    pipeline.buffers
                ),
            ));
        }
        if self.used_sets + 1 > self.max_sets
            || self.used_buffers + pipeline.buffers > self.max_buffers
        {
            return Err(GpuError::invalid(
                "descriptor arena",
                format!(
                    "full ({}/{} sets, {}/{} buffers in use, {} more needed)",
                    self.used_sets,
                    self.max_sets,
                    self.used_buffers,
                    self.max_buffers,
                    pipeline.buffers
                ),
            ));
        }
        let align = self
            .ctx
            .capabilities()
            .min_storage_buffer_offset_alignment
            .max(1);
        let max_range = self.ctx.capabilities().max_storage_buffer_range as u64;
        for (i, b) in buffers.iter().enumerate() {
            if b.offset % align != 0 || b.range == 0 || b.range > max_range {
                return Err(GpuError::invalid(
                    format!("descriptor binding {i}"),
                    format!(
                        "offset {} must be a multiple of {align}, range {} must be in 1..={max_range}",
                        b.offset, b.range
                    ),
                ));
            }
        }
        let layouts = [pipeline.set_layout];
        let info = vk::DescriptorSetAllocateInfo::default()
            .descriptor_pool(self.pool)
            .set_layouts(&layouts);
        // SAFETY: pool and layout belong to this device.
        let set = unsafe { self.ctx.device().allocate_descriptor_sets(&info) }
            .vk("vkAllocateDescriptorSets")?
            .first()
            .copied()
            .ok_or(GpuError::Vk {
                call: "vkAllocateDescriptorSets",
                result: vk::Result::ERROR_UNKNOWN,
            })?;
        self.used_sets += 1;
        self.used_buffers += pipeline.buffers;
        if !buffers.is_empty() {
            let infos: Vec<[vk::DescriptorBufferInfo; 1]> = buffers
                .iter()
                .map(|b| {
                    [vk::DescriptorBufferInfo {
                        buffer: b.buffer,
                        offset: b.offset,
                        range: b.range,
                    }]
                })
                .collect();
            let writes: Vec<_> = infos
                .iter()
                .enumerate()
                .map(|(i, info)| {
                    vk::WriteDescriptorSet::default()
                        .dst_set(set)
                        .dst_binding(i as u32)
                        .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                        .buffer_info(info)
                })
                .collect();
            // SAFETY: the set was just allocated and is not in use.
            unsafe { self.ctx.device().update_descriptor_sets(&writes, &[]) };
        }
        Ok(set)
    }

    /// Return every set to the pool. The caller guarantees none is in use by pending work.
    pub fn reset(&mut self) -> Result<(), GpuError> {
        // SAFETY: see above.
        unsafe {
            self.ctx
                .device()
                .reset_descriptor_pool(self.pool, vk::DescriptorPoolResetFlags::empty())
        }
        .vk("vkResetDescriptorPool")?;
        self.used_sets = 0;
        self.used_buffers = 0;
        Ok(())
    }
}

impl Drop for DescriptorArena {
    fn drop(&mut self) {
        // SAFETY: the owner guarantees no pending work uses the sets.
        unsafe { self.ctx.device().destroy_descriptor_pool(self.pool, None) };
    }
}
