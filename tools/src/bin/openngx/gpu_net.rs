//! The network on a device the tool owns, shared by `bench`, `parity --route gpu` and `verify`:
//! open the device, put the model's weights on it, build a [`NetworkRecorder`], record + submit +
//! wait with an upload batch, and the deterministic synthetic features of `bench`/`verify`.
//! A [`GpuNet`] runs the network alone or a whole frame around it ([`GpuNet::map`] into an
//! `nr::gpu_frame::GpuFrame`, what `gpu_frames` does).
//! Errors become strings that say which step failed (the tools print them and exit).

use std::sync::Arc;
use std::time::Instant;

use crate::standalone::StandaloneDevice;
use openngx::gpu::{GpuContext, GpuError, Recorder, UploadBatch};
use openngx::model::Model;
use openngx::nr::gpu_frame::GpuFrame;
use openngx::nr::graph::Graph;
use openngx::nr::record::network::{NetworkOptions, NetworkRecorder};
use openngx::nr::record::GpuWeights;
use openngx::numerics::f16;

/// What a [`GpuNet`] runs: the network alone or a frame that holds it.
pub trait HoldsNetwork {
    fn network(&self) -> &NetworkRecorder;
    fn network_mut(&mut self) -> &mut NetworkRecorder;
}

impl HoldsNetwork for NetworkRecorder {
    fn network(&self) -> &NetworkRecorder {
        self
    }
    fn network_mut(&mut self) -> &mut NetworkRecorder {
        self
    }
}

impl HoldsNetwork for GpuFrame {
    fn network(&self) -> &NetworkRecorder {
        GpuFrame::network(self)
    }
    fn network_mut(&mut self) -> &mut NetworkRecorder {
        GpuFrame::network_mut(self)
    }
}

/// A tool-owned device with the network of one geometry on it (in `net`: the recorder itself,
/// or a frame around it). Field order is drop order: everything that lives on the device goes
/// before it.
pub struct GpuNet<N = NetworkRecorder> {
    pub net: N,
    pub weights: Arc<GpuWeights>,
    pub dev: StandaloneDevice,
}

impl GpuNet {
    /// Open device `device` (see [`StandaloneDevice::open_with`]), upload `model` and build the
    /// recorder of `graph`.
    pub fn open(
        model: &Model,
        graph: Graph,
        device: Option<usize>,
        opts: NetworkOptions,
    ) -> Result<GpuNet, String> {
        Self::open_with(model, graph, device, opts, false)
    }

    /// [`GpuNet::open`]; with `statistics` the driver's pipeline statistics are captured where
    /// the device offers them ([`StandaloneDevice::open_with`]).
    pub fn open_with(
        model: &Model,
        graph: Graph,
        device: Option<usize>,
        opts: NetworkOptions,
        statistics: bool,
    ) -> Result<GpuNet, String> {
        let dev =
            StandaloneDevice::open_with(device, statistics).map_err(|e| format!("device: {e}"))?;
        let ctx = Arc::clone(dev.context());
        let mut batch = UploadBatch::new(&ctx);
        let weights = dev
            .submit(|rec| {
                GpuWeights::shared(&ctx, model, rec, &mut batch)
                    .map_err(|e| GpuError::invalid("weights", e.to_string()))
            })
            .map_err(|e| format!("uploading the weights: {e}"))?;
        batch.release();
        let net = NetworkRecorder::new(&ctx, graph, Arc::clone(&weights), opts)
            .map_err(|e| format!("building the network: {e}"))?;
        Ok(GpuNet { net, weights, dev })
    }

    /// Upload f32 features `[field rows][16]` into the network's input tensor.
    pub fn upload_features(&mut self, features: &[f32]) -> Result<(), String> {
        self.submit("uploading the features", |net, rec, batch| {
            net.upload_features(rec, batch, features)
                .map_err(|e| e.to_string())
        })
    }
}

impl<N: HoldsNetwork> GpuNet<N> {
    /// Wrap the network into what `f` builds around it on this device (a frame).
    pub fn map<M>(
        self,
        f: impl FnOnce(&Arc<GpuContext>, N) -> Result<M, String>,
    ) -> Result<GpuNet<M>, String> {
        let GpuNet { net, weights, dev } = self;
        match f(dev.context(), net) {
            Ok(net) => Ok(GpuNet { net, weights, dev }),
            Err(e) => {
                // The weights live on the device: they go first.
                drop(weights);
                drop(dev);
                Err(e)
            }
        }
    }

