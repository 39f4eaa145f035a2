//! `manifest.json`: parsing (serde) and structural validation against a network's fixed shape, its
//! [`Schema`] (DLSS-NR's: spec nr-network §3.1, §3.2, §8.12, [`NR`]; Ray Reconstruction brings its
//! own from `rr::weights::model`). Validation needs no stage file: it proves that the manifest is
//! the schema's network, that every record (for DLSS-NR the 153 of §3.2) is present exactly once
//! with its length, inside a safely named stage, and that no two slices of a stage overlap. File
//! sizes and hashes are the loader's job.

use std::collections::{HashMap, HashSet};
use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::blocks::BLOCK_COUNT;
use super::error::ModelError;
use super::layout::{self, Param, RecordId, RECORD_COUNT};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Totals {
    pub block_count: u64,
    /// Informational (written by synthesis; not required when reading).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tensor_count: Option<u64>,
    /// Informational (written by synthesis; not required when reading).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub byte_length: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Stage {
    pub id: String,
    /// Relative to `<model dir>/model/`.
    pub file: String,
    pub packed_byte_length: u64,
    /// Hex SHA-256 of the file (compared case-insensitively).
    pub sha256: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Tensor {
    pub name: String,
    pub block: u64,
    pub layer: u64,
    pub parameter: String,
    /// Stage id.
    pub stage: String,
    pub stage_offset: u64,
    pub byte_length: u64,
}

/// The manifest as written on disk. Unknown keys are ignored when reading.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    /// Free-form provenance (synthesis writes its name and seed here).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generator: Option<String>,
    /// Which network the model is for ([`Schema::network`]); absent in DLSS-NR's manifests,
    /// which predate the key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<String>,
    pub totals: Totals,
    pub stages: Vec<Stage>,
    pub tensors: Vec<Tensor>,
}

/// Where a record lives after validation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordLoc {
    /// Index into [`Manifest::stages`].
    pub stage: usize,
    pub offset: usize,
    pub len: usize,
}

/// Result of [`Manifest::validate`]: the location of every record, in the schema's record order
/// ([`layout::records`] for DLSS-NR).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Validated {
    pub locations: Vec<RecordLoc>,
}

/// The fixed shape a network's manifest is checked against: which network it names, how many
/// blocks it declares, and which records (tensor entries) exist with which lengths. Records are
/// numbered `0..record_count()`; [`Validated::locations`] follows that order.
pub trait Schema {
    /// The `network` value the manifest must carry; `None`: the key must be absent (DLSS-NR).
    fn network(&self) -> Option<&'static str>;
    /// The network's name in messages (`DLSS-NR`).
    fn label(&self) -> &'static str;
    /// The `totals.blockCount` the manifest must state.
    fn block_count(&self) -> u64;
    /// How many records a model has.
    fn record_count(&self) -> usize;
    /// The `name` a tensor entry must carry, given its other fields.
    fn expected_name(&self, t: &Tensor) -> String;
    /// The record a (correctly named) tensor entry is, or `None` if the network has none such.
    fn record_index(&self, t: &Tensor) -> Option<usize>;
    /// Length in bytes of record `index`.
    fn record_len(&self, index: usize) -> usize;
    /// Manifest name of record `index`.
    fn record_name(&self, index: usize) -> String;
}

/// DLSS-NR's schema: 71 blocks, the 153 records of [`layout::records`], no `network` key.
pub struct NrSchema;

/// DLSS-NR's schema (what [`Manifest::validate`] checks against).
pub const NR: NrSchema = NrSchema;

impl Schema for NrSchema {
    fn network(&self) -> Option<&'static str> {
        None
    }
    fn label(&self) -> &'static str {
        "DLSS-NR"
    }
    fn block_count(&self) -> u64 {
        BLOCK_COUNT as u64
    }
    fn record_count(&self) -> usize {
        RECORD_COUNT
    }
    fn expected_name(&self, t: &Tensor) -> String {
        format!("block{}.layer{}.{}", t.block, t.layer, t.parameter)
    }
    fn record_index(&self, t: &Tensor) -> Option<usize> {
        let id = RecordId {
            block: usize::try_from(t.block).ok()?,
            layer: usize::try_from(t.layer).ok()?,
            param: Param::parse(&t.parameter)?,
        };
        layout::record_index(id)
    }
    fn record_len(&self, index: usize) -> usize {
        layout::records()[index].len
    }
    fn record_name(&self, index: usize) -> String {
        layout::records()[index].id.name()
    }
}

/// The network a manifest names, for messages: its `network` value, or DLSS-NR's when absent.
fn network_label(network: Option<&str>) -> String {
    match network {
        None => "none (a DLSS-NR model)".to_string(),
        Some(n) => format!("`{n}`"),
    }
}

