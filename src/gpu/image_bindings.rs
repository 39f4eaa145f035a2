//! Descriptor sets of pipelines that bind images (see [`ImageSlots`](super::ImageSlots)):
//! unlike a schedule's buffer sets, these follow images the library does not own, so they are
//! made when an image first shows up, cached by everything they bind, and given back one by one
//! when a view they name goes. They come from freeable [`DescriptorArena`]s, added as needed.
//!
//! Owns the sets and their arenas, not the views or images they name (`caller_image` does).

use std::collections::HashMap;
use std::sync::Arc;

use ash::vk;

use super::context::GpuContext;
use super::descriptors::{ArenaCapacity, Descriptor, DescriptorArena};
use super::error::GpuError;
use super::pipeline::{ComputePipeline, DescriptorKind};

/// Sets per arena (arenas are added as needed).
const SETS_PER_ARENA: u32 = 32;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct SetKey {
    pipeline: vk::Pipeline,
    descriptors: Vec<Descriptor>,
}

/// A set taken out of the cache but not yet given back (still allocated): see
/// [`ImageBindings::detach`].
#[derive(Clone, Copy, Debug)]
pub struct DetachedSet {
    set: vk::DescriptorSet,
    arena: usize,
}

/// The cached sets (see the module documentation). Same lifetime contract as every recorded
/// object: a set may be freed, and the cache dropped or cleared, only once no pending work
/// uses it.
pub struct ImageBindings {
    ctx: Arc<GpuContext>,
    arenas: Vec<DescriptorArena>,
    /// Each set with the index of the arena it came from.
    sets: HashMap<SetKey, (vk::DescriptorSet, usize)>,
}

impl ImageBindings {
    pub fn new(ctx: &Arc<GpuContext>) -> Self {
        ImageBindings {
            ctx: Arc::clone(ctx),
            arenas: Vec::new(),
            sets: HashMap::new(),
        }
    }

    /// Sets in the cache.
    pub fn len(&self) -> usize {
        self.sets.len()
    }

    pub fn is_empty(&self) -> bool {
        self.sets.is_empty()
    }

    /// The set of `pipeline` whose binding i is `descriptors[i]`, made on first use.
    pub fn set(
        &mut self,
        pipeline: &ComputePipeline,
        descriptors: &[Descriptor],
    ) -> Result<vk::DescriptorSet, GpuError> {
        let key = SetKey {
            pipeline: pipeline.pipeline,
            descriptors: descriptors.to_vec(),
        };
        if let Some((s, _)) = self.sets.get(&key) {
            return Ok(*s);
        }
        let arena = match self.arenas.iter().position(|a| a.has_room(pipeline)) {
            Some(i) => i,
            None => {
                self.arenas.push(DescriptorArena::with_capacity(
                    &self.ctx,
                    &capacity_for(pipeline),
                )?);
                self.arenas.len() - 1
            }
        };
        let set = self.arenas[arena].allocate_descriptors(pipeline, descriptors)?;
        self.sets.insert(key, (set, arena));
        Ok(set)
    }

    /// Take every set that names `view` out of the cache without freeing it (pending work may
    /// still use it); give them back later with [`ImageBindings::free`].
    pub fn detach(&mut self, view: vk::ImageView) -> Vec<DetachedSet> {
        let keys: Vec<SetKey> = self
            .sets
            .keys()
            .filter(|k| k.descriptors.iter().any(|d| d.view() == Some(view)))
            .cloned()
            .collect();
        keys.into_iter()
            .filter_map(|k| self.sets.remove(&k))
            .map(|(set, arena)| DetachedSet { set, arena })
            .collect()
    }

    /// Give detached sets back. The caller guarantees no pending work uses them.
    pub fn free(&mut self, sets: Vec<DetachedSet>) {
        for d in sets {
            if let Some(a) = self.arenas.get_mut(d.arena) {
                // A set of a freeable arena that the cache handed out; freeing cannot fail
                // (vkFreeDescriptorSets only returns VK_SUCCESS), so there is nothing to report.
                let _ = a.free(d.set);
            }
        }
    }

    /// Free every set that names `view`. The caller guarantees no pending work uses them.
    pub fn forget_view(&mut self, view: vk::ImageView) {
        let sets = self.detach(view);
        self.free(sets);
    }

    /// Destroy every set and arena (detached sets included). Same contract as dropping.
    pub fn clear(&mut self) {
        self.sets.clear();
        self.arenas.clear();
    }
}

/// A fresh arena: [`SETS_PER_ARENA`] sets of `pipeline`'s kind (at least one descriptor of
/// each kind, so other image pipelines fit too).
fn capacity_for(pipeline: &ComputePipeline) -> ArenaCapacity {
    let count = |kind: DescriptorKind| {
        let n = (0..pipeline.bindings)
            .filter(|&b| pipeline.kind(b) == kind)
            .count() as u32;
        n.max(1) * SETS_PER_ARENA
    };
    ArenaCapacity {
        sets: SETS_PER_ARENA,
        storage_buffers: count(DescriptorKind::StorageBuffer),
        sampled_images: count(DescriptorKind::SampledImage),
        storage_images: count(DescriptorKind::StorageImage),
        freeable: true,
    }
}
