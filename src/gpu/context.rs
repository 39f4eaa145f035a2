//! The library's view of the caller's Vulkan device: function tables loaded through the caller's
//! `vkGet*ProcAddr`, device properties and limits, the memory allocator and the per-device
//! pipeline state. What a route needs of the device is the route's (`nr::route`).
//!
//! The library never creates an instance, a device or a queue. One [`GpuContext`] exists per
//! `VkDevice` (see [`DeviceRegistry`]): every feature created on that device shares it, so
//! pipelines and anything registered per device are built once; it is freed with the last
//! holder (the DLSS-NR backend holds it until the device's Shutdown).

use std::ffi::CStr;
use std::sync::{Arc, Weak};

use ash::vk;
use parking_lot::Mutex;

use super::error::GpuError;
use super::pipeline::PipelineStore;

/// Device facts read once at context creation.
#[derive(Clone, Debug, PartialEq)]
pub struct Capabilities {
    pub device_name: String,
    pub vendor_id: u32,
    pub device_id: u32,
    pub device_type: vk::PhysicalDeviceType,
    /// `VkPhysicalDeviceProperties::apiVersion`.
    pub api_version: u32,
    pub driver_version: u32,
    pub shader_float16: bool,
    pub shader_int8: bool,
    pub shader_int16: bool,
    pub shader_int64: bool,
    pub storage_buffer_8bit: bool,
    pub storage_buffer_16bit: bool,
    pub vulkan_memory_model: bool,
    /// `timestampComputeAndGraphics` and a nonzero `timestampPeriod`.
    pub timestamps: bool,
    /// Nanoseconds per timestamp tick.
    pub timestamp_period_ns: f32,
    pub subgroup_size: u32,
    /// Compute shaders may use the subgroup operations the tensor route's kernels take:
    /// basic (barriers), shuffle, relative shuffle and ballot (broadcast).
    pub subgroup_shuffles: bool,
    pub max_push_constants_size: u32,
    pub max_storage_buffer_range: u32,
    pub max_compute_shared_memory_size: u32,
    pub max_compute_work_group_invocations: u32,
    pub max_compute_work_group_count: [u32; 3],
    pub max_bound_descriptor_sets: u32,
    /// `maxMemoryAllocationSize` (Vulkan 1.1): the largest single allocation.
    pub max_memory_allocation_size: u64,
    /// `maxBufferSize` (Vulkan 1.3); `u64::MAX` where the device states none.
    pub max_buffer_size: u64,
    pub min_storage_buffer_offset_alignment: u64,
    pub non_coherent_atom_size: u64,
    /// `shaderRoundingModeRTZFloat32`: shaders may set the round-toward-zero f32 mode (the
    /// `*_rtz` builds of the GEMM and attention kernels need it; without it the portable builds
    /// run, same bytes, slower).
    pub rounding_mode_rtz_f32: bool,
    /// `shaderRoundingModeRTEFloat16`: shaders may declare round-to-nearest-even for 16-bit
    /// results (the `*_rtz` builds round their group results by converting f32 to f16).
    pub rounding_mode_rte_f16: bool,
    /// `shaderDenormPreserveFloat16`: 16-bit subnormal results are kept (same builds).
    pub denorm_preserve_f16: bool,
    /// `roundingModeIndependence` is ALL: 16- and 32-bit floats may use different rounding
    /// modes in one shader (RTZ for f32 and RTE for f16 in the same builds).
    pub rounding_mode_independent: bool,
    /// `VK_KHR_cooperative_matrix` is offered with the `cooperativeMatrix` feature and compute
    /// among its supported stages.
    pub coop_matrix: bool,
    /// The cooperative-matrix shapes offered at subgroup scope, as (M, N, K, A/B type, C/result
    /// type) with Vulkan's component-type numbers (f16 = 0, f32 = 1).
    pub coop_matrix_shapes: Vec<CoopMatrixShape>,
}

/// One subgroup-scope cooperative-matrix shape a device offers (from
/// `vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CoopMatrixShape {
    pub m: u32,
    pub n: u32,
    pub k: u32,
    pub ab: vk::ComponentTypeKHR,
    pub c: vk::ComponentTypeKHR,
    pub result: vk::ComponentTypeKHR,
}

