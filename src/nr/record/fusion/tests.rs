use super::*;
use crate::nr::geometry::Geometry;
use crate::nr::graph::{build, Op};
use crate::nr::record::bands::BindLimits;
use crate::nr::record::network::{plan_within, Keep, Launches, NetworkOptions};
use crate::nr::record::strips::tests::{large, lavapipe};
use crate::nr::record::strips::{default_budget, StripChoice};

fn launches(g: &Graph, route: Route, keep: Keep, strips: StripChoice, l: &BindLimits) -> Launches {
    launches_with(g, route, Fusion::NormInAttention, keep, strips, l)
}

fn launches_with(
    g: &Graph,
    route: Route,
    fusion: Fusion,
    keep: Keep,
    strips: StripChoice,
    l: &BindLimits,
) -> Launches {
    let opts = NetworkOptions {
        route,
        keep,
        input_per_frame: true,
        strips,
        fusion,
        ..NetworkOptions::default()
    };
    plan_within(g, &opts, l).expect("plan")
}

fn is_window_norm(op: &Op) -> bool {
    matches!(op, Op::Normalize { vit: false, .. })
}

/// The tensor route runs every window normalisation inside the window attention after it and
/// nothing else; the exact route fuses nothing; without `fusion` nothing is fused.
#[test]
fn the_tensor_route_fuses_each_window_normalisation_into_its_attention() {
    let g = build(&Geometry::new(1920, 1080).expect("size"));
    let windows = g
        .nodes
        .iter()
        .filter(|n| matches!(n.op, Op::WindowAttention { .. }))
        .count();
    assert!(windows > 60, "{windows} window attention nodes");
    let l = launches(&g, Route::Tensor, Keep::Head, StripChoice::Off, &large());
    let f = &l.fusions;
    assert_eq!(f.into_next.len(), g.nodes.len());
    assert_eq!(f.count(), windows);
    for (i, node) in g.nodes.iter().enumerate() {
        assert_eq!(
            f.runs_inside_next(i),
            is_window_norm(&node.op),
            "{}",
            node.label
        );
        if f.runs_inside_next(i) {
            assert!(matches!(g.nodes[i + 1].op, Op::WindowAttention { .. }));
            assert_eq!(f.chain_start(i + 1), i);
            assert_eq!(f.chain_end(i), i + 1);
            assert_eq!(f.chain_start(i), i);
        }
    }
    assert!(g
        .nodes
        .iter()
        .any(|n| matches!(n.op, Op::Normalize { vit: true, .. })));
    let exact = launches(&g, Route::Exact, Keep::Head, StripChoice::Off, &large());
    assert_eq!(exact.fusions.count(), 0);
    let opts = NetworkOptions {
        route: Route::Tensor,
        fusion: Fusion::Off,
        ..NetworkOptions::default()
    };
    assert_eq!(
        plan_within(&g, &opts, &large())
            .expect("plan")
            .fusions
            .count(),
        0
    );
}

/// With [`Fusion::NormInGemm`] the tensor route runs every window normalisation as the
/// epilogue of the QKV GEMM before it (the GEMM is the node that runs inside the next), in
/// whole launches and in strips alike, and nothing else; the ViT's normalisation keeps its launch.
#[test]
fn the_tensor_route_runs_each_window_normalisation_in_its_qkv_gemm() {
    let g = build(&Geometry::new(1920, 1080).expect("size"));
    let norms = g.nodes.iter().filter(|n| is_window_norm(&n.op)).count();
    assert!(norms > 60, "{norms} window normalisations");
    for strips in [StripChoice::Off, StripChoice::Auto] {
        let l = launches_with(
            &g,
            Route::Tensor,
            Fusion::NormInGemm,
            Keep::Head,
            strips,
            &large(),
        );
        let f = &l.fusions;
        assert_eq!(f.count(), norms, "{strips:?}");
        for (i, node) in g.nodes.iter().enumerate() {
            let into_norm = g.nodes.get(i + 1).is_some_and(|n| is_window_norm(&n.op));
            assert_eq!(f.runs_inside_next(i), into_norm, "{}", node.label);
            if into_norm {
                let (Op::Gemm { out, .. }, Op::Normalize { qkv, .. }) =
                    (&node.op, &g.nodes[i + 1].op)
                else {
                    panic!("{}: not a QKV GEMM", node.label);
                };
                assert_eq!(out, qkv);
            }
        }
        let exact = launches_with(
            &g,
            Route::Exact,
            Fusion::NormInGemm,
            Keep::Head,
            strips,
            &large(),
        );
        assert_eq!(exact.fusions.count(), 0);
    }
}

