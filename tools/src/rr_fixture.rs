//! Ray Reconstruction fixture directories ("captured frames"): a temporal sequence of the CPU
//! reference written with everything a later replay through the C ABI needs to compare bit for
//! bit, frame by frame and tensor by tensor. Written by `openngx reference --feature rr`.
//!
//! Layout (all little-endian, `[rows][channels]` row-major):
//!
//! * `manifest.json` — [`RrFixture`]: sizes, preset, the model's manifest SHA-256, the guide
//!   table (each NGX key with the lanes of `guides.f32` it fills), and per frame its parameters
//!   (the NGX scalars: jitter, MV scale, exposures, reset) and files with their SHA-256;
//! * `frame-NNN/color.f32` — `[render][4]` f32, the `Color` input;
//! * `frame-NNN/guides.f32` — `[render][16]` f32, every guide by `rr::graph::guide` lane;
//! * `frame-NNN/<tensor>.bin` — every tensor the graph publishes (`output` is `[output][4]` f16,
//!   the NGX `Output`; the layers' block outputs, the surfaces and the input stage as the CPU
//!   reference publishes them), in graph order;
//! * `digests.txt` — `f<frame>.<tensor> <SHA-256>` per published tensor, the format of
//!   `tests/golden/rr-reference-*.txt`, so a fixture of the golden sequence can be checked
//!   against the committed digests with a text comparison.
//!
//! The directory appears only when complete (written under a temporary name, then renamed).

use std::fs;
use std::path::{Path, PathBuf};

use openngx::rr::cpu_frame::{FrameParams, FrameResult};
use openngx::rr::feature::Guide;
use openngx::rr::geometry::Size;
use openngx::rr::preset::Preset;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// The fixture format's version.
pub const FORMAT: u32 = 1;

/// One guide of the table: the NGX key and the lanes of `guides.f32` it fills.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GuideLanes {
    pub key: String,
    pub first_lane: usize,
    pub lanes: usize,
}

/// One file of a frame.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileEntry {
    /// The published tensor's name (or `color`, `guides` for the inputs).
    pub name: String,
    /// Relative to the fixture directory.
    pub file: String,
    pub bytes: u64,
    pub sha256: String,
}

/// One frame's NGX parameters and files.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FrameEntry {
    pub index: u32,
    /// `Jitter.Offset.X/Y`.
    pub jitter: [f32; 2],
    /// `MV.Scale.X/Y`.
    pub mv_scale: [f32; 2],
    /// `DLSS.Pre.Exposure`.
    pub pre_exposure: f32,
    /// `DLSS.Exposure.Scale`.
    pub exposure_scale: f32,
    /// `Reset`.
    pub reset: bool,
    /// Inputs first (`color`, `guides`), then the published tensors in graph order.
    pub files: Vec<FileEntry>,
}

/// `manifest.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RrFixture {
    /// `"dlss-rr"`.
    pub network: String,
    pub format: u32,
    /// `Width`, `Height` at creation.
    pub render: [u32; 2],
    /// `OutWidth`, `OutHeight` at creation.
    pub output: [u32; 2],
    /// `D` or `E` (`RayReconstruction.Hint.Render.Preset.*` = 4 or 5).
    pub preset: String,
    /// The creation flags the sequence assumes (`DLSS.Feature.Create.Flags`: IsHDR | MVLowRes).
    pub create_flags: u32,
    /// SHA-256 of the model's `manifest.json`.
    pub model_manifest_sha256: String,
    /// What wrote it.
    pub generator: String,
    pub guides: Vec<GuideLanes>,
    pub frames: Vec<FrameEntry>,
}

/// One recorded frame: its inputs and what the CPU reference published.
pub struct RrRecordedFrame<'a> {
    pub params: FrameParams,
    pub color: &'a [f32],
    pub guides: &'a [f32],
    pub result: &'a FrameResult,
}

/// What went wrong writing a fixture.
#[derive(Debug, thiserror::Error)]
pub enum RrFixtureError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: {what}")]
    Invalid { path: PathBuf, what: String },
}

fn io(path: &Path) -> impl Fn(std::io::Error) -> RrFixtureError + '_ {
    move |source| RrFixtureError::Io {
        path: path.to_path_buf(),
        source,
    }
}

fn f32_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// `f<frame>.<tensor> <SHA-256>` lines of every published tensor (the golden files' format).
pub fn digests(frames: &[&FrameResult]) -> String {
    let mut text = String::new();
    for (f, r) in frames.iter().enumerate() {
        for (name, data) in &r.published {
            text.push_str(&format!(
                "f{f}.{name} {:x}\n",
                Sha256::digest(data.to_bytes())
            ));
        }
    }
    text
}

/// Writes the fixture directory `out` (which must not exist). `model_manifest` is the bytes of
/// the model's `manifest.json` (its hash is recorded).
pub fn write(
    out: &Path,
    render: Size,
    output: Size,
    preset: Preset,
    model_manifest: &[u8],
    frames: &[RrRecordedFrame],
) -> Result<RrFixture, RrFixtureError> {
    let invalid = |what: &str| RrFixtureError::Invalid {
        path: out.to_path_buf(),
        what: what.to_string(),
    };
    if frames.is_empty() {
        return Err(invalid("no frame to record"));
    }
    if out.exists() {
        return Err(invalid("exists already; choose a new directory"));
    }
    let parent = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = out
        .file_name()
        .ok_or_else(|| invalid("output path has no final component"))?
        .to_string_lossy()
        .into_owned();
    let tmp = parent.join(format!(".{name}.openngx-tmp-{}", std::process::id()));
    match write_tree(&tmp, render, output, preset, model_manifest, frames) {
        Ok(m) => {
            fs::rename(&tmp, out).map_err(io(out))?;
            Ok(m)
        }
        Err(e) => {
            let _ = fs::remove_dir_all(&tmp);
            Err(e)
        }
    }
}

