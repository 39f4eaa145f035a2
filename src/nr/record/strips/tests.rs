use super::*;
use crate::nr::geometry::Geometry;
use crate::nr::graph::build;
use crate::nr::record::bands::check_band;
use crate::nr::record::workspace::{plan, tests as ws};

/// Limits no plan reaches (the tests of `fusion` share them).
pub(crate) fn large() -> BindLimits {
    BindLimits {
        max_range: u64::from(u32::MAX),
        max_groups: [u32::MAX; 3],
        max_buffer: u64::MAX,
    }
}

/// lavapipe's limits: 128 MiB bindings, 2 GiB allocations.
pub(crate) fn lavapipe() -> BindLimits {
    BindLimits {
        max_range: 128 << 20,
        max_groups: [65535; 3],
        max_buffer: 2 << 30,
    }
}

const MIB: f64 = (1u64 << 20) as f64;

/// Every strip is one window block's consecutive nodes around its attention; its bands cover the
/// level's token rows once, in order; in band `k` every node touches exactly those rows of every
/// tensor on the level (an up-merge's low input: the rows below them); every launch fits the
/// limits; band-local tensors are touched by the strip's nodes only.
fn check_strips(g: &Graph, s: &Strips, limits: &BindLimits) {
    assert_eq!(s.of_node.len(), g.nodes.len());
    for (k, strip) in s.strips.iter().enumerate() {
        let nodes = &g.nodes[strip.nodes.clone()];
        let block = nodes[0].block;
        assert!(nodes.iter().all(|n| n.block == block));
        let attention: Vec<&Node> = nodes
            .iter()
            .filter(|n| matches!(n.op, Op::WindowAttention { .. }))
            .collect();
        assert_eq!(attention.len(), 1, "block {block}");
        let Op::WindowAttention { q, .. } = &attention[0].op else {
            unreachable!()
        };
        let level = g.tensors[*q].level;
        assert!(strip.rows.len() >= 2);
        assert_eq!(strip.rows[0].start, 0);
        assert_eq!(strip.rows.last().map(|r| r.end), Some(g.rows(*q) as u64));
        for w in strip.rows.windows(2) {
            assert_eq!(w[0].end, w[1].start);
            assert!(w[0].start < w[0].end);
        }
        assert_eq!(strip.launches.len(), strip.rows.len());
        for (band, rows) in strip.launches.iter().zip(&strip.rows) {
            assert_eq!(band.len(), nodes.len());
            for (node, &b) in nodes.iter().zip(band) {
                check_band(g, node, b, limits, limits.band_range())
                    .unwrap_or_else(|e| panic!("{}: {e}", node.label));
                for (t, r) in bands::touched(g, node, b) {
                    if g.tensors[t].level == level {
                        assert_eq!(&r, rows, "{} touches `{}`", node.label, g.tensors[t].name);
                    }
                }
            }
        }
        for i in strip.nodes.clone() {
            assert_eq!(s.of_node[i], Some(k));
        }
    }
    for (t, l) in s.local.iter().enumerate() {
        let Some(k) = *l else { continue };
        for (i, n) in g.nodes.iter().enumerate() {
            let touches = n.op.inputs().contains(&t) || n.op.outputs().contains(&t);
            assert!(
                !touches || s.strips[k].nodes.contains(&i),
                "band-local `{}` touched by {}",
                g.tensors[t].name,
                n.label
            );
        }
    }
}

/// The memory the strips are for: a feature's network workspace (the head kept, the input
/// rewritten every frame) at 1080p and 4K, and what it was without strips. This is the plan
/// without fusions (the exact route's); the tensor route's, with the synthetic model's weights,
/// is within the 450 MiB and 1.2 GiB targets (`fusion::tests`).
#[test]
fn strips_cut_the_workspace_and_never_overwrite_a_live_tensor() {
    for (w, h, bound, before) in [(1920, 1080, 300.0, 742.5), (3840, 2160, 1200.0, 2805.0)] {
        let g = build(&Geometry::new(w, h).expect("size"));
        let keep = [g.head];
        let none = Strips::none(&g);
        let p0 = plan(&g, &keep, &none, u64::MAX);
        assert_eq!(
            format!("{:.1}", p0.bytes as f64 / MIB),
            format!("{before:.1}")
        );
        let s = Strips::plan(&g, &keep, &large(), Some(default_budget(&g)));
        check_strips(&g, &s, &large());
        let p = plan(&g, &keep, &s, u64::MAX);
        ws::check(&g, &p, &keep, &s);
        let mib = p.bytes as f64 / MIB;
        eprintln!(
            "{w}x{h}: workspace {mib:.1} MiB in {} strips of {} bands (without: {before} MiB)",
            s.strips.len(),
            s.band_count()
        );
        assert!(mib <= bound, "{w}x{h}: {mib:.1} MiB");
        assert!(p.bytes >= ws::peak_live_bytes(&g, &keep, &s));
        // The boundaries kept for readback (the tools' --check) do not break it.
        let keep_b: Vec<TensorId> = g.boundaries.iter().map(|b| b.1).chain([g.head]).collect();
        let sb = Strips::plan(&g, &keep_b, &large(), Some(default_budget(&g)));
        check_strips(&g, &sb, &large());
        ws::check(&g, &plan(&g, &keep_b, &sb, u64::MAX), &keep_b, &sb);
        // Within lavapipe's limits (128 MiB bindings, 2 GiB allocations) too.
        let sl = Strips::plan(&g, &keep, &lavapipe(), Some(default_budget(&g)));
        check_strips(&g, &sl, &lavapipe());
        ws::check(&g, &plan(&g, &keep, &sl, 2 << 30), &keep, &sl);
    }
}

