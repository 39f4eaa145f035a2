//! `openngx synth-model` / `openngx validate-model` as a user runs them: exit codes and the lines
//! that matter in their output.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

/// A private copy of the binary under test. The target directory is shared by several worktrees,
/// whose builds overwrite `target/debug/openngx` with their own version at any time; running a
/// copy taken once (and checked to be this one) keeps the test from racing them.
fn binary() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        // In a scratch directory removed at the process's exit (and by the next run if it died).
        let dir = openngx_tools::scratch::process_dir(
            Path::new(env!("CARGO_TARGET_TMPDIR")),
            "openngx-model-cli",
        )
        .expect("scratch dir");
        let copy = dir.join("openngx");
        std::fs::copy(env!("CARGO_BIN_EXE_openngx"), &copy).unwrap();
        let help = Command::new(&copy).arg("--help").output().unwrap();
        let help = String::from_utf8_lossy(&help.stdout);
        assert!(
            help.contains("synth-model") && help.contains("validate-model"),
            "{} is not this branch's openngx (another worktree rebuilt it); rerun the test",
            env!("CARGO_BIN_EXE_openngx")
        );
        copy
    })
}

fn openngx(args: &[&str]) -> Output {
    Command::new(binary()).args(args).output().unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn path_str(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn synth_then_validate() {
    let tmp = tempfile::Builder::new()
        .prefix("model-cli-")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap();
    let dir = tmp.path().join("m");
    let d = path_str(&dir);

    let o = openngx(&["synth-model", "--out", d, "--seed", "3"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(stdout(&o).contains("11 stages, 153 records, 147683778 bytes"));
    // Nothing but the model is left beside it (the temporary directory was renamed).
    let names: Vec<_> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["m"]);

    let o = openngx(&["validate-model", d]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    let out = stdout(&o);
    assert!(
        out.contains("records: 153 (blockCount 71), total 147683778 bytes"),
        "{out}"
    );
    assert!(out.contains("NaN codes 0"), "{out}");
    assert!(out.contains("padding: 2376 bytes (0 nonzero)"), "{out}");
    assert!(out.contains("blend_scale: 0x39EB"), "{out}");
    assert_eq!(out.matches(" ok\n").count(), 11, "{out}");
    assert!(out.trim_end().ends_with("valid"));

    // A second synth into the non-empty directory is refused without --force.
    let o = openngx(&["synth-model", "--out", d]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--force"));

    // Corrupt one byte: invalid with the reason, valid again with --no-verify.
    let enc32 = dir.join("model/enc32");
    let mut bytes = std::fs::read(&enc32).unwrap();
    bytes[12345] ^= 0x40;
    std::fs::write(&enc32, &bytes).unwrap();
    let o = openngx(&["validate-model", d]);
    assert_eq!(o.status.code(), Some(1));
    let out = stdout(&o);
    assert!(out.contains("INVALID"), "{out}");
    assert!(out.contains("model/enc32: SHA-256 mismatch"), "{out}");
    let o = openngx(&["validate-model", "--no-verify", d]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    assert!(stdout(&o).contains("not checked"));

    // --force replaces the corrupted model atomically with a valid one (seed 0 this time).
    let o = openngx(&["synth-model", "--out", d, "--force"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let o = openngx(&["validate-model", d]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    assert!(stdout(&o).contains("(seed 0)"));

    // Truncated stage: invalid, naming the file and both sizes.
    bytes.truncate(1000);
    std::fs::write(&enc32, &bytes).unwrap();
    let o = openngx(&["validate-model", "--no-verify", d]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stdout(&o).contains("model/enc32: size 1000 bytes, manifest packedByteLength says 106432")
    );
}

#[test]
fn validate_missing_dir_and_bad_usage() {
    let o = openngx(&["validate-model", "/nonexistent/openngx-model"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stdout(&o).contains("manifest.json: file missing"));
    // Usage errors are clap's exit code 2.
    assert_eq!(openngx(&["validate-model"]).status.code(), Some(2));
    assert_eq!(
        openngx(&["synth-model", "--seed", "x", "--out", "/tmp/x"])
            .status
            .code(),
        Some(2)
    );
    assert_eq!(openngx(&["no-such-command"]).status.code(), Some(2));
}

#[test]
fn rr_synth_then_validate() {
    let tmp = tempfile::Builder::new()
        .prefix("model-cli-rr-")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap();
    let dir = tmp.path().join("rr");
    let d = path_str(&dir);

    let o = openngx(&["synth-model", "--feature", "rr", "--out", d]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let out = stdout(&o);
    assert!(
        out.contains("(Ray Reconstruction, seed 0): 11 stages, 11 images, 2852736 bytes"),
        "{out}"
    );
    // The per-layer statistics: one row per layer, no NaN or saturated weights.
    for name in ["enc0", "enc5", "dec4", "dec0"] {
        assert!(out.contains(&format!("\n  {name} ")), "{name}: {out}");
    }

    let o = openngx(&["validate-model", d]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    let out = stdout(&o);
    assert!(out.contains("network: Ray Reconstruction"), "{out}");
    assert!(
        out.contains("images: 11 (enc0..enc5, dec4..dec0), total 2852736 bytes"),
        "{out}"
    );
    assert!(
        out.contains("never read by the network): 0 nonzero"),
        "{out}"
    );
    assert_eq!(out.matches(" ok\n").count(), 11, "{out}");
    assert!(out.trim_end().ends_with("valid"));

    // One flipped byte: invalid, named as an RR model, with the stage file.
    let enc3 = dir.join("model/enc3");
    let mut bytes = std::fs::read(&enc3).unwrap();
    bytes[777] ^= 1;
    std::fs::write(&enc3, &bytes).unwrap();
    let o = openngx(&["validate-model", d]);
    assert_eq!(o.status.code(), Some(1));
    let out = stdout(&o);
    assert!(out.contains("INVALID (Ray Reconstruction model)"), "{out}");
    assert!(out.contains("model/enc3: SHA-256 mismatch"), "{out}");
}
