//! The names of DLSS-NR's creation and evaluation parameters (`DLSSNR.*`, nr-network.md §5):
//! the one list, read by the NGX description (`crate::ngx::dlss_nr`), named in the frame's
//! errors and written by the fixtures. Capability keys are the ABI's and live there.

/// Create: width (uint, required).
pub const WIDTH: &str = "DLSSNR.Width";
/// Create: height (uint, required).
pub const HEIGHT: &str = "DLSSNR.Height";
/// Create: scaling ratio (float, must be 1 when given).
pub const SCALING_RATIO: &str = "DLSSNR.ScalingRatio";
/// Create: preset hint (uint, only 0).
pub const PRESET: &str = "DLSSNR.Hint.Render.Preset";
/// Create: quality mode (int, informational: NR runs at 1:1).
pub const PERF_QUALITY_VALUE: &str = "PerfQualityValue";
/// Create: node mask (uint, 0 or 1).
pub const CREATION_NODE_MASK: &str = "CreationNodeMask";
/// Create: node mask (uint, 0 or 1).
pub const VISIBILITY_NODE_MASK: &str = "VisibilityNodeMask";

/// Create (openngx's own): which route the feature runs (uint: 0 auto, the default; 1 exact;
/// 2 tensor). Without it `OPENNGX_ROUTE` (auto|exact|tensor) decides.
pub const ROUTE: &str = "OpenNGX.Route";
/// Create (openngx's own): 1 when the application enabled the tensor route's device features
/// (`VK_KHR_cooperative_matrix` with `cooperativeMatrix`, and `vulkanMemoryModel`); without it
/// `OPENNGX_TENSOR_FEATURES=1` says so. The library cannot read a device's enabled features.
pub const TENSOR_FEATURES_ENABLED: &str = "OpenNGX.TensorFeaturesEnabled";
/// Evaluate: colour input (resource, required).
pub const COLOR: &str = "DLSSNR.Color";
/// Evaluate: output (resource, required).
pub const OUTPUT: &str = "DLSSNR.Output";
/// Evaluate: motion vectors (resource, optional).
pub const MVEC: &str = "DLSSNR.MVec";
/// Evaluate: motion scale X (float).
pub const MVEC_SCALE_X: &str = "DLSSNR.MVecScaleX";
/// Evaluate: motion scale Y (float).
pub const MVEC_SCALE_Y: &str = "DLSSNR.MVecScaleY";
/// Evaluate: enable (uint).
pub const ENABLED: &str = "DLSSNR.Enabled";
/// Evaluate: history reset (uint).
pub const RESET: &str = "DLSSNR.Reset";
/// Evaluate: auto mask (uint).
pub const USE_AUTO_MASK: &str = "DLSSNR.UseAutoMask";
/// Evaluate: intensity (float, 0..=1).
pub const INTENSITY: &str = "DLSSNR.Intensity";
/// Evaluate: conditioning (float).
pub const LOCAL_TONE_STRENGTH: &str = "DLSSNR.LocalToneStrength";
/// Evaluate: conditioning (float).
pub const LOCAL_STRUCTURE_STRENGTH: &str = "DLSSNR.LocalStructureStrength";
/// Evaluate: conditioning (float, -1 = follow local structure).
pub const SKIN_STRUCTURE_STRENGTH: &str = "DLSSNR.SkinStructureStrength";
/// Evaluate: conditioning (float, optional; no lane uses it).
pub const GLOBAL_TONE_STRENGTH: &str = "DLSSNR.GlobalToneStrength";
/// Evaluate: style (uint, only 0).
pub const STYLE: &str = "DLSSNR.Style";
/// Evaluate: UI correction (uint, only 0).
pub const UI_CORRECTION: &str = "DLSSNR.UICorrection";
/// Evaluate: depth convention (read and ignored: there is no depth input).
pub const DEPTH_INVERTED: &str = "DLSSNR.DepthInverted";
/// Subrect keys are `<prefix>BaseX`, `<prefix>BaseY`, `<prefix>Width`, `<prefix>Height`.
pub const COLOR_SUBRECT: &str = "DLSSNR.ColorSubrect";
/// Subrect prefix of the output.
pub const OUTPUT_SUBRECT: &str = "DLSSNR.OutputSubrect";
/// Subrect prefix of the motion vectors.
pub const MVEC_SUBRECT: &str = "DLSSNR.MVecSubrect";
/// Resources of the native feature that this implementation does not take; a frame that sets
/// one is refused.
pub const UNSUPPORTED_RESOURCES: [&str; 6] = [
    "DLSSNR.Depth",
    "DLSSNR.ControlMask",
    "DLSSNR.UI",
    "DLSSNR.UIAlpha",
    "DLSSNR.Backbuffer",
    "DLSSNR.BidirectionalDistortionField",
];