impl CoopMatrixShape {
    /// f16 x f16 + f16 -> f16 at 16x16x16, the shape the tensor route uses.
    pub const F16_16X16X16: CoopMatrixShape = CoopMatrixShape {
        m: 16,
        n: 16,
        k: 16,
        ab: vk::ComponentTypeKHR::FLOAT16,
        c: vk::ComponentTypeKHR::FLOAT16,
        result: vk::ComponentTypeKHR::FLOAT16,
    };
}

impl Capabilities {
    /// Whether shaders may compute with the device's own f16 arithmetic and get the model's
    /// bytes: 16-bit results rounded to nearest even with subnormals kept (both declared by the
    /// shader; properties, nothing to enable) and f16 arithmetic types (`shaderFloat16`, which
    /// the exact route requires the caller to enable anyway).
    pub fn native_f16(&self) -> bool {
        self.rounding_mode_rte_f16 && self.denorm_preserve_f16 && self.shader_float16
    }

    /// Whether the `*_rtz` kernel builds can run: the RTZ f32 mode in a shader that also uses
    /// [`Self::native_f16`] (so the two widths must allow different rounding modes).
    pub fn rtz_kernels(&self) -> bool {
        self.rounding_mode_rtz_f32 && self.rounding_mode_independent && self.native_f16()
    }
}

