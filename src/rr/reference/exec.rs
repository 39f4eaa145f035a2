//! Execution of single graph nodes on the CPU (the reference semantics of every op).

use rayon::prelude::*;

use crate::numerics::f16::{self, F16};
use crate::numerics::rr::{act, gates, k32, q8, rms};
use crate::rr::frame::input::{self, TokenInputs};
use crate::rr::frame::output::{self, OutputInputs};
use crate::rr::frame::{tails, FrameConstants};
use crate::rr::geometry::{self, Size};
use crate::rr::graph::{guide, DType, Epilogue, Graph, Node, Op, Seed, TensorId};

use super::attention::window_attention;
use super::{ReferenceError, Weights};

/// Rows per parallel work item of the GEMMs.
const CHUNK: usize = 64;

/// The contents of one tensor.
#[derive(Clone, Debug, PartialEq)]
pub enum TensorData {
    E4(Vec<u8>),
    F16(Vec<u16>),
    F32(Vec<f32>),
}

impl TensorData {
    /// Element type.
    pub fn dtype(&self) -> DType {
        match self {
            TensorData::E4(_) => DType::E4,
            TensorData::F16(_) => DType::F16,
            TensorData::F32(_) => DType::F32,
        }
    }

    /// Elements.
    pub fn len(&self) -> usize {
        match self {
            TensorData::E4(v) => v.len(),
            TensorData::F16(v) => v.len(),
            TensorData::F32(v) => v.len(),
        }
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Little-endian bytes (what a GPU buffer holds).
    pub fn to_bytes(&self) -> Vec<u8> {
        match self {
            TensorData::E4(v) => v.clone(),
            TensorData::F16(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
            TensorData::F32(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
        }
    }

    fn e4(&self) -> &[u8] {
        match self {
            TensorData::E4(v) => v,
            _ => panic!("graph invariant: tensor is not E4"),
        }
    }

    fn f16(&self) -> &[u16] {
        match self {
            TensorData::F16(v) => v,
            _ => panic!("graph invariant: tensor is not F16"),
        }
    }

    fn f32(&self) -> &[f32] {
        match self {
            TensorData::F32(v) => v,
            _ => panic!("graph invariant: tensor is not F32"),
        }
    }

    /// Element `i` as a half (E4 decoded with RR's rule).
    fn half(&self, i: usize) -> F16 {
        match self {
            TensorData::E4(v) => q8::to_f16(v[i]),
            TensorData::F16(v) => v[i],
            TensorData::F32(v) => input::sat(v[i]),
        }
    }
}

/// A flat tensor as rows of `N` (copied: the crate's MSRV predates `slice::as_chunks`).
fn rows<T: Copy + Default, const N: usize>(v: &[T]) -> Vec<[T; N]> {
    v.chunks_exact(N)
        .map(|c| {
            let mut a = [T::default(); N];
            a.copy_from_slice(c);
            a
        })
        .collect()
}

fn rgba(v: &[u16]) -> Vec<[u16; 4]> {
    rows::<u16, 4>(v)
}

fn num(e: k32::K32Error) -> ReferenceError {
    ReferenceError::Numerics(e.to_string())
}

/// Executes graph nodes in order, dropping tensors after their last use unless `keep_all`.
pub struct Executor<'g, 'w> {
    graph: &'g Graph,
    weights: &'w Weights,
    constants: FrameConstants,
    tensors: Vec<Option<TensorData>>,
    last_use: Vec<Option<usize>>,
    next: usize,
    /// Keep every tensor (for op-by-op comparisons) instead of freeing it after its last use.
    pub keep_all: bool,
    /// Copies of the published tensors, in graph order, as they are written.
    pub published: Vec<(String, TensorData)>,
    /// Seconds per op kind.
    pub seconds: std::collections::BTreeMap<&'static str, f64>,
}

impl<'g, 'w> Executor<'g, 'w> {
    pub fn new(graph: &'g Graph, weights: &'w Weights, constants: FrameConstants) -> Self {
        Executor {
            graph,
            weights,
            constants,
            tensors: vec![None; graph.tensors.len()],
            last_use: graph.last_use(),
            next: 0,
            keep_all: false,
            published: Vec::new(),
            seconds: Default::default(),
        }
    }

    /// Set a tensor (the inputs, or a GPU's data for an op-by-op comparison).
    pub fn set(&mut self, t: TensorId, data: TensorData) -> Result<(), ReferenceError> {
        let spec = &self.graph.tensors[t];
        let expected = self.graph.elements(t);
        if data.len() != expected || data.dtype() != spec.dtype {
            return Err(ReferenceError::TensorSize {
                name: spec.name.clone(),
                dtype: match spec.dtype {
                    DType::E4 => "E4M3",
                    DType::F16 => "f16",
                    DType::F32 => "f32",
                },
                expected,
                got: data.len(),
            });
        }
        self.tensors[t] = Some(data);
        Ok(())
    }

    /// A held tensor.
    pub fn tensor(&self, t: TensorId) -> Option<&TensorData> {
        self.tensors[t].as_ref()
    }

    /// Take a held tensor out.
    pub fn take(&mut self, t: TensorId) -> Option<TensorData> {
        self.tensors[t].take()
    }

    fn get(&self, t: TensorId) -> Result<&TensorData, ReferenceError> {
        self.tensors[t]
            .as_ref()
            .ok_or_else(|| ReferenceError::Unwritten(self.graph.tensors[t].name.clone()))
    }

    /// Run every remaining node.
    pub fn run_all(&mut self) -> Result<(), ReferenceError> {
        while self.next < self.graph.nodes.len() {
            self.step()?;
        }
        Ok(())
    }

    /// Run the next node; returns its index.
    pub fn step(&mut self) -> Result<usize, ReferenceError> {
        let i = self.next;
        let node = &self.graph.nodes[i];
        let t0 = std::time::Instant::now();
        let outs = self.exec(node)?;
        *self.seconds.entry(node.op.kind()).or_default() += t0.elapsed().as_secs_f64();
        for (t, data) in outs {
            if let Some((name, _)) = self.graph.published.iter().find(|p| p.1 == t) {
                self.published.push((name.clone(), data.clone()));
            }
            self.tensors[t] = Some(data);
        }
        if !self.keep_all {
            for t in node.op.inputs() {
                let io = [self.graph.color, self.graph.guides, self.graph.history];
                if self.last_use[t] == Some(i) && !io.contains(&t) {
                    self.tensors[t] = None;
                }
            }
        }
        self.next += 1;
        Ok(i)
    }

    fn size(&self, t: TensorId) -> Size {
        self.graph.grid_size(self.graph.tensors[t].grid)
    }

    /// Execute one node on the held tensors; returns what it writes.
    pub fn exec(&self, node: &Node) -> Result<Vec<(TensorId, TensorData)>, ReferenceError> {
        let g = self.graph;
        let c = &self.constants;
        let render = g.geometry.render;
        Ok(match &node.op {
            Op::Exposure { color, out } => {
                let px = self.get(*color)?.f32();
                let sum: u64 = px
                    .par_chunks(4 * 4096)
                    .map(|ch| {
                        ch.chunks_exact(4)
                            .map(|p| input::luma_units([p[0], p[1], p[2], p[3]]))
                            .sum::<u64>()
                    })
                    .sum();
                let e = input::exposure(c, sum, render.area() as u64);
                vec![(*out, TensorData::F16(e.to_vec()))]
            }
            Op::Reproject {
                history,
                guides,
                exposure,
                out,
            } => {
                let hist = rgba(self.get(*history)?.f16());
                let gd = self.get(*guides)?.f32();
                let e = self.get(*exposure)?.half(0);
                let output = g.geometry.output;
                let mut o = vec![0u16; render.area() * 4];
                o.par_chunks_mut(4).enumerate().for_each(|(i, px)| {
                    let (x, y) = (
                        (i % render.w as usize) as u32,
                        (i / render.w as usize) as u32,
                    );
                    let mv = &gd[i * guide::LANES + guide::MOTION..];
                    let v =
                        input::reproject_pixel(c, &hist, output, render, x, y, [mv[0], mv[1]], e);
                    px.copy_from_slice(&v);
                });
                vec![(*out, TensorData::F16(o))]
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
                let col = rows::<f32, 4>(self.get(*color)?.f32());
                let gd = self.get(*guides)?.f32();
                let hist = rgba(self.get(*history)?.f16());
                let e = self.get(*exposure)?.half(0);
                let l0 = g.geometry.level(0);
                let mut f = vec![0u8; l0.area() * 32];
                let mut cl = vec![0u16; l0.area() * 4];
                f.par_chunks_mut(32)
                    .zip(cl.par_chunks_mut(4))
                    .enumerate()
                    .for_each(|(i, (fo, co))| {
                        let (x, y) = ((i % l0.w as usize) as u32, (i / l0.w as usize) as u32);
                        let s = input::source(render, x, y);
                        let t = TokenInputs {
                            color: col[s],
                            guides: &gd[s * guide::LANES..(s + 1) * guide::LANES],
                            history: hist[s],
                        };
                        fo.copy_from_slice(&input::features(c, &t, e, *depth_of_field));
                        co.copy_from_slice(&input::colour_token(&col, render, x, y, e));
                    });
                vec![
                    (*features, TensorData::E4(f)),
                    (*colour, TensorData::F16(cl)),
                ]
            }
            Op::Norm {
                input,
                gain,
                eps,
                out,
            } => {
                let x = self.get(*input)?;
                let gain = self.weights.vec(gain)?;
                let ch = g.tensors[*input].channels;
                let mut o = vec![0u8; g.elements(*input)];
                o.par_chunks_mut(ch).enumerate().for_each(|(r, orow)| {
                    let row: Vec<F16> = (0..ch).map(|j| x.half(r * ch + j)).collect();
                    let mut n = vec![0u16; ch];
                    rms::norm_row(&row, gain, *eps, &mut n);
                    for (o, v) in orow.iter_mut().zip(n) {
                        *o = q8::from_f16(v);
                    }
                });
                vec![(*out, TensorData::E4(o))]
            }
            Op::Gemm {
                input,
                mat,
                seed,
                epilogue,
                out,
            } => {
                let a = self.get(*input)?.e4();
                let (_, packed) = self.weights.mat(mat)?;
                let (k, n) = (mat.k, mat.n);
                let rows = g.rows(*input);
                let seed_src = match seed {
                    Seed::Zero => None,
                    Seed::Bias(b) => Some((None, self.weights.vec(b)?)),
                    Seed::Residual { x, bias } => {
                        Some((Some(self.get(*x)?), self.weights.vec(bias)?))
                    }
                };
                let raw: Vec<Result<Vec<F16>, ReferenceError>> = (0..rows.div_ceil(CHUNK))
                    .into_par_iter()
                    .map(|blk| {
                        let r0 = blk * CHUNK;
                        let m = CHUNK.min(rows - r0);
                        let seeds: Option<Vec<F16>> = seed_src.map(|(x, b)| {
                            (0..m * n)
                                .map(|i| match x {
                                    None => b[i % n],
                                    Some(x) => f16::add(x.half((r0 + i / n) * n + i % n), b[i % n]),
                                })
                                .collect()
                        });
                        let mut o = vec![0u16; m * n];
                        k32::gemm(
                            &a[r0 * k..(r0 + m) * k],
                            packed,
                            m,
                            seeds.as_deref(),
                            &mut o,
                        )
                        .map_err(num)?;
                        Ok(o)
                    })
                    .collect();
                let mut res = Vec::with_capacity(rows * n);
                for r in raw {
                    res.extend(r?);
                }
                let data = match epilogue {
                    Epilogue::F16 => TensorData::F16(res),
                    Epilogue::Q8 => {
                        TensorData::E4(res.par_iter().map(|&h| q8::from_f16(h)).collect())
                    }
                    Epilogue::Q8Relu => {
                        TensorData::E4(res.par_iter().map(|&h| q8::from_f16_relu(h)).collect())
                    }
                    Epilogue::Q8Act => {
                        let t = act::act_table();
                        TensorData::E4(
                            res.par_iter()
                                .map(|&h| q8::from_f16(t[h as usize]))
                                .collect(),
                        )
                    }
                };
                vec![(*out, data)]
            }
            Op::Attention {
                u,
                v,
                layer,
                heads,
                level,
                side,
                out,
            } => {
                let shift = geometry::shift(c.frame_index, *side);
                let o = window_attention(
                    self.get(*u)?.e4(),
                    self.get(*v)?.e4(),
                    self.weights.score_biases(*layer),
                    *heads,
                    g.geometry.level(*level),
                    shift,
                )?;
                vec![(*out, TensorData::E4(o))]
            }
            Op::Merge {
                input,
                mat,
                bias,
                out,
            } => {
                let x = self.get(*input)?.e4();
                let (_, packed) = self.weights.mat(mat)?;
                let b = self.weights.vec(bias)?;
                let (fine, coarse) = (self.size(*input), self.size(*out));
                let ch = g.tensors[*input].channels;
                let n = mat.n;
                let mut o = vec![0u8; coarse.area() * n];
                let res: Vec<Result<(), ReferenceError>> = o
                    .par_chunks_mut(n)
                    .enumerate()
                    .map(|(i, orow)| {
                        let (cx, cy) = (i % coarse.w as usize, i / coarse.w as usize);
                        let mut a = vec![0u8; 4 * ch];
                        for q in 0..4 {
                            let fx = 2 * cx + (q & 1);
                            let fy = 2 * cy + (q >> 1);
                            let src = (fy * fine.w as usize + fx) * ch;
                            a[q * ch..(q + 1) * ch].copy_from_slice(&x[src..src + ch]);
                        }
                        let mut r = vec![0u16; n];
                        k32::gemm(&a, packed, 1, Some(b), &mut r).map_err(num)?;
                        for (o, h) in orow.iter_mut().zip(r) {
                            *o = q8::from_f16(h);
                        }
                        Ok(())
                    })
                    .collect();
                res.into_iter().collect::<Result<(), _>>()?;
                vec![(*out, TensorData::E4(o))]
            }
            Op::Expand {
                low,
                mat,
                bias,
                skip,
                out,
            } => {
                let lo = self.get(*low)?.e4();
                let sk = self.get(*skip)?.e4();
                let (_, packed) = self.weights.mat(mat)?;
                let b = self.weights.vec(bias)?;
                let (fine, coarse) = (self.size(*out), self.size(*low));
                let ch = g.tensors[*out].channels;
                let cin = mat.k;
                let mut o = vec![0u16; fine.area() * ch];
                let rows: Vec<Result<Vec<F16>, ReferenceError>> = (0..coarse.area())
                    .into_par_iter()
                    .map(|i| {
                        let mut r = vec![0u16; 4 * ch];
                        k32::gemm(&lo[i * cin..(i + 1) * cin], packed, 1, Some(b), &mut r)
                            .map_err(num)?;
                        Ok(r)
                    })
                    .collect();
                for (i, r) in rows.into_iter().enumerate() {
                    let r = r?;
                    let (cx, cy) = (i % coarse.w as usize, i / coarse.w as usize);
                    for q in 0..4 {
                        let fx = 2 * cx + (q & 1);
                        let fy = 2 * cy + (q >> 1);
                        let t = (fy * fine.w as usize + fx) * ch;
                        for j in 0..ch {
                            let e = q8::to_f16(q8::from_f16(r[q * ch + j]));
                            o[t + j] = f16::add(e, q8::to_f16(sk[t + j]));
                        }
                    }
                }
                vec![(*out, TensorData::F16(o))]
            }
            Op::EncoderTail {
                logits,
                image,
                out112,
                out120,
                out128,
            } => {
                let lg = self.get(*logits)?.f16();
                let img = rgba(self.get(*image)?.f16());
                let size = self.size(*logits);
                let lc = g.tensors[*logits].channels;
                let split = out120.is_some();
                let px: Vec<([F16; 4], [F16; 4])> = (0..size.area())
                    .into_par_iter()
                    .map(|i| {
                        let (x, y) = ((i % size.w as usize) as u32, (i / size.w as usize) as u32);
                        let taps = tails::taps(&img, size, x, y);
                        tails::encoder_pixel(&lg[i * lc..(i + 1) * lc], &taps, split)
                    })
                    .collect();
                let s112: Vec<u16> = px.iter().flat_map(|p| p.0).collect();
                let mut outs = Vec::new();
                if let (Some(o120), Some(o128)) = (out120, out128) {
                    let s120: Vec<u16> = px.iter().flat_map(|p| p.1).collect();
                    let half = self.size(*o128);
                    let b = rgba(&s112);
                    let at = |x: usize, y: usize| b[y * size.w as usize + x];
                    let s128: Vec<u16> = (0..half.area())
                        .flat_map(|i| {
                            let (x, y) = (2 * (i % half.w as usize), 2 * (i / half.w as usize));
                            tails::quad_average([
                                at(x, y),
                                at(x + 1, y),
                                at(x, y + 1),
                                at(x + 1, y + 1),
                            ])
                        })
                        .collect();
                    outs.push((*o120, TensorData::F16(s120)));
                    outs.push((*o128, TensorData::F16(s128)));
                }
                outs.insert(0, (*out112, TensorData::F16(s112)));
                outs
            }
            Op::DecoderTail {
                logits,
                coarse,
                low,
                detail,
                out,
            } => {
                let lg = self.get(*logits)?.f16();
                let lc = g.tensors[*logits].channels;
                let co = rgba(self.get(*coarse)?.f16());
                let lw = rgba(self.get(*low)?.f16());
                let dt = rgba(self.get(*detail)?.f16());
                let (size, csize) = (self.size(*out), self.size(*coarse));
                let mut o = vec![0u16; size.area() * 4];
                o.par_chunks_mut(4).enumerate().for_each(|(i, px)| {
                    let (x, y) = ((i % size.w as usize) as u32, (i / size.w as usize) as u32);
                    let taps = tails::bilinear_taps(&co, csize, x, y);
                    px.copy_from_slice(&tails::decoder_pixel(
                        &lg[i * lc..(i + 1) * lc],
                        &taps,
                        lw[i],
                        dt[i],
                    ));
                });
                vec![(*out, TensorData::F16(o))]
            }
            Op::Dec0Outputs { x2, out48, out144 } => {
                let x = self.get(*x2)?.f16();
                let ch = g.tensors[*x2].channels;
                let rows = g.rows(*x2);
                let codes: Vec<u8> = (0..rows)
                    .flat_map(|r| (16..24).map(move |j| q8::from_f16(x[r * ch + j])))
                    .collect();
                let k: Vec<f32> = (0..rows)
                    .flat_map(|r| (24..28).map(move |j| f32::from_bits(gates::tanh(x[r * ch + j]))))
                    .collect();
                vec![
                    (*out48, TensorData::E4(codes)),
                    (*out144, TensorData::F32(k)),
                ]
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
                let gd = self.get(*guides)?.f32();
                let motion: Vec<[f32; 2]> = gd
                    .chunks_exact(guide::LANES)
                    .map(|p| [p[guide::MOTION], p[guide::MOTION + 1]])
                    .collect();
                let col = self.get(*color)?.f32();
                let al: Vec<f32> = col.chunks_exact(4).map(|p| p[3]).collect();
                let ex = self.get(*exposure)?;
                let inp = OutputInputs {
                    image: &rgba(self.get(*image)?.f16()),
                    codes: &rows::<u8, 8>(self.get(*codes)?.e4()),
                    kernel: &rows::<f32, 4>(self.get(*kernel)?.f32()),
                    level0: g.geometry.level(0),
                    history: &rgba(self.get(*history)?.f16()),
                    motion: &motion,
                    alpha: &al,
                    render,
                    output: g.geometry.output,
                    exposure: [ex.half(0), ex.half(1)],
                };
                let osize = g.geometry.output;
                let px: Vec<([F16; 4], f32)> = (0..osize.area())
                    .into_par_iter()
                    .map(|i| {
                        output::pixel(
                            c,
                            &inp,
                            (i % osize.w as usize) as u32,
                            (i / osize.w as usize) as u32,
                        )
                    })
                    .collect();
                vec![
                    (*out, TensorData::F16(px.iter().flat_map(|p| p.0).collect())),
                    (*alpha, TensorData::F32(px.iter().map(|p| p.1).collect())),
                ]
            }
        })
    }
}
