//! Deterministic synthetic Ray Reconstruction weights: the eleven prepared images of
//! `rr::weights` with values drawn from seeded splitmix64 streams and scaled so that activations
//! stay informative through every layer (the reasoning of DLSS-NR's synthesis, `synth`, applied
//! to RR's block, spec rr-network §3).
//!
//! Every item of every layer has its own stream, derived from (seed, layer, item), so layers are
//! generated in parallel and a change to one item's recipe leaves the others' bytes alone. Values
//! are made in natural form and stored with `rr::weights::encode_layer`, so the fragment orders
//! have one implementation. All tunable numbers live in [`RrSynthParams::DEFAULT`].
//!
//! How the scales follow from the block (C channels, H heads, one block per layer):
//!
//! * The RMS norm has no 1/N (§5.2): its output is `x · gain / ‖x‖`, so a gain of `√C` gives rows
//!   of RMS 1. Gains are `√C · U(0.8, 1.2)`.
//! * A matrix entry is `N(0,1) · gain / √K` (clipped to ±0.875, then f32 -> f16 -> E4M3), K being
//!   the length the GEMM chain reduces: C for QK, V, W1 and the tail; 32·H for Wo (the heads
//!   chain into one sum); 4C for W2 (the chunks chain) and the merge; C_in for the expand; 32 for
//!   the embedding. A unit-RMS input then gives an output of RMS `gain`.
//! * Scores: with QK gain 0.5, U has RMS 0.5 and a score `U_q · U_k` over 32 columns is about 8.
//!   Scores use U against itself (no key projection, §3), and tokens share much of their
//!   content, so these products differ little between keys: on their own they give an almost
//!   flat softmax. The score bias's distance penalty is what makes attention local: the cubic
//!   softmax weighs a score by about exp(0.353·s), so a slope of 1 to 3 per token of distance
//!   gives neighbours a few times the weight of far keys, without a one-hot (the clamp at
//!   |s| ≈ 32 is not reached: the bias goes down to about −29). See [`synth_score_bias`].
//! * Residuals: the out-projection (gain 0.8) and MLP (W1 1.0, W2 0.5) add about 0.2 and 0.3 RMS
//!   to a unit residual, so the stream grows slowly; merges (gain 1.0) keep the scale, and the
//!   expand (0.7) adds the coarser level below the skip's own scale.
//! * Biases are small (±0.1), the tail head's ±0.25; enc0's 4096-byte region, which the network
//!   never reads, is zero.
//!
//! These choices are openngx's own (NVIDIA's weights cannot be shipped); they are checked against
//! the CPU reference's activations layer by layer once it runs (docs/rr.md).

use rayon::prelude::*;

use openngx::model::ModelError;
use openngx::numerics::{e4m3, f16};
use openngx::rr::layers::{LayerId, HEAD_WIDTH};
use openngx::rr::weights::layout::{self, Item, ItemKind, Role};
use openngx::rr::weights::model::{build_manifest, stage_files};
use openngx::rr::weights::{encode_layer, ImageError, RrWeights, Values};
use std::path::{Path, PathBuf};

use crate::synth::SplitMix64;

/// Per-matrix gains (see the module doc for what each scales).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RrGains {
    pub embed: f32,
    pub qk: f32,
    pub v: f32,
    pub wo: f32,
    pub w1: f32,
    pub w2: f32,
    pub merge: f32,
    pub expand: f32,
    pub tail: f32,
}

/// Everything RR synthesis can be tuned with.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RrSynthParams {
    pub gains: RrGains,
    /// Clip of E4M3 entries.
    pub clip: f32,
    /// RMS-norm gains are `√C · U(lo, hi)`.
    pub norm_gain: (f32, f32),
    /// Half-width of the uniform GEMM biases (bo, b1, b2, merge, expand, embedding).
    pub bias: f32,
    /// Half-width of the uniform tail-head biases.
    pub tail_bias: f32,
    /// Score bias: `-slope · distance + noise`, slope uniform per head.
    pub score_slope: (f32, f32),
    /// Half-width of the score-bias noise (one value per relative position or halo key).
    pub score_noise: f32,
    /// The distance the 32 halo keys are charged as (their order in the 96 keys is the
    /// geometry's; synthesis does not depend on it).
    pub halo_distance: f32,
}