impl Capabilities {
    /// Read the physical device's properties and features; `gipa` resolves the instance's
    /// extension functions (the cooperative-matrix shapes).
    ///
    /// # Safety
    /// `physical` must be a valid physical device of `instance`, and `gipa` the instance's
    /// `vkGetInstanceProcAddr`.
    pub unsafe fn query(
        gipa: vk::PFN_vkGetInstanceProcAddr,
        instance: &ash::Instance,
        physical: vk::PhysicalDevice,
    ) -> Self {
        let props = instance.get_physical_device_properties(physical);
        let limits = props.limits;
        let device_name = props
            .device_name_as_c_str()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|_| "<unnamed device>".to_owned());
        let mut caps = Capabilities {
            device_name,
            vendor_id: props.vendor_id,
            device_id: props.device_id,
            device_type: props.device_type,
            api_version: props.api_version,
            driver_version: props.driver_version,
            shader_float16: false,
            shader_int8: false,
            shader_int16: false,
            shader_int64: false,
            storage_buffer_8bit: false,
            storage_buffer_16bit: false,
            vulkan_memory_model: false,
            timestamps: limits.timestamp_compute_and_graphics == vk::TRUE
                && limits.timestamp_period > 0.0,
            timestamp_period_ns: limits.timestamp_period,
            subgroup_size: 0,
            subgroup_shuffles: false,
            max_push_constants_size: limits.max_push_constants_size,
            max_storage_buffer_range: limits.max_storage_buffer_range,
            max_compute_shared_memory_size: limits.max_compute_shared_memory_size,
            max_compute_work_group_invocations: limits.max_compute_work_group_invocations,
            max_compute_work_group_count: limits.max_compute_work_group_count,
            max_bound_descriptor_sets: limits.max_bound_descriptor_sets,
            max_memory_allocation_size: u64::MAX,
            max_buffer_size: u64::MAX,
            min_storage_buffer_offset_alignment: limits.min_storage_buffer_offset_alignment,
            non_coherent_atom_size: limits.non_coherent_atom_size,
            rounding_mode_rtz_f32: false,
            rounding_mode_rte_f16: false,
            denorm_preserve_f16: false,
            rounding_mode_independent: false,
            coop_matrix: false,
            coop_matrix_shapes: Vec::new(),
        };
        // The 1.1/1.2 feature structs may only be chained when the device reports 1.2+; an older
        // device fails the check on its version alone.
        if caps.api_version >= vk::API_VERSION_1_2 {
            let mut f11 = vk::PhysicalDeviceVulkan11Features::default();
            let mut f12 = vk::PhysicalDeviceVulkan12Features::default();
            let mut f2 = vk::PhysicalDeviceFeatures2::default()
                .push_next(&mut f11)
                .push_next(&mut f12);
            instance.get_physical_device_features2(physical, &mut f2);
            let core = f2.features;
            caps.shader_int16 = core.shader_int16 == vk::TRUE;
            caps.shader_int64 = core.shader_int64 == vk::TRUE;
            caps.storage_buffer_16bit = f11.storage_buffer16_bit_access == vk::TRUE;
            caps.shader_float16 = f12.shader_float16 == vk::TRUE;
            caps.shader_int8 = f12.shader_int8 == vk::TRUE;
            caps.storage_buffer_8bit = f12.storage_buffer8_bit_access == vk::TRUE;
            caps.vulkan_memory_model = f12.vulkan_memory_model == vk::TRUE;
            let mut p11 = vk::PhysicalDeviceVulkan11Properties::default();
            let mut p12 = vk::PhysicalDeviceVulkan12Properties::default();
            let mut p2 = vk::PhysicalDeviceProperties2::default()
                .push_next(&mut p11)
                .push_next(&mut p12);
            instance.get_physical_device_properties2(physical, &mut p2);
            caps.subgroup_size = p11.subgroup_size;
            let ops = vk::SubgroupFeatureFlags::BASIC
                | vk::SubgroupFeatureFlags::SHUFFLE
                | vk::SubgroupFeatureFlags::SHUFFLE_RELATIVE
                | vk::SubgroupFeatureFlags::BALLOT;
            caps.subgroup_shuffles = p11
                .subgroup_supported_stages
                .contains(vk::ShaderStageFlags::COMPUTE)
                && p11.subgroup_supported_operations.contains(ops);
            caps.max_memory_allocation_size = p11.max_memory_allocation_size;
            if caps.api_version >= vk::API_VERSION_1_3 {
                // Chained only where the device's version defines it.
                let mut m4 = vk::PhysicalDeviceMaintenance4Properties::default();
                let mut p2 = vk::PhysicalDeviceProperties2::default().push_next(&mut m4);
                instance.get_physical_device_properties2(physical, &mut p2);
                caps.max_buffer_size = m4.max_buffer_size;
            }
            caps.rounding_mode_rtz_f32 = p12.shader_rounding_mode_rtz_float32 == vk::TRUE;
            caps.rounding_mode_rte_f16 = p12.shader_rounding_mode_rte_float16 == vk::TRUE;
            caps.denorm_preserve_f16 = p12.shader_denorm_preserve_float16 == vk::TRUE;
            caps.rounding_mode_independent =
                p12.rounding_mode_independence == vk::ShaderFloatControlsIndependence::ALL;
            caps.query_coop_matrix(gipa, instance, physical);
        }
        caps
    }

    /// Fill `coop_matrix` and `coop_matrix_shapes` (device reports 1.2+).
    ///
    /// # Safety
    /// As [`Capabilities::query`].
    unsafe fn query_coop_matrix(
        &mut self,
        gipa: vk::PFN_vkGetInstanceProcAddr,
        instance: &ash::Instance,
        physical: vk::PhysicalDevice,
    ) {
        let offered = instance
            .enumerate_device_extension_properties(physical)
            .unwrap_or_default()
            .iter()
            .any(|e| e.extension_name_as_c_str().ok() == Some(ash::khr::cooperative_matrix::NAME));
        if !offered {
            return;
        }
        let mut fcm = vk::PhysicalDeviceCooperativeMatrixFeaturesKHR::default();
        let mut f2 = vk::PhysicalDeviceFeatures2::default().push_next(&mut fcm);
        instance.get_physical_device_features2(physical, &mut f2);
        let mut pcm = vk::PhysicalDeviceCooperativeMatrixPropertiesKHR::default();
        let mut p2 = vk::PhysicalDeviceProperties2::default().push_next(&mut pcm);
        instance.get_physical_device_properties2(physical, &mut p2);
        self.coop_matrix = fcm.cooperative_matrix == vk::TRUE
            && pcm
                .cooperative_matrix_supported_stages
                .contains(vk::ShaderStageFlags::COMPUTE);
        // Resolved by hand: ash's loader would put a panicking stub in place of a missing one.
        let name = c"vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR";
        let Some(f) = gipa(instance.handle(), name.as_ptr()) else {
            self.coop_matrix = false;
            return;
        };
        // SAFETY: the loader returned this pointer for exactly this command name.
        let list: vk::PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR =
            std::mem::transmute(f);
        let mut count = 0u32;
        if list(physical, &mut count, std::ptr::null_mut()) != vk::Result::SUCCESS {
            return;
        }
        let mut props = vec![vk::CooperativeMatrixPropertiesKHR::default(); count as usize];
        let r = list(physical, &mut count, props.as_mut_ptr());
        if r != vk::Result::SUCCESS && r != vk::Result::INCOMPLETE {
            return;
        }
        props.truncate(count as usize);
        self.coop_matrix_shapes = props
            .iter()
            .filter(|p| p.scope == vk::ScopeKHR::SUBGROUP && p.saturating_accumulation == vk::FALSE)
            .map(|p| CoopMatrixShape {
                m: p.m_size,
                n: p.n_size,
                k: p.k_size,
                ab: p.a_type,
                c: p.c_type,
                result: p.result_type,
            })
            .filter(|s| s.ab == s.c || s.c == s.result)
            .collect();
    }

    /// Whether the device offers `shape` at subgroup scope (with the `cooperativeMatrix`
    /// feature, in compute shaders).
    pub fn offers_coop_matrix(&self, shape: CoopMatrixShape) -> bool {
        self.coop_matrix && self.coop_matrix_shapes.contains(&shape)
    }
}