/// With [`Fusion::Ffn`] the tensor route runs the FFN input GEMM of every window block (blocks
/// 0-22 and 48-70: the C = 32 blocks' and the expert blocks') inside the GEMM after it, in whole
/// launches and in strips alike, and nothing else (the split-512 blocks' branch has other
/// shapes, the expert blocks' `ffn3` stays apart).
#[test]
fn the_tensor_route_runs_each_window_blocks_ffn_pair_as_one_kernel() {
    let g = build(&Geometry::new(1920, 1080).expect("size"));
    let window = |b: usize| b <= 22 || (48..=70).contains(&b);
    let blocks = (0..=70).filter(|&b| window(b)).count();
    assert_eq!(blocks, 46);
    for strips in [StripChoice::Off, StripChoice::Auto] {
        let l = launches_with(&g, Route::Tensor, Fusion::Ffn, Keep::Head, strips, &large());
        let f = &l.fusions;
        assert_eq!(f.count(), blocks, "{strips:?}");
        for (i, node) in g.nodes.iter().enumerate() {
            let want = window(node.block) && node.label.ends_with(".ffn1");
            assert_eq!(f.runs_inside_next(i), want, "{}", node.label);
            if want {
                let next = &g.nodes[i + 1];
                let (Op::Gemm { out, .. }, Op::Gemm { input, .. }) = (&node.op, &next.op) else {
                    panic!("{}: not followed by a GEMM", node.label);
                };
                assert_eq!(out, input);
                assert!(next.label.ends_with(".ffn2"), "{}", next.label);
            }
        }
        let exact = launches_with(&g, Route::Exact, Fusion::Ffn, Keep::Head, strips, &large());
        assert_eq!(exact.fusions.count(), 0);
    }
}

/// With [`Fusion::Block`] the tensor route also runs each C = 32 block's QKV GEMM,
/// normalisation and window attention inside its projection (blocks 0-4 and 66-70), in whole
/// launches and in strips alike: the chain starts at the QKV GEMM, the projection runs it, the
/// chain's inputs (y and the skip) stay live to the projection, and nothing is fused when every
/// tensor is kept.
#[test]
fn the_tensor_route_runs_each_c32_attention_half_as_one_kernel() {
    let g = build(&Geometry::new(1920, 1080).expect("size"));
    let c32 = |b: usize| b <= 4 || (66..=70).contains(&b);
    let halves = ["qkv", "normalize", "attention"];
    for strips in [StripChoice::Off, StripChoice::Auto] {
        let l = launches_with(
            &g,
            Route::Tensor,
            Fusion::Block,
            Keep::Head,
            strips,
            &large(),
        );
        let f = &l.fusions;
        assert_eq!(f.count(), 46 + 3 * 10, "{strips:?}");
        let last = f.last_use(&g);
        for (i, node) in g.nodes.iter().enumerate() {
            let part = node.label.rsplit('.').next().unwrap_or_default();
            let in_half = c32(node.block) && halves.contains(&part);
            let ffn1 = node.label.ends_with(".ffn1") && (node.block <= 22 || node.block >= 48);
            assert_eq!(f.runs_inside_next(i), in_half || ffn1, "{}", node.label);
            if c32(node.block) && part == "qkv" {
                let proj = &g.nodes[i + 3];
                assert_eq!(proj.label, format!("block-{}.proj", node.block));
                assert_eq!(f.chain_start(i + 3), i);
                assert_eq!(f.chain_end(i), i + 3);
                let (
                    Op::Gemm { input: y, .. },
                    Op::Gemm {
                        seed: Some(seed), ..
                    },
                ) = (&node.op, &proj.op)
                else {
                    panic!("{}: not a GEMM and a seeded projection", node.label);
                };
                assert!(last[*y].is_some_and(|l| l >= i + 3), "{}", node.label);
                assert!(
                    last[seed.skip].is_some_and(|l| l >= i + 3),
                    "{}",
                    proj.label
                );
            }
        }
        let all = launches_with(
            &g,
            Route::Tensor,
            Fusion::Block,
            Keep::All,
            strips,
            &large(),
        );
        assert_eq!(all.fusions.count(), 0, "{strips:?}");
    }
}