impl RrSynthParams {
    pub const DEFAULT: RrSynthParams = RrSynthParams {
        gains: RrGains {
            embed: 1.5,
            qk: 0.5,
            v: 1.0,
            wo: 0.8,
            w1: 1.0,
            w2: 0.5,
            merge: 1.0,
            expand: 0.7,
            tail: 1.0,
        },
        clip: 0.875,
        norm_gain: (0.8, 1.2),
        bias: 0.1,
        tail_bias: 0.25,
        score_slope: (1.0, 3.0),
        score_noise: 0.5,
        halo_distance: 4.5,
    };
}

impl Default for RrSynthParams {
    fn default() -> Self {
        RrSynthParams::DEFAULT
    }
}

/// Stream of item `item` of layer `layer`. The constant keeps RR's streams apart from DLSS-NR's
/// (which mix (record, field) the same way).
fn stream(seed: u64, layer: usize, item: usize) -> SplitMix64 {
    let mut m =
        SplitMix64::new(seed ^ 0x5252_0000_0000_0000 ^ ((layer as u64) << 32 | item as u64));
    let a = m.next_u64();
    SplitMix64::new(a ^ m.next_u64().rotate_left(17))
}

/// The reduction length and gain of a matrix role in layer `id`.
fn matrix_scale(p: &RrSynthParams, id: LayerId, role: Role) -> (usize, f32) {
    let l = id.layer();
    let c = l.channels;
    let g = &p.gains;
    match role {
        Role::EmbedW1 | Role::EmbedW2 => (32, g.embed),
        Role::Qk => (c, g.qk),
        Role::V => (c, g.v),
        Role::Wo => (HEAD_WIDTH * l.heads, g.wo),
        Role::W1 => (c, g.w1),
        Role::W2 => (4 * c, g.w2),
        Role::MergeW => (4 * c, g.merge),
        Role::ExpandW => (l.expand_in.unwrap_or(c), g.expand),
        Role::TailW => (c, g.tail),
        // Not matrices.
        _ => (1, 0.0),
    }
}

fn f16_bits(x: f32) -> u16 {
    f16::from_f32_rne(x)
}

/// One head's `[64][96]` score bias. The 64 window keys (the queries themselves, 8x8 in raster
/// order) get a true relative-position table: one value per offset (dy, dx), `-slope · |(dy,
/// dx)| + noise`. The 32 halo keys get `-slope · halo_distance + noise` each, the same for every
/// query.
pub fn synth_score_bias(rng: &mut SplitMix64, p: &RrSynthParams) -> Vec<u16> {
    let slope = rng.range(p.score_slope);
    let mut table = [0u16; 15 * 15];
    for (i, v) in table.iter_mut().enumerate() {
        let (dy, dx) = ((i / 15) as f32 - 7.0, (i % 15) as f32 - 7.0);
        let noise = (rng.uniform() * 2.0 - 1.0) * p.score_noise;
        *v = f16_bits(noise - slope * (dx * dx + dy * dy).sqrt());
    }
    let halo: Vec<u16> = (0..32)
        .map(|_| {
            let noise = (rng.uniform() * 2.0 - 1.0) * p.score_noise;
            f16_bits(noise - slope * p.halo_distance)
        })
        .collect();
    let mut out = vec![0u16; 64 * 96];
    for q in 0..64 {
        for key in 0..96 {
            out[q * 96 + key] = if key < 64 {
                let dy = q / 8 + 7 - key / 8;
                let dx = q % 8 + 7 - key % 8;
                table[dy * 15 + dx]
            } else {
                halo[key - 64]
            };
        }
    }
    out
}

fn synth_item(seed: u64, p: &RrSynthParams, id: LayerId, index: usize, item: &Item) -> Values {
    let mut rng = stream(seed, id.index(), index);
    let c = id.layer().channels;
    match item.kind {
        ItemKind::Bytes { len } => Values::Bytes(vec![0; len]),
        ItemKind::Fp8(m) => {
            let (k, gain) = matrix_scale(p, id, item.role);
            let scale = gain / (k as f32).sqrt();
            Values::Codes(
                (0..m.len())
                    .map(|_| e4m3::from_f32((rng.normal() * scale).clamp(-p.clip, p.clip)))
                    .collect(),
            )
        }
        ItemKind::F16(v) => {
            let values = match item.role {
                Role::G1 | Role::G2 => {
                    let root = (c as f32).sqrt();
                    (0..v.count)
                        .map(|_| f16_bits(root * rng.range(p.norm_gain)))
                        .collect()
                }
                Role::TailB => (0..v.count)
                    .map(|_| f16_bits(rng.range((-p.tail_bias, p.tail_bias))))
                    .collect(),
                _ => (0..v.count)
                    .map(|_| f16_bits(rng.range((-p.bias, p.bias))))
                    .collect(),
            };
            Values::Halves(values)
        }
        ItemKind::ScoreBias(_) => Values::Halves(synth_score_bias(&mut rng, p)),
    }
}

