//! Buffers on the caller's device: device-local storage buffers, host-visible staging and
//! readback buffers (gpu-allocator), and [`UploadBatch`], which records uploads into a caller
//! command buffer.
//!
//! NGX hands `CreateFeature` a command buffer, so uploads (weights, zero fills) are recorded into
//! it: the data goes to staging buffers owned by the batch, copy commands go into the command
//! buffer. The batch must outlive the caller's submission; the feature keeps it and calls
//! [`UploadBatch::release`] once it knows the GPU is past it (the next evaluate on the same
//! queue timeline, or feature release).

use std::sync::Arc;

use ash::vk;
use gpu_allocator::vulkan::{Allocation, AllocationCreateDesc, AllocationScheme};
use gpu_allocator::MemoryLocation;

use super::context::GpuContext;
use super::dispatch::Recorder;
use super::error::{GpuError, VkContext};

/// Where a buffer's memory lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemoryKind {
    /// Device-local, not mapped: activations, weights, workspaces.
    DeviceLocal,
    /// Host-visible, written by the CPU, read by the GPU (staging).
    Upload,
    /// Host-visible and cached where possible, written by the GPU, read by the CPU.
    Readback,
}

/// A range of a buffer, as bound to a descriptor or used by a copy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BufferBinding {
    pub buffer: vk::Buffer,
    pub offset: u64,
    pub range: u64,
}

/// A buffer and its memory; both are freed on drop.
pub struct GpuBuffer {
    ctx: Arc<GpuContext>,
    buffer: vk::Buffer,
    allocation: Option<Allocation>,
    size: u64,
    kind: MemoryKind,
    name: String,
}

impl GpuBuffer {
    /// Create a buffer usable as storage buffer and as transfer source and destination.
    pub fn new(
        ctx: &Arc<GpuContext>,
        name: &str,
        size: u64,
        kind: MemoryKind,
    ) -> Result<Self, GpuError> {
        if size == 0 {
            return Err(GpuError::invalid(format!("buffer `{name}`"), "size 0"));
        }
        let device = ctx.device();
        let info = vk::BufferCreateInfo::default()
            .size(size)
            .usage(
                vk::BufferUsageFlags::STORAGE_BUFFER
                    | vk::BufferUsageFlags::TRANSFER_SRC
                    | vk::BufferUsageFlags::TRANSFER_DST,
            )
            .sharing_mode(vk::SharingMode::EXCLUSIVE);
        // SAFETY: valid create info on the caller's live device.
        let buffer = unsafe { device.create_buffer(&info, None) }.vk("vkCreateBuffer")?;
        // SAFETY: `buffer` was just created on this device and not destroyed.
        let requirements = unsafe { device.get_buffer_memory_requirements(buffer) };
        let location = match kind {
            MemoryKind::DeviceLocal => MemoryLocation::GpuOnly,
            MemoryKind::Upload => MemoryLocation::CpuToGpu,
            MemoryKind::Readback => MemoryLocation::GpuToCpu,
        };
        let allocated = ctx.with_allocator(|a| {
            a.allocate(&AllocationCreateDesc {
                name,
                requirements,
                location,
                linear: true,
                allocation_scheme: AllocationScheme::GpuAllocatorManaged,
            })
        });
        let allocation = match allocated {
            Some(Ok(a)) => a,
            Some(Err(source)) => {
                // SAFETY: `buffer` was created on this device above, has no memory bound and
                // was never handed out or used by any submitted work.
                unsafe { device.destroy_buffer(buffer, None) };
                return Err(GpuError::Alloc {
                    name: name.to_owned(),
                    size,
                    source,
                });
            }
            None => {
                // SAFETY: `buffer` was created on this device above, has no memory bound and
                // was never handed out or used by any submitted work.
                unsafe { device.destroy_buffer(buffer, None) };
                return Err(GpuError::invalid(
                    format!("buffer `{name}`"),
                    "the context is shutting down",
                ));
            }
        };
        if let Err(result) =
            // SAFETY: the allocation was made for this buffer's own requirements, from this
            // device's allocator, and `buffer` has no memory bound yet.
            unsafe {
                device.bind_buffer_memory(buffer, allocation.memory(), allocation.offset())
            }
        {
            // SAFETY: `buffer` was created on this device above and was never handed out or
            // used by any submitted work; its memory is freed separately just below.
            unsafe { device.destroy_buffer(buffer, None) };
            let _ = ctx.with_allocator(|a| a.free(allocation));
            return Err(GpuError::Vk {
                call: "vkBindBufferMemory",
                result,
            });
        }
        Ok(GpuBuffer {
            ctx: Arc::clone(ctx),
            buffer,
            allocation: Some(allocation),
            size,
            kind,
            name: name.to_owned(),
        })
    }

    pub fn handle(&self) -> vk::Buffer {
        self.buffer
    }

    pub fn size(&self) -> u64 {
        self.size
    }

