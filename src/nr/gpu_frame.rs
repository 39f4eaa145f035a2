//! [`GpuFrame`]: one DLSS-NR frame on the GPU, assembled in one place for everything that runs
//! it (the NGX feature, the tools' fixture replays): the frame buffers ([`FrameBuffers`]:
//! proxy, motion, output and the two ping-pong history buffers), the network, and the prepare
//! and compose passes of both history slots bound to them and to the network's features and
//! head. A frame reads history slot `read_slot` and writes the other: prepare -> network ->
//! compose, a disabled frame compose only.
//!
//! What lies around the frame is its users': the feature imports the caller's images into the
//! proxy and motion buffers and exports the output (`nr::feature`), the tools upload and read
//! back buffers. The temporal decisions (seed, history use, which slot) are made by the caller
//! (`nr::frame::FrameState`). Never submits and owns no caller image.

use std::sync::Arc;

use crate::gpu::{
    Capabilities, DescriptorArena, GpuBuffer, GpuContext, GpuError, MemoryKind, Recorder,
};
use crate::nr::frame::FrameConstants;
use crate::nr::graph::Graph;
use crate::nr::record::network::{self, NetworkOptions, NetworkRecorder};
use crate::nr::record::passes::{
    check_passes, compose_bands, prepare_bands, ComposeBindings, ComposePass, PassSize,
    PrepareBindings, PreparePass, HISTORY_TEXEL_BYTES, MOTION_TEXEL_BYTES, PROXY_TEXEL_BYTES,
};
use crate::nr::record::{RangeError, RecordError};

/// The device buffers of a frame (valid size).
pub struct FrameBuffers {
    /// Proxy colour, RGBA f32.
    pub proxy: GpuBuffer,
    /// Motion vectors, RG f32.
    pub motion: GpuBuffer,
    /// The composed output, RGBA f16.
    pub output: GpuBuffer,
    /// The ping-pong history, RGBA f16: a frame reads one and writes the other.
    pub history: [GpuBuffer; 2],
}

impl FrameBuffers {
    /// The buffers of a `width x height` frame. Made apart from [`GpuFrame::new`] so that an
    /// owner can allocate them before it records anything.
    pub fn new(ctx: &Arc<GpuContext>, width: u32, height: u32) -> Result<FrameBuffers, GpuError> {
        let pixels = u64::from(width) * u64::from(height);
        let b = |name: &str, texel: u64| {
            GpuBuffer::new(ctx, name, pixels * texel, MemoryKind::DeviceLocal)
        };
        Ok(FrameBuffers {
            proxy: b("nr proxy", PROXY_TEXEL_BYTES)?,
            motion: b("nr motion", MOTION_TEXEL_BYTES)?,
            output: b("nr output", HISTORY_TEXEL_BYTES)?,
            history: [
                b("nr history 0", HISTORY_TEXEL_BYTES)?,
                b("nr history 1", HISTORY_TEXEL_BYTES)?,
            ],
        })
    }

    /// Device bytes of the buffers.
    pub fn bytes(&self) -> u64 {
        self.proxy.size()
            + self.motion.size()
            + self.output.size()
            + self.history[0].size()
            + self.history[1].size()
    }
}

/// Whether a frame of `graph` fits the limits of a device with `caps` (lowered by
/// `opts.max_binding_range`): every launch of the network and of the frame passes, the
/// workspace's and the frame buffers' allocations. Planned without touching the device, so a
/// feature refuses a size it cannot run before it records anything; the error names the limit.
/// `Ok`: how the network's nodes are launched (row bands, strips) and its workspace's bytes.
pub fn check_limits(
    caps: &Capabilities,
    graph: &Graph,
    opts: &NetworkOptions,
) -> Result<network::Launches, RangeError> {
    let limits = network::limits(caps, opts);
    let launches = network::plan_within(graph, opts, &limits)?;
    check_passes(PassSize::of_geometry(&graph.geometry), &limits)?;
    Ok(launches)
}

/// One frame's buffers, network and passes (see the module documentation). Field order is drop
/// order: the descriptor sets go before the buffers they name.
pub struct GpuFrame {
    prepare: [PreparePass; 2],
    compose: [ComposePass; 2],
    _arena: DescriptorArena,
    network: NetworkRecorder,
    buffers: FrameBuffers,
}

