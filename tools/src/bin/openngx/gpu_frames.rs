//! Whole frames on a tool-owned device, for `parity --route gpu`: the NGX feature's frame path
//! (`nr::feature::NrFeature`) with buffers in place of the caller's images. The proxy and
//! motion buffers, the two ping-pong history buffers and the output are bound to the prepare and
//! compose passes of both history slots and to the network's features and head, exactly as the
//! feature binds them; a frame records prepare -> network -> compose (a disabled frame only
//! compose) in the feature's order. The temporal decisions (seed, history use, slots) are made by
//! the caller with `nr::frame::FrameState`, the rules the feature's `FrameDriver` follows. Only
//! the image bridges (`import`/`export`, format conversions tested in `tests/gpu_frame.rs`) are
//! left out: the fixture's proxy and motion are f32 already, and the output is read as the f16
//! halves the export would write.

use std::sync::Arc;

use openngx::gpu::{DescriptorArena, GpuBuffer, MemoryKind, Recorder, UploadBatch};
use openngx::model::Model;
use openngx::nr::frame::FrameConstants;
use openngx::nr::graph::Graph;
use openngx::nr::record::network::{Keep, NetworkOptions, NetworkRecorder};
use openngx::nr::record::passes::{
    ComposeBindings, ComposePass, PrepareBindings, PreparePass, FEATURE_ROW_BYTES,
    HISTORY_TEXEL_BYTES, MOTION_TEXEL_BYTES, PROXY_TEXEL_BYTES,
};
use openngx::numerics::f16::F16;
use openngx::numerics::Profiles;

use crate::gpu_net::GpuNet;

/// One frame to run.
pub struct FrameIn<'a> {
    /// The kernels' constants (`None`: no proxy, the network alone on `features`).
    pub constants: Option<FrameConstants>,
    /// The history slot this frame reads (the other one is written).
    pub read_slot: usize,
    /// RGBA f32, valid size.
    pub proxy: &'a [[f32; 4]],
    /// RG f32 pixels, valid size.
    pub motion: Option<&'a [[f32; 2]]>,
    /// Network input to use instead of the prepare pass (a fixture's `inputFeatures`).
    pub features: Option<&'a [f32]>,
}

/// What a frame produced.
#[derive(Clone, Debug, PartialEq)]
pub struct FrameOut {
    /// The network input (`None` for a disabled frame).
    pub features: Option<Vec<f32>>,
    /// The 75 boundaries (empty for a disabled frame).
    pub boundaries: Vec<(String, Vec<u8>)>,
    /// The head, f32 `[field rows][4]` (`None` for a disabled frame).
    pub head: Option<Vec<f32>>,
    /// The composed output, RGBA halves, valid size (`None` without a proxy).
    pub output: Option<Vec<[F16; 4]>>,
}

/// The device buffers of the frame (valid size) and their readback copies.
struct Buffers {
    proxy: GpuBuffer,
    motion: GpuBuffer,
    history: [GpuBuffer; 2],
    output: GpuBuffer,
    output_rb: GpuBuffer,
    features_rb: GpuBuffer,
}

/// The feature's frame path (see the module documentation). Field order is drop order: the
/// device (in `gpu`) goes last.
pub struct GpuFrames {
    prepare: [PreparePass; 2],
    compose: [ComposePass; 2],
    _arena: DescriptorArena,
    bufs: Buffers,
    pub gpu: GpuNet,
}

fn bytes_of<const N: usize>(v: &[[f32; N]]) -> Vec<u8> {
    v.iter().flatten().flat_map(|x| x.to_le_bytes()).collect()
}

impl GpuFrames {
    /// Open the device and build the network (boundaries and head kept and read back) and the
    /// frame passes of `graph`.
    pub fn new(
        model: &Model,
        graph: Graph,
        profiles: Profiles,
        device: Option<usize>,
    ) -> Result<GpuFrames, String> {
        let opts = NetworkOptions {
            profiles,
            keep: Keep::Boundaries,
            readback: true,
            timestamps: false,
            ..NetworkOptions::default()
        };
        let pixels = graph.geometry.valid.w as u64 * graph.geometry.valid.h as u64;
        let field_rows = graph.rows(graph.features) as u64;
        let gpu = GpuNet::open(model, graph, device, opts)?;
        let ctx = Arc::clone(gpu.ctx());
        let buf = |name: &str, size: u64, kind: MemoryKind| {
            GpuBuffer::new(&ctx, name, size, kind).map_err(|e| format!("{name}: {e}"))
        };
        let dl = MemoryKind::DeviceLocal;
        let bufs = Buffers {
            proxy: buf("proxy", pixels * PROXY_TEXEL_BYTES, dl)?,
            motion: buf("motion", pixels * MOTION_TEXEL_BYTES, dl)?,
            history: [
                buf("history 0", pixels * HISTORY_TEXEL_BYTES, dl)?,
                buf("history 1", pixels * HISTORY_TEXEL_BYTES, dl)?,
            ],
            output: buf("output", pixels * HISTORY_TEXEL_BYTES, dl)?,
            output_rb: buf(
                "output readback",
                pixels * HISTORY_TEXEL_BYTES,
                MemoryKind::Readback,
            )?,
            features_rb: buf(
                "features readback",
                field_rows * FEATURE_ROW_BYTES,
                MemoryKind::Readback,
            )?,
        };
        let mut arena = DescriptorArena::new(&ctx, 4, 20).map_err(|e| e.to_string())?;
        let (features, head) = (
            gpu.net.tensor(gpu.net.graph().features),
            gpu.net.tensor(gpu.net.graph().head),
        );
        let b = &bufs;
        let mut pass = |read: usize| -> Result<(PreparePass, ComposePass), String> {
            let p = PreparePass::new(
                &ctx,
                &mut arena,
                &PrepareBindings {
                    proxy: b.proxy.binding(),
                    motion: Some(b.motion.binding()),
                    history: Some(b.history[read].binding()),
                    features,
                },
            );
            let c = ComposePass::new(
                &ctx,
                &mut arena,
                &ComposeBindings {
                    proxy: b.proxy.binding(),
                    motion: Some(b.motion.binding()),
                    history: Some(b.history[read].binding()),
                    head,
                    output: b.output.binding(),
                    next_history: b.history[1 - read].binding(),
                },
            );
            Ok((
                p.map_err(|e| format!("prepare pass: {e}"))?,
                c.map_err(|e| format!("compose pass: {e}"))?,
            ))
        };
        let (p0, c0) = pass(0)?;
        let (p1, c1) = pass(1)?;
        Ok(GpuFrames {
            prepare: [p0, p1],
            compose: [c0, c1],
            _arena: arena,
            bufs,
            gpu,
        })
    }

