//! The weights as the CPU reference reads them: every graph matrix natural `[n][k]` and decoded
//! for the k32 kernel once, every vector and score bias as halves.

use std::collections::HashMap;

use crate::numerics::f16::F16;
use crate::numerics::rr::k32::Packed;
use crate::rr::graph::{Mat, MatRef, VecRef, Vector};
use crate::rr::layers::LayerId;
use crate::rr::weights::{LayerImage, Matrix, RrWeights};

use super::ReferenceError;

/// The decoded weights of a model.
pub struct Weights {
    mats: HashMap<(LayerId, Mat), (Matrix, Packed)>,
    vecs: HashMap<(LayerId, Vector), Vec<F16>>,
    biases: HashMap<LayerId, Vec<Vec<F16>>>,
}

/// Stack matrices `[n_i][k]` along n.
fn stack_n(parts: &[Matrix]) -> Matrix {
    let k = parts[0].k;
    Matrix {
        n: parts.iter().map(|m| m.n).sum(),
        k,
        codes: parts.iter().flat_map(|m| m.codes.iter().copied()).collect(),
    }
}

/// Join matrices `[n][k_i]` along k.
fn join_k(parts: &[Matrix]) -> Matrix {
    let n = parts[0].n;
    let k: usize = parts.iter().map(|m| m.k).sum();
    let mut codes = Vec::with_capacity(n * k);
    for row in 0..n {
        for m in parts {
            codes.extend_from_slice(m.row(row));
        }
    }
    Matrix { n, k, codes }
}

impl Weights {
    /// Decode every matrix, vector and score bias the graph refers to.
    pub fn new(w: &RrWeights) -> Result<Self, ReferenceError> {
        let mut mats = HashMap::new();
        let mut vecs = HashMap::new();
        let mut biases = HashMap::new();
        for id in LayerId::ALL {
            let img: LayerImage = w.layer(id);
            let l = id.layer();
            let heads = 0..l.heads;
            let chunks = 0..l.mlp_chunks();
            let mut put = |m: Mat, x: Matrix| -> Result<(), ReferenceError> {
                let p = Packed::new(&x.codes, x.n, x.k)
                    .map_err(|e| ReferenceError::Weights(e.to_string()))?;
                mats.insert((id, m), (x, p));
                Ok(())
            };
            put(
                Mat::Qk,
                stack_n(&heads.clone().map(|h| img.qk(h)).collect::<Vec<_>>()),
            )?;
            put(
                Mat::V,
                stack_n(&heads.clone().map(|h| img.v(h)).collect::<Vec<_>>()),
            )?;
            put(
                Mat::Wo,
                join_k(&heads.clone().map(|h| img.wo(h)).collect::<Vec<_>>()),
            )?;
            put(
                Mat::W1,
                stack_n(&chunks.clone().map(|c| img.w1(c)).collect::<Vec<_>>()),
            )?;
            put(
                Mat::W2,
                join_k(&chunks.clone().map(|c| img.w2(c)).collect::<Vec<_>>()),
            )?;
            vecs.insert((id, Vector::G1), img.g1());
            vecs.insert((id, Vector::G2), img.g2());
            vecs.insert((id, Vector::Bo), img.bo());
            vecs.insert((id, Vector::B2), img.b2());
            vecs.insert((id, Vector::B1), chunks.flat_map(|c| img.b1(c)).collect());
            biases.insert(id, heads.map(|h| img.score_bias(h)).collect());
            for (m, v, lw) in [
                (Mat::Merge, Vector::MergeBias, img.merge()),
                (Mat::Expand, Vector::ExpandBias, img.expand()),
                (Mat::Tail, Vector::TailBias, img.tail()),
                (Mat::EmbedP1, Vector::EmbedB1, img.embed_p1()),
                (Mat::EmbedP2, Vector::EmbedB2, img.embed_p2()),
            ] {
                if let Some(lw) = lw {
                    put(m, lw.w)?;
                    vecs.insert((id, v), lw.b);
                }
            }
        }
        Ok(Weights { mats, vecs, biases })
    }

    /// A matrix, checked against the graph's shape.
    pub fn mat(&self, r: &MatRef) -> Result<(&Matrix, &Packed), ReferenceError> {
        let (m, p) = self
            .mats
            .get(&(r.layer, r.mat))
            .ok_or_else(|| ReferenceError::Weights(format!("{} has no {:?}", r.layer, r.mat)))?;
        if (m.n, m.k) != (r.n, r.k) {
            return Err(ReferenceError::Weights(format!(
                "{} {:?} is {}x{}, the graph says {}x{}",
                r.layer, r.mat, m.n, m.k, r.n, r.k
            )));
        }
        Ok((m, p))
    }

    /// A vector, checked against the graph's length.
    pub fn vec(&self, r: &VecRef) -> Result<&[F16], ReferenceError> {
        let v = self
            .vecs
            .get(&(r.layer, r.vec))
            .ok_or_else(|| ReferenceError::Weights(format!("{} has no {:?}", r.layer, r.vec)))?;
        if v.len() != r.len {
            return Err(ReferenceError::Weights(format!(
                "{} {:?} has {} values, the graph says {}",
                r.layer,
                r.vec,
                v.len(),
                r.len
            )));
        }
        Ok(v)
    }

    /// A layer's score biases, `[head][64 queries][96 keys]`.
    pub fn score_biases(&self, layer: LayerId) -> &[Vec<F16>] {
        self.biases.get(&layer).map_or(&[], |v| v.as_slice())
    }
}
