//! The per-frame values the frame stages read (push constants on the GPU).

/// One frame's constants.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FrameConstants {
    /// Jitter offset in render pixels: render pixel i was sampled at `i + 0.5 + jitter`.
    pub jitter: [f32; 2],
    /// `MV.Scale`: motion vectors (guides' motion lanes) times this are render pixels,
    /// previous position minus current.
    pub mv_scale: [f32; 2],
    /// `DLSS.Pre.Exposure`: the colour was multiplied by it (1 when not given).
    pub pre_exposure: f32,
    /// `DLSS.Exposure.Scale` (1 when not given).
    pub exposure_scale: f32,
    /// The exposure texture's value, if the caller gave one and auto-exposure is off.
    pub exposure_value: Option<f32>,
    /// GPU route only: the exposure value is the f32 word of the route's exposure input buffer
    /// (`GpuFrame::exposure_input`: the caller's exposure texture, imported on the device),
    /// not `exposure_value`. The CPU reference never sets it: it is given that texel's decoded
    /// value as `exposure_value`, the same value by the same decode (`numerics::normalized`).
    pub exposure_on_device: bool,
    /// Whether the previous output may be used (not the first frame, not Reset).
    pub history_valid: bool,
    /// Frames since creation: picks the window shift (`rr::geometry::shift`).
    pub frame_index: u64,
}

impl Default for FrameConstants {
    fn default() -> Self {
        FrameConstants {
            jitter: [0.0; 2],
            mv_scale: [1.0; 2],
            pre_exposure: 1.0,
            exposure_scale: 1.0,
            exposure_value: None,
            exposure_on_device: false,
            history_valid: false,
            frame_index: 0,
        }
    }
}
