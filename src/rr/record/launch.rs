//! Buffers and launches of RR's GPU route (see the module doc of `rr::record`).

use std::collections::HashMap;
use std::sync::Arc;

use crate::gpu::{
    BufferBinding, ComputePipeline, DescriptorArena, GpuBuffer, GpuContext, GpuError, MemoryKind,
    PipelineDesc, Recorder, SpecConstant,
};
use crate::numerics::rr::{act, gates};
use crate::rr::frame::FrameConstants;
use crate::rr::geometry::{self, WINDOW};
use crate::rr::graph::{DType, Epilogue, Graph, Mat, Op, Seed, TensorId, Vector};
use crate::rr::layers::{LayerId, Side};
use crate::rr::reference::Weights;
use crate::rr::weights::RrWeights;

/// Invocations per workgroup of every RR kernel.
const GROUP: u32 = 64;

/// The device buffers of one RR instance.
pub struct Resources {
    /// One per graph tensor (device-local, at least 16 bytes, a multiple of 4).
    pub tensors: Vec<GpuBuffer>,
    mats: HashMap<(LayerId, Mat), usize>,
    vecs: HashMap<(LayerId, Vector), usize>,
    biases: HashMap<LayerId, usize>,
    act: usize,
    exp: usize,
    sigmoid: usize,
    tanh: usize,
    /// Constant buffers (weights and tables) and their bytes until uploaded.
    constants: Vec<GpuBuffer>,
    pending: Vec<Vec<u8>>,
    /// Bound where a kernel reads nothing (`dummy`) or writes nothing (`sink`).
    dummy: GpuBuffer,
    sink: GpuBuffer,
}

fn halves(v: &[u16]) -> Vec<u8> {
    v.iter().flat_map(|h| h.to_le_bytes()).collect()
}

fn padded(bytes: usize) -> u64 {
    (bytes.max(16).div_ceil(4) * 4) as u64
}

impl Resources {
    /// Buffers for every tensor of `graph` and every weight it refers to.
    pub fn new(ctx: &Arc<GpuContext>, graph: &Graph, w: &RrWeights) -> Result<Self, GpuError> {
        let weights =
            Weights::new(w).map_err(|e| GpuError::invalid("rr weights", e.to_string()))?;
        let range = ctx.capabilities().max_storage_buffer_range as u64;
        let mut tensors = Vec::with_capacity(graph.tensors.len());
        for (t, spec) in graph.tensors.iter().enumerate() {
            let bytes = padded(graph.elements(t) * spec.dtype.size());
            if bytes > range {
                return Err(GpuError::invalid(
                    format!("rr tensor `{}`", spec.name),
                    format!("{bytes} bytes exceed maxStorageBufferRange {range}"),
                ));
            }
            tensors.push(GpuBuffer::new(
                ctx,
                &format!("rr {}", spec.name),
                bytes,
                MemoryKind::DeviceLocal,
            )?);
        }
        let mut constants = Vec::new();
        let mut pending = Vec::new();
        let mut add = |name: String, bytes: Vec<u8>| -> Result<usize, GpuError> {
            let buf = GpuBuffer::new(ctx, &name, padded(bytes.len()), MemoryKind::DeviceLocal)?;
            constants.push(buf);
            pending.push(bytes);
            Ok(constants.len() - 1)
        };
        let mut mats = HashMap::new();
        let mut vecs = HashMap::new();
        let mut biases = HashMap::new();
        for node in &graph.nodes {
            let (m, vs): (Option<_>, Vec<_>) = match &node.op {
                Op::Gemm { mat, seed, .. } => (
                    Some(*mat),
                    match seed {
                        Seed::Zero => vec![],
                        Seed::Bias(b) | Seed::Residual { bias: b, .. } => vec![*b],
                    },
                ),
                Op::Merge { mat, bias, .. } | Op::Expand { mat, bias, .. } => {
                    (Some(*mat), vec![*bias])
                }
                Op::Norm { gain, .. } => (None, vec![*gain]),
                Op::Attention { layer, .. } => {
                    if !biases.contains_key(layer) {
                        let all: Vec<u16> = weights
                            .score_biases(*layer)
                            .iter()
                            .flatten()
                            .copied()
                            .collect();
                        let i = add(format!("rr {layer} score biases"), halves(&all))?;
                        biases.insert(*layer, i);
                    }
                    (None, vec![])
                }
                _ => (None, vec![]),
            };
            if let Some(m) = m {
                if let std::collections::hash_map::Entry::Vacant(e) = mats.entry((m.layer, m.mat)) {
                    let (natural, _) = weights
                        .mat(&m)
                        .map_err(|e| GpuError::invalid("rr weights", e.to_string()))?;
                    e.insert(add(
                        format!("rr {} {:?}", m.layer, m.mat),
                        natural.codes.clone(),
                    )?);
                }
            }
            for v in vs {
                if let std::collections::hash_map::Entry::Vacant(e) = vecs.entry((v.layer, v.vec)) {
                    let data = weights
                        .vec(&v)
                        .map_err(|e| GpuError::invalid("rr weights", e.to_string()))?;
                    e.insert(add(format!("rr {} {:?}", v.layer, v.vec), halves(data))?);
                }
            }
        }
        let act = add("rr act table".into(), halves(&act::act_table()[..]))?;
        let exp = add("rr exp table".into(), halves(&gates::exp_table()[..]))?;
        let sigmoid = add(
            "rr sigmoid table".into(),
            halves(&gates::sigmoid_table()[..]),
        )?;
        let tanh_words: Vec<u8> = gates::tanh_table()
            .iter()
            .flat_map(|w| w.to_le_bytes())
            .collect();
        let tanh = add("rr tanh table".into(), tanh_words)?;
        Ok(Resources {
            tensors,
            mats,
            vecs,
            biases,
            act,
            exp,
            sigmoid,
            tanh,
            constants,
            pending,
            dummy: GpuBuffer::new(ctx, "rr unused input", 16, MemoryKind::DeviceLocal)?,
            sink: GpuBuffer::new(ctx, "rr unused output", 16, MemoryKind::DeviceLocal)?,
        })
    }

