//! The evaluate-time parameters of a DLSS-NR frame (`DLSSNR.*`, spec §5) as a typed struct with
//! their defaults and validation, and [`FrameConstants`], the flat per-frame block that the CPU
//! reference and the GPU prepare/compose shaders both read.
//!
//! The NGX layer fills [`FrameParams`] from an `NVSDK_NGX_Parameter` map (names in
//! `crate::nr::keys`); the frame code never touches the map itself.

use super::portable::ftz;
use super::temporal::FrameSetup;
use crate::nr::geometry::Geometry;
use crate::nr::keys as names;
use crate::numerics::f16;
use std::fmt;

/// The shipped model's temporal blend scale, `block70.layer0.blend_scale` = f16 0x39EB
/// (0.73974609375); the feature reads the real value from the model.
pub const DEFAULT_BLEND_SCALE_BITS: u16 = 0x39EB;

/// The default blend scale as f32.
pub fn default_blend_scale() -> f32 {
    f16::to_f32(DEFAULT_BLEND_SCALE_BITS)
}

/// A resource sub-rectangle (`DLSSNR.<Name>Subrect*`). Width and height must equal the
/// feature size; the base offsets the read/write inside a larger resource.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Subrect {
    pub base_x: i32,
    pub base_y: i32,
    pub width: u32,
    pub height: u32,
}

impl Subrect {
    /// The default rectangle of a feature: the whole `width x height` at the origin.
    pub fn full(width: u32, height: u32) -> Self {
        Subrect {
            base_x: 0,
            base_y: 0,
            width,
            height,
        }
    }

    /// Check the rectangle against the feature size and (when known) the resource extent.
    pub fn check(
        &self,
        name: &'static str,
        width: u32,
        height: u32,
        extent: Option<(u32, u32)>,
    ) -> Result<(), FrameError> {
        let fail = |detail: String| Err(FrameError::Subrect { name, detail });
        if self.base_x < 0 || self.base_y < 0 {
            return fail(format!(
                "base ({}, {}) is negative",
                self.base_x, self.base_y
            ));
        }
        if self.width != width || self.height != height {
            return fail(format!(
                "size ({name}Width x {name}Height) {}x{} differs from the feature size \
                 {width}x{height} (scaling is not supported)",
                self.width, self.height
            ));
        }
        if let Some((ew, eh)) = extent {
            if self.base_x as u64 + width as u64 > ew as u64
                || self.base_y as u64 + height as u64 > eh as u64
            {
                return fail(format!(
                    "rectangle at ({}, {}) of {width}x{height} leaves the {ew}x{eh} resource",
                    self.base_x, self.base_y
                ));
            }
        }
        Ok(())
    }
}

/// Every `DLSSNR.*` evaluate-time parameter, with the defaults of spec §5.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FrameParams {
    /// `DLSSNR.Enabled` (1). Off: output = proxy, no history write, seed and counter reset.
    pub enabled: bool,
    /// `DLSSNR.Reset` (0). On: this frame ignores history and uses seed 0.
    pub reset: bool,
    /// `DLSSNR.UseAutoMask` (1): selects the conditioning lanes 12-14.
    pub use_auto_mask: bool,
    /// `DLSSNR.Intensity` (1, range 0..=1): blend of the result towards the proxy.
    pub intensity: f32,
    /// `DLSSNR.LocalToneStrength` (1): lane 11.
    pub local_tone_strength: f32,
    /// `DLSSNR.LocalStructureStrength` (1): lanes 12-14.
    pub local_structure_strength: f32,
    /// `DLSSNR.SkinStructureStrength` (-1 = follow local structure): lane 13.
    pub skin_structure_strength: f32,
    /// `DLSSNR.GlobalToneStrength` (not in the 16 lanes; read and ignored).
    pub global_tone_strength: Option<f32>,
    /// `DLSSNR.Style` (0; only 0 is implemented).
    pub style: u32,
    /// `DLSSNR.UICorrection` (0; non-zero is not implemented).
    pub ui_correction: u32,
    /// `DLSSNR.DepthInverted` (read and ignored: there is no depth input).
    pub depth_inverted: Option<u32>,
    /// `DLSSNR.MVecScaleX/Y` (1, 1): motion vectors are multiplied by these (pixels).
    pub mvec_scale: [f32; 2],
    /// `DLSSNR.ColorSubrect*` (None = the whole feature size at the origin).
    pub color_subrect: Option<Subrect>,
    /// `DLSSNR.OutputSubrect*`.
    pub output_subrect: Option<Subrect>,
    /// `DLSSNR.MVecSubrect*`.
    pub mvec_subrect: Option<Subrect>,
}

