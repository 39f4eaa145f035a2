//! The seam between the C ABI and the code that records a feature's work: [`FeatureBackend`]
//! (one per feature id, registered at run time), [`FeatureInstance`] (one per created handle),
//! the typed inputs they receive and the typed errors they return, plus the model-directory
//! validation hook.
//!
//! The ABI layer (`exports.rs`, `nr.rs`) has already validated everything a caller passed when a
//! backend is called: sizes, formats, subrects, flags. A backend receives only owned values and
//! Vulkan handles; it must not keep any of the caller's pointers.
//!
//! No backend is built in. Until one is registered for feature 18, `CreateFeature` fails with
//! `NVSDK_NGX_Result_FAIL_NotImplemented` and a log line saying so.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use ash::vk;
use parking_lot::RwLock;

use super::abi::*;

/// The caller's Vulkan objects, as given to Init (copied; all owned by the application).
#[derive(Debug, Clone, Copy)]
pub struct DeviceContext {
    /// `InInstance`.
    pub instance: vk::Instance,
    /// `InPD`.
    pub physical_device: vk::PhysicalDevice,
    /// `InDevice`.
    pub device: vk::Device,
    /// `InGIPA` (may be absent; then the backend resolves `vkGetInstanceProcAddr` itself, e.g. via
    /// the Vulkan loader).
    pub get_instance_proc_addr: Option<vk::PFN_vkGetInstanceProcAddr>,
    /// `InGDPA` (may be absent).
    pub get_device_proc_addr: Option<vk::PFN_vkGetDeviceProcAddr>,
}

/// Validated creation parameters of a feature-18 instance (nr-network.md §5).
#[derive(Debug, Clone, PartialEq)]
pub struct CreateParams {
    /// `DLSSNR.Width` (64..=8192).
    pub width: u32,
    /// `DLSSNR.Height` (64..=8192, width*height <= 16,777,216).
    pub height: u32,
    /// The model directory found by the lookup (env, next to the library, app data path) and
    /// accepted by the model validator.
    pub model_dir: PathBuf,
    /// `PerfQualityValue` when given (informational; NR runs at 1:1).
    pub perf_quality: Option<i32>,
    /// `DLSSNR.Hint.Render.Preset` (only 0 is accepted today).
    pub preset: u32,
    /// `CreationNodeMask` (0 or 1).
    pub creation_node_mask: u32,
    /// `VisibilityNodeMask` (0 or 1).
    pub visibility_node_mask: u32,
}

/// A rectangle inside an image.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rect {
    /// Left column.
    pub x: u32,
    /// Top row.
    pub y: u32,
    /// Width.
    pub width: u32,
    /// Height.
    pub height: u32,
}

/// One image input or output, copied out of the caller's `NVSDK_NGX_Resource_VK` and checked:
/// the format is one the role accepts and `rect` lies inside the image.
#[derive(Debug, Clone, Copy)]
pub struct ImageInput {
    /// The caller's view.
    pub view: vk::ImageView,
    /// The caller's image.
    pub image: vk::Image,
    /// The subresource the view covers.
    pub subresource: vk::ImageSubresourceRange,
    /// The view format.
    pub format: vk::Format,
    /// Image width.
    pub width: u32,
    /// Image height.
    pub height: u32,
    /// The caller's `ReadWrite` flag (storage usage).
    pub read_write: bool,
    /// The region of the image the feature reads or writes (`*Subrect*` parameters; defaults to
    /// the feature size at the origin).
    pub rect: Rect,
}

/// Everything one evaluation of feature 18 needs, validated (nr-network.md §5, §1.8-1.9).
#[derive(Debug, Clone)]
pub struct EvalInputs {
    /// `DLSSNR.Color`: display-space (sRGB-encoded, 0..1) colour.
    pub color: ImageInput,
    /// `DLSSNR.Output`: storage image, feature size.
    pub output: ImageInput,
    /// `DLSSNR.MVec`: optional motion in pixels (current -> previous).
    pub motion: Option<ImageInput>,
    /// `DLSSNR.MVecScaleX/Y` (default 1).
    pub motion_scale: [f32; 2],
    /// `DLSSNR.Enabled` (default true). When false the output is the input (truncated to f16),
    /// history is not written and the frame counter resets.
    pub enabled: bool,
    /// `DLSSNR.Reset` (default false): drop history this frame.
    pub reset: bool,
    /// `DLSSNR.UseAutoMask` (default true).
    pub use_auto_mask: bool,
    /// `DLSSNR.Intensity` (default 1, 0..=1).
    pub intensity: f32,
    /// `DLSSNR.LocalToneStrength` (default 1).
    pub local_tone_strength: f32,
    /// `DLSSNR.LocalStructureStrength` (default 1).
    pub local_structure_strength: f32,
    /// `DLSSNR.SkinStructureStrength` (default -1 = follow local structure).
    pub skin_structure_strength: f32,
    /// `DLSSNR.GlobalToneStrength` when given (no lane uses it in the known network).
    pub global_tone_strength: Option<f32>,
    /// `DLSSNR.Style` (only 0 accepted).
    pub style: u32,
}