impl GpuFrame {
    /// Bind the passes of both history slots to `buffers` and to `network`'s features and head.
    pub fn new(
        ctx: &Arc<GpuContext>,
        buffers: FrameBuffers,
        network: NetworkRecorder,
    ) -> Result<GpuFrame, GpuError> {
        let size = PassSize::of_geometry(&network.graph().geometry);
        let limits = network.limits();
        let bands = |r: Result<Vec<_>, RangeError>| {
            r.map(|v| v.len() as u32)
                .map_err(|e| GpuError::invalid("frame passes", e.to_string()))
        };
        let (p, c) = (
            bands(prepare_bands(size, &limits))?,
            bands(compose_bands(size, &limits))?,
        );
        // 2 prepare passes of 4 buffers per launch, 2 compose passes of 6.
        let mut arena = DescriptorArena::new(ctx, 2 * (p + c), 2 * (4 * p + 6 * c))?;
        let features = network.tensor(network.graph().features);
        let head = network.tensor(network.graph().head);
        let b = &buffers;
        let mut prepare = |read: usize| {
            PreparePass::new(
                ctx,
                &mut arena,
                &PrepareBindings {
                    proxy: b.proxy.binding(),
                    motion: Some(b.motion.binding()),
                    history: Some(b.history[read].binding()),
                    features,
                },
                size,
                &limits,
            )
        };
        let prepare = [prepare(0)?, prepare(1)?];
        let mut compose = |read: usize| {
            ComposePass::new(
                ctx,
                &mut arena,
                &ComposeBindings {
                    proxy: b.proxy.binding(),
                    motion: Some(b.motion.binding()),
                    history: Some(b.history[read].binding()),
                    head,
                    output: b.output.binding(),
                    next_history: b.history[1 - read].binding(),
                },
                size,
                &limits,
            )
        };
        let compose = [compose(0)?, compose(1)?];
        Ok(GpuFrame {
            prepare,
            compose,
            _arena: arena,
            network,
            buffers,
        })
    }

    /// Launches of the prepare and compose passes (more than one each where the frame's
    /// buffers exceed the device's binding range).
    pub fn pass_launches(&self) -> (usize, usize) {
        (self.prepare[0].launches(), self.compose[0].launches())
    }

    pub fn buffers(&self) -> &FrameBuffers {
        &self.buffers
    }

    pub fn network(&self) -> &NetworkRecorder {
        &self.network
    }

    pub fn network_mut(&mut self) -> &mut NetworkRecorder {
        &mut self.network
    }

    /// Device bytes of the frame buffers and the network's workspace (the shared weights are
    /// not included).
    pub fn device_bytes(&self) -> u64 {
        self.buffers.bytes() + self.network.workspace_bytes()
    }

    /// Zero both history buffers, visible to later shaders. The history is only read after a
    /// frame wrote it, but a defined start keeps every byte the frame owns deterministic.
    pub fn record_clear_history(&self, rec: &mut Recorder<'_>) {
        for h in &self.buffers.history {
            rec.zero_words(h.binding());
        }
        rec.transfer_to_compute();
    }

    /// `prepare` reading history slot `read_slot` (0 or 1) into the network's features.
    pub fn record_prepare(
        &self,
        rec: &mut Recorder<'_>,
        constants: &FrameConstants,
        read_slot: usize,
    ) -> Result<(), GpuError> {
        slot(&self.prepare, read_slot)?.record(rec, constants)
    }

    /// `compose` reading history slot `read_slot` and writing the output and the other slot.
    pub fn record_compose(
        &self,
        rec: &mut Recorder<'_>,
        constants: &FrameConstants,
        read_slot: usize,
    ) -> Result<(), GpuError> {
        slot(&self.compose, read_slot)?.record(rec, constants)
    }

    /// The whole frame on the proxy and motion buffers: prepare -> network -> compose (a
    /// disabled frame, `constants.enabled == 0`, compose only).
    pub fn record(
        &mut self,
        rec: &mut Recorder<'_>,
        constants: &FrameConstants,
        read_slot: usize,
    ) -> Result<(), RecordError> {
        if constants.enabled != 0 {
            self.record_prepare(rec, constants, read_slot)?;
            self.network.record(rec)?;
        }
        self.record_compose(rec, constants, read_slot)?;
        Ok(())
    }
}

fn slot<T>(passes: &[T; 2], read_slot: usize) -> Result<&T, GpuError> {
    passes.get(read_slot).ok_or_else(|| {
        GpuError::invalid(
            "frame history",
            format!("slot {read_slot} (0 or 1 expected)"),
        )
    })
}
