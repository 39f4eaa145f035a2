//! The committed `include/openngx.h` equals the header cbindgen generated in this build, and it
//! compiles as C99 and as C++17 with `-Wall -Wextra -Werror -pedantic` (plus the layout and
//! signature checks of `capi-tests/layout.c`).

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn committed_header_matches_the_generated_one() {
    let generated = Path::new(env!("OUT_DIR")).join("openngx.h");
    let committed = root().join("include/openngx.h");
    let g = std::fs::read_to_string(&generated)
        .unwrap_or_else(|e| panic!("{}: {e}", generated.display()));
    let c = std::fs::read_to_string(&committed)
        .unwrap_or_else(|e| panic!("{}: {e}", committed.display()));
    if g != c {
        let line = g
            .lines()
            .zip(c.lines())
            .position(|(a, b)| a != b)
            .map_or(g.lines().count().min(c.lines().count()), |i| i);
        panic!(
            "include/openngx.h is stale (first difference at line {}): regenerate with `OPENNGX_UPDATE_HEADER=1 cargo build`\n generated: {:?}\n committed: {:?}",
            line + 1,
            g.lines().nth(line),
            c.lines().nth(line)
        );
    }
    for name in [
        "NVSDK_NGX_VULKAN_Init",
        "NVSDK_NGX_VULKAN_EvaluateFeature_C",
        "NVSDK_NGX_Parameter_GetVoidPointer",
        "GetNGXResultAsString",
    ] {
        assert!(
            c.contains(&format!("{name}(")),
            "{name} missing from the header"
        );
    }
}

fn compile(compiler: &str, args: &[&str]) {
    let tmp =
        std::env::temp_dir().join(format!("openngx-header-{}-{compiler}", std::process::id()));
    std::fs::create_dir_all(&tmp).expect("temp dir");
    let out = Command::new(compiler)
        .args(args)
        .arg("-Wall")
        .arg("-Wextra")
        .arg("-Werror")
        .arg("-pedantic")
        .arg("-I")
        .arg(root().join("include"))
        .arg("-c")
        .arg(root().join("capi-tests/layout.c"))
        .arg("-o")
        .arg(tmp.join("layout.o"))
        .output()
        .unwrap_or_else(|e| panic!("running {compiler}: {e}"));
    let _ = std::fs::remove_dir_all(&tmp);
    assert!(
        out.status.success(),
        "{compiler} {args:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn header_compiles_as_c99() {
    compile("cc", &["-std=c99", "-x", "c"]);
}

#[test]
fn header_compiles_as_cxx17() {
    compile("c++", &["-std=c++17", "-x", "c++"]);
}