    /// Record one frame, submit it, wait and read back what it produced.
    pub fn run(&mut self, f: &FrameIn) -> Result<FrameOut, String> {
        let enabled = f.constants.is_none_or(|c| c.enabled != 0);
        let slot = f.read_slot.min(1);
        let (bufs, prepare, compose) = (&self.bufs, &self.prepare[slot], &self.compose[slot]);
        let out_bytes = bufs.output.size();
        let feat_bytes = bufs.features_rb.size();
        let e = |e: openngx::gpu::GpuError| e.to_string();
        // Before the network: the inputs, then prepare (or the given features).
        let first = |net: &mut NetworkRecorder, rec: &mut Recorder<'_>, batch: &mut UploadBatch| {
            if let Some(c) = &f.constants {
                batch
                    .upload(rec, &bufs.proxy, 0, &bytes_of(f.proxy))
                    .map_err(e)?;
                if let Some(m) = f.motion {
                    batch
                        .upload(rec, &bufs.motion, 0, &bytes_of(m))
                        .map_err(e)?;
                }
                rec.transfer_to_compute();
                if enabled && f.features.is_none() {
                    prepare.record(rec, c).map_err(e)?;
                }
            }
            if enabled {
                match f.features {
                    Some(feats) => net
                        .upload_features(rec, batch, feats)
                        .map_err(|e| e.to_string())?,
                    None => {
                        // The prepared features as the network reads them (their memory is
                        // reused later in the frame).
                        rec.compute_to_transfer();
                        let src = net.tensor(net.graph().features);
                        rec.copy(src, bufs.features_rb.binding(), feat_bytes)
                            .map_err(e)?;
                    }
                }
            }
            Ok(())
        };
        // After it: compose and the output's readback.
        let last = |_: &mut NetworkRecorder, rec: &mut Recorder<'_>, _: &mut UploadBatch| {
            if let Some(c) = &f.constants {
                compose.record(rec, c).map_err(e)?;
                rec.compute_to_transfer();
                rec.copy(bufs.output.binding(), bufs.output_rb.binding(), out_bytes)
                    .map_err(e)?;
            }
            rec.to_host();
            Ok(())
        };
        if enabled {
            let nodes = self.gpu.net.graph().nodes.len();
            self.gpu.run_nodes(nodes, "GPU frame", first, last)?;
        } else {
            self.gpu.submit("the frame", |net, rec, batch| {
                first(net, rec, batch)?;
                last(net, rec, batch)
            })?;
        }

        let read_err = |e: openngx::gpu::GpuError| format!("reading back: {e}");
        let mut out = FrameOut {
            features: None,
            boundaries: Vec::new(),
            head: None,
            output: None,
        };
        if enabled {
            out.features = match f.features {
                Some(given) => Some(given.to_vec()),
                None => {
                    let mut v = vec![0u8; feat_bytes as usize];
                    bufs.features_rb.read(0, &mut v).map_err(read_err)?;
                    Some(openngx_tools::fixture::bytes_to_f32(&v))
                }
            };
            let g = self.gpu.net.graph();
            for (name, t) in &g.boundaries {
                let bytes = self.gpu.net.read_tensor(*t).map_err(read_err)?;
                out.boundaries.push((name.clone(), bytes));
            }
            out.head = Some(self.gpu.net.read_head().map_err(read_err)?);
        }
        if f.constants.is_some() {
            let mut v = vec![0u8; out_bytes as usize];
            bufs.output_rb.read(0, &mut v).map_err(read_err)?;
            out.output = Some(
                v.chunks_exact(8)
                    .map(|p| [0, 2, 4, 6].map(|i| u16::from_le_bytes([p[i], p[i + 1]])))
                    .collect(),
            );
        }
        Ok(out)
    }
}
