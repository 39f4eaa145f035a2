//! [`RrBackend`]: the [`Backend`] of Ray Reconstruction (NGX feature 13) on RR's exact GPU route
//! (`rr::gpu_frame::GpuFrame`), and [`RrFeature`], one created feature.
//!
//! **Creation** adopts the caller's device, checks it can run the exact route (the checks of
//! NR's exact route: Vulkan 1.2, shaderFloat16/Int8, 8/16-bit storage), loads the model (or
//! shares it: once per directory, `model::ModelCache`, as NR's), takes the weights and tables on
//! the device (`rr::record::RrGpuWeights::for_feature`: uploaded once per device and model and
//! shared by its features, staged by the first creation and shared only once recorded, freed
//! with the last feature holding them, as NR's), builds the frame (buffers, pipelines,
//! descriptor sets), and only then records into the caller's command buffer (the weights' copies
//! when this creation staged them, and the history's clear), which cannot fail: a failed
//! creation records nothing and frees everything it made, staged weights included.
//!
//! **One evaluation** records, into the caller's command buffer: the caller's colour into the
//! graph's `color` tensor and every guide image into its lanes of the `guides` tensor
//! (`Guide::lanes`; the lanes of absent optional guides are zero) with NR's import kernel
//! (`nr::record::passes`), the whole graph, the output kept as the next frame's history (on the
//! GPU), and the output exported into the caller's `Output` with NR's export kernel. Layouts
//! and barriers are NR's (`nr::feature::instance`): inputs in `SHADER_READ_ONLY_OPTIMAL` (or
//! `GENERAL`), the output in `GENERAL`, no layout changed.
//!
//! Temporal rules are `rr::cpu_frame`'s (the CPU reference's): history from the second frame
//! on unless `Reset`, the frame counter counts every frame.
//!
//! **Dynamic resolution** (docs/rr.md): a frame whose render size differs from the last one's
//! gets a `GpuFrame` built for it on the shared weights (before anything is recorded), whose
//! history is the last frame's output, copied in the frame's commands (history lives at
//! output resolution); the old frame is freed once the GPU has passed that copy
//! (`gpu::deferred`). Formats, the exposure texture and
//! everything else that can refuse a frame are checked before the first command is recorded,
//! so a refused frame leaves the feature and the command buffer as they were.
//!
//! Formats (`guide_import_kind`): float images as sampled, `D32_SFLOAT[_S8_UINT]` and
//! `D16_UNORM` through their depth aspect, 8/10/16-bit UNORM and 8/16-bit SNORM images as their
//! recovered integer code decoded by `numerics::normalized` (never by the driver's decoder);
//! with `DepthInverted` the depth becomes `1 - d` in the same import. The exposure texture
//! (without `AutoExposure`) is imported the same way into the frame's exposure input, which
//! the exposure stage reads on the device. The 24-bit depth formats (`D24_UNORM_S8_UINT`,
//! `X8_D24_UNORM_PACK32`), whose code a sampled f32 does not give back, are copied to a buffer
//! and decoded from their integer bits (`super::depth24`; the image needs `TRANSFER_SRC` usage).

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use ash::vk;

use super::depth24;
use super::params::{Guide, RrCreate, RrInputs};
use crate::feature::{
    Backend, DeviceContext, FeatureError, ImageInput, Instance, Route, RouteReport,
};
use crate::gpu::share::{Handed, KeptContexts};
use crate::gpu::{
    BufferBinding, CallerImages, GpuBuffer, GpuContext, MemoryKind, Pending, Recorder, SpareEvent,
    UploadBatch,
};
use crate::model::{LoadOptions, ModelCache};
use crate::nr::feature::backend::loader_gipa;
use crate::nr::feature::errors::gpu_error;
use crate::nr::feature::instance::caller_image;
use crate::nr::feature::{INPUT_LAYOUT, OUTPUT_LAYOUT, VIEW_IDLE_FRAMES};
use crate::nr::record::passes::{
    export_supported, guide_import_kind, record_export_rect, record_import_lanes, Lanes,
    IMPORT_INVERT,
};
use crate::nr::route::ExactRoute;
use crate::rr::frame::FrameConstants;
use crate::rr::geometry::{Geometry, Size};
use crate::rr::gpu_frame::GpuFrame;
use crate::rr::graph::guide;
use crate::rr::keys;
use crate::rr::record::RrGpuWeights;
use crate::rr::weights::model::RrModel;

