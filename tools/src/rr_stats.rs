//! Weight statistics of a Ray Reconstruction model, per layer (the figures `openngx
//! validate-model` shows for an RR directory, the same kind as DLSS-NR's `stats`): for the E4M3
//! matrices the element count, the nonzero share, the saturated codes (±448), the NaN codes, the
//! number of distinct codes and the largest magnitude; for the f16 items the ranges of the
//! norm gains, the biases and the score biases; and whether enc0's unread region is zero.

use rayon::prelude::*;

use openngx::numerics::{e4m3, f16};
use openngx::rr::layers::LayerId;
use openngx::rr::weights::layout::{ItemKind, Role};
use openngx::rr::weights::{LayerImage, RrWeights, Values};

use crate::stats::Range;

/// One layer's figures.
#[derive(Debug, Clone, PartialEq)]
pub struct LayerStats {
    pub layer: LayerId,
    /// Every E4M3 matrix byte of the layer, by code.
    pub histogram: [u64; 256],
    /// RMS-norm gains (g1, g2).
    pub gains: Range,
    /// GEMM and residual biases (bo, b1, b2, merge, expand, tail, embedding).
    pub biases: Range,
    /// Score-bias tables.
    pub score_bias: Range,
    /// Nonzero bytes of enc0's unread region (`None` for other layers).
    pub noise_nonzero: Option<u64>,
}

/// True for the E4M3 NaN codes 0x7F/0xFF.
fn is_nan_code(c: u8) -> bool {
    c & 0x7F == 0x7F
}

impl LayerStats {
    /// E4M3 elements.
    pub fn elements(&self) -> u64 {
        self.histogram.iter().sum()
    }

    /// Elements that are neither +0 nor -0.
    pub fn nonzero(&self) -> u64 {
        self.elements() - self.histogram[0x00] - self.histogram[0x80]
    }

    /// Share of nonzero elements (0..1).
    pub fn nonzero_share(&self) -> f64 {
        match self.elements() {
            0 => 0.0,
            n => self.nonzero() as f64 / n as f64,
        }
    }

    /// Elements at ±448 (the saturating conversion's limit).
    pub fn saturated(&self) -> u64 {
        self.histogram[0x7E] + self.histogram[0xFE]
    }

    /// Elements with a NaN code.
    pub fn nan(&self) -> u64 {
        self.histogram[0x7F] + self.histogram[0xFF]
    }

    /// Distinct codes used.
    pub fn distinct(&self) -> usize {
        self.histogram.iter().filter(|&&n| n > 0).count()
    }

    /// Largest |w| over the non-NaN codes.
    pub fn max_abs(&self) -> f32 {
        (0..=255u8)
            .filter(|&c| self.histogram[c as usize] > 0 && !is_nan_code(c))
            .map(|c| e4m3::to_f32(c).abs())
            .fold(0.0, f32::max)
    }
}

/// The figures of one layer image.
pub fn layer_stats(img: &LayerImage) -> LayerStats {
    let mut s = LayerStats {
        layer: img.id(),
        histogram: [0; 256],
        gains: Range::default(),
        biases: Range::default(),
        score_bias: Range::default(),
        noise_nonzero: None,
    };
    for item in img.layout().items() {
        match (item.kind, img.item(&item)) {
            (ItemKind::Bytes { .. }, Values::Bytes(b)) => {
                s.noise_nonzero = Some(b.iter().filter(|&&x| x != 0).count() as u64);
            }
            (ItemKind::Fp8(_), Values::Codes(codes)) => {
                for c in codes {
                    s.histogram[c as usize] += 1;
                }
            }
            (ItemKind::ScoreBias(_), Values::Halves(h)) => {
                h.iter().for_each(|&v| s.score_bias.add(f16::to_f32(v)));
            }
            (ItemKind::F16(_), Values::Halves(h)) => {
                let range = match item.role {
                    Role::G1 | Role::G2 => &mut s.gains,
                    _ => &mut s.biases,
                };
                h.iter().for_each(|&v| range.add(f16::to_f32(v)));
            }
            // `item` returns the kind's own values; nothing else occurs.
            _ => {}
        }
    }
    s
}

/// The figures of every layer, in pipeline order.
pub fn model_stats(w: &RrWeights) -> Vec<LayerStats> {
    LayerId::ALL
        .par_iter()
        .map(|&id| layer_stats(&w.layer(id)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use openngx::rr::weights::{encode_layer, layout};

    #[test]
    fn counts_codes_and_ranges() {
        // dec0 with every matrix code 0x38 (1.0) but three: one NaN, one saturated, one -0.
        let id = LayerId::Dec0;
        let lay = layout::layout(id);
        let mut first = true;
        let values: Vec<Values> = lay
            .items()
            .iter()
            .map(|it| match it.kind {
                ItemKind::Fp8(m) => {
                    let mut v = vec![0x38u8; m.len()];
                    if first {
                        v[0] = 0x7F;
                        v[1] = 0xFE;
                        v[2] = 0x80;
                        first = false;
                    }
                    Values::Codes(v)
                }
                ItemKind::F16(v) => match it.role {
                    Role::G1 | Role::G2 => Values::Halves(vec![0x4000; v.count]),
                    _ => Values::Halves(vec![0xB800; v.count]),
                },
                ItemKind::ScoreBias(_) => Values::Halves(vec![0xC000; 64 * 96]),
                ItemKind::Bytes { len } => Values::Bytes(vec![0; len]),
            })
            .collect();
        let image = encode_layer(id, &values).expect("encode");
        let img = LayerImage::new(id, &image).expect("size");
        let s = layer_stats(&img);
        let matrices: u64 = lay
            .items()
            .iter()
            .filter_map(|it| match it.kind {
                ItemKind::Fp8(m) => Some(m.len() as u64),
                _ => None,
            })
            .sum();
        assert_eq!(s.elements(), matrices);
        assert_eq!(s.nonzero(), matrices - 1);
        assert_eq!(s.nan(), 1);
        assert_eq!(s.saturated(), 1);
        assert_eq!(s.distinct(), 4);
        assert_eq!(s.max_abs(), 448.0);
        assert_eq!((s.gains.min, s.gains.max), (2.0, 2.0));
        assert_eq!((s.biases.min, s.biases.max), (-0.5, -0.5));
        assert_eq!((s.score_bias.min, s.score_bias.count), (-2.0, 2 * 64 * 96));
        assert_eq!(s.noise_nonzero, None);
    }
}