/// Device functions the library calls; each is checked to resolve before any is used, because
/// ash replaces an unresolved pointer with a stub that panics.
const DEVICE_FUNCTIONS: &[&CStr] = &[
    c"vkCreateBuffer",
    c"vkDestroyBuffer",
    c"vkGetBufferMemoryRequirements",
    c"vkAllocateMemory",
    c"vkFreeMemory",
    c"vkBindBufferMemory",
    c"vkMapMemory",
    c"vkUnmapMemory",
    c"vkFlushMappedMemoryRanges",
    c"vkInvalidateMappedMemoryRanges",
    c"vkCreateShaderModule",
    c"vkDestroyShaderModule",
    c"vkCreatePipelineCache",
    c"vkDestroyPipelineCache",
    c"vkGetPipelineCacheData",
    c"vkCreateComputePipelines",
    c"vkDestroyPipeline",
    c"vkCreatePipelineLayout",
    c"vkDestroyPipelineLayout",
    c"vkCreateDescriptorSetLayout",
    c"vkDestroyDescriptorSetLayout",
    c"vkCreateDescriptorPool",
    c"vkDestroyDescriptorPool",
    c"vkResetDescriptorPool",
    c"vkAllocateDescriptorSets",
    c"vkUpdateDescriptorSets",
    c"vkCreateQueryPool",
    c"vkDestroyQueryPool",
    c"vkGetQueryPoolResults",
    c"vkCmdBindPipeline",
    c"vkCmdBindDescriptorSets",
    c"vkCmdPushConstants",
    c"vkCmdDispatch",
    c"vkCmdPipelineBarrier",
    c"vkCmdCopyBuffer",
    c"vkCmdFillBuffer",
    c"vkCmdUpdateBuffer",
    c"vkCmdCopyImageToBuffer",
    c"vkCmdCopyBufferToImage",
    c"vkCmdResetQueryPool",
    c"vkCmdWriteTimestamp",
];

const INSTANCE_FUNCTIONS: &[&CStr] = &[
    c"vkGetPhysicalDeviceProperties",
    c"vkGetPhysicalDeviceProperties2",
    c"vkGetPhysicalDeviceFeatures2",
    c"vkGetPhysicalDeviceMemoryProperties",
    c"vkGetPhysicalDeviceMemoryProperties2",
    c"vkGetDeviceProcAddr",
];

/// The caller's device as the library uses it. Shared per `VkDevice` (see [`GpuContext::from_caller`]).
pub struct GpuContext {
    instance: ash::Instance,
    physical: vk::PhysicalDevice,
    device: ash::Device,
    caps: Capabilities,
    // `Option` so that `Drop` can release the allocator's memory blocks before anything else.
    allocator: Mutex<Option<gpu_allocator::vulkan::Allocator>>,
    pub(crate) pipelines: PipelineStore,
}

static CONTEXTS: DeviceRegistry<GpuContext> = DeviceRegistry::new();

