//! Descriptor sets of the one layout style (set 0: storage buffers, some bindings images).
//!
//! A [`DescriptorArena`] owns a pool of a fixed capacity. A feature allocates the sets of its
//! whole schedule once at creation (the buffers it binds never change between frames: per-frame
//! values travel as push constants) and frees them all with the arena. An arena made
//! [`freeable`](ArenaCapacity::freeable) also gives single sets back, for the sets that bind the
//! caller's images (`image_bindings`), which come and go with those images.

use std::collections::HashMap;
use std::sync::Arc;

use ash::vk;

use super::buffer::BufferBinding;
use super::context::GpuContext;
use super::error::{GpuError, VkContext};
use super::pipeline::{ComputePipeline, DescriptorKind};

/// What one binding of a set points at.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Descriptor {
    Buffer(BufferBinding),
    /// A view the library made of an image, in the layout it will be in when the commands run.
    SampledImage(vk::ImageView, vk::ImageLayout),
    StorageImage(vk::ImageView, vk::ImageLayout),
}

impl Descriptor {
    pub fn kind(&self) -> DescriptorKind {
        match self {
            Descriptor::Buffer(_) => DescriptorKind::StorageBuffer,
            Descriptor::SampledImage(..) => DescriptorKind::SampledImage,
            Descriptor::StorageImage(..) => DescriptorKind::StorageImage,
        }
    }

    /// The image view this descriptor names, if any.
    pub fn view(&self) -> Option<vk::ImageView> {
        match self {
            Descriptor::Buffer(_) => None,
            Descriptor::SampledImage(v, _) | Descriptor::StorageImage(v, _) => Some(*v),
        }
    }
}

/// How many sets and descriptors of each kind an arena holds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ArenaCapacity {
    pub sets: u32,
    pub storage_buffers: u32,
    pub sampled_images: u32,
    pub storage_images: u32,
    /// Sets can be given back one by one ([`DescriptorArena::free`]).
    pub freeable: bool,
}

/// Descriptors of each kind (in use or capacity).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Counts {
    sets: u32,
    buffers: u32,
    sampled: u32,
    storage: u32,
}

impl Counts {
    fn of(pipeline: &ComputePipeline) -> Counts {
        let mut c = Counts {
            sets: 1,
            ..Counts::default()
        };
        for b in 0..pipeline.bindings {
            match pipeline.kind(b) {
                DescriptorKind::StorageBuffer => c.buffers += 1,
                DescriptorKind::SampledImage => c.sampled += 1,
                DescriptorKind::StorageImage => c.storage += 1,
            }
        }
        c
    }

    fn plus(self, o: Counts) -> Counts {
        Counts {
            sets: self.sets + o.sets,
            buffers: self.buffers + o.buffers,
            sampled: self.sampled + o.sampled,
            storage: self.storage + o.storage,
        }
    }

    fn minus(self, o: Counts) -> Counts {
        Counts {
            sets: self.sets.saturating_sub(o.sets),
            buffers: self.buffers.saturating_sub(o.buffers),
            sampled: self.sampled.saturating_sub(o.sampled),
            storage: self.storage.saturating_sub(o.storage),
        }
    }

    fn fits(self, max: Counts) -> bool {
        self.sets <= max.sets
            && self.buffers <= max.buffers
            && self.sampled <= max.sampled
            && self.storage <= max.storage
    }
}

/// A descriptor pool with a fixed capacity of sets and descriptors.
pub struct DescriptorArena {
    ctx: Arc<GpuContext>,
    pool: vk::DescriptorPool,
    max: Counts,
    used: Counts,
    /// What each live set holds, so [`DescriptorArena::free`] returns it (freeable arenas only).
    live: Option<HashMap<vk::DescriptorSet, Counts>>,
}

impl DescriptorArena {
    /// An arena of `max_sets` sets and `max_buffers` storage-buffer descriptors.
    pub fn new(ctx: &Arc<GpuContext>, max_sets: u32, max_buffers: u32) -> Result<Self, GpuError> {
        if max_buffers == 0 {
            return Err(GpuError::invalid(
                "descriptor arena",
                "needs at least one set and one buffer",
            ));
        }
        Self::with_capacity(
            ctx,
            &ArenaCapacity {
                sets: max_sets,
                storage_buffers: max_buffers,
                ..ArenaCapacity::default()
            },
        )
    }

