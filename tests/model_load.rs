//! Model loading: one test per error class, synthesis determinism (committed manifest digest) and
//! the synthesize -> write -> load round trip.
//!
//! A seed-0 synthetic model is written once under Cargo's target tmp dir and reused across runs
//! (it is only rewritten when its manifest digest differs from the committed one). Each error test
//! builds its own temporary model directory from hard links to the fixture's stage files, and
//! replaces (never edits through a link) any file it corrupts.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use openngx::model::layout::{self, RecordId, SHIPPED_BLEND_SCALE};
use openngx::model::manifest::Manifest;
use openngx::model::{pack, LoadOptions, Model, ModelError, ShaStatus};
use openngx_tools::stats::ModelStats;
use openngx_tools::synth::{self, SynthParams};
use sha2::{Digest, Sha256};

/// SHA-256 of the seed-0 synthetic `manifest.json` (it lists every stage file's SHA-256, so this
/// pins all 147,683,778 synthesized bytes).
const SEED0_MANIFEST_SHA256: &str =
    "65ec47a38e847758590dfffb27a79d25352bbed6b7a24c870e762f9d0197e82b";

fn sha_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

fn tmp_root() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
}

fn fixture() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = tmp_root().join(format!("synth-seed0-{}", &SEED0_MANIFEST_SHA256[..12]));
        let current = std::fs::read(dir.join("manifest.json"))
            .map(|m| sha_hex(&m) == SEED0_MANIFEST_SHA256)
            .unwrap_or(false);
        if !current {
            // Another test process may be writing the same fixture; if our write loses the race
            // the directory is complete anyway (rename is atomic).
            let _ = synth::write_model(&dir, 0, &SynthParams::DEFAULT, true);
        }
        dir
    })
}

/// A fresh model directory: hard links to the fixture's stage files and a manifest edited by `edit`.
fn model_copy(edit: impl FnOnce(&mut Manifest)) -> tempfile::TempDir {
    let src = fixture();
    let tmp = tempfile::Builder::new()
        .prefix("model-case-")
        .tempdir_in(tmp_root())
        .unwrap();
    std::fs::create_dir(tmp.path().join("model")).unwrap();
    for entry in std::fs::read_dir(src.join("model")).unwrap() {
        let entry = entry.unwrap();
        let to = tmp.path().join("model").join(entry.file_name());
        if std::fs::hard_link(entry.path(), &to).is_err() {
            std::fs::copy(entry.path(), &to).unwrap();
        }
    }
    let mut manifest = Manifest::read(src).unwrap();
    edit(&mut manifest);
    std::fs::write(tmp.path().join("manifest.json"), manifest.to_json()).unwrap();
    tmp
}

