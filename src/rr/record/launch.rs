//! One prepared kernel launch of RR's GPU route and the grids it runs on: a launch is completed
//! at record time from the frame's constants (the window shift, the frame stages' inputs).

use crate::gpu::{ComputePipeline, GpuContext, GpuError, Recorder};
use crate::rr::frame::FrameConstants;
use crate::rr::geometry::{self, WINDOW};
use crate::rr::layers::Side;

/// Invocations per workgroup of every RR kernel (the exposure's: 256).
pub(super) const GROUP: u32 = 64;

/// The frame-dependent part of a launch.
#[derive(Clone, Copy, Debug)]
pub(super) enum Frame {
    /// Push constants and grid fixed at preparation.
    Fixed,
    /// The window attention: the shift (and so the window grid) follows the frame index. A
    /// launch of one band (`super::bands`) runs only in frames of its shift y.
    Attention {
        w: u32,
        h: u32,
        heads: u32,
        side: Side,
        band: Option<WindowBand>,
    },
    /// The exposure stage's two passes (`groups` workgroups): where the exposure value comes
    /// from (none, pushed, or the exposure input buffer), the value, scale and pre-exposure.
    Exposure { groups: u64 },
    /// Reprojection, the input features and the output: the fixed words, then jitter and MV
    /// scale, then (`valid`) whether history is usable. `banded`: the launch binds the render
    /// rows of a vertical jitter within `bands::MAX_JITTER` (a larger one is refused).
    Stage { valid: bool, banded: bool },
}

/// One band of the window attention at one window shift y: its first window row and window
/// rows, and the level's token row each binding starts at (keys `u`, `v`; queries `out`).
#[derive(Clone, Copy, Debug)]
pub(super) struct WindowBand {
    pub sy: u32,
    pub row0: u32,
    pub rows: u32,
    pub in_row0: u32,
    pub out_row0: u32,
}

/// One kernel launch of an op.
#[derive(Clone, Debug)]
pub struct Launch {
    pub(super) pipeline: ComputePipeline,
    pub(super) set: ash::vk::DescriptorSet,
    pub(super) push: Vec<u32>,
    pub(super) invocations: u64,
    pub(super) frame: Frame,
    /// A later launch of the same op needs this one's results (a barrier between them).
    pub then_barrier: bool,
}

/// A grid of `groups` workgroups within `max` (maxComputeWorkGroupCount): along x, continued
/// along y (the kernels' flat index is `y * x_count + x`, and each checks its bound, so the last
/// row's surplus workgroups do nothing). `None` when x * y cannot hold it.
fn split_grid(groups: u64, max: [u32; 3]) -> Option<[u32; 3]> {
    let gx = groups.clamp(1, max[0].max(1) as u64);
    let gy = groups.div_ceil(gx).max(1);
    (gy <= max[1] as u64).then_some([gx as u32, gy as u32, 1])
}

/// [`split_grid`] on the context's device, refused by name when it does not fit.
pub(super) fn grid(ctx: &GpuContext, groups: u64, what: &str) -> Result<[u32; 3], GpuError> {
    let max = ctx.capabilities().max_compute_work_group_count;
    split_grid(groups, max).ok_or_else(|| {
        GpuError::invalid(
            format!("rr launch `{what}`"),
            format!("{groups} workgroups exceed maxComputeWorkGroupCount {max:?}"),
        )
    })
}

impl Launch {
    /// Whether the launch can run the frame of `c` (a banded output stage binds the render rows
    /// of a vertical jitter within `bands::MAX_JITTER`); callers check every launch of a frame
    /// before recording any.
    pub fn check(&self, c: &FrameConstants, label: &str) -> Result<(), GpuError> {
        // NaN fails the comparison too.
        let jitter_ok = c.jitter[1].abs() <= super::bands::MAX_JITTER;
        match self.frame {
            Frame::Stage { banded: true, .. } if !jitter_ok => Err(GpuError::invalid(
                format!("rr launch `{label}`"),
                format!(
                    "a vertical jitter of {} render pixels: this size runs the output stage in \
                     row bands, which bind the rows of a jitter within ±{}",
                    c.jitter[1],
                    super::bands::MAX_JITTER
                ),
            )),
            _ => Ok(()),
        }
    }

    /// Record the launch for the frame of `c`.
    pub fn record(
        &self,
        rec: &mut Recorder<'_>,
        c: &FrameConstants,
        label: &str,
    ) -> Result<(), GpuError> {
        let fixed = self.invocations.div_ceil(GROUP as u64);
        let (push, groups) = match self.frame {
            Frame::Fixed => (self.push.clone(), fixed),
            Frame::Exposure { groups } => {
                let mut p = self.push.clone();
                // 0: automatic; 1: the value pushed; 2: the exposure input buffer's word.
                let source = if c.exposure_on_device {
                    2
                } else {
                    u32::from(c.exposure_value.is_some())
                };
                p.extend([
                    source,
                    c.exposure_value.unwrap_or(1.0).to_bits(),
                    c.exposure_scale.to_bits(),
                    c.pre_exposure.to_bits(),
                ]);
                (p, groups)
            }
            Frame::Stage { valid, .. } => {
                self.check(c, label)?;
                let mut p = self.push.clone();
                p.extend([
                    c.jitter[0].to_bits(),
                    c.jitter[1].to_bits(),
                    c.mv_scale[0].to_bits(),
                    c.mv_scale[1].to_bits(),
                ]);
                if valid {
                    p.push(u32::from(c.history_valid));
                }
                (p, fixed)
            }
            Frame::Attention {
                w,
                h,
                heads,
                side,
                band,
            } => {
                let s = geometry::shift(c.frame_index, side);
                let wx = (w + s.x).div_ceil(WINDOW);
                let (row0, wy, in_row0, out_row0) = match band {
                    None => (0, (h + s.y).div_ceil(WINDOW), 0, 0),
                    Some(b) if b.sy == s.y => (b.row0, b.rows, b.in_row0, b.out_row0),
                    // The other shift's launch of this band.
                    Some(_) => return Ok(()),
                };
                (
                    vec![w, h, heads, s.x, s.y, wx, wx * wy, row0, in_row0, out_row0],
                    (wx * wy * heads) as u64,
                )
            }
        };
        let groups = grid(rec.context(), groups, label)?;
        rec.bind(&self.pipeline, self.set);
        rec.push_words(&push)?;
        rec.dispatch(groups)
    }
}

#[cfg(test)]
mod tests {
    use super::split_grid;

    #[test]
    fn grids_continue_along_y_and_refuse_what_cannot_fit() {
        let max = [65_535, 65_535, 65_535];
        assert_eq!(split_grid(0, max), Some([1, 1, 1]));
        assert_eq!(split_grid(1, max), Some([1, 1, 1]));
        assert_eq!(split_grid(65_535, max), Some([65_535, 1, 1]));
        assert_eq!(split_grid(65_536, max), Some([65_535, 2, 1]));
        // 3840x2160 output pixels in workgroups of 64.
        let g = split_grid(129_600, max).unwrap();
        assert!(g[0] as u64 * g[1] as u64 >= 129_600 && g[1] == 2);
        assert_eq!(split_grid(65_535 * 65_535, max), Some([65_535, 65_535, 1]));
        assert_eq!(split_grid(65_535 * 65_535 + 1, max), None);
        assert_eq!(split_grid(10, [4, 2, 1]), None);
        assert_eq!(split_grid(8, [4, 2, 1]), Some([4, 2, 1]));
    }
}
