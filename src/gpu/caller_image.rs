//! The caller's images as kernels see them: [`CallerImage`] (one subresource of an image the
//! caller owns, in the layout it will be in when the recorded commands run) and
//! [`CallerImages`], the views the library makes of such images, the descriptor sets that name
//! those views (`image_bindings`), and when they go.
//!
//! The library never owns a caller image and never changes its layout (barriers on it keep the
//! layout, `barrier.rs`). Its views are 2D, identity swizzle, one mip and layer, usage restricted
//! to what the kernel does; they are cached per image, so a caller that hands the same images
//! every frame costs one view each.
//!
//! Nothing is destroyed while a frame that used it may still run. The library does not submit
//! and gets no fence, so every frame ends with a `vkCmdSetEvent` ([`AfterSubmission`]) in the
//! caller's command buffer, and each image remembers which of those frames used it. A view goes
//! only once all of them are seen complete: when its image has then gone unused for a number of
//! frames the owner chooses (a cache setting, not a safety margin), or when the image handle
//! turns out to name a recreated image (the old views are retired at once and destroyed as
//! soon as their frames are done). So the number of frames a caller keeps in flight is not
//! limited. A command buffer that is recorded and never submitted keeps what it names (and its
//! event) until the owner is dropped.

use std::collections::HashMap;
use std::sync::Arc;

use ash::vk;

use super::buffer::BufferBinding;
use super::context::GpuContext;
use super::deferred::{AfterSubmission, SpareEvent};
use super::descriptors::Descriptor;
use super::dispatch::Recorder;
use super::error::{GpuError, VkContext};
use super::image_bindings::{DetachedSet, ImageBindings};
use super::pipeline::{ComputePipeline, DescriptorKind};

/// One subresource of a caller image (NGX's `NVSDK_NGX_ImageViewInfo_VK` gives the image, its
/// format, size and subresource range; the first mip and layer of the range are used).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CallerImage {
    pub image: vk::Image,
    pub format: vk::Format,
    /// Extent of `mip_level`.
    pub width: u32,
    pub height: u32,
    pub mip_level: u32,
    pub array_layer: u32,
    /// The layout the image is in when the recorded commands run (kept unchanged).
    pub layout: vk::ImageLayout,
}

impl CallerImage {
    /// The one mip and layer the library reads or writes (the depth aspect of a depth format:
    /// a sampled depth view reads the depth as a float in its first channel).
    pub fn subresource(&self) -> vk::ImageSubresourceRange {
        let depth = matches!(
            self.format,
            vk::Format::D16_UNORM
                | vk::Format::X8_D24_UNORM_PACK32
                | vk::Format::D32_SFLOAT
                | vk::Format::D16_UNORM_S8_UINT
                | vk::Format::D24_UNORM_S8_UINT
                | vk::Format::D32_SFLOAT_S8_UINT
        );
        vk::ImageSubresourceRange {
            aspect_mask: if depth {
                vk::ImageAspectFlags::DEPTH
            } else {
                vk::ImageAspectFlags::COLOR
            },
            base_mip_level: self.mip_level,
            level_count: 1,
            base_array_layer: self.array_layer,
            layer_count: 1,
        }
    }

    /// Refuse an empty rectangle, one that leaves the image (at `base`, `size` texels), or a
    /// null image; `what` names the use in the error.
    pub fn check_rect(
        &self,
        what: &str,
        base: (u32, u32),
        size: (u32, u32),
    ) -> Result<(), GpuError> {
        if size.0 == 0 || size.1 == 0 {
            return Err(GpuError::invalid(what, "the frame size is empty"));
        }
        if base.0 as u64 + size.0 as u64 > self.width as u64
            || base.1 as u64 + size.1 as u64 > self.height as u64
        {
            return Err(GpuError::invalid(
                what,
                format!(
                    "rectangle at ({}, {}) of {}x{} leaves the {}x{} image",
                    base.0, base.1, size.0, size.1, self.width, self.height
                ),
            ));
        }
        if self.image == vk::Image::null() {
            return Err(GpuError::NullHandle("VkImage"));
        }
        Ok(())
    }
}