/// Small budgets at the CI's size: one window row per band at most, still safe.
#[test]
fn small_budgets_cut_bands_of_single_window_rows() {
    let g = build(&Geometry::new(64, 64).expect("size"));
    let keep = [g.head];
    // The default budget makes no strip at 64x64: its bands would hold more than the block's
    // nodes keep live running whole.
    let s = Strips::plan(&g, &keep, &large(), Some(default_budget(&g)));
    assert!(s.strips.is_empty());
    for budget in [1, 100_000, 1 << 20] {
        let s = Strips::plan(&g, &keep, &large(), Some(budget));
        assert!(!s.strips.is_empty(), "budget {budget}");
        check_strips(&g, &s, &large());
        ws::check(&g, &plan(&g, &keep, &s, u64::MAX), &keep, &s);
        if budget == 1 {
            // The field's first strip: 336x320 tokens, 40 window rows (41 in a shifted phase).
            assert!(s.strips[0].rows.len() >= 40, "{}", s.strips[0].rows.len());
        }
    }
}

/// The field block writes its f16 output where the features were, when the caller rewrites
/// them every frame; never when they are kept.
#[test]
fn the_field_block_writes_its_output_in_place_of_the_features() {
    let g = build(&Geometry::new(1920, 1080).expect("size"));
    let raw = g
        .tensors
        .iter()
        .position(|t| t.name == "block-0.proj.raw")
        .expect("block 0's raw output");
    let s = Strips::plan(&g, &[g.head], &large(), Some(default_budget(&g)));
    assert_eq!(s.alias[raw], Some(g.features));
    let p = plan(&g, &[g.head], &s, u64::MAX);
    assert_eq!(p.slots[raw].0, p.slots[g.features].0);
    let kept = Strips::plan(
        &g,
        &[g.head, g.features],
        &large(),
        Some(default_budget(&g)),
    );
    assert!(kept.alias.iter().all(|a| *a != Some(g.features)));
    // Every pair is an output taking a whole input of the same level that is no narrower,
    // which its strip reads for the last time before it first writes the output.
    let last = g.last_use();
    for (o, i) in s.alias.iter().enumerate() {
        if let Some(i) = *i {
            assert_eq!(g.tensors[o].level, g.tensors[i].level);
            assert!(row_bytes(&g, o) <= row_bytes(&g, i));
            assert!(s.local[o].is_none() && s.local[i].is_none());
            let writer = g
                .nodes
                .iter()
                .position(|n| n.op.outputs().contains(&o))
                .expect("written");
            let strip = &s.strips[s.of_node[writer].expect("a strip's output")];
            let read = last[i].expect("read");
            assert!(strip.nodes.contains(&read), "`{}`", g.tensors[i].name);
            assert!(
                read < writer,
                "`{}` read after `{}` written",
                g.tensors[i].name,
                g.tensors[o].name
            );
        }
    }
}

