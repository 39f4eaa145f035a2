//! Weight slices of a loaded model in the shapes the CPU reference wants, unpacked once and cached.

use std::collections::HashMap;
use std::sync::Arc;

use parking_lot::Mutex;

use crate::model::blocks::PRIOR_BYTES;
use crate::model::{pack, Model};
use crate::nr::graph::{MatRef, WeightRef};
use crate::numerics::{ExponentConvention, PackedE4m3};

use super::exec::ReferenceError;

/// A matrix decoded for the fast GEMM, one operand per group.
type DecodedMatrix = Arc<Vec<PackedE4m3>>;

/// Access to a model's weights for the reference.
pub struct Weights<'m> {
    model: &'m Model,
    matrices: Mutex<HashMap<MatRef, Arc<Vec<u8>>>>,
    decoded: Mutex<HashMap<(MatRef, ExponentConvention), DecodedMatrix>>,
}

impl<'m> Weights<'m> {
    pub fn new(model: &'m Model) -> Self {
        Weights {
            model,
            matrices: Mutex::new(HashMap::new()),
            decoded: Mutex::new(HashMap::new()),
        }
    }

    /// The bytes of record `w.block`/`w.layer` from `w.offset` on, at least `len` long.
    pub fn bytes(&self, w: WeightRef, len: usize) -> Result<&'m [u8], ReferenceError> {
        let rec = self
            .model
            .try_record(crate::model::layout::RecordId::layer(w.block, w.layer))
            .ok_or(ReferenceError::MissingRecord {
                block: w.block,
                layer: w.layer,
            })?;
        rec.get(w.offset..w.offset + len)
            .ok_or(ReferenceError::ShortRecord {
                block: w.block,
                layer: w.layer,
                offset: w.offset,
                len,
            })
    }

    /// An FP8 matrix as `[groups][n][k]`: row n of group g holds the weights of output column n for
    /// the group's natural input channels 0..k.
    pub fn matrix(&self, m: &MatRef) -> Result<Arc<Vec<u8>>, ReferenceError> {
        if let Some(v) = self.matrices.lock().get(m) {
            return Ok(v.clone());
        }
        let packed = self.bytes(m.at, m.bytes())?;
        let kt = m.groups * m.k;
        // [n][groups*k], natural K order.
        let t = pack::unpack_fp8_transposed(packed, kt, m.n);
        let mut out = vec![0u8; m.bytes()];
        for g in 0..m.groups {
            for n in 0..m.n {
                let dst = (g * m.n + n) * m.k;
                let src = n * kt + g * m.k;
                out[dst..dst + m.k].copy_from_slice(&t[src..src + m.k]);
            }
        }
        let out = Arc::new(out);
        self.matrices.lock().insert(*m, out.clone());
        Ok(out)
    }

    /// The matrix decoded for the fast GEMM: one `n x k` operand per group.
    pub fn decoded(
        &self,
        m: &MatRef,
        conv: ExponentConvention,
    ) -> Result<Arc<Vec<PackedE4m3>>, ReferenceError> {
        if let Some(v) = self.decoded.lock().get(&(*m, conv)) {
            return Ok(v.clone());
        }
        let t = self.matrix(m)?;
        let per = m.n * m.k;
        let mut groups = Vec::with_capacity(m.groups);
        for g in 0..m.groups {
            groups.push(
                PackedE4m3::new(&t[g * per..(g + 1) * per], m.n, m.k, conv)
                    .map_err(|e| ReferenceError::Numerics(e.to_string()))?,
            );
        }
        let v = Arc::new(groups);
        self.decoded.lock().insert((*m, conv), v.clone());
        Ok(v)
    }

    /// `len` little-endian f16 values.
    pub fn f16s(&self, w: WeightRef, len: usize) -> Result<Vec<u16>, ReferenceError> {
        let b = self.bytes(w, 2 * len)?;
        Ok(b.chunks_exact(2)
            .map(|c| u16::from_le_bytes([c[0], c[1]]))
            .collect())
    }

    /// `len` little-endian f32 values.
    pub fn f32s(&self, w: WeightRef, len: usize) -> Result<Vec<f32>, ReferenceError> {
        let b = self.bytes(w, 4 * len)?;
        Ok(b.chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect())
    }

    /// An f16 fragment matrix (adapter 16x32, head 32x4) as `[n][k]` halves.
    pub fn f16_matrix(&self, w: WeightRef, k: usize, n: usize) -> Result<Vec<u16>, ReferenceError> {
        let stored = k * n.div_ceil(16) * 16 * 2;
        let natural = pack::unpack_f16(self.bytes(w, stored)?, k, n); // [k][n]
        let mut t = vec![0u16; n * k];
        for kk in 0..k {
            for nn in 0..n {
                t[nn * k + kk] = natural[kk * n + nn];
            }
        }
        Ok(t)
    }

    /// The 64x64 priors of `heads` heads as `[head][q_phys][k_phys]` halves.
    pub fn priors(&self, w: WeightRef, heads: usize) -> Result<Vec<u16>, ReferenceError> {
        let b = self.bytes(w, heads * PRIOR_BYTES)?;
        let mut out = Vec::with_capacity(heads * 4096);
        for prior in b.chunks_exact(PRIOR_BYTES) {
            out.extend(pack::prior_physical(prior));
        }
        Ok(out)
    }
}
