//! RR's render presets (spec rr-network §10): `NVSDK_NGX_RayReconstruction_Hint_Render_Preset`
//! 4 = D, 5 = E.
//!
//! NVIDIA runs preset-D twins of enc0, dec0 and the output kernel (`_diamond_wallaby`) and may
//! ship other weights per preset; enc1..enc5 and dec1..dec4 are the same kernels. What the twins
//! change is not documented. openngx's presets share the whole graph and differ only where the
//! spec tells them apart: preset E is the one another integration needs for the depth-of-field
//! guide, so **openngx's own** reading is that E feeds `DLSSD.DepthOfFieldGuide` into enc0's
//! feature slot 25 and D leaves that slot zero (`rr::frame::input`). Weights come per model
//! directory, so a preset-D model can differ in any value.

/// A render preset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Preset {
    /// Preset D (`diamond_wallaby`): no depth-of-field guide.
    D,
    /// Preset E (`truthful_shrimp`), d4r's default: reads the depth-of-field guide.
    #[default]
    E,
}

impl Preset {
    /// The NGX hint value: 4 = D, 5 = E.
    pub fn from_hint(v: u32) -> Option<Preset> {
        match v {
            4 => Some(Preset::D),
            5 => Some(Preset::E),
            _ => None,
        }
    }

    /// The NGX hint value.
    pub fn hint(self) -> u32 {
        match self {
            Preset::D => 4,
            Preset::E => 5,
        }
    }

    /// Whether enc0's features include the depth-of-field guide.
    pub fn reads_depth_of_field(self) -> bool {
        self == Preset::E
    }

    /// `D` or `E`.
    pub fn name(self) -> &'static str {
        match self {
            Preset::D => "D",
            Preset::E => "E",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hints() {
        assert_eq!(Preset::from_hint(4), Some(Preset::D));
        assert_eq!(Preset::from_hint(5), Some(Preset::E));
        assert_eq!(Preset::from_hint(6), None);
        for p in [Preset::D, Preset::E] {
            assert_eq!(Preset::from_hint(p.hint()), Some(p));
        }
        assert!(Preset::E.reads_depth_of_field() && !Preset::D.reads_depth_of_field());
    }
}