impl GpuContext {
    /// Adopt the caller's device. Returns the context already alive for this `VkDevice` when
    /// there is one (so pipelines and per-device data are shared), else creates it.
    ///
    /// `gipa` resolves instance-level functions (`gipa(instance, name)`); `gdpa`, when given,
    /// resolves device-level ones, else the instance's `vkGetDeviceProcAddr` is used.
    ///
    /// # Safety
    /// The handles must be valid, `physical` must belong to `instance`, `device` must have been
    /// created from `physical`, and all of them must outlive the returned context (the NGX caller
    /// guarantees this until `NVSDK_NGX_VULKAN_Shutdown`). Whether the device can run a route
    /// is the route's check (`nr::route`), made before anything is recorded; the caller must
    /// have enabled the features the route names.
    pub unsafe fn from_caller(
        instance: vk::Instance,
        physical: vk::PhysicalDevice,
        device: vk::Device,
        gipa: vk::PFN_vkGetInstanceProcAddr,
        gdpa: Option<vk::PFN_vkGetDeviceProcAddr>,
    ) -> Result<Arc<GpuContext>, GpuError> {
        if instance == vk::Instance::null() {
            return Err(GpuError::NullHandle("VkInstance"));
        }
        if physical == vk::PhysicalDevice::null() {
            return Err(GpuError::NullHandle("VkPhysicalDevice"));
        }
        if device == vk::Device::null() {
            return Err(GpuError::NullHandle("VkDevice"));
        }
        let key = ash::vk::Handle::as_raw(device);
        let ctx = CONTEXTS.get_or_try_insert(key, || {
            Self::create(instance, physical, device, gipa, gdpa).map(Arc::new)
        })?;
        if ctx.instance.handle() != instance || ctx.physical != physical {
            // Same VkDevice value but other parents: the caller destroyed a device while a
            // feature created on it was still alive and got the handle value back.
            return Err(GpuError::invalid(
                "VkDevice",
                "handle is already registered with another instance/physical device (a feature of a destroyed device is still alive)",
            ));
        }
        Ok(ctx)
    }

    unsafe fn create(
        instance: vk::Instance,
        physical: vk::PhysicalDevice,
        device: vk::Device,
        gipa: vk::PFN_vkGetInstanceProcAddr,
        gdpa: Option<vk::PFN_vkGetDeviceProcAddr>,
    ) -> Result<GpuContext, GpuError> {
        for name in INSTANCE_FUNCTIONS {
            if gipa(instance, name.as_ptr()).is_none() {
                return Err(GpuError::MissingFunction(static_name(name)));
            }
        }
        let static_fn = ash::StaticFn {
            get_instance_proc_addr: gipa,
        };
        let ash_instance = ash::Instance::load(&static_fn, instance);
        let caps = Capabilities::query(gipa, &ash_instance, physical);
        let instance_gdpa = ash_instance.fp_v1_0().get_device_proc_addr;
        let resolve = |name: &CStr| -> vk::PFN_vkVoidFunction {
            match gdpa {
                Some(f) => f(device, name.as_ptr()),
                None => instance_gdpa(device, name.as_ptr()),
            }
        };
        for name in DEVICE_FUNCTIONS {
            if resolve(name).is_none() {
                return Err(GpuError::MissingFunction(static_name(name)));
            }
        }
        let ash_device = ash::Device::load_with(
            |name| match resolve(name) {
                Some(f) => f as *const std::ffi::c_void,
                None => std::ptr::null(),
            },
            device,
        );
        let mut debug_settings = gpu_allocator::AllocatorDebugSettings::default();
        // Leaks are reported by our own tests, not logged at shutdown.
        debug_settings.log_leaks_on_shutdown = false;
        let allocator =
            gpu_allocator::vulkan::Allocator::new(&gpu_allocator::vulkan::AllocatorCreateDesc {
                instance: ash_instance.clone(),
                device: ash_device.clone(),
                physical_device: physical,
                debug_settings,
                buffer_device_address: false,
                // Blocks of 64 MiB: the weights (141 MiB) take three, a test a fraction of one.
                allocation_sizes: gpu_allocator::AllocationSizes::new(64 << 20, 64 << 20),
            })
            .map_err(|source| GpuError::Alloc {
                name: "allocator".into(),
                size: 0,
                source,
            })?;
        let pipelines = PipelineStore::new(&ash_device)?;
        Ok(GpuContext {
            instance: ash_instance,
            physical,
            device: ash_device,
            caps,
            allocator: Mutex::new(Some(allocator)),
            pipelines,
        })
    }

