use super::*;
use crate::nr::geometry::Geometry;
use crate::nr::graph::build;
use crate::nr::record::passes::{
    check_passes, compose_bands, import_bands, prepare_bands, PassSize,
};

const MIB: u64 = 1 << 20;

/// What lavapipe reports: 128 MiB bindings, 65535 workgroups per axis, 2 GiB allocations.
fn lavapipe() -> BindLimits {
    BindLimits {
        max_range: 128 * MIB,
        max_groups: [65535; 3],
        max_buffer: 2 << 30,
    }
}

/// A device with a large binding range (the H200 class: 4 GiB - 1 bindings, 2^31 - 1
/// workgroups along x).
fn large() -> BindLimits {
    BindLimits {
        max_range: u64::from(u32::MAX),
        max_groups: [i32::MAX as u32, 65535, 65535],
        max_buffer: 64 << 30,
    }
}

/// Every band of every node fits, the bands of a node follow each other over its whole axis,
/// and where a node is split each tensor it writes is written once, in sub-ranges starting at
/// multiples of 256 bytes. Returns how many nodes were split.
fn check_plan(g: &Graph, plan: &[Vec<Band>], limits: &BindLimits) -> usize {
    assert_eq!(plan.len(), g.nodes.len());
    let mut split = 0;
    for (node, bands) in g.nodes.iter().zip(plan) {
        let axis = Axis::of(g, node);
        assert_eq!(bands[0].start, 0, "{}", node.label);
        assert_eq!(
            bands.last().map(|b| b.end),
            Some(axis.len()),
            "{}",
            node.label
        );
        for w in bands.windows(2) {
            assert_eq!(w[0].end, w[1].start, "{}", node.label);
        }
        for &b in bands {
            assert!(!b.is_empty(), "{}: empty band", node.label);
            check_band(g, node, b, limits, limits.max_range)
                .unwrap_or_else(|e| panic!("{}: {b:?}: {e}", node.label));
        }
        if bands.len() == 1 {
            continue;
        }
        split += 1;
        for t in node.op.outputs() {
            let mut next = 0;
            for &b in bands {
                let rows = touched(g, node, b)
                    .into_iter()
                    .find(|(x, _)| *x == t)
                    .map(|(_, r)| r)
                    .expect("output touched");
                assert_eq!(rows.start, next, "{}: `{}`", node.label, g.tensors[t].name);
                assert_eq!(
                    rows.start * row_bytes(g, t) % 256,
                    0,
                    "{}: `{}` band {b:?} starts unaligned",
                    node.label,
                    g.tensors[t].name
                );
                next = rows.end;
            }
            assert_eq!(
                next,
                g.rows(t) as u64,
                "{}: `{}`",
                node.label,
                g.tensors[t].name
            );
        }
    }
    split
}

#[test]
fn lavapipe_splits_what_exceeds_its_range_at_1080p_and_4k() {
    for (w, h, want_split) in [(1920, 1080, 10), (3840, 2160, 40)] {
        let g = build(&Geometry::new(w, h).expect("size"));
        let limits = lavapipe();
        let plan = plan_graph(&g, &limits).expect("plans");
        let split = check_plan(&g, &plan, &limits);
        assert!(split >= want_split, "{w}x{h}: {split} nodes split");
        // The field QKV of block 0 (2.2M rows x 192 bytes at 1080p) and the adapter, whose
        // grid (a workgroup per 8 rows) exceeds 65535 workgroups, are split.
        for label in ["block-0.qkv", "block-0.adapter"] {
            let i = g
                .nodes
                .iter()
                .position(|n| n.label == label)
                .unwrap_or_else(|| panic!("no node `{label}`"));
            assert!(plan[i].len() > 1, "{w}x{h}: `{label}` not split");
        }
        // The deep levels are never split.
        for (node, bands) in g.nodes.iter().zip(&plan) {
            if matches!(node.op, Op::VitAttention { .. }) {
                assert_eq!(bands.len(), 1);
            }
        }
    }
}

#[test]
fn a_large_binding_range_splits_nothing() {
    for (w, h) in [(1920, 1080), (3840, 2160), (8192, 2048)] {
        let g = build(&Geometry::new(w, h).expect("size"));
        let plan = plan_graph(&g, &large()).expect("plans");
        assert!(
            plan.iter().all(|b| b.len() == 1),
            "{w}x{h}: a node split on a large device"
        );
        check_plan(&g, &plan, &large());
    }
}

