use super::*;
use crate::rr::geometry::{Geometry, Size};
use crate::rr::graph::build;
use crate::rr::preset::Preset;

const MIB: u64 = 1 << 20;

fn graph(r: (u32, u32), o: (u32, u32), preset: Preset) -> Graph {
    let g = Geometry::new(Size::new(r.0, r.1), Size::new(o.0, o.1)).unwrap();
    build(&g, preset)
}

/// lavapipe's limits (and those of many desktop GPUs): 128 MiB bindings, 65535 workgroups.
fn limits(range: u64) -> BindLimits {
    BindLimits {
        max_range: range,
        max_groups: [65_535; 3],
        max_buffer: 1 << 40,
    }
}

/// Checks a graph's plan: every band fits, the bands of a node follow each other over its whole
/// axis, every sub-range starts 256-byte aligned, and each written tensor's bytes are written
/// exactly once over the bands. Returns (nodes split, launches of the split nodes).
fn check_plan(
    g: &Graph,
    plan: &[Vec<Band>],
    device: &BindLimits,
    cut: &BindLimits,
) -> (usize, usize) {
    let (mut split_nodes, mut split_launches) = (0, 0);
    for (node, bands) in g.nodes.iter().zip(plan) {
        let axis = Axis::of(g, node);
        assert!(!bands.is_empty(), "{}: no band", node.label);
        assert_eq!(bands[0].start, 0, "{}", node.label);
        assert_eq!(bands.last().unwrap().end, axis.len(), "{}", node.label);
        for w in bands.windows(2) {
            assert_eq!(
                w[0].end, w[1].start,
                "{}: bands follow each other",
                node.label
            );
        }
        if let Axis::Whole = axis {
            assert_eq!(
                bands.len(),
                1,
                "{}: an op without a band rule is one launch",
                node.label
            );
            let mut ts = node.op.inputs();
            ts.extend(node.op.outputs());
            for t in ts {
                assert!(tensor_bytes(g, t) <= device.max_range, "{}", node.label);
            }
            continue;
        }
        if bands.len() > 1 {
            split_nodes += 1;
            split_launches += bands.len();
        }
        let range = if bands.len() > 1 {
            cut.band_range()
        } else {
            cut.max_range
        };
        for &sy in shifts(&axis) {
            let mut covered: Vec<u64> = vec![0; g.tensors.len()];
            for &b in bands {
                assert!(!b.is_empty(), "{}: empty band", node.label);
                if bands.len() > 1 {
                    assert_eq!(b.start % axis.quantum(g), 0, "{}", node.label);
                }
                for (t, rows) in touched(g, &axis, b, sy) {
                    let whole = BufferBinding {
                        buffer: ash::vk::Buffer::null(),
                        offset: 4096,
                        range: tensor_bytes(g, t),
                    };
                    let sub = band_binding(g, t, whole, rows.clone());
                    let name = &g.tensors[t].name;
                    assert!(sub.range <= range, "{}: `{name}` {rows:?}", node.label);
                    assert_eq!((sub.offset - whole.offset) % 256, 0, "{}", node.label);
                    assert!(sub.offset + sub.range <= whole.offset + whole.range);
                    if node.op.outputs().contains(&t) {
                        assert_eq!(
                            sub.offset - whole.offset,
                            covered[t],
                            "{}: `{name}` written in order, once (shift {sy})",
                            node.label
                        );
                        covered[t] += sub.range;
                    }
                }
                let groups = match &axis {
                    Axis::Rows { inv, .. } => (u64::from(b.len()) * inv).div_ceil(64),
                    _ => 0,
                };
                assert!(groups <= 65_535 * 65_535, "{}: grid", node.label);
            }
            // Every output the bands bind (the exposure's, written by its second pass, is bound
            // whole) is written whole.
            let cut = touched(
                g,
                &axis,
                Band {
                    start: 0,
                    end: axis.len(),
                },
                sy,
            );
            for t in node
                .op
                .outputs()
                .into_iter()
                .filter(|t| cut.iter().any(|(u, _)| u == t))
            {
                assert_eq!(
                    covered[t],
                    tensor_bytes(g, t),
                    "{}: `{}` whole (shift {sy})",
                    node.label,
                    g.tensors[t].name
                );
            }
        }
    }
    (split_nodes, split_launches)
}