/// The RR backend (exact route).
#[derive(Default)]
pub struct RrBackend {
    /// Models loaded by directory, shared by the live features.
    models: ModelCache<RrModel>,
    /// Device bytes of the live features' own buffers.
    instance_bytes: Arc<AtomicU64>,
    /// Weights handed to features (counted while any feature holds them).
    weights: Handed<RrGpuWeights>,
    /// The context of each device a feature was created on, kept until the device's Shutdown
    /// (as `NrBackend` does): its pipelines then serve every later feature of the device rather
    /// than being compiled again for each.
    devices: KeptContexts,
}

impl RrBackend {
    pub fn new() -> RrBackend {
        RrBackend::default()
    }

    /// Models currently loaded (shared by live features).
    pub fn loaded_models(&self) -> usize {
        self.models.live()
    }

    /// Creates a feature; the `RrFeature` (not boxed) for callers inside the crate.
    pub fn create_feature(
        &self,
        device: &DeviceContext,
        model_dir: &Path,
        params: &RrCreate,
        cmd: vk::CommandBuffer,
    ) -> Result<RrFeature, FeatureError> {
        let gipa = match device.get_instance_proc_addr {
            Some(g) => g,
            None => loader_gipa()?,
        };
        // SAFETY: the handles come from the application's Init and stay valid until Shutdown,
        // which releases every feature first.
        let ctx = unsafe {
            GpuContext::from_caller(
                device.instance,
                device.physical_device,
                device.device,
                gipa,
                device.get_device_proc_addr,
            )
        }
        .map_err(gpu_error)?;
        self.devices.keep(&ctx);
        let missing = ExactRoute::missing(ctx.capabilities());
        if !missing.is_empty() {
            return Err(FeatureError::Platform(format!(
                "device `{}` cannot run RR's exact route: it lacks {}",
                ctx.capabilities().device_name,
                missing.join(", ")
            )));
        }
        let model = self
            .models
            .get(model_dir, |d| {
                RrModel::load(d, LoadOptions { verify_sha: true })
            })
            .map_err(|e| FeatureError::Model {
                path: model_dir.to_path_buf(),
                reason: e.to_string(),
            })?;
        // Everything that can fail is done before the first command is recorded: a failed
        // creation leaves the caller's command buffer untouched and frees all it made.
        let mut batch = UploadBatch::new(&ctx);
        let weights = RrGpuWeights::for_feature(&ctx, &model, &mut batch).map_err(gpu_error)?;
        let mut gpu = GpuFrame::with_weights(
            &ctx,
            Arc::clone(weights.value()),
            params.geometry(),
            params.preset(),
        )
        .map_err(gpu_error)?;
        gpu.stage_setup(&mut batch).map_err(gpu_error)?;
        let history = gpu.tensor(gpu.graph().history).map_err(gpu_error)?;
        // SAFETY: the NGX caller hands a command buffer of this device in the recording state.
        let mut rec = unsafe { Recorder::new(&ctx, cmd) }.map_err(gpu_error)?;
        // The test hook's failure (tests/feature_soak.rs): the last point a creation can fail.
        crate::feature::fault::creation()?;

        // Recording: nothing below can fail. The weights' and tables' copies (when this
        // creation staged them; they are shared from here on), then the history's clear (read
        // only once a frame wrote it; a defined start keeps every byte the feature owns
        // deterministic).
        let weights = weights.record(&mut batch, &mut rec);
        self.weights.track(&weights);
        gpu.record_staged_setup(&mut rec, &mut batch);
        rec.compute_to_transfer();
        rec.zero_words(history);
        rec.transfer_to_compute();
        let mut pending = Pending::default();
        if batch.staged_bytes() > 0 {
            pending.hold(&ctx, &mut rec, vec![Box::new(batch)]);
        }
        let bytes = gpu.device_bytes();
        self.instance_bytes.fetch_add(bytes, Ordering::Relaxed);
        Ok(RrFeature {
            pending,
            depth_words: None,
            images: CallerImages::new(&ctx),
            gpu,
            created: params.clone(),
            frame_index: 0,
            history_valid: false,
            _model: model,
            ctx,
            bytes,
            accounted: Arc::clone(&self.instance_bytes),
        })
    }
}

