//! Execution of single graph nodes on the CPU (the reference semantics of every op).

use rayon::prelude::*;

use crate::nr::graph::{DType, Epilogue, Graph, InputMode, Node, Op, TensorId};
use crate::numerics::{e4m3, f16, gemm_e4m3_packed, mma, norm, ops, silu, Profiles};

use super::{Output, Weights};

/// Why a reference run failed.
#[derive(Debug, thiserror::Error)]
pub enum ReferenceError {
    #[error("model has no record block{block}.layer{layer}")]
    MissingRecord { block: usize, layer: usize },
    #[error("record block{block}.layer{layer} is too short: need {len} bytes at offset {offset}")]
    ShortRecord {
        block: usize,
        layer: usize,
        offset: usize,
        len: usize,
    },
    #[error("features: expected {expected} f32 values ([field rows][16]), got {got}")]
    FeatureSize { expected: usize, got: usize },
    #[error("tensor `{0}` was read before it was written")]
    Unwritten(String),
    #[error("numerics: {0}")]
    Numerics(String),
    #[error("tensor `{name}`: expected {expected} elements, got {got}")]
    TensorSize {
        name: String,
        expected: usize,
        got: usize,
    },
}

/// The contents of one tensor.
#[derive(Clone, Debug, PartialEq)]
pub enum TensorData {
    E4(Vec<u8>),
    F16(Vec<u16>),
    F32(Vec<f32>),
}

impl TensorData {
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
    /// Element `i` as an f16 (E4 codes are decoded exactly).
    #[inline]
    fn half_at(&self, i: usize) -> u16 {
        match self {
            TensorData::E4(v) => e4m3::to_f16(v[i]),
            TensorData::F16(v) => v[i],
            TensorData::F32(v) => f16::from_f32_rne(v[i]),
        }
    }
    /// The element type.
    pub fn dtype(&self) -> DType {
        match self {
            TensorData::E4(_) => DType::E4,
            TensorData::F16(_) => DType::F16,
            TensorData::F32(_) => DType::F32,
        }
    }
    /// Number of elements.
    pub fn len(&self) -> usize {
        match self {
            TensorData::E4(v) => v.len(),
            TensorData::F16(v) => v.len(),
            TensorData::F32(v) => v.len(),
        }
    }
    /// True when it holds no element.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Rows per parallel work item.
const CHUNK: usize = 64;

/// Executes graph nodes one at a time, keeping only the tensors that are still needed.
pub struct Executor<'g, 'w, 'm> {
    graph: &'g Graph,
    weights: &'w Weights<'m>,
    profiles: Profiles,
    tensors: Vec<Option<TensorData>>,
    last_use: Vec<Option<usize>>,
    /// Keep every tensor (for `verify`) instead of freeing it after its last use.
    pub keep_all: bool,
    boundaries: Vec<(String, Vec<u8>)>,
    next: usize,
    /// Seconds spent per op kind (`Gemm`, `WindowAttention`, ...), for speed reports.
    pub seconds: std::collections::BTreeMap<&'static str, f64>,
}

impl<'g, 'w, 'm> Executor<'g, 'w, 'm> {
    pub fn new(graph: &'g Graph, weights: &'w Weights<'m>, profiles: Profiles) -> Self {
        Executor {
            graph,
            weights,
            profiles,
            tensors: vec![None; graph.tensors.len()],
            last_use: graph.last_use(),
            keep_all: false,
            boundaries: Vec::new(),
            next: 0,
            seconds: Default::default(),
        }
    }

    fn rows(&self, t: TensorId) -> usize {
        self.graph.rows(t)
    }

    /// Provide the network input, f32 `[field rows][16]`.
    pub fn set_features(&mut self, features: &[f32]) -> Result<(), ReferenceError> {
        let expected = self.rows(self.graph.features) * 16;
        if features.len() != expected {
            return Err(ReferenceError::FeatureSize {
                expected,
                got: features.len(),
            });
        }
        self.tensors[self.graph.features] = Some(TensorData::F32(features.to_vec()));
        Ok(())
    }

    /// Overwrite a tensor (e.g. with a GPU's own data, so the next op sees the same inputs).
    pub fn set_tensor(&mut self, t: TensorId, data: TensorData) -> Result<(), ReferenceError> {
        let expected = self.rows(t) * self.graph.tensors[t].channels;
        if data.len() != expected {
            return Err(ReferenceError::TensorSize {
                name: self.graph.tensors[t].name.clone(),
                expected,
                got: data.len(),
            });
        }
        self.tensors[t] = Some(data);
        Ok(())
    }

