//! [`FeatureError`]: why a feature refused a request or failed. Each variant is one kind of
//! failure a caller can act on; the ABI layer maps each to one result code.

use std::path::PathBuf;

use ash::vk;

/// Why a backend refused or failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FeatureError {
    /// A parameter value the feature cannot honour.
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
