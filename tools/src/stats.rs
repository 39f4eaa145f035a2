//! Weight statistics of a loaded model (the figures of spec nr-network §3.6), used by
//! `openngx validate-model` to show at a glance whether a model is in the shipped ranges.

use rayon::prelude::*;

use openngx::model::layout::{self, F16Role, FieldKind, MatRole, RecordSpec};
use openngx::model::pack;
use openngx::model::Model;
use openngx::numerics::{e4m3, f16};

/// Running min/max/count of a set of floats; non-finite values are counted apart.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Range {
    pub count: u64,
    pub min: f32,
    pub max: f32,
    pub nonfinite: u64,
}

impl Default for Range {
    fn default() -> Self {
        Range {
            count: 0,
            min: f32::INFINITY,
            max: f32::NEG_INFINITY,
            nonfinite: 0,
        }
    }
}

impl Range {
    pub fn add(&mut self, x: f32) {
        self.count += 1;
        if x.is_finite() {
            self.min = self.min.min(x);
            self.max = self.max.max(x);
        } else {
            self.nonfinite += 1;
        }
    }

    pub fn merge(&mut self, o: &Range) {
        self.count += o.count;
        self.min = self.min.min(o.min);
        self.max = self.max.max(o.max);
        self.nonfinite += o.nonfinite;
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct ModelStats {
    /// Histogram of every E4M3 matrix byte by code.
    pub fp8_histogram: [u64; 256],
    /// Histogram of the ViT-exit matrix alone (also counted in `fp8_histogram`; its shipped range
    /// is much narrower than the rest).
    pub vit_exit_histogram: [u64; 256],
    /// Prior values (f16 -> f32); `prior_zeros` counts ±0, `prior_at_floor` the -126.5 entries.
    pub priors: Range,
    pub prior_zeros: u64,
    pub prior_at_floor: u64,
    pub temperatures: Range,
    pub scales: Range,
    /// Adapter and head logical entries.
    pub f16_matrices: Range,
    /// The adapter's input-lane-15 row: nonzero entries (0 in the shipped model).
    pub adapter_lane15_nonzero: u64,
    pub pad_bytes: u64,
    pub pad_nonzero: u64,
    pub head_unused_halves: u64,
    pub head_unused_nonzero: u64,
    pub blend_scale: u16,
}

impl ModelStats {
    fn empty() -> ModelStats {
        ModelStats {
            fp8_histogram: [0; 256],
            vit_exit_histogram: [0; 256],
            priors: Range::default(),
            prior_zeros: 0,
            prior_at_floor: 0,
            temperatures: Range::default(),
            scales: Range::default(),
            f16_matrices: Range::default(),
            adapter_lane15_nonzero: 0,
            pad_bytes: 0,
            pad_nonzero: 0,
            head_unused_halves: 0,
            head_unused_nonzero: 0,
            blend_scale: 0,
        }
    }

    fn merge(mut self, o: ModelStats) -> ModelStats {
        for (a, b) in self.fp8_histogram.iter_mut().zip(o.fp8_histogram) {
            *a += b;
        }
        for (a, b) in self.vit_exit_histogram.iter_mut().zip(o.vit_exit_histogram) {
            *a += b;
        }
        self.priors.merge(&o.priors);
        self.prior_zeros += o.prior_zeros;
        self.prior_at_floor += o.prior_at_floor;
        self.temperatures.merge(&o.temperatures);
        self.scales.merge(&o.scales);
        self.f16_matrices.merge(&o.f16_matrices);
        self.adapter_lane15_nonzero += o.adapter_lane15_nonzero;
        self.pad_bytes += o.pad_bytes;
        self.pad_nonzero += o.pad_nonzero;
        self.head_unused_halves += o.head_unused_halves;
        self.head_unused_nonzero += o.head_unused_nonzero;
        self.blend_scale |= o.blend_scale;
        self
    }

    /// Statistics over every record of `model`.
    pub fn compute(model: &Model) -> ModelStats {
        layout::records()
            .par_iter()
            .filter_map(|spec| model.try_record(spec.id).map(|r| record_stats(spec, r)))
            .reduce(ModelStats::empty, ModelStats::merge)
    }

    pub fn fp8_elements(&self) -> u64 {
        self.fp8_histogram.iter().sum()
    }

    /// Elements whose code satisfies `pred`.
    pub fn fp8_count(&self, pred: impl Fn(u8) -> bool) -> u64 {
        (0..=255u8)
            .filter(|&c| pred(c))
            .map(|c| self.fp8_histogram[c as usize])
            .sum()
    }

    /// NaN codes (0x7F, 0xFF).
    pub fn fp8_nan_codes(&self) -> u64 {
        self.fp8_count(|c| c & 0x7F == 0x7F)
    }

    /// Largest |w| among non-NaN codes present.
    pub fn fp8_max_abs(&self) -> f32 {
        max_abs(&self.fp8_histogram)
    }

    pub fn vit_exit_max_abs(&self) -> f32 {
        max_abs(&self.vit_exit_histogram)
    }

    /// Elements with |w| >= `t` (NaN codes excluded).
    pub fn fp8_at_least(&self, t: f32) -> u64 {
        self.fp8_count(|c| c & 0x7F != 0x7F && e4m3::to_f32(c).abs() >= t)
    }
}

fn max_abs(h: &[u64; 256]) -> f32 {
    (0..=255u8)
        .filter(|&c| h[c as usize] > 0 && c & 0x7F != 0x7F)
        .map(|c| e4m3::to_f32(c).abs())
        .fold(0.0, f32::max)
}

fn record_stats(spec: &RecordSpec, rec: &[u8]) -> ModelStats {
    let mut s = ModelStats::empty();
    let Some(fields) = layout::record_fields(spec.id) else {
        return s;
    };
    let mut at = 0usize;
    let count_pad = |s: &mut ModelStats, range: std::ops::Range<usize>| {
        s.pad_bytes += range.len() as u64;
        s.pad_nonzero += rec[range].iter().filter(|&&b| b != 0).count() as u64;
    };
    for field in &fields {
        let range = field.range();
        count_pad(&mut s, at..range.start);
        at = range.end;
        let bytes = &rec[range];
        match field.kind {
            FieldKind::Fp8(_, role) => {
                for &b in bytes {
                    s.fp8_histogram[b as usize] += 1;
                }
                if role == MatRole::VitExit {
                    for &b in bytes {
                        s.vit_exit_histogram[b as usize] += 1;
                    }
                }
            }
            FieldKind::F16Mat(m, role) => {
                let natural = pack::unpack_f16(bytes, m.k, m.n);
                for &h in &natural {
                    s.f16_matrices.add(f16::to_f32(h));
                }
                if role == F16Role::Adapter {
                    s.adapter_lane15_nonzero += natural[15 * m.n..16 * m.n]
                        .iter()
                        .filter(|&&h| h & 0x7FFF != 0)
                        .count() as u64;
                }
                if role == F16Role::Head {
                    // Every stored half not among the k x n logical ones is unused.
                    let mut used = vec![false; m.k * m.n_stored];
                    for k in 0..m.k {
                        for n in 0..m.n {
                            used[pack::f16_frag_index(k, n, m.n_stored)] = true;
                        }
                    }
                    for (h, u) in pack::read_f16s(bytes).iter().zip(used) {
                        if !u {
                            s.head_unused_halves += 1;
                            s.head_unused_nonzero += u64::from(*h != 0);
                        }
                    }
                }
            }
            FieldKind::Scale(..) => {
                for h in pack::read_f16s(bytes) {
                    s.scales.add(f16::to_f32(h));
                }
            }
            FieldKind::Temperatures { .. } => {
                for t in pack::read_f32s(bytes) {
                    s.temperatures.add(t);
                }
            }
            FieldKind::Priors(_) => {
                for h in pack::read_f16s(bytes) {
                    let v = f16::to_f32(h);
                    s.priors.add(v);
                    s.prior_zeros += u64::from(v == 0.0);
                    s.prior_at_floor += u64::from(v == -126.5);
                }
            }
            FieldKind::Unread { .. } => {}
            FieldKind::BlendScale => {
                s.blend_scale = u16::from_le_bytes([bytes[0], bytes[1]]);
            }
        }
    }
    count_pad(&mut s, at..rec.len());
    s
}
