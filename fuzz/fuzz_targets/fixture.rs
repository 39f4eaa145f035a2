//! The fixture loader (`openngx_tools::fixture::Fixture::load`) over a directory built from the
//! input (`openngx_fuzz::tree`): `manifest.json` from the input's first part, the data files
//! from its script (sparse files, so sizes of any geometry cost nothing), links and FIFOs.
//!
//! Checked beyond "no panic, no hang": a loaded fixture's geometry follows its manifest; every
//! file it checked is a regular file inside the directory (on the file itself, independently of
//! the loader) and can be read back at the size the loader checked (for files up
//! to [`READ_LIMIT`]; larger ones are sparse here, and reading them would only cost memory).
#![no_main]

use std::path::Path;
use std::sync::OnceLock;

use openngx_fuzz::tree::{self, Scratch};
use openngx_tools::fixture::Fixture;

/// Largest named file read back after a successful load.
const READ_LIMIT: u64 = 1 << 20;

fn scratch() -> &'static Scratch {
    static S: OnceLock<Scratch> = OnceLock::new();
    S.get_or_init(|| Scratch::new("fixture"))
}

/// The files a loaded fixture must have checked: frame 0's input, the sequence's files, and the
/// head and output when their checks are asked for. (Boundary files are checked only under the
/// name the geometry gives them, so a manifest may name others that are never opened.)
fn checked(fx: &Fixture) -> Vec<&str> {
    let m = &fx.manifest;
    let mut v = Vec::new();
    if let Some(p) = &m.proxy {
        v.push(p.file.as_str());
        v.extend(p.motion.as_deref());
    }
    v.extend(m.input_features.as_ref().map(|f| f.file.as_str()));
    if fx.wants("head") {
        v.extend(m.reference_head.as_ref().map(|f| f.file.as_str()));
    }
    if fx.wants("output") {
        v.extend(m.native_output.as_ref().map(|f| f.file.as_str()));
    }
    for f in m.sequence.iter().flat_map(|s| &s.frames) {
        v.extend([f.proxy.as_str(), f.motion.as_str(), f.output.as_str()]);
        v.extend(f.head.as_deref());
    }
    v
}

openngx_fuzz::fuzz_target!(|data| {
    let (manifest_bytes, script) = tree::split(data);
    let top = scratch().fresh();
    if let Some(s) = script {
        tree::apply(&top, s, |_| {});
    }
    tree::write_new(&top.dir, Path::new("manifest.json"), manifest_bytes);

    let fx = match Fixture::load(&top.dir) {
        Ok(fx) => fx,
        Err(e) => return drop(e.to_string()),
    };
    let g = &fx.geometry;
    assert_eq!(
        fx.manifest.full_dimensions,
        [g.field.w as usize, g.field.h as usize]
    );
    assert_eq!(
        fx.manifest.source_dimensions,
        [g.valid.w as usize, g.valid.h as usize]
    );
    assert!(!fx.manifest.checks.is_empty());
    let root = top.dir.canonicalize().expect("the directory");
    for name in checked(&fx) {
        let real = top
            .dir
            .join(name)
            .canonicalize()
            .expect("a checked file resolves");
        assert!(
            real.starts_with(&root),
            "{name} escapes to {}",
            real.display()
        );
        let meta = std::fs::metadata(&real).expect("a checked file exists");
        assert!(meta.is_file(), "{name} is not a regular file");
        if meta.len() <= READ_LIMIT {
            let bytes = fx.read(name).expect("a checked file reads back");
            assert_eq!(bytes.len() as u64, meta.len(), "{name}");
        }
    }
    // A name no manifest can hold (not a plain relative path) is refused.
    assert!(fx.read(".").is_err());
});
