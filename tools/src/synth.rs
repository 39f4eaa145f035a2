//! Deterministic synthetic models: structurally identical to the shipped 310.8.0 model (11 stage
//! files, 153 records, 147,683,778 bytes, manifest with SHA-256) with weights drawn from a seeded
//! splitmix64 stream inside the shipped ranges (spec nr-network §3.6) and scaled so activations
//! stay informative through all 71 blocks (§8, "Synthetic weights that stay informative").
//!
//! Every field of every record has its own stream, derived from (seed, record index, field index),
//! so records can be generated in parallel and a change to one field's recipe leaves the others'
//! bytes alone. All tunable numbers live in [`SynthParams::DEFAULT`].

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use rayon::prelude::*;
use sha2::{Digest, Sha256};

use openngx::model::blocks::{BLOCK_COUNT, PRIOR_BYTES, STAGES};
use openngx::model::layout::{
    self, F16Role, FieldKind, MatRole, RecordSpec, ScaleRole, SHIPPED_BLEND_SCALE,
};
use openngx::model::manifest::{Manifest, Stage, Tensor, Totals};
use openngx::model::pack;
use openngx::model::ModelError;
use openngx::numerics::{e4m3, f16};

/// Per-role matrix gains: entries are `N(0,1) · gain / sqrt(K)` (K = the rows one GEMM reduces
/// over, i.e. per expert/branch for batched matrices), clipped to `±clip`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Gains {
    pub expand: f32,
    pub expert_contract: f32,
    /// Matrices whose output is seeded by the FFN skip (C=32 W2, W3, Wc, ViT W2): small, so the
    /// residual dominates and the per-block gain stays near 1.
    pub seeded_contract: f32,
    pub qkv: f32,
    pub projection: f32,
    pub encoder_transition: f32,
    pub decoder_upsample: f32,
    pub vit_exit: f32,
    pub split_in: f32,
    pub branch_up: f32,
    pub branch_down: f32,
    /// f16 input adapter (16->32); its input-lane-15 row is always zero, as shipped.
    pub adapter: f32,
    /// f16 head (32->4).
    pub head: f32,
}

/// Everything synthesis can be tuned with.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SynthParams {
    pub gains: Gains,
    /// Clip of E4M3 matrix entries (the shipped max |w|).
    pub clip: f32,
    /// FFN and attention skip scales, uniform in `[lo, hi]`.
    pub skip_scale: (f32, f32),
    /// Merge scales (decoder transitions, ViT exit, block 70 input/adapter), uniform.
    pub merge_scale: (f32, f32),
    /// Window head temperatures, log-uniform.
    pub window_temperature: (f32, f32),
    /// ViT head temperatures, log-uniform.
    pub vit_temperature: (f32, f32),
    /// Prior = `-slope · distance + noise`, capped at 0; slope uniform per head.
    pub prior_slope: (f32, f32),
    /// Half-width of the uniform prior noise.
    pub prior_noise: f32,
    /// Off-diagonal entries set to `prior_floor` with this probability.
    pub prior_floor_probability: f32,
    pub prior_floor: f32,
}

impl SynthParams {
    pub const DEFAULT: SynthParams = SynthParams {
        gains: Gains {
            expand: 1.0,
            expert_contract: 1.0,
            seeded_contract: 0.3,
            qkv: 1.0,
            projection: 0.5,
            encoder_transition: 1.2,
            decoder_upsample: 1.0,
            vit_exit: 1.0,
            split_in: 1.0,
            branch_up: 1.0,
            branch_down: 1.0,
            adapter: 1.0,
            head: 1.0,
        },
        clip: 0.875,
        skip_scale: (0.8, 1.0),
        merge_scale: (0.5, 0.8),
        window_temperature: (1.5, 6.0),
        vit_temperature: (0.15, 0.5),
        prior_slope: (0.1, 0.6),
        prior_noise: 0.5,
        prior_floor_probability: 1.0 / 1024.0,
        prior_floor: -126.5,
    };

    fn mat_gain(&self, role: MatRole) -> f32 {
        let g = &self.gains;
        match role {
            MatRole::Expand => g.expand,
            MatRole::ExpertContract => g.expert_contract,
            MatRole::SeededContract => g.seeded_contract,
            MatRole::Qkv => g.qkv,
            MatRole::Projection => g.projection,
            MatRole::EncoderTransition => g.encoder_transition,
            MatRole::DecoderUpsample => g.decoder_upsample,
            MatRole::VitExit => g.vit_exit,
            MatRole::SplitIn => g.split_in,
            MatRole::BranchUp => g.branch_up,
            MatRole::BranchDown => g.branch_down,
        }
    }
}

impl Default for SynthParams {
    fn default() -> Self {
        SynthParams::DEFAULT
    }
}

