//! The model directory: `Manifest` parsing and validation on the input's manifest bytes, and the
//! loader (`model::load::check_files`, `Model::load`) over a directory built from the input
//! (`openngx_fuzz::tree`: `manifest.json`, stage files, links, FIFOs, ...).
//!
//! Input: manifest bytes, optionally followed by `tree::SPLIT` and a directory script. Without a
//! script every stage file the manifest names is made as a sparse file of its declared size
//! (what a script's `Auto` entry does too), so a valid manifest reaches the stage checks.
//!
//! Checked beyond "no panic, no hang": a parsed manifest survives a JSON round trip unchanged; a
//! validated one places every record inside its stage, at its length, without overlap; a
//! directory `check_files` accepts has every stage as a regular file of its declared size inside
//! the directory, no two stages one file (checked on the files, independently of the loader); the
//! loader never accepts what `check_files` refuses, and a loaded model yields every record.
//! `Model::load` reads every stage, and a valid manifest declares 148 MB of them, so it runs
//! only where the declared stages total at most [`LOAD_LIMIT`]; `check_files` (everything but
//! the reads) runs on every input.
#![no_main]

use std::path::Path;
use std::sync::OnceLock;

use openngx::model::layout::{self, RECORD_COUNT};
use openngx::model::load::check_files;
use openngx::model::manifest::stage_path;
use openngx::model::{LoadOptions, Manifest, Model};
use openngx_fuzz::tree::{self, Scratch};

/// Largest total of declared stage bytes for which the loader (which reads them) runs.
const LOAD_LIMIT: u64 = 8 << 20;

fn scratch() -> &'static Scratch {
    static S: OnceLock<Scratch> = OnceLock::new();
    S.get_or_init(|| Scratch::new("model"))
}

/// Every stage file of `m` as a sparse file of its declared size (where the name is plain).
fn make_stages(dir: &Path, m: &Manifest) {
    for st in &m.stages {
        if let Some(name) = tree::plain(st.file.as_bytes()) {
            tree::sparse(dir, &Path::new("model").join(name), st.packed_byte_length);
        }
    }
}

/// What validation promises about the locations it returns.
fn check_validated(m: &Manifest, v: &openngx::model::manifest::Validated) {
    assert_eq!(v.locations.len(), RECORD_COUNT);
    let mut spans: Vec<(usize, usize, usize)> = Vec::new();
    for (spec, loc) in layout::records().iter().zip(&v.locations) {
        assert_eq!(loc.len, spec.len, "{}", spec.id.name());
        let stage = &m.stages[loc.stage];
        let end = loc.offset as u64 + loc.len as u64;
        assert!(end <= stage.packed_byte_length, "{}", spec.id.name());
        spans.push((loc.stage, loc.offset, loc.offset + loc.len));
    }
    spans.sort_unstable();
    for w in spans.windows(2) {
        assert!(
            w[0].0 != w[1].0 || w[1].1 >= w[0].2,
            "overlap accepted: {w:?}"
        );
    }
}

/// What accepting a directory promises, checked on the files themselves: every stage is a
/// regular file of its declared size that resolves inside the directory, and no two stages are
/// one file (the memory bound counts each once).
fn check_accepted(dir: &Path, m: &Manifest) {
    use std::os::unix::fs::MetadataExt;
    let root = dir.canonicalize().expect("the directory");
    let mut seen = std::collections::HashSet::new();
    for st in &m.stages {
        let p = stage_path(dir, &st.file);
        let real = p.canonicalize().expect("an accepted stage resolves");
        assert!(
            real.starts_with(&root),
            "{} escapes to {}",
            st.file,
            real.display()
        );
        let meta = std::fs::metadata(&real).expect("an accepted stage exists");
        assert!(meta.is_file(), "{} is not a regular file", st.file);
        assert_eq!(meta.len(), st.packed_byte_length, "{}", st.file);
        assert!(
            seen.insert((meta.dev(), meta.ino())),
            "{} aliases another stage",
            st.file
        );
    }
}

openngx_fuzz::fuzz_target!(|data| {
    let (manifest_bytes, script) = tree::split(data);

    // The manifest on its own.
    let parsed = std::str::from_utf8(manifest_bytes)
        .ok()
        .and_then(|t| Manifest::from_json(t).map_err(|e| e.to_string()).ok());
    if let Some(m) = &parsed {
        let again = Manifest::from_json(&m.to_json()).expect("a written manifest parses");
        assert_eq!(&again, m, "JSON round trip changed the manifest");
        match m.validate() {
            Ok(v) => check_validated(m, &v),
            Err(e) => drop(e.to_string()),
        }
    }

    // The directory.
    let top = scratch().fresh();
    match script {
        Some(s) => tree::apply(&top, s, |dir| {
            if let Some(m) = &parsed {
                make_stages(dir, m);
            }
        }),
        None => {
            if let Some(m) = &parsed {
                make_stages(&top.dir, m);
            }
        }
    }
    tree::write_new(&top.dir, Path::new("manifest.json"), manifest_bytes);

    // The manifest the loader meets: the script may have put another file (or a link, a FIFO)
    // under that name. Read here only when it is a regular file (a FIFO would block).
    let manifest_path = top.dir.join("manifest.json");
    let on_disk = std::fs::metadata(&manifest_path)
        .ok()
        .filter(|m| m.is_file() && m.len() <= 16 << 20)
        .and_then(|_| std::fs::read(&manifest_path).ok())
        .and_then(|b| String::from_utf8(b).ok())
        .and_then(|t| Manifest::from_json(&t).ok());
    let checked = check_files(&top.dir);
    match (&checked, &on_disk) {
        (Ok(()), Some(m)) => check_accepted(&top.dir, m),
        (Ok(()), None) => panic!("check_files accepted a manifest that is not a parsable file"),
        (Err(e), _) => drop(e.to_string()),
    }
    let declared = on_disk.as_ref().map_or(0, |m| {
        m.stages
            .iter()
            .fold(0u64, |a, s| a.saturating_add(s.packed_byte_length))
    });
    if declared <= LOAD_LIMIT {
        match Model::load(&top.dir, LoadOptions { verify_sha: true }) {
            Ok(model) => {
                assert!(checked.is_ok(), "load accepted what check_files refused");
                for spec in layout::records() {
                    let r = model
                        .try_record(spec.id)
                        .expect("a loaded model has every record");
                    assert_eq!(r.len(), spec.len);
                }
                for st in model.stages() {
                    assert!(stage_path(&top.dir, &st.file).starts_with(&top.dir));
                }
            }
            Err(e) => drop(e.to_string()),
        }
    }
});