    /// The current contents of a tensor, if it is held.
    pub fn tensor(&self, t: TensorId) -> Option<&TensorData> {
        self.tensors[t].as_ref()
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
            self.tensors[t] = Some(data);
        }
        if let Some(name) = &node.boundary {
            let t = *node
                .op
                .outputs()
                .first()
                .expect("boundary op has an output");
            self.boundaries
                .push((name.clone(), self.get(t)?.e4().to_vec()));
        }
        if !self.keep_all {
            for t in node.op.inputs() {
                if self.last_use[t] == Some(i) && t != self.graph.head {
                    self.tensors[t] = None;
                }
            }
        }
        self.next += 1;
        Ok(i)
    }

    /// The boundaries published so far, in graph order.
    pub fn boundaries(&self) -> &[(String, Vec<u8>)] {
        &self.boundaries
    }

    /// The boundaries and the head (after [`Self::run_all`]).
    pub fn into_output(self) -> Result<Output, ReferenceError> {
        let head = match self.tensors[self.graph.head].as_ref() {
            Some(TensorData::F32(v)) => v.clone(),
            _ => return Err(ReferenceError::Unwritten("head".into())),
        };
        Ok(Output {
            boundaries: self.boundaries,
            head,
        })
    }

    /// Execute one node on the held tensors; returns the tensors it writes.
    pub fn exec(&self, node: &Node) -> Result<Vec<(TensorId, TensorData)>, ReferenceError> {
        match &node.op {
            Op::Adapter {
                input,
                weights,
                out_raw,
                out,
            } => {
                let x = match self.get(*input)? {
                    TensorData::F32(v) => v,
                    _ => panic!("graph invariant: features are f32"),
                };
                let w = self.weights.f16_matrix(*weights, 16, 32)?; // [32][16]
                let p = self.profiles.f16;
                let raw: Vec<u16> = x
                    .par_chunks(16 * CHUNK)
                    .flat_map_iter(|rows| {
                        let w = &w;
                        rows.chunks_exact(16).flat_map(move |row| {
                            let a: Vec<u16> = row.iter().map(|&v| f16::from_f32_rne(v)).collect();
                            (0..32).map(move |n| {
                                mma::split_f16(&p, f16::POS_ZERO, &a, &w[n * 16..n * 16 + 16], None)
                            })
                        })
                    })
                    .collect();
                let e4: Vec<u8> = raw.iter().map(|&h| e4m3::from_f16(h)).collect();
                Ok(vec![
                    (*out_raw, TensorData::F16(raw)),
                    (*out, TensorData::E4(e4)),
                ])
            }
            Op::Head {
                input,
                weights,
                out,
            } => {
                let x = self.get(*input)?.f16();
                let w = self.weights.f16_matrix(*weights, 32, 4)?; // [4][32]
                let p = self.profiles.f16;
                let head: Vec<f32> = x
                    .par_chunks(32 * CHUNK)
                    .flat_map_iter(|rows| {
                        let w = &w;
                        rows.chunks_exact(32).flat_map(move |a| {
                            (0..4).map(move |n| {
                                f16::to_f32(mma::split_f16(
                                    &p,
                                    f16::POS_ZERO,
                                    a,
                                    &w[n * 32..n * 32 + 32],
                                    None,
                                ))
                            })
                        })
                    })
                    .collect();
                Ok(vec![(*out, TensorData::F32(head))])
            }
            Op::Gemm {
                input,
                mode,
                mat,
                seed,
                partition,
                epilogue,
                out,
                out_raw,
            } => {
                let x = self.get(*input)?.e4();
                let cin = self.graph.tensors[*input].channels;
                let rows = self.rows(*input);
                let p = self.profiles.fp8;
                let w = self.weights.decoded(mat, p.exponents)?;
                let nout = mat.n * mat.groups;
                let seed = match seed {
                    Some(s) => Some((self.get(s.skip)?, self.weights.f16s(s.scale, nout)?)),
                    None => None,
                };
                let (k, n, groups) = (mat.k, mat.n, mat.groups);
                let mode = *mode;
                let part = *partition;
                let epilogue = *epilogue;
                let keep_raw = matches!(epilogue, Epilogue::F16 | Epilogue::Dual);
                // Each chunk runs its GEMMs and its epilogue (the per-output conversions cost as
                // much as a short-K GEMM, so they run in parallel too); the raw f16 result is kept
                // only where an output needs it.
                /// A chunk's raw f16 rows (if kept) and E4 rows (if any).
                type Chunk = (Vec<u16>, Vec<u8>);
                let chunks: Vec<Result<Chunk, ReferenceError>> = (0..rows.div_ceil(CHUNK))
                    .into_par_iter()
                    .map(|ci| {
                        let r0 = ci * CHUNK;
                        let m = CHUNK.min(rows - r0);
                        let mut res = vec![0u16; m * nout];
                        let mut a = Vec::new();
                        let mut seeds = vec![0u16; if seed.is_some() { m * n } else { 0 }];
                        let mut o = vec![0u16; if groups > 1 { m * n } else { 0 }];
                        for g in 0..groups {
                            // A group that reads whole rows (k == cin) needs no copy.
                            let rows_a: &[u8] = if k == cin {
                                &x[r0 * cin..(r0 + m) * cin]
                            } else {
                                a.resize(m * k, 0);
                                for i in 0..m {
                                    let row = &x[(r0 + i) * cin..(r0 + i + 1) * cin];
                                    let src = match mode {
                                        InputMode::Shared => &row[..k],
                                        InputMode::Split => &row[g * k..(g + 1) * k],
                                    };
                                    a[i * k..(i + 1) * k].copy_from_slice(src);
                                }
                                &a
                            };
                            if let Some((skip, scale)) = &seed {
                                for i in 0..m {
                                    for j in 0..n {
                                        let col = g * n + j;
                                        seeds[i * n + j] = ops::scaled_skip(
                                            skip.half_at((r0 + i) * nout + col),
                                            scale[col],
                                        );
                                    }
                                }
                            }
                            let sd = seed.as_ref().map(|_| &seeds[..]);
                            let num = |e: crate::numerics::GemmError| {
                                ReferenceError::Numerics(e.to_string())
                            };
                            if groups == 1 {
                                gemm_e4m3_packed(&p, rows_a, &w[g], m, sd, part, &mut res)
                                    .map_err(num)?;
                            } else {
                                gemm_e4m3_packed(&p, rows_a, &w[g], m, sd, part, &mut o)
                                    .map_err(num)?;
                                for i in 0..m {
                                    res[i * nout + g * n..i * nout + g * n + n]
                                        .copy_from_slice(&o[i * n..(i + 1) * n]);
                                }
                            }
                        }
                        let e4: Vec<u8> = match epilogue {
                            Epilogue::F16 => Vec::new(),
                            Epilogue::E4 | Epilogue::Dual => {
                                res.iter().map(|&h| e4m3::from_f16(h)).collect()
                            }
                            Epilogue::SiluE4 => res
                                .iter()
                                .map(|&h| e4m3::from_f16(silu::silu_lookup(h)))
                                .collect(),
                        };
                        Ok((if keep_raw { res } else { Vec::new() }, e4))
                    })
                    .collect();
                let mut raw = Vec::with_capacity(if keep_raw { rows * nout } else { 0 });
                let mut e4 = Vec::with_capacity(if epilogue == Epilogue::F16 {
                    0
                } else {
                    rows * nout
                });
                for c in chunks {
                    let (r, e) = c?;
                    raw.extend(r);
                    e4.extend(e);
                }
                Ok(match epilogue {
                    Epilogue::F16 => vec![(*out, TensorData::F16(raw))],
                    Epilogue::E4 | Epilogue::SiluE4 => vec![(*out, TensorData::E4(e4))],
                    Epilogue::Dual => {
                        let raw_out = out_raw.expect("dual epilogue has a raw output");
                        vec![(*out, TensorData::E4(e4)), (raw_out, TensorData::F16(raw))]
                    }
                })
            }
            Op::Normalize {
                qkv,
                heads,
                temperatures,
                vit,
                q,
                k,
                v,
            } => {
                let x = self.get(*qkv)?.f16();
                let heads = *heads;
                let c = heads * 32;
                let temps = self.weights.f32s(*temperatures, heads)?;
                let vit = *vit;
                let rows = self.rows(*qkv);
                let per_row: Vec<(Vec<u8>, Vec<u8>, Vec<u8>)> = (0..rows)
                    .into_par_iter()
                    .map(|r| {
                        let row = &x[r * 3 * c..(r + 1) * 3 * c];
                        let (mut qo, mut ko, mut vo) = (vec![0u8; c], vec![0u8; c], vec![0u8; c]);
                        for h in 0..heads {
                            let base = 96 * h;
                            let part = |o: usize| -> [u16; 32] {
                                let mut v = [0u16; 32];
                                v.copy_from_slice(&row[base + o..base + o + 32]);
                                v
                            };
                            let qn = if vit {
                                norm::vit_q(&part(0), temps[h])
                            } else {
                                norm::window_q(&part(0), temps[h])
                            };
                            qo[32 * h..32 * h + 32].copy_from_slice(&qn);
                            ko[32 * h..32 * h + 32].copy_from_slice(&norm::normalize_k(&part(32)));
                            vo[32 * h..32 * h + 32].copy_from_slice(&norm::publish_v(&part(64)));
                        }
                        (qo, ko, vo)
                    })
                    .collect();
                let (mut qa, mut ka, mut va) = (
                    Vec::with_capacity(rows * c),
                    Vec::with_capacity(rows * c),
                    Vec::with_capacity(rows * c),
                );
                for (a, b, d) in per_row {
                    qa.extend(a);
                    ka.extend(b);
                    va.extend(d);
                }
                Ok(vec![
                    (*q, TensorData::E4(qa)),
                    (*k, TensorData::E4(ka)),
                    (*v, TensorData::E4(va)),
                ])
            }
            Op::WindowAttention {
                q,
                k,
                v,
                heads,
                priors,
                phase,
                out,
            } => {
                let (w, h) = self.graph.dims(*q);
                let att = super::attention::window(
                    self.get(*q)?.e4(),
                    self.get(*k)?.e4(),
                    self.get(*v)?.e4(),
                    &self.weights.priors(*priors, *heads)?,
                    *heads,
                    w,
                    h,
                    *phase,
                    &self.profiles.fp8,
                )?;
                Ok(vec![(*out, TensorData::E4(att))])
            }
            Op::VitAttention {
                q,
                k,
                v,
                heads,
                out,
            } => {
                let tokens = self.rows(*q);
                let att = super::attention::vit(
                    self.get(*q)?.e4(),
                    self.get(*k)?.e4(),
                    self.get(*v)?.e4(),
                    *heads,
                    tokens,
                    &self.profiles.fp8,
                )?;
                Ok(vec![(*out, TensorData::E4(att))])
            }
            Op::Pool { input, out } => {
                let x = self.get(*input)?.f16();
                let c = self.graph.tensors[*input].channels;
                let (wi, hi) = self.graph.dims(*input);
                let (wo, ho) = self.graph.dims(*out);
                let res: Vec<u8> = (0..wo * ho)
                    .into_par_iter()
                    .flat_map_iter(|t| {
                        let (ox, oy) = (t % wo, t / wo);
                        let (ix, iy) = (2 * ox, 2 * oy);
                        let inside = ix + 1 < wi && iy + 1 < hi;
                        (0..c).map(move |ch| {
                            if !inside {
                                return 0u8;
                            }
                            let at = |x: usize, y: usize| x_at(x, y, wi, c, ch);
                            let v = ops::pool2x2(
                                x[at(ix, iy)],
                                x[at(ix + 1, iy)],
                                x[at(ix, iy + 1)],
                                x[at(ix + 1, iy + 1)],
                            );
                            e4m3::from_f16(v)
                        })
                    })
                    .collect();
                Ok(vec![(*out, TensorData::E4(res))])
            }
            Op::UpMerge {
                low,
                skip,
                scale,
                out,
                out_raw,
            } => {
                let up = self.get(*low)?.f16();
                let s = self.get(*skip)?;
                let c = self.graph.tensors[*skip].channels;
                let scale = self.weights.f16s(*scale, c)?;
                let (wl, _) = self.graph.dims(*low);
                let (w, h) = self.graph.dims(*skip);
                let raw: Vec<u16> = (0..w * h)
                    .into_par_iter()
                    .flat_map_iter(|t| {
                        let (x, y) = (t % w, t / w);
                        let lo = ((y >> 1) * wl + (x >> 1)) * c;
                        let scale = &scale;
                        (0..c).map(move |ch| {
                            ops::decoder_merge(up[lo + ch], s.half_at(t * c + ch), scale[ch])
                        })
                    })
                    .collect();
                let e4 = raw.iter().map(|&h| e4m3::from_f16(h)).collect();
                let mut v = vec![(*out, TensorData::E4(e4))];
                if let Some(r) = out_raw {
                    v.push((*r, TensorData::F16(raw)));
                }
                Ok(v)
            }
            Op::PostBlend {
                low,
                skip,
                input_scale,
                adapter_scale,
                out_raw,
                out,
            } => {
                let lowd = self.get(*low)?.e4();
                let sk = self.get(*skip)?.e4();
                let c = 32;
                let is = self.weights.f16s(*input_scale, c)?;
                let asc = self.weights.f16s(*adapter_scale, c)?;
                let (wl, _) = self.graph.dims(*low);
                let (w, h) = self.graph.dims(*skip);
                let raw: Vec<u16> = (0..w * h)
                    .into_par_iter()
                    .flat_map_iter(|t| {
                        let (x, y) = (t % w, t / w);
                        let lo = ((y >> 1) * wl + (x >> 1)) * c;
                        let (is, asc) = (&is, &asc);
                        (0..c).map(move |ch| {
                            ops::post_blend(
                                e4m3::to_f16(lowd[lo + ch]),
                                is[ch],
                                e4m3::to_f16(sk[t * c + ch]),
                                asc[ch],
                            )
                        })
                    })
                    .collect();
                let e4 = raw.iter().map(|&h| e4m3::from_f16(h)).collect();
                Ok(vec![
                    (*out_raw, TensorData::F16(raw)),
                    (*out, TensorData::E4(e4)),
                ])
            }
        }
    }
}

#[inline]
fn x_at(x: usize, y: usize, w: usize, c: usize, ch: usize) -> usize {
    (y * w + x) * c + ch
}
