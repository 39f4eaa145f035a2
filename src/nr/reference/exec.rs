//! Execution of single graph nodes on the CPU (the reference semantics of every op).

use rayon::prelude::*;

use crate::nr::graph::{DType, Epilogue, Graph, InputMode, Node, Op, TensorId};
use crate::numerics::{e4m3, f16, mma, norm, ops, silu, softmax};

use super::{Output, Profiles, Weights};

/// Why a reference run failed.
#[derive(Debug, thiserror::Error)]
pub enum ReferenceError {
    #[error("model has no record block{block}.layer{layer}")]
    MissingRecord { block: usize, layer: usize },
    #[error("record block{block}.layer{layer} is too short: need {len} bytes at offset {offset}")]
    ShortRecord { block: usize, layer: usize, offset: usize, len: usize },
    #[error("features: expected {expected} f32 values ([field rows][16]), got {got}")]
    FeatureSize { expected: usize, got: usize },
    #[error("tensor `{0}` was read before it was written")]
    Unwritten(String),
    #[error("tensor `{name}`: expected {expected} elements, got {got}")]
    TensorSize { name: String, expected: usize, got: usize },
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
        }
    }

    fn rows(&self, t: TensorId) -> usize {
        let (w, h) = self.graph.geometry.level(self.graph.tensors[t].level);
        w * h
    }

    /// Provide the network input, f32 `[field rows][16]`.
    pub fn set_features(&mut self, features: &[f32]) -> Result<(), ReferenceError> {
        let expected = self.rows(self.graph.features) * 16;
        if features.len() != expected {
            return Err(ReferenceError::FeatureSize { expected, got: features.len() });
        }
        self.tensors[self.graph.features] = Some(TensorData::F32(features.to_vec()));
        Ok(())
    }

    /// Overwrite a tensor (e.g. with a GPU's own data, so the next op sees the same inputs).
    pub fn set_tensor(&mut self, t: TensorId, data: TensorData) -> Result<(), ReferenceError> {
        let expected = self.rows(t) * self.graph.tensors[t].channels;
        if data.len() != expected {
            return Err(ReferenceError::TensorSize { name: self.graph.tensors[t].name.clone(), expected, got: data.len() });
        }
        self.tensors[t] = Some(data);
        Ok(())
    }

    /// The current contents of a tensor, if it is held.
    pub fn tensor(&self, t: TensorId) -> Option<&TensorData> {
        self.tensors[t].as_ref()
    }

    fn get(&self, t: TensorId) -> Result<&TensorData, ReferenceError> {
        self.tensors[t].as_ref().ok_or_else(|| ReferenceError::Unwritten(self.graph.tensors[t].name.clone()))
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
        let outs = self.exec(node)?;
        for (t, data) in outs {
            self.tensors[t] = Some(data);
        }
        if let Some(name) = &node.boundary {
            let t = *node.op.outputs().first().expect("boundary op has an output");
            self.boundaries.push((name.clone(), self.get(t)?.e4().to_vec()));
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

    /// The boundaries and the head (after [`Self::run_all`]).
    pub fn into_output(self) -> Result<Output, ReferenceError> {
        let head = match self.tensors[self.graph.head].as_ref() {
            Some(TensorData::F32(v)) => v.clone(),
            _ => return Err(ReferenceError::Unwritten("head".into())),
        };
        Ok(Output { boundaries: self.boundaries, head })
    }

    /// Execute one node on the held tensors; returns the tensors it writes.
    pub fn exec(&self, node: &Node) -> Result<Vec<(TensorId, TensorData)>, ReferenceError> {
        match &node.op {
            Op::Adapter { input, weights, out_raw, out } => {
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
                            (0..32).map(move |n| mma::dot_f16(&p, f16::POS_ZERO, &a, &w[n * 16..n * 16 + 16], None))
                        })
                    })
                    .collect();
                let e4: Vec<u8> = raw.iter().map(|&h| e4m3::from_f16(h)).collect();
                Ok(vec![(*out_raw, TensorData::F16(raw)), (*out, TensorData::E4(e4))])
            }
            Op::Head { input, weights, out } => {
                let x = self.get(*input)?.f16();
                let w = self.weights.f16_matrix(*weights, 32, 4)?; // [4][32]
                let p = self.profiles.f16;
                let head: Vec<f32> = x
                    .par_chunks(32 * CHUNK)
                    .flat_map_iter(|rows| {
                        let w = &w;
                        rows.chunks_exact(32).flat_map(move |a| {
                            (0..4).map(move |n| f16::to_f32(mma::dot_f16(&p, f16::POS_ZERO, a, &w[n * 32..n * 32 + 32], None)))
                        })
                    })
                    .collect();
                Ok(vec![(*out, TensorData::F32(head))])
            }
            Op::Gemm { input, mode, mat, seed, partition, epilogue, out, out_raw } => {
                let x = self.get(*input)?.e4();
                let cin = self.graph.tensors[*input].channels;
                let rows = self.rows(*input);
                let w = self.weights.matrix(mat)?;
                let nout = mat.n * mat.groups;
                let seed = match seed {
                    Some(s) => Some((self.get(s.skip)?, self.weights.f16s(s.scale, nout)?)),
                    None => None,
                };
                let p = self.profiles.fp8;
                let (k, n, groups) = (mat.k, mat.n, mat.groups);
                let mode = *mode;
                let part = *partition;
                let res: Vec<u16> = (0..rows)
                    .into_par_iter()
                    .chunks(CHUNK)
                    .flat_map_iter(|chunk| {
                        let mut out = Vec::with_capacity(chunk.len() * nout);
                        for r in chunk {
                            let row = &x[r * cin..(r + 1) * cin];
                            for g in 0..groups {
                                let a = match mode {
                                    InputMode::Shared => &row[..k],
                                    InputMode::Split => &row[g * k..(g + 1) * k],
                                };
                                for j in 0..n {
                                    let col = g * n + j;
                                    let acc = match &seed {
                                        Some((skip, scale)) => ops::seed(skip.half_at(r * nout + col), scale[col]),
                                        None => f16::POS_ZERO,
                                    };
                                    let b = &w[(g * n + j) * k..(g * n + j + 1) * k];
                                    out.push(mma::dot_e4m3(&p, acc, a, b, part));
                                }
                            }
                        }
                        out
                    })
                    .collect();
                Ok(match epilogue {
                    Epilogue::F16 => vec![(*out, TensorData::F16(res))],
                    Epilogue::E4 => vec![(*out, TensorData::E4(res.iter().map(|&h| e4m3::from_f16(h)).collect()))],
                    Epilogue::SiluE4 => {
                        vec![(*out, TensorData::E4(res.iter().map(|&h| e4m3::from_f16(silu::silu(h))).collect()))]
                    }
                    Epilogue::Dual => {
                        let e4 = res.iter().map(|&h| e4m3::from_f16(h)).collect();
                        let raw = out_raw.expect("dual epilogue has a raw output");
                        vec![(*out, TensorData::E4(e4)), (raw, TensorData::F16(res))]
                    }
                })
            }
            Op::Normalize { qkv, heads, temperatures, vit, q, k, v } => {
                let x = self.get(*qkv)?.f16();
                let heads = *heads;
                let c = heads * 32;
                let temps: Vec<u16> =
                    self.weights.f32s(*temperatures, heads)?.iter().map(|&t| f16::from_f32_rne(t)).collect();
                let vit = *vit;
                let rows = self.rows(*qkv);
                let per_row: Vec<(Vec<u8>, Vec<u8>, Vec<u8>)> = (0..rows)
                    .into_par_iter()
                    .map(|r| {
                        let row = &x[r * 3 * c..(r + 1) * 3 * c];
                        let (mut qo, mut ko, mut vo) = (vec![0u8; c], vec![0u8; c], vec![0u8; c]);
                        for h in 0..heads {
                            let base = 96 * h;
                            let qs = &row[base..base + 32];
                            let ks = &row[base + 32..base + 64];
                            let vs = &row[base + 64..base + 96];
                            let qn = if vit { norm::vit_query(qs, temps[h]) } else { norm::window_query(qs, temps[h]) };
                            let kn = norm::key(ks);
                            qo[32 * h..32 * h + 32].copy_from_slice(&qn);
                            ko[32 * h..32 * h + 32].copy_from_slice(&kn);
                            for (i, &hv) in vs.iter().enumerate() {
                                vo[32 * h + i] = e4m3::from_f16(hv);
                            }
                        }
                        (qo, ko, vo)
                    })
                    .collect();
                let (mut qa, mut ka, mut va) = (Vec::with_capacity(rows * c), Vec::with_capacity(rows * c), Vec::with_capacity(rows * c));
                for (a, b, d) in per_row {
                    qa.extend(a);
                    ka.extend(b);
                    va.extend(d);
                }
                Ok(vec![(*q, TensorData::E4(qa)), (*k, TensorData::E4(ka)), (*v, TensorData::E4(va))])
            }
            Op::WindowAttention { q, k, v, heads, priors, phase, out } => {
                let level = self.graph.tensors[*q].level;
                let (w, h) = self.graph.geometry.level(level);
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
                );
                Ok(vec![(*out, TensorData::E4(att))])
            }
            Op::VitAttention { q, k, v, heads, out } => {
                let tokens = self.rows(*q);
                let att = super::attention::vit(
                    self.get(*q)?.e4(),
                    self.get(*k)?.e4(),
                    self.get(*v)?.e4(),
                    *heads,
                    tokens,
                    &self.profiles.fp8,
                );
                Ok(vec![(*out, TensorData::E4(att))])
            }
            Op::Pool { input, out } => {
                let x = self.get(*input)?.f16();
                let c = self.graph.tensors[*input].channels;
                let (wi, hi) = self.graph.geometry.level(self.graph.tensors[*input].level);
                let (wo, ho) = self.graph.geometry.level(self.graph.tensors[*out].level);
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
                            let v = ops::pool(x[at(ix, iy)], x[at(ix + 1, iy)], x[at(ix, iy + 1)], x[at(ix + 1, iy + 1)]);
                            e4m3::from_f16(v)
                        })
                    })
                    .collect();
                Ok(vec![(*out, TensorData::E4(res))])
            }
            Op::UpMerge { low, skip, scale, out, out_raw } => {
                let up = self.get(*low)?.f16();
                let s = self.get(*skip)?;
                let c = self.graph.tensors[*skip].channels;
                let scale = self.weights.f16s(*scale, c)?;
                let (wl, _) = self.graph.geometry.level(self.graph.tensors[*low].level);
                let (w, h) = self.graph.geometry.level(self.graph.tensors[*skip].level);
                let raw: Vec<u16> = (0..w * h)
                    .into_par_iter()
                    .flat_map_iter(|t| {
                        let (x, y) = (t % w, t / w);
                        let lo = ((y >> 1) * wl + (x >> 1)) * c;
                        let scale = &scale;
                        (0..c).map(move |ch| ops::merge(up[lo + ch], s.half_at(t * c + ch), scale[ch]))
                    })
                    .collect();
                let e4 = raw.iter().map(|&h| e4m3::from_f16(h)).collect();
                let mut v = vec![(*out, TensorData::E4(e4))];
                if let Some(r) = out_raw {
                    v.push((*r, TensorData::F16(raw)));
                }
                Ok(v)
            }
            Op::PostBlend { low, skip, input_scale, adapter_scale, out_raw, out } => {
                let lowd = self.get(*low)?.e4();
                let sk = self.get(*skip)?.e4();
                let c = 32;
                let is = self.weights.f16s(*input_scale, c)?;
                let asc = self.weights.f16s(*adapter_scale, c)?;
                let (wl, _) = self.graph.geometry.level(self.graph.tensors[*low].level);
                let (w, h) = self.graph.geometry.level(self.graph.tensors[*skip].level);
                let raw: Vec<u16> = (0..w * h)
                    .into_par_iter()
                    .flat_map_iter(|t| {
                        let (x, y) = (t % w, t / w);
                        let lo = ((y >> 1) * wl + (x >> 1)) * c;
                        let (is, asc) = (&is, &asc);
                        (0..c).map(move |ch| {
                            ops::post_blend(e4m3::to_f16(lowd[lo + ch]), is[ch], e4m3::to_f16(sk[t * c + ch]), asc[ch])
                        })
                    })
                    .collect();
                let e4 = raw.iter().map(|&h| e4m3::from_f16(h)).collect();
                Ok(vec![(*out_raw, TensorData::F16(raw)), (*out, TensorData::E4(e4))])
            }
        }
    }
}

#[inline]
fn x_at(x: usize, y: usize, w: usize, c: usize, ch: usize) -> usize {
    (y * w + x) * c + ch
}

/// Dtype check used by tests.
pub fn dtype_of(d: &TensorData) -> DType {
    match d {
        TensorData::E4(_) => DType::E4,
        TensorData::F16(_) => DType::F16,
        TensorData::F32(_) => DType::F32,
    }
}
