//! [`NrBackend`]: the [`Backend`] of DLSS-NR (NGX feature 18). `create` checks the size, loads (or
//! shares) the model, adopts the caller's device, uploads the weights once per device (recorded
//! into the caller's command buffer), and builds the feature's frame (`nr::gpu_frame`: buffers,
//! network, passes).
//!
//! Nothing that can fail is done after the first command was recorded into the caller's command
//! buffer: the weights' upload is staged (`GpuWeights::for_feature`), the network and the frame
//! are built on the not yet uploaded buffers, and only then are the upload and the history's
//! clear recorded, which cannot fail. So a failed creation records nothing and frees everything
//! it made (its staged weights included: they are shared with other features only once
//! recorded).

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use ash::vk;

use super::driver::FrameDriver;
use super::errors::{gpu_error, record_error};
use super::instance::NrFeature;
use super::params::{NrCreate, NrInputs};
use super::route_choice::{self, RouteInputs};
use crate::feature::{Backend, DeviceContext, FeatureError, Instance, RouteReport};
use crate::gpu::share::{Handed, KeptContexts};
use crate::gpu::{CallerImages, GpuContext, Pending, Recorder, UploadBatch};
use crate::model::{LoadOptions, Model, ModelCache};
use crate::nr::geometry::Geometry;
use crate::nr::gpu_frame::{self, FrameBuffers, GpuFrame};
use crate::nr::graph;
use crate::nr::keys;
use crate::nr::record::network::{NetworkOptions, NetworkRecorder};
use crate::nr::record::GpuWeights;
use crate::nr::record::KernelBuild;
use crate::numerics::f16;

/// The DLSS-NR backend (exact route, native `f13`/`f24` numerics).
pub struct NrBackend {
    models: ModelCache<Model>,
    /// Device bytes of the live features' own buffers.
    instance_bytes: Arc<AtomicU64>,
    /// Weights handed to features (counted while any feature holds them).
    weights: Handed<GpuWeights>,
    /// The context of each device a feature was created on, kept from the first creation until
    /// the device's Shutdown ([`Backend::device_shutdown`]): its pipelines (hundreds, compiled by
    /// the driver) then serve every feature of the device rather than being built again for
    /// each. Rebuilding them cost lavapipe about 8 s and 100 MiB of resident memory it never
    /// returned per create/release cycle (tests/feature_soak.rs, docs/testing.md).
    devices: KeptContexts,
}

impl Default for NrBackend {
    fn default() -> Self {
        NrBackend::new()
    }
}

/// The loader's `vkGetInstanceProcAddr`, for callers that pass none to Init. The entry stays
/// loaded for the life of the process (the function pointer must stay valid).
pub(crate) fn loader_gipa() -> Result<vk::PFN_vkGetInstanceProcAddr, FeatureError> {
    static ENTRY: once_cell::sync::OnceCell<ash::Entry> = once_cell::sync::OnceCell::new();
    ENTRY
        .get_or_try_init(|| {
            // SAFETY: loading the system Vulkan loader, which the caller's instance came from.
            unsafe { ash::Entry::load() }
        })
        .map(|e| e.static_fn().get_instance_proc_addr)
        .map_err(|e| {
            FeatureError::Platform(format!(
                "no vkGetInstanceProcAddr was given to Init and the Vulkan loader could not be loaded: {e}"
            ))
        })
}

impl NrBackend {
    /// A backend with an empty model cache.
    pub fn new() -> NrBackend {
        NrBackend {
            models: ModelCache::new(),
            instance_bytes: Arc::new(AtomicU64::new(0)),
            weights: Handed::default(),
            devices: KeptContexts::default(),
        }
    }

    /// Models currently loaded (shared by live features).
    pub fn loaded_models(&self) -> usize {
        self.models.live()
    }

