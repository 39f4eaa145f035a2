//! Vulkan on the caller's device: SPIR-V table, dispatch tables, allocation, pipelines.
pub mod shaders;
