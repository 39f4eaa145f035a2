//! RR's exact GPU route (`rr::gpu_frame::GpuFrame`) as the tools run it (`bench --feature rr`,
//! `parity --feature rr`, `verify --feature rr`): a device the tool owns ([`StandaloneDevice`]),
//! one instance, whole frames with their temporal state, GPU timestamps per layer (consecutive
//! ops of one layer, the frame stages by label) and the published tensors (or any tensors, with
//! the constants the frame ran with) read back.
//!
//! The temporal state is the tool's own [`Temporal`] (the rule the CPU frame and
//! `GpuFrame::record_frame` share), because timing a frame records it in groups of nodes.

use std::ops::Range;

use openngx::gpu::{GpuBuffer, MemoryKind, StageTime, TimestampPool, UploadBatch};
use openngx::rr::frame::temporal::{FrameParams, Temporal};
use openngx::rr::frame::FrameConstants;
use openngx::rr::geometry::Geometry;
use openngx::rr::gpu_frame::GpuFrame;
use openngx::rr::graph::{Graph, TensorId};
use openngx::rr::preset::Preset;
use openngx::rr::weights::RrWeights;

use crate::standalone::StandaloneDevice;

/// What one frame gave back.
pub struct RrFrameOut {
    /// The published tensors' bytes in graph order (empty unless asked for): every one when
    /// every tensor is kept, else those the shared arena keeps after a frame (output, alpha).
    pub published: Vec<(String, Vec<u8>)>,
    /// GPU time per layer / stage in graph order (empty without timestamps).
    pub timings: Vec<StageTime>,
}

/// One RR instance on a device the tool owns. Field order is drop order: everything on the
/// device before the device.
pub struct RrGpu {
    pool: Option<TimestampPool>,
    frame: GpuFrame,
    dev: StandaloneDevice,
    temporal: Temporal,
    /// Consecutive nodes of one layer (or one frame stage), labelled.
    groups: Vec<(String, Range<usize>)>,
    /// Whether every tensor keeps a buffer of its own (so the published ones can be read).
    keep_all: bool,
}

impl RrGpu {
    /// Open device `device` (the first suitable one when `None`) and prepare the route at
    /// `geometry`; `keep_all` gives every tensor a buffer of its own (needed to read the
    /// published tensors back; the production layout shares one arena), `timestamps` times the
    /// layers (`None` in `timestamps_available` when the device has none).
    pub fn open(
        device: Option<usize>,
        weights: &RrWeights,
        geometry: Geometry,
        preset: Preset,
        keep_all: bool,
        timestamps: bool,
    ) -> Result<Self, String> {
        let dev = StandaloneDevice::open_with(device, false).map_err(|e| e.to_string())?;
        let ctx = dev.context().clone();
        let mut frame = if keep_all {
            GpuFrame::keeping_every_tensor(&ctx, weights, geometry, preset)
        } else {
            GpuFrame::new(&ctx, weights, geometry, preset)
        }
        .map_err(|e| e.to_string())?;
        let mut groups: Vec<(String, Range<usize>)> = Vec::new();
        for (i, n) in frame.graph().nodes.iter().enumerate() {
            let name = n.layer.map_or_else(|| n.label.clone(), |l| l.to_string());
            match groups.last_mut() {
                Some((g, r)) if *g == name => r.end = i + 1,
                _ => groups.push((name, i..i + 1)),
            }
        }
        let pool = if timestamps {
            TimestampPool::new(&ctx, groups.len() as u32 + 1).map_err(|e| e.to_string())?
        } else {
            None
        };
        let mut batch = UploadBatch::new(&ctx);
        let history = frame.graph().history;
        let zeros = vec![0u8; geometry.output.area() * 8];
        dev.submit(|rec| {
            frame.record_setup(rec, &mut batch)?;
            // The first frame's history: zeros, as the CPU frame starts.
            frame.upload(rec, &mut batch, history, &zeros)?;
            rec.transfer_to_compute();
            Ok(())
        })
        .map_err(|e| e.to_string())?;
        batch.release();
        Ok(RrGpu {
            pool,
            frame,
            dev,
            temporal: Temporal::default(),
            groups,
            keep_all,
        })
    }