/// Replace stage file `name` in `dir` with `f(original bytes)` (unlinking first, so the fixture's
/// file behind the hard link stays intact).
fn replace_stage(dir: &Path, name: &str, f: impl FnOnce(Vec<u8>) -> Vec<u8>) {
    let path = dir.join("model").join(name);
    let bytes = std::fs::read(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    std::fs::write(&path, f(bytes)).unwrap();
}

fn load(dir: &Path) -> Result<Model, ModelError> {
    Model::load(dir, LoadOptions::default())
}

fn fixture_manifest() -> Manifest {
    Manifest::read(fixture()).unwrap()
}

// ------------------------------------------------------------------------------------------------
// Synthesis

#[test]
fn synthesis_matches_committed_digest() {
    let s = synth::synthesize(0, &SynthParams::DEFAULT);
    let json = s.manifest.to_json();
    assert_eq!(sha_hex(json.as_bytes()), SEED0_MANIFEST_SHA256);
    // The manifest's hashes are the real hashes of the stage bytes.
    for ((id, bytes), st) in s.stages.iter().zip(&s.manifest.stages) {
        assert_eq!(id, &st.id);
        assert_eq!(sha_hex(bytes), st.sha256, "{id}");
    }
    assert_eq!(s.manifest.stages.len(), 11);
    assert_eq!(s.manifest.tensors.len(), 153);
    let total: usize = s.stages.iter().map(|(_, b)| b.len()).sum();
    assert_eq!(total, layout::TOTAL_BYTES);
    // The fixture on disk is byte-identical to this in-memory model.
    let model = load(fixture()).unwrap();
    for ((_, bytes), st) in s.stages.iter().zip(model.stages()) {
        assert!(bytes == &st.bytes, "stage {}", st.id);
    }
    s.manifest.validate().unwrap();
}

#[test]
fn synth_load_round_trip() {
    let model = load(fixture()).unwrap();
    assert_eq!(model.dir(), fixture());
    assert!(model
        .stages()
        .iter()
        .all(|s| s.sha_status == ShaStatus::Verified));
    assert_eq!(model.blend_scale(), SHIPPED_BLEND_SCALE);
    assert_eq!(model.total_bytes(), layout::TOTAL_BYTES);
    for spec in layout::records() {
        assert_eq!(
            model.try_record(spec.id).unwrap().len(),
            spec.len,
            "{}",
            spec.id
        );
    }
    assert_eq!(model.try_record(RecordId::layer(29, 4)), None);

    // Adapter: lane-15 row zero, the other rows not.
    let pre = layout::window_layout(0).unwrap();
    let a = pre.adapter.unwrap();
    let adapter = pack::unpack_f16(a.bytes(model.record(0, 0)), 16, 32);
    assert!(adapter[15 * 32..].iter().all(|&h| h == 0));
    assert!(adapter[..15 * 32].iter().filter(|&&h| h != 0).count() > 400);

    // A packed matrix survives unpack -> pack, and the transposed unpack agrees.
    let l = layout::window_layout(9).unwrap();
    let rec = model.record(9, 0);
    let stored = l.qkv.bytes(rec);
    let natural = pack::unpack_fp8(stored, l.qkv.k, l.qkv.n);
    assert_eq!(pack::pack_fp8(&natural, l.qkv.k, l.qkv.n), stored);
    let t = pack::unpack_fp8_transposed(stored, l.qkv.k, l.qkv.n);
    assert_eq!(t[5 * l.qkv.k + 17], natural[17 * l.qkv.n + 5]);

    // Scales and temperatures inside the recipe's ranges.
    let ffn = pack::read_f16s(l.ffn_scale.bytes(rec));
    assert!(
        ffn.iter().all(|&h| (0x3A66..=0x3C00).contains(&h)),
        "skip scales in [0.8, 1]"
    );
    let temps = pack::read_f32s(l.temperatures.bytes(rec));
    assert_eq!(temps.len(), 4);
    assert!(temps.iter().all(|t| (1.5..=6.0).contains(t)));
    let vit = layout::vit_layout();
    let vt = pack::read_f32s(vit.temperatures.bytes(model.record(31, 2)));
    assert!(vt.iter().all(|t| (0.15..=0.5).contains(t)));

    // Priors: within [-126.5, 0], at least one floor entry somewhere, diagonal never floored.
    let head = pack::prior_natural(l.priors.head(rec, 0));
    assert!(head.iter().all(|&h| {
        let v = openngx::numerics::f16::to_f32(h);
        (-126.5..=0.0).contains(&v)
    }));
    for t in 0..64 {
        assert_ne!(head[t * 64 + t], 0xD7E8, "diagonal at the floor");
    }

    // Whole-model statistics: the shipped structure (pads, head columns) and ranges.
    let s = ModelStats::compute(&model);
    assert_eq!(s.fp8_elements(), 143_831_040);
    assert_eq!(s.fp8_nan_codes(), 0);
    assert!(s.fp8_max_abs() <= 0.875);
    assert!(s.fp8_at_least(0.125) > 1_000_000);
    assert_eq!((s.pad_bytes, s.pad_nonzero), (2_376, 0));
    assert_eq!((s.head_unused_halves, s.head_unused_nonzero), (384, 0));
    assert_eq!(s.priors.count, 1_875_968);
    assert_eq!((s.priors.min, s.priors.max), (-126.5, 0.0));
    assert!(s.prior_at_floor > 0);
    assert_eq!(s.temperatures.count, 714);
    assert!(s.temperatures.min >= 0.15 && s.temperatures.max <= 6.0);
    assert!(s.scales.min >= 0.5 && s.scales.max <= 1.0);
    assert_eq!(s.adapter_lane15_nonzero, 0);
}

// ------------------------------------------------------------------------------------------------
// Error classes

#[test]
fn missing_stage_file() {
    let dir = model_copy(|_| {});
    std::fs::remove_file(dir.path().join("model/dec64")).unwrap();
    let err = load(dir.path()).unwrap_err();
    assert!(matches!(&err, ModelError::FileMissing { path } if path.ends_with("model/dec64")));
    assert_eq!(err.to_string(), "model/dec64: file missing");
}

#[test]
fn stage_is_a_directory() {
    let dir = model_copy(|_| {});
    std::fs::remove_file(dir.path().join("model/vit")).unwrap();
    std::fs::create_dir(dir.path().join("model/vit")).unwrap();
    let err = load(dir.path()).unwrap_err();
    assert_eq!(err.to_string(), "model/vit: not a regular file");
}

#[test]
fn missing_manifest() {
    let dir = model_copy(|_| {});
    std::fs::remove_file(dir.path().join("manifest.json")).unwrap();
    let err = load(dir.path()).unwrap_err();
    assert!(matches!(&err, ModelError::FileMissing { path } if path.ends_with("manifest.json")));
}

#[test]
fn short_and_long_stage_file() {
    let dir = model_copy(|_| {});
    replace_stage(dir.path(), "enc32", |mut b| {
        b.pop();
        b
    });
    let err = load(dir.path()).unwrap_err();
    assert!(matches!(
        err,
        ModelError::StageSize {
            expected: 106_432,
            found: 106_431,
            ..
        }
    ));
    assert!(err
        .to_string()
        .starts_with("model/enc32: size 106431 bytes"));
    replace_stage(dir.path(), "enc32", |mut b| {
        b.extend_from_slice(&[0, 0]);
        b
    });
    let err = load(dir.path()).unwrap_err();
    assert!(matches!(
        err,
        ModelError::StageSize {
            expected: 106_432,
            found: 106_433,
            ..
        }
    ));
}

#[test]
fn sha_mismatch_and_case_insensitive_compare() {
    let dir = model_copy(|m| {
        // Upper-case hex in the manifest is accepted.
        for s in &mut m.stages {
            s.sha256 = s.sha256.to_uppercase();
        }
    });
    load(dir.path()).unwrap();
    replace_stage(dir.path(), "enc32", |mut b| {
        b[1000] ^= 1;
        b
    });
    let err = load(dir.path()).unwrap_err();
    let ModelError::ShaMismatch {
        expected, found, ..
    } = &err
    else {
        panic!("expected a SHA mismatch, got {err}");
    };
    assert_eq!(
        expected,
        &fixture_manifest().stages[0].sha256.to_uppercase()
    );
    assert_ne!(found.to_uppercase(), *expected);
    assert!(err
        .to_string()
        .starts_with("model/enc32: SHA-256 mismatch: manifest says "));
    // Without verification the corrupted model loads, with the corrupted byte.
    let m = Model::load(dir.path(), LoadOptions { verify_sha: false }).unwrap();
    assert_eq!(m.stages()[0].sha_status, ShaStatus::NotChecked);
    let good = load(fixture()).unwrap();
    assert_eq!(m.record(0, 0)[1000], good.record(0, 0)[1000] ^ 1);
}

#[test]
fn bad_json() {
    let dir = model_copy(|_| {});
    std::fs::write(dir.path().join("manifest.json"), "{\"totals\": ").unwrap();
    assert!(matches!(load(dir.path()), Err(ModelError::Json { .. })));
    // A wrong field type names the field by its JSON path (it used to say only
    // `invalid type: string "71", expected u64 at line 4 column 20`).
    let text =
        fixture_manifest()
            .to_json()
            .replacen("\"blockCount\": 71", "\"blockCount\": \"71\"", 1);
    let err = Manifest::from_json(&text).unwrap_err();
    assert!(
        err.to_string().starts_with(
            "manifest.json: bad JSON: totals.blockCount: invalid type: string \"71\", expected u64"
        ),
        "{err}"
    );
    let text =
        fixture_manifest()
            .to_json()
            .replacen("\"stageOffset\": 0", "\"stageOffset\": -1", 1);
    let err = Manifest::from_json(&text).unwrap_err();
    assert!(
        matches!(&err, ModelError::Json { field: Some(f), .. } if f.starts_with("tensors[") && f.ends_with("].stageOffset")),
        "{err}"
    );
    // Inside an array: the index of the element.
    let mut m = fixture_manifest();
    m.stages[3].sha256 = "x".into();
    let text = m
        .to_json()
        .replacen("\"sha256\": \"x\"", "\"sha256\": 7", 1);
    let err = Manifest::from_json(&text).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("manifest.json: bad JSON: stages[3].sha256: invalid type: integer `7`"),
        "{err}"
    );
    let text = m
        .to_json()
        .replacen("\"packedByteLength\"", "\"packedByteLen\"", 1);
    let err = Manifest::from_json(&text).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("manifest.json: bad JSON: stages[0]: missing field `packedByteLength`"),
        "{err}"
    );
    // Not a field's fault: no path. Trailing garbage is refused as before.
    let err = Manifest::from_json("[]").unwrap_err();
    assert!(
        matches!(&err, ModelError::Json { field: None, .. }),
        "{err}"
    );
    let err = Manifest::from_json(&(fixture_manifest().to_json() + "x")).unwrap_err();
    assert!(
        matches!(&err, ModelError::Json { field: None, .. }),
        "{err}"
    );
}

