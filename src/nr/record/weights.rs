//! A loaded model on the device: uploaded once per (device, model) and shared by every feature
//! through a [`DeviceRegistry`] (the last `Arc` frees it).
//!
//! Two device-local buffers:
//! * `records`: the record bytes the kernels read in place ([`GpuWeights::binding`]: scales,
//!   priors, temperatures). The byte ranges of the matrices that are re-laid below are left out,
//!   so every weight byte is resident once (the re-laid copy is the only copy of a matrix). Each
//!   kept piece keeps its record offset modulo 256, so an offset that was aligned in the record
//!   stays aligned on the device;
//! * `relaid`: the FP8 matrices of the schedule as `[groups][n][k]` E4M3 bytes in natural K order
//!   (K contiguous per output column: a 16-K group of one column is 16 aligned bytes) and the f16
//!   adapter/head matrices as `[n][k]` halves, so the GEMM kernels never decode the fragment
//!   packing of spec §3.4. The fused FFN's matrices at C = 32 and 64 are there a second time as
//!   f16 `[groups][n][k]` halves ([`GpuWeights::widened`], under 1 MiB): widened once here,
//!   exactly, so each of its workgroups copies them into shared memory instead of widening them
//!   (`gemm_ffn::reads_widened`).
//!
//! Uploads are recorded into the caller's command buffer through an [`UploadBatch`], which must
//! outlive that submission. A feature creation stages its upload first and records it only once
//! nothing else can fail ([`GpuWeights::for_feature`], [`FeatureWeights`]); the weights are
//! shared with other features from then on.

use std::collections::HashMap;
use std::sync::Arc;

use ash::vk::Handle;

use crate::gpu::{
    BufferBinding, DeviceRegistry, DeviceShare, GpuBuffer, GpuContext, GpuError, MemoryKind,
    Recorder, UploadBatch,
};
use crate::model::{layout, Model};
use crate::nr::geometry::Geometry;
use crate::nr::graph::{self, MatRef, Op, WeightRef};
use crate::nr::reference::Weights;
use crate::numerics::{e4m3, tables};

use super::gemm::GemmShape;
use super::gemm_ffn;
use super::RecordError;

/// The registry key of `model` on `ctx`'s device.
fn registry_key(ctx: &GpuContext, model: &Model) -> u64 {
    crate::model::load::device_key(ctx.device().handle().as_raw(), model.dir(), model.stages())
}

/// Alignment of every record and re-laid matrix inside its buffer.
const ALIGN: u64 = 256;
/// Uploads are split into pieces of at most this many bytes (bounded staging allocations).
const UPLOAD_CHUNK: usize = 16 << 20;

static REGISTRY: DeviceRegistry<GpuWeights> = DeviceRegistry::new();

fn align_up(v: u64) -> u64 {
    v.div_ceil(ALIGN) * ALIGN
}

/// One kept piece of a record in the `records` buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Piece {
    /// Where the piece starts in its record.
    start: usize,
    /// Its length.
    len: usize,
    /// Where it lies in `records`.
    at: u64,
}

/// The pieces of a record that are kept in place, and the record's length.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct KeptRecord {
    len: usize,
    pieces: Vec<Piece>,
}

/// The parts of `[0, len)` not covered by `cut` (ranges, any order, may overlap or exceed `len`).
fn kept_ranges(len: usize, mut cut: Vec<std::ops::Range<usize>>) -> Vec<std::ops::Range<usize>> {
    cut.sort_by_key(|r| r.start);
    let mut kept = Vec::new();
    let mut at = 0usize;
    for r in cut {
        let start = r.start.min(len);
        if start > at {
            kept.push(at..start);
        }
        at = at.max(r.end.min(len));
    }
    if at < len {
        kept.push(at..len);
    }
    kept
}