/// splitmix64: tiny, fast, and fully specified, so any port can reproduce a synthetic model.
#[derive(Debug, Clone)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    pub fn new(state: u64) -> SplitMix64 {
        SplitMix64(state)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1) with 24 bits.
    pub fn uniform(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 * (1.0 / 16_777_216.0)
    }

    pub fn range(&mut self, (lo, hi): (f32, f32)) -> f32 {
        lo + (hi - lo) * self.uniform()
    }

    /// Log-uniform in [lo, hi]. Computed in f64 and rounded once to f32 so that the bytes do not
    /// depend on the last-bit accuracy of the platform's `logf`/`expf`.
    pub fn log_range(&mut self, (lo, hi): (f32, f32)) -> f32 {
        let (lo, hi) = (f64::from(lo), f64::from(hi));
        let u = f64::from(self.uniform());
        (lo.ln() + (hi.ln() - lo.ln()) * u).exp() as f32
    }

    /// Approximately standard normal: the sum of four 16-bit uniforms (Irwin-Hall, n = 4), centred
    /// and scaled to unit variance. One u64 per sample keeps synthesis of the 144 M matrix entries
    /// fast; the tails stop at ±3.46, which the ±0.875 clip makes irrelevant anyway.
    pub fn normal(&mut self) -> f32 {
        normal_from_sum(self.normal_sum())
    }

    /// The integer behind [`SplitMix64::normal`]: the sum of four 16-bit uniforms (0..=262140).
    pub fn normal_sum(&mut self) -> u32 {
        let v = self.next_u64();
        ((v & 0xFFFF) + ((v >> 16) & 0xFFFF) + ((v >> 32) & 0xFFFF) + (v >> 48)) as u32
    }
}

/// Largest [`SplitMix64::normal_sum`] + 1.
const NORMAL_SUMS: usize = 4 * 0xFFFF + 1;

/// Map a [`SplitMix64::normal_sum`] to the unit-variance sample.
fn normal_from_sum(sum: u32) -> f32 {
    // sum/65536 has mean 2 (minus a negligible 2/65536) and variance 1/3.
    let s = sum as f32 * (1.0 / 65_536.0);
    (s - 2.0) * 1.732_050_8
}

/// E4M3 code of every possible normal sample times `scale`, clipped: a matrix entry is then one
/// table lookup (E4M3 rounding of 144 M entries dominated synthesis time otherwise).
fn e4m3_table(scale: f32, clip: f32) -> Vec<u8> {
    (0..NORMAL_SUMS as u32)
        .map(|sum| e4m3::from_f32((normal_from_sum(sum) * scale).clamp(-clip, clip)))
        .collect()
}

/// Tables for every distinct matrix scale of the model, keyed by the scale's bits.
fn e4m3_tables(p: &SynthParams) -> HashMap<u32, Vec<u8>> {
    let mut scales: Vec<f32> = layout::records()
        .iter()
        .filter_map(|r| layout::record_fields(r.id))
        .flatten()
        .filter_map(|f| match f.kind {
            FieldKind::Fp8(m, role) => Some(mat_scale(p, m.batch_k(), role)),
            _ => None,
        })
        .collect();
    scales.sort_by(f32::total_cmp);
    scales.dedup();
    scales
        .par_iter()
        .map(|&s| (s.to_bits(), e4m3_table(s, p.clip)))
        .collect()
}

fn mat_scale(p: &SynthParams, batch_k: usize, role: MatRole) -> f32 {
    p.mat_gain(role) / (batch_k as f32).sqrt()
}

/// Stream seed of field `field` of record `record` (index in [`layout::records`]).
fn stream(seed: u64, record: usize, field: usize) -> SplitMix64 {
    let mut m = SplitMix64::new(seed ^ ((record as u64) << 32 | field as u64));
    // Two rounds decorrelate neighbouring (record, field) pairs and seeds.
    let a = m.next_u64();
    SplitMix64::new(a ^ m.next_u64().rotate_left(17))
}

fn f16_bits(x: f32) -> u16 {
    f16::from_f32_rne(x)
}