/// Largest manifest accepted (the real one is ~25 KB); stops a hostile file from exhausting memory.
pub const MANIFEST_LIMIT: u64 = 16 << 20;

impl Manifest {
    /// Parse manifest JSON (no validation).
    pub fn from_json(text: &str) -> Result<Manifest, ModelError> {
        // Through serde_path_to_error so that a type error names its field
        // (`stages[3].packedByteLength: invalid type: ...`), not only a line and column.
        let de = &mut serde_json::Deserializer::from_str(text);
        let manifest: Manifest = serde_path_to_error::deserialize(&mut *de).map_err(|e| {
            let field = e.path().to_string();
            ModelError::Json {
                field: (field != ".").then_some(field),
                source: e.into_inner(),
            }
        })?;
        // Trailing characters after the object are refused as serde_json::from_str would.
        de.end().map_err(|source| ModelError::Json {
            field: None,
            source,
        })?;
        Ok(manifest)
    }

    /// Read and parse `<dir>/manifest.json` (no validation).
    pub fn read(dir: &Path) -> Result<Manifest, ModelError> {
        let path = dir.join("manifest.json");
        // Regular files only, checked on the descriptor, never more than the limit read (a FIFO
        // or `/dev/zero` named manifest.json is refused at once), and no link out of `dir`.
        let bytes = super::file::read_beneath(dir, Path::new("manifest.json"), MANIFEST_LIMIT)
            .map_err(|e| match e {
                super::file::UntrustedRead::TooLarge { limit } => ModelError::ManifestTooLarge {
                    len: limit + 1,
                    limit,
                },
                other => ModelError::untrusted(&path, other),
            })?;
        let text = String::from_utf8(bytes).map_err(|_| {
            ModelError::io(
                &path,
                std::io::Error::new(std::io::ErrorKind::InvalidData, "not UTF-8"),
            )
        })?;
        Manifest::from_json(&text)
    }

    /// Pretty JSON (stable key order: the struct's field order).
    pub fn to_json(&self) -> String {
        // Serialising plain structs of strings and integers cannot fail.
        serde_json::to_string_pretty(self).unwrap_or_default() + "\n"
    }

    /// Check the manifest against DLSS-NR's shape; see the module doc for the rules.
    pub fn validate(&self) -> Result<Validated, ModelError> {
        self.validate_with(&NR)
    }

    /// Check the manifest against `schema`; see the module doc for the rules.
    pub fn validate_with(&self, schema: &dyn Schema) -> Result<Validated, ModelError> {
        if self.network.as_deref() != schema.network() {
            return Err(ModelError::WrongNetwork {
                found: network_label(self.network.as_deref()),
                expected: schema.label(),
            });
        }
        if self.totals.block_count != schema.block_count() {
            return Err(ModelError::BlockCount {
                found: self.totals.block_count,
                expected: schema.block_count(),
            });
        }
        let mut stage_ids: HashMap<&str, usize> = HashMap::new();
        // Stage files by their normalised name: two stages naming one file would make the
        // loader hold (and the memory bound count) the file twice.
        let mut files: HashMap<String, &str> = HashMap::new();
        for (index, st) in self.stages.iter().enumerate() {
            if st.id.is_empty() {
                return Err(ModelError::EmptyStageId { index });
            }
            if stage_ids.insert(&st.id, index).is_some() {
                return Err(ModelError::DuplicateStage {
                    index,
                    id: st.id.clone(),
                });
            }
            check_stage_file(&st.id, &st.file)?;
            let key = Path::new(&st.file)
                .components()
                .filter_map(|c| match c {
                    Component::Normal(s) => Some(s.to_string_lossy().into_owned()),
                    _ => None,
                })
                .collect::<Vec<_>>()
                .join("/");
            if let Some(first) = files.insert(key, &st.id) {
                return Err(ModelError::SharedStageFile {
                    stage: st.id.clone(),
                    first: first.to_owned(),
                    file: st.file.clone(),
                });
            }
            if st.sha256.len() != 64 || !st.sha256.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err(ModelError::BadSha256 {
                    stage: st.id.clone(),
                    value: st.sha256.clone(),
                });
            }
        }