/// Every window of a level in a band reads only key rows its band binds and writes only query
/// rows its band binds: the windows of the band, enumerated with `rr::geometry`'s own offsets
/// and mirror (what the CPU reference and the kernel do).
#[test]
fn window_bands_bind_every_row_their_windows_touch() {
    use crate::rr::geometry::{mirror, KEY_OFFSETS};
    for h in [1u32, 2, 3, 7, 8, 9, 16, 23, 46, 64, 92, 100, 368, 1088] {
        let len = (h + 4).div_ceil(WINDOW);
        for cut in 1..=len.min(5) {
            let step = len.div_ceil(cut);
            let bands: Vec<Band> = (0..len)
                .step_by(step as usize)
                .map(|a| Band {
                    start: a,
                    end: (a + step).min(len),
                })
                .collect();
            for &sy in &SHIFTS_Y {
                let mut written = 0;
                for &b in &bands {
                    let Some((keys, queries)) = window_rows(h, sy, b) else {
                        assert!(b.start >= (h + sy).div_ceil(WINDOW), "h {h} sy {sy} {b:?}");
                        continue;
                    };
                    assert_eq!(queries.start, written, "h {h} sy {sy}: in order, once");
                    written = queries.end;
                    for j in b.start..b.end.min((h + sy).div_ceil(WINDOW)) {
                        let oy = i64::from(WINDOW * j) - i64::from(sy);
                        for &(_, dy) in KEY_OFFSETS.iter() {
                            let r = u64::from(mirror(oy + i64::from(dy), h));
                            assert!(keys.contains(&r), "h {h} sy {sy} {b:?}: key row {r}");
                        }
                        for dy in 0..i64::from(WINDOW) {
                            let y = oy + dy;
                            if (0..i64::from(h)).contains(&y) {
                                assert!(queries.contains(&(y as u64)), "h {h} sy {sy}: row {y}");
                            }
                        }
                    }
                }
                assert_eq!(written, u64::from(h), "h {h} sy {sy}: every row written");
            }
        }
    }
}

#[test]
fn a_device_with_large_bindings_splits_nothing() {
    for preset in [Preset::D, Preset::E] {
        let g = graph((1920, 1080), (3840, 2160), preset);
        let big = limits(4 << 30);
        let plan = plan_graph(&g, &big, &Cut::default()).unwrap();
        assert!(plan.iter().all(|b| b.len() == 1));
        assert_eq!(check_plan(&g, &plan, &big, &big), (0, 0));
    }
    // 1280x720 -> 3840x2160 fits 128 MiB as it is (its largest tensors are 115 MiB).
    let g = graph((1280, 720), (3840, 2160), Preset::E);
    let plan = plan_graph(&g, &limits(128 * MIB), &Cut::default()).unwrap();
    assert!(plan.iter().all(|b| b.len() == 1));
}

#[test]
fn hd_to_4k_within_128_mib_splits_the_mlp_hidden_codes() {
    for preset in [Preset::D, Preset::E] {
        let g = graph((1920, 1080), (3840, 2160), preset);
        let l = limits(128 * MIB);
        let plan = plan_graph(&g, &l, &Cut::default()).unwrap();
        let (nodes, launches) = check_plan(&g, &plan, &l, &l);
        // Exactly the ops touching a tensor above the limit are split.
        let over: Vec<&str> = g
            .nodes
            .iter()
            .filter(|n| {
                let mut ts = n.op.inputs();
                ts.extend(n.op.outputs());
                ts.iter().any(|&t| tensor_bytes(&g, t) > l.max_range)
            })
            .map(|n| n.label.as_str())
            .collect();
        let split: Vec<&str> = g
            .nodes
            .iter()
            .zip(&plan)
            .filter(|(_, b)| b.len() > 1)
            .map(|(n, _)| n.label.as_str())
            .collect();
        assert_eq!(split, over);
        assert!(nodes >= 4, "enc0's and dec0's W1 and W2: {split:?}");
        assert!(launches >= 2 * nodes);
        println!("{preset:?}: {nodes} ops split into {launches} launches: {split:?}");
    }
}

fn range(bytes: u64) -> Cut {
    Cut {
        band_range: Some(bytes),
        min_bands: None,
    }
}

#[test]
fn a_lowered_range_splits_what_exceeds_it() {
    let g = graph((64, 48), (96, 72), Preset::E);
    let device = limits(128 * MIB);
    let cut = device.lowered(Some(64 << 10));
    let plan = plan_graph(&g, &device, &range(64 << 10)).unwrap();
    let (nodes, launches) = check_plan(&g, &plan, &device, &cut);
    for (n, b) in g.nodes.iter().zip(&plan) {
        let axis = Axis::of(&g, n);
        let over = touched(
            &g,
            &axis,
            Band {
                start: 0,
                end: axis.len(),
            },
            4,
        )
        .iter()
        .any(|(t, _)| tensor_bytes(&g, *t) > cut.max_range);
        assert_eq!(b.len() > 1, over, "{}", n.label);
    }
    println!("64 KiB at 64x48: {nodes} ops split into {launches} launches");
    assert!(
        nodes >= 10 && launches > 2 * nodes,
        "{nodes} ops in {launches} launches"
    );
}