/// Fill one record (zeroed buffer of its exact length).
fn synth_record(
    seed: u64,
    p: &SynthParams,
    tables: &HashMap<u32, Vec<u8>>,
    record: usize,
    spec: &RecordSpec,
    out: &mut [u8],
) {
    let Some(fields) = layout::record_fields(spec.id) else {
        return;
    };
    for (fi, field) in fields.iter().enumerate() {
        let mut rng = stream(seed, record, fi);
        match field.kind {
            FieldKind::Fp8(m, role) => {
                let scale = mat_scale(p, m.batch_k(), role);
                let natural: Vec<u8> = match tables.get(&scale.to_bits()) {
                    Some(t) => (0..m.len()).map(|_| t[rng.normal_sum() as usize]).collect(),
                    // Not reached (every scale has a table); same values, just slower.
                    None => (0..m.len())
                        .map(|_| e4m3::from_f32((rng.normal() * scale).clamp(-p.clip, p.clip)))
                        .collect(),
                };
                pack::pack_fp8_into(&natural, m.k, m.n, &mut out[m.offset..m.end()]);
            }
            FieldKind::F16Mat(m, role) => {
                let gain = match role {
                    F16Role::Adapter => p.gains.adapter,
                    F16Role::Head => p.gains.head,
                };
                let scale = gain / (m.k as f32).sqrt();
                let mut natural: Vec<u16> = (0..m.k * m.n)
                    .map(|_| f16_bits(rng.normal() * scale))
                    .collect();
                if role == F16Role::Adapter {
                    // Input lane 15 is always 0; the shipped adapter has an all-zero row for it.
                    natural[15 * m.n..16 * m.n].fill(0);
                }
                let bytes = pack::pack_f16(&natural, m.k, m.n);
                out[m.offset..m.end()].copy_from_slice(&bytes);
            }
            FieldKind::Scale(v, role) => {
                let range = match role {
                    ScaleRole::Skip => p.skip_scale,
                    ScaleRole::Merge => p.merge_scale,
                };
                let vals: Vec<u16> = (0..v.count).map(|_| f16_bits(rng.range(range))).collect();
                pack::write_f16s(&vals, &mut out[v.offset..v.end()]);
            }
            FieldKind::Temperatures { temps, vit } => {
                let range = if vit {
                    p.vit_temperature
                } else {
                    p.window_temperature
                };
                let vals: Vec<f32> = (0..temps.count).map(|_| rng.log_range(range)).collect();
                pack::write_f32s(&vals, &mut out[temps.offset..temps.end()]);
            }
            FieldKind::Priors(pr) => {
                for h in 0..pr.heads {
                    let at = pr.offset + h * PRIOR_BYTES;
                    let bytes = synth_prior(&mut rng, p);
                    out[at..at + PRIOR_BYTES].copy_from_slice(&bytes);
                }
            }
            FieldKind::Unread { offset, len } => {
                // Never read by the network; 1.0 marks it as deliberately filled.
                let one = f16::ONE.to_le_bytes();
                out[offset..offset + len.min(2)].copy_from_slice(&one[..len.min(2)]);
            }
            FieldKind::BlendScale => {
                out[..2].copy_from_slice(&SHIPPED_BLEND_SCALE.to_le_bytes());
            }
        }
    }
}

/// One head: a distance penalty over the 8x8 window plus noise, capped at 0, with a few
/// off-diagonal entries at the floor (masked pairs, as in the shipped priors).
fn synth_prior(rng: &mut SplitMix64, p: &SynthParams) -> Vec<u8> {
    let slope = rng.range(p.prior_slope);
    let mut physical = vec![0u16; 4096];
    for q in 0..64 {
        for k in 0..64 {
            let dx = (q % 8) as f32 - (k % 8) as f32;
            let dy = (q / 8) as f32 - (k / 8) as f32;
            let noise = (rng.uniform() * 2.0 - 1.0) * p.prior_noise;
            let mut v = (noise - slope * (dx * dx + dy * dy).sqrt()).min(0.0);
            if q != k && rng.uniform() < p.prior_floor_probability {
                v = p.prior_floor;
            }
            physical[pack::window_physical(q) * 64 + pack::window_physical(k)] = f16_bits(v);
        }
    }
    pack::pack_prior_physical(&physical)
}

/// A synthesized model in memory.
#[derive(Debug, Clone)]
pub struct Synthesized {
    /// `(stage id, bytes)` in [`STAGES`] order.
    pub stages: Vec<(String, Vec<u8>)>,
    pub manifest: Manifest,
}