/// A model's weights on one device.
pub struct GpuWeights {
    records: GpuBuffer,
    relaid: GpuBuffer,
    /// `(block, layer)` -> the record's kept pieces.
    record_at: HashMap<(usize, usize), KeptRecord>,
    /// FP8 matrices `[groups][n][k]` in `relaid`.
    matrices: HashMap<MatRef, u64>,
    /// f16 matrices `[n][k]` in `relaid`, keyed by (where, k, n).
    f16_matrices: HashMap<(WeightRef, usize, usize), u64>,
    /// FP8 matrices widened to f16 `[groups][n][k]` in `relaid` (the second copy).
    widened: HashMap<MatRef, u64>,
    /// The kernels' lookup table ([`tables::gpu`]) in `relaid`.
    table: u64,
}

impl std::fmt::Debug for GpuWeights {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuWeights")
            .field("records", &self.records.size())
            .field("relaid", &self.relaid.size())
            .field("matrices", &self.matrices.len())
            .finish()
    }
}

/// What the schedule reads: its FP8 matrices, its f16 fragment matrices (at, k, n) and the FP8
/// matrices it also reads widened to f16.
struct ScheduleMatrices {
    fp8: Vec<MatRef>,
    f16: Vec<(WeightRef, usize, usize)>,
    widened: Vec<MatRef>,
}

/// The matrices the schedule reads (the same for every geometry). The widened ones are both
/// GEMMs of each FFN pair whose fused kernel copies them as f16 ([`gemm_ffn::reads_widened`]).
fn schedule_matrices() -> Result<ScheduleMatrices, RecordError> {
    let geometry = Geometry::new(64, 64).map_err(|e| RecordError::Graph(e.to_string()))?;
    let g = graph::build(&geometry);
    let mut m = ScheduleMatrices {
        fp8: Vec::new(),
        f16: Vec::new(),
        widened: Vec::new(),
    };
    for (i, node) in g.nodes.iter().enumerate() {
        match &node.op {
            Op::Gemm { mat, .. } if !m.fp8.contains(mat) => m.fp8.push(*mat),
            Op::Adapter { weights, .. } => m.f16.push((*weights, 16, 32)),
            Op::Head { weights, .. } => m.f16.push((*weights, 32, 4)),
            _ => {}
        }
        let Some(next) = g.nodes.get(i + 1) else {
            continue;
        };
        if let (Some(s1), Some(s2), Op::Gemm { mat: m1, .. }, Op::Gemm { mat: m2, .. }) = (
            GemmShape::of_node(&g, node),
            GemmShape::of_node(&g, next),
            &node.op,
            &next.op,
        ) {
            if gemm_ffn::computes(&s1, &s2) && gemm_ffn::reads_widened(&s1) {
                for mat in [m1, m2] {
                    if !m.widened.contains(mat) {
                        m.widened.push(*mat);
                    }
                }
            }
        }
    }
    Ok(m)
}

fn stage_all(batch: &mut UploadBatch, dst: &GpuBuffer, data: &[u8]) -> Result<(), GpuError> {
    for (i, piece) in data.chunks(UPLOAD_CHUNK).enumerate() {
        batch.stage(dst, (i * UPLOAD_CHUNK) as u64, piece)?;
    }
    Ok(())
}

/// The weights a feature creation uses: already on the device (shared), or staged by this
/// creation and shared with other features only once [`DeviceShare::record`] has recorded their
/// upload (`gpu::share`'s rule). Dropping a staged value (a failed creation) frees everything it
/// staged; nothing was recorded.
pub type FeatureWeights = DeviceShare<GpuWeights>;

impl GpuWeights {
    /// Upload `model` to `ctx`'s device: copies are recorded into `rec` (followed by a
    /// transfer->compute barrier), staging memory is held by `batch`.
    pub fn upload(
        ctx: &Arc<GpuContext>,
        model: &Model,
        rec: &mut Recorder<'_>,
        batch: &mut UploadBatch,
    ) -> Result<GpuWeights, RecordError> {
        let w = GpuWeights::stage(ctx, model, batch)?;
        batch.record(rec);
        rec.transfer_to_compute();
        Ok(w)
    }