#[test]
fn wrong_block_count() {
    let dir = model_copy(|m| m.totals.block_count = 70);
    let err = load(dir.path()).unwrap_err();
    assert!(matches!(err, ModelError::BlockCount { found: 70, .. }));
    assert_eq!(
        err.to_string(),
        "manifest.json: totals.blockCount is 70, expected 71"
    );
}

#[test]
fn overlapping_and_out_of_range_slices() {
    let mut m = fixture_manifest();
    m.tensors[1].stage_offset = m.tensors[0].stage_offset + 2;
    let err = m.validate().unwrap_err();
    assert!(
        matches!(&err, ModelError::Overlap { stage, .. } if stage == "enc32"),
        "{err}"
    );
    // Two records at the same offset.
    let mut m = fixture_manifest();
    m.tensors[3].stage_offset = m.tensors[2].stage_offset;
    assert!(matches!(m.validate(), Err(ModelError::Overlap { .. })));

    let mut m = fixture_manifest();
    let len = m.stages[0].packed_byte_length;
    m.tensors[0].stage_offset = len - 100;
    let err = m.validate().unwrap_err();
    assert!(matches!(&err, ModelError::SliceOutOfRange { index: 0, .. }));
    let mut m = fixture_manifest();
    m.tensors[0].stage_offset = u64::MAX - 10;
    assert!(matches!(
        m.validate(),
        Err(ModelError::SliceOutOfRange { .. })
    ));
    // Through the loader as well.
    let dir = model_copy(|m| m.tensors[5].stage_offset = m.stages[1].packed_byte_length);
    assert!(matches!(
        load(dir.path()),
        Err(ModelError::SliceOutOfRange { index: 5, .. })
    ));
}