    /// Record the uploads of the weights and tables (once, before the first frame). Follow with
    /// a transfer -> compute barrier.
    pub fn record_constants(
        &mut self,
        rec: &mut Recorder<'_>,
        batch: &mut crate::gpu::UploadBatch,
    ) -> Result<(), GpuError> {
        for (buf, bytes) in self.constants.iter().zip(&self.pending) {
            batch.upload(rec, buf, 0, bytes)?;
        }
        rec.fill(self.dummy.binding(), 0)?;
        self.pending.iter_mut().for_each(|p| *p = Vec::new());
        Ok(())
    }

    /// [`Resources::record_constants`] in two steps, for an owner that must not fail once it
    /// recorded a command (the NGX feature): stage every upload now (allocations: can fail),
    /// record them later with [`Resources::record_staged`] (cannot fail).
    pub fn stage_constants(&mut self, batch: &mut crate::gpu::UploadBatch) -> Result<(), GpuError> {
        for (buf, bytes) in self.constants.iter().zip(&self.pending) {
            batch.stage(buf, 0, bytes)?;
        }
        self.pending.iter_mut().for_each(|p| *p = Vec::new());
        Ok(())
    }

    /// Record the copies [`Resources::stage_constants`] staged and the unused input's clear.
    pub fn record_staged(&self, rec: &mut Recorder<'_>, batch: &mut crate::gpu::UploadBatch) {
        batch.record(rec);
        rec.zero_words(self.dummy.binding());
    }

    fn t(&self, t: TensorId) -> BufferBinding {
        self.tensors[t].binding()
    }

    fn c(&self, i: usize) -> BufferBinding {
        self.constants[i].binding()
    }

    fn mat(&self, layer: LayerId, m: Mat) -> Result<BufferBinding, GpuError> {
        self.mats
            .get(&(layer, m))
            .map(|&i| self.c(i))
            .ok_or_else(|| GpuError::invalid("rr weights", format!("{layer} {m:?} not loaded")))
    }

    fn vec(&self, layer: LayerId, v: Vector) -> Result<BufferBinding, GpuError> {
        self.vecs
            .get(&(layer, v))
            .map(|&i| self.c(i))
            .ok_or_else(|| GpuError::invalid("rr weights", format!("{layer} {v:?} not loaded")))
    }
}