#[test]
fn a_lowered_range_splits_every_level_correctly() {
    let g = build(&Geometry::new(1920, 1080).expect("size"));
    let limits = lavapipe().lowered(Some(4 * MIB));
    let plan = plan_graph(&g, &limits).expect("plans");
    let split = check_plan(&g, &plan, &limits);
    // Pools, merges, window attention and GEMMs on several levels.
    for kind in [
        "Pool",
        "UpMerge",
        "PostBlend",
        "WindowAttention",
        "Gemm",
        "Normalize",
    ] {
        assert!(
            g.nodes
                .iter()
                .zip(&plan)
                .any(|(n, b)| n.op.kind() == kind && b.len() > 1),
            "no {kind} split"
        );
    }
    assert!(split > 100, "{split}");
    // Lowering never raises.
    assert_eq!(lavapipe().lowered(Some(1 << 40)), lavapipe());
}

#[test]
fn what_cannot_fit_is_refused_naming_the_limit() {
    let g = build(&Geometry::new(1920, 1080).expect("size"));
    // 256 rows of the field QKV (192 bytes each) cannot fit 16 KiB.
    let e = plan_graph(&g, &lavapipe().lowered(Some(16 << 10))).expect_err("too small");
    assert_eq!(e.limit, "maxStorageBufferRange");
    assert_eq!(e.have, 16 << 10);
    assert!(e.to_string().contains("maxStorageBufferRange"), "{e}");
    assert!(e.what.contains("node `"), "{e}");
    // A window row of the field's attention needs 1920 x 2 windows of heads along x and y.
    let few = BindLimits {
        max_groups: [100, 65535, 65535],
        ..lavapipe()
    };
    let e = plan_graph(&g, &few).expect_err("grid too small");
    assert!(e.limit.starts_with("maxComputeWorkGroupCount"), "{e}");
    assert_eq!(e.unit, "workgroups");
}

/// A band of window rows run as a smaller level in the band's phase covers exactly the tokens
/// of the same windows of the whole level, window by window.
#[test]
fn window_bands_are_the_same_windows() {
    for size in [Size::new(20, 36), Size::new(24, 8), Size::new(12, 44)] {
        for p in 0..4u8 {
            let phase = Phase(p);
            let axis = Axis::Windows { size, phase };
            let n = axis.len();
            // Every way to cut the window rows into two or three bands.
            for a in 1..n {
                for b in a..=n {
                    let cuts: Vec<Band> = [0, a, b, n]
                        .windows(2)
                        .filter(|w| w[0] < w[1])
                        .map(|w| Band {
                            start: w[0],
                            end: w[1],
                        })
                        .collect();
                    check_windows(size, phase, &cuts);
                }
            }
        }
    }
}

/// The in-level tokens (x, y) of window (i, j) of a level of `size` in `phase`.
fn window_tokens(size: Size, phase: Phase, i: u32, j: u32) -> Vec<(i64, i64)> {
    let (sx, sy) = phase.shift();
    let mut v = Vec::new();
    for t in 0..64 {
        let x = i64::from(8 * i + t % 8) - i64::from(sx);
        let y = i64::from(8 * j + t / 8) - i64::from(sy);
        let inside = x >= 0 && y >= 0 && x < i64::from(size.w) && y < i64::from(size.h);
        // Outside tokens are zero vectors: their position in the window still matters.
        v.push(if inside { (x, y) } else { (-1, t as i64) });
    }
    v
}

fn check_windows(size: Size, phase: Phase, bands: &[Band]) {
    let (sx, _) = phase.shift();
    let across = (size.w + sx).div_ceil(8);
    let mut rows_seen = 0;
    for &band in bands {
        let (first, part, bphase) = window_band(size, phase, band);
        assert_eq!(first, rows_seen, "{size:?} {phase:?} {band:?}");
        rows_seen = first + part.h;
        assert_eq!(
            Axis::Windows {
                size: part,
                phase: bphase
            }
            .len(),
            band.len(),
            "{size:?} {phase:?} {band:?}: window rows of the band"
        );
        for j in 0..band.len() {
            for i in 0..across {
                let whole = window_tokens(size, phase, i, band.start + j);
                let local: Vec<(i64, i64)> = window_tokens(part, bphase, i, j)
                    .into_iter()
                    .map(|(x, y)| {
                        if x < 0 {
                            (x, y)
                        } else {
                            (x, y + i64::from(first))
                        }
                    })
                    .collect();
                assert_eq!(
                    whole, local,
                    "{size:?} {phase:?} {band:?} window ({i}, {j})"
                );
            }
        }
    }
    assert_eq!(rows_seen, size.h, "{size:?} {phase:?}: rows covered");
}