/// The natural values of every item of layer `id`.
pub fn synth_layer_values(seed: u64, p: &RrSynthParams, id: LayerId) -> Vec<Values> {
    layout::layout(id)
        .items()
        .iter()
        .enumerate()
        .map(|(i, item)| synth_item(seed, p, id, i, item))
        .collect()
}

/// The eleven images. (The values are made from the layout's own items, so encoding them cannot
/// fail; an error would be a bug here, reported rather than panicking.)
pub fn synthesize(seed: u64, p: &RrSynthParams) -> Result<RrWeights, ImageError> {
    let images = LayerId::ALL
        .par_iter()
        .map(|&id| encode_layer(id, &synth_layer_values(seed, p, id)))
        .collect::<Result<Vec<_>, _>>()?;
    RrWeights::from_images(images)
}

/// What [`write_model`] produced.
#[derive(Debug, Clone)]
pub struct RrSynthReport {
    pub dir: PathBuf,
    pub weights: RrWeights,
    pub manifest: openngx::model::manifest::Manifest,
}

/// Synthesize the eleven images and write them as an RR model directory at `out`, atomically
/// (see `model_write`).
pub fn write_model(
    out: &Path,
    seed: u64,
    params: &RrSynthParams,
    force: bool,
) -> Result<RrSynthReport, ModelError> {
    let target = crate::model_write::OutDir::check(out, force)?;
    let weights = synthesize(seed, params).map_err(|e| ModelError::Output {
        path: out.to_path_buf(),
        reason: e.to_string(),
    })?;
    let manifest = build_manifest(
        format!("openngx synth-model --feature rr (seed {seed})"),
        &weights,
    );
    target.write(&stage_files(&weights), &manifest)?;
    Ok(RrSynthReport {
        dir: out.to_path_buf(),
        weights,
        manifest,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deterministic_seeded_and_in_range() {
        let p = RrSynthParams::DEFAULT;
        let a = synthesize(0, &p).expect("synthesize");
        let b = synthesize(0, &p).expect("synthesize");
        let c = synthesize(1, &p).expect("synthesize");
        assert_eq!(a, b);
        for id in LayerId::ALL {
            assert_ne!(a.image(id), c.image(id), "{id}");
        }
        let enc0 = a.layer(LayerId::Enc0);
        assert!(enc0.noise_table().expect("enc0").iter().all(|&b| b == 0));
        // Gains are √C·[0.8, 1.2].
        for id in LayerId::ALL {
            let root = (id.layer().channels as f32).sqrt();
            for g in a.layer(id).g1().into_iter().chain(a.layer(id).g2()) {
                let v = f16::to_f32(g);
                assert!((0.79 * root..=1.21 * root).contains(&v), "{id}: gain {v}");
            }
        }
    }

    /// The seed-0 manifest (which holds every image's SHA-256) is committed: any change to the
    /// recipe, the layout or the fragment orders shows up here. Update it only on purpose.
    #[test]
    fn seed0_matches_committed_digest() {
        use sha2::{Digest, Sha256};
        let w = synthesize(0, &RrSynthParams::DEFAULT).expect("synthesize");
        let m = build_manifest("openngx synth-model --feature rr (seed 0)".into(), &w);
        let json = m.to_json();
        assert_eq!(
            hex::encode(Sha256::digest(json.as_bytes())),
            "aeba02ebaf05a526914708020db1832b35a4975f6c35754185a9d70bbb6c35f8",
            "{json}"
        );
    }

    #[test]
    fn score_bias_window_part_is_a_relative_position_table() {
        let p = RrSynthParams::DEFAULT;
        let w = synthesize(3, &p).expect("synthesize");
        for id in LayerId::ALL {
            for h in 0..id.layer().heads {
                let b = w.layer(id).score_bias(h);
                for q in 0..64 {
                    for k in 0..64 {
                        // Shifting both by one column keeps the offset and the value.
                        if q % 8 < 7 && k % 8 < 7 {
                            assert_eq!(b[q * 96 + k], b[(q + 1) * 96 + k + 1], "{id} h{h}");
                        }
                    }
                    // The halo column is the same for every query.
                    assert_eq!(b[q * 96 + 80], b[80], "{id} h{h}");
                }
                // The diagonal (offset 0) is the least penalised window entry on average.
                let diag = f16::to_f32(b[0]);
                let far = f16::to_f32(b[63]);
                assert!(diag > far, "{id} h{h}: {diag} vs {far}");
            }
        }
    }
}