/// The frame-dependent part of a launch.
#[derive(Clone, Copy, Debug)]
enum Frame {
    /// Push constants and grid fixed at preparation.
    Fixed,
    /// The window attention: the shift (and so the window grid) follows the frame index.
    Attention {
        w: u32,
        h: u32,
        heads: u32,
        side: Side,
    },
    /// The exposure stage: the caller's exposure value, scale and pre-exposure.
    Exposure,
    /// Reprojection and the input features: the fixed words, then jitter and MV scale, then
    /// (`valid`) whether history is usable.
    Stage { valid: bool },
}

/// One kernel launch of an op.
#[derive(Clone, Debug)]
pub struct Launch {
    pipeline: ComputePipeline,
    set: ash::vk::DescriptorSet,
    push: Vec<u32>,
    invocations: u64,
    frame: Frame,
    /// A later launch of the same op needs this one's results (a barrier between them).
    pub then_barrier: bool,
}

/// A grid of `groups` workgroups within `max` (maxComputeWorkGroupCount): along x, continued
/// along y (the kernels' flat index is `y * x_count + x`, and each checks its bound, so the last
/// row's surplus workgroups do nothing). `None` when x * y cannot hold it.
fn split_grid(groups: u64, max: [u32; 3]) -> Option<[u32; 3]> {
    let gx = groups.clamp(1, max[0].max(1) as u64);
    let gy = groups.div_ceil(gx).max(1);
    (gy <= max[1] as u64).then_some([gx as u32, gy as u32, 1])
}

/// [`split_grid`] on the context's device, refused by name when it does not fit.
fn grid(ctx: &GpuContext, groups: u64, what: &str) -> Result<[u32; 3], GpuError> {
    let max = ctx.capabilities().max_compute_work_group_count;
    split_grid(groups, max).ok_or_else(|| {
        GpuError::invalid(
            format!("rr launch `{what}`"),
            format!("{groups} workgroups exceed maxComputeWorkGroupCount {max:?}"),
        )
    })
}

impl Launch {
    /// Record the launch for the frame of `c`.
    pub fn record(
        &self,
        rec: &mut Recorder<'_>,
        c: &FrameConstants,
        label: &str,
    ) -> Result<(), GpuError> {
        let fixed = self.invocations.div_ceil(GROUP as u64);
        let (push, groups) = match self.frame {
            Frame::Fixed => (self.push.clone(), fixed),
            Frame::Exposure => {
                let mut p = self.push.clone();
                p.extend([
                    u32::from(c.exposure_value.is_some()),
                    c.exposure_value.unwrap_or(1.0).to_bits(),
                    c.exposure_scale.to_bits(),
                    c.pre_exposure.to_bits(),
                ]);
                (p, 1)
            }
            Frame::Stage { valid } => {
                let mut p = self.push.clone();
                p.extend([
                    c.jitter[0].to_bits(),
                    c.jitter[1].to_bits(),
                    c.mv_scale[0].to_bits(),
                    c.mv_scale[1].to_bits(),
                ]);
                if valid {
                    p.push(u32::from(c.history_valid));
                }
                (p, fixed)
            }
            Frame::Attention { w, h, heads, side } => {
                let s = geometry::shift(c.frame_index, side);
                let wx = (w + s.x).div_ceil(WINDOW);
                let wy = (h + s.y).div_ceil(WINDOW);
                (
                    vec![w, h, heads, s.x, s.y, wx, wx * wy],
                    (wx * wy * heads) as u64,
                )
            }
        };
        let groups = grid(rec.context(), groups, label)?;
        rec.bind(&self.pipeline, self.set);
        rec.push_words(&push)?;
        rec.dispatch(groups)
    }
}

fn u(v: usize) -> u32 {
    v as u32
}

