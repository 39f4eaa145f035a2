use super::*;
use crate::rr::geometry::Size;
use crate::rr::layers::{LAYERS, LAYER_COUNT};

fn graph() -> Graph {
    let g = Geometry::new(Size::new(1280, 720), Size::new(3840, 2160)).unwrap();
    build(&g, Preset::E)
}

#[test]
fn every_tensor_is_written_once_before_it_is_read() {
    let g = graph();
    let mut written = vec![false; g.tensors.len()];
    for t in [g.color, g.guides, g.history] {
        written[t] = true;
    }
    for n in &g.nodes {
        for t in n.op.inputs() {
            assert!(
                written[t],
                "{}: reads `{}` before it is written",
                n.label, g.tensors[t].name
            );
        }
        for t in n.op.outputs() {
            assert!(
                !written[t],
                "{}: writes `{}` twice",
                n.label, g.tensors[t].name
            );
            written[t] = true;
        }
    }
    let unwritten: Vec<&str> = (0..g.tensors.len())
        .filter(|&t| !written[t])
        .map(|t| g.tensors[t].name.as_str())
        .collect();
    assert!(unwritten.is_empty(), "never written: {unwritten:?}");
    let labels: std::collections::HashSet<&str> =
        g.nodes.iter().map(|n| n.label.as_str()).collect();
    assert_eq!(labels.len(), g.nodes.len(), "labels are unique");
}

#[test]
fn shapes_agree_with_the_layer_table() {
    let g = graph();
    for n in &g.nodes {
        match &n.op {
            Op::Gemm {
                input,
                mat,
                seed,
                out,
                ..
            } => {
                assert_eq!(g.tensors[*input].channels, mat.k, "{}", n.label);
                assert_eq!(g.tensors[*input].dtype, DType::E4, "{}", n.label);
                assert_eq!(g.tensors[*out].channels, mat.n, "{}", n.label);
                assert_eq!(g.rows(*input), g.rows(*out), "{}", n.label);
                match seed {
                    Seed::Bias(v) => assert_eq!(v.len, mat.n),
                    Seed::Residual { x, bias } => {
                        assert_eq!(bias.len, mat.n);
                        assert_eq!(g.tensors[*x].channels, mat.n, "{}", n.label);
                        assert_eq!(g.tensors[*x].grid, g.tensors[*out].grid);
                    }
                    Seed::Zero => {}
                }
            }
            Op::Merge {
                input, mat, out, ..
            } => {
                assert_eq!(4 * g.tensors[*input].channels, mat.k);
                assert_eq!(g.tensors[*out].channels, mat.n);
                let (Grid::Level(a), Grid::Level(b)) =
                    (g.tensors[*input].grid, g.tensors[*out].grid)
                else {
                    panic!("merge grids");
                };
                assert_eq!(a + 1, b);
            }
            Op::Expand {
                low,
                mat,
                skip,
                out,
                ..
            } => {
                assert_eq!(g.tensors[*low].channels, mat.k);
                assert_eq!(4 * g.tensors[*out].channels, mat.n);
                assert_eq!(g.tensors[*skip].channels, g.tensors[*out].channels);
                assert_eq!(g.tensors[*skip].grid, g.tensors[*out].grid);
            }
            Op::Attention {
                u,
                v,
                heads,
                out,
                layer,
                ..
            } => {
                assert_eq!(g.tensors[*u].channels, 32 * heads);
                assert_eq!(g.tensors[*v].channels, 32 * heads);
                assert_eq!(g.tensors[*out].channels, 32 * heads);
                assert_eq!(*heads, layer.layer().heads);
            }
            _ => {}
        }
    }
}

#[test]
fn published_tensors() {
    let g = graph();
    let names: Vec<&str> = g.published.iter().map(|(n, _)| n.as_str()).collect();
    // Every layer's block output, enc0..dec1 as [L][C] E4 and dec0 as its 8 codes.
    for l in &LAYERS {
        let t = g.published(l.name).unwrap_or_else(|| panic!("{}", l.name));
        assert_eq!(g.tensors[t].dtype, DType::E4);
        assert_eq!(g.tensors[t].grid, Grid::Level(l.level));
        let c = if l.tail {
            l.channels
        } else {
            build::DEC0_CODES
        };
        assert_eq!(g.tensors[t].channels, c, "{}", l.name);
    }
    // Surfaces: three per merging encoder, one for enc5 and every decoder.
    let surfaces = names.iter().filter(|n| n.contains(".1")).count();
    assert_eq!(surfaces, 5 * 3 + 1 + 5 + 1, "{names:?}"); // + dec0.144
    assert_eq!(g.published("output"), Some(g.output));
    assert_eq!(g.published("alpha"), Some(g.alpha));
    assert_eq!(g.tensors[g.output].grid, Grid::Output);
    assert_eq!(g.grid_size(Grid::Level(5)), Size::new(40, 23));
    // The op list: 3 input ops; per layer norm, qk, v, attention, wo, norm, w1, w2 (8); enc0's
    // embedding (2); tails: 10 heads, 11 tails; 5 merges, 5 expands; dec0's outputs; output.
    let per_layer = 8 * LAYER_COUNT;
    assert_eq!(g.nodes.len(), 3 + per_layer + 2 + 10 + 11 + 5 + 5 + 1 + 1);
}

#[test]
fn decoders_read_the_right_surfaces() {
    let g = graph();
    let surf = |n: &str| g.published(n).unwrap();
    for n in &g.nodes {
        if let Op::DecoderTail {
            coarse,
            low,
            detail,
            ..
        } = &n.op
        {
            let id = n.layer.unwrap();
            let lvl = id.layer().level;
            let coarser = if id == LayerId::Dec4 {
                "enc5.112".to_string()
            } else {
                format!("{}.112", LayerId::from_index(id.index() - 1).unwrap())
            };
            assert_eq!(*coarse, surf(&coarser), "{}", n.label);
            assert_eq!(*low, surf(&format!("enc{lvl}.112")), "{}", n.label);
            assert_eq!(*detail, surf(&format!("enc{lvl}.120")), "{}", n.label);
        }
    }
}

#[test]
fn presets_differ_only_in_the_depth_of_field_slot() {
    let geo = Geometry::new(Size::new(64, 48), Size::new(128, 96)).unwrap();
    let d = build(&geo, Preset::D);
    let e = build(&geo, Preset::E);
    assert_eq!(d.nodes.len(), e.nodes.len());
    let mut differ = 0;
    for (a, b) in d.nodes.iter().zip(&e.nodes) {
        if a != b {
            differ += 1;
            assert!(matches!(
                a.op,
                Op::Features {
                    depth_of_field: false,
                    ..
                }
            ));
            assert!(matches!(
                b.op,
                Op::Features {
                    depth_of_field: true,
                    ..
                }
            ));
        }
    }
    assert_eq!(differ, 1);
}