impl Default for FrameParams {
    fn default() -> Self {
        FrameParams {
            enabled: true,
            reset: false,
            use_auto_mask: true,
            intensity: 1.0,
            local_tone_strength: 1.0,
            local_structure_strength: 1.0,
            skin_structure_strength: -1.0,
            global_tone_strength: None,
            style: 0,
            ui_correction: 0,
            depth_inverted: None,
            mvec_scale: [1.0, 1.0],
            color_subrect: None,
            output_subrect: None,
            mvec_subrect: None,
        }
    }
}

impl FrameParams {
    /// Refuse values the frame cannot honour (before anything is recorded or written).
    /// Resource extents are the NGX layer's to check with [`Subrect::check`].
    pub fn validate(&self, width: u32, height: u32) -> Result<(), FrameError> {
        let finite = [
            (names::INTENSITY, self.intensity),
            (names::LOCAL_TONE_STRENGTH, self.local_tone_strength),
            (
                names::LOCAL_STRUCTURE_STRENGTH,
                self.local_structure_strength,
            ),
            (names::SKIN_STRUCTURE_STRENGTH, self.skin_structure_strength),
            (names::MVEC_SCALE_X, self.mvec_scale[0]),
            (names::MVEC_SCALE_Y, self.mvec_scale[1]),
        ];
        let optional = self
            .global_tone_strength
            .map(|v| (names::GLOBAL_TONE_STRENGTH, v));
        for (name, value) in finite.into_iter().chain(optional) {
            if !value.is_finite() {
                return Err(FrameError::NonFinite { name, value });
            }
        }
        if !(0.0..=1.0).contains(&self.intensity) {
            return Err(FrameError::OutOfRange {
                name: names::INTENSITY,
                value: self.intensity,
                range: "0..=1",
            });
        }
        if self.style != 0 {
            return Err(FrameError::NotImplemented {
                name: names::STYLE,
                value: self.style,
            });
        }
        if self.ui_correction != 0 {
            return Err(FrameError::NotImplemented {
                name: names::UI_CORRECTION,
                value: self.ui_correction,
            });
        }
        for (name, r) in [
            (names::COLOR_SUBRECT, self.color_subrect),
            (names::OUTPUT_SUBRECT, self.output_subrect),
            (names::MVEC_SUBRECT, self.mvec_subrect),
        ] {
            if let Some(r) = r {
                r.check(name, width, height, None)?;
            }
        }
        Ok(())
    }
}

/// Why a frame was refused.
#[derive(Debug, Clone, PartialEq)]
pub enum FrameError {
    /// A float parameter is NaN or infinite.
    NonFinite { name: &'static str, value: f32 },
    /// A float parameter outside its range.
    OutOfRange {
        name: &'static str,
        value: f32,
        range: &'static str,
    },
    /// A parameter value whose behaviour is not implemented.
    NotImplemented { name: &'static str, value: u32 },
    /// A bad sub-rectangle.
    Subrect { name: &'static str, detail: String },
    /// An input or output buffer of the wrong length.
    BufferSize {
        name: &'static str,
        expected: usize,
        got: usize,
    },
}

impl fmt::Display for FrameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FrameError::NonFinite { name, value } => {
                write!(f, "NR frame: `{name}` is {value}, it must be finite")
            }
            FrameError::OutOfRange { name, value, range } => {
                write!(f, "NR frame: `{name}` = {value} is outside {range}")
            }
            FrameError::NotImplemented { name, value } => write!(
                f,
                "NR frame: `{name}` = {value} is not implemented (only 0 is supported)"
            ),
            FrameError::Subrect { name, detail } => write!(f, "NR frame: `{name}*`: {detail}"),
            FrameError::BufferSize {
                name,
                expected,
                got,
            } => write!(
                f,
                "NR frame: {name} holds {got} pixels, expected {expected}"
            ),
        }
    }
}

