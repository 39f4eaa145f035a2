//! [`DeviceContext`]: the application's Vulkan objects as given to initialisation (copied
//! handles, all owned by the application).

use ash::vk;

/// The caller's Vulkan objects, as given to Init.
#[derive(Debug, Clone, Copy)]
pub struct DeviceContext {
    /// The application's instance.
    pub instance: vk::Instance,
    /// The physical device behind `device`.
    pub physical_device: vk::PhysicalDevice,
    /// The application's device; everything a feature allocates lives on it.
    pub device: vk::Device,
    /// The application's `vkGetInstanceProcAddr` (may be absent; then the backend resolves it
    /// through the Vulkan loader).
    pub get_instance_proc_addr: Option<vk::PFN_vkGetInstanceProcAddr>,
    /// The application's `vkGetDeviceProcAddr` (may be absent).
    pub get_device_proc_addr: Option<vk::PFN_vkGetDeviceProcAddr>,
}