#[test]
fn path_traversal_and_absolute_paths() {
    for (file, reason) in [
        ("../enc32", "`..` component"),
        ("sub/../../enc32", "`..` component"),
        ("/etc/passwd", "absolute path"),
        ("", "empty path"),
    ] {
        let dir = model_copy(|m| m.stages[0].file = file.to_string());
        let err = load(dir.path()).unwrap_err();
        match &err {
            ModelError::BadStagePath {
                stage, reason: r, ..
            } => {
                assert_eq!(stage, "enc32");
                assert_eq!(*r, reason, "{file}");
            }
            _ => panic!("{file}: {err}"),
        }
    }
    // A stage file in a subdirectory of model/ is fine.
    let dir = model_copy(|m| m.stages[0].file = "sub/enc32".to_string());
    std::fs::create_dir(dir.path().join("model/sub")).unwrap();
    std::fs::rename(
        dir.path().join("model/enc32"),
        dir.path().join("model/sub/enc32"),
    )
    .unwrap();
    load(dir.path()).unwrap();
}

#[test]
fn duplicate_names() {
    let mut m = fixture_manifest();
    m.tensors[1] = m.tensors[0].clone();
    let err = m.validate().unwrap_err();
    assert!(
        matches!(&err, ModelError::DuplicateTensor { index: 1, name } if name == "block0.layer0.layer")
    );
    let mut m = fixture_manifest();
    m.stages[1].id = "enc32".into();
    assert!(matches!(
        m.validate(),
        Err(ModelError::DuplicateStage { index: 1, .. })
    ));
    let dir = model_copy(|m| m.tensors[7] = m.tensors[6].clone());
    assert!(matches!(
        load(dir.path()),
        Err(ModelError::DuplicateTensor { index: 7, .. })
    ));
}

