//! Optional GPU timing: a timestamp query pool whose marks carry stage labels. `mark` writes a
//! timestamp after all earlier work; `read` (non-blocking) returns the time between consecutive
//! marks, labelled with the later mark's label.

use std::sync::Arc;

use ash::vk;

use super::context::GpuContext;
use super::dispatch::Recorder;
use super::error::{GpuError, VkContext};

/// Time spent in one labelled stage.
#[derive(Clone, Debug, PartialEq)]
pub struct StageTime {
    pub label: String,
    pub ms: f64,
}

/// A pool of `capacity` timestamps with labels.
pub struct TimestampPool {
    ctx: Arc<GpuContext>,
    pool: vk::QueryPool,
    capacity: u32,
    labels: Vec<String>,
    period_ns: f64,
}

impl TimestampPool {
    /// `Ok(None)` when the device has no compute timestamps.
    pub fn new(ctx: &Arc<GpuContext>, capacity: u32) -> Result<Option<Self>, GpuError> {
        let caps = ctx.capabilities();
        if !caps.timestamps {
            return Ok(None);
        }
        if capacity < 2 {
            return Err(GpuError::invalid(
                "timestamp pool",
                "needs at least 2 queries",
            ));
        }
        let info = vk::QueryPoolCreateInfo::default()
            .query_type(vk::QueryType::TIMESTAMP)
            .query_count(capacity);
        // SAFETY: valid create info on the caller's device.
        let pool =
            unsafe { ctx.device().create_query_pool(&info, None) }.vk("vkCreateQueryPool")?;
        Ok(Some(TimestampPool {
            ctx: Arc::clone(ctx),
            pool,
            capacity,
            labels: Vec::new(),
            period_ns: caps.timestamp_period_ns as f64,
        }))
    }

    /// Reset the pool (recorded) and forget earlier labels; do this once per frame before the
    /// first mark.
    pub fn reset(&mut self, rec: &mut Recorder<'_>) {
        // SAFETY: the recorder's command buffer is recording on this device.
        unsafe {
            self.ctx.device().cmd_reset_query_pool(
                rec.command_buffer(),
                self.pool,
                0,
                self.capacity,
            )
        };
        self.labels.clear();
    }

    /// Write a timestamp once all earlier commands have completed.
    pub fn mark(&mut self, rec: &mut Recorder<'_>, label: &str) -> Result<(), GpuError> {
        let index = self.labels.len() as u32;
        if index >= self.capacity {
            return Err(GpuError::invalid(
                "timestamp pool",
                format!("all {} queries are used", self.capacity),
            ));
        }
        // SAFETY: as in `reset`; the query was reset earlier in this command buffer.
        unsafe {
            self.ctx.device().cmd_write_timestamp(
                rec.command_buffer(),
                vk::PipelineStageFlags::BOTTOM_OF_PIPE,
                self.pool,
                index,
            )
        };
        self.labels.push(label.to_owned());
        Ok(())
    }

    /// Stage times, or `None` while the results are not available yet.
    pub fn read(&self) -> Result<Option<Vec<StageTime>>, GpuError> {
        let n = self.labels.len();
        if n < 2 {
            return Ok(Some(Vec::new()));
        }
        let mut ticks = vec![0u64; n];
        // SAFETY: the queries 0..n were written by `mark`.
        let got = unsafe {
            self.ctx.device().get_query_pool_results(
                self.pool,
                0,
                &mut ticks,
                vk::QueryResultFlags::TYPE_64,
            )
        };
        match got {
            Ok(()) => {}
            Err(vk::Result::NOT_READY) => return Ok(None),
            Err(result) => {
                return Err(GpuError::Vk {
                    call: "vkGetQueryPoolResults",
                    result,
                })
            }
        }
        Ok(Some(
            (1..n)
                .map(|i| StageTime {
                    label: self.labels[i].clone(),
                    ms: ticks[i].wrapping_sub(ticks[i - 1]) as f64 * self.period_ns * 1e-6,
                })
                .collect(),
        ))
    }
}

impl Drop for TimestampPool {
    fn drop(&mut self) {
        // SAFETY: the owner guarantees no pending work uses the pool.
        unsafe { self.ctx.device().destroy_query_pool(self.pool, None) };
    }
}