/// What one binding of a set names, for [`CallerImages::descriptor_set`]: a buffer, or a caller
/// image (viewed as the pipeline's layout says: sampled or storage).
#[derive(Clone, Copy, Debug)]
pub enum Bind<'a> {
    Buffer(BufferBinding),
    Image(&'a CallerImage),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct ViewKey {
    image: vk::Image,
    format: vk::Format,
    mip_level: u32,
    array_layer: u32,
    storage: bool,
}

/// What identifies the image a handle names beyond the handle itself (a destroyed image's
/// handle value may come back for a new one): the caller's own view of it, format and size.
type Identity = (vk::ImageView, vk::Format, u32, u32);

/// Frames (by number) that used an object and are not yet seen complete.
type Uses = Vec<u64>;

/// Add frame `frame` to `uses` (frames are numbered in recording order, so a repeat is last).
fn note_use(uses: &mut Uses, frame: u64) {
    if uses.last() != Some(&frame) {
        uses.push(frame);
    }
}

/// When a caller image was last used, what it looked like then, and which frames that used it
/// may still be pending.
struct Seen {
    identity: Option<Identity>,
    last_frame: u64,
    uses: Uses,
}

/// A view taken out of use (its image was recreated) and the sets that name it, destroyed once
/// every frame that used it is complete.
struct Retired {
    uses: Uses,
    view: vk::ImageView,
    sets: Vec<DetachedSet>,
}

/// A frame that used caller images: its number, and the event that says it has run (`None`
/// when no event could be made: then it counts as pending until the owner is dropped).
struct FrameEnd {
    frame: u64,
    event: Option<AfterSubmission>,
}

/// Views of the caller's images, their descriptor sets, and their staleness (see the module
/// documentation). Lifetime contract: drop it, or call [`CallerImages::forget_image`] /
/// [`CallerImages::clear`], only when no submitted work that used the objects is pending (NGX
/// features are released with the device idle). Field order is drop order: the frame events
/// go before the context.
pub struct CallerImages {
    views: HashMap<ViewKey, vk::ImageView>,
    sets: ImageBindings,
    seen: HashMap<vk::Image, Seen>,
    retired: Vec<Retired>,
    /// Ended frames not yet seen complete, oldest first.
    pending: Vec<FrameEnd>,
    /// Frames ended so far ([`CallerImages::end_frame`]); the one being recorded has this number.
    frame: u64,
    /// The event for the frame being recorded, made by [`CallerImages::begin_frame`].
    spare: Option<SpareEvent>,
    ctx: Arc<GpuContext>,
}

impl CallerImages {
    pub fn new(ctx: &Arc<GpuContext>) -> Self {
        CallerImages {
            ctx: Arc::clone(ctx),
            views: HashMap::new(),
            sets: ImageBindings::new(ctx),
            seen: HashMap::new(),
            retired: Vec::new(),
            pending: Vec::new(),
            frame: 0,
            spare: None,
        }
    }

    /// The device the views live on.
    pub fn context(&self) -> &Arc<GpuContext> {
        &self.ctx
    }

    /// Image views currently held, retired ones included (for tests and diagnostics).
    pub fn view_count(&self) -> usize {
        self.views.len() + self.retired.len()
    }

    /// Ended frames not yet seen complete (for tests and diagnostics).
    pub fn pending_frames(&self) -> usize {
        self.pending.len()
    }