    /// The device's name.
    pub fn device_name(&self) -> String {
        self.dev.capabilities.device_name.clone()
    }

    /// Whether the layers are timed.
    pub fn timed(&self) -> bool {
        self.pool.is_some()
    }

    /// Device bytes of the tensors.
    pub fn tensor_memory(&self) -> u64 {
        self.frame.tensor_memory()
    }

    /// The graph the instance runs.
    pub fn graph(&self) -> &Graph {
        self.frame.graph()
    }

    /// Run one frame on `color` `[render][4]` and `guides` `[render][16]` (f32): every tensor
    /// the graph writes is poisoned first (so an unwritten byte shows), then the frame is
    /// recorded layer by layer with timestamps, its output kept as the next history; with
    /// `read` the published tensors are read back (every one with `keep_all`; in the shared
    /// arena only the output and its alpha survive the frame).
    pub fn run_frame(
        &mut self,
        params: &FrameParams,
        color: &[f32],
        guides: &[f32],
        read: bool,
    ) -> Result<RrFrameOut, String> {
        let graph = self.frame.graph();
        let kept = [graph.output, graph.alpha];
        let published: Vec<(String, TensorId)> = graph
            .published
            .iter()
            .filter(|(_, t)| read && (self.keep_all || kept.contains(t)))
            .cloned()
            .collect();
        let ids: Vec<TensorId> = published.iter().map(|p| p.1).collect();
        let ran = self.run(params, color, guides, &ids, None)?;
        Ok(RrFrameOut {
            published: published
                .into_iter()
                .map(|p| p.0)
                .zip(ran.tensors)
                .collect(),
            timings: ran.timings,
        })
    }

