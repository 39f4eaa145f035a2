//! `openngx verify`: the GPU network op by op against the CPU reference on the GPU's own inputs.
//! Whole-network runs take minutes on lavapipe, so both runs here check the first two blocks of
//! the 64x64 schedule (`--ops`; every op kind of an encoder block): one on a fixture's proxy
//! (prepared features) must be exact; one on synthetic features with the test hook that flips a
//! bit of one op's GPU output must name that op, its tensor and the element.

#[path = "../../tests/common/mod.rs"]
mod common;
mod tools_common;

use openngx::nr::frame::scene;
use openngx::nr::geometry::Geometry;
use openngx::nr::graph::{self, Graph};
use openngx_tools::fixture::{f32_to_bytes, FileRef, Manifest, ProxyRef};
use tools_common::{openngx, stderr, stdout, synthetic_model, tempdir};

/// The 64x64 schedule and the number of its ops in blocks 0 and 1.
fn schedule() -> (Graph, usize) {
    let g = graph::build(&Geometry::new(64, 64).unwrap());
    let n = g.nodes.iter().position(|n| n.block == 2).unwrap();
    (g, n)
}

/// A proxy fixture (64x64 synthetic scene frame, seed 7) whose only check is the head; its
/// reference values do not matter to `verify`.
fn write_fixture(dir: &std::path::Path) {
    let g = Geometry::new(64, 64).unwrap();
    let proxy = scene::render(64, 64, 2).proxy;
    let px: Vec<f32> = proxy.iter().flatten().copied().collect();
    std::fs::write(dir.join("proxy.f32"), f32_to_bytes(&px)).unwrap();
    let rows = g.field.w as usize * g.field.h as usize;
    std::fs::write(dir.join("head.f32"), vec![0u8; rows * 16]).unwrap();
    let m = Manifest {
        source_dimensions: [64, 64],
        full_dimensions: [g.field.w as usize, g.field.h as usize],
        proxy: Some(ProxyRef {
            file: "proxy.f32".into(),
            width: 64,
            height: 64,
            conditioning: Default::default(),
            seed: 7,
            auto_mask: true,
            motion: None,
        }),
        checks: vec!["head".into()],
        reference_head: Some(FileRef {
            file: "head.f32".into(),
        }),
        profile: Some("f13".into()),
        ..Manifest::default()
    };
    std::fs::write(
        dir.join("manifest.json"),
        serde_json::to_string_pretty(&m).unwrap(),
    )
    .unwrap();
}

#[test]
fn verify_is_exact_op_by_op_and_pins_a_difference_to_its_op() {
    if common::Harness::new().is_none() {
        return; // SKIP printed
    }
    let (graph, n) = schedule();
    let kinds: std::collections::BTreeSet<&str> =
        graph.nodes[..n].iter().map(|x| x.op.kind()).collect();
    assert!(kinds.len() >= 5, "{kinds:?}");
    let (model_dir, _) = synthetic_model();
    let model = model_dir.to_str().unwrap();
    let ops = n.to_string();

    let tmp = tempdir("tools-verify-");
    write_fixture(tmp.path());
    let t = std::time::Instant::now();
    let o = openngx(
        &[
            "verify",
            "--model",
            model,
            "--fixture",
            tmp.path().to_str().unwrap(),
            "--ops",
            &ops,
        ],
        &[],
    );
    eprintln!(
        "openngx verify --fixture (first {n} ops at 64x64): {:.1} s",
        t.elapsed().as_secs_f64()
    );
    let text = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{text}\n{}", stderr(&o));
    let total = graph.nodes.len();
    for line in [
        "(features from proxy): 64x64 (field 336x320), profile f13".to_string(),
        format!("{n} of {total} ops"),
        format!("all {n} ops exact (the first {n} of {total} in the schedule)"),
    ] {
        assert!(text.contains(&line), "missing `{line}` in:\n{text}");
    }

    // The hook flips the low bit of element 0 of op k's first output on the GPU side: the ops
    // before it are exact, op k is reported with its kind, block, label and tensor.
    let k = graph.nodes[..n]
        .iter()
        .position(|x| x.op.kind() == "WindowAttention")
        .unwrap();
    let node = &graph.nodes[k];
    let out = &graph.tensors[node.op.outputs()[0]];
    let t = std::time::Instant::now();
    let o = openngx(
        &[
            "verify",
            "--model",
            model,
            "--synthetic",
            "--width",
            "64",
            "--height",
            "64",
            "--ops",
            &(k + 1).to_string(),
            "--corrupt-op",
            &k.to_string(),
        ],
        &[],
    );
    eprintln!(
        "openngx verify --synthetic --corrupt-op (first {} ops): {:.1} s",
        k + 1,
        t.elapsed().as_secs_f64()
    );
    let text = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{text}\n{}", stderr(&o));
    let head = format!(
        "op {k} (WindowAttention, block {}, {}): tensor `{}` ({:?}) differs in 1 of {} elements; first at element 0 (x=0 y=0 c=0): got 0x",
        node.block,
        node.label,
        out.name,
        out.dtype,
        graph.rows(node.op.outputs()[0]) * out.channels
    );
    assert!(text.contains(&head), "missing `{head}` in:\n{text}");
    // got and expected differ exactly in the flipped bit.
    let line = text
        .lines()
        .find(|l| l.starts_with(&format!("op {k} ")))
        .unwrap();
    let bytes: Vec<u32> = line
        .split("0x")
        .skip(1)
        .map(|h| u32::from_str_radix(h.split_whitespace().next().unwrap(), 16).unwrap())
        .collect();
    assert_eq!(bytes.len(), 2, "{line}");
    assert_eq!(bytes[0] ^ bytes[1], 1, "{line}");
    assert!(!text.contains("ops exact"), "{text}");
}

#[test]
fn verify_refuses_unusable_input() {
    let o = openngx(
        &["verify", "--model", "/nonexistent/model", "--synthetic"],
        &[],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let (model_dir, _) = synthetic_model();
    let tmp = tempdir("tools-verify-bad-");
    let o = openngx(
        &[
            "verify",
            "--model",
            model_dir.to_str().unwrap(),
            "--fixture",
            tmp.path().to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    assert!(stderr(&o).contains("fixture refused"), "{}", stderr(&o));
}