    /// An arena of any mix of descriptor kinds.
    pub fn with_capacity(ctx: &Arc<GpuContext>, cap: &ArenaCapacity) -> Result<Self, GpuError> {
        let total = cap.storage_buffers + cap.sampled_images + cap.storage_images;
        if cap.sets == 0 || total == 0 {
            return Err(GpuError::invalid(
                "descriptor arena",
                "needs at least one set and one descriptor",
            ));
        }
        let sizes: Vec<_> = [
            (vk::DescriptorType::STORAGE_BUFFER, cap.storage_buffers),
            (vk::DescriptorType::SAMPLED_IMAGE, cap.sampled_images),
            (vk::DescriptorType::STORAGE_IMAGE, cap.storage_images),
        ]
        .into_iter()
        .filter(|&(_, n)| n > 0)
        .map(|(ty, descriptor_count)| vk::DescriptorPoolSize {
            ty,
            descriptor_count,
        })
        .collect();
        let mut info = vk::DescriptorPoolCreateInfo::default()
            .max_sets(cap.sets)
            .pool_sizes(&sizes);
        if cap.freeable {
            info = info.flags(vk::DescriptorPoolCreateFlags::FREE_DESCRIPTOR_SET);
        }
        // SAFETY: valid create info on the caller's device.
        let pool = unsafe { ctx.device().create_descriptor_pool(&info, None) }
            .vk("vkCreateDescriptorPool")?;
        Ok(DescriptorArena {
            ctx: Arc::clone(ctx),
            pool,
            max: Counts {
                sets: cap.sets,
                buffers: cap.storage_buffers,
                sampled: cap.sampled_images,
                storage: cap.storage_images,
            },
            used: Counts::default(),
            live: cap.freeable.then(HashMap::new),
        })
    }

    /// Whether a set for `pipeline` still fits.
    pub fn has_room(&self, pipeline: &ComputePipeline) -> bool {
        self.used.plus(Counts::of(pipeline)).fits(self.max)
    }

    /// Sets allocated and not freed.
    pub fn sets_in_use(&self) -> u32 {
        self.used.sets
    }

    /// Allocate a set for a buffers-only `pipeline` and point its bindings at `buffers`
    /// (binding i = buffers[i]).
    pub fn allocate(
        &mut self,
        pipeline: &ComputePipeline,
        buffers: &[BufferBinding],
    ) -> Result<vk::DescriptorSet, GpuError> {
        let descriptors: Vec<Descriptor> = buffers.iter().map(|b| Descriptor::Buffer(*b)).collect();
        self.allocate_descriptors(pipeline, &descriptors)
    }

