//! The caller's images as kernels see them: [`CallerImage`] (one subresource of an image the
//! caller owns, in the layout it will be in when the recorded commands run) and
//! [`CallerImages`], the views the library makes of such images, the descriptor sets that name
//! those views (`image_bindings`), and when they go.
//!
//! The library never owns a caller image and never changes its layout (barriers on it keep the
//! layout, `barrier.rs`). Its views are 2D, identity swizzle, one mip and layer, usage restricted
//! to what the kernel does; they are cached per image, so a caller that hands the same images
//! every frame costs one view each. A view must never outlive its image, and nothing may be
//! destroyed while a pending frame uses it: images unused for a number of frames the owner
//! chooses (more than it may have in flight) are forgotten, and when an image handle turns out
//! to name a recreated image, the old views are retired and destroyed only after as many frames.

use std::collections::HashMap;
use std::sync::Arc;

use ash::vk;

use super::buffer::BufferBinding;
use super::context::GpuContext;
use super::descriptors::Descriptor;
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
    /// The one mip and layer the library reads or writes.
    pub fn subresource(&self) -> vk::ImageSubresourceRange {
        vk::ImageSubresourceRange {
            aspect_mask: vk::ImageAspectFlags::COLOR,
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

/// When a caller image was last used, and what it looked like then.
#[derive(Clone, Copy)]
struct Seen {
    identity: Option<Identity>,
    last_frame: u64,
}

/// A view taken out of use (its image was recreated) and the sets that name it, destroyed once
/// no frame that used it can still be pending.
struct Retired {
    frame: u64,
    view: vk::ImageView,
    sets: Vec<DetachedSet>,
}

/// Views of the caller's images, their descriptor sets, and their staleness (see the module
/// documentation). Lifetime contract: drop it, or call [`CallerImages::forget_image`] /
/// [`CallerImages::clear`], only when no submitted work that used the objects is pending, and
/// forget an image before the caller destroys it unless the owner's frame count does (NGX
/// features are released with the device idle).
pub struct CallerImages {
    ctx: Arc<GpuContext>,
    views: HashMap<ViewKey, vk::ImageView>,
    sets: ImageBindings,
    seen: HashMap<vk::Image, Seen>,
    retired: Vec<Retired>,
    /// Frames ended so far ([`CallerImages::end_frame`]).
    frame: u64,
}

impl CallerImages {
    pub fn new(ctx: &Arc<GpuContext>) -> Self {
        CallerImages {
            ctx: Arc::clone(ctx),
            views: HashMap::new(),
            sets: ImageBindings::new(ctx),
            seen: HashMap::new(),
            retired: Vec::new(),
            frame: 0,
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

    /// Note that `img` is used by the frame being recorded, `caller_view` being the caller's own
    /// view of it. If the same `VkImage` value was seen with another view, format or size, the
    /// caller destroyed and recreated it: the views of the old image are retired.
    pub fn track(&mut self, img: &CallerImage, caller_view: vk::ImageView) {
        let identity = (caller_view, img.format, img.width, img.height);
        let old = self.seen.insert(
            img.image,
            Seen {
                identity: Some(identity),
                last_frame: self.frame,
            },
        );
        if let Some(Seen {
            identity: Some(was),
            ..
        }) = old
        {
            if was != identity {
                self.retire_image(img.image);
            }
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

    /// The frame being recorded is complete: count it, destroy retired views no pending frame
    /// can use any more, and forget images unused for more than `keep_frames` frames (bounded
    /// memory for callers that rotate through many images). `keep_frames` must exceed the
    /// frames the owner may have pending on the GPU at once.
    pub fn end_frame(&mut self, keep_frames: u64) {
        self.frame += 1;
        let now = self.frame;
        let old = |since: u64| now.saturating_sub(since) > keep_frames;
        let (gone, kept): (Vec<Retired>, Vec<Retired>) =
            self.retired.drain(..).partition(|r| old(r.frame));
        self.retired = kept;
        for r in gone {
            self.sets.free(r.sets);
            // SAFETY: retired more than `keep_frames` frames ago, so no pending work uses it.
            unsafe { self.ctx.device().destroy_image_view(r.view, None) };
        }
        let stale: Vec<vk::Image> = self
            .seen
            .iter()
            .filter(|(_, s)| old(s.last_frame))
            .map(|(i, _)| *i)
            .collect();
        for image in stale {
            self.seen.remove(&image);
            self.forget_image(image);
        }
    }

    /// Destroy the views of `image` (and free their descriptor sets). Call before the caller
    /// destroys an image it handed in, once no pending work uses it.
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
    }

    /// Take `image`'s views out of use while frames that used them may still be pending.
    fn retire_image(&mut self, image: vk::Image) {
        for view in self.take_views(image) {
            let sets = self.sets.detach(view);
            self.retired.push(Retired {
                frame: self.frame,
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
        self.seen
            .entry(img.image)
            .and_modify(|s| s.last_frame = self.frame)
            .or_insert(Seen {
                identity: None,
                last_frame: self.frame,
            });
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
