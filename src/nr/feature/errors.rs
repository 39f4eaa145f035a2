//! How failures of the GPU layer and the recorder become feature errors: running out of memory
//! is [`FeatureError::OutOfGpuMemory`], everything else the device or driver refused is
//! [`FeatureError::Platform`], with the message naming the call or object.

use ash::vk;

use crate::feature::FeatureError;
use crate::gpu::GpuError;
use crate::nr::record::RecordError;

fn out_of_memory(result: vk::Result) -> bool {
    result == vk::Result::ERROR_OUT_OF_DEVICE_MEMORY
        || result == vk::Result::ERROR_OUT_OF_HOST_MEMORY
        || result == vk::Result::ERROR_OUT_OF_POOL_MEMORY
}

/// A GPU-layer error as an NGX error.
pub fn gpu_error(e: GpuError) -> FeatureError {
    let oom = match &e {
        GpuError::Vk { result, .. } => out_of_memory(*result),
        GpuError::Alloc { source, .. } => {
            matches!(source, gpu_allocator::AllocationError::OutOfMemory)
        }
        _ => false,
    };
    if oom {
        FeatureError::OutOfGpuMemory(e.to_string())
    } else {
        FeatureError::Platform(e.to_string())
    }
}

/// A recorder error as an NGX error.
pub fn record_error(e: RecordError) -> FeatureError {
    match e {
        RecordError::Gpu(g) => gpu_error(g),
        other => FeatureError::Platform(other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_exhaustion_is_its_own_code() {
        let e = gpu_error(GpuError::Vk {
            call: "vkAllocateMemory",
            result: vk::Result::ERROR_OUT_OF_DEVICE_MEMORY,
        });
        assert!(matches!(e, FeatureError::OutOfGpuMemory(_)), "{e}");
        assert!(e.to_string().contains("vkAllocateMemory"), "{e}");
        let e = gpu_error(GpuError::MissingCapabilities {
            device: "llvmpipe".into(),
            route: "exact",
            missing: vec!["shaderInt8".into()],
        });
        assert!(matches!(e, FeatureError::Platform(_)), "{e}");
        assert!(e.to_string().contains("shaderInt8"), "{e}");
        assert!(e.to_string().contains("the exact route"), "{e}");
        let e = record_error(RecordError::Weights("block 3".into()));
        assert!(matches!(e, FeatureError::Platform(_)), "{e}");
    }
}