/// Why a backend refused or failed. Each variant maps to one result code.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FeatureError {
    /// A parameter value the backend cannot honour.
    #[error("invalid parameter {key}: {reason}")]
    InvalidParameter {
        /// The parameter name.
        key: String,
        /// Why.
        reason: String,
    },
    /// A recognised parameter the implementation does not support.
    #[error("unsupported parameter {key}: {reason}")]
    UnsupportedParameter {
        /// The parameter name.
        key: String,
        /// Why.
        reason: String,
    },
    /// An input image format the feature cannot read.
    #[error("{key}: unsupported input format {format:?}")]
    UnsupportedInputFormat {
        /// The parameter name.
        key: String,
        /// The format given.
        format: vk::Format,
    },
    /// An output image format the feature cannot write.
    #[error("{key}: unsupported output format {format:?}")]
    UnsupportedOutputFormat {
        /// The parameter name.
        key: String,
        /// The format given.
        format: vk::Format,
    },
    /// The output is not a storage image.
    #[error("{key}: resource is not read-write (needs VK_IMAGE_USAGE_STORAGE_BIT)")]
    NotReadWrite {
        /// The parameter name.
        key: String,
    },
    /// A required input is absent.
    #[error("missing required input {key}")]
    MissingInput {
        /// The parameter name.
        key: String,
    },
    /// The model directory could not be used.
    #[error("model directory {path}: {reason}")]
    Model {
        /// The directory.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// Device memory ran out.
    #[error("out of GPU memory: {0}")]
    OutOfGpuMemory(String),
    /// The device lacks something the backend needs, or a Vulkan call failed.
    #[error("platform error: {0}")]
    Platform(String),
    /// No backend is registered for the feature.
    #[error("no backend for feature {feature} is available in this build")]
    BackendUnavailable {
        /// The feature id.
        feature: u32,
    },
}

impl FeatureError {
    /// The NGX result code reported for this error.
    pub fn code(&self) -> NVSDK_NGX_Result {
        match self {
            FeatureError::InvalidParameter { .. } => NVSDK_NGX_Result_FAIL_InvalidParameter,
            FeatureError::UnsupportedParameter { .. } => NVSDK_NGX_Result_FAIL_UnsupportedParameter,
            FeatureError::UnsupportedInputFormat { .. } => {
                NVSDK_NGX_Result_FAIL_UnsupportedInputFormat
            }
            FeatureError::UnsupportedOutputFormat { .. } => NVSDK_NGX_Result_FAIL_UnsupportedFormat,
            FeatureError::NotReadWrite { .. } => NVSDK_NGX_Result_FAIL_RWFlagMissing,
            FeatureError::MissingInput { .. } => NVSDK_NGX_Result_FAIL_MissingInput,
            FeatureError::Model { .. } => NVSDK_NGX_Result_FAIL_UnableToInitializeFeature,
            FeatureError::OutOfGpuMemory(_) => NVSDK_NGX_Result_FAIL_OutOfGPUMemory,
            FeatureError::Platform(_) => NVSDK_NGX_Result_FAIL_PlatformError,
            FeatureError::BackendUnavailable { .. } => NVSDK_NGX_Result_FAIL_NotImplemented,
        }
    }
}

/// Creates instances of one feature. Implementations must be thread-safe (the registry is
/// global); they own nothing of the caller except the Vulkan objects they create themselves.
pub trait FeatureBackend: Send + Sync {
    /// Short name for log lines (e.g. `"dlss-nr exact"`).
    fn name(&self) -> &str;

    /// Creates an instance on `device`. `cmd` is the caller's command buffer in the recording
    /// state: the backend may record one-time work (uploads, layout transitions) into it and must
    /// not submit it. Called only after the ABI layer validated `params`.
    fn create(
        &self,
        device: &DeviceContext,
        params: &CreateParams,
        cmd: vk::CommandBuffer,
    ) -> Result<Box<dyn FeatureInstance>, FeatureError>;

    /// Device memory in bytes the feature keeps in total (all instances, caches), reported by the
    /// `DLSSNRGetStatsCallback` as `SizeInBytes`.
    fn memory_in_use(&self) -> u64 {
        0
    }
}

/// One created feature (one `NVSDK_NGX_Handle`).
pub trait FeatureInstance: Send {
    /// Records one frame into `cmd` (the caller's recording command buffer). Must leave nothing
    /// half-recorded on error where avoidable; never submits.
    fn evaluate(&mut self, cmd: vk::CommandBuffer, inputs: &EvalInputs)
        -> Result<(), FeatureError>;

    /// Frees the instance's device objects. Called exactly once, from ReleaseFeature or Shutdown,
    /// after the application promised no command buffer using the instance is still in flight.
    fn release(self: Box<Self>);
}

static BACKENDS: RwLock<Vec<(NVSDK_NGX_Feature, Arc<dyn FeatureBackend>)>> =
    RwLock::new(Vec::new());