#[test]
fn the_choice_and_the_kept_tensors_decide_the_strips() {
    let g = build(&Geometry::new(1920, 1080).expect("size"));
    // 1920x1152 field tokens at 48 bytes each.
    assert_eq!(default_budget(&g), 1920 * 1152 * 48);
    let small = build(&Geometry::new(64, 64).expect("size"));
    assert_eq!(default_budget(&small), DEFAULT_BUDGET);
    for route in [Route::Exact, Route::Tensor] {
        assert_eq!(
            StripChoice::Auto.budget(route, &g),
            Some(default_budget(&g))
        );
    }
    assert_eq!(StripChoice::Auto.budget(Route::Cpu, &g), None);
    assert_eq!(StripChoice::Off.budget(Route::Exact, &g), None);
    assert_eq!(StripChoice::Budget(5).budget(Route::Tensor, &g), Some(5));
    // The per-token variant scales with the field as the default does, with its floor.
    assert_eq!(
        StripChoice::PerToken(32).budget(Route::Exact, &g),
        Some(1920 * 1152 * 32)
    );
    assert_eq!(
        StripChoice::PerToken(32).budget(Route::Tensor, &small),
        Some(DEFAULT_BUDGET)
    );
    assert_eq!(StripChoice::PerToken(32).budget(Route::Cpu, &g), None);
    assert!(StripChoice::PerToken(32).prunes());
    assert_eq!(
        Strips::plan(&g, &[g.head], &large(), None),
        Strips::none(&g)
    );
    // Every tensor kept (debugging): nothing is band-local, so no strip.
    let all: Vec<TensorId> = (0..g.tensors.len()).collect();
    assert!(Strips::plan(&g, &all, &large(), Some(1)).strips.is_empty());
}

/// A recording of part of the schedule must hold a strip whole.
#[test]
fn a_node_range_may_not_cut_a_strip() {
    let g = build(&Geometry::new(1920, 1080).expect("size"));
    let s = Strips::plan(&g, &[g.head], &large(), Some(default_budget(&g)));
    let first = &s.strips[0].nodes;
    let (a, b) = (first.start, first.end);
    assert_eq!(s.cut_by(&(0..g.nodes.len())), None);
    assert_eq!(s.cut_by(&(a..b)), None);
    assert_eq!(s.cut_by(&(0..a)), None);
    assert_eq!(s.cut_by(&(a + 1..b)), Some((a, b - 1)));
    assert_eq!(s.cut_by(&(a..b - 1)), Some((a, b - 1)));
    // Block boundaries (what the tools cut at) never cut a strip.
    for i in 1..g.nodes.len() {
        if g.nodes[i].block != g.nodes[i - 1].block {
            assert_eq!(s.cut_by(&(0..i)), None, "{}", g.nodes[i].label);
        }
    }
}

/// Sizes of every shape the API accepts (odd, narrow, tall, the largest area): the strips are
/// safe and cover their levels, with the default budget and a 1 MiB one, on a large device and
/// within lavapipe's limits.
#[test]
fn strips_are_safe_at_every_shape() {
    for (w, h) in [
        (64, 64),
        (65, 64),
        (64, 8192),
        (8192, 64),
        (333, 1000),
        (1000, 333),
        (1023, 767),
        (1279, 719),
        (2047, 2047),
        (2048, 8192),
        (4097, 4095),
    ] {
        let g = build(&Geometry::new(w, h).expect("size"));
        let keep = [g.head];
        for limits in [large(), lavapipe()] {
            for budget in [default_budget(&g), 1 << 20] {
                let s = Strips::plan(&g, &keep, &limits, Some(budget));
                check_strips(&g, &s, &limits);
                let p = plan(&g, &keep, &s, limits.max_buffer);
                ws::check(&g, &p, &keep, &s);
            }
        }
    }
}

/// The default keeps only the strips the workspace needs: at 1080p and 4K the field's two
/// blocks, the same workspace in 738 launches instead of 843 at 1080p (723 instead of 828 at
/// 4K); the rest is as safe as before.
#[test]
fn the_default_keeps_only_the_strips_the_workspace_needs() {
    for (w, h) in [(1920, 1080), (3840, 2160)] {
        let g = build(&Geometry::new(w, h).expect("size"));
        let keep = [g.head];
        let launches = |s: &Strips| -> usize {
            (0..g.nodes.len())
                .map(|i| s.of_node[i].map_or(1, |k| s.strips[k].rows.len()))
                .sum()
        };
        let all = Strips::plan(&g, &keep, &large(), Some(default_budget(&g)));
        let full = plan(&g, &keep, &all, u64::MAX);
        let pruned = all
            .clone()
            .pruned(&g, |s| plan(&g, &keep, s, u64::MAX).bytes);
        check_strips(&g, &pruned, &large());
        let p = plan(&g, &keep, &pruned, u64::MAX);
        ws::check(&g, &p, &keep, &pruned);
        assert_eq!(p.bytes, full.bytes, "{w}x{h}");
        let blocks: Vec<usize> = pruned
            .strips
            .iter()
            .map(|s| g.nodes[s.nodes.start].block)
            .collect();
        assert_eq!(blocks, [0, 70], "{w}x{h}");
        let want = if w == 1920 { (843, 738) } else { (828, 723) };
        assert_eq!((launches(&all), launches(&pruned)), want, "{w}x{h}");
        // What a feature plans (`network::plan_within` with the default choice).
        assert!(StripChoice::Auto.prunes() && !StripChoice::Budget(1).prunes());
    }
}
