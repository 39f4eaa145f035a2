//! Extraction of Ray Reconstruction's weights from a user's own `nvngx_dlssd.dll` into an RR
//! model directory, by the tensors' structure.
//!
//! The DLL is only read as bytes; the PE reader of [`crate::dll`] gives its sections, and each
//! section's raw data is searched. How the weights sit in the DLL is not documented anywhere
//! public (spec rr-network §6.1, §14: d4r captures the uploaded images instead). What openngx
//! looks for, **its own documented assumption** (docs/rr.md), is:
//!
//! * **Stages.** The eleven layers, in pipeline order (enc0..enc5, dec4..dec0), follow each other
//!   with no gap. A layer's stage holds its items in the order of its prepared image
//!   ([`openngx::rr::weights::LayerLayout::items`]: embedding, expand, g1, per head QK, V,
//!   score bias, Wo, then bo, g2, the MLP chunks with b2 after chunk 0, merge, tail), each a plain
//!   little-endian binary16 array: matrices in natural `[out][in]` order, vectors by channel, the
//!   score bias `[64 queries][96 keys]`. enc0's 4096-byte region, which the network never reads,
//!   is not in the DLL; the extracted image has zeros there.
//! * **Anchors.** A score bias is a relative-position bias: its 64x64 block over the window's own
//!   keys (queries and keys 0..63 in 8x8 raster order) holds one value per offset (dy, dx). A
//!   12288-byte run with that property and at least [`MIN_DISTINCT`] distinct values among its
//!   225 offsets is a *bias table*. Tables of one stage lie `192·C + 12288` bytes apart (one
//!   head's QK, V, bias and Wo), so a run of tables gives the stage's width and head count.
//! * **Match.** The 48 tables of the eleven stages (2 2 4 4 8 8 8 4 4 2 2 heads, C 32 .. 160) must
//!   all be at the positions the layer table implies relative to one start, inside one section.
//!   Exactly one such start must exist. Anything else is refused, naming what was found and
//!   where the structure breaks.
//!
//! Conversion: matrices go f16 -> E4M3 with RR's rounding (`numerics::rr::q8::from_f16`: round
//! to nearest even, saturating to ±448, NaN kept with its sign, §5.1); vectors and score biases
//! are copied as f16; the images are then built with `rr::weights::encode_layer`.

use std::collections::HashSet;
use std::path::Path;

use sha2::{Digest, Sha256};

use openngx::model::manifest::Manifest;
use openngx::numerics::rr::q8;
use openngx::rr::layers::LayerId;
use openngx::rr::weights::layout::{self, Item, ItemKind};
use openngx::rr::weights::model::{build_manifest, stage_files};
use openngx::rr::weights::tiles::{BIAS_BYTES, BIAS_KEYS};
use openngx::rr::weights::{encode_layer, RrWeights, Values};

use crate::dll::{read_dll, DllError, PeImage};

/// Distinct values a bias table's 225 window offsets must take at least: rules out runs of
/// zeros or of one repeated value, which satisfy the offset property trivially.
pub const MIN_DISTINCT: usize = 16;

