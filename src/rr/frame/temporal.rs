//! RR's temporal state, shared by the CPU frame (`rr::cpu_frame`) and the GPU frame
//! (`rr::gpu_frame`), so both derive a frame's constants by one rule (openngx's own): history is
//! usable from the second frame on, unless the frame is a Reset; a Reset frame still writes
//! history, so the next one blends again; the frame counter counts every frame (Reset does not
//! restart the window-shift cycle).

use super::FrameConstants;

/// Per-frame parameters from the caller.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FrameParams {
    pub jitter: [f32; 2],
    pub mv_scale: [f32; 2],
    pub pre_exposure: f32,
    pub exposure_scale: f32,
    pub exposure_value: Option<f32>,
    pub reset: bool,
}

impl Default for FrameParams {
    fn default() -> Self {
        let c = FrameConstants::default();
        FrameParams {
            jitter: c.jitter,
            mv_scale: c.mv_scale,
            pre_exposure: c.pre_exposure,
            exposure_scale: c.exposure_scale,
            exposure_value: None,
            reset: false,
        }
    }
}

/// The frame counter and whether a previous output exists.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Temporal {
    frame_index: u64,
    history_written: bool,
}

impl Temporal {
    /// The constants the next frame runs with.
    pub fn constants(&self, p: &FrameParams) -> FrameConstants {
        FrameConstants {
            jitter: p.jitter,
            mv_scale: p.mv_scale,
            pre_exposure: p.pre_exposure,
            exposure_scale: p.exposure_scale,
            exposure_value: p.exposure_value,
            exposure_on_device: false,
            history_valid: self.history_written && !p.reset,
            frame_index: self.frame_index,
        }
    }

    /// A frame has run and written its output as the next history.
    pub fn advance(&mut self) {
        self.history_written = true;
        self.frame_index += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn history_from_the_second_frame_unless_reset() {
        let mut t = Temporal::default();
        let p = FrameParams::default();
        let reset = FrameParams { reset: true, ..p };
        let c = t.constants(&p);
        assert!(!c.history_valid);
        assert_eq!(c.frame_index, 0);
        t.advance();
        assert!(t.constants(&p).history_valid);
        assert!(!t.constants(&reset).history_valid);
        t.advance(); // the Reset frame still wrote history
        let c = t.constants(&p);
        assert!(c.history_valid);
        assert_eq!(c.frame_index, 2);
    }
}