/// Kept outputs (verify's `Keep::All`) are never fused away, boundaries alone do not stop it.
#[test]
fn kept_outputs_are_not_fused() {
    let g = build(&Geometry::new(256, 128).expect("size"));
    let all = launches(&g, Route::Tensor, Keep::All, StripChoice::Off, &large());
    assert_eq!(all.fusions.count(), 0);
    let b = launches(
        &g,
        Route::Tensor,
        Keep::Boundaries,
        StripChoice::Off,
        &large(),
    );
    assert!(b.fusions.count() > 60);
}

/// A pair is fused only where both run in the same launches: split into row bands (no strips,
/// lavapipe's limits at a large size) they are not; in strips they are.
#[test]
fn fused_pairs_share_their_launches() {
    let g = build(&Geometry::new(3840, 2160).expect("size"));
    let split = launches(&g, Route::Tensor, Keep::Head, StripChoice::Off, &lavapipe());
    let mut split_pairs = 0;
    for i in 0..g.nodes.len() - 1 {
        if !is_window_norm(&g.nodes[i].op) {
            continue;
        }
        let single = split.bands[i].len() == 1 && split.bands[i + 1].len() == 1;
        assert_eq!(
            split.fusions.runs_inside_next(i),
            single,
            "{}",
            g.nodes[i].label
        );
        split_pairs += usize::from(!single);
    }
    assert!(split_pairs > 0, "4K on lavapipe's limits splits some pairs");
    let strips = launches(
        &g,
        Route::Tensor,
        Keep::Head,
        StripChoice::Budget(64 << 20),
        &lavapipe(),
    );
    assert!(!strips.strips.strips.is_empty());
    for s in &strips.strips.strips {
        let fused: Vec<usize> = s
            .nodes
            .clone()
            .filter(|&i| strips.fusions.runs_inside_next(i))
            .collect();
        assert_eq!(fused.len(), 1, "one pair per window block");
        assert!(s.nodes.contains(&(fused[0] + 1)));
    }
}

/// The fused outputs get no bytes; the fused node's input lives until the node that now reads
/// it and never shares bytes with that node's output; the workspace does not grow.
#[test]
fn the_workspace_plan_follows_the_fusions() {
    let g = build(&Geometry::new(640, 384).expect("size"));
    let keep = [g.head];
    let strips = Strips::none(&g);
    for fusion in [Fusion::NormInAttention, Fusion::NormInGemm, Fusion::Ffn] {
        let l = launches_with(
            &g,
            Route::Tensor,
            fusion,
            Keep::Head,
            StripChoice::Off,
            &large(),
        );
        let f = &l.fusions;
        assert!(f.count() > 0);
        let fused = crate::nr::record::workspace::plan_fused(&g, &keep, &strips, f, u64::MAX);
        let plain = crate::nr::record::workspace::plan(&g, &keep, &strips, u64::MAX);
        assert!(
            fused.bytes <= plain.bytes,
            "{fusion:?}: {} > {}",
            fused.bytes,
            plain.bytes
        );
        let last = f.last_use(&g);
        let overlap = |a: (u64, u64), b: (u64, u64)| a.0 < b.0 + b.1 && b.0 < a.0 + a.1;
        for (i, node) in g.nodes.iter().enumerate() {
            if !f.runs_inside_next(i) {
                continue;
            }
            for t in node.op.outputs() {
                assert_eq!(
                    fused.slots[t].1, 0,
                    "`{}` is never written",
                    g.tensors[t].name
                );
            }
            for t in node.op.inputs() {
                assert!(
                    last[t] >= Some(i + 1),
                    "{fusion:?}: `{}`",
                    g.tensors[t].name
                );
                for o in g.nodes[i + 1].op.outputs() {
                    assert!(
                        !overlap(fused.slots[t], fused.slots[o]),
                        "`{}` shares bytes with `{}`",
                        g.tensors[t].name,
                        g.tensors[o].name
                    );
                }
            }
        }
    }
}