impl Backend for RrBackend {
    type Create = RrCreate;
    type Eval = RrInputs;

    fn name(&self) -> &str {
        "dlss-rr"
    }

    fn create(
        &self,
        device: &DeviceContext,
        model_dir: &Path,
        params: &RrCreate,
        cmd: vk::CommandBuffer,
    ) -> Result<Box<dyn Instance<RrInputs>>, FeatureError> {
        Ok(Box::new(
            self.create_feature(device, model_dir, params, cmd)?,
        ))
    }

    fn memory_in_use(&self) -> u64 {
        let weights = self.weights.sum_live(|w| w.bytes());
        self.instance_bytes.load(Ordering::Relaxed) + weights
    }

    fn device_shutdown(&self, device: vk::Device) {
        self.devices.release(device);
    }
}

/// One created RR feature (see the module documentation). Field order is drop order:
/// everything on the device goes before the context.
pub struct RrFeature {
    pending: Pending,
    /// The 24-bit depth's copied words (`depth24`), made by the first frame that needs them.
    depth_words: Option<GpuBuffer>,
    images: CallerImages,
    gpu: GpuFrame,
    created: RrCreate,
    /// Frames since creation (the window shift).
    frame_index: u64,
    /// Whether a frame wrote the history.
    history_valid: bool,
    /// Held so that later creations from the same directory share it (`model::ModelCache`).
    _model: Arc<RrModel>,
    ctx: Arc<GpuContext>,
    bytes: u64,
    accounted: Arc<AtomicU64>,
}

/// One image import of a frame, checked before anything is recorded.
struct Import {
    guide: Guide,
    /// The import kernel's kind, or for 24-bit depth (`depth24`) only its `IMPORT_INVERT` bit.
    kind: u32,
    /// A 24-bit depth, copied and decoded by `depth24` rather than sampled.
    depth24: bool,
    channels: u32,
    lanes: Lanes,
}

impl RrFeature {
    /// The frame's constants (the CPU reference's temporal rules, `rr::cpu_frame`).
    pub fn constants(&self, inputs: &RrInputs) -> FrameConstants {
        let p = inputs.frame_params(&self.created, None);
        FrameConstants {
            jitter: p.jitter,
            mv_scale: p.mv_scale,
            pre_exposure: p.pre_exposure,
            exposure_scale: p.exposure_scale,
            exposure_value: p.exposure_value,
            exposure_on_device: self.reads_exposure_texture(inputs),
            history_valid: self.history_valid && !p.reset,
            frame_index: self.frame_index,
        }
    }

    /// Whether the frame's exposure is the caller's exposure texture (given, and `AutoExposure`
    /// off): then it is imported into the exposure input and read there on the device.
    fn reads_exposure_texture(&self, inputs: &RrInputs) -> bool {
        inputs.get(Guide::Exposure).is_some() && !self.created.flags().auto_exposure()
    }

    /// This feature's own device memory in bytes (the shared weights are not included).
    pub fn device_bytes(&self) -> u64 {
        self.bytes
    }

    /// The weights and tables it binds (shared with the device's other RR features).
    pub fn weights(&self) -> &Arc<RrGpuWeights> {
        self.gpu.weights()
    }

