//! Loading a model directory: [`load_with`] reads any network's directory against its
//! [`Schema`] into a [`Loaded`] (one buffer per stage file, every record located), and [`Model`] is
//! DLSS-NR's, with record lookup by (block, layer). Loading checks the manifest, every stage file's
//! size and, unless told not to, its SHA-256; any failure is a [`ModelError`], never a panic.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::error::ModelError;
use super::layout::{self, RecordId};
use super::manifest::{self, Manifest, RecordLoc, Schema, NR};

/// How much to check while loading.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoadOptions {
    /// Hash every stage file and compare with the manifest (dominates load time).
    pub verify_sha: bool,
}

impl Default for LoadOptions {
    fn default() -> Self {
        LoadOptions { verify_sha: true }
    }
}

/// Hash status of a loaded stage.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShaStatus {
    /// Hashed and equal to the manifest.
    Verified,
    /// Not hashed (`verify_sha: false`).
    NotChecked,
}

/// One stage file in memory.
#[derive(Debug, Clone)]
pub struct StageData {
    pub id: String,
    pub file: String,
    /// The SHA-256 the manifest states (as written).
    pub sha256: String,
    pub sha_status: ShaStatus,
    pub bytes: Vec<u8>,
}

/// A key for one model's weights on one device (`device`: the raw device handle): the model's
/// directory and its stages' ids, stated SHA-256s and sizes. Each network's weight registry
/// keys its uploads by it, so two directories holding the same files are two entries, and a
/// model rewritten in place (other hashes) is another.
pub fn device_key(device: u64, dir: &Path, stages: &[StageData]) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    device.hash(&mut h);
    dir.hash(&mut h);
    for s in stages {
        s.id.hash(&mut h);
        s.sha256.hash(&mut h);
        s.bytes.len().hash(&mut h);
    }
    h.finish()
}

/// A loaded, validated model.
#[derive(Debug, Clone)]
pub struct Model {
    dir: PathBuf,
    manifest: Manifest,
    stages: Vec<StageData>,
    /// In [`layout::records`] order.
    locations: Vec<RecordLoc>,
}

fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// A stage file opened and checked, not yet read.
struct OpenStage {
    shown: PathBuf,
    file: super::file::Opened,
}

/// Open every stage file of a validated manifest and check what needs no read: a regular file
/// inside the model directory (no link leads out of it), the size the manifest states, and no two
/// stages on one file under different names (compared by device and inode, so links count as
/// the file they lead to). Nothing is read here, so a model that aliases one big file many times
/// is refused before it costs memory.
fn open_stages(dir: &Path, m: &Manifest) -> Result<Vec<OpenStage>, ModelError> {
    let mut seen: HashMap<(u64, u64), &str> = HashMap::new();
    let mut out = Vec::with_capacity(m.stages.len());
    for st in &m.stages {
        let shown = manifest::stage_display_path(&st.file);
        let file =
            super::file::open_beneath(dir, &shown).map_err(|e| ModelError::untrusted(&shown, e))?;
        // Size first: a wrong-length file is refused without reading (or hashing) it.
        if file.len != st.packed_byte_length {
            return Err(ModelError::StageSize {
                path: shown,
                expected: st.packed_byte_length,
                found: file.len,
            });
        }
        if let Some(first) = seen.insert(file.identity, &st.id) {
            return Err(ModelError::AliasedStageFile {
                stage: st.id.clone(),
                first: first.to_owned(),
                file: st.file.clone(),
            });
        }
        out.push(OpenStage { shown, file });
    }
    Ok(out)
}

/// The checks of loading that need no read of a stage: the manifest parses and validates, and
/// every stage file passes [`open_stages`]. The NGX layer runs this before creating a feature
/// (the hashes cost a full read and are checked when the model is loaded).
pub fn check_files(dir: &Path) -> Result<(), ModelError> {
    check_files_with(dir, &NR)
}

/// [`check_files`] against `schema`.
pub fn check_files_with(dir: &Path, schema: &dyn Schema) -> Result<(), ModelError> {
    let manifest = Manifest::read(dir)?;
    manifest.validate_with(schema)?;
    open_stages(dir, &manifest).map(drop)
}

/// A model directory of any network, validated against its schema and held in memory.
#[derive(Debug, Clone)]
pub struct Loaded {
    pub dir: PathBuf,
    pub manifest: Manifest,
    /// Stage files in manifest order.
    pub stages: Vec<StageData>,
    /// Where each record lives, in the schema's record order.
    pub locations: Vec<RecordLoc>,
}

impl Loaded {
    /// The bytes of record `index` (schema order), or `None` past the last record.
    pub fn record(&self, index: usize) -> Option<&[u8]> {
        let loc = self.locations.get(index)?;
        // Validation proved the slice lies inside the stage and loading proved the stage length.
        self.stages[loc.stage]
            .bytes
            .get(loc.offset..loc.offset + loc.len)
    }