#[test]
fn split_takes_the_longest_bands_that_fit() {
    let fits = |b: Band| if b.len() <= 10 { Ok(()) } else { Err(b.len()) };
    let bands = split(35, 4, fits).expect("fits");
    assert_eq!(
        bands.iter().map(|b| (b.start, b.end)).collect::<Vec<_>>(),
        [(0, 8), (8, 16), (16, 24), (24, 32), (32, 35)]
    );
    assert_eq!(split(35, 16, fits), Err(16));
    assert_eq!(
        split(0, 4, fits).expect("empty"),
        [Band { start: 0, end: 0 }]
    );
}

/// The frame passes at 1080p and 4K on lavapipe: prepare's f32 features (135 MiB at 1080p) in
/// bands, each with the proxy rows its mirror reads; compose and the imports whole up to 4K.
#[test]
fn frame_passes_fit_lavapipe_at_1080p_and_4k() {
    for (w, h, prepare, compose) in [(1920, 1080, 2, 1), (3840, 2160, 4, 1), (4096, 4096, 9, 3)] {
        let size = PassSize::of_geometry(&Geometry::new(w, h).expect("size"));
        let limits = lavapipe();
        check_passes(size, &limits).expect("passes fit");
        let p = prepare_bands(size, &limits).expect("prepare");
        assert_eq!(p.len(), prepare, "{w}x{h}: prepare launches");
        assert_eq!(p[0].rows.start, 0);
        assert_eq!(p.last().map(|b| b.rows.end), Some(size.field_height));
        for b in &p {
            assert_eq!(b.src.start % 32, 0);
            for y in b.rows.clone() {
                let m = crate::nr::frame::prepare::mirror(y, size.height);
                assert!(
                    b.src.contains(&m),
                    "{w}x{h}: row {y} mirrors to {m}, not in {b:?}"
                );
            }
            assert!(
                u64::from(b.rows.end - b.rows.start) * u64::from(size.field_width) * 64
                    <= limits.max_range
            );
        }
        let c = compose_bands(size, &limits).expect("compose");
        assert_eq!(c.len(), compose, "{w}x{h}: compose launches");
        let i = import_bands(size.width, size.height, 4, &limits).expect("import");
        assert_eq!(i.len(), c.len());
        // Nothing splits on a large device.
        assert_eq!(prepare_bands(size, &large()).expect("prepare").len(), 1);
        assert_eq!(compose_bands(size, &large()).expect("compose").len(), 1);
    }
}

/// The API's largest sizes (8192 x 2048, 16,777,216 pixels) run on a large device; on lavapipe,
/// without strips, a field-level tensor exceeds one 2 GiB allocation and the size is refused,
/// naming the limit. With the strips every route may use, the field's big intermediates take a
/// band's rows and the size fits lavapipe too.
#[test]
fn the_largest_sizes_fit_or_are_refused_naming_the_limit() {
    use crate::nr::record::fusion::Fusions;
    use crate::nr::record::strips::{default_budget, Strips};
    use crate::nr::record::workspace::plan_within;
    // What a feature keeps: the head (its input is rewritten every frame).
    let g = build(&Geometry::new(8192, 2048).expect("size"));
    let keep = [g.head];
    let none = Strips::none(&g);
    assert!(plan_within(&g, &keep, &none, &Fusions::none(&g), &large()).is_ok());
    let e =
        plan_within(&g, &keep, &none, &Fusions::none(&g), &lavapipe()).expect_err("a 3 GiB tensor");
    assert_eq!(e.limit, "maxMemoryAllocationSize/maxBufferSize");
    assert!(e.to_string().contains("maxMemoryAllocationSize"), "{e}");
    let strips = Strips::plan(&g, &keep, &lavapipe(), Some(default_budget(&g)));
    let p = plan_within(&g, &keep, &strips, &Fusions::none(&g), &lavapipe())
        .expect("8192x2048 in strips");
    assert!(p.bytes < 4 << 30, "{}", p.bytes);
    // 4K fits lavapipe, in several workspace buffers without strips, in one with them.
    let g = build(&Geometry::new(3840, 2160).expect("size"));
    let none = Strips::none(&g);
    let p = plan_within(&g, &[g.head], &none, &Fusions::none(&g), &lavapipe()).expect("4K fits");
    assert!(p.bytes > 2 << 30, "{}", p.bytes);
    let strips = Strips::plan(&g, &[g.head], &lavapipe(), Some(default_budget(&g)));
    let p = plan_within(&g, &[g.head], &strips, &Fusions::none(&g), &lavapipe()).expect("4K fits");
    assert!(p.bytes < 1100 << 20, "{}", p.bytes);
}
