//! Vulkan on the caller's device: function tables and capabilities (`context`), memory
//! (`buffer`), pipelines from the embedded SPIR-V (`pipeline`, `shaders`), descriptor sets
//! (`descriptors`; the cached sets of pipelines that bind images, `image_bindings`), the
//! caller's images (`caller_image`: views, staleness), barriers, timestamps, the command recorder
//! (`dispatch`), prepared launches (`prepared`), objects freed once a recorded command buffer
//! has run (`deferred`), where allocations with known lifetimes share bytes (`placement`),
//! uploads shared by the features of one device (`share`) and the band arithmetic that keeps
//! launches within the device's binding and grid limits (`bands`). Nothing here creates a device
//! or a queue or submits work: everything is recorded into command buffers the caller owns.
//! Nothing here knows a network.
pub mod bands;
pub mod barrier;
pub mod buffer;
pub mod caller_image;
pub mod context;
pub mod deferred;
pub mod descriptors;
pub mod dispatch;
pub mod error;
pub mod image_bindings;
pub mod pipeline;
pub mod placement;
pub mod prepared;
pub mod scratch_device;
pub mod shaders;
pub mod share;
pub mod timestamps;

pub use barrier::ImageDependency;
pub use buffer::{BufferBinding, GpuBuffer, MemoryKind, UploadBatch};
pub use caller_image::{Bind, CallerImage, CallerImages};
pub use context::{Capabilities, CoopMatrixShape, DeviceRegistry, GpuContext};
pub use deferred::{AfterSubmission, Pending, SpareEvent};
pub use descriptors::{ArenaCapacity, Descriptor, DescriptorArena};
pub use dispatch::Recorder;
pub use error::GpuError;
pub use image_bindings::ImageBindings;
pub use pipeline::{
    ComputePipeline, DescriptorKind, ImageSlots, PipelineDesc, PipelineStatistics, SpecConstant,
};
pub use prepared::Dispatch;
pub use scratch_device::{ScratchDevice, ScratchFeatures};
pub use share::DeviceShare;
pub use timestamps::{StageTime, TimestampPool};