    /// The device buffers of `model` on `ctx`'s device, their upload staged in `batch` (recorded
    /// by [`UploadBatch::record`]; follow it with a transfer->compute barrier).
    pub fn stage(
        ctx: &Arc<GpuContext>,
        model: &Model,
        batch: &mut UploadBatch,
    ) -> Result<GpuWeights, RecordError> {
        let ScheduleMatrices { fp8, f16, widened } = schedule_matrices()?;
        // What each record gives to the re-laid buffer: those bytes are not kept in place.
        let mut relaid_ranges: HashMap<(usize, usize), Vec<std::ops::Range<usize>>> =
            HashMap::new();
        for m in &fp8 {
            relaid_ranges
                .entry((m.at.block, m.at.layer))
                .or_default()
                .push(m.at.offset..m.at.offset + m.bytes());
        }
        for &(w, k, n) in &f16 {
            // As stored: n padded to 16 columns (see `Weights::f16_matrix`).
            let stored = k * n.div_ceil(16) * 16 * 2;
            relaid_ranges
                .entry((w.block, w.layer))
                .or_default()
                .push(w.offset..w.offset + stored);
        }
        // Records' kept pieces. Only `layer` records are read by the kernels (the blend scale is
        // applied on the host side of the schedule), so nothing else is placed.
        let mut record_at = HashMap::new();
        let mut at = 0u64;
        let mut placed = Vec::new();
        for spec in layout::records() {
            let id = spec.id;
            if id.param != layout::Param::Layer {
                continue;
            }
            let Some(bytes) = model.try_record(id) else {
                continue;
            };
            let cut = relaid_ranges
                .get(&(id.block, id.layer))
                .cloned()
                .unwrap_or_default();
            let mut kept = KeptRecord {
                len: bytes.len(),
                pieces: Vec::new(),
            };
            for r in kept_ranges(bytes.len(), cut) {
                // Same offset modulo ALIGN as in the record.
                let mut p = align_up(at) + (r.start as u64 % ALIGN);
                if p < at {
                    p += ALIGN;
                }
                kept.pieces.push(Piece {
                    start: r.start,
                    len: r.len(),
                    at: p,
                });
                placed.push((p, &bytes[r.clone()]));
                at = p + r.len() as u64;
            }
            record_at.insert((id.block, id.layer), kept);
        }
        let mut host = vec![0u8; align_up(at).max(ALIGN) as usize];
        for (off, bytes) in &placed {
            host[*off as usize..*off as usize + bytes.len()].copy_from_slice(bytes);
        }
        let records = GpuBuffer::new(
            ctx,
            "nr weights (records)",
            host.len() as u64,
            MemoryKind::DeviceLocal,
        )?;
        stage_all(batch, &records, &host)?;
        drop(host);

        // Re-laid matrices, each at an aligned offset of its own.
        let reference = Weights::new(model);
        let mut relaid_host = Vec::new();
        let place = |host: &mut Vec<u8>, bytes: &mut dyn Iterator<Item = u8>| {
            let at = host.len() as u64;
            host.extend(bytes);
            host.resize(align_up(host.len() as u64) as usize, 0);
            at
        };
        let weights_error =
            |e: crate::nr::reference::ReferenceError| RecordError::Weights(e.to_string());
        let mut matrices = HashMap::new();
        for m in fp8 {
            let t = reference.matrix(&m).map_err(weights_error)?;
            matrices.insert(m, place(&mut relaid_host, &mut t.iter().copied()));
        }
        // The widened copies: each code decoded by the numerics' own widening, which equals the
        // kernels' (e4m3_widen.glsl; NaN codes become +0 in both).
        let mut widened_at = HashMap::new();
        for m in widened {
            let t = reference.matrix(&m).map_err(weights_error)?;
            let mut halves = t.iter().flat_map(|&c| e4m3::to_f16(c).to_le_bytes());
            widened_at.insert(m, place(&mut relaid_host, &mut halves));
        }
        let mut f16_matrices = HashMap::new();
        for (w, k, n) in f16 {
            let t = reference.f16_matrix(w, k, n).map_err(weights_error)?;
            let mut halves = t.iter().flat_map(|h| h.to_le_bytes());
            f16_matrices.insert((w, k, n), place(&mut relaid_host, &mut halves));
        }
        // The kernels' lookup table: derived from the numerics, not the model, but kept with the
        // weights so that it is uploaded once per device and shared the same way.
        let table = place(&mut relaid_host, &mut tables::gpu().into_iter());
        let relaid = GpuBuffer::new(
            ctx,
            "nr weights (re-laid matrices)",
            relaid_host.len().max(ALIGN as usize) as u64,
            MemoryKind::DeviceLocal,
        )?;
        stage_all(batch, &relaid, &relaid_host)?;
        Ok(GpuWeights {
            records,
            relaid,
            record_at,
            matrices,
            f16_matrices,
            widened: widened_at,
            table,
        })
    }

