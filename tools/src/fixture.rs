//! Fixture directories ("captured frames"): the upstream parity format (spec nr-network §4.2) plus
//! this project's temporal sequences. Written by `openngx reference`, read strictly by `parity`
//! and the C harness. The format is documented in `docs/testing.md`.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};

use openngx::nr::geometry::Geometry;

/// `manifest.json` of a fixture.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Manifest {
    pub source_dimensions: [usize; 2],
    pub full_dimensions: [usize; 2],
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proxy: Option<ProxyRef>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_features: Option<FileRef>,
    pub checks: Vec<String>,
    #[serde(default)]
    pub blocks: Vec<BlockRef>,
    #[serde(default)]
    pub transitions: Vec<TransitionRef>,
    #[serde(default)]
    pub omitted_boundaries: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference_head: Option<FileRef>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub native_output: Option<OutputRef>,
    /// openngx extension: a temporal sequence (frames 1.. after the frame described above).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sequence: Option<Sequence>,
    /// openngx extension: which MMA profile produced the references (`f13` = native).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct FileRef {
    pub file: String,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ProxyRef {
    pub file: String,
    pub width: usize,
    pub height: usize,
    #[serde(default)]
    pub conditioning: Conditioning,
    #[serde(default)]
    pub seed: u32,
    #[serde(default = "yes")]
    pub auto_mask: bool,
    /// openngx extension: motion vectors (RG f32 pixels, 8 B/pixel) of this frame.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub motion: Option<String>,
}