    /// Note that `img` is used by the frame being recorded, `caller_view` being the caller's own
    /// view of it. If the same `VkImage` value was seen with another view, format or size, the
    /// caller destroyed and recreated it: the views of the old image are retired.
    pub fn track(&mut self, img: &CallerImage, caller_view: vk::ImageView) {
        let identity = (caller_view, img.format, img.width, img.height);
        let frame = self.frame;
        let seen = self.seen.entry(img.image).or_insert(Seen {
            identity: None,
            last_frame: frame,
            uses: Vec::new(),
        });
        let recreated = matches!(seen.identity, Some(was) if was != identity);
        if recreated {
            // The old image's frames stay with its retired views; the new one starts afresh.
            let uses = std::mem::take(&mut seen.uses);
            self.retire_image(img.image, uses);
        }
        if let Some(seen) = self.seen.get_mut(&img.image) {
            seen.identity = Some(identity);
            seen.last_frame = frame;
            note_use(&mut seen.uses, frame);
        }
    }

    /// The set of `pipeline` whose binding i names `binds[i]`, with views made (or reused) as
    /// the pipeline's layout asks: a sampled-image binding gets a `SAMPLED` view in the image's
    /// layout, a storage-image binding a `STORAGE` one.
    pub fn descriptor_set(
        &mut self,
        pipeline: &ComputePipeline,
        binds: &[Bind<'_>],
    ) -> Result<vk::DescriptorSet, GpuError> {
        let mut descriptors = Vec::with_capacity(binds.len());
        for (i, b) in binds.iter().enumerate() {
            let kind = pipeline.kind(i as u32);
            descriptors.push(match (b, kind) {
                (Bind::Buffer(b), _) => Descriptor::Buffer(*b),
                (Bind::Image(img), DescriptorKind::SampledImage) => {
                    Descriptor::SampledImage(self.view(img, false)?, img.layout)
                }
                (Bind::Image(img), DescriptorKind::StorageImage) => {
                    Descriptor::StorageImage(self.view(img, true)?, img.layout)
                }
                (Bind::Image(_), DescriptorKind::StorageBuffer) => {
                    return Err(GpuError::invalid(
                        format!("descriptor binding {i}"),
                        "an image given where the pipeline layout has a storage buffer",
                    ))
                }
            });
        }
        self.sets.set(pipeline, &descriptors)
    }

    /// Make the event that will end the frame about to be recorded, so that a failure refuses
    /// the frame before anything is recorded. Optional: [`CallerImages::end_frame`] makes one
    /// itself when none was made.
    pub fn begin_frame(&mut self) -> Result<(), GpuError> {
        if self.spare.is_none() {
            self.spare = Some(SpareEvent::new(&self.ctx)?);
        }
        Ok(())
    }

    /// The frame being recorded is complete: record, after everything already in `rec`, the
    /// event that tells when it has run, and count it. Then destroy what no pending frame uses
    /// any more: retired views, and the views of images unused for more than `idle_frames`
    /// frames (bounded memory for callers that rotate through many images; a small number only
    /// costs re-creating views). If no event can be made the frame's objects are kept until the
    /// owner is dropped, and the error is returned for the log.
    pub fn end_frame(&mut self, rec: &mut Recorder<'_>, idle_frames: u64) -> Result<(), GpuError> {
        let spare = match self.spare.take() {
            Some(s) => Ok(s),
            None => SpareEvent::new(&self.ctx),
        };
        let (event, error) = match spare {
            Ok(s) => (Some(s.record(rec, Vec::new())), None),
            Err(e) => (None, Some(e)),
        };
        self.pending.push(FrameEnd {
            frame: self.frame,
            event,
        });
        self.frame += 1;
        self.collect(idle_frames);
        error.map_or(Ok(()), Err)
    }

    /// Forget completed frames, then destroy the objects no pending frame uses (see
    /// [`CallerImages::end_frame`]).
    fn collect(&mut self, idle_frames: u64) {
        self.pending
            .retain(|f| !f.event.as_ref().is_some_and(AfterSubmission::done));
        let pending: Vec<u64> = self.pending.iter().map(|f| f.frame).collect();
        let still = |uses: &mut Uses| -> bool {
            uses.retain(|u| pending.binary_search(u).is_ok());
            !uses.is_empty()
        };
        let mut gone = Vec::new();
        for mut r in std::mem::take(&mut self.retired) {
            if still(&mut r.uses) {
                self.retired.push(r);
            } else {
                gone.push(r);
            }
        }
        for r in gone {
            self.sets.free(r.sets);
            // SAFETY: every frame that used the view has been seen complete.
            unsafe { self.ctx.device().destroy_image_view(r.view, None) };
        }
        let now = self.frame;
        let mut stale = Vec::new();
        for (image, s) in self.seen.iter_mut() {
            let in_use = still(&mut s.uses);
            if !in_use && now.saturating_sub(s.last_frame) > idle_frames {
                stale.push(*image);
            }
        }
        for image in stale {
            self.seen.remove(&image);
            self.forget_image(image);
        }
    }

    /// Destroy the views of `image` (and free their descriptor sets) now. Only for an image no
    /// pending work uses; [`CallerImages::end_frame`] does this by itself once that is known.
    pub fn forget_image(&mut self, image: vk::Image) {
        for view in self.take_views(image) {
            self.sets.forget_view(view);
            // SAFETY: the owner guarantees no pending work uses the view.
            unsafe { self.ctx.device().destroy_image_view(view, None) };
        }
    }

    /// Destroy every view and descriptor set, retired ones included. Same contract as dropping.
    pub fn clear(&mut self) {
        self.sets.clear();
        let device = self.ctx.device();
        // SAFETY: the owner guarantees no pending work uses these objects.
        unsafe {
            for (_, view) in self.views.drain() {
                device.destroy_image_view(view, None);
            }
            for r in self.retired.drain(..) {
                device.destroy_image_view(r.view, None);
            }
        }
        self.seen.clear();
        self.pending.clear();
        self.spare = None;
    }

    /// Take `image`'s views out of use while the frames in `uses` may still run them.
    fn retire_image(&mut self, image: vk::Image, uses: Uses) {
        for view in self.take_views(image) {
            let sets = self.sets.detach(view);
            self.retired.push(Retired {
                uses: uses.clone(),
                view,
                sets,
            });
        }
    }

    fn take_views(&mut self, image: vk::Image) -> Vec<vk::ImageView> {
        let keys: Vec<ViewKey> = self
            .views
            .keys()
            .filter(|k| k.image == image)
            .copied()
            .collect();
        keys.iter().filter_map(|k| self.views.remove(k)).collect()
    }

    fn view(&mut self, img: &CallerImage, storage: bool) -> Result<vk::ImageView, GpuError> {
        let key = ViewKey {
            image: img.image,
            format: img.format,
            mip_level: img.mip_level,
            array_layer: img.array_layer,
            storage,
        };
        // Used this frame (an image nobody tracks still goes stale when unused).
        let frame = self.frame;
        let seen = self.seen.entry(img.image).or_insert(Seen {
            identity: None,
            last_frame: frame,
            uses: Vec::new(),
        });
        seen.last_frame = frame;
        note_use(&mut seen.uses, frame);
        if let Some(v) = self.views.get(&key) {
            return Ok(*v);
        }
        // Restrict the view's usage to what the kernel does: the caller's image may carry
        // usages (storage on an sRGB image, say) that this format cannot serve.
        let mut usage = vk::ImageViewUsageCreateInfo::default().usage(if storage {
            vk::ImageUsageFlags::STORAGE
        } else {
            vk::ImageUsageFlags::SAMPLED
        });
        let info = vk::ImageViewCreateInfo::default()
            .image(img.image)
            .view_type(vk::ImageViewType::TYPE_2D)
            .format(img.format)
            .components(vk::ComponentMapping::default())
            .subresource_range(img.subresource())
            .push_next(&mut usage);
        // SAFETY: the caller promised a live image of this device with this format.
        let view =
            unsafe { self.ctx.device().create_image_view(&info, None) }.vk("vkCreateImageView")?;
        self.views.insert(key, view);
        Ok(view)
    }
}

impl Drop for CallerImages {
    fn drop(&mut self) {
        self.clear();
    }
}
