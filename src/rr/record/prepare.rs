//! Each op of the RR graph as its kernel launches (`shaders/rr`): the pipeline with its
//! specialisation, the descriptor set over the op's tensors and weights, the push constants and
//! the grid. An op cut into bands (`super::bands`) has one launch per band, each binding its
//! band's sub-ranges with the band's row count in its push constants.

use std::sync::Arc;

use crate::gpu::{
    BufferBinding, DescriptorArena, GpuContext, GpuError, PipelineDesc, SpecConstant,
};
use crate::rr::graph::{DType, Epilogue, Graph, Op, Seed, TensorId};

use super::bands::{band_binding, image_read_row0, shifts, touched, window_rows, Axis, Band};
use super::launch::{grid, Frame, Launch, WindowBand, GROUP};
use super::resources::{Resources, EXPOSURE_PARTIALS};

fn u(v: usize) -> u32 {
    v as u32
}

/// The launches of `graph.nodes[node]` over `bands` (its plan, `super::bands::plan_node`): one
/// per band, or two for an encoder tail with a next level; the match is exhaustive, so a new op
/// kind needs its kernel here.
pub fn prepare(
    ctx: &Arc<GpuContext>,
    graph: &Graph,
    res: &Resources,
    arena: &mut DescriptorArena,
    node: usize,
    bands: &[Band],
) -> Result<Vec<Launch>, GpuError> {
    let op = &graph.nodes[node].op;
    let label = graph.nodes[node].label.as_str();
    let axis = Axis::of(graph, &graph.nodes[node]);
    // Tensor `t`'s binding for band `b`: the rows the band touches, or the whole tensor.
    let sub = |t: TensorId, b: Band| -> BufferBinding {
        touched(graph, &axis, b, 0)
            .into_iter()
            .find(|(u, _)| *u == t)
            .map_or_else(
                || res.t(t),
                |(_, rows)| band_binding(graph, t, res.t(t), rows),
            )
    };
    if bands.is_empty() || (matches!(axis, Axis::Whole) && bands.len() != 1) {
        return Err(GpuError::invalid(
            format!("rr launch `{label}`"),
            format!("{} bands planned for an op of axis {axis:?}", bands.len()),
        ));
    }
    let size = |t: TensorId| graph.grid_size(graph.tensors[t].grid);
    let ch = |t: TensorId| graph.tensors[t].channels;
    let mut make = |desc: PipelineDesc,
                    bindings: &[BufferBinding],
                    push: Vec<u32>,
                    invocations: u64,
                    frame: Frame|
     -> Result<Launch, GpuError> {
        let pipeline = ctx.pipeline(&desc)?;
        let set = arena.allocate(&pipeline, bindings)?;
        if frame_is_fixed(&frame) {
            grid(ctx, invocations.div_ceil(GROUP as u64), label)?;
        }
        Ok(Launch {
            pipeline,
            set,
            push,
            invocations,
            frame,
            then_barrier: false,
        })
    };
    let dummy = res.dummy.binding();
    Ok(match op {
        Op::Norm {
            input,
            gain,
            eps,
            out,
        } => {
            let x_f16 = graph.tensors[*input].dtype == DType::F16;
            let g = res.vec(gain.layer, gain.vec)?;
            bands
                .iter()
                .map(|&b| {
                    make(
                        PipelineDesc::new("rr/norm", 3, 12).with_spec(SpecConstant::bool(0, x_f16)),
                        &[sub(*input, b), g, sub(*out, b)],
                        vec![b.len(), u(ch(*input)), u32::from(*eps)],
                        u64::from(b.len()),
                        Frame::Fixed,
                    )
                })
                .collect::<Result<_, _>>()?
        }
        Op::Gemm {
            input,
            mat,
            seed,
            epilogue,
            out,
        } => {
            let (seed_kind, bias, x) = match seed {
                Seed::Zero => (0, dummy, None),
                Seed::Bias(b) => (1, res.vec(b.layer, b.vec)?, None),
                Seed::Residual { x, bias } => (
                    if graph.tensors[*x].dtype == DType::F16 {
                        3
                    } else {
                        2
                    },
                    res.vec(bias.layer, bias.vec)?,
                    Some(*x),
                ),
            };
            check_quads(label, &[mat.n, mat.k])?;
            let epi = match epilogue {
                Epilogue::F16 => 0,
                Epilogue::Q8 => 1,
                Epilogue::Q8Act => 2,
                Epilogue::Q8Relu => 3,
            };
            let w = res.mat(mat.layer, mat.mat)?;
            bands
                .iter()
                .map(|&b| {
                    make(
                        gemm_desc(0, seed_kind, epi),
                        &[
                            sub(*input, b),
                            w,
                            bias,
                            x.map_or(dummy, |x| sub(x, b)),
                            sub(*out, b),
                            res.c(res.act),
                            dummy,
                        ],
                        vec![b.len(), u(mat.n), u(mat.k), 0, 0, 0],
                        u64::from(b.len()) * (mat.n / 4) as u64,
                        Frame::Fixed,
                    )
                })
                .collect::<Result<_, _>>()?
        }
        Op::Merge {
            input,
            mat,
            bias,
            out,
        } => {
            let (fine, coarse) = (size(*input), size(*out));
            check_quads(label, &[mat.n, mat.k, ch(*input)])?;
            let (w, bv) = (res.mat(mat.layer, mat.mat)?, res.vec(bias.layer, bias.vec)?);
            bands
                .iter()
                .map(|&b| {
                    // The band's coarse token rows (whole rows of the coarse level).
                    let rows = b.len() * coarse.w;
                    make(
                        gemm_desc(1, 1, 1),
                        &[sub(*input, b), w, bv, dummy, sub(*out, b), dummy, dummy],
                        vec![rows, u(mat.n), u(mat.k), u(ch(*input)), fine.w, coarse.w],
                        u64::from(rows) * (mat.n / 4) as u64,
                        Frame::Fixed,
                    )
                })
                .collect::<Result<_, _>>()?
        }
        Op::Expand {
            low,
            mat,
            bias,
            skip,
            out,
        } => {
            let (fine, coarse) = (size(*out), size(*low));
            check_quads(label, &[mat.n, mat.k, ch(*out)])?;
            let (w, bv) = (res.mat(mat.layer, mat.mat)?, res.vec(bias.layer, bias.vec)?);
            bands
                .iter()
                .map(|&b| {
                    // The band's coarse token rows; they write fine rows 2a..2b.
                    let rows = b.len() * coarse.w;
                    make(
                        gemm_desc(0, 1, 4),
                        &[
                            sub(*low, b),
                            w,
                            bv,
                            dummy,
                            sub(*out, b),
                            dummy,
                            sub(*skip, b),
                        ],
                        vec![rows, u(mat.n), u(mat.k), u(ch(*out)), fine.w, coarse.w],
                        u64::from(rows) * (mat.n / 4) as u64,
                        Frame::Fixed,
                    )
                })
                .collect::<Result<_, _>>()?
        }
        Op::Attention {
            u: ut,
            v,
            layer,
            heads,
            level,
            side,
            out,
        } => {
            let s = graph.geometry.level(*level);
            let bias = res
                .biases
                .get(layer)
                .map(|&i| res.c(i))
                .ok_or_else(|| GpuError::invalid("rr weights", "score biases not loaded"))?;
            let desc = || PipelineDesc::new("rr/attention", 4, 40);
            let frame = |band| Frame::Attention {
                w: s.w,
                h: s.h,
                heads: u(*heads),
                side: *side,
                band,
            };
            if bands.len() == 1 {
                vec![make(
                    desc(),
                    &[res.t(*ut), res.t(*v), bias, res.t(*out)],
                    Vec::new(),
                    0,
                    frame(None),
                )?]
            } else {
                // One launch per band and shift y, bound to the rows the band touches there.
                let mut launches = Vec::new();
                for &b in bands {
                    for &sy in shifts(&axis) {
                        let Some((keys, queries)) = window_rows(s.h, sy, b) else {
                            continue;
                        };
                        let rows = |r: &std::ops::Range<u64>| {
                            r.start * u64::from(s.w)..r.end * u64::from(s.w)
                        };
                        let sub = |t: TensorId, r: &std::ops::Range<u64>| {
                            band_binding(graph, t, res.t(t), rows(r))
                        };
                        let band = WindowBand {
                            sy,
                            row0: b.start,
                            rows: b.end.min((s.h + sy).div_ceil(8)) - b.start,
                            in_row0: keys.start as u32,
                            out_row0: queries.start as u32,
                        };
                        launches.push(make(
                            desc(),
                            &[sub(*ut, &keys), sub(*v, &keys), bias, sub(*out, &queries)],
                            Vec::new(),
                            0,
                            frame(Some(band)),
                        )?);
                    }
                }
                launches
            }
        }
        Op::EncoderTail {
            logits,
            image,
            out112,
            out120,
            out128,
        } => {
            let s = size(*logits);
            let split = out120.is_some();
            let mut v = bands
                .iter()
                .map(|&b| {
                    make(
                        PipelineDesc::new("rr/encoder_tail", 6, 24)
                            .with_spec(SpecConstant::bool(0, split)),
                        &[
                            sub(*logits, b),
                            sub(*image, b),
                            sub(*out112, b),
                            out120.map_or(res.sink.binding(), |t| sub(t, b)),
                            res.c(res.exp),
                            res.c(res.sigmoid),
                        ],
                        vec![
                            s.w,
                            s.h,
                            u(ch(*logits)),
                            b.start,
                            b.len(),
                            image_read_row0(graph, &axis, b),
                        ],
                        u64::from(s.w) * u64::from(b.len()),
                        Frame::Fixed,
                    )
                })
                .collect::<Result<Vec<_>, _>>()?;
            if let Some(o128) = out128 {
                // The quarter average after every band of the filter (one barrier): a band of
                // fine rows [a, b) (a even) writes coarse rows [a/2, b/2), relative to its
                // bindings.
                let c = size(*o128);
                for (k, &b) in bands.iter().enumerate() {
                    let rows = b.end.div_ceil(2) - b.start / 2;
                    let mut q = make(
                        PipelineDesc::new("rr/quad", 2, 12),
                        &[sub(*out112, b), sub(*o128, b)],
                        vec![c.w, rows, s.w],
                        u64::from(c.w) * u64::from(rows),
                        Frame::Fixed,
                    )?;
                    q.then_barrier = k == 0;
                    v.push(q);
                }
            }
            v
        }
        Op::DecoderTail {
            logits,
            coarse,
            low,
            detail,
            out,
        } => {
            let (s, c) = (size(*out), size(*coarse));
            bands
                .iter()
                .map(|&b| {
                    make(
                        PipelineDesc::new("rr/decoder_tail", 7, 32),
                        &[
                            sub(*logits, b),
                            sub(*coarse, b),
                            sub(*low, b),
                            sub(*detail, b),
                            sub(*out, b),
                            res.c(res.exp),
                            res.c(res.sigmoid),
                        ],
                        vec![
                            s.w,
                            s.h,
                            u(ch(*logits)),
                            c.w,
                            c.h,
                            b.start,
                            b.len(),
                            image_read_row0(graph, &axis, b),
                        ],
                        u64::from(s.w) * u64::from(b.len()),
                        Frame::Fixed,
                    )
                })
                .collect::<Result<_, _>>()?
        }
        Op::Dec0Outputs { x2, out48, out144 } => bands
            .iter()
            .map(|&b| {
                make(
                    PipelineDesc::new("rr/dec0_outputs", 4, 8),
                    &[
                        sub(*x2, b),
                        sub(*out48, b),
                        sub(*out144, b),
                        res.c(res.tanh),
                    ],
                    vec![b.len(), u(ch(*x2))],
                    u64::from(b.len()),
                    Frame::Fixed,
                )
            })
            .collect::<Result<_, _>>()?,
        Op::Exposure { color, out } => {
            let px = graph.rows(*color);
            let pass =
                |p: u32| PipelineDesc::new("rr/exposure", 4, 24).with_spec(SpecConstant::u32(0, p));
            // Pass 0 per band of render rows, each into its own run of partials (a multiple of
            // 32 of them: 256-byte aligned, and contiguous, so pass 1 sums exactly the slots
            // written; integer sums, so any cut gives the same S).
            let slots = |n: u64| -> Result<u64, GpuError> {
                let per = EXPOSURE_PARTIALS / 32 / n * 32;
                if n == 1 {
                    Ok((px as u64).div_ceil(256).clamp(1, EXPOSURE_PARTIALS))
                } else if per == 0 {
                    Err(GpuError::invalid(
                        format!("rr launch `{label}`"),
                        format!("{n} bands of the exposure's sum: at most 32"),
                    ))
                } else {
                    Ok(per)
                }
            };
            let per = slots(bands.len() as u64)?;
            let rw = u64::from(graph.geometry.render.w);
            let mut v = Vec::new();
            for (k, &b) in bands.iter().enumerate() {
                let partials = BufferBinding {
                    offset: k as u64 * per * 8,
                    range: per * 8,
                    ..res.partials.binding()
                };
                let band_px = if bands.len() == 1 {
                    px as u64
                } else {
                    u64::from(b.len()) * rw
                };
                v.push(make(
                    pass(0),
                    &[
                        sub(*color, b),
                        res.t(*out),
                        partials,
                        res.exposure_input.binding(),
                    ],
                    vec![band_px as u32, per as u32],
                    per * GROUP as u64,
                    Frame::Exposure { groups: per },
                )?);
            }
            // Pass 1 reads no colour; any valid binding of it will do.
            let total = per * bands.len() as u64;
            let mut last = make(
                pass(1),
                &[
                    sub(*color, bands[0]),
                    res.t(*out),
                    res.partials.binding(),
                    res.exposure_input.binding(),
                ],
                vec![u(px), total as u32],
                GROUP as u64,
                Frame::Exposure { groups: 1 },
            )?;
            last.then_barrier = true;
            v.push(last);
            v
        }
        Op::Reproject {
            history,
            guides,
            exposure,
            out,
        } => {
            let (r, o) = (graph.geometry.render, graph.geometry.output);
            bands
                .iter()
                .map(|&b| {
                    make(
                        PipelineDesc::new("rr/reproject", 4, 44),
                        &[
                            res.t(*history),
                            sub(*guides, b),
                            res.t(*exposure),
                            sub(*out, b),
                        ],
                        vec![r.w, r.h, o.w, o.h, b.start, b.len()],
                        u64::from(r.w) * u64::from(b.len()),
                        Frame::Stage {
                            valid: true,
                            banded: false,
                        },
                    )
                })
                .collect::<Result<_, _>>()?
        }
        Op::Features {
            color,
            guides,
            history,
            exposure,
            depth_of_field,
            features,
            colour,
        } => {
            let (r, l) = (graph.geometry.render, size(*features));
            bands
                .iter()
                .map(|&b| {
                    make(
                        PipelineDesc::new("rr/features", 6, 40)
                            .with_spec(SpecConstant::bool(0, *depth_of_field)),
                        &[
                            sub(*color, b),
                            sub(*guides, b),
                            sub(*history, b),
                            res.t(*exposure),
                            sub(*features, b),
                            sub(*colour, b),
                        ],
                        vec![
                            r.w,
                            r.h,
                            l.w,
                            b.len(),
                            b.start,
                            image_read_row0(graph, &axis, b),
                        ],
                        u64::from(l.w) * u64::from(b.len()),
                        Frame::Stage {
                            valid: false,
                            banded: false,
                        },
                    )
                })
                .collect::<Result<_, _>>()?
        }
        Op::Output {
            image,
            codes,
            kernel,
            history,
            guides,
            color,
            exposure,
            out,
            alpha,
        } => {
            let (r, o, l) = (graph.geometry.render, graph.geometry.output, size(*image));
            let banded = bands.len() > 1;
            bands
                .iter()
                .map(|&b| {
                    make(
                        PipelineDesc::new("rr/output", 10, 52),
                        &[
                            sub(*image, b),
                            sub(*codes, b),
                            sub(*kernel, b),
                            res.t(*history),
                            sub(*guides, b),
                            sub(*color, b),
                            res.t(*exposure),
                            sub(*out, b),
                            sub(*alpha, b),
                            res.c(res.sigmoid),
                        ],
                        vec![
                            r.w,
                            r.h,
                            o.w,
                            o.h,
                            l.w,
                            b.start,
                            b.len(),
                            image_read_row0(graph, &axis, b),
                        ],
                        u64::from(o.w) * u64::from(b.len()),
                        // Bands bind the render rows of a jitter within MAX_JITTER.
                        Frame::Stage {
                            valid: true,
                            banded,
                        },
                    )
                })
                .collect::<Result<_, _>>()?
        }
    })
}

fn frame_is_fixed(f: &Frame) -> bool {
    matches!(f, Frame::Fixed)
}

/// `rr/gemm` reads codes four to a word and writes four columns per invocation: n, k and the
/// channels it gathers or scatters must be multiples of 4 (every RR layer's are).
fn check_quads(label: &str, dims: &[usize]) -> Result<(), GpuError> {
    if dims.iter().any(|d| d % 4 != 0) {
        return Err(GpuError::invalid(
            format!("rr launch `{label}`"),
            format!("dimensions {dims:?} are not multiples of 4"),
        ));
    }
    Ok(())
}

fn gemm_desc(gather: u32, seed: u32, epi: u32) -> PipelineDesc {
    PipelineDesc::new("rr/gemm", 7, 24)
        .with_spec(SpecConstant::u32(0, gather))
        .with_spec(SpecConstant::u32(1, seed))
        .with_spec(SpecConstant::u32(2, epi))
}
