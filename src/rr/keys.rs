//! The names of Ray Reconstruction's (DLSS-D, feature 13) creation and evaluation parameters:
//! the one list, read by the NGX description (`crate::ngx::dlss_d`), named in the typed
//! parameters' errors (`rr::feature`) and written by the fixtures and tests. The names and the
//! setter each one is written with are NVIDIA's helper functions' (spec ngx-abi.md §7.5
//! `NGX_VULKAN_CREATE_DLSSD_EXT1`, §7.6 `NGX_VULKAN_EVALUATE_DLSSD_EXT`) and the guide names of
//! rr-network.md §12.1. Capability keys are the ABI's and live in `crate::ngx::dlss_d`.
//!
//! Types in the comments: UI = `SetUI`, I = `SetI`, F = `SetF`, VP = `SetVoidPointer` (on
//! Vulkan every resource is an `NVSDK_NGX_Resource_VK*`, the matrices a `float[16]`).

// ---------------------------------------------------------------------------------------------
// Creation (§7.5 = §7.3's keys plus the DLSSD ones)

/// Create: render width (UI, required).
pub const WIDTH: &str = "Width";
/// Create: render height (UI, required).
pub const HEIGHT: &str = "Height";
/// Create: output width (UI, required).
pub const OUT_WIDTH: &str = "OutWidth";
/// Create: output height (UI, required).
pub const OUT_HEIGHT: &str = "OutHeight";
/// Create: quality mode (I, `NVSDK_NGX_PerfQuality_Value`); picks the preset hint key.
pub const PERF_QUALITY_VALUE: &str = "PerfQualityValue";
/// Create: `NVSDK_NGX_DLSS_Feature_Flags` (I).
pub const CREATE_FLAGS: &str = "DLSS.Feature.Create.Flags";
/// Create: output sub-rectangles enabled (I, 0/1).
pub const ENABLE_OUTPUT_SUBRECTS: &str = "DLSS.Enable.Output.Subrects";
/// Create: denoise mode (I; the helper always writes 1 = DLUnified).
pub const DENOISE_MODE: &str = "DLSS.Denoise.Mode";
/// Create: roughness mode (UI; 0 unpacked, 1 packed into the normals' w).
pub const ROUGHNESS_MODE: &str = "DLSS.Roughness.Mode";
/// Create: depth type (UI; 0 linear view depth, 1 hardware depth).
pub const USE_HW_DEPTH: &str = "DLSS.Use.HW.Depth";
/// Create: node mask (UI, 0 or 1).
pub const CREATION_NODE_MASK: &str = "CreationNodeMask";
/// Create: node mask (UI, 0 or 1).
pub const VISIBILITY_NODE_MASK: &str = "VisibilityNodeMask";
/// Create: the preset hint keys are `<prefix><mode>` (UI), mode from [`PRESET_MODES`].
pub const PRESET_PREFIX: &str = "RayReconstruction.Hint.Render.Preset.";
/// The quality modes' names in the preset hint keys, indexed by `PerfQualityValue`
/// (0 Performance, 1 Balanced, 2 Quality, 3 UltraPerformance, 4 UltraQuality, 5 DLAA).
pub const PRESET_MODES: [&str; 6] = [
    "Performance",
    "Balanced",
    "Quality",
    "UltraPerformance",
    "UltraQuality",
    "DLAA",
];
/// Create: declared by the SDK, never set by its helpers; read and carried.
pub const USE_FOLDED_NETWORK: &str = "DLSS.Use.Folded.Network";

// ---------------------------------------------------------------------------------------------
// Evaluation: the images the network reads (§7.6, §12.1)

