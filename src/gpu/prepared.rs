//! [`Dispatch`]: a kernel launch prepared once (pipeline, descriptor set, push constants, grid)
//! and recorded any number of times. Preparing every launch of a schedule at creation means a
//! frame's recording allocates nothing and the descriptor sets never change, so any number of
//! recordings may be pending on the GPU at once.

use ash::vk;

use super::dispatch::Recorder;
use super::error::GpuError;
use super::pipeline::ComputePipeline;

/// A kernel launch prepared once, possibly followed by a second launch that reads the first's
/// results (e.g. the sum of a split-K GEMM).
#[derive(Clone, Debug)]
pub struct Dispatch {
    /// The pipeline.
    pub pipeline: ComputePipeline,
    /// Its descriptor set (bindings fixed for the life of the set's arena).
    pub set: vk::DescriptorSet,
    /// Push-constant bytes.
    pub push: Vec<u8>,
    /// Workgroups.
    pub groups: [u32; 3],
    /// Recorded after this one, behind a compute->compute barrier.
    pub then: Option<Box<Dispatch>>,
}

impl Dispatch {
    /// Bind, push and dispatch into `rec` (no barrier before: the caller orders dispatches; a
    /// barrier between this launch and [`Dispatch::then`]).
    pub fn record(&self, rec: &mut Recorder<'_>) -> Result<(), GpuError> {
        rec.run(&self.pipeline, self.set, &self.push, self.groups)?;
        if let Some(next) = &self.then {
            rec.compute_to_compute();
            next.record(rec)?;
        }
        Ok(())
    }
}