    /// Total bytes of all records.
    pub fn total_bytes(&self) -> usize {
        self.locations.iter().map(|l| l.len).sum()
    }
}

/// Load `<dir>/manifest.json` and the stage files under `<dir>/model/`, validated against
/// `schema`.
pub fn load_with(dir: &Path, opts: LoadOptions, schema: &dyn Schema) -> Result<Loaded, ModelError> {
    let manifest = Manifest::read(dir)?;
    let validated = manifest.validate_with(schema)?;
    let opened = open_stages(dir, &manifest)?;
    // Stages load one after another on the caller's thread, and the first failing one in
    // manifest order is reported. No pool: this runs inside CreateFeature, and a thread pool
    // (rayon's global one) would outlive the call, which the NGX Core must not allow since
    // NVIDIA's static library may `dlclose` it after the last Shutdown; SHA-256 runs at well
    // over 1 GB/s with the CPU's SHA extensions, so the ~148 MB take a fraction of a second
    // anyway.
    let stages = manifest
        .stages
        .iter()
        .zip(opened)
        .map(|(st, open)| load_stage(st, open, opts.verify_sha))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Loaded {
        dir: dir.to_path_buf(),
        manifest,
        stages,
        locations: validated.locations,
    })
}

fn load_stage(
    st: &manifest::Stage,
    open: OpenStage,
    verify: bool,
) -> Result<StageData, ModelError> {
    let OpenStage { shown, file } = open;
    // Bounded by the declared size, on the opened descriptor (the file may grow after the size
    // check).
    let bytes = file
        .read(st.packed_byte_length)
        .map_err(|e| ModelError::untrusted(&shown, e))?;
    if bytes.len() as u64 != st.packed_byte_length {
        return Err(ModelError::StageSize {
            path: shown,
            expected: st.packed_byte_length,
            found: bytes.len() as u64,
        });
    }
    let sha_status = if verify {
        let found = sha256_hex(&bytes);
        if !found.eq_ignore_ascii_case(&st.sha256) {
            return Err(ModelError::ShaMismatch {
                path: shown,
                expected: st.sha256.clone(),
                found,
            });
        }
        ShaStatus::Verified
    } else {
        ShaStatus::NotChecked
    };
    Ok(StageData {
        id: st.id.clone(),
        file: st.file.clone(),
        sha256: st.sha256.clone(),
        sha_status,
        bytes,
    })
}

impl Model {
    /// Load `<dir>/manifest.json` and the stage files under `<dir>/model/`.
    pub fn load(dir: &Path, opts: LoadOptions) -> Result<Model, ModelError> {
        let Loaded {
            dir,
            manifest,
            stages,
            locations,
        } = load_with(dir, opts, &NR)?;
        Ok(Model {
            dir,
            manifest,
            stages,
            locations,
        })
    }

    /// The model directory this was loaded from.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn manifest(&self) -> &Manifest {
        &self.manifest
    }

    /// Stage files in manifest order.
    pub fn stages(&self) -> &[StageData] {
        &self.stages
    }

    /// Where record `id` lives (stage index into [`Model::stages`], offset, length).
    pub fn location(&self, id: RecordId) -> Option<RecordLoc> {
        layout::record_index(id).map(|i| self.locations[i])
    }

    /// The bytes of record `id`, or `None` if the model format has no such record.
    pub fn try_record(&self, id: RecordId) -> Option<&[u8]> {
        let loc = self.location(id)?;
        // Validation proved the slice lies inside the stage and loading proved the stage length.
        self.stages[loc.stage]
            .bytes
            .get(loc.offset..loc.offset + loc.len)
    }

    /// The bytes of `block<block>.layer<layer>.layer`.
    ///
    /// # Panics
    /// If the model format has no such record (a programming error: the set of records is fixed,
    /// see [`layout::records`]); a loaded model always has every record.
    pub fn record(&self, block: usize, layer: usize) -> &[u8] {
        match self.try_record(RecordId::layer(block, layer)) {
            Some(r) => r,
            None => panic!("block{block}.layer{layer}: no such record in the DLSS-NR model"),
        }
    }

    /// `block70.layer0.blend_scale` as f16 bits.
    pub fn blend_scale(&self) -> u16 {
        match self.try_record(RecordId::BLEND_SCALE) {
            Some(&[lo, hi]) => u16::from_le_bytes([lo, hi]),
            // Unreachable for a loaded model (validated length 2); fall back to the shipped value.
            _ => layout::SHIPPED_BLEND_SCALE,
        }
    }

    /// Total bytes of all records.
    pub fn total_bytes(&self) -> usize {
        self.locations.iter().map(|l| l.len).sum()
    }
}