/// Evaluate: noisy colour at render size (VP, required).
pub const COLOR: &str = "Color";
/// Evaluate: output at output size, read-write (VP, required).
pub const OUTPUT: &str = "Output";
/// Evaluate: depth (VP, required).
pub const DEPTH: &str = "Depth";
/// Evaluate: motion vectors (VP, required).
pub const MOTION_VECTORS: &str = "MotionVectors";
/// Evaluate: diffuse albedo (VP, required).
pub const DIFFUSE_ALBEDO: &str = "DLSS.Input.DiffuseAlbedo";
/// Evaluate: the diffuse albedo's alias the DLL also accepts (§12.1).
pub const DIFFUSE_ALBEDO_ALIAS: &str = "GBuffer.DiffuseAlbedo";
/// Evaluate: specular albedo (VP, required).
pub const SPECULAR_ALBEDO: &str = "DLSS.Input.SpecularAlbedo";
/// Evaluate: the specular albedo's alias the DLL also accepts (§12.1).
pub const SPECULAR_ALBEDO_ALIAS: &str = "GBuffer.SpecularAlbedo";
/// Evaluate: normals (VP, required).
pub const NORMALS: &str = "GBuffer.Normals";
/// Evaluate: roughness (VP, required unless the roughness mode is packed).
pub const ROUGHNESS: &str = "GBuffer.Roughness";
/// Evaluate: diffuse hit distance (VP, optional).
pub const DIFFUSE_HIT_DISTANCE: &str = "DLSSD.DiffuseHitDistance";
/// Evaluate: specular hit distance (VP, optional).
pub const SPECULAR_HIT_DISTANCE: &str = "DLSSD.SpecularHitDistance";
/// Evaluate: depth-of-field guide (VP, optional; read by preset E).
pub const DEPTH_OF_FIELD_GUIDE: &str = "DLSSD.DepthOfFieldGuide";
/// Evaluate: 1x1 exposure texture, first channel (VP, optional).
pub const EXPOSURE_TEXTURE: &str = "ExposureTexture";

// ---------------------------------------------------------------------------------------------
// Evaluation: sub-rectangle bases (UI; `<prefix>.X`, `<prefix>.Y`)

/// Colour's sub-rectangle base.
pub const COLOR_SUBRECT: &str = "DLSS.Input.Color.Subrect.Base";
/// Depth's sub-rectangle base.
pub const DEPTH_SUBRECT: &str = "DLSS.Input.Depth.Subrect.Base";
/// Motion vectors' sub-rectangle base.
pub const MV_SUBRECT: &str = "DLSS.Input.MV.Subrect.Base";
/// Diffuse albedo's sub-rectangle base.
pub const DIFFUSE_ALBEDO_SUBRECT: &str = "DLSS.Input.DiffuseAlbedo.Subrect.Base";
/// Specular albedo's sub-rectangle base.
pub const SPECULAR_ALBEDO_SUBRECT: &str = "DLSS.Input.SpecularAlbedo.Subrect.Base";
/// Normals' sub-rectangle base (the DLL reads the texture as `GBuffer.Normals`, §12.1).
pub const NORMALS_SUBRECT: &str = "DLSS.Input.Normals.Subrect.Base";
/// Roughness' sub-rectangle base.
pub const ROUGHNESS_SUBRECT: &str = "DLSS.Input.Roughness.Subrect.Base";
/// The output's sub-rectangle base.
pub const OUTPUT_SUBRECT: &str = "DLSS.Output.Subrect.Base";
/// Diffuse hit distance's sub-rectangle base.
pub const DIFFUSE_HIT_DISTANCE_SUBRECT: &str = "DLSSD.DiffuseHitDistance.Subrect.Base";
/// Specular hit distance's sub-rectangle base.
pub const SPECULAR_HIT_DISTANCE_SUBRECT: &str = "DLSSD.SpecularHitDistance.Subrect.Base";
/// Depth-of-field guide's sub-rectangle base.
pub const DEPTH_OF_FIELD_GUIDE_SUBRECT: &str = "DLSSD.DepthOfFieldGuide.Subrect.Base";
/// The current render size (dynamic resolution): `<prefix>.Width`, `<prefix>.Height` (UI).
pub const RENDER_SUBRECT_DIMENSIONS: &str = "DLSS.Render.Subrect.Dimensions";

// ---------------------------------------------------------------------------------------------
// Evaluation: scalars and matrices