impl std::error::Error for FrameError {}

/// The per-frame constant block of the prepare and compose kernels (GPU push constants; the
/// CPU reference reads the same values). `#[repr(C)]`, 24 four-byte words = 96 bytes, in this
/// order. Booleans are 0/1 words.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FrameConstants {
    /// Valid (feature) size.
    pub width: u32,
    pub height: u32,
    /// Padded field size.
    pub field_width: u32,
    pub field_height: u32,
    /// Noise seed of this frame.
    pub seed: u32,
    /// 1 when the previous output may be reprojected (not the first frame, not Reset).
    pub history_valid: u32,
    /// `DLSSNR.Enabled`.
    pub enabled: u32,
    /// `DLSSNR.UseAutoMask`.
    pub auto_mask: u32,
    /// `DLSSNR.Style`.
    pub style: u32,
    /// 1 when a motion-vector image is bound (else motion is 0).
    pub has_motion: u32,
    /// Sub-rectangle bases of the colour, motion and output resources (the CPU reference takes
    /// images already cut to the feature size and ignores these).
    pub color_x: u32,
    pub color_y: u32,
    pub motion_x: u32,
    pub motion_y: u32,
    pub output_x: u32,
    pub output_y: u32,
    pub intensity: f32,
    pub local_tone: f32,
    pub local_structure: f32,
    pub skin_structure: f32,
    pub mvec_scale_x: f32,
    pub mvec_scale_y: f32,
    /// The model's temporal blend scale (f16 `block70.layer0.blend_scale` as f32).
    pub blend_scale: f32,
    pub reserved: u32,
}

impl FrameConstants {
    /// Size of the block in bytes.
    pub const BYTES: usize = 96;

    /// Assemble the block of one frame. `setup` comes from [`super::FrameState::begin`].
    /// Subnormal float parameters are flushed to zero here, so that no kernel ever sees one.
    pub fn new(
        geometry: &Geometry,
        params: &FrameParams,
        setup: &FrameSetup,
        blend_scale: f32,
        has_motion: bool,
    ) -> Self {
        let base = |r: Option<Subrect>| match r {
            Some(r) => (r.base_x.max(0) as u32, r.base_y.max(0) as u32),
            None => (0, 0),
        };
        let (color_x, color_y) = base(params.color_subrect);
        let (motion_x, motion_y) = base(params.mvec_subrect);
        let (output_x, output_y) = base(params.output_subrect);
        FrameConstants {
            width: geometry.valid.w,
            height: geometry.valid.h,
            field_width: geometry.field.w,
            field_height: geometry.field.h,
            seed: setup.seed,
            history_valid: setup.history_valid as u32,
            enabled: setup.enabled as u32,
            auto_mask: params.use_auto_mask as u32,
            style: params.style,
            has_motion: has_motion as u32,
            color_x,
            color_y,
            motion_x,
            motion_y,
            output_x,
            output_y,
            intensity: ftz(params.intensity),
            local_tone: ftz(params.local_tone_strength),
            local_structure: ftz(params.local_structure_strength),
            skin_structure: ftz(params.skin_structure_strength),
            mvec_scale_x: ftz(params.mvec_scale[0]),
            mvec_scale_y: ftz(params.mvec_scale[1]),
            blend_scale: ftz(blend_scale),
            reserved: 0,
        }
    }

