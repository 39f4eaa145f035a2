//! Whole frames on a tool-owned device, for `parity --route gpu`: the NGX feature's frame
//! (`nr::gpu_frame::GpuFrame`, the same type the feature records) with uploads and readbacks in
//! place of the caller's images. A frame records prepare -> network -> compose (a disabled frame
//! only compose). The temporal decisions (seed, history use, slots) are made by the caller with
//! `nr::frame::FrameState`, the rules the feature's `FrameDriver` follows. Only the image
//! bridges (`import`/`export`, format conversions tested in `tests/gpu_frame.rs`) are left out:
//! the fixture's proxy and motion are f32 already, and the output is read as the f16 halves the
//! export would write.

use openngx::gpu::{GpuBuffer, MemoryKind, Recorder, UploadBatch};
use openngx::model::Model;
use openngx::nr::frame::FrameConstants;
use openngx::nr::gpu_frame::{FrameBuffers, GpuFrame};
use openngx::nr::graph::Graph;
use openngx::nr::record::network::{Keep, NetworkOptions};
use openngx::nr::record::passes::{FEATURE_ROW_BYTES, HISTORY_TEXEL_BYTES};
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

/// Readback copies of what a frame produced.
struct Readbacks {
    output: GpuBuffer,
    features: GpuBuffer,
}

/// The feature's frame on a tool-owned device (see the module documentation). Field order is
/// drop order: the device (in `gpu`) goes last.
pub struct GpuFrames {
    rb: Readbacks,
    pub gpu: GpuNet<GpuFrame>,
}

fn bytes_of<const N: usize>(v: &[[f32; N]]) -> Vec<u8> {
    v.iter().flatten().flat_map(|x| x.to_le_bytes()).collect()
}

impl GpuFrames {
    /// Open the device and build the network (boundaries and head kept and read back) and the
    /// frame around it.
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
        let (width, height) = (graph.geometry.valid.w, graph.geometry.valid.h);
        let pixels = u64::from(width) * u64::from(height);
        let field_rows = graph.rows(graph.features) as u64;
        let gpu = GpuNet::open(model, graph, device, opts)?.map(|ctx, net| {
            let buffers =
                FrameBuffers::new(ctx, width, height).map_err(|e| format!("frame buffers: {e}"))?;
            GpuFrame::new(ctx, buffers, net).map_err(|e| format!("frame passes: {e}"))
        })?;
        let buf = |name: &str, size: u64| {
            GpuBuffer::new(gpu.ctx(), name, size, MemoryKind::Readback)
                .map_err(|e| format!("{name}: {e}"))
        };
        let rb = Readbacks {
            output: buf("output readback", pixels * HISTORY_TEXEL_BYTES)?,
            features: buf("features readback", field_rows * FEATURE_ROW_BYTES)?,
        };
        Ok(GpuFrames { rb, gpu })
    }

    /// Record one frame, submit it, wait and read back what it produced.
    pub fn run(&mut self, f: &FrameIn) -> Result<FrameOut, String> {
        let enabled = f.constants.is_none_or(|c| c.enabled != 0);
        let slot = f.read_slot.min(1);
        let rb = &self.rb;
        let out_bytes = rb.output.size();
        let feat_bytes = rb.features.size();
        let e = |e: openngx::gpu::GpuError| e.to_string();
        // Before the network: the inputs, then prepare (or the given features).
        let first = |frame: &mut GpuFrame, rec: &mut Recorder<'_>, batch: &mut UploadBatch| {
            if let Some(c) = &f.constants {
                let bufs = frame.buffers();
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
                    frame.record_prepare(rec, c, slot).map_err(e)?;
                }
            }
            if enabled {
                let net = frame.network_mut();
                match f.features {
                    Some(feats) => net
                        .upload_features(rec, batch, feats)
                        .map_err(|e| e.to_string())?,
                    None => {
                        // The prepared features as the network reads them (their memory is
                        // reused later in the frame).
                        rec.compute_to_transfer();
                        let src = net.tensor(net.graph().features);
                        rec.copy(src, rb.features.binding(), feat_bytes)
                            .map_err(e)?;
                    }
                }
            }
            Ok(())
        };
        // After it: compose and the output's readback.
        let last = |frame: &mut GpuFrame, rec: &mut Recorder<'_>, _: &mut UploadBatch| {
            if let Some(c) = &f.constants {
                frame.record_compose(rec, c, slot).map_err(e)?;
                rec.compute_to_transfer();
                let output = frame.buffers().output.binding();
                rec.copy(output, rb.output.binding(), out_bytes)
                    .map_err(e)?;
            }
            rec.to_host();
            Ok(())
        };
        if enabled {
            let nodes = self.gpu.net.network().graph().nodes.len();
            self.gpu.run_nodes(nodes, "GPU frame", first, last)?;
        } else {
            self.gpu.submit("the frame", |frame, rec, batch| {
                first(frame, rec, batch)?;
                last(frame, rec, batch)
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
                    rb.features.read(0, &mut v).map_err(read_err)?;
                    Some(openngx_tools::fixture::bytes_to_f32(&v))
                }
            };
            let net = self.gpu.net.network();
            for (name, t) in &net.graph().boundaries {
                let bytes = net.read_tensor(*t).map_err(read_err)?;
                out.boundaries.push((name.clone(), bytes));
            }
            out.head = Some(net.read_head().map_err(read_err)?);
        }
        if f.constants.is_some() {
            let mut v = vec![0u8; out_bytes as usize];
            rb.output.read(0, &mut v).map_err(read_err)?;
            out.output = Some(
                v.chunks_exact(8)
                    .map(|p| [0, 2, 4, 6].map(|i| u16::from_le_bytes([p[i], p[i + 1]])))
                    .collect(),
            );
        }
        Ok(out)
    }
}
