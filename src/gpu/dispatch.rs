//! The recorder: everything the library writes into the caller's command buffer goes through a
//! [`Recorder`] (bind pipeline and descriptor set, push constants, dispatch, copies, fills;
//! barriers are in `barrier.rs`, timestamps in `timestamps.rs`).
//!
//! Creating a recorder is the one unsafe step: the caller promises the command buffer is in the
//! recording state and belongs to the context's device. Every object a recorded command uses
//! must stay alive until the caller's submission has completed.

use ash::vk;

use super::buffer::BufferBinding;
use super::context::GpuContext;
use super::error::GpuError;
use super::pipeline::ComputePipeline;

/// Records into one caller command buffer.
pub struct Recorder<'a> {
    ctx: &'a GpuContext,
    cmd: vk::CommandBuffer,
    bound: Option<ComputePipeline>,
    dispatches: u32,
}

impl<'a> Recorder<'a> {
    /// # Safety
    /// `cmd` must be a command buffer of `ctx`'s device in the recording state, used by no other
    /// thread while the recorder exists, from a queue family that supports compute.
    pub unsafe fn new(ctx: &'a GpuContext, cmd: vk::CommandBuffer) -> Result<Self, GpuError> {
        if cmd == vk::CommandBuffer::null() {
            return Err(GpuError::NullHandle("VkCommandBuffer"));
        }
        Ok(Recorder {
            ctx,
            cmd,
            bound: None,
            dispatches: 0,
        })
    }

