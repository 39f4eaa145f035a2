//! The NGX Core package (`core/`) compiles this library's sources a second time as its own
//! workspace (see `core/Cargo.toml`). Two things keep that build equal to this one: the same
//! dependencies, build dependencies and profiles (else it compiles other code, or shaderc a
//! second time in the shared target directory), and a `core/Cargo.lock` whose packages are this
//! lock file's in the same versions. This test fails on any drift; the fix is to copy the
//! sections from `Cargo.toml` and `Cargo.lock` to `core/` and build the Core once.

use std::collections::BTreeSet;
use std::path::PathBuf;

fn read(rel: &str) -> String {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(root.join(rel)).unwrap_or_else(|e| panic!("read {rel}: {e}"))
}

/// The lines of the TOML table `[name]` (up to the next table header), comments and blank
/// lines dropped.
fn table(text: &str, name: &str) -> Vec<String> {
    let header = format!("[{name}]");
    let mut lines = text.lines().map(str::trim);
    if !lines.any(|l| l == header) {
        return Vec::new();
    }
    lines
        .take_while(|l| !l.starts_with('['))
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_owned)
        .collect()
}

/// `(name, version)` of every `[[package]]` of a Cargo.lock.
fn locked(text: &str) -> BTreeSet<(String, String)> {
    let mut out = BTreeSet::new();
    let mut name = None;
    for l in text.lines().map(str::trim) {
        if let Some(v) = l.strip_prefix("name = ") {
            name = Some(v.trim_matches('"').to_owned());
        } else if let Some(v) = l.strip_prefix("version = ") {
            if let Some(n) = name.take() {
                out.insert((n, v.trim_matches('"').to_owned()));
            }
        }
    }
    out
}

#[test]
fn the_core_package_builds_what_the_library_builds() {
    let root = read("Cargo.toml");
    let core = read("core/Cargo.toml");
    for t in [
        "dependencies",
        "build-dependencies",
        "profile.dev",
        "profile.dev.package.\"*\"",
        "profile.release",
        "workspace.lints.clippy",
        "workspace.lints.rust",
    ] {
        let (a, b) = (table(&root, t), table(&core, t));
        assert!(!a.is_empty(), "Cargo.toml has no [{t}]");
        assert_eq!(a, b, "[{t}] of core/Cargo.toml differs from Cargo.toml");
    }
    // The Core compiles this package's sources and build script.
    let lib = table(&core, "lib");
    assert!(
        lib.contains(&"path = \"../src/lib.rs\"".to_owned()),
        "{lib:?}"
    );
    assert!(core.contains("build = \"../build.rs\""));
}

#[test]
fn the_core_lock_file_pins_the_same_versions() {
    let root = locked(&read("Cargo.lock"));
    let core = locked(&read("core/Cargo.lock"));
    let ours = ["openngx", "openngx-core", "openngx-tools"];
    let foreign: Vec<_> = core
        .iter()
        .filter(|(n, _)| !ours.contains(&n.as_str()))
        .filter(|p| !root.contains(*p))
        .collect();
    assert!(
        foreign.is_empty(),
        "core/Cargo.lock pins packages Cargo.lock does not (in these versions): {foreign:?}"
    );
    assert!(core.iter().any(|(n, _)| n == "shaderc-sys"));
}