    /// The weights of `model` on `ctx`'s device, uploaded by the first caller (recorded into its
    /// `rec`; that submission must run before any user's) and shared while any user holds them.
    pub fn shared(
        ctx: &Arc<GpuContext>,
        model: &Model,
        rec: &mut Recorder<'_>,
        batch: &mut UploadBatch,
    ) -> Result<Arc<GpuWeights>, RecordError> {
        REGISTRY.get_or_try_insert(registry_key(ctx, model), || {
            Ok(Arc::new(GpuWeights::upload(ctx, model, rec, batch)?))
        })
    }

    /// The weights of `model` for a feature being created on `ctx`'s device: shared when a
    /// live feature's creation uploaded them, else staged in `batch` (nothing recorded; see
    /// [`FeatureWeights`]).
    pub fn for_feature(
        ctx: &Arc<GpuContext>,
        model: &Model,
        batch: &mut UploadBatch,
    ) -> Result<FeatureWeights, RecordError> {
        REGISTRY.share_or_stage(registry_key(ctx, model), || {
            GpuWeights::stage(ctx, model, batch)
        })
    }

    /// `len` bytes of record `w.block`/`w.layer` from `w.offset`, in place in the records buffer.
    pub fn binding(&self, w: WeightRef, len: u64) -> Result<BufferBinding, GpuError> {
        let what = || format!("weights block{}.layer{}", w.block, w.layer);
        let kept = self
            .record_at
            .get(&(w.block, w.layer))
            .ok_or_else(|| GpuError::invalid(what(), "no such record"))?;
        let rlen = kept.len;
        if w.offset as u64 + len > rlen as u64 {
            return Err(GpuError::invalid(
                what(),
                format!("{len} bytes at offset {} exceed its {rlen} bytes", w.offset),
            ));
        }
        let piece = kept
            .pieces
            .iter()
            .find(|p| w.offset >= p.start && w.offset as u64 + len <= (p.start + p.len) as u64)
            .ok_or_else(|| {
                GpuError::invalid(
                    what(),
                    format!(
                        "{len} bytes at offset {} are not kept in place (they belong to a \
                         re-laid matrix)",
                        w.offset
                    ),
                )
            })?;
        let align = self
            .records
            .context()
            .capabilities()
            .min_storage_buffer_offset_alignment
            .max(1);
        let off = piece.at + (w.offset - piece.start) as u64;
        if off % align != 0 {
            return Err(GpuError::invalid(
                what(),
                format!(
                    "offset {} is not a multiple of the device's storage-buffer alignment {align}",
                    w.offset
                ),
            ));
        }
        self.records.range(off, len)
    }

    /// An FP8 matrix of the schedule as `[groups][n][k]` E4M3 bytes.
    pub fn matrix(&self, m: &MatRef) -> Result<BufferBinding, GpuError> {
        let off = self.matrices.get(m).ok_or_else(|| {
            GpuError::invalid(
                format!(
                    "matrix block{}.layer{}@{}",
                    m.at.block, m.at.layer, m.at.offset
                ),
                "not a matrix of the schedule",
            )
        })?;
        self.relaid.range(*off, m.bytes() as u64)
    }