    /// Allocate a set for `pipeline` and point binding i at `descriptors[i]`, whose kind must be
    /// the one the pipeline's layout has there.
    pub fn allocate_descriptors(
        &mut self,
        pipeline: &ComputePipeline,
        descriptors: &[Descriptor],
    ) -> Result<vk::DescriptorSet, GpuError> {
        if descriptors.len() as u32 != pipeline.bindings {
            return Err(GpuError::invalid(
                "descriptor set",
                format!(
                    "{} descriptors given, the pipeline layout has {}",
                    descriptors.len(),
                    pipeline.bindings
                ),
            ));
        }
        let need = Counts::of(pipeline);
        if !self.used.plus(need).fits(self.max) {
            let (u, m) = (self.used, self.max);
            return Err(GpuError::invalid(
                "descriptor arena",
                format!(
                    "full ({}/{} sets, {}/{} buffers, {}/{} sampled and {}/{} storage images in \
                     use, {} buffers and {} images more needed)",
                    u.sets,
                    m.sets,
                    u.buffers,
                    m.buffers,
                    u.sampled,
                    m.sampled,
                    u.storage,
                    m.storage,
                    need.buffers,
                    need.sampled + need.storage
                ),
            ));
        }
        let align = self
            .ctx
            .capabilities()
            .min_storage_buffer_offset_alignment
            .max(1);
        let max_range = self.ctx.capabilities().max_storage_buffer_range as u64;
        for (i, d) in descriptors.iter().enumerate() {
            let want = pipeline.kind(i as u32);
            if d.kind() != want {
                return Err(GpuError::invalid(
                    format!("descriptor binding {i}"),
                    format!("{:?} given, the pipeline layout has {want:?}", d.kind()),
                ));
            }
            match d {
                Descriptor::Buffer(b) => {
                    if b.offset % align != 0 || b.range == 0 || b.range > max_range {
                        return Err(GpuError::invalid(
                            format!("descriptor binding {i}"),
                            format!(
                                "offset {} must be a multiple of {align}, range {} must be in \
                                 1..={max_range}",
                                b.offset, b.range
                            ),
                        ));
                    }
                }
                Descriptor::SampledImage(v, _) | Descriptor::StorageImage(v, _) => {
                    if *v == vk::ImageView::null() {
                        return Err(GpuError::NullHandle("VkImageView"));
                    }
                }
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
        self.used = self.used.plus(need);
        if let Some(live) = &mut self.live {
            live.insert(set, need);
        }
        if !descriptors.is_empty() {
            write(&self.ctx, set, descriptors);
        }
        Ok(set)
    }

    /// Give one set of a freeable arena back. The caller guarantees no pending work uses it.
    pub fn free(&mut self, set: vk::DescriptorSet) -> Result<(), GpuError> {
        let Some(counts) = self.live.as_mut().and_then(|l| l.remove(&set)) else {
            return Err(GpuError::invalid(
                "descriptor arena",
                "the set is not a live set of a freeable arena",
            ));
        };
        self.used = self.used.minus(counts);
        // SAFETY: the pool was created with FREE_DESCRIPTOR_SET (the arena is freeable), the set
        // came from it, and the caller guarantees no pending work uses the set.
        unsafe { self.ctx.device().free_descriptor_sets(self.pool, &[set]) }
            .vk("vkFreeDescriptorSets")
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
        self.used = Counts::default();
        if let Some(live) = &mut self.live {
            live.clear();
        }
        Ok(())
    }
}

/// Point the bindings of the fresh `set` at `descriptors` (kinds already checked).
fn write(ctx: &GpuContext, set: vk::DescriptorSet, descriptors: &[Descriptor]) {
    // One info per descriptor, kept alive beside the writes that point into them.
    let buffers: Vec<[vk::DescriptorBufferInfo; 1]> = descriptors
        .iter()
        .map(|d| match d {
            Descriptor::Buffer(b) => [vk::DescriptorBufferInfo {
                buffer: b.buffer,
                offset: b.offset,
                range: b.range,
            }],
            _ => [vk::DescriptorBufferInfo::default()],
        })
        .collect();
    let images: Vec<[vk::DescriptorImageInfo; 1]> = descriptors
        .iter()
        .map(|d| match d {
            Descriptor::SampledImage(view, layout) | Descriptor::StorageImage(view, layout) => {
                [vk::DescriptorImageInfo {
                    sampler: vk::Sampler::null(),
                    image_view: *view,
                    image_layout: *layout,
                }]
            }
            Descriptor::Buffer(_) => [vk::DescriptorImageInfo::default()],
        })
        .collect();
    let writes: Vec<_> = descriptors
        .iter()
        .enumerate()
        .map(|(i, d)| {
            let w = vk::WriteDescriptorSet::default()
                .dst_set(set)
                .dst_binding(i as u32)
                .descriptor_type(d.kind().vk());
            match d {
                Descriptor::Buffer(_) => w.buffer_info(&buffers[i]),
                _ => w.image_info(&images[i]),
            }
        })
        .collect();
    // SAFETY: the set was just allocated and is not in use; every info outlives the call.
    unsafe { ctx.device().update_descriptor_sets(&writes, &[]) };
}

impl Drop for DescriptorArena {
    fn drop(&mut self) {
        // SAFETY: the owner guarantees no pending work uses the sets.
        unsafe { self.ctx.device().destroy_descriptor_pool(self.pool, None) };
    }
}