/// The launches of `graph.nodes[node]` (one, or two for an encoder tail with a next level; the
/// match is exhaustive, so a new op kind needs its kernel here).
pub fn prepare(
    ctx: &Arc<GpuContext>,
    graph: &Graph,
    res: &Resources,
    arena: &mut DescriptorArena,
    node: usize,
) -> Result<Vec<Launch>, GpuError> {
    let op = &graph.nodes[node].op;
    let label = graph.nodes[node].label.as_str();
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
            let rows = graph.rows(*input);
            let x_f16 = graph.tensors[*input].dtype == DType::F16;
            vec![make(
                PipelineDesc::new("rr/norm", 3, 12).with_spec(SpecConstant::bool(0, x_f16)),
                &[res.t(*input), res.vec(gain.layer, gain.vec)?, res.t(*out)],
                vec![u(rows), u(ch(*input)), u32::from(*eps)],
                rows as u64,
                Frame::Fixed,
            )?]
        }
        Op::Gemm {
            input,
            mat,
            seed,
            epilogue,
            out,
        } => {
            let rows = graph.rows(*input);
            let (seed_kind, bias, x) = match seed {
                Seed::Zero => (0, dummy, dummy),
                Seed::Bias(b) => (1, res.vec(b.layer, b.vec)?, dummy),
                Seed::Residual { x, bias } => (
                    if graph.tensors[*x].dtype == DType::F16 {
                        3
                    } else {
                        2
                    },
                    res.vec(bias.layer, bias.vec)?,
                    res.t(*x),
                ),
            };
            check_quads(label, &[mat.n, mat.k])?;
            let epi = match epilogue {
                Epilogue::F16 => 0,
                Epilogue::Q8 => 1,
                Epilogue::Q8Act => 2,
                Epilogue::Q8Relu => 3,
            };
            vec![make(
                gemm_desc(0, seed_kind, epi),
                &[
                    res.t(*input),
                    res.mat(mat.layer, mat.mat)?,
                    bias,
                    x,
                    res.t(*out),
                    res.c(res.act),
                    dummy,
                ],
                vec![u(rows), u(mat.n), u(mat.k), 0, 0, 0],
                (rows * mat.n / 4) as u64,
                Frame::Fixed,
            )?]
        }
        Op::Merge {
            input,
            mat,
            bias,
            out,
        } => {
            let (fine, coarse) = (size(*input), size(*out));
            let rows = coarse.area();
            check_quads(label, &[mat.n, mat.k, ch(*input)])?;
            vec![make(
                gemm_desc(1, 1, 1),
                &[
                    res.t(*input),
                    res.mat(mat.layer, mat.mat)?,
                    res.vec(bias.layer, bias.vec)?,
                    dummy,
                    res.t(*out),
                    dummy,
                    dummy,
                ],
                vec![u(rows), u(mat.n), u(mat.k), u(ch(*input)), fine.w, coarse.w],
                (rows * mat.n / 4) as u64,
                Frame::Fixed,
            )?]
        }
        Op::Expand {
            low,
            mat,
            bias,
            skip,
            out,
        } => {
            let (fine, coarse) = (size(*out), size(*low));
            let rows = coarse.area();
            check_quads(label, &[mat.n, mat.k, ch(*out)])?;
            vec![make(
                gemm_desc(0, 1, 4),
                &[
                    res.t(*low),
                    res.mat(mat.layer, mat.mat)?,
                    res.vec(bias.layer, bias.vec)?,
                    dummy,
                    res.t(*out),
                    dummy,
                    res.t(*skip),
                ],
                vec![u(rows), u(mat.n), u(mat.k), u(ch(*out)), fine.w, coarse.w],
                (rows * mat.n / 4) as u64,
                Frame::Fixed,
            )?]
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
            vec![make(
                PipelineDesc::new("rr/attention", 4, 28),
                &[res.t(*ut), res.t(*v), bias, res.t(*out)],
                Vec::new(),
                0,
                Frame::Attention {
                    w: s.w,
                    h: s.h,
                    heads: u(*heads),
                    side: *side,
                },
            )?]
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
            let mut v = vec![make(
                PipelineDesc::new("rr/encoder_tail", 6, 12).with_spec(SpecConstant::bool(0, split)),
                &[
                    res.t(*logits),
                    res.t(*image),
                    res.t(*out112),
                    out120.map_or(res.sink.binding(), |t| res.t(t)),
                    res.c(res.exp),
                    res.c(res.sigmoid),
                ],
                vec![s.w, s.h, u(ch(*logits))],
                s.area() as u64,
                Frame::Fixed,
            )?];
            if let Some(o128) = out128 {
                let c = size(*o128);
                let mut q = make(
                    PipelineDesc::new("rr/quad", 2, 12),
                    &[res.t(*out112), res.t(*o128)],
                    vec![c.w, c.h, s.w],
                    c.area() as u64,
                    Frame::Fixed,
                )?;
                q.then_barrier = true;
                v.push(q);
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
            vec![make(
                PipelineDesc::new("rr/decoder_tail", 7, 20),
                &[
                    res.t(*logits),
                    res.t(*coarse),
                    res.t(*low),
                    res.t(*detail),
                    res.t(*out),
                    res.c(res.exp),
                    res.c(res.sigmoid),
                ],
                vec![s.w, s.h, u(ch(*logits)), c.w, c.h],
                s.area() as u64,
                Frame::Fixed,
            )?]
        }
        Op::Dec0Outputs { x2, out48, out144 } => {
            let rows = graph.rows(*x2);
            vec![make(
                PipelineDesc::new("rr/dec0_outputs", 4, 8),
                &[res.t(*x2), res.t(*out48), res.t(*out144), res.c(res.tanh)],
                vec![u(rows), u(ch(*x2))],
                rows as u64,
                Frame::Fixed,
            )?]
        }
        Op::Exposure { color, out } => {
            let px = graph.rows(*color);
            vec![make(
                PipelineDesc::new("rr/exposure", 2, 20),
                &[res.t(*color), res.t(*out)],
                vec![u(px)],
                GROUP as u64,
                Frame::Exposure,
            )?]
        }
        Op::Reproject {
            history,
            guides,
            exposure,
            out,
        } => {
            let (r, o) = (graph.geometry.render, graph.geometry.output);
            vec![make(
                PipelineDesc::new("rr/reproject", 4, 36),
                &[
                    res.t(*history),
                    res.t(*guides),
                    res.t(*exposure),
                    res.t(*out),
                ],
                vec![r.w, r.h, o.w, o.h],
                r.area() as u64,
                Frame::Stage { valid: true },
            )?]
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
            vec![make(
                PipelineDesc::new("rr/features", 6, 32)
                    .with_spec(SpecConstant::bool(0, *depth_of_field)),
                &[
                    res.t(*color),
                    res.t(*guides),
                    res.t(*history),
                    res.t(*exposure),
                    res.t(*features),
                    res.t(*colour),
                ],
                vec![r.w, r.h, l.w, l.h],
                l.area() as u64,
                Frame::Stage { valid: false },
            )?]
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
            vec![make(
                PipelineDesc::new("rr/output", 10, 40),
                &[
                    res.t(*image),
                    res.t(*codes),
                    res.t(*kernel),
                    res.t(*history),
                    res.t(*guides),
                    res.t(*color),
                    res.t(*exposure),
                    res.t(*out),
                    res.t(*alpha),
                    res.c(res.sigmoid),
                ],
                vec![r.w, r.h, o.w, o.h, l.w],
                o.area() as u64,
                Frame::Stage { valid: true },
            )?]
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

#[cfg(test)]
mod tests {
    use super::split_grid;

    #[test]
    fn grids_continue_along_y_and_refuse_what_cannot_fit() {
        let max = [65_535, 65_535, 65_535];
        assert_eq!(split_grid(0, max), Some([1, 1, 1]));
        assert_eq!(split_grid(1, max), Some([1, 1, 1]));
        assert_eq!(split_grid(65_535, max), Some([65_535, 1, 1]));
        assert_eq!(split_grid(65_536, max), Some([65_535, 2, 1]));
        // 3840x2160 output pixels in workgroups of 64.
        let g = split_grid(129_600, max).unwrap();
        assert!(g[0] as u64 * g[1] as u64 >= 129_600 && g[1] == 2);
        assert_eq!(split_grid(65_535 * 65_535, max), Some([65_535, 65_535, 1]));
        assert_eq!(split_grid(65_535 * 65_535 + 1, max), None);
        assert_eq!(split_grid(10, [4, 2, 1]), None);
        assert_eq!(split_grid(8, [4, 2, 1]), Some([4, 2, 1]));
    }
}