    /// An FP8 matrix of the schedule widened to f16 `[groups][n][k]` halves, where a kernel
    /// reads it so ([`gemm_ffn::reads_widened`]); `None` for the others.
    pub fn widened(&self, m: &MatRef) -> Result<Option<BufferBinding>, GpuError> {
        self.widened
            .get(m)
            .map(|off| self.relaid.range(*off, 2 * m.bytes() as u64))
            .transpose()
    }

    /// An f16 matrix (adapter `k=16, n=32`, head `k=32, n=4`) as `[n][k]` halves.
    pub fn f16_matrix(&self, w: WeightRef, k: usize, n: usize) -> Result<BufferBinding, GpuError> {
        let off = self.f16_matrices.get(&(w, k, n)).ok_or_else(|| {
            GpuError::invalid(
                format!("f16 matrix block{}.layer{}@{}", w.block, w.layer, w.offset),
                "not an f16 matrix of the schedule",
            )
        })?;
        self.relaid.range(*off, (k * n * 2) as u64)
    }

    /// The GEMM's E4 epilogue table ([`tables::GEMM_EPILOGUE`] of [`tables::gpu`]).
    pub fn gemm_table(&self) -> Result<BufferBinding, GpuError> {
        self.table_part(tables::GEMM_EPILOGUE)
    }

    /// The cooperative normalisation's table ([`tables::NORMALIZE`] of [`tables::gpu`]).
    pub fn normalize_table(&self) -> Result<BufferBinding, GpuError> {
        self.table_part(tables::NORMALIZE)
    }

    /// The attention's table ([`tables::ATTENTION`] of [`tables::gpu`]).
    pub fn attention_table(&self) -> Result<BufferBinding, GpuError> {
        self.table_part(tables::ATTENTION)
    }

    fn table_part(&self, part: std::ops::Range<usize>) -> Result<BufferBinding, GpuError> {
        self.relaid
            .range(self.table + part.start as u64, part.len() as u64)
    }

    /// Bytes of the widened copies ([`GpuWeights::widened`]) within [`GpuWeights::bytes`]: the
    /// only weight bytes held twice.
    pub fn widened_bytes(&self) -> u64 {
        self.widened.keys().map(|m| 2 * m.bytes() as u64).sum()
    }

    /// Device bytes held (both buffers).
    pub fn bytes(&self) -> u64 {
        self.records.size() + self.relaid.size()
    }
}

#[cfg(test)]
mod tests {
    use super::{kept_ranges, schedule_matrices};

    /// The widened copies are W1 and W2 of each window block whose FFN `ffn_rows_coopmat.glsl`
    /// runs: the 2 field blocks and the 8 others at C = 32 (one expert), the 8 at C = 64 (two),
    /// 36 matrices, each also one of the schedule's FP8 matrices; none of the larger experts.
    #[test]
    fn the_widened_matrices_are_the_c32_and_c64_ffn_pairs() {
        let m = schedule_matrices().expect("schedule");
        assert_eq!(m.widened.len(), 36);
        for w in &m.widened {
            assert!(m.fp8.contains(w), "{w:?}");
            let (k, n) = match w.groups {
                1 => (32, 128),
                2 => (64, 128),
                g => panic!("{g} groups: {w:?}"),
            };
            assert!((w.k, w.n) == (k, n) || (w.k, w.n) == (128, 32), "{w:?}");
        }
        let w1 = m.widened.iter().filter(|w| w.n == 128).count();
        assert_eq!(w1, 18);
    }

    #[test]
    fn kept_ranges_are_the_complement_of_the_cuts() {
        assert_eq!(kept_ranges(10, vec![]), vec![0..10]);
        assert_eq!(kept_ranges(10, std::iter::once(0..10).collect()), vec![]);
        // Unsorted, overlapping and past the end.
        assert_eq!(
            kept_ranges(10, vec![6..8, 2..4, 3..5, 9..20]),
            vec![0..2, 5..6, 8..9]
        );
        assert_eq!(
            kept_ranges(10, std::iter::once(12..20).collect()),
            vec![0..10]
        );
    }
}