#[test]
fn unknown_block_layer_parameter() {
    let cases: [(u64, u64, &str); 4] = [
        (71, 0, "layer"),
        (0, 1, "layer"),
        (29, 4, "layer"),
        (69, 0, "blend_scale"),
    ];
    for (block, layer, param) in cases {
        let mut m = fixture_manifest();
        let t = &mut m.tensors[0];
        t.block = block;
        t.layer = layer;
        t.parameter = param.into();
        t.name = format!("block{block}.layer{layer}.{param}");
        let err = m.validate().unwrap_err();
        assert!(
            matches!(&err, ModelError::UnknownRecord { index: 0, name, .. } if *name == format!("block{block}.layer{layer}.{param}")),
            "{err}"
        );
    }
    // Name disagreeing with block/layer/parameter.
    let mut m = fixture_manifest();
    m.tensors[2].name = "block9.layer0.layer".into();
    assert!(matches!(
        m.validate(),
        Err(ModelError::NameMismatch { index: 2, .. })
    ));
    // Known record with the wrong length.
    let mut m = fixture_manifest();
    m.tensors[0].byte_length -= 16;
    assert!(matches!(
        m.validate(),
        Err(ModelError::RecordLength {
            index: 0,
            expected: 21_696,
            ..
        })
    ));
    // Stage id not declared.
    let mut m = fixture_manifest();
    m.tensors[0].stage = "enc16".into();
    assert!(matches!(m.validate(), Err(ModelError::UnknownStage { .. })));
}

#[test]
fn wrong_record_count() {
    let dir = model_copy(|m| {
        m.tensors.remove(40);
    });
    let err = load(dir.path()).unwrap_err();
    let expected_missing = layout::records()[40].id.name();
    assert!(
        matches!(&err, ModelError::RecordCount { found: 152, missing, .. } if *missing == expected_missing),
        "{err}"
    );
    let mut m = fixture_manifest();
    m.tensors.clear();
    assert!(matches!(
        m.validate(),
        Err(ModelError::RecordCount { found: 0, .. })
    ));
}

#[test]
fn any_stage_split_is_accepted() {
    // One stage per record, in reverse order inside a single file: the loader only needs every
    // slice inside its stage.
    let good = load(fixture()).unwrap();
    let tmp = tempfile::Builder::new()
        .prefix("model-split-")
        .tempdir_in(tmp_root())
        .unwrap();
    std::fs::create_dir(tmp.path().join("model")).unwrap();
    let mut blob = Vec::new();
    let mut manifest = fixture_manifest();
    for t in manifest.tensors.iter_mut().rev() {
        let id = RecordId {
            block: t.block as usize,
            layer: t.layer as usize,
            param: layout::Param::parse(&t.parameter).unwrap(),
        };
        t.stage = "all".into();
        t.stage_offset = blob.len() as u64;
        blob.extend_from_slice(good.try_record(id).unwrap());
    }
    manifest.stages = vec![openngx::model::manifest::Stage {
        id: "all".into(),
        file: "weights.bin".into(),
        packed_byte_length: blob.len() as u64,
        sha256: sha_hex(&blob),
    }];
    std::fs::write(tmp.path().join("model/weights.bin"), &blob).unwrap();
    std::fs::write(tmp.path().join("manifest.json"), manifest.to_json()).unwrap();
    let m = load(tmp.path()).unwrap();
    for spec in layout::records() {
        assert_eq!(
            m.try_record(spec.id),
            good.try_record(spec.id),
            "{}",
            spec.id
        );
    }
    assert_eq!(m.blend_scale(), SHIPPED_BLEND_SCALE);
}

/// A `manifest.json` that is a FIFO (no writer) or a link to `/dev/zero` is refused at once as
/// "not a regular file", before anything is read: the open does not block and nothing is read
/// without bound.
#[test]
fn a_fifo_or_device_manifest_is_refused_without_blocking() {
    let dir = tempfile::tempdir().expect("temp dir");
    let manifest = dir.path().join("manifest.json");
    let c = std::ffi::CString::new(manifest.as_os_str().as_encoded_bytes()).expect("path");
    // SAFETY: a NUL-terminated path in a directory this test owns.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let t = std::time::Instant::now();
    let e = Model::load(dir.path(), LoadOptions { verify_sha: false }).err();
    assert!(
        matches!(e, Some(ModelError::NotAFile { .. })),
        "FIFO manifest: {e:?}"
    );
    assert!(t.elapsed().as_secs() < 5, "the FIFO blocked the load");
    std::fs::remove_file(&manifest).expect("remove FIFO");
    std::os::unix::fs::symlink("/dev/zero", &manifest).expect("symlink");
    let e = Model::load(dir.path(), LoadOptions { verify_sha: false }).err();
    assert!(
        matches!(e, Some(ModelError::NotAFile { .. })),
        "/dev/zero manifest: {e:?}"
    );
}