    /// The caller's device with the library's function table.
    pub fn device(&self) -> &ash::Device {
        &self.device
    }

    /// The caller's instance with the library's function table.
    pub fn instance(&self) -> &ash::Instance {
        &self.instance
    }

    pub fn physical_device(&self) -> vk::PhysicalDevice {
        self.physical
    }

    pub fn capabilities(&self) -> &Capabilities {
        &self.caps
    }

    /// Run `f` with the allocator locked.
    pub(crate) fn with_allocator<R>(
        &self,
        f: impl FnOnce(&mut gpu_allocator::vulkan::Allocator) -> R,
    ) -> Option<R> {
        let mut guard = self.allocator.lock();
        guard.as_mut().map(f)
    }
}

impl Drop for GpuContext {
    fn drop(&mut self) {
        // SAFETY: every object holding the context (buffers, pipelines users) is gone: they own
        // an `Arc<GpuContext>`. The device belongs to the caller and stays alive.
        unsafe { self.pipelines.destroy(&self.device) };
        self.allocator.lock().take();
    }
}

impl std::fmt::Debug for GpuContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuContext")
            .field("device", &self.device.handle())
            .field("name", &self.caps.device_name)
            .finish()
    }
}

fn static_name(name: &'static CStr) -> &'static str {
    name.to_str().unwrap_or("<non-UTF-8 name>")
}

/// Objects shared by everything created on one `VkDevice`, keyed by the device handle.
///
/// The registry holds only weak references: an entry lives as long as some feature holds the
/// `Arc`, and its resources are freed with the last one (e.g. the weights uploaded once per
/// device). Declare one per kind of shared object as a `static`.
pub struct DeviceRegistry<T> {
    entries: Mutex<Vec<(u64, Weak<T>)>>,
    /// Held by a creation staging a first upload (`super::share`), until it publishes or fails.
    pub(super) first: Mutex<()>,
}

impl<T> DeviceRegistry<T> {
    pub const fn new() -> Self {
        DeviceRegistry {
            entries: parking_lot::const_mutex(Vec::new()),
            first: parking_lot::const_mutex(()),
        }
    }

    /// The live entry for `key` (a `VkDevice` handle as `u64`, possibly combined with more of
    /// the caller's identity), or the one `create` makes. `create` runs under the registry's
    /// lock, so two features on one device never build the object twice.
    pub fn get_or_try_insert<E>(
        &self,
        key: u64,
        create: impl FnOnce() -> Result<Arc<T>, E>,
    ) -> Result<Arc<T>, E> {
        let mut entries = self.entries.lock();
        entries.retain(|(_, w)| w.strong_count() > 0);
        if let Some(live) = entries
            .iter()
            .find(|(k, _)| *k == key)
            .and_then(|(_, w)| w.upgrade())
        {
            return Ok(live);
        }
        let created = create()?;
        entries.push((key, Arc::downgrade(&created)));
        Ok(created)
    }

    /// Makes `value` the entry for `key` unless a live one exists. For objects built outside
    /// the lock and shared only once they are complete (the weights, once their upload is
    /// recorded). Returns the entry in force afterwards.
    pub fn publish(&self, key: u64, value: &Arc<T>) -> Arc<T> {
        let mut entries = self.entries.lock();
        entries.retain(|(_, w)| w.strong_count() > 0);
        if let Some(live) = entries
            .iter()
            .find(|(k, _)| *k == key)
            .and_then(|(_, w)| w.upgrade())
        {
            return live;
        }
        entries.push((key, Arc::downgrade(value)));
        Arc::clone(value)
    }

    /// The live entry for `key`, if any.
    pub fn get(&self, key: u64) -> Option<Arc<T>> {
        self.entries
            .lock()
            .iter()
            .find(|(k, _)| *k == key)
            .and_then(|(_, w)| w.upgrade())
    }

    /// Number of live entries.
    pub fn live(&self) -> usize {
        self.entries
            .lock()
            .iter()
            .filter(|(_, w)| w.strong_count() > 0)
            .count()
    }
}

impl<T> Default for DeviceRegistry<T> {
    fn default() -> Self {
        Self::new()
    }
}