    /// Every import of `inputs` and whether some guide lanes stay empty; refuses what the
    /// route cannot read.
    fn plan(&self, inputs: &RrInputs) -> Result<(Vec<Import>, bool), FeatureError> {
        let out = inputs.output();
        if !export_supported(out.format) {
            return Err(FeatureError::UnsupportedOutputFormat {
                key: keys::OUTPUT.to_owned(),
                format: out.format,
            });
        }
        let packed = inputs.get(Guide::Roughness).is_none();
        let mut imports = Vec::new();
        let mut empty_lanes = false;
        for g in Guide::ALL {
            if g == Guide::Exposure && !self.reads_exposure_texture(inputs) {
                continue;
            }
            let Some(img) = inputs.get(g) else {
                empty_lanes |= g.lanes().is_some() && !(g == Guide::Roughness && packed);
                continue;
            };
            let depth24 = g == Guide::Depth && depth24::is_depth24(img.format);
            let kind = match guide_import_kind(img.format) {
                Some(k) => k,
                None if depth24 => 0,
                None => {
                    return Err(FeatureError::UnsupportedInputFormat {
                        key: g.key().to_owned(),
                        format: img.format,
                    })
                }
            };
            // DepthInverted (1 near, 0 far): the depth lane gets 1 - d, exactly
            // (`numerics::normalized::invert_depth`), so the network always sees 0 near.
            let kind = if g == Guide::Depth && self.created.flags().depth_inverted() {
                kind | IMPORT_INVERT
            } else {
                kind
            };
            let (channels, lanes) = match g.lanes() {
                // The exposure texture: its first channel, one word.
                None if g == Guide::Exposure => (1, Lanes::default()),
                None => (4, Lanes::default()),
                Some((first, n)) => {
                    // Roughness packed into the normals' w: the lane after the normals.
                    let n = if g == Guide::Normals && packed {
                        n + 1
                    } else {
                        n
                    };
                    (
                        n as u32,
                        Lanes {
                            stride: Some(guide::LANES as u32),
                            first: first as u32,
                        },
                    )
                }
            };
            imports.push(Import {
                guide: g,
                kind,
                depth24,
                channels,
                lanes,
            });
        }
        Ok((imports, empty_lanes))
    }

    fn record(
        &mut self,
        rec: &mut Recorder<'_>,
        inputs: &RrInputs,
        imports: &[Import],
        empty_lanes: bool,
        c: &FrameConstants,
    ) -> Result<(), FeatureError> {
        let ctx = Arc::clone(&self.ctx);
        let graph = self.gpu.graph();
        let (color, guides, output) = (graph.color, graph.guides, graph.output);
        let n = graph.nodes.len();
        let out_size = self.created.output();
        let guides_buf = self.gpu.tensor(guides).map_err(gpu_error)?;
        if empty_lanes {
            // Lanes of absent optional guides are zero; the previous frame's reads of the
            // tensor finish first.
            rec.compute_to_transfer();
            rec.zero_words(guides_buf);
            rec.transfer_to_compute();
        }
        for i in imports {
            let img = inputs.get(i.guide).ok_or_else(|| {
                FeatureError::Platform(format!("{}: planned but absent", i.guide.key()))
            })?;
            let src = self.use_image(img, INPUT_LAYOUT);
            let dst = match i.guide {
                Guide::Color => self.gpu.tensor(color).map_err(gpu_error)?,
                Guide::Exposure => self.gpu.exposure_input(),
                _ => guides_buf,
            };
            if i.depth24 {
                let words = self
                    .depth_words
                    .as_ref()
                    .ok_or_else(|| FeatureError::Platform("24-bit depth words not made".into()))?
                    .binding();
                depth24::record(
                    &ctx,
                    rec,
                    &mut self.images,
                    &src,
                    words,
                    dst,
                    (i.lanes.stride.unwrap_or(1), i.lanes.first),
                    (img.rect.x, img.rect.y),
                    (img.rect.width, img.rect.height),
                    i.kind & IMPORT_INVERT != 0,
                )
                .map_err(gpu_error)?;
                continue;
            }
            record_import_lanes(
                &ctx,
                rec,
                &mut self.images,
                &src,
                dst,
                i.guide.key(),
                i.kind,
                i.channels,
                i.lanes,
                (img.rect.x, img.rect.y),
                (img.rect.width, img.rect.height),
            )
            .map_err(gpu_error)?;
        }
        self.gpu.record(rec, c, 0..n).map_err(gpu_error)?;
        self.gpu.record_keep_history(rec).map_err(gpu_error)?;
        let out_img = inputs.output();
        let dst = self.use_image(out_img, OUTPUT_LAYOUT);
        let out_buf = self.gpu.tensor(output).map_err(gpu_error)?;
        record_export_rect(
            &ctx,
            rec,
            &mut self.images,
            out_buf,
            &dst,
            (out_img.rect.x, out_img.rect.y),
            (out_size.w, out_size.h),
        )
        .map_err(gpu_error)?;
        Ok(())
    }

