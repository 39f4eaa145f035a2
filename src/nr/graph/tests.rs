//! Structural tests of the schedule: wiring, shapes, boundaries and weight coverage.

use std::collections::{BTreeSet, HashSet};

use super::*;
use crate::model::layout;
use crate::nr::geometry::Geometry;

fn graph(w: u32, h: u32) -> Graph {
    build(&Geometry::new(w, h).expect("valid size"))
}

#[test]
fn boundaries_are_the_75_in_spec_order_with_geometry_shapes() {
    for (w, h) in [(64, 64), (512, 512), (1280, 720)] {
        let g = graph(w, h);
        let expected = g.geometry.boundaries();
        assert_eq!(g.boundaries.len(), 75);
        assert_eq!(expected.len(), 75);
        for ((name, t), b) in g.boundaries.iter().zip(&expected) {
            assert_eq!(name, &b.name);
            let tensor = &g.tensors[*t];
            let s = g.geometry.level(tensor.level);
            assert_eq!(
                (s.w, s.h, tensor.channels as u32),
                (b.width, b.height, b.channels),
                "{name}"
            );
            assert_eq!(tensor.dtype, DType::E4, "{name}");
        }
    }
}

#[test]
fn every_tensor_is_written_once_before_it_is_read() {
    let g = graph(64, 64);
    let mut written = vec![0usize; g.tensors.len()];
    written[g.features] = 1;
    for node in &g.nodes {
        for t in node.op.inputs() {
            assert_eq!(
                written[t], 1,
                "{} reads {} before it is written",
                node.label, g.tensors[t].name
            );
        }
        for t in node.op.outputs() {
            written[t] += 1;
            assert_eq!(
                written[t], 1,
                "{} writes {} twice",
                node.label, g.tensors[t].name
            );
        }
    }
    assert_eq!(written[g.head], 1);
    let labels: HashSet<_> = g.nodes.iter().map(|n| n.label.as_str()).collect();
    assert_eq!(labels.len(), g.nodes.len(), "labels are unique");
}

#[test]
fn shapes_are_consistent() {
    let g = graph(64, 64);
    for node in &g.nodes {
        match &node.op {
            Op::Gemm {
                input,
                mode,
                mat,
                seed,
                epilogue,
                out,
                out_raw,
                ..
            } => {
                let cin = g.tensors[*input].channels;
                match mode {
                    InputMode::Shared => assert_eq!(cin, mat.k, "{}", node.label),
                    InputMode::Split => assert_eq!(cin, mat.k * mat.groups, "{}", node.label),
                }
                assert_eq!(mat.k % 32, 0, "{}: K is a multiple of 32", node.label);
                assert_eq!(g.tensors[*input].dtype, DType::E4, "{}", node.label);
                assert_eq!(
                    g.tensors[*out].channels,
                    mat.n * mat.groups,
                    "{}",
                    node.label
                );
                assert_eq!(
                    g.tensors[*out].level, g.tensors[*input].level,
                    "{}",
                    node.label
                );
                if let Some(s) = seed {
                    assert_eq!(
                        g.tensors[s.skip].channels,
                        mat.n * mat.groups,
                        "{}",
                        node.label
                    );
                    assert_eq!(
                        g.tensors[s.skip].level, g.tensors[*input].level,
                        "{}",
                        node.label
                    );
                }
                assert_eq!(
                    out_raw.is_some(),
                    *epilogue == Epilogue::Dual,
                    "{}",
                    node.label
                );
            }
            Op::UpMerge { low, skip, out, .. } => {
                assert_eq!(
                    g.tensors[*low].level,
                    next_level(g.tensors[*skip].level),
                    "{}",
                    node.label
                );
                assert_eq!(
                    g.tensors[*low].channels, g.tensors[*out].channels,
                    "{}",
                    node.label
                );
            }
            Op::Pool { input, out } => {
                assert_eq!(g.tensors[*out].level, next_level(g.tensors[*input].level))
            }
            _ => {}
        }
    }
}

#[test]
fn the_graph_reads_every_record_but_the_unread_ones_inside_its_bounds() {
    let g = graph(64, 64);
    let mut read = BTreeSet::new();
    let mut check = |w: WeightRef, len: usize, label: &str| {
        let rec =
            layout::record_len(layout::RecordId::layer(w.block, w.layer)).expect("known record");
        assert!(
            w.offset + len <= rec,
            "{label}: {w:?} + {len} exceeds the record ({rec})"
        );
        read.insert((w.block, w.layer));
    };
    for node in &g.nodes {
        match &node.op {
            Op::Gemm { mat, seed, .. } => {
                check(mat.at, mat.bytes(), &node.label);
                if let Some(s) = seed {
                    check(s.scale, 2 * mat.n * mat.groups, &node.label);
                }
            }
            Op::Adapter { weights, .. } => check(*weights, 1024, &node.label),
            Op::Head { weights, .. } => check(*weights, 1024, &node.label),
            Op::Normalize {
                temperatures,
                heads,
                ..
            } => check(*temperatures, 4 * heads, &node.label),
            Op::WindowAttention { priors, heads, .. } => check(*priors, 8192 * heads, &node.label),
            Op::UpMerge { scale, out, .. } => {
                check(*scale, 2 * g.tensors[*out].channels, &node.label)
            }
            Op::PostBlend {
                input_scale,
                adapter_scale,
                ..
            } => {
                check(*input_scale, 64, &node.label);
                check(*adapter_scale, 64, &node.label);
            }
            _ => {}
        }
    }
    // 153 records: the graph reads 144; blend_scale is read by the frame, the 8 ViT layer3 never.
    assert_eq!(read.len(), 144);
    for b in 31..=38 {
        assert!(!read.contains(&(b, 3)));
    }
}

#[test]
fn phases_and_node_count() {
    let g = graph(64, 64);
    let phases: Vec<(usize, usize)> = g
        .nodes
        .iter()
        .filter_map(|n| match n.op {
            Op::WindowAttention { phase, .. } => Some((n.block, phase)),
            _ => None,
        })
        .collect();
    assert_eq!(phases.len(), 71 - 8 - 1); // all blocks but the ViT and block 39
    let expect = |b: usize| phases.iter().find(|(bb, _)| *bb == b).map(|p| p.1);
    // Spot checks from the spec's block table.
    assert_eq!(expect(0), Some(0));
    assert_eq!(expect(70), Some(1));
    assert_eq!(expect(4), Some(3));
    assert_eq!(expect(14), Some(1));
    assert_eq!(expect(48), Some(0));
    assert_eq!(expect(56), Some(2));
    assert_eq!(expect(66), Some(0));
    assert_eq!(expect(47), Some(3));
}

#[test]
fn gemm_work_at_64x64() {
    let g = graph(64, 64);
    let mut macs = 0usize;
    for node in &g.nodes {
        if let Op::Gemm { input, mat, .. } = &node.op {
            macs += g.rows(*input) * mat.k * mat.n * mat.groups;
        }
    }
    eprintln!("GEMM MACs at 64x64: {macs}");
    assert!(macs > 0);
}