    /// Creates a feature; the `NrFeature` (not boxed) for callers inside the crate.
    pub fn create_feature(
        &self,
        device: &DeviceContext,
        model_dir: &Path,
        params: &NrCreate,
        cmd: vk::CommandBuffer,
    ) -> Result<NrFeature, FeatureError> {
        let (width, height) = (params.width(), params.height());
        let geometry =
            Geometry::new(width, height).map_err(|e| FeatureError::InvalidParameter {
                key: keys::WIDTH.to_owned(),
                reason: format!("{width}x{height}: {e}"),
            })?;
        let model = self
            .models
            .get(model_dir, |d| {
                Model::load(d, LoadOptions { verify_sha: true })
            })
            .map_err(|e| FeatureError::Model {
                path: model_dir.to_path_buf(),
                reason: e.to_string(),
            })?;
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

        // Everything that can fail without touching the command buffer comes first, the
        // route's check of the device included. The kernel builds are chosen here, once.
        let inputs = RouteInputs::read(params)?;
        let fusion = route_choice::fusion_from_env()?;
        let kernels = KernelBuild::from_env();
        let chosen = route_choice::choose(&ctx, &inputs, kernels)?;
        let route = chosen.route;
        let mut report = RouteReport {
            route: route.route(),
            profile: route.profiles().name,
            detail: route.describe(),
            not_tensor: chosen.not_tensor,
        };
        let opts = NetworkOptions {
            route: route.route(),
            profiles: route.profiles(),
            kernels,
            // Every evaluation runs the prepare pass before the network.
            input_per_frame: true,
            fusion,
            ..NetworkOptions::default()
        };
        let graph = graph::build(&geometry);
        // Every launch within the device's limits (bands where a tensor exceeds the binding
        // range), or refused here, before anything is allocated or recorded.
        let launches = gpu_frame::check_limits(ctx.capabilities(), &graph, &opts).map_err(|e| {
            FeatureError::UnsupportedParameter {
                key: keys::WIDTH.to_owned(),
                reason: format!(
                    "{width}x{height} does not fit device `{}`: {e}",
                    ctx.capabilities().device_name
                ),
            }
        })?;
        // How the network runs, for the log: window blocks as strips and the workspace.
        report.detail.push_str(&format!(
            ", {} window blocks in strips of {} bands, fusion {fusion} ({} ops inside another's \
             kernel), workspace {:.1} MiB",
            launches.strips.strips.len(),
            launches.strips.band_count(),
            launches.fusions.count(),
            launches.workspace_bytes() as f64 / (1u64 << 20) as f64
        ));
        // Everything that can fail is done before the first command is recorded: a failed
        // creation leaves the caller's command buffer untouched and frees all it made.
        // SAFETY: the NGX caller hands a command buffer of this device in the recording state.
        let mut rec = unsafe { Recorder::new(&ctx, cmd) }.map_err(gpu_error)?;
        let buffers = FrameBuffers::new(&ctx, width, height).map_err(gpu_error)?;
        let images = CallerImages::new(&ctx);
        let mut batch = UploadBatch::new(&ctx);
        let weights = GpuWeights::for_feature(&ctx, &model, &mut batch).map_err(record_error)?;
        let network =
            NetworkRecorder::with_route(&ctx, graph, Arc::clone(weights.value()), route, opts)
                .map_err(record_error)?;
        let frame = GpuFrame::new(&ctx, buffers, network).map_err(gpu_error)?;
        // The test hook's failure (tests/feature_soak.rs): the last point a creation can fail.
        crate::feature::fault::creation()?;

        // Recording: nothing below can fail.
        let weights = weights.record(&mut batch, &mut rec);
        self.weights.track(&weights);
        // The history starts at zero.
        frame.record_clear_history(&mut rec);
        // The staging memory lives until the GPU is past the upload, or the feature's release
        // (after which the application may not submit the creation work any more).
        let mut pending = Pending::default();
        if batch.staged_bytes() > 0 {
            pending.hold(&ctx, &mut rec, vec![Box::new(batch)]);
        }
        let bytes = frame.device_bytes();
        self.instance_bytes.fetch_add(bytes, Ordering::Relaxed);
        let blend = f16::to_f32(model.blend_scale());
        Ok(NrFeature {
            pending,
            images,
            frame,
            driver: FrameDriver::new(geometry, blend),
            _weights: weights,
            _model: model,
            ctx,
            bytes,
            accounted: Arc::clone(&self.instance_bytes),
            report,
        })
    }
}

impl Backend for NrBackend {
    type Create = NrCreate;
    type Eval = NrInputs;

    fn name(&self) -> &str {
        "dlss-nr"
    }

    fn create(
        &self,
        device: &DeviceContext,
        model_dir: &Path,
        params: &NrCreate,
        cmd: vk::CommandBuffer,
    ) -> Result<Box<dyn Instance<NrInputs>>, FeatureError> {
        Ok(Box::new(
            self.create_feature(device, model_dir, params, cmd)?,
        ))
    }

    fn device_shutdown(&self, device: vk::Device) {
        self.devices.release(device);
    }

    fn memory_in_use(&self) -> u64 {
        let weights = self.weights.sum_live(|w| w.bytes());
        self.instance_bytes.load(Ordering::Relaxed) + weights
    }
}