    fn use_image(&mut self, img: &ImageInput, layout: vk::ImageLayout) -> crate::gpu::CallerImage {
        let c = caller_image(img, layout);
        self.images.track(&c, img.view);
        c
    }
}

/// A frame built for a new render size, ready to take over (`RrFeature::prepare_resize`).
struct Resize {
    next: GpuFrame,
    batch: UploadBatch,
    /// Where the history comes from: the current frame's output (the last frame's, equal to
    /// its history), or `None` before the first frame (the new history is cleared, as at
    /// creation).
    from: Option<BufferBinding>,
    to: BufferBinding,
    spare: SpareEvent,
}

impl RrFeature {
    /// Everything a render-size change needs that can fail: the frame for `render` -> the
    /// output size on the shared weights (`GpuFrame::with_weights`: buffers, descriptor sets;
    /// pipelines come from the device's cache), its setup staged, the history's source and
    /// destination, and the event that frees the old frame once the GPU is done with it.
    fn prepare_resize(&self, render: Size) -> Result<Resize, FeatureError> {
        let geometry = Geometry::new(render, self.created.output())
            .map_err(|e| FeatureError::Platform(e.to_string()))?;
        let mut next = GpuFrame::with_weights(
            &self.ctx,
            Arc::clone(self.gpu.weights()),
            geometry,
            self.created.preset(),
        )
        .map_err(gpu_error)?;
        let mut batch = UploadBatch::new(&self.ctx);
        next.stage_setup(&mut batch).map_err(gpu_error)?;
        let from = if self.history_valid {
            Some(
                self.gpu
                    .tensor(self.gpu.graph().output)
                    .map_err(gpu_error)?,
            )
        } else {
            None
        };
        let to = next.tensor(next.graph().history).map_err(gpu_error)?;
        let spare = SpareEvent::new(&self.ctx).map_err(gpu_error)?;
        Ok(Resize {
            next,
            batch,
            from,
            to,
            spare,
        })
    }

    /// Record the switch to the prepared frame (cannot fail): its setup, the history carried
    /// over (the temporal state lives at output resolution, which does not change; the frame
    /// counter and history validity are the feature's own), then the old frame is held until
    /// the GPU has run what was recorded so far, and freed at a later call.
    fn record_resize(&mut self, rec: &mut Recorder<'_>, r: Resize) {
        let Resize {
            next,
            mut batch,
            from,
            to,
            spare,
        } = r;
        next.record_staged_setup(rec, &mut batch);
        // The last frame's output was written by a shader (and read by the export): visible
        // to the copy; the copy (or clear) visible to the graph.
        rec.compute_to_transfer();
        match from {
            Some(from) => rec.copy_all(from, to),
            None => rec.zero_words(to),
        }
        rec.transfer_to_compute();
        let old = std::mem::replace(&mut self.gpu, next);
        // SizeInBytes: the old frame's tensors out, the new one's in (the feature's other
        // buffers stay counted).
        let (out, into) = (old.device_bytes(), self.gpu.device_bytes());
        self.accounted.fetch_sub(out, Ordering::Relaxed);
        self.accounted.fetch_add(into, Ordering::Relaxed);
        self.bytes = self.bytes - out + into;
        self.pending
            .hold_with(spare, rec, vec![Box::new(old), Box::new(batch)]);
    }
}