/// Two stages naming one file (here as `./<file>` and `<file>`) are refused when the manifest is
/// validated, naming both stages: a model's memory stays bounded by its real files.
#[test]
fn stages_sharing_a_file_are_refused() {
    let text = std::fs::read_to_string(fixture().join("manifest.json")).expect("manifest");
    let mut m = Manifest::from_json(&text).expect("parse");
    assert!(m.validate().is_ok(), "the synthetic manifest is valid");
    let first = m.stages[0].file.clone();
    m.stages[1].file = format!("./{first}");
    match m.validate().err() {
        Some(ModelError::SharedStageFile {
            stage, first: f, ..
        }) => {
            assert_eq!(stage, m.stages[1].id);
            assert_eq!(f, m.stages[0].id);
        }
        other => panic!("expected SharedStageFile, got {other:?}"),
    }
}

/// A stage file reached through a symlinked sub-directory of `model/` that leads outside the
/// model directory is refused (by the load and by the NGX layer's quick check), as is a stage
/// linked straight to a file outside; a link that stays inside is followed.
#[test]
fn stage_files_may_not_leave_the_model_directory_through_links() {
    let outside = tempfile::Builder::new()
        .prefix("model-outside-")
        .tempdir_in(tmp_root())
        .unwrap();
    let m = fixture_manifest();
    let (victim, file) = (m.stages[0].id.clone(), m.stages[0].file.clone());
    std::fs::copy(
        fixture().join("model").join(&file),
        outside.path().join("x"),
    )
    .unwrap();

    let dir = model_copy(|m| m.stages[0].file = "sub/x".into());
    std::os::unix::fs::symlink(outside.path(), dir.path().join("model/sub")).unwrap();
    let err = load(dir.path()).unwrap_err();
    assert!(
        matches!(&err, ModelError::OutsideModel { path, .. } if path.ends_with("model/sub/x")),
        "{err:?}"
    );
    assert!(
        err.to_string().contains("outside the model directory"),
        "{err}"
    );
    let quick = openngx::nr::feature::quick_check(dir.path()).unwrap_err();
    assert!(quick.contains("outside the model directory"), "{quick}");

    let dir = model_copy(|m| m.stages[0].file = "x".into());
    std::os::unix::fs::symlink(outside.path().join("x"), dir.path().join("model/x")).unwrap();
    assert!(matches!(
        load(dir.path()),
        Err(ModelError::OutsideModel { .. })
    ));

    // Inside: `model/inner/x` -> `../<file>` (the stage's own file, now named only once).
    let dir = model_copy(|m| m.stages[0].file = "inner/x".into());
    std::fs::create_dir(dir.path().join("model/inner")).unwrap();
    std::os::unix::fs::symlink(format!("../{file}"), dir.path().join("model/inner/x")).unwrap();
    let model = load(dir.path()).expect("a link inside the model directory is followed");
    assert_eq!(model.stages()[0].id, victim);
}

/// Two stages whose names differ but lead to one file (a symlink) count as one file: refused
/// before either is read, naming both stages.
#[test]
fn stages_aliasing_one_file_through_a_link_are_refused() {
    let m = fixture_manifest();
    // One file long enough for both stages' slices, declared by both.
    let len = m.stages[0]
        .packed_byte_length
        .max(m.stages[1].packed_byte_length);
    let dir = model_copy(|m| {
        m.stages[0].file = "shared".into();
        m.stages[1].file = "alias".into();
        m.stages[0].packed_byte_length = len;
        m.stages[1].packed_byte_length = len;
    });
    std::fs::write(dir.path().join("model/shared"), vec![0u8; len as usize]).unwrap();
    std::os::unix::fs::symlink("shared", dir.path().join("model/alias")).unwrap();
    let err = load(dir.path()).unwrap_err();
    match &err {
        ModelError::AliasedStageFile { stage, first, .. } => {
            assert_eq!(stage, &m.stages[1].id);
            assert_eq!(first, &m.stages[0].id);
        }
        other => panic!("expected AliasedStageFile, got {other:?}"),
    }
    let quick = openngx::nr::feature::quick_check(dir.path()).unwrap_err();
    assert_eq!(quick, err.to_string());
}