    /// The block as little-endian bytes, in field order.
    pub fn to_bytes(&self) -> [u8; Self::BYTES] {
        let words: [u32; 24] = [
            self.width,
            self.height,
            self.field_width,
            self.field_height,
            self.seed,
            self.history_valid,
            self.enabled,
            self.auto_mask,
            self.style,
            self.has_motion,
            self.color_x,
            self.color_y,
            self.motion_x,
            self.motion_y,
            self.output_x,
            self.output_y,
            self.intensity.to_bits(),
            self.local_tone.to_bits(),
            self.local_structure.to_bits(),
            self.skin_structure.to_bits(),
            self.mvec_scale_x.to_bits(),
            self.mvec_scale_y.to_bits(),
            self.blend_scale.to_bits(),
            self.reserved,
        ];
        let mut out = [0u8; Self::BYTES];
        for (chunk, w) in out.chunks_exact_mut(4).zip(words) {
            chunk.copy_from_slice(&w.to_le_bytes());
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_validation() {
        let p = FrameParams::default();
        assert!(p.enabled && !p.reset && p.use_auto_mask);
        assert_eq!(
            (
                p.intensity,
                p.local_tone_strength,
                p.local_structure_strength,
                p.skin_structure_strength
            ),
            (1.0, 1.0, 1.0, -1.0)
        );
        assert_eq!(p.mvec_scale, [1.0, 1.0]);
        assert_eq!(p.validate(64, 64), Ok(()));
        assert_eq!(default_blend_scale(), 0.739_746_1);

        let bad = FrameParams {
            intensity: 1.5,
            ..p
        };
        assert!(matches!(
            bad.validate(64, 64),
            Err(FrameError::OutOfRange {
                name: "DLSSNR.Intensity",
                ..
            })
        ));
        let bad = FrameParams {
            mvec_scale: [f32::NAN, 1.0],
            ..p
        };
        assert!(matches!(
            bad.validate(64, 64),
            Err(FrameError::NonFinite {
                name: "DLSSNR.MVecScaleX",
                ..
            })
        ));
        let bad = FrameParams { style: 2, ..p };
        assert_eq!(
            bad.validate(64, 64),
            Err(FrameError::NotImplemented {
                name: "DLSSNR.Style",
                value: 2
            })
        );
        let bad = FrameParams {
            output_subrect: Some(Subrect::full(32, 64)),
            ..p
        };
        let e = bad.validate(64, 64).unwrap_err();
        assert!(e.to_string().contains("DLSSNR.OutputSubrect"), "{e}");
        let r = Subrect {
            base_x: 10,
            ..Subrect::full(64, 64)
        };
        assert!(r.check("x", 64, 64, Some((70, 64))).is_err());
        assert!(r.check("x", 64, 64, Some((74, 64))).is_ok());
    }

    #[test]
    fn constants_layout() {
        let g = Geometry::new(64, 64).unwrap();
        let setup = FrameSetup {
            enabled: true,
            seed: 5,
            history_valid: true,
            read_slot: 1,
            write_slot: 0,
        };
        let c = FrameConstants::new(&g, &FrameParams::default(), &setup, 0.5, true);
        assert_eq!(std::mem::size_of::<FrameConstants>(), FrameConstants::BYTES);
        let b = c.to_bytes();
        assert_eq!(&b[0..4], &64u32.to_le_bytes());
        assert_eq!(&b[8..12], &336u32.to_le_bytes());
        assert_eq!(&b[16..20], &5u32.to_le_bytes());
        assert_eq!(&b[20..24], &1u32.to_le_bytes());
        assert_eq!(&b[64..68], &1.0f32.to_bits().to_le_bytes());
        assert_eq!(&b[76..80], &(-1.0f32).to_bits().to_le_bytes());
        assert_eq!(&b[88..92], &0.5f32.to_bits().to_le_bytes());
    }
}