    pub fn kind(&self) -> MemoryKind {
        self.kind
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn context(&self) -> &Arc<GpuContext> {
        &self.ctx
    }

    /// The whole buffer.
    pub fn binding(&self) -> BufferBinding {
        BufferBinding {
            buffer: self.buffer,
            offset: 0,
            range: self.size,
        }
    }

    /// `len` bytes from `offset`, checked against the size.
    pub fn range(&self, offset: u64, len: u64) -> Result<BufferBinding, GpuError> {
        match offset.checked_add(len) {
            Some(end) if end <= self.size => Ok(BufferBinding {
                buffer: self.buffer,
                offset,
                range: len,
            }),
            _ => Err(GpuError::invalid(
                format!("buffer `{}`", self.name),
                format!("range {offset}+{len} exceeds its {} bytes", self.size),
            )),
        }
    }

    fn mapped(&self, offset: u64, len: usize) -> Result<*mut u8, GpuError> {
        self.range(offset, len as u64)?;
        // Device-local memory may happen to be mapped (lavapipe, ReBAR); never rely on it.
        if self.kind == MemoryKind::DeviceLocal {
            return Err(GpuError::invalid(
                format!("buffer `{}`", self.name),
                "is device-local, not host-visible",
            ));
        }
        let ptr = self
            .allocation
            .as_ref()
            .and_then(|a| a.mapped_ptr())
            .ok_or_else(|| {
                GpuError::invalid(format!("buffer `{}`", self.name), "is not host-visible")
            })?;
        // SAFETY: the range lies inside the mapped allocation (checked above).
        Ok(unsafe { ptr.as_ptr().cast::<u8>().add(offset as usize) })
    }

    /// Write bytes into a host-visible buffer. gpu-allocator maps host memory coherent, so no
    /// flush is needed.
    pub fn write(&mut self, offset: u64, data: &[u8]) -> Result<(), GpuError> {
        let dst = self.mapped(offset, data.len())?;
        // SAFETY: `mapped` checked the range; `&mut self` excludes concurrent CPU access.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), dst, data.len()) };
        Ok(())
    }

    /// Read bytes from a host-visible buffer (after the GPU work writing it has completed).
    pub fn read(&self, offset: u64, out: &mut [u8]) -> Result<(), GpuError> {
        let src = self.mapped(offset, out.len())?;
        // SAFETY: as in `write`.
        unsafe { std::ptr::copy_nonoverlapping(src, out.as_mut_ptr(), out.len()) };
        Ok(())
    }

    /// Read the whole buffer.
    pub fn read_all(&self) -> Result<Vec<u8>, GpuError> {
        let mut v = vec![0u8; self.size as usize];
        self.read(0, &mut v)?;
        Ok(v)
    }
}

impl Drop for GpuBuffer {
    fn drop(&mut self) {
        // SAFETY: the owner guarantees no pending GPU work uses the buffer (see module doc).
        unsafe { self.ctx.device().destroy_buffer(self.buffer, None) };
        if let Some(a) = self.allocation.take() {
            // A failed free leaks at worst; the allocator frees all blocks with the context.
            let _ = self.ctx.with_allocator(|al| al.free(a));
        }
    }
}

impl std::fmt::Debug for GpuBuffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuBuffer")
            .field("name", &self.name)
            .field("size", &self.size)
            .field("kind", &self.kind)
            .finish()
    }
}

/// Uploads recorded into a caller command buffer; owns the staging memory until released.
///
/// An upload is staged first ([`UploadBatch::stage`]: the staging buffer is allocated and
/// written, which may fail) and recorded later ([`UploadBatch::record`], which cannot fail), so
/// that a caller can do everything fallible before it records anything (a failed feature
/// creation then leaves the caller's command buffer untouched and frees what it made).
/// [`UploadBatch::upload`] does both at once.
pub struct UploadBatch {
    ctx: Arc<GpuContext>,
    staging: Vec<GpuBuffer>,
    /// Where each staging buffer goes (same index; the binding's range is the staging size).
    targets: Vec<BufferBinding>,
    /// How many of `staging` have had their copy recorded.
    recorded: usize,
    bytes: u64,
}

impl UploadBatch {
    pub fn new(ctx: &Arc<GpuContext>) -> Self {
        UploadBatch {
            ctx: Arc::clone(ctx),
            staging: Vec::new(),
            targets: Vec::new(),
            recorded: 0,
            bytes: 0,
        }
    }

    /// Stage a copy of `data` into `dst` at `offset`: the staging buffer is allocated and
    /// written now, the copy is recorded by the next [`UploadBatch::record`].
    pub fn stage(&mut self, dst: &GpuBuffer, offset: u64, data: &[u8]) -> Result<(), GpuError> {
        if data.is_empty() {
            return Ok(());
        }
        let target = dst.range(offset, data.len() as u64)?;
        let name = format!("staging for `{}`", dst.name());
        let mut staging = GpuBuffer::new(&self.ctx, &name, data.len() as u64, MemoryKind::Upload)?;
        staging.write(0, data)?;
        self.bytes += data.len() as u64;
        self.staging.push(staging);
        self.targets.push(target);
        Ok(())
    }

    /// Record the copies of every upload staged since the last call. Follow the last upload
    /// with [`Recorder::transfer_to_compute`] before kernels read the data. Returns how many
    /// copies were recorded.
    pub fn record(&mut self, rec: &mut Recorder<'_>) -> usize {
        let from = self.recorded;
        for (staging, target) in self.staging[from..].iter().zip(&self.targets[from..]) {
            // The target's range is the staging buffer's size (`stage` made it so).
            rec.copy_all(staging.binding(), *target);
        }
        self.recorded = self.staging.len();
        self.recorded - from
    }

    /// Record a copy of `data` into `dst` at `offset` (stage and record at once). Follow the last
    /// upload with [`Recorder::transfer_to_compute`] before kernels read the data.
    pub fn upload(
        &mut self,
        rec: &mut Recorder<'_>,
        dst: &GpuBuffer,
        offset: u64,
        data: &[u8],
    ) -> Result<(), GpuError> {
        self.stage(dst, offset, data)?;
        self.record(rec);
        Ok(())
    }

    /// Bytes currently held in staging memory.
    pub fn staged_bytes(&self) -> u64 {
        self.bytes
    }

    /// Free the staging buffers. Call only after the submission of the command buffer the
    /// uploads were recorded into has completed (or was never submitted).
    pub fn release(&mut self) {
        self.staging.clear();
        self.targets.clear();
        self.recorded = 0;
        self.bytes = 0;
    }
}