    pub fn context(&self) -> &'a GpuContext {
        self.ctx
    }

    pub fn command_buffer(&self) -> vk::CommandBuffer {
        self.cmd
    }

    pub(crate) fn device(&self) -> &'a ash::Device {
        self.ctx.device()
    }

    /// Dispatches recorded so far.
    pub fn dispatch_count(&self) -> u32 {
        self.dispatches
    }

    /// Bind `pipeline` and its descriptor set (from a [`super::descriptors::DescriptorArena`]).
    pub fn bind(&mut self, pipeline: &ComputePipeline, set: vk::DescriptorSet) {
        let d = self.device();
        // SAFETY: `new` established that `cmd` is recording on this device.
        unsafe {
            if self.bound.map(|b| b.pipeline) != Some(pipeline.pipeline) {
                d.cmd_bind_pipeline(self.cmd, vk::PipelineBindPoint::COMPUTE, pipeline.pipeline);
            }
            if pipeline.bindings > 0 {
                d.cmd_bind_descriptor_sets(
                    self.cmd,
                    vk::PipelineBindPoint::COMPUTE,
                    pipeline.layout,
                    0,
                    &[set],
                    &[],
                );
            }
        }
        self.bound = Some(*pipeline);
    }

    /// Push constants for the bound pipeline, from offset 0.
    pub fn push_bytes(&mut self, bytes: &[u8]) -> Result<(), GpuError> {
        let p = self
            .bound
            .ok_or_else(|| GpuError::invalid("push constants", "no pipeline is bound"))?;
        if bytes.len() % 4 != 0 || bytes.len() as u32 > p.push_bytes {
            return Err(GpuError::invalid(
                "push constants",
                format!(
                    "{} bytes given, the pipeline layout has {} (multiple of 4)",
                    bytes.len(),
                    p.push_bytes
                ),
            ));
        }
        if !bytes.is_empty() {
            // SAFETY: as in `bind`; the range lies inside the layout's push range.
            unsafe {
                self.device().cmd_push_constants(
                    self.cmd,
                    p.layout,
                    vk::ShaderStageFlags::COMPUTE,
                    0,
                    bytes,
                )
            };
        }
        Ok(())
    }

    /// Push constants given as 32-bit words.
    pub fn push_words(&mut self, words: &[u32]) -> Result<(), GpuError> {
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_ne_bytes()).collect();
        self.push_bytes(&bytes)
    }

    /// Dispatch `groups` workgroups with the bound pipeline.
    pub fn dispatch(&mut self, groups: [u32; 3]) -> Result<(), GpuError> {
        if self.bound.is_none() {
            return Err(GpuError::invalid("dispatch", "no pipeline is bound"));
        }
        let max = self.ctx.capabilities().max_compute_work_group_count;
        if groups.iter().zip(max.iter()).any(|(g, m)| g > m) {
            return Err(GpuError::invalid(
                "dispatch",
                format!("{groups:?} workgroups exceed maxComputeWorkGroupCount {max:?}"),
            ));
        }
        if groups.contains(&0) {
            return Ok(());
        }
        // SAFETY: as in `bind`.
        unsafe {
            self.device()
                .cmd_dispatch(self.cmd, groups[0], groups[1], groups[2])
        };
        self.dispatches += 1;
        Ok(())
    }

    /// `bind` + `push_bytes` + `dispatch` in one call.
    pub fn run(
        &mut self,
        pipeline: &ComputePipeline,
        set: vk::DescriptorSet,
        push: &[u8],
        groups: [u32; 3],
    ) -> Result<(), GpuError> {
        self.bind(pipeline, set);
        self.push_bytes(push)?;
        self.dispatch(groups)
    }

    /// Copy `size` bytes between buffers (a transfer; add a barrier before compute reads it).
    pub fn copy(
        &mut self,
        src: BufferBinding,
        dst: BufferBinding,
        size: u64,
    ) -> Result<(), GpuError> {
        if size > src.range || size > dst.range {
            return Err(GpuError::invalid(
                "buffer copy",
                format!(
                    "{size} bytes exceed the source ({}) or destination ({}) range",
                    src.range, dst.range
                ),
            ));
        }
        if size == 0 {
            return Ok(());
        }
        let region = vk::BufferCopy {
            src_offset: src.offset,
            dst_offset: dst.offset,
            size,
        };
        // SAFETY: as in `bind`; the ranges were checked when the bindings were made.
        unsafe {
            self.device()
                .cmd_copy_buffer(self.cmd, src.buffer, dst.buffer, &[region])
        };
        Ok(())
    }

    /// Copy `src` into `dst`: as many bytes as the smaller of the two ranges holds (a transfer;
    /// add a barrier before compute reads it). Cannot fail: bindings are checked when made.
    pub fn copy_all(&mut self, src: BufferBinding, dst: BufferBinding) {
        let size = src.range.min(dst.range);
        if size == 0 {
            return;
        }
        let region = vk::BufferCopy {
            src_offset: src.offset,
            dst_offset: dst.offset,
            size,
        };
        // SAFETY: as in `bind`; both ranges were checked against their buffers when the
        // bindings were made, and `size` lies inside both.
        unsafe {
            self.device()
                .cmd_copy_buffer(self.cmd, src.buffer, dst.buffer, &[region])
        };
    }

    /// Fill the whole 4-byte words of `dst` with zero (a transfer). Cannot fail: a range that
    /// does not start or end on a word boundary is narrowed to the words inside it (whole
    /// buffers never need that).
    pub fn zero_words(&mut self, dst: BufferBinding) {
        let start = dst.offset.next_multiple_of(4);
        let end = (dst.offset + dst.range) & !3;
        if end <= start {
            return;
        }
        // SAFETY: as in `bind`; [start, end) lies inside the checked binding and is 4-aligned.
        unsafe {
            self.device()
                .cmd_fill_buffer(self.cmd, dst.buffer, start, end - start, 0)
        };
    }

    /// Fill a buffer range with a repeated 32-bit word (offset and range multiples of 4).
    pub fn fill(&mut self, dst: BufferBinding, word: u32) -> Result<(), GpuError> {
        if dst.offset % 4 != 0 || dst.range % 4 != 0 {
            return Err(GpuError::invalid(
                "buffer fill",
                format!(
                    "offset {} and size {} must be multiples of 4",
                    dst.offset, dst.range
                ),
            ));
        }
        if dst.range == 0 {
            return Ok(());
        }
        // SAFETY: as in `bind`.
        unsafe {
            self.device()
                .cmd_fill_buffer(self.cmd, dst.buffer, dst.offset, dst.range, word)
        };
        Ok(())
    }
}