/// Feature ids whose parameters the ABI layer knows how to validate (only these accept a backend).
pub const SUPPORTED_FEATURES: &[NVSDK_NGX_Feature] = &[NVSDK_NGX_Feature_Reserved18];

/// Why a backend could not be registered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegisterError {
    /// The ABI layer has no parameter schema for the id.
    #[error("feature {0} has no parameter schema in the NGX layer (supported: 18)")]
    UnknownFeature(NVSDK_NGX_Feature),
}

/// Registers (or replaces) the backend of `feature`. Instances created by an earlier backend
/// stay alive until released.
pub fn register_backend(
    feature: NVSDK_NGX_Feature,
    backend: Arc<dyn FeatureBackend>,
) -> Result<(), RegisterError> {
    if !SUPPORTED_FEATURES.contains(&feature) {
        return Err(RegisterError::UnknownFeature(feature));
    }
    super::builtin::ensure_installed();
    insert_backend(feature, backend);
    Ok(())
}

/// Registration without the built-in installation step (used by `builtin.rs` itself, where
/// calling the public function would re-enter the one-time installation).
pub(crate) fn insert_backend(feature: NVSDK_NGX_Feature, backend: Arc<dyn FeatureBackend>) {
    let mut b = BACKENDS.write();
    b.retain(|(f, _)| *f != feature);
    b.push((feature, backend));
}

/// Removes the backend of `feature` (tests; a library user never needs this).
pub fn unregister_backend(feature: NVSDK_NGX_Feature) {
    super::builtin::ensure_installed();
    BACKENDS.write().retain(|(f, _)| *f != feature);
}

/// The backend of `feature`, if one is registered (the built-in ones are installed first).
pub fn backend_for(feature: NVSDK_NGX_Feature) -> Option<Arc<dyn FeatureBackend>> {
    super::builtin::ensure_installed();
    BACKENDS
        .read()
        .iter()
        .find(|(f, _)| *f == feature)
        .map(|(_, b)| b.clone())
}

// ---------------------------------------------------------------------------------------------
// Model directory validation hook

/// Checks that a directory holds a usable model; `Err` carries a human-readable reason.
pub type ModelValidator = dyn Fn(&Path) -> Result<(), String> + Send + Sync;

static MODEL_VALIDATOR: RwLock<Option<Arc<ModelValidator>>> = RwLock::new(None);

/// Installs the model validator (the lead wires `openngx::model`'s manifest check here).
pub fn set_model_validator(v: Arc<ModelValidator>) {
    super::builtin::ensure_installed();
    put_model_validator(v);
}

/// `set_model_validator` without the built-in installation step (for `builtin.rs`).
pub(crate) fn put_model_validator(v: Arc<ModelValidator>) {
    *MODEL_VALIDATOR.write() = Some(v);
}

/// Restores the default validator.
pub fn clear_model_validator() {
    super::builtin::ensure_installed();
    *MODEL_VALIDATOR.write() = None;
}

/// Runs the installed validator, or the default one: the directory must contain a readable
/// `manifest.json` file (the full check belongs to the model loader).
pub fn validate_model_dir(dir: &Path) -> Result<(), String> {
    super::builtin::ensure_installed();
    let v = MODEL_VALIDATOR.read().clone();
    match v {
        Some(v) => v(dir),
        None => {
            let manifest = dir.join("manifest.json");
            match std::fs::metadata(&manifest) {
                Ok(m) if m.is_file() => Ok(()),
                Ok(_) => Err(format!("{} is not a file", manifest.display())),
                Err(e) => Err(format!("{}: {e}", manifest.display())),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_map_to_distinct_codes() {
        let e = FeatureError::UnsupportedInputFormat {
            key: "DLSSNR.Color".into(),
            format: vk::Format::R8_UNORM,
        };
        assert_eq!(e.code(), NVSDK_NGX_Result_FAIL_UnsupportedInputFormat);
        assert!(e.to_string().contains("DLSSNR.Color"));
        assert_eq!(
            FeatureError::BackendUnavailable { feature: 18 }.code(),
            NVSDK_NGX_Result_FAIL_NotImplemented
        );
        assert_eq!(
            FeatureError::NotReadWrite { key: "o".into() }.code(),
            NVSDK_NGX_Result_FAIL_RWFlagMissing
        );
    }

    #[test]
    fn only_known_features_take_backends() {
        struct B;
        impl FeatureBackend for B {
            fn name(&self) -> &str {
                "b"
            }
            fn create(
                &self,
                _: &DeviceContext,
                _: &CreateParams,
                _: vk::CommandBuffer,
            ) -> Result<Box<dyn FeatureInstance>, FeatureError> {
                Err(FeatureError::Platform("test".into()))
            }
        }
        assert_eq!(
            register_backend(1, Arc::new(B)).err(),
            Some(RegisterError::UnknownFeature(1))
        );
        assert!(backend_for(1).is_none());
    }
}
