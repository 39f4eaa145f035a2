//! Links libFuzzer into the fuzz targets when `OPENNGX_LIBFUZZER` names its static library (the
//! `libfuzzer.a` that `fuzz/runtime` builds; `fuzz/run` sets the variable). Without it the
//! library part of this crate builds on its own (its unit tests), and the targets do not link.

use std::path::Path;

fn main() {
    println!("cargo:rerun-if-env-changed=OPENNGX_LIBFUZZER");
    let Ok(lib) = std::env::var("OPENNGX_LIBFUZZER") else {
        return;
    };
    let lib = Path::new(&lib);
    println!("cargo:rerun-if-changed={}", lib.display());
    let dir = lib.parent().expect("OPENNGX_LIBFUZZER names a file");
    let name = lib
        .file_stem()
        .and_then(|s| s.to_str())
        .and_then(|s| s.strip_prefix("lib"))
        .expect("OPENNGX_LIBFUZZER names a lib<name>.a");
    println!("cargo:rustc-link-search=native={}", dir.display());
    println!("cargo:rustc-link-lib=static={name}");
    // libFuzzer is C++.
    println!("cargo:rustc-link-lib=stdc++");
}