/// Why an RR extraction failed.
#[derive(Debug, thiserror::Error)]
pub enum RrDllError {
    /// Reading or parsing the PE, or writing the output.
    #[error(transparent)]
    Dll(#[from] DllError),
    /// The DLL does not hold the eleven stages as openngx expects them.
    #[error("no Ray Reconstruction weights found: {0}")]
    Structure(String),
}

impl From<openngx::model::ModelError> for RrDllError {
    fn from(e: openngx::model::ModelError) -> RrDllError {
        RrDllError::Dll(DllError::Model(e))
    }
}

/// Where an item of a stage sits, in DLL bytes from the stage's start.
#[derive(Debug, Clone, Copy)]
struct DllItem {
    item: Item,
    offset: usize,
}

/// The items of layer `id` as stored in the DLL (the noise table excluded), and the stage's bytes.
fn dll_stage(id: LayerId) -> (Vec<DllItem>, usize) {
    let mut at = 0;
    let mut out = Vec::new();
    for item in layout::layout(id).items() {
        if matches!(item.kind, ItemKind::Bytes { .. }) {
            continue;
        }
        out.push(DllItem { item, offset: at });
        at += 2 * item.elements();
    }
    (out, at)
}

/// Bytes of all eleven stages in the DLL.
pub fn dll_bytes() -> usize {
    LayerId::ALL.into_iter().map(|l| dll_stage(l).1).sum()
}

/// Every bias table's (layer, head, offset from enc0's stage start), in pipeline order.
fn bias_positions() -> Vec<(LayerId, usize, usize)> {
    let mut base = 0;
    let mut out = Vec::new();
    for id in LayerId::ALL {
        let (items, len) = dll_stage(id);
        for d in items {
            if matches!(d.item.kind, ItemKind::ScoreBias(_)) {
                out.push((id, d.item.index, base + d.offset));
            }
        }
        base += len;
    }
    out
}

fn half(b: &[u8], i: usize) -> u16 {
    u16::from_le_bytes([b[2 * i], b[2 * i + 1]])
}

/// The offset class (dy, dx) of window query `q` and key `k` (both 0..64, 8x8 raster).
fn offset_class(q: usize, k: usize) -> usize {
    (q / 8 + 7 - k / 8) * 15 + (q % 8 + 7 - k % 8)
}

/// Whether the 12288 bytes at `t` are a bias table (see the module doc).
pub fn is_bias_table(t: &[u8]) -> bool {
    if t.len() < BIAS_BYTES {
        return false;
    }
    let v = |q: usize, k: usize| half(t, q * BIAS_KEYS + k);
    // Cheap rejections first: the diagonal (offset 0) and two shifted pairs must agree, and a
    // few different offsets must not all be equal (runs of one value).
    if v(0, 0) != v(9, 9) || v(0, 0) != v(63, 63) || v(0, 1) != v(9, 10) || v(8, 0) != v(63, 55) {
        return false;
    }
    let probes = [
        v(0, 1),
        v(0, 8),
        v(0, 9),
        v(0, 63),
        v(63, 0),
        v(7, 56),
        v(56, 7),
    ];
    if probes.iter().all(|&p| p == v(0, 0)) {
        return false;
    }
    let mut table = [None::<u16>; 225];
    for q in 0..64 {
        for k in 0..64 {
            let slot = &mut table[offset_class(q, k)];
            match *slot {
                None => *slot = Some(v(q, k)),
                Some(x) if x == v(q, k) => {}
                Some(_) => return false,
            }
        }
    }
    let distinct: HashSet<u16> = table.iter().flatten().copied().collect();
    distinct.len() >= MIN_DISTINCT
}

/// Offsets (relative to `data`, even) of every bias table in `data`. Only even offsets are
/// searched: binary16 arrays are at least 2-byte aligned (an assumption of openngx's, like the
/// rest of the structure).
pub fn find_bias_tables(data: &[u8]) -> Vec<usize> {
    if data.len() < BIAS_BYTES {
        return Vec::new();
    }
    (0..=data.len() - BIAS_BYTES)
        .step_by(2)
        .filter(|&o| is_bias_table(&data[o..o + BIAS_BYTES]))
        .collect()
}

/// Runs of tables at one head stride, for messages: `(first offset, count, C)` (C = 0: a
/// single table). Only the widths of the layer table count as strides, so a missing head
/// (twice a stride) rarely reads as a wider layer.
fn runs(tables: &[usize]) -> Vec<(usize, usize, usize)> {
    let widths: HashSet<usize> = LayerId::ALL.iter().map(|l| l.layer().channels).collect();
    let c_of = |d: usize| {
        (d > 12288 && (d - 12288) % 192 == 0 && widths.contains(&((d - 12288) / 192)))
            .then(|| (d - 12288) / 192)
    };
    let mut out: Vec<(usize, usize, usize)> = Vec::new();
    let mut i = 0;
    while i < tables.len() {
        let c = tables.get(i + 1).and_then(|&n| c_of(n - tables[i]));
        let mut j = i + 1;
        if let Some(c) = c {
            while j < tables.len() && c_of(tables[j] - tables[j - 1]) == Some(c) {
                j += 1;
            }
        }
        out.push((tables[i], j - i, c.unwrap_or(0)));
        i = j;
    }
    out
}

fn describe_runs(tables: &[usize], file_base: usize) -> String {
    let r = runs(tables);
    let mut parts: Vec<String> = r
        .iter()
        .take(16)
        .map(|&(at, n, c)| match (n, c) {
            (1, _) | (_, 0) => format!("1 at {:#x}", file_base + at),
            _ => format!("{n} heads of C={c} at {:#x}", file_base + at),
        })
        .collect();
    if r.len() > 16 {
        parts.push(format!("{} more", r.len() - 16));
    }
    parts.join(", ")
}

/// A located set of stages.
#[derive(Debug, Clone)]
pub struct Located {
    /// The section that holds them.
    pub section: String,
    /// File offset of enc0's stage.
    pub offset: usize,
    /// Bytes of the eleven stages.
    pub len: usize,
}

/// Find the eleven stages in a PE (see the module doc).
pub fn locate(pe: &[u8]) -> Result<Located, RrDllError> {
    let image = PeImage::parse(pe)?;
    let positions = bias_positions();
    let first = positions[0].2;
    let total = dll_bytes();
    let mut found: Vec<Located> = Vec::new();
    let mut report: Vec<String> = Vec::new();
    let mut tables_seen = 0;
    for s in &image.sections {
        let start = s.raw_offset as usize;
        let Some(data) = pe.get(start..start + s.raw_size as usize) else {
            continue;
        };
        let tables = find_bias_tables(data);
        if tables.is_empty() {
            continue;
        }
        tables_seen += tables.len();
        let set: HashSet<usize> = tables.iter().copied().collect();
        // Every table could be enc0's head 0; keep the start with the longest prefix of the 48.
        let mut best: Option<(usize, usize)> = None;
        for &t in &tables {
            let Some(base) = t.checked_sub(first) else {
                continue;
            };
            let prefix = positions
                .iter()
                .take_while(|&&(_, _, rel)| set.contains(&(base + rel)))
                .count();
            if best.is_none_or(|(_, p)| prefix > p) {
                best = Some((base, prefix));
            }
            if prefix < positions.len() {
                continue;
            }
            if base + total > data.len() {
                report.push(format!(
                    "section `{}`: all 48 bias tables are there from file offset {:#x}, but the \
                     eleven stages ({total} bytes) run past the section's raw data ({} bytes \
                     from {start:#x})",
                    s.name,
                    start + base,
                    data.len()
                ));
            } else {
                found.push(Located {
                    section: s.name.clone(),
                    offset: start + base,
                    len: total,
                });
            }
        }
        let Some((base, prefix)) = best else {
            continue;
        };
        if prefix < positions.len() {
            let (layer, head, rel) = positions[prefix];
            let l = layer.layer();
            let matched = match prefix {
                0 => "none of the tables".to_string(),
                _ => format!(
                    "the tables of enc0 head 0 .. {} head {} (from file offset {:#x})",
                    positions[prefix - 1].0,
                    positions[prefix - 1].1,
                    start + base + first
                ),
            };
            report.push(format!(
                "section `{}`: {} bias tables ({}); best start: {matched} follow the layer \
                 table, then {layer} head {head} (C={}, {} heads) has no bias table at file \
                 offset {:#x}",
                s.name,
                tables.len(),
                describe_runs(&tables, start),
                l.channels,
                l.heads,
                start + base + rel
            ));
        }
    }
    match found.len() {
        1 => Ok(found.remove(0)),
        0 if tables_seen == 0 => Err(RrDllError::Structure(
            "no section holds a relative-position bias table (12288 bytes of binary16, 64x96, \
             whose 64x64 window block has one value per offset (dy, dx))"
                .into(),
        )),
        0 => Err(RrDllError::Structure(format!(
            "the bias tables do not form the eleven stages (enc0..enc5, dec4..dec0 with 2 2 4 4 8 \
             8 8 4 4 2 2 heads): {}",
            report.join("; ")
        ))),
        n => Err(RrDllError::Structure(format!(
            "the eleven stages occur {n} times ({}); refusing to guess which is the model",
            found
                .iter()
                .map(|f| format!("section `{}` file offset {:#x}", f.section, f.offset))
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}

/// Convert the stages at `stages` (the bytes [`locate`] found) into the eleven images.
pub fn convert(stages: &[u8]) -> Result<RrWeights, RrDllError> {
    if stages.len() != dll_bytes() {
        return Err(RrDllError::Structure(format!(
            "{} bytes of stages, expected {}",
            stages.len(),
            dll_bytes()
        )));
    }
    let mut base = 0;
    let mut images = Vec::with_capacity(LayerId::ALL.len());
    for id in LayerId::ALL {
        let (items, len) = dll_stage(id);
        let stage = &stages[base..base + len];
        let mut values = Vec::new();
        for item in layout::layout(id).items() {
            if let ItemKind::Bytes { len } = item.kind {
                values.push(Values::Bytes(vec![0; len]));
                continue;
            }
            let Some(d) = items.iter().find(|d| d.item == item) else {
                continue;
            };
            let raw = &stage[d.offset..d.offset + 2 * item.elements()];
            let halves = (0..item.elements()).map(|i| half(raw, i));
            values.push(match item.kind {
                ItemKind::Fp8(_) => Values::Codes(halves.map(q8::from_f16).collect()),
                _ => Values::Halves(halves.collect()),
            });
        }
        images.push(encode_layer(id, &values).map_err(|e| RrDllError::Structure(e.to_string()))?);
        base += len;
    }
    RrWeights::from_images(images).map_err(|e| RrDllError::Structure(e.to_string()))
}

/// The eleven stages of `weights` as openngx's extractor expects them in a DLL (the inverse of
/// [`convert`]; E4M3 codes become the halves they hold, NaN codes a NaN of the same sign), for
/// tests and for anyone checking the format.
pub fn stage_bytes(weights: &RrWeights) -> Vec<u8> {
    let mut out = Vec::with_capacity(dll_bytes());
    for id in LayerId::ALL {
        let img = weights.layer(id);
        for d in dll_stage(id).0 {
            let halves: Vec<u16> = match img.item(&d.item) {
                Values::Codes(codes) => codes
                    .iter()
                    .map(|&c| {
                        let h = q8::to_f16(c);
                        if q8::is_nan(c) {
                            h | (u16::from(c & 0x80) << 8)
                        } else {
                            h
                        }
                    })
                    .collect(),
                Values::Halves(h) => h,
                Values::Bytes(_) => Vec::new(),
            };
            for h in halves {
                out.extend_from_slice(&h.to_le_bytes());
            }
        }
    }
    out
}

/// What [`extract`] found and made.
#[derive(Debug, Clone)]
pub struct RrExtracted {
    pub located: Located,
    /// SHA-256 (hex) of the eleven stages' bytes in the DLL.
    pub stages_sha256: String,
    pub weights: RrWeights,
    pub manifest: Manifest,
    /// Matrix entries that saturated to ±448 or were NaN in the DLL (the conversion keeps NaN).
    pub saturated: u64,
    pub nan: u64,
}

/// Locate, check and convert the weights of a DLL held in memory; `source` names it in the
/// manifest's `generator`.
pub fn extract(pe: &[u8], source: &str) -> Result<RrExtracted, RrDllError> {
    let located = locate(pe)?;
    let stages = pe
        .get(located.offset..located.offset + located.len)
        .ok_or_else(|| RrDllError::Structure("the stages run past the end of the file".into()))?;
    let weights = convert(stages)?;
    let stages_sha256 = hex::encode(Sha256::digest(stages));
    let (mut saturated, mut nan) = (0, 0);
    for id in LayerId::ALL {
        let img = weights.layer(id);
        for d in dll_stage(id).0 {
            if let Values::Codes(c) = img.item(&d.item) {
                saturated += c.iter().filter(|&&x| x & 0x7F == 0x7E).count() as u64;
                nan += c.iter().filter(|&&x| q8::is_nan(x)).count() as u64;
            }
        }
    }
    let manifest = build_manifest(
        format!(
            "openngx extract-model --feature rr ({source}, section {} file offset {:#x}, stages \
             sha256 {stages_sha256})",
            located.section, located.offset
        ),
        &weights,
    );
    Ok(RrExtracted {
        located,
        stages_sha256,
        weights,
        manifest,
        saturated,
        nan,
    })
}

/// Read `dll`, extract its RR weights and write the model directory `out` atomically (refusing a
/// non-empty `out` unless `force`; see `model_write`).
pub fn extract_to_dir(dll: &Path, out: &Path, force: bool) -> Result<RrExtracted, RrDllError> {
    let target = crate::model_write::OutDir::check(out, force)?;
    let pe = read_dll(dll)?;
    let source = dll
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| dll.display().to_string());
    let ex = extract(&pe, &source)?;
    drop(pe);
    target.write(&stage_files(&ex.weights), &ex.manifest)?;
    Ok(ex)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f16_bits(x: f32) -> u16 {
        openngx::numerics::f16::from_f32_rne(x)
    }

    #[test]
    fn stage_sizes_and_positions() {
        // Each stage holds its image's values at 2 bytes each, less enc0's 4096-byte region and
        // with every E4M3 byte doubled.
        for id in LayerId::ALL {
            let lay = layout::layout(id);
            let want: usize = lay
                .items()
                .iter()
                .filter(|i| !matches!(i.kind, ItemKind::Bytes { .. }))
                .map(|i| 2 * i.elements())
                .sum();
            assert_eq!(dll_stage(id).1, want, "{id}");
        }
        let pos = bias_positions();
        assert_eq!(pos.len(), 48);
        // Within a stage the tables step 192C + 12288 bytes.
        for w in pos.windows(2) {
            if w[0].0 == w[1].0 {
                let c = w[0].0.layer().channels;
                assert_eq!(w[1].2 - w[0].2, 192 * c + 12288, "{}", w[0].0);
            } else {
                // Between stages the distance is no head stride, so runs split at stage ends.
                let d = w[1].2 - w[0].2;
                assert!(
                    !(d > 12288 && (d - 12288) % 192 == 0 && ((d - 12288) / 192) % 32 == 0),
                    "{} -> {}: {d}",
                    w[0].0,
                    w[1].0
                );
            }
        }
    }

    #[test]
    fn bias_table_recognition() {
        let table = |f: &dyn Fn(usize, usize) -> u16| {
            let mut t = vec![0u8; BIAS_BYTES];
            for q in 0..64 {
                for k in 0..96 {
                    let at = 2 * (q * 96 + k);
                    t[at..at + 2].copy_from_slice(&f(q, k).to_le_bytes());
                }
            }
            t
        };
        let rel = |q: usize, k: usize| {
            if k < 64 {
                f16_bits(-0.25 * offset_class(q, k) as f32)
            } else {
                f16_bits(k as f32)
            }
        };
        assert!(is_bias_table(&table(&rel)));
        // Zeros or one repeated value: not a table.
        assert!(!is_bias_table(&table(&|_, _| 0)));
        assert!(!is_bias_table(&table(&|_, _| 0x3C00)));
        // One entry off breaks it.
        assert!(!is_bias_table(&table(&|q, k| {
            if (q, k) == (33, 20) {
                0x1234
            } else {
                rel(q, k)
            }
        })));
        // Too few distinct offsets (only 4 values).
        assert!(!is_bias_table(&table(&|q, k| f16_bits(
            (offset_class(q, k.min(63)) % 4) as f32
        ))));
        // Found at its offset inside other bytes, and nowhere else.
        let mut data = vec![0x5Au8; 1000];
        data.extend(table(&rel));
        data.extend(vec![0u8; 3000]);
        assert_eq!(find_bias_tables(&data), [1000]);
    }
}
