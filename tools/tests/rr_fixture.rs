//! `openngx reference --feature rr`: the CPU reference's 3-frame sequence at 64x48 -> 96x72 on
//! the seed-0 synthetic RR model, written as a fixture directory whose digests equal the golden
//! digests of `tests/rr_reference.rs` (the same scene, jitter and model), whose files hash as the
//! manifest says, and whose guide table covers every lane. This is the fixture a replay through
//! the C ABI will compare against once RR has a GPU route.

mod tools_common;

use std::path::Path;

use openngx_tools::rr_fixture::RrFixture;
use sha2::{Digest, Sha256};
use tools_common::{openngx, stderr, stdout, tempdir};

#[test]
fn the_rr_fixture_matches_the_golden_digests() {
    let dir = tempdir("rr-fixture-");
    let model = dir.path().join("rr-model");
    let o = openngx(
        &[
            "synth-model",
            "--feature",
            "rr",
            "--seed",
            "0",
            "--out",
            model.to_str().expect("utf-8 path"),
        ],
        &[],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let out = dir.path().join("fixture");
    let o = openngx(
        &[
            "reference",
            "--feature",
            "rr",
            "--model",
            model.to_str().expect("utf-8 path"),
            "--synthetic-scene",
            "--width",
            "64",
            "--height",
            "48",
            "--out-width",
            "96",
            "--out-height",
            "72",
            "--frames",
            "3",
            "--out",
            out.to_str().expect("utf-8 path"),
        ],
        &[],
    );
    assert!(o.status.success(), "{}\n{}", stdout(&o), stderr(&o));
    assert!(
        stdout(&o).contains("64x48 -> 96x72, preset E"),
        "{}",
        stdout(&o)
    );

    let golden = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/golden/rr-reference-64x48-96x72-seed0.txt");
    let want = std::fs::read_to_string(&golden).expect("golden digests");
    let got = std::fs::read_to_string(out.join("digests.txt")).expect("digests.txt");
    assert_eq!(
        got,
        want,
        "the fixture's digests differ from {}",
        golden.display()
    );

    let m: RrFixture =
        serde_json::from_slice(&std::fs::read(out.join("manifest.json")).expect("manifest"))
            .expect("manifest parses");
    assert_eq!(
        (m.render, m.output, m.preset.as_str()),
        ([64, 48], [96, 72], "E")
    );
    assert_eq!(m.frames.len(), 3);
    let model_manifest = std::fs::read(model.join("manifest.json")).expect("model manifest");
    assert_eq!(
        m.model_manifest_sha256,
        format!("{:x}", Sha256::digest(&model_manifest))
    );
    // Every file is there with the size and hash the manifest gives; the published tensors are
    // the golden list's, in its order.
    let mut names = Vec::new();
    for f in &m.frames {
        for e in &f.files {
            let bytes = std::fs::read(out.join(&e.file)).expect("fixture file");
            assert_eq!(bytes.len() as u64, e.bytes, "{}", e.file);
            assert_eq!(
                format!("{:x}", Sha256::digest(&bytes)),
                e.sha256,
                "{}",
                e.file
            );
            if e.name != "color" && e.name != "guides" {
                names.push(format!("f{}.{}", f.index, e.name));
            }
        }
        assert_eq!(f.files[0].bytes, 64 * 48 * 4 * 4);
        assert_eq!(f.files[1].bytes, 64 * 48 * 16 * 4);
    }
    let golden_names: Vec<&str> = want.lines().filter_map(|l| l.split(' ').next()).collect();
    assert_eq!(names, golden_names);
    assert_eq!(m.frames[1].jitter, [-0.25, 0.16666667]);
    // The guide table covers the 16 lanes once each.
    let mut lanes = [0; 16];
    for g in &m.guides {
        for l in &mut lanes[g.first_lane..g.first_lane + g.lanes] {
            *l += 1;
        }
    }
    assert_eq!(lanes, [1; 16], "{:?}", m.guides);
    assert!(m
        .guides
        .iter()
        .any(|g| g.key == "GBuffer.Normals" && g.lanes == 3));
}