    /// [`RrGpu::run_frame`] reading back `read` (any tensors; the instance must keep every
    /// tensor unless they are the output and alpha) in that order, and recording only ops
    /// `..ops` minus `skip` (a test hook: the skipped op's outputs stay poisoned, a fault a
    /// comparison must find). The history copy follows the last op only when every op ran; the
    /// history read back is the one the frame read (the previous frame's output).
    pub fn run(
        &mut self,
        params: &FrameParams,
        color: &[f32],
        guides: &[f32],
        read: &[TensorId],
        ops: Option<(usize, Option<usize>)>,
    ) -> Result<RrRun, String> {
        let graph = self.frame.graph().clone();
        let ctx = self.dev.context().clone();
        let lens: Vec<u64> = read
            .iter()
            .map(|&t| Ok(self.frame.tensor(t)?.range))
            .collect::<Result<_, openngx::gpu::GpuError>>()
            .map_err(|e| e.to_string())?;
        let mut offsets = Vec::with_capacity(lens.len());
        let mut total = 0u64;
        for len in &lens {
            offsets.push(total);
            total += len.div_ceil(4) * 4;
        }
        let readback = if read.is_empty() {
            None
        } else {
            Some(
                GpuBuffer::new(&ctx, "rr readback", total.max(4), MemoryKind::Readback)
                    .map_err(|e| e.to_string())?,
            )
        };
        let (end, skip) = ops.unwrap_or((graph.nodes.len(), None));
        let end = end.min(graph.nodes.len());
        // The recorded ranges: each group cut at `end` and around `skip`.
        let mut ranges: Vec<(String, Range<usize>)> = Vec::new();
        for (name, r) in &self.groups {
            let r = r.start..r.end.min(end);
            match skip {
                Some(s) if r.contains(&s) => {
                    ranges.push((name.clone(), r.start..s));
                    ranges.push((name.clone(), s + 1..r.end));
                }
                _ => ranges.push((name.clone(), r)),
            }
        }
        let whole = end == graph.nodes.len() && skip.is_none();
        let constants = self.temporal.constants(params);
        let f32s = |v: &[f32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
        let (color, guides) = (f32s(color), f32s(guides));
        let mut batch = UploadBatch::new(&ctx);
        let (frame, pool) = (&self.frame, &mut self.pool);
        self.dev
            .submit(|rec| {
                frame.poison(rec, 0xA5A5_A5A5)?;
                frame.upload(rec, &mut batch, graph.color, &color)?;
                frame.upload(rec, &mut batch, graph.guides, &guides)?;
                // The history is read back before the ops (it holds the previous frame's
                // output only until the frame's end copies this one's over it); the barrier
                // below orders this read before that write.
                if let Some(rb) = &readback {
                    for ((&t, &len), &off) in read.iter().zip(&lens).zip(&offsets) {
                        if t == graph.history {
                            rec.copy(frame.tensor(t)?, rb.range(off, len)?, len)?;
                        }
                    }
                }
                rec.transfer_to_compute();
                if let Some(pool) = pool.as_mut() {
                    pool.reset(rec);
                    pool.mark(rec, "start")?;
                }
                for (name, r) in &ranges {
                    if r.is_empty() {
                        continue;
                    }
                    frame.record(rec, &constants, r.clone())?;
                    if let Some(pool) = pool.as_mut() {
                        pool.mark(rec, name)?;
                    }
                }
                if whole {
                    frame.record_keep_history(rec)?;
                }
                if let Some(rb) = &readback {
                    rec.compute_to_transfer();
                    for ((&t, &len), &off) in read.iter().zip(&lens).zip(&offsets) {
                        if t != graph.history {
                            rec.copy(frame.tensor(t)?, rb.range(off, len)?, len)?;
                        }
                    }
                    rec.to_host();
                }
                Ok(())
            })
            .map_err(|e| e.to_string())?;
        batch.release();
        self.temporal.advance();
        let timings = match &self.pool {
            Some(p) => p.read().map_err(|e| e.to_string())?.unwrap_or_default(),
            None => Vec::new(),
        };
        let mut tensors = Vec::with_capacity(read.len());
        if let Some(rb) = &readback {
            let bytes = rb.read_all().map_err(|e| e.to_string())?;
            let mut off = 0usize;
            for len in lens {
                tensors.push(bytes[off..off + len as usize].to_vec());
                off += (len.div_ceil(4) * 4) as usize;
            }
        }
        Ok(RrRun {
            tensors,
            timings,
            constants,
        })
    }
}

/// What [`RrGpu::run`] gave back.
pub struct RrRun {
    /// The bytes of each tensor asked for, in the order asked.
    pub tensors: Vec<Vec<u8>>,
    /// GPU time per layer / stage in graph order (empty without timestamps).
    pub timings: Vec<StageTime>,
    /// The constants the frame ran with (the CPU reference needs the same).
    pub constants: FrameConstants,
}

/// `d`/`e` (either case) as a preset.
pub fn parse_preset(s: &str) -> Result<Preset, String> {
    match s {
        "d" | "D" => Ok(Preset::D),
        "e" | "E" => Ok(Preset::E),
        other => Err(format!("unknown preset `{other}` (d, e)")),
    }
}

/// Each published tensor's verdict against `want`: `None` when byte-exact, else a line saying
/// how many bytes differ and where the first is.
pub fn compare(name: &str, got: &[u8], want: &[u8]) -> Option<String> {
    if got == want {
        return None;
    }
    if got.len() != want.len() {
        return Some(format!(
            "{name}: {} bytes, the reference has {}",
            got.len(),
            want.len()
        ));
    }
    let bad = got.iter().zip(want).filter(|(a, b)| a != b).count();
    let first = got.iter().zip(want).position(|(a, b)| a != b).unwrap_or(0);
    Some(format!(
        "{name}: {bad} of {} bytes differ, first at byte {first}",
        want.len()
    ))
}