fn yes() -> bool {
    true
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Conditioning {
    pub local_tone: f32,
    pub local_structure: f32,
    pub skin_structure: f32,
    pub style: u32,
}

impl Default for Conditioning {
    fn default() -> Self {
        Conditioning {
            local_tone: 1.0,
            local_structure: 1.0,
            skin_structure: -1.0,
            style: 0,
        }
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct BlockRef {
    pub block: usize,
    pub width: usize,
    pub height: usize,
    pub channels: usize,
    pub file: String,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct TransitionRef {
    pub id: String,
    pub width: usize,
    pub height: usize,
    pub channels: usize,
    pub file: String,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct OutputRef {
    pub file: String,
    /// `f32` (RGBA halves stored as f32) or `u8`.
    pub dtype: String,
}

/// A temporal sequence: frame 0 is the fixture's main frame, `frames[i]` is frame i+1.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Sequence {
    pub frames: Vec<SequenceFrame>,
}

/// One later frame of a sequence.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct SequenceFrame {
    /// RGBA f32 proxy, valid size.
    pub proxy: String,
    /// RG f32 motion vectors (pixel displacement), valid size.
    pub motion: String,
    /// Evaluate-time parameters of this frame.
    pub parameters: FrameParameters,
    /// Expected composed output, RGBA halves as f32.
    pub output: String,
    /// Expected head, f32 `[field rows][4]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub head: Option<String>,
}

/// The DLSSNR.* evaluate parameters a sequence frame records.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct FrameParameters {
    pub enabled: bool,
    pub reset: bool,
    pub intensity: f32,
    pub mvec_scale: [f32; 2],
    pub conditioning: Conditioning,
    pub auto_mask: bool,
}

impl Default for FrameParameters {
    fn default() -> Self {
        FrameParameters {
            enabled: true,
            reset: false,
            intensity: 1.0,
            mvec_scale: [1.0, 1.0],
            conditioning: Conditioning::default(),
            auto_mask: true,
        }
    }
}

/// Why a fixture is refused.
#[derive(Debug, thiserror::Error)]
pub enum FixtureError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    /// `field`: the JSON path of the failing value (`.` when it is the document itself).
    #[error("{path}: invalid manifest: {}{source}", if field == "." { String::new() } else { format!("{field}: ") })]
    Json {
        path: PathBuf,
        field: String,
        source: serde_json::Error,
    },
    #[error("{path}: {what}")]
    Invalid { path: PathBuf, what: String },
}

/// A loaded, validated fixture.
#[derive(Clone, Debug)]
pub struct Fixture {
    pub dir: PathBuf,
    pub manifest: Manifest,
    pub geometry: Geometry,
    /// The size of every file the manifest names, as checked by [`Fixture::load`]: the bound of
    /// each later read.
    sizes: BTreeMap<String, u64>,
}

/// Largest fixture manifest read (real ones are a few KB).
const MANIFEST_LIMIT: u64 = 16 << 20;

/// `name` inside the fixture directory `dir`: a regular file that no link leads out of, at most
/// `limit` bytes (`openngx::model::file`).
fn read_beneath(dir: &Path, name: &str, limit: u64) -> Result<Vec<u8>, FixtureError> {
    let path = dir.join(name);
    openngx::model::file::read_beneath(dir, Path::new(name), limit).map_err(|e| untrusted(path, e))
}

fn untrusted(path: PathBuf, e: openngx::model::file::UntrustedRead) -> FixtureError {
    match e {
        openngx::model::file::UntrustedRead::Io(source) => FixtureError::Io { path, source },
        other => FixtureError::Invalid {
            path,
            what: other.to_string(),
        },
    }
}

fn rel_ok(name: &str) -> bool {
    let p = Path::new(name);
    !name.is_empty() && p.components().all(|c| matches!(c, Component::Normal(_)))
}

impl Fixture {
    /// Read and validate `dir/manifest.json` and every file it names (sizes checked).
    pub fn load(dir: &Path) -> Result<Fixture, FixtureError> {
        let mpath = dir.join("manifest.json");
        // Untrusted like a model: a regular file inside `dir`, read up to a limit, and type
        // errors name their field.
        let bytes = read_beneath(dir, "manifest.json", MANIFEST_LIMIT)?;
        let de = &mut serde_json::Deserializer::from_slice(&bytes);
        let json_err = |field: String, source| FixtureError::Json {
            path: mpath.clone(),
            field,
            source,
        };
        let manifest: Manifest = serde_path_to_error::deserialize(&mut *de)
            .map_err(|e| json_err(e.path().to_string(), e.into_inner()))?;
        de.end().map_err(|e| json_err(".".into(), e))?;
        let bad = |what: String| FixtureError::Invalid {
            path: mpath.clone(),
            what,
        };
        let [w, h] = manifest.source_dimensions;
        let (wu, hu) = (
            u32::try_from(w).unwrap_or(u32::MAX),
            u32::try_from(h).unwrap_or(u32::MAX),
        );
        let geometry =
            Geometry::new(wu, hu).map_err(|e| bad(format!("sourceDimensions {w}x{h}: {e}")))?;
        let (fw, fh) = (geometry.field.w as usize, geometry.field.h as usize);
        if manifest.full_dimensions != [fw, fh] {
            return Err(bad(format!(
                "fullDimensions {:?} do not match the geometry rule ({}x{} -> {}x{})",
                manifest.full_dimensions, w, h, fw, fh
            )));
        }
        if manifest.checks.is_empty() {
            return Err(bad("checks is empty".into()));
        }
        for c in &manifest.checks {
            if !["boundaries", "head", "output"].contains(&c.as_str()) {
                return Err(bad(format!("unknown check `{c}`")));
            }
        }
        if manifest.proxy.is_none() && manifest.input_features.is_none() {
            return Err(bad("neither `proxy` nor `inputFeatures` is given".into()));
        }
        let mut fx = Fixture {
            dir: dir.to_path_buf(),
            manifest,
            geometry,
            sizes: BTreeMap::new(),
        };
        let mut sizes = BTreeMap::new();
        let field_rows = fw * fh;
        if let Some(f) = &fx.manifest.input_features {
            check_file(
                &fx.dir,
                &mut sizes,
                "inputFeatures",
                &f.file,
                field_rows * 16 * 4,
            )?;
        }
        if let Some(p) = &fx.manifest.proxy {
            if (p.width, p.height) != (w, h) {
                return Err(bad(format!(
                    "proxy is {}x{}, sourceDimensions {w}x{h}",
                    p.width, p.height
                )));
            }
            check_file(&fx.dir, &mut sizes, "proxy", &p.file, w * h * 16)?;
            if let Some(m) = &p.motion {
                check_file(&fx.dir, &mut sizes, "proxy.motion", m, w * h * 8)?;
            }
        }
        if fx.wants("boundaries") {
            let expected = geometry.boundaries();
            let mut named: BTreeMap<String, (usize, usize, usize, &str)> = BTreeMap::new();
            for b in &fx.manifest.blocks {
                named.insert(
                    format!("block-{}", b.block),
                    (b.width, b.height, b.channels, &b.file),
                );
            }
            for t in &fx.manifest.transitions {
                named.insert(
                    format!("transition-{}", t.id),
                    (t.width, t.height, t.channels, &t.file),
                );
            }
            for b in &expected {
                match named.remove(&b.name) {
                    Some((bw, bh, bc, file)) => {
                        let (ew, eh, ec) =
                            (b.width as usize, b.height as usize, b.channels as usize);
                        if (bw, bh, bc) != (ew, eh, ec) {
                            return Err(bad(format!(
                                "boundary {} is {bw}x{bh}x{bc}, the geometry says {}x{}x{}",
                                b.name, b.width, b.height, b.channels
                            )));
                        }
                        check_file(&fx.dir, &mut sizes, &b.name, file, ew * eh * ec)?;
                    }
                    None => {
                        if !fx.manifest.omitted_boundaries.contains_key(&b.name) {
                            return Err(bad(format!(
                                "boundary {} has neither a reference nor an omission reason",
                                b.name
                            )));
                        }
                    }
                }
            }
            if let Some(name) = named.keys().next() {
                return Err(bad(format!("unknown boundary reference `{name}`")));
            }
        }
        if fx.wants("head") {
            let f = fx
                .manifest
                .reference_head
                .as_ref()
                .ok_or_else(|| bad("check `head` needs referenceHead".into()))?;
            check_file(
                &fx.dir,
                &mut sizes,
                "referenceHead",
                &f.file,
                field_rows * 16,
            )?;
        }
        if fx.wants("output") {
            let o = fx
                .manifest
                .native_output
                .as_ref()
                .ok_or_else(|| bad("check `output` needs nativeOutput".into()))?;
            let px = match o.dtype.as_str() {
                "f32" => 16,
                "u8" => 4,
                d => {
                    return Err(bad(format!(
                        "nativeOutput.dtype `{d}` (expected f32 or u8)"
                    )))
                }
            };
            if fx.manifest.proxy.is_none() {
                return Err(bad("check `output` needs a proxy".into()));
            }
            check_file(&fx.dir, &mut sizes, "nativeOutput", &o.file, w * h * px)?;
        }
        if let Some(seq) = &fx.manifest.sequence {
            for (i, f) in seq.frames.iter().enumerate() {
                let n = i + 1;
                check_file(
                    &fx.dir,
                    &mut sizes,
                    &format!("sequence frame {n} proxy"),
                    &f.proxy,
                    w * h * 16,
                )?;
                check_file(
                    &fx.dir,
                    &mut sizes,
                    &format!("sequence frame {n} motion"),
                    &f.motion,
                    w * h * 8,
                )?;
                check_file(
                    &fx.dir,
                    &mut sizes,
                    &format!("sequence frame {n} output"),
                    &f.output,
                    w * h * 16,
                )?;
                if let Some(hd) = &f.head {
                    check_file(
                        &fx.dir,
                        &mut sizes,
                        &format!("sequence frame {n} head"),
                        hd,
                        field_rows * 16,
                    )?;
                }
            }
        }
        fx.sizes = sizes;
        Ok(fx)
    }

    /// True when the manifest lists `check`.
    pub fn wants(&self, check: &str) -> bool {
        self.manifest.checks.iter().any(|c| c == check)
    }

    /// Read a file of the fixture: one its manifest names, at most the size [`Fixture::load`]
    /// checked (the file may have changed since).
    pub fn read(&self, name: &str) -> Result<Vec<u8>, FixtureError> {
        let limit = self.sizes.get(name).ok_or_else(|| FixtureError::Invalid {
            path: self.dir.join(name),
            what: "not a file this fixture's manifest names".into(),
        })?;
        read_beneath(&self.dir, name, *limit)
    }

    /// Read a file of little-endian f32 values.
    pub fn read_f32(&self, name: &str) -> Result<Vec<f32>, FixtureError> {
        Ok(bytes_to_f32(&self.read(name)?))
    }
}

/// Check that `name` (from the manifest) is a regular file of `len` bytes inside `dir`, and
/// remember its size as the bound of later reads.
fn check_file(
    dir: &Path,
    sizes: &mut BTreeMap<String, u64>,
    what: &str,
    name: &str,
    len: usize,
) -> Result<(), FixtureError> {
    let path = dir.join(name);
    if !rel_ok(name) {
        return Err(FixtureError::Invalid {
            path,
            what: format!("{what}: file name must be a relative path inside the fixture"),
        });
    }
    let opened = openngx::model::file::open_beneath(dir, Path::new(name))
        .map_err(|e| untrusted(path.clone(), e))?;
    if opened.len != len as u64 {
        return Err(FixtureError::Invalid {
            path,
            what: format!("{what}: {} bytes, expected {len}", opened.len),
        });
    }
    sizes.insert(name.to_owned(), len as u64);
    Ok(())
}

/// Little-endian f32 values from bytes.
pub fn bytes_to_f32(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// Little-endian bytes of f32 values.
pub fn f32_to_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// One frame to record in a fixture.
pub struct RecordedFrame<'a> {
    /// RGBA f32 proxy, valid size.
    pub proxy: &'a [[f32; 4]],
    /// RG f32 motion (pixels), valid size.
    pub motion: &'a [[f32; 2]],
    pub parameters: FrameParameters,
    /// What the CPU pipeline produced for it.
    pub result: &'a openngx::nr::cpu_frame::FrameResult,
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> FixtureError + '_ {
    move |source| FixtureError::Io {
        path: path.to_path_buf(),
        source,
    }
}

fn halves_to_f32_bytes(px: &[[u16; 4]]) -> Vec<u8> {
    px.iter()
        .flat_map(|p| {
            p.iter()
                .flat_map(|&h| openngx::numerics::f16::to_f32(h).to_le_bytes())
        })
        .collect()
}

/// Write a fixture directory for `frames` (frame 0 carries the boundaries, head and features;
/// later frames form the temporal sequence). Written to a temporary directory first and renamed
/// into place, so a failure leaves nothing half-written; an existing `out` is refused.
pub fn write(
    out: &Path,
    geometry: &Geometry,
    frames: &[RecordedFrame],
    profile: &str,
) -> Result<Manifest, FixtureError> {
    let invalid = |what: &str| FixtureError::Invalid {
        path: out.to_path_buf(),
        what: what.to_string(),
    };
    let first = frames
        .first()
        .ok_or_else(|| invalid("no frame to record"))?;
    let net = first
        .result
        .network
        .as_ref()
        .ok_or_else(|| invalid("frame 0 is disabled: it has no network output"))?;
    let features = first
        .result
        .features
        .as_ref()
        .ok_or_else(|| invalid("frame 0 has no features"))?;
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
    let result = write_tree(&tmp, geometry, frames, net, features, profile);
    match result {
        Ok(m) => {
            fs::rename(&tmp, out).map_err(io_err(out))?;
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
    geometry: &Geometry,
    frames: &[RecordedFrame],
    net: &openngx::nr::reference::Output,
    features: &[f32],
    profile: &str,
) -> Result<Manifest, FixtureError> {
    let put = |name: &str, bytes: &[u8]| -> Result<(), FixtureError> {
        let path = dir.join(name);
        if let Some(p) = path.parent() {
            fs::create_dir_all(p).map_err(io_err(p))?;
        }
        fs::write(&path, bytes).map_err(io_err(&path))
    };
    fs::create_dir_all(dir).map_err(io_err(dir))?;
    let (w, h) = (geometry.valid.w as usize, geometry.valid.h as usize);
    let f0 = &frames[0];
    put(
        "proxy.f32",
        &f0.proxy
            .iter()
            .flat_map(|p| p.iter().flat_map(|v| v.to_le_bytes()))
            .collect::<Vec<u8>>(),
    )?;
    put(
        "motion.f32",
        &f0.motion
            .iter()
            .flat_map(|p| p.iter().flat_map(|v| v.to_le_bytes()))
            .collect::<Vec<u8>>(),
    )?;
    put("features.f32", &f32_to_bytes(features))?;
    put("head.f32", &f32_to_bytes(&net.head))?;
    put("output.f32", &halves_to_f32_bytes(&f0.result.output))?;
    let mut blocks = Vec::new();
    let mut transitions = Vec::new();
    for (b, (name, bytes)) in geometry.boundaries().iter().zip(&net.boundaries) {
        if b.name != *name {
            return Err(FixtureError::Invalid {
                path: dir.to_path_buf(),
                what: format!("boundary order: {} vs {name}", b.name),
            });
        }
        let file = format!("native/{name}.u8");
        put(&file, bytes)?;
        let (bw, bh, bc) = (b.width as usize, b.height as usize, b.channels as usize);
        if let Some(id) = name.strip_prefix("transition-") {
            transitions.push(TransitionRef {
                id: id.to_string(),
                width: bw,
                height: bh,
                channels: bc,
                file,
            });
        } else if let Some(n) = name.strip_prefix("block-").and_then(|n| n.parse().ok()) {
            blocks.push(BlockRef {
                block: n,
                width: bw,
                height: bh,
                channels: bc,
                file,
            });
        }
    }
    let mut seq = Vec::new();
    for (i, f) in frames.iter().enumerate().skip(1) {
        let base = format!("frames/{i:03}");
        put(
            &format!("{base}/proxy.f32"),
            &f.proxy
                .iter()
                .flat_map(|p| p.iter().flat_map(|v| v.to_le_bytes()))
                .collect::<Vec<u8>>(),
        )?;
        put(
            &format!("{base}/motion.f32"),
            &f.motion
                .iter()
                .flat_map(|p| p.iter().flat_map(|v| v.to_le_bytes()))
                .collect::<Vec<u8>>(),
        )?;
        put(
            &format!("{base}/output.f32"),
            &halves_to_f32_bytes(&f.result.output),
        )?;
        let head = match &f.result.network {
            Some(n) => {
                put(&format!("{base}/head.f32"), &f32_to_bytes(&n.head))?;
                Some(format!("{base}/head.f32"))
            }
            None => None,
        };
        seq.push(SequenceFrame {
            proxy: format!("{base}/proxy.f32"),
            motion: format!("{base}/motion.f32"),
            parameters: f.parameters.clone(),
            output: format!("{base}/output.f32"),
            head,
        });
    }
    let p0 = &f0.parameters;
    let manifest = Manifest {
        source_dimensions: [w, h],
        full_dimensions: [geometry.field.w as usize, geometry.field.h as usize],
        proxy: Some(ProxyRef {
            file: "proxy.f32".into(),
            width: w,
            height: h,
            conditioning: p0.conditioning.clone(),
            seed: 0,
            auto_mask: p0.auto_mask,
            motion: Some("motion.f32".into()),
        }),
        input_features: Some(FileRef {
            file: "features.f32".into(),
        }),
        checks: vec!["boundaries".into(), "head".into(), "output".into()],
        blocks,
        transitions,
        omitted_boundaries: BTreeMap::new(),
        reference_head: Some(FileRef {
            file: "head.f32".into(),
        }),
        native_output: Some(OutputRef {
            file: "output.f32".into(),
            dtype: "f32".into(),
        }),
        sequence: (!seq.is_empty()).then_some(Sequence { frames: seq }),
        profile: Some(profile.to_string()),
    };
    let json = serde_json::to_string_pretty(&manifest).map_err(|source| FixtureError::Json {
        path: dir.join("manifest.json"),
        field: ".".into(),
        source,
    })?;
    put("manifest.json", json.as_bytes())?;
    Ok(manifest)
}

impl FrameParameters {
    /// The frame parameters these stand for.
    pub fn to_frame_params(&self) -> openngx::nr::frame::FrameParams {
        openngx::nr::frame::FrameParams {
            enabled: self.enabled,
            reset: self.reset,
            intensity: self.intensity,
            mvec_scale: self.mvec_scale,
            use_auto_mask: self.auto_mask,
            local_tone_strength: self.conditioning.local_tone,
            local_structure_strength: self.conditioning.local_structure,
            skin_structure_strength: self.conditioning.skin_structure,
            style: self.conditioning.style,
            ..Default::default()
        }
    }
}

#[cfg(test)]
mod untrusted_input_tests {
    use super::*;

    /// A minimal valid fixture (64x64: features and a head reference) in `dir`.
    fn minimal(dir: &Path) -> (usize, usize) {
        let g = Geometry::new(64, 64).expect("geometry");
        let rows = g.field.w as usize * g.field.h as usize;
        let manifest = serde_json::json!({
            "sourceDimensions": [64, 64],
            "fullDimensions": [g.field.w, g.field.h],
            "inputFeatures": { "file": "features.f32" },
            "checks": ["head"],
            "referenceHead": { "file": "head.f32" },
        });
        fs::write(dir.join("manifest.json"), manifest.to_string()).expect("manifest");
        fs::write(dir.join("features.f32"), vec![0u8; rows * 64]).expect("features");
        fs::write(dir.join("head.f32"), vec![0u8; rows * 16]).expect("head");
        (rows * 64, rows * 16)
    }

    #[test]
    fn fixture_files_are_read_as_untrusted() {
        let top = tempfile::tempdir().expect("temp dir");
        let dir = top.path().join("fx");
        fs::create_dir(&dir).expect("mkdir");
        let (_, head_len) = minimal(&dir);
        let fx = Fixture::load(&dir).expect("the minimal fixture loads");
        assert_eq!(fx.read("head.f32").expect("head").len(), head_len);

        // A file named by the manifest that links out of the fixture is refused.
        let outside = top.path().join("outside");
        fs::create_dir(&outside).expect("mkdir");
        fs::rename(dir.join("head.f32"), outside.join("head.f32")).expect("move");
        std::os::unix::fs::symlink(&outside, dir.join("sub")).expect("symlink");
        std::os::unix::fs::symlink("sub/head.f32", dir.join("head.f32")).expect("symlink");
        let e = Fixture::load(&dir).expect_err("escapes");
        assert!(e.to_string().contains("outside"), "{e}");
        fs::remove_file(dir.join("head.f32")).expect("unlink");
        fs::rename(outside.join("head.f32"), dir.join("head.f32")).expect("move back");

        // A read after load is bounded by the size load checked (the file grew meanwhile), and
        // only files the manifest names are read.
        let fx = Fixture::load(&dir).expect("loads again");
        fs::write(dir.join("head.f32"), vec![0u8; head_len + 1]).expect("grow");
        let e = fx.read("head.f32").expect_err("grown");
        assert!(e.to_string().contains("larger than the limit"), "{e}");
        let e = fx.read("manifest.json").expect_err("not named");
        assert!(e.to_string().contains("not a file"), "{e}");

        // A FIFO manifest does not block; a type error names its field.
        let m = dir.join("manifest.json");
        let text = fs::read_to_string(&m).expect("read");
        fs::remove_file(&m).expect("unlink");
        let made = std::process::Command::new("mkfifo").arg(&m).status();
        assert!(made.is_ok_and(|s| s.success()), "mkfifo");
        let t = std::time::Instant::now();
        let e = Fixture::load(&dir).expect_err("FIFO");
        assert!(e.to_string().contains("not a regular file"), "{e}");
        assert!(t.elapsed().as_secs() < 5, "the FIFO blocked");
        fs::remove_file(&m).expect("unlink");
        fs::write(&m, text.replace("\"head.f32\"", "7")).expect("write");
        let e = Fixture::load(&dir).expect_err("type error");
        assert!(
            e.to_string()
                .contains("invalid manifest: referenceHead.file: invalid type: integer `7`"),
            "{e}"
        );
    }
}