        let mut locations: Vec<Option<RecordLoc>> = vec![None; schema.record_count()];
        let mut names: HashSet<&str> = HashSet::new();
        for (index, t) in self.tensors.iter().enumerate() {
            let expected = schema.expected_name(t);
            if t.name != expected {
                return Err(ModelError::NameMismatch {
                    index,
                    name: t.name.clone(),
                    expected,
                });
            }
            if !names.insert(&t.name) {
                return Err(ModelError::DuplicateTensor {
                    index,
                    name: t.name.clone(),
                });
            }
            let rec = schema
                .record_index(t)
                .ok_or_else(|| ModelError::UnknownRecord {
                    index,
                    name: t.name.clone(),
                    network: schema.label(),
                })?;
            let want = schema.record_len(rec);
            if t.byte_length != want as u64 {
                return Err(ModelError::RecordLength {
                    index,
                    name: t.name.clone(),
                    expected: want,
                    found: t.byte_length,
                });
            }
            let stage =
                *stage_ids
                    .get(t.stage.as_str())
                    .ok_or_else(|| ModelError::UnknownStage {
                        index,
                        name: t.name.clone(),
                        stage: t.stage.clone(),
                    })?;
            let stage_len = self.stages[stage].packed_byte_length;
            let end = t.stage_offset.checked_add(t.byte_length);
            if !matches!(end, Some(e) if e <= stage_len) {
                return Err(ModelError::SliceOutOfRange {
                    index,
                    name: t.name.clone(),
                    stage: t.stage.clone(),
                    offset: t.stage_offset,
                    len: t.byte_length,
                    stage_len,
                });
            }
            // Both fit in the stage length, which the loader compares with a real file size; on a
            // 32-bit target a stage over 4 GiB is refused here rather than truncated.
            let offset =
                usize::try_from(t.stage_offset).map_err(|_| ModelError::SliceOutOfRange {
                    index,
                    name: t.name.clone(),
                    stage: t.stage.clone(),
                    offset: t.stage_offset,
                    len: t.byte_length,
                    stage_len,
                })?;
            locations[rec] = Some(RecordLoc {
                stage,
                offset,
                len: want,
            });
        }

        if let Some(missing) = locations.iter().position(Option::is_none) {
            return Err(ModelError::RecordCount {
                found: self.tensors.len(),
                expected: schema.record_count(),
                missing: schema.record_name(missing),
            });
        }
        let locations: Vec<RecordLoc> = locations.into_iter().flatten().collect();

        // Overlap: sort each stage's slices by offset and compare neighbours.
        let mut by_stage: Vec<(usize, usize, usize, usize)> = locations
            .iter()
            .enumerate()
            .map(|(rec, l)| (l.stage, l.offset, l.offset + l.len, rec))
            .collect();
        by_stage.sort_unstable();
        for pair in by_stage.windows(2) {
            let (sa, _, end_a, ra) = pair[0];
            let (sb, start_b, _, rb) = pair[1];
            if sa == sb && start_b < end_a {
                return Err(ModelError::Overlap {
                    stage: self.stages[sa].id.clone(),
                    first: schema.record_name(ra),
                    second: schema.record_name(rb),
                    at: start_b as u64,
                });
            }
        }
        Ok(Validated { locations })
    }
}

/// Refuse stage file names that could leave `<dir>/model/`: empty, absolute, `..`, Windows drive or
/// backslash forms, NUL.
fn check_stage_file(stage: &str, file: &str) -> Result<(), ModelError> {
    let refuse = |reason| {
        Err(ModelError::BadStagePath {
            stage: stage.to_string(),
            file: file.to_string(),
            reason,
        })
    };
    if file.is_empty() {
        return refuse("empty path");
    }
    if file.contains('\0') {
        return refuse("NUL in path");
    }
    if file.starts_with('/') || file.starts_with('\\') || Path::new(file).is_absolute() {
        return refuse("absolute path");
    }
    // `C:foo` is drive-relative on Windows; refuse any colon before the first separator.
    if file
        .split(['/', '\\'])
        .next()
        .is_some_and(|s| s.contains(':'))
    {
        return refuse("drive prefix");
    }
    if file.split(['/', '\\']).any(|seg| seg == "..") {
        return refuse("`..` component");
    }
    if Path::new(file)
        .components()
        .any(|c| !matches!(c, Component::Normal(_) | Component::CurDir))
    {
        return refuse("not a plain relative path");
    }
    Ok(())
}

/// Path of a stage file: `<dir>/model/<file>` (call after [`Manifest::validate`]).
pub fn stage_path(dir: &Path, file: &str) -> PathBuf {
    dir.join("model").join(file)
}

/// The path shown in messages about a stage file: `model/<file>`.
pub fn stage_display_path(file: &str) -> PathBuf {
    Path::new("model").join(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stage_paths() {
        assert!(check_stage_file("s", "enc32").is_ok());
        assert!(check_stage_file("s", "sub/enc32.bin").is_ok());
        assert!(check_stage_file("s", "./enc32").is_ok());
        for bad in [
            "",
            "/etc/passwd",
            "../x",
            "a/../../x",
            "a\\..\\x",
            "\\\\server\\x",
            "C:x",
            "a\0b",
        ] {
            assert!(check_stage_file("s", bad).is_err(), "{bad:?}");
        }
    }
}