/// A node range may not separate a fused node from the node that runs it.
#[test]
fn ranges_may_not_cut_a_fused_pair() {
    let f = Fusions {
        into_next: vec![false, true, false, false],
    };
    assert_eq!(f.cut_by(&(0..2)), Some((1, 2)));
    assert_eq!(f.cut_by(&(2..4)), Some((1, 2)));
    assert_eq!(f.cut_by(&(0..1)), None);
    assert_eq!(f.cut_by(&(1..3)), None);
    assert_eq!(f.cut_by(&(0..4)), None);
    assert_eq!(f.chain_start(2), 1);
    assert_eq!(f.chain_start(0), 0);
    assert_eq!(f.chain_end(1), 2);
    assert_eq!(f.count(), 1);
    // A chain of three links: no range may start or end inside it.
    let f = Fusions {
        into_next: vec![false, true, true, true, false],
    };
    assert_eq!(f.chain_start(4), 1);
    assert_eq!(f.chain_end(1), 4);
    assert_eq!(f.chain_end(2), 4);
    for cut in 2..=4 {
        assert_eq!(f.cut_by(&(0..cut)), Some((cut - 1, cut)), "0..{cut}");
    }
    assert_eq!(f.cut_by(&(1..5)), None);
    assert_eq!(f.cut_by(&(0..1)), None);
}

/// The tensor route's plan with its default strips (`StripChoice::Auto`: the default budget,
/// pruned to the strips the workspace needs), with and without its fusions, keeping what a
/// feature keeps: the workspace at 1080p and 4K beside the synthetic model's 141.9 MiB of
/// weights (with the f16 copies of the C = 32 and 64 FFNs' matrices, 0.5 MiB; 142.0 rounded up
/// here) stays within the device-memory targets (450 MiB, 1.2 GiB) with every fusion
/// but `off` at 4K, and pruning keeps the workspace of every strip (with the fusions too: they
/// free other bytes).
#[test]
fn the_tensor_routes_plan_in_strips_fits_the_memory_targets() {
    const MIB: f64 = (1u64 << 20) as f64;
    const WEIGHTS_MIB: f64 = 142.0;
    for (w, h, target_mib) in [(1920, 1080, 450.0), (3840, 2160, 1228.8)] {
        let g = build(&Geometry::new(w, h).expect("size"));
        for fusion in Fusion::ALL {
            let opts = NetworkOptions {
                route: Route::Tensor,
                keep: Keep::Head,
                input_per_frame: true,
                fusion,
                ..NetworkOptions::default()
            };
            let plan = |strips| plan_within(&g, &NetworkOptions { strips, ..opts }, &large());
            let l = plan(StripChoice::Auto).expect("plan");
            let every = plan(StripChoice::Budget(default_budget(&g))).expect("plan");
            let off = plan(StripChoice::Off).expect("plan");
            let mib = l.workspace_bytes() as f64 / MIB;
            println!(
                "{w}x{h} tensor route, fusion {fusion:?}: workspace {mib:.1} MiB in {} strips \
                 ({:.1} MiB in all {}, {:.1} MiB without), {} fused",
                l.strips.strips.len(),
                every.workspace_bytes() as f64 / MIB,
                every.strips.strips.len(),
                off.workspace_bytes() as f64 / MIB,
                l.fusions.count()
            );
            assert!(!l.strips.strips.is_empty());
            assert_eq!(l.workspace_bytes(), every.workspace_bytes(), "{w}x{h}");
            assert!(l.workspace_bytes() < off.workspace_bytes());
            // Every window normalisation, or the 46 window blocks' FFN pairs (and with them
            // three nodes of each C = 32 block outside the field's strips, or every window
            // normalisation), or nothing.
            let want = match fusion {
                Fusion::Off => 0..=0,
                Fusion::Ffn => 46..=46,
                Fusion::Block => 46 + 3 * 8..=46 + 3 * 10,
                Fusion::NormInGemm | Fusion::NormInAttention => 61..=usize::MAX,
                Fusion::FfnNormInGemm => 46 + 61..=usize::MAX,
            };
            assert!(want.contains(&l.fusions.count()), "{fusion:?}");
            // `--fusion off` (no fusion, a diagnostic choice) at 4K is the one plan above its
            // target in the default budget: 1140.0 + 142 MiB.
            if fusion == Fusion::Off && w == 3840 {
                assert!(mib + WEIGHTS_MIB <= target_mib + 60.0, "{mib:.1} MiB");
                continue;
            }
            assert!(
                mib + WEIGHTS_MIB <= target_mib,
                "{w}x{h}: {mib:.1} + {WEIGHTS_MIB} MiB > {target_mib} MiB"
            );
        }
    }
}
