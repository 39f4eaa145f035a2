//! [`NrFeature`]: one created DLSS-NR feature on the caller's device — its frame
//! ([`GpuFrame`]: buffers, network, prepare/compose of both history slots), the views of the
//! caller's images it imports and exports ([`CallerImages`]), and the temporal state.
//!
//! One evaluation records, into the caller's command buffer: import of `DLSSNR.Color` (and
//! `DLSSNR.MVec`) into the proxy (motion) buffer -> prepare -> the network -> compose (output +
//! next history) -> export into `DLSSNR.Output`. A disabled frame skips prepare and the network.
//!
//! **Image layouts** (the NGX contract this library states; `docs/ngx.md`): when the recorded
//! commands execute, `DLSSNR.Color` and `DLSSNR.MVec` must be in
//! `VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL` (created with `VK_IMAGE_USAGE_SAMPLED_BIT`) and
//! `DLSSNR.Output` in `VK_IMAGE_LAYOUT_GENERAL` (storage usage). The feature never changes a
//! caller image's layout: every barrier it records on them keeps the layout. Earlier writes of
//! any stage to the inputs are made visible to its reads, and its write of the output is made
//! visible to every later stage.
//!
//! **Frames in flight** are not limited: each evaluation ends with an event (`CallerImages::
//! end_frame`), and the views of a caller image are destroyed only once every evaluation that
//! used them is seen complete and the image has gone unused for [`VIEW_IDLE_FRAMES`]
//! evaluations.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use ash::vk;

use super::driver::FrameDriver;
use super::errors::{gpu_error, record_error};
use super::params::NrInputs;
use crate::feature::{FeatureError, ImageInput, Instance, RouteReport};
use crate::gpu::{CallerImage, CallerImages, GpuContext, Pending, Recorder};
use crate::model::Model;
use crate::nr::frame::FrameConstants;
use crate::nr::gpu_frame::GpuFrame;
use crate::nr::record::passes::{record_export, record_import_color, record_import_motion};
use crate::nr::record::GpuWeights;

/// Evaluations a caller image may go unused before its views are dropped (once no pending
/// evaluation uses them). A cache setting, not a safety margin: callers that alternate between a
/// few images keep their views, callers that rotate through many keep memory bounded.
pub const VIEW_IDLE_FRAMES: u64 = 8;

/// Layout of `DLSSNR.Color` and `DLSSNR.MVec` when the recorded commands run.
pub const INPUT_LAYOUT: vk::ImageLayout = vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL;
/// Layout of `DLSSNR.Output` when the recorded commands run.
pub const OUTPUT_LAYOUT: vk::ImageLayout = vk::ImageLayout::GENERAL;

/// One DLSS-NR feature (see the module documentation). Field order is drop order: everything on
/// the device goes before the context.
pub struct NrFeature {
    pub(super) pending: Pending,
    pub(super) images: CallerImages,
    pub(super) frame: GpuFrame,
    pub(super) driver: FrameDriver,
    pub(super) _weights: Arc<GpuWeights>,
    pub(super) _model: Arc<Model>,
    pub(super) ctx: Arc<GpuContext>,
    /// This feature's own device bytes (buffers + workspace), added to `accounted` at creation.
    pub(super) bytes: u64,
    pub(super) accounted: Arc<AtomicU64>,
    /// The route chosen at creation.
    pub(super) report: RouteReport,
}

/// A checked image input as the frame kernels see it (its first mip and layer, in `layout`).
pub(crate) fn caller_image(img: &ImageInput, layout: vk::ImageLayout) -> CallerImage {
    CallerImage {
        image: img.image,
        format: img.format,
        width: img.width,
        height: img.height,
        mip_level: img.subresource.base_mip_level,
        array_layer: img.subresource.base_array_layer,
        layout,
    }
}

impl NrFeature {
    /// The state between frames (for tests and diagnostics).
    pub fn frame_state(&self) -> crate::nr::frame::FrameState {
        self.driver.state()
    }

    /// This feature's own device memory in bytes (frame buffers and network workspace; the
    /// shared weights are not included).
    pub fn device_bytes(&self) -> u64 {
        self.bytes
    }

    /// `img` as the frame kernels see it, noted as used by this frame with the caller's view
    /// (which tells a recreated image with a reused handle apart).
    fn use_image(&mut self, img: &ImageInput, layout: vk::ImageLayout) -> CallerImage {
        let c = caller_image(img, layout);
        self.images.track(&c, img.view);
        c
    }

    fn record(
        &mut self,
        rec: &mut Recorder<'_>,
        inputs: &NrInputs,
        c: &FrameConstants,
        read_slot: usize,
    ) -> Result<(), FeatureError> {
        let ctx = Arc::clone(&self.ctx);
        let color = self.use_image(inputs.color(), INPUT_LAYOUT);
        let output = self.use_image(inputs.output(), OUTPUT_LAYOUT);
        let motion = inputs.motion().map(|m| self.use_image(m, INPUT_LAYOUT));
        let buffers = self.frame.buffers();
        let (proxy, mb, out) = (
            buffers.proxy.binding(),
            buffers.motion.binding(),
            buffers.output.binding(),
        );
        record_import_color(&ctx, rec, &mut self.images, &color, proxy, c).map_err(gpu_error)?;
        if let Some(m) = &motion {
            record_import_motion(&ctx, rec, &mut self.images, m, mb, c).map_err(gpu_error)?;
        }
        self.frame.record(rec, c, read_slot).map_err(record_error)?;
        record_export(&ctx, rec, &mut self.images, out, &output, c).map_err(gpu_error)?;
        Ok(())
    }
}

impl Instance<NrInputs> for NrFeature {
    fn evaluate(&mut self, cmd: vk::CommandBuffer, inputs: &NrInputs) -> Result<(), FeatureError> {
        self.pending.prune();
        // Out of memory for the frame's completion event: refuse before recording anything.
        self.images.begin_frame().map_err(gpu_error)?;
        let frame = self.driver.plan(inputs);
        let ctx = Arc::clone(&self.ctx);
        // SAFETY: the NGX caller hands a command buffer of this device in the recording state.
        let mut rec = unsafe { Recorder::new(&ctx, cmd) }.map_err(gpu_error)?;
        self.record(&mut rec, inputs, &frame.constants, frame.setup.read_slot)?;
        self.driver.commit(&frame);
        // Cannot fail: `begin_frame` made the event before anything was recorded.
        self.images
            .end_frame(&mut rec, VIEW_IDLE_FRAMES)
            .map_err(gpu_error)
    }

    fn release(self: Box<Self>) {
        drop(self);
    }

    fn route_report(&self) -> Option<RouteReport> {
        Some(self.report.clone())
    }
}

impl Drop for NrFeature {
    fn drop(&mut self) {
        self.accounted.fetch_sub(self.bytes, Ordering::Relaxed);
    }
}
