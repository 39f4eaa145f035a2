//! Vulkan on the caller's device: function tables and capabilities (`context`), memory
//! (`buffer`), pipelines from the embedded SPIR-V (`pipeline`, `shaders`), descriptor sets,
//! barriers, timestamps, the command recorder (`dispatch`) and prepared launches (`prepared`). Nothing here creates a device or
//! a queue or submits work: everything is recorded into command buffers the caller owns.
pub mod barrier;
pub mod buffer;
pub mod context;
pub mod descriptors;
pub mod dispatch;
pub mod error;
pub mod pipeline;
pub mod prepared;
pub mod shaders;
pub mod timestamps;

pub use buffer::{BufferBinding, GpuBuffer, MemoryKind, UploadBatch};
pub use context::{Capabilities, DeviceRegistry, GpuContext};
pub use descriptors::DescriptorArena;
pub use dispatch::Recorder;
pub use error::GpuError;
pub use pipeline::{ComputePipeline, PipelineDesc, PipelineStatistics, SpecConstant};
pub use prepared::Dispatch;
pub use timestamps::{StageTime, TimestampPool};