/// Generate only the stages whose id satisfies `want`, in [`STAGES`] order. Records of other stages
/// are neither generated nor listed, so a partial result's manifest does not validate; bytes of a
/// generated stage equal those of the same stage in [`synthesize`].
pub fn synthesize_stages(
    seed: u64,
    params: &SynthParams,
    want: impl Fn(&str) -> bool,
) -> Synthesized {
    let specs = layout::records();
    let ids: Vec<&str> = STAGES.iter().copied().filter(|s| want(s)).collect();
    let mut bufs: Vec<Vec<u8>> = ids
        .iter()
        .map(|id| {
            let len = specs.iter().filter(|r| r.stage == *id).map(|r| r.len).sum();
            vec![0u8; len]
        })
        .collect();
    let mut tensors = Vec::new();
    let mut jobs: Vec<(usize, &mut [u8])> = Vec::with_capacity(specs.len());
    for (id, buf) in ids.iter().zip(bufs.iter_mut()) {
        let mut rest: &mut [u8] = buf;
        let mut offset = 0usize;
        for (ri, spec) in specs.iter().enumerate().filter(|(_, r)| r.stage == *id) {
            let (head, tail) = std::mem::take(&mut rest).split_at_mut(spec.len);
            jobs.push((ri, head));
            rest = tail;
            tensors.push(Tensor {
                name: spec.id.name(),
                block: spec.id.block as u64,
                layer: spec.id.layer as u64,
                parameter: spec.id.param.as_str().to_string(),
                stage: id.to_string(),
                stage_offset: offset as u64,
                byte_length: spec.len as u64,
            });
            offset += spec.len;
        }
    }
    // Largest first, so the ViT records do not end up last on one core.
    jobs.sort_by_key(|(_, buf)| std::cmp::Reverse(buf.len()));
    let tables = e4m3_tables(params);
    jobs.into_par_iter()
        .for_each(|(ri, buf)| synth_record(seed, params, &tables, ri, &specs[ri], buf));
    let shas: Vec<String> = bufs
        .par_iter()
        .map(|b| hex::encode(Sha256::digest(b)))
        .collect();
    let stages_meta = ids
        .iter()
        .zip(&bufs)
        .zip(shas)
        .map(|((id, b), sha256)| Stage {
            id: id.to_string(),
            file: id.to_string(),
            packed_byte_length: b.len() as u64,
            sha256,
        })
        .collect();
    let manifest = Manifest {
        generator: Some(format!("openngx synth-model (seed {seed})")),
        network: None,
        totals: Totals {
            block_count: BLOCK_COUNT as u64,
            tensor_count: Some(tensors.len() as u64),
            byte_length: Some(bufs.iter().map(|b| b.len() as u64).sum()),
        },
        stages: stages_meta,
        tensors,
    };
    Synthesized {
        stages: ids.iter().map(|s| s.to_string()).zip(bufs).collect(),
        manifest,
    }
}

/// The whole model with `params`.
pub fn synthesize(seed: u64, params: &SynthParams) -> Synthesized {
    synthesize_stages(seed, params, |_| true)
}

/// What [`write_model`] produced.
#[derive(Debug, Clone)]
pub struct SynthReport {
    pub dir: PathBuf,
    pub manifest: Manifest,
    pub total_bytes: u64,
}

/// Synthesize the whole model and write it to `out` atomically: everything goes to a temporary
/// directory beside `out`, which is renamed into place only when complete. An existing non-empty
/// `out` is refused unless `force` (then it is replaced, again only after the new model is whole).
pub fn write_model(
    out: &Path,
    seed: u64,
    params: &SynthParams,
    force: bool,
) -> Result<SynthReport, ModelError> {
    let target = crate::model_write::OutDir::check(out, force)?;
    let synth = synthesize(seed, params);
    let files: Vec<(String, &[u8])> = synth
        .stages
        .iter()
        .map(|(id, bytes)| (id.clone(), bytes.as_slice()))
        .collect();
    target.write(&files, &synth.manifest)?;
    let total_bytes = synth.stages.iter().map(|(_, b)| b.len() as u64).sum();
    Ok(SynthReport {
        dir: out.to_path_buf(),
        manifest: synth.manifest,
        total_bytes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normal_moments() {
        let mut r = SplitMix64::new(7);
        let n = 200_000;
        let xs: Vec<f32> = (0..n).map(|_| r.normal()).collect();
        let mean = xs.iter().sum::<f32>() / n as f32;
        let var = xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f32>() / n as f32;
        assert!(mean.abs() < 0.01, "mean {mean}");
        assert!((var - 1.0).abs() < 0.02, "var {var}");
    }

    #[test]
    fn splitmix_reference_value() {
        // First output of splitmix64 seeded with 0 (the published reference sequence).
        assert_eq!(SplitMix64::new(0).next_u64(), 0xE220_A839_7B1D_CDAF);
    }

    #[test]
    fn stage_is_deterministic_and_seeded() {
        let p = SynthParams::DEFAULT;
        let a = synthesize_stages(0, &p, |s| s == "enc32");
        let b = synthesize_stages(0, &p, |s| s == "enc32");
        let c = synthesize_stages(1, &p, |s| s == "enc32");
        assert_eq!(a.stages.len(), 1);
        assert_eq!(a.stages[0].1.len(), 106_432);
        assert_eq!(a.manifest, b.manifest);
        assert_eq!(a.stages, b.stages);
        assert_ne!(a.manifest.stages[0].sha256, c.manifest.stages[0].sha256);
    }
}