impl Instance<RrInputs> for RrFeature {
    fn evaluate(&mut self, cmd: vk::CommandBuffer, inputs: &RrInputs) -> Result<(), FeatureError> {
        self.pending.prune();
        let (imports, empty_lanes) = self.plan(inputs)?;
        // The 24-bit depth's word buffer, made before anything is recorded (render size: every
        // guide's region is).
        if imports.iter().any(|i| i.depth24) && self.depth_words.is_none() {
            let bytes = depth24::words_bytes((self.created.render().w, self.created.render().h));
            self.depth_words = Some(
                GpuBuffer::new(
                    &self.ctx,
                    "rr 24-bit depth words",
                    bytes,
                    MemoryKind::DeviceLocal,
                )
                .map_err(gpu_error)?,
            );
            // The stats callback's SizeInBytes counts it from now on (Drop gives it back).
            self.bytes += bytes;
            self.accounted.fetch_add(bytes, Ordering::Relaxed);
        }
        // Dynamic resolution: a frame at another render size runs a frame built for it, made
        // here, before anything is recorded (a refusal leaves the feature as it was).
        let resize = if inputs.render() != self.gpu.graph().geometry.render {
            Some(self.prepare_resize(inputs.render())?)
        } else {
            None
        };
        // Out of memory for the frame's completion event: refuse before recording anything.
        self.images.begin_frame().map_err(gpu_error)?;
        let c = self.constants(inputs);
        let ctx = Arc::clone(&self.ctx);
        // SAFETY: the NGX caller hands a command buffer of this device in the recording state.
        let mut rec = unsafe { Recorder::new(&ctx, cmd) }.map_err(gpu_error)?;
        if let Some(r) = resize {
            self.record_resize(&mut rec, r);
        }
        self.record(&mut rec, inputs, &imports, empty_lanes, &c)?;
        // The frame wrote the history: the next one may blend (unless it is a Reset).
        self.history_valid = true;
        self.frame_index += 1;
        self.images
            .end_frame(&mut rec, VIEW_IDLE_FRAMES)
            .map_err(gpu_error)
    }

    fn release(self: Box<Self>) {
        drop(self);
    }

    fn route_report(&self) -> Option<RouteReport> {
        Some(RouteReport {
            route: Route::Exact,
            profile: "rr",
            detail: "RR exact route (rr::gpu_frame)".into(),
            not_tensor: None,
        })
    }
}

impl Drop for RrFeature {
    fn drop(&mut self) {
        self.accounted.fetch_sub(self.bytes, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ngx::dlss_d::role;

    /// Every input format the ABI accepts for a guide (`dlss_d::roles`) is one the import kernel
    /// reads, but the 24-bit depth formats, which `depth24` reads (docs/rr.md "Input formats").
    #[test]
    fn every_accepted_format_is_read() {
        for g in Guide::ALL {
            for &f in role(g).formats() {
                let kind = guide_import_kind(f);
                if depth24::is_depth24(f) {
                    // Copied and decoded by `depth24`, for the depth only.
                    assert_eq!((kind, g), (None, Guide::Depth), "{f:?}");
                } else {
                    assert!(kind.is_some_and(|k| k & IMPORT_INVERT == 0), "{g:?} {f:?}");
                }
            }
        }
        assert_eq!(guide_import_kind(vk::Format::D16_UNORM), Some(4));
        assert_eq!(guide_import_kind(vk::Format::R8G8B8A8_SNORM), Some(5));
        assert_eq!(guide_import_kind(vk::Format::R16G16B16A16_SNORM), Some(6));
        assert_eq!(guide_import_kind(vk::Format::R8_UNORM), Some(1));
    }
}