    pub fn ctx(&self) -> &Arc<GpuContext> {
        self.dev.context()
    }

    pub fn device_name(&self) -> &str {
        &self.dev.capabilities.device_name
    }

    /// Record with `f` (the recorder, the command buffer, an upload batch freed after the
    /// submission) into a fresh command buffer, submit it and wait.
    pub fn submit<R>(
        &mut self,
        what: &str,
        f: impl FnOnce(&mut N, &mut Recorder<'_>, &mut UploadBatch) -> Result<R, String>,
    ) -> Result<R, String> {
        let mut batch = UploadBatch::new(self.dev.context());
        let net = &mut self.net;
        let r = self
            .dev
            .submit(|rec| f(net, rec, &mut batch).map_err(|e| GpuError::invalid(what, e)));
        batch.release();
        r.map_err(|e| format!("{what}: {e}"))
    }

    /// Record and run the first `nodes` nodes of the schedule, one block per submission (a CPU
    /// implementation of Vulkan needs minutes for a whole frame: short submissions keep every
    /// wait far from the device's timeout and give progress lines). `first` is recorded before
    /// the first node, `last` after the last one, in the same command buffers.
    pub fn run_nodes(
        &mut self,
        nodes: usize,
        label: &str,
        first: impl FnOnce(&mut N, &mut Recorder<'_>, &mut UploadBatch) -> Result<(), String>,
        last: impl FnOnce(&mut N, &mut Recorder<'_>, &mut UploadBatch) -> Result<(), String>,
    ) -> Result<(), String> {
        let blocks: Vec<usize> = self.net.network().graph().nodes[..nodes]
            .iter()
            .map(|n| n.block)
            .collect();
        let mut cuts: Vec<usize> = (0..nodes)
            .filter(|&i| i == 0 || blocks[i] != blocks[i - 1])
            .collect();
        cuts.push(nodes);
        let (mut first, mut last) = (Some(first), Some(last));
        let mut progress = Progress::new(label);
        for w in cuts.windows(2) {
            let range = w[0]..w[1];
            let end = w[1] == nodes;
            self.submit(label, |net, rec, batch| {
                if let Some(f) = first.take() {
                    f(net, rec, batch)?;
                }
                net.network_mut()
                    .record_nodes(rec, range.clone())
                    .map_err(|e| e.to_string())?;
                match last.take() {
                    Some(f) if end => f(net, rec, batch),
                    l => {
                        last = l;
                        Ok(())
                    }
                }
            })?;
            progress.tick(|| format!("block {}, {} of {nodes} ops run", blocks[w[0]], w[1]));
        }
        progress.done();
        Ok(())
    }
}

/// Deterministic features in the range of real ones (the upstream bench's recipe), f32
/// `[rows][16]`, every value an f16.
pub fn synthetic_features(rows: usize) -> Vec<f32> {
    (0..rows * 16)
        .map(|i| f16::to_f32(f16::from_f32_rne(((i as f32) * 0.0017).sin() * 0.125)))
        .collect()
}

/// Progress lines on stderr for long steps: [`Progress::tick`] prints at most once a second,
/// [`Progress::done`] prints the step's time when it took over a second.
pub struct Progress {
    label: String,
    start: Instant,
    last: Instant,
}

impl Progress {
    pub fn new(label: impl Into<String>) -> Progress {
        let now = Instant::now();
        Progress {
            label: label.into(),
            start: now,
            last: now,
        }
    }

    /// Report `what` if a second passed since the last line.
    pub fn tick(&mut self, what: impl FnOnce() -> String) {
        if self.last.elapsed().as_secs_f64() >= 1.0 {
            self.last = Instant::now();
            eprintln!(
                "{}: {} ({:.1} s)",
                self.label,
                what(),
                self.start.elapsed().as_secs_f64()
            );
        }
    }

    /// Seconds since the step began (printed when over a second).
    pub fn done(self) -> f64 {
        let s = self.start.elapsed().as_secs_f64();
        if s >= 1.0 {
            eprintln!("{}: done in {s:.1} s", self.label);
        }
        s
    }
}