fn write_tree(
    dir: &Path,
    render: Size,
    output: Size,
    preset: Preset,
    model_manifest: &[u8],
    frames: &[RrRecordedFrame],
) -> Result<RrFixture, RrFixtureError> {
    fs::create_dir_all(dir).map_err(io(dir))?;
    let mut entries = Vec::new();
    for (i, fr) in frames.iter().enumerate() {
        let sub = format!("frame-{i:03}");
        fs::create_dir(dir.join(&sub)).map_err(io(&dir.join(&sub)))?;
        let mut files = Vec::new();
        let mut put = |name: &str, bytes: Vec<u8>| -> Result<(), RrFixtureError> {
            let file = format!("{sub}/{name}");
            let path = dir.join(&file);
            fs::write(&path, &bytes).map_err(io(&path))?;
            files.push(FileEntry {
                name: name
                    .trim_end_matches(".f32")
                    .trim_end_matches(".bin")
                    .to_string(),
                file,
                bytes: bytes.len() as u64,
                sha256: format!("{:x}", Sha256::digest(&bytes)),
            });
            Ok(())
        };
        put("color.f32", f32_bytes(fr.color))?;
        put("guides.f32", f32_bytes(fr.guides))?;
        for (name, data) in &fr.result.published {
            put(&format!("{name}.bin"), data.to_bytes())?;
        }
        let p = &fr.params;
        entries.push(FrameEntry {
            index: i as u32,
            jitter: p.jitter,
            mv_scale: p.mv_scale,
            pre_exposure: p.pre_exposure,
            exposure_scale: p.exposure_scale,
            reset: p.reset,
            files,
        });
    }
    let results: Vec<&FrameResult> = frames.iter().map(|f| f.result).collect();
    let digest_path = dir.join("digests.txt");
    fs::write(&digest_path, digests(&results)).map_err(io(&digest_path))?;
    let guides = Guide::ALL
        .into_iter()
        .filter_map(|g| {
            g.lanes().map(|(first_lane, lanes)| GuideLanes {
                key: g.key().to_string(),
                first_lane,
                lanes,
            })
        })
        .collect();
    let manifest = RrFixture {
        network: "dlss-rr".into(),
        format: FORMAT,
        render: [render.w, render.h],
        output: [output.w, output.h],
        preset: preset.name().into(),
        create_flags: 0b11,
        model_manifest_sha256: format!("{:x}", Sha256::digest(model_manifest)),
        generator: format!(
            "openngx {} reference --feature rr",
            env!("CARGO_PKG_VERSION")
        ),
        guides,
        frames: entries,
    };
    let json = serde_json::to_string_pretty(&manifest).map_err(|e| RrFixtureError::Invalid {
        path: dir.to_path_buf(),
        what: e.to_string(),
    })?;
    let path = dir.join("manifest.json");
    fs::write(&path, json).map_err(io(&path))?;
    Ok(manifest)
}

/// Reads `manifest.json` of the fixture directory `dir` and checks its network and format.
pub fn load(dir: &Path) -> Result<RrFixture, RrFixtureError> {
    let path = dir.join("manifest.json");
    let text = fs::read_to_string(&path).map_err(io(&path))?;
    let invalid = |what: String| RrFixtureError::Invalid {
        path: path.clone(),
        what,
    };
    let m: RrFixture = serde_json::from_str(&text).map_err(|e| invalid(e.to_string()))?;
    if m.network != "dlss-rr" {
        return Err(invalid(format!("network `{}`, not dlss-rr", m.network)));
    }
    if m.format != FORMAT {
        return Err(invalid(format!(
            "format {}, this tool reads {FORMAT}",
            m.format
        )));
    }
    if m.frames.is_empty() {
        return Err(invalid("no frame".into()));
    }
    Ok(m)
}

/// Reads one file of a frame and checks its size and SHA-256 against the manifest.
pub fn read_file(dir: &Path, entry: &FileEntry) -> Result<Vec<u8>, RrFixtureError> {
    let path = dir.join(&entry.file);
    let bytes = fs::read(&path).map_err(io(&path))?;
    let sha = format!("{:x}", Sha256::digest(&bytes));
    if bytes.len() as u64 != entry.bytes || sha != entry.sha256 {
        return Err(RrFixtureError::Invalid {
            path,
            what: format!(
                "{} bytes with SHA-256 {sha}; the manifest says {} bytes, {}",
                bytes.len(),
                entry.bytes,
                entry.sha256
            ),
        });
    }
    Ok(bytes)
}

/// Little-endian f32 bytes as values (`color.f32`, `guides.f32`); `None` when the length is not
/// a multiple of 4.
pub fn f32_values(bytes: &[u8]) -> Option<Vec<f32>> {
    if bytes.len() % 4 != 0 {
        return None;
    }
    Some(
        bytes
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect(),
    )
}
