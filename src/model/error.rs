//! Typed errors of model loading, validation and synthesis. Every message names the file and the
//! manifest field involved so that a user can find the problem without a debugger.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    #[error("{}: cannot read: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}: file missing", path.display())]
    FileMissing { path: PathBuf },
    #[error("{}: not a regular file", path.display())]
    NotAFile { path: PathBuf },
    #[error(
        "manifest.json: stage `{stage}` names the file `{file}` that stage `{first}` already uses"
    )]
    SharedStageFile {
        stage: String,
        first: String,
        file: String,
    },
    #[error(
        "manifest.json: stage `{stage}`: file `{file}` is the file stage `{first}` uses, under another name (a link)"
    )]
    AliasedStageFile {
        stage: String,
        first: String,
        file: String,
    },
    #[error("{}: resolves to {}, outside the model directory", path.display(), resolved.display())]
    OutsideModel { path: PathBuf, resolved: PathBuf },
    #[error("{}: not a plain relative path", path.display())]
    BadPath { path: PathBuf },
    #[error("{}: larger than the {limit} bytes it may have", path.display())]
    TooLarge { path: PathBuf, limit: u64 },
    #[error("manifest.json: too large (at least {len} bytes, limit {limit})")]
    ManifestTooLarge { len: u64, limit: u64 },
    /// `field` is the JSON path of the value that failed (`stages[3].packedByteLength`), when
    /// the error lies inside one.
    #[error(
        "manifest.json: bad JSON: {}{source}",
        field.as_ref().map(|f| format!("{f}: ")).unwrap_or_default()
    )]
    Json {
        field: Option<String>,
        #[source]
        source: serde_json::Error,
    },
    /// The manifest's `network` key names another network than the one being loaded.
    #[error("manifest.json: network is {found}, expected a {expected} model")]
    WrongNetwork {
        found: String,
        expected: &'static str,
    },
    #[error("manifest.json: totals.blockCount is {found}, expected {expected}")]
    BlockCount { found: u64, expected: u64 },
    #[error("manifest.json: stages[{index}].id is empty")]
    EmptyStageId { index: usize },
    #[error("manifest.json: stages[{index}].id `{id}` is used twice")]
    DuplicateStage { index: usize, id: String },
    #[error("manifest.json: stage `{stage}`: file `{file}` refused: {reason}")]
    BadStagePath {
        stage: String,
        file: String,
        reason: &'static str,
    },
    #[error("manifest.json: stage `{stage}`: sha256 `{value}` is not 64 hex digits")]
    BadSha256 { stage: String, value: String },
    #[error("manifest.json: tensors[{index}]: name `{name}` does not match block/layer/parameter (`{expected}`)")]
    NameMismatch {
        index: usize,
        name: String,
        expected: String,
    },
    #[error("manifest.json: tensors[{index}] `{name}`: no such record in the {network} model")]
    UnknownRecord {
        index: usize,
        name: String,
        network: &'static str,
    },
    #[error("manifest.json: tensors[{index}] `{name}`: byteLength {found}, the model's record has {expected}")]
    RecordLength {
        index: usize,
        name: String,
        expected: usize,
        found: u64,
    },
    #[error("manifest.json: tensors[{index}] `{name}` appears twice")]
    DuplicateTensor { index: usize, name: String },
    #[error("manifest.json: tensors[{index}] `{name}`: stage `{stage}` is not in stages[]")]
    UnknownStage {
        index: usize,
        name: String,
        stage: String,
    },
    #[error("manifest.json: tensors[{index}] `{name}`: slice stageOffset {offset} + byteLength {len} exceeds stage `{stage}` packedByteLength {stage_len}")]
    SliceOutOfRange {
        index: usize,
        name: String,
        stage: String,
        offset: u64,
        len: u64,
        stage_len: u64,
    },
    #[error(
        "manifest.json: stage `{stage}`: tensors `{first}` and `{second}` overlap (at byte {at})"
    )]
    Overlap {
        stage: String,
        first: String,
        second: String,
        at: u64,
    },
    #[error(
        "manifest.json: tensors[] has {found} records, expected {expected} (first missing: `{missing}`)"
    )]
    RecordCount {
        found: usize,
        expected: usize,
        missing: String,
    },
    #[error("{}: size {found} bytes, manifest packedByteLength says {expected}", path.display())]
    StageSize {
        path: PathBuf,
        expected: u64,
        found: u64,
    },
    #[error("{}: SHA-256 mismatch: manifest says {expected}, file has {found}", path.display())]
    ShaMismatch {
        path: PathBuf,
        expected: String,
        found: String,
    },
    #[error("{}: {reason}", path.display())]
    Output { path: PathBuf, reason: String },
}

impl ModelError {
    /// An untrusted read of `path` that failed (see `model::file`).
    pub fn untrusted(path: impl Into<PathBuf>, e: super::file::UntrustedRead) -> ModelError {
        let path = path.into();
        match e {
            super::file::UntrustedRead::Io(source) => ModelError::io(path, source),
            super::file::UntrustedRead::NotRegular => ModelError::NotAFile { path },
            super::file::UntrustedRead::TooLarge { limit } => ModelError::TooLarge { path, limit },
            super::file::UntrustedRead::Escapes { resolved, .. } => {
                ModelError::OutsideModel { path, resolved }
            }
            super::file::UntrustedRead::BadName => ModelError::BadPath { path },
        }
    }

    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> ModelError {
        let path = path.into();
        if source.kind() == std::io::ErrorKind::NotFound {
            ModelError::FileMissing { path }
        } else {
            ModelError::Io { path, source }
        }
    }
}