#[test]
fn min_bands_splits_every_op_with_a_band_rule() {
    let g = graph((64, 48), (96, 72), Preset::E);
    let device = limits(128 * MIB);
    let cut = Cut {
        band_range: None,
        min_bands: Some(3),
    };
    let plan = plan_graph(&g, &device, &cut).unwrap();
    let (nodes, launches) = check_plan(&g, &plan, &device, &device);
    let mut rows_ops = 0;
    for (n, b) in g.nodes.iter().zip(&plan) {
        let axis = Axis::of(&g, n);
        if !matches!(axis, Axis::Whole) {
            rows_ops += 1;
            // Every op with more than one quantum of rows runs in several bands (at most three,
            // and three where whole quanta make three equal-enough thirds).
            let quanta = axis.len().div_ceil(axis.quantum(&g));
            assert!(b.len() <= 3, "{}", n.label);
            assert_eq!(b.len() > 1, quanta > 1, "{}", n.label);
            if quanta >= 6 {
                assert_eq!(b.len(), 3, "{}", n.label);
            }
        } else {
            assert_eq!(b.len(), 1);
        }
    }
    println!(
        "min_bands 3 at 64x48: {nodes} of {rows_ops} ops with a band rule in {launches} launches"
    );
    assert!(nodes > 40, "{nodes}");
}

#[test]
fn merges_and_expands_touch_matching_rows() {
    let g = graph((64, 48), (96, 72), Preset::E);
    for n in &g.nodes {
        let axis = Axis::of(&g, n);
        match &n.op {
            Op::Merge { input, out, .. } => {
                let b = Band { start: 1, end: 2 };
                let t = touched(&g, &axis, b, 0);
                let fine = g.grid_size(g.tensors[*input].grid);
                let coarse = g.grid_size(g.tensors[*out].grid);
                assert_eq!(fine.h, 2 * coarse.h);
                let rows = |id| t.iter().find(|(u, _)| *u == id).unwrap().1.clone();
                let fw = u64::from(fine.w);
                let cw = u64::from(coarse.w);
                assert_eq!(rows(*input), 2 * fw..4 * fw, "{}", n.label);
                assert_eq!(rows(*out), cw..2 * cw, "{}", n.label);
            }
            Op::Expand { low, skip, out, .. } => {
                let b = Band { start: 1, end: 3 };
                let t = touched(&g, &axis, b, 0);
                let fine = g.grid_size(g.tensors[*out].grid);
                let coarse = g.grid_size(g.tensors[*low].grid);
                let rows = |id| t.iter().find(|(u, _)| *u == id).unwrap().1.clone();
                let fw = u64::from(fine.w);
                let cw = u64::from(coarse.w);
                assert_eq!(rows(*low), cw..3 * cw, "{}", n.label);
                assert_eq!(rows(*skip), 2 * fw..6 * fw, "{}", n.label);
                assert_eq!(rows(*out), 2 * fw..6 * fw, "{}", n.label);
            }
            _ => {}
        }
    }
}

#[test]
fn what_no_band_makes_fit_is_refused_naming_the_tensor_and_the_limit() {
    // 7680x4320 output: the history (253 MiB), which reprojection binds whole.
    let g = graph((3840, 2160), (7680, 4320), Preset::E);
    let e = plan_graph(&g, &limits(128 * MIB), &Cut::default()).unwrap_err();
    assert_eq!(e.limit, "maxStorageBufferRange");
    assert!(
        e.what
            .contains("tensor `history` (bound whole in every band)"),
        "{e}"
    );
    assert!(e.to_string().contains("maxStorageBufferRange"), "{e}");
    // A split op whose smallest band does not fit: the band range below one quantum of rows.
    let g = graph((1920, 1080), (3840, 2160), Preset::E);
    let e = plan_graph(&g, &limits(128 * MIB), &range(300)).unwrap_err();
    assert_eq!(e.limit, "maxStorageBufferRange");
    assert!(e.what.contains("tensor `"), "{e}");
    // The largest area the API accepts (4096x4096: its history is exactly 128 MiB) and
    // 3840x2160 -> 3840x2160 (the encoder tails' 255 MiB logits) plan within 128 MiB.
    for (r, o) in [((4096, 4096), (4096, 4096)), ((3840, 2160), (3840, 2160))] {
        let g = graph(r, o, Preset::E);
        let l = limits(128 * MIB);
        let plan = plan_graph(&g, &l, &Cut::default()).unwrap();
        check_plan(&g, &plan, &l, &l);
    }
    // A grid no band can hold: one workgroup.
    let g = graph((64, 48), (96, 72), Preset::E);
    let tiny = BindLimits {
        max_groups: [1, 1, 1],
        ..limits(128 * MIB)
    };
    let e = plan_graph(&g, &tiny, &Cut::default()).unwrap_err();
    assert!(e.limit.starts_with("maxComputeWorkGroupCount"), "{e}");
}

#[test]
fn every_accepted_size_plans_or_is_refused_without_panic() {
    for (r, o) in [
        ((1, 1), (1, 1)),
        ((33, 17), (64, 40)),
        ((3840, 2160), (3840, 2160)),
        ((8192, 4096), (16384, 8192)),
        ((16384, 16384), (16384, 16384)),
    ] {
        let g = graph(r, o, Preset::E);
        let l = limits(128 * MIB);
        if let Ok(plan) = plan_graph(&g, &l, &Cut::default()) {
            check_plan(&g, &plan, &l, &l);
        }
    }
}
