//! `openngx demo` plumbing without a network evaluation on lavapipe (which takes minutes): the
//! CPU route renders one 64x64 frame of the synthetic scene, writes the side-by-side PNG and the
//! summary, and says where frame 0 comes from; bad arguments are refused before any work.

mod tools_common;

use tools_common::{openngx, stderr, stdout, synthetic_model, tempdir};

#[test]
fn cpu_route_writes_the_side_by_side_picture_and_the_summary() {
    let (model_dir, _) = synthetic_model();
    let tmp = tempdir("tools-demo-");
    let out = tmp.path().join("out");
    let o = openngx(
        &[
            "demo",
            "--route",
            "cpu",
            "--frames",
            "1",
            "--model",
            model_dir.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ],
        &[],
    );
    let text = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{text}\n{}", stderr(&o));
    assert!(text.contains("64x64 (field 336x320), 1 frame(s)"), "{text}");
    assert!(text.contains("frame 0: GPU n/a"), "{text}");
    assert!(text.contains("frame 0: the CPU reference itself"), "{text}");
    // input | output side by side: 128x64 RGB.
    let png = std::fs::read(out.join("frame_000.png")).expect("frame_000.png");
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    assert_eq!(
        u32::from_be_bytes([png[16], png[17], png[18], png[19]]),
        128
    );
    assert_eq!(u32::from_be_bytes([png[20], png[21], png[22], png[23]]), 64);
    let summary = std::fs::read_to_string(out.join("summary.txt")).expect("summary.txt");
    assert!(summary.contains("size 64x64 (field 336x320)"), "{summary}");
    assert!(
        summary.contains("frame 0: the CPU reference itself"),
        "{summary}"
    );
}

#[test]
fn bad_arguments_are_refused_before_any_work() {
    let tmp = tempdir("tools-demo-bad-");
    let out = tmp.path().join("out");
    for (args, want) in [
        (vec!["--width", "32", "--height", "64"], "64..8192"),
        (vec!["--frames", "0"], "--frames must be at least 1"),
        (vec!["--input", "/nonexistent/shots"], "/nonexistent/shots"),
    ] {
        let mut all = vec!["demo", "--route", "cpu", "--model", "/nonexistent/model"];
        all.extend(args);
        all.extend(["--out", out.to_str().unwrap()]);
        let o = openngx(&all, &[]);
        assert_eq!(o.status.code(), Some(1), "{all:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(want), "{all:?}: {}", stderr(&o));
        assert!(!out.exists(), "{all:?} wrote output");
    }
}
