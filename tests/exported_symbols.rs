//! The shipped library exports exactly its documented C API: `nm -D --defined-only` on the
//! built `libopenngx.so` must list the names of `capi-tests/exported-symbols.txt` (one per line,
//! sorted), no more and no fewer, and every one of them is declared in `include/openngx.h`.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::Command;

/// `libopenngx.so` of this build: the test binary lives in `<target>/<profile>/deps/`.
fn library() -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    let profile_dir = exe
        .parent()
        .and_then(|deps| deps.parent())
        .expect("<target>/<profile>/deps/<test>");
    profile_dir.join("libopenngx.so")
}

#[test]
fn the_library_exports_only_the_documented_c_api() {
    let lib = library();
    assert!(
        lib.is_file(),
        "{} is missing: the cdylib is built with the crate (cargo build / cargo test)",
        lib.display()
    );
    let out = Command::new("nm")
        .args(["-D", "--defined-only", "--format=posix"])
        .arg(&lib)
        .output()
        .expect("run nm (binutils)");
    assert!(out.status.success(), "nm failed: {:?}", out);
    let exported: BTreeSet<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next().map(str::to_owned))
        .collect();
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let listed: BTreeSet<String> =
        std::fs::read_to_string(root.join("capi-tests/exported-symbols.txt"))
            .expect("the committed list")
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(str::to_owned)
            .collect();
    let extra: Vec<_> = exported.difference(&listed).collect();
    let missing: Vec<_> = listed.difference(&exported).collect();
    assert!(
        extra.is_empty() && missing.is_empty(),
        "exported symbols differ from capi-tests/exported-symbols.txt: not listed {extra:?}, \
         listed but not exported {missing:?}"
    );
    let header = std::fs::read_to_string(root.join("include/openngx.h")).expect("header");
    for name in &listed {
        assert!(
            header.contains(&format!(" {name}(")) || header.contains(&format!("*{name}(")),
            "{name} is exported but not declared in include/openngx.h"
        );
    }
}