/// Jitter X in render pixels (F).
pub const JITTER_X: &str = "Jitter.Offset.X";
/// Jitter Y in render pixels (F).
pub const JITTER_Y: &str = "Jitter.Offset.Y";
/// Motion-vector scale X (F; the helper writes 1 for 0).
pub const MV_SCALE_X: &str = "MV.Scale.X";
/// Motion-vector scale Y (F; the helper writes 1 for 0).
pub const MV_SCALE_Y: &str = "MV.Scale.Y";
/// Reset (I, 1 on a scene cut).
pub const RESET: &str = "Reset";
/// Pre-exposure (F; the helper writes 1 for 0).
pub const PRE_EXPOSURE: &str = "DLSS.Pre.Exposure";
/// Exposure scale (F; the helper writes 1 for 0).
pub const EXPOSURE_SCALE: &str = "DLSS.Exposure.Scale";
/// Indicator X axis inverted (I).
pub const INDICATOR_INVERT_X: &str = "DLSS.Indicator.Invert.X.Axis";
/// Indicator Y axis inverted (I).
pub const INDICATOR_INVERT_Y: &str = "DLSS.Indicator.Invert.Y.Axis";
/// Frame time in milliseconds (F).
pub const FRAME_TIME_DELTA: &str = "FrameTimeDeltaInMsec";
/// Tone-mapper type (UI).
pub const TONEMAPPER_TYPE: &str = "TonemapperType";
/// World-to-view matrix (VP to `float[16]`, optional).
pub const WORLD_TO_VIEW_MATRIX: &str = "WorldToViewMatrix";
/// View-to-clip matrix (VP to `float[16]`, optional).
pub const VIEW_TO_CLIP_MATRIX: &str = "ViewToClipMatrix";
/// Sharpness: SR's, not set by the DLSSD helper; RR has no sharpening (read nowhere).
pub const SHARPNESS: &str = "Sharpness";

/// Inputs the native feature takes but this implementation's network does not read (§7.6,
/// §12.1). A frame that sets one is not refused: the log names it (once per change of the set)
/// and the value is ignored. Each also has a `.Subrect.Base.X/Y`, ignored with it.
pub const IGNORED_RESOURCES: &[&str] = &[
    "DLSSD.ReflectedAlbedo",
    "DLSSD.ColorBeforeParticles",
    "DLSSD.ColorAfterParticles",
    "DLSSD.ColorBeforeTransparency",
    "DLSSD.ColorAfterTransparency",
    "DLSSD.ColorBeforeFog",
    "DLSSD.ColorAfterFog",
    "DLSSD.ScreenSpaceSubsurfaceScatteringGuide",
    "DLSSD.ColorBeforeScreenSpaceSubsurfaceScattering",
    "DLSSD.ColorAfterScreenSpaceSubsurfaceScattering",
    "DLSSD.ScreenSpaceRefractionGuide",
    "DLSSD.ColorBeforeScreenSpaceRefraction",
    "DLSSD.ColorAfterScreenSpaceRefraction",
    "DLSSD.ColorBeforeDepthOfField",
    "DLSSD.ColorAfterDepthOfField",
    "DLSSD.DiffuseRayDirection",
    "DLSSD.SpecularRayDirection",
    "DLSSD.DiffuseRayDirectionHitDistance",
    "DLSSD.SpecularRayDirectionHitDistance",
    "DLSSD.Alpha",
    "DLSSD.OutputAlpha",
    "DLSSD.ResponsivityMask",
    "GBuffer.IndirectAlbedo",
    "GBuffer.Emissive",
    "GBuffer.SpecularMvec",
    "GBuffer.Albedo",
    "GBuffer.Metallic",
    "GBuffer.Specular",
    "GBuffer.Subsurface",
    "GBuffer.ShadingModelId",
    "GBuffer.MaterialId",
    "RayTracingHitDistance",
    "MotionVectorsReflection",
    "TransparencyMask",
    "DLSS.Input.Bias.Current.Color.Mask",
    "DLSS.Input.Reduce.Ghost.Mask",
    "DLSS.DisocclusionMask",
    "DLSS.TransparencyLayer",
    "DLSS.TransparencyLayerOpacity",
    "DLSS.TransparencyLayerMvecs",
    "MotionVectors3D",
    "IsParticleMask",
    "AnimatedTextureMask",
    "DepthHighRes",
    "Position.ViewSpace",
    "GBuffer.Attrib.8",
    "GBuffer.Attrib.9",
    "GBuffer.Attrib.10",
    "GBuffer.Attrib.11",
    "GBuffer.Attrib.12",
    "GBuffer.Attrib.13",
    "GBuffer.Attrib.14",
    "GBuffer.Attrib.15",
];
