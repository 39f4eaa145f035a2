//! [`NetworkRecorder`]: the whole schedule of one geometry recorded into a caller's command
//! buffer — every node bound to its kernel with the tensors' workspace bindings, a
//! compute->compute barrier between consecutive dispatches, barriers at entry and exit so the
//! recording is correct whatever the caller records around it, optional timestamps per node, and
//! copies of the kept tensors into a readback buffer. The window blocks planned as strips
//! (`strips`) are recorded band by band, every node of the block in each band. A node the route
//! runs inside the next node's kernel (`fusion`) has no launch of its own.
//!
//! The route (`nr::route`) prepares every node's kernel once, at creation: descriptor sets never
//! change, a frame's recording allocates nothing, and any number of recordings may be pending
//! on the GPU at once.

use std::sync::Arc;

use crate::feature::Route;
use crate::gpu::{
    BufferBinding, Capabilities, DescriptorArena, Dispatch, GpuBuffer, GpuContext, GpuError,
    MemoryKind, PipelineDesc, Recorder, StageTime, TimestampPool, UploadBatch,
};
use crate::nr::graph::{Graph, TensorId};
use crate::nr::route::{self, Fusion, NetworkRoute, NodeBindings, RouteError};
use crate::numerics::Profiles;

use super::bands::{self, Band, BindLimits, RangeError};
use super::fusion::Fusions;
use super::strips::{StripChoice, Strips};
use super::workspace;
use super::{GpuWeights, KernelBuild, RecordError, Workspace};

/// Which tensors stay readable after a frame (unshared in the workspace, copied to readback).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Keep {
    /// Only the head (always kept).
    Head,
    /// The 75 boundaries and the head (the `verify` tool, parity tests).
    Boundaries,
    /// Every tensor (debugging; the workspace then shares no memory).
    All,
}

/// How a [`NetworkRecorder`] is built.
#[derive(Clone, Copy, Debug)]
pub struct NetworkOptions {
    /// The GPU route.
    pub route: Route,
    /// The MMA profiles.
    pub profiles: Profiles,
    /// The kernel builds the route may use (resolved against the device once, in
    /// [`NetworkRecorder::new`]).
    pub kernels: KernelBuild,
    pub keep: Keep,
    /// Record copies of the kept tensors into a host-visible readback buffer.
    pub readback: bool,
    /// Write a timestamp after every node, labelled with the node's label (when the device has
    /// compute timestamps); group them by [`Node::block`] for a per-block profile.
    pub timestamps: bool,
    /// The caller writes the input features before every recorded frame (the frame pipeline's
    /// prepare pass does), so the workspace may reuse their bytes after the adapter has read
    /// them (135 MiB at 1080p). `false` keeps them for the recorder's life: callers that upload
    /// them once and run the network several times (the bench) need that.
    pub input_per_frame: bool,
    /// Lower the device's `maxStorageBufferRange` to this many bytes for planning the launches
    /// (never raises it): forces the split route (`bands`) on small sizes, for tests and
    /// `bench --max-binding-range`. `None`: the device's limit.
    pub max_binding_range: Option<u64>,
    /// Whether the window blocks run as strips, band by band with band-sized intermediates
    /// (`strips`; far less memory, the same bytes).
    pub strips: StripChoice,
    /// Which neighbouring ops the route runs as one kernel where it can (`fusion`; the same
    /// bytes). By default each window block's FFN pair ([`Fusion::Ffn`], faster on the H100);
    /// the window normalisation in the QKV GEMM's epilogue or in the attention's staging is
    /// exact but slower than its own launches (docs/performance.md). `bench --fusion` and, for
    /// a feature, `OPENNGX_FUSION` choose; the exact route fuses nothing.
    pub fusion: Fusion,
}

impl Default for NetworkOptions {
    /// The exact route in the native profiles, the kernel builds `OPENNGX_PORTABLE_KERNELS`
    /// asks for (read here, once), only the head kept.
    fn default() -> Self {
        NetworkOptions {
            route: Route::Exact,
            profiles: Profiles::NATIVE,
            kernels: KernelBuild::from_env(),
            keep: Keep::Head,
            readback: false,
            timestamps: false,
            input_per_frame: false,
            max_binding_range: None,
            strips: StripChoice::from_env(),
            fusion: Fusion::default(),
        }
    }
}

/// The tensors the workspace never shares: what `opts.keep` asks for, the head, and the input
/// unless the caller rewrites it every frame (`opts.input_per_frame`).
fn kept_tensors(graph: &Graph, opts: &NetworkOptions) -> Vec<TensorId> {
    let mut kept: Vec<TensorId> = match opts.keep {
        Keep::Head => vec![graph.head],
        Keep::Boundaries => graph
            .boundaries
            .iter()
            .map(|b| b.1)
            .chain([graph.head])
            .collect(),
        Keep::All => (0..graph.tensors.len()).collect(),
    };
    if !opts.input_per_frame && !kept.contains(&graph.features) {
        kept.push(graph.features);
    }
    kept
}

/// The limits a network built with `opts` plans within on a device with `caps`.
pub fn limits(caps: &Capabilities, opts: &NetworkOptions) -> BindLimits {
    BindLimits::of(caps).lowered(opts.max_binding_range)
}

/// How the nodes of a schedule are launched.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Launches {
    /// The bands each node runs in: one over all its rows unless a limit needs more; a strip's
    /// node runs one per band of its strip.
    pub bands: Vec<Vec<Band>>,
    /// The strips (window blocks run band by band).
    pub strips: Strips,
    /// The nodes that run inside the next node's kernel (no launch of their own).
    pub fusions: Fusions,
    /// The workspace plan.
    pub workspace: workspace::Plan,
}

impl Launches {
    /// Bytes of the workspace.
    pub fn workspace_bytes(&self) -> u64 {
        self.workspace.bytes
    }

    /// How many nodes outside strips run in more than one launch (row bands for a limit).
    pub fn split_nodes(&self) -> usize {
        self.bands
            .iter()
            .zip(&self.strips.of_node)
            .filter(|(b, s)| b.len() > 1 && s.is_none())
            .count()
    }
}

/// The launches of every node of `graph` and its workspace plan within `limits` (see
/// [`limits`]), computed without touching the device: `Err` names the limit a size cannot meet.
/// What [`NetworkRecorder::with_route`] does first; a feature calls it before it records
/// anything.
pub fn plan_within(
    graph: &Graph,
    opts: &NetworkOptions,
    limits: &BindLimits,
) -> Result<Launches, RangeError> {
    let kept = kept_tensors(graph, opts);
    let mut strips = Strips::plan(graph, &kept, limits, opts.strips.budget(opts.route, graph));
    let whole = bands::plan_graph(graph, limits)?;
    // Each node's launches and the fused pairs with a given set of strips.
    let layout = |strips: &Strips| {
        let mut bands = whole.clone();
        for s in &strips.strips {
            for (j, i) in s.nodes.clone().enumerate() {
                bands[i] = s.launches.iter().map(|l| l[j]).collect();
            }
        }
        let fusions = Fusions::plan(opts.route, opts.fusion, graph, &kept, strips, &bands);
        (bands, fusions)
    };
    if opts.strips.prunes() {
        let piece = workspace::piece_size(limits.max_buffer);
        strips = strips.pruned(graph, |s| {
            workspace::plan_fused(graph, &kept, s, &layout(s).1, piece).bytes
        });
    }
    let (bands, fusions) = layout(&strips);
    let workspace = workspace::plan_within(graph, &kept, &strips, &fusions, limits)?;
    Ok(Launches {
        bands,
        strips,
        fusions,
        workspace,
    })
}

/// Which kernels a recording launches: the prepared ones, or the empty one of the launch floor
/// ([`NetworkRecorder::record_launch_floor`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum LaunchKernels {
    Own,
    Empty,
}

/// Record `launch` (and its follow-up launches) with its own kernel, or with the empty kernel
/// built on the launch's own layout so that its descriptor set and push constants bind as they
/// are.
fn record_launch(
    ctx: &GpuContext,
    launch: &Dispatch,
    rec: &mut Recorder<'_>,
    kernels: LaunchKernels,
) -> Result<(), GpuError> {
    if kernels == LaunchKernels::Own {
        return launch.record(rec);
    }
    let p = &launch.pipeline;
    let empty = ctx.pipeline(&PipelineDesc {
        shader: "nr/launch_floor".to_owned(),
        bindings: p.bindings,
        images: p.images,
        push_bytes: p.push_bytes,
        spec: Vec::new(),
    })?;
    rec.run(&empty, launch.set, &launch.push, launch.groups)?;
    if let Some(next) = &launch.then {
        rec.compute_to_compute();
        record_launch(ctx, next, rec, kernels)?;
    }
    Ok(())
}

/// The network of one geometry on one device.
pub struct NetworkRecorder {
    /// The device and the weights the prepared descriptor sets point into, kept alive.
    ctx: Arc<GpuContext>,
    graph: Graph,
    _weights: Arc<GpuWeights>,
    workspace: Workspace,
    route: Box<dyn NetworkRoute>,
    /// Kept alive for the prepared descriptor sets.
    _arena: DescriptorArena,
    /// The launches of every node of the graph: one, or one per row band where its tensors
    /// exceed the device's limits (`bands`; they write disjoint rows, so no barrier between).
    prepared: Vec<Vec<Dispatch>>,
    /// The window blocks recorded band by band (`prepared[i][k]` is band `k` of a strip's node).
    strips: Strips,
    /// Nodes run inside the next node's launches (`prepared[i]` empty).
    fusions: Fusions,
    limits: BindLimits,
    timestamps: Option<TimestampPool>,
    readback: Option<GpuBuffer>,
    /// Offset of each kept tensor in the readback buffer.
    readback_at: Vec<Option<u64>>,
}

impl NetworkRecorder {
    /// Allocate the workspace of `graph`, choose the route of `opts` on this device and
    /// prepare every node's kernel.
    pub fn new(
        ctx: &Arc<GpuContext>,
        graph: Graph,
        weights: Arc<GpuWeights>,
        opts: NetworkOptions,
    ) -> Result<NetworkRecorder, RecordError> {
        let route =
            route::build(opts.route, ctx, opts.profiles, opts.kernels).map_err(|e| match e {
                RouteError::Gpu(g) => RecordError::Gpu(g),
                other => RecordError::Graph(other.to_string()),
            })?;
        Self::with_route(ctx, graph, weights, route, opts)
    }

    /// As [`NetworkRecorder::new`] with a route the caller already built (and so checked
    /// against the device) from `opts`; `opts.route`, `profiles` and `kernels` are not read.
    pub fn with_route(
        ctx: &Arc<GpuContext>,
        graph: Graph,
        weights: Arc<GpuWeights>,
        route: Box<dyn NetworkRoute>,
        opts: NetworkOptions,
    ) -> Result<NetworkRecorder, RecordError> {
        let limits = limits(ctx.capabilities(), &opts);
        // The strips follow the route that will run (`opts.route` may name another).
        let opts = NetworkOptions {
            route: route.route(),
            ..opts
        };
        let Launches {
            bands,
            strips,
            fusions,
            workspace,
        } = plan_within(&graph, &opts, &limits)?;
        let kept = kept_tensors(&graph, &opts);
        let workspace = Workspace::new(ctx, workspace, &limits)?;
        let (mut sets, mut buffers) = (0u32, 0u32);
        for (node, b) in graph.nodes.iter().zip(&bands) {
            let (s, d) = route.descriptor_budget(node);
            sets = sets.saturating_add(s.saturating_mul(b.len() as u32));
            buffers = buffers.saturating_add(d.saturating_mul(b.len() as u32));
        }
        let mut arena = DescriptorArena::new(ctx, sets.max(1), buffers.max(1))?;
        let mut prepared = Vec::with_capacity(graph.nodes.len());
        for (i, node) in graph.nodes.iter().enumerate() {
            if fusions.runs_inside_next(i) {
                prepared.push(Vec::new());
                continue;
            }
            let start = fusions.chain_start(i);
            let fused = &graph.nodes[start..i];
            let tensor = |t: TensorId| workspace.binding(t);
            let mut launches = Vec::with_capacity(bands[i].len());
            for (k, &band) in bands[i].iter().enumerate() {
                let origin = |t: TensorId| strips.origin(t, k);
                // A fused chain runs in the same launches as its last node (the plan fuses
                // nodes of one strip, or of one launch each): band `k` of every node.
                let fused_bands = (start..i)
                    .map(|j| bands[j].get(k).copied())
                    .collect::<Option<Vec<Band>>>()
                    .ok_or_else(|| {
                        RecordError::Graph(format!(
                            "{}: a node fused into it has fewer launches",
                            node.label
                        ))
                    })?;
                let bindings = NodeBindings {
                    tensor: &tensor,
                    origin: &origin,
                    scratch: workspace.scratch(i),
                    band,
                    fused,
                    fused_bands: &fused_bands,
                };
                launches.push(route.prepare(ctx, &mut arena, &graph, node, &weights, &bindings)?);
            }
            prepared.push(launches);
        }
        let timestamps = if opts.timestamps {
            // One after every node, and after every launch of a strip's node.
            let marks: usize = (0..graph.nodes.len())
                .map(|i| match strips.of_node[i] {
                    Some(_) => bands[i].len(),
                    None => 1,
                })
                .sum();
            TimestampPool::new(ctx, u32::try_from(marks + 2).unwrap_or(u32::MAX))?
        } else {
            None
        };
        let mut readback_at = vec![None; graph.tensors.len()];
        let readback = if opts.readback {
            let mut at = 0u64;
            for &t in &kept {
                readback_at[t] = Some(at);
                at += workspace.plan().slots[t].1.div_ceil(4) * 4;
            }
            Some(GpuBuffer::new(
                ctx,
                "nr readback",
                at.max(4),
                MemoryKind::Readback,
            )?)
        } else {
            None
        };
        Ok(NetworkRecorder {
            ctx: Arc::clone(ctx),
            graph,
            _weights: weights,
            workspace,
            route,
            _arena: arena,
            prepared,
            strips,
            fusions,
            limits,
            timestamps,
            readback,
            readback_at,
        })
    }

    pub fn graph(&self) -> &Graph {
        &self.graph
    }

    /// The route the network runs, e.g. for logs: `route().describe()`.
    pub fn route(&self) -> &dyn NetworkRoute {
        self.route.as_ref()
    }

    /// The workspace binding of a tensor (e.g. the features the caller's prepare pass writes:
    /// `tensor(graph().features)`, or the head its compose pass reads).
    pub fn tensor(&self, t: TensorId) -> BufferBinding {
        self.workspace.binding(t)
    }

    /// The device limits the launches were planned within (`NetworkOptions::max_binding_range`
    /// applied); the frame passes around the network plan theirs within the same.
    pub fn limits(&self) -> BindLimits {
        self.limits
    }

    /// Launches of each node (more than one where a node runs in row bands or in a strip).
    pub fn launches(&self) -> Vec<usize> {
        self.prepared.iter().map(Vec::len).collect()
    }

    /// The nodes that run inside the next node's kernel.
    pub fn fusions(&self) -> &Fusions {
        &self.fusions
    }

    /// The strips: window blocks recorded band by band.
    pub fn strips(&self) -> &Strips {
        &self.strips
    }

    /// Device bytes of the workspace.
    pub fn workspace_bytes(&self) -> u64 {
        self.workspace.bytes()
    }

    /// Record an upload of f32 features `[field rows][16]` into the workspace (for tests and
    /// tools; the frame pipeline writes them with its prepare kernel).
    pub fn upload_features(
        &self,
        rec: &mut Recorder<'_>,
        batch: &mut UploadBatch,
        features: &[f32],
    ) -> Result<(), RecordError> {
        let t = self.graph.features;
        let expected = self.graph.rows(t) * 16;
        if features.len() != expected {
            return Err(RecordError::Graph(format!(
                "features: expected {expected} f32 values ([field rows][16]), got {}",
                features.len()
            )));
        }
        let bytes: Vec<u8> = features.iter().flat_map(|x| x.to_le_bytes()).collect();
        let (buffer, offset) = self.workspace.place(t);
        batch.upload(rec, buffer, offset, &bytes)?;
        Ok(())
    }

    /// Record the whole network into `rec`.
    pub fn record(&mut self, rec: &mut Recorder<'_>) -> Result<(), RecordError> {
        self.record_nodes(rec, 0..self.graph.nodes.len())
    }

    /// Record nodes `range` of the schedule (in order; a frame is every node once, in ranges that
    /// follow each other, possibly in separate command buffers submitted in order). Barriers at
    /// entry and exit make each part correct whatever the caller records around it; the kept
    /// tensors are copied to readback after the last node.
    pub fn record_nodes(
        &mut self,
        rec: &mut Recorder<'_>,
        range: std::ops::Range<usize>,
    ) -> Result<(), RecordError> {
        self.record_range(rec, range, LaunchKernels::Own)
    }

    /// The launch floor of nodes `range` (`bench --timing floor`): the same launches in the same
    /// order behind the same barriers as [`Self::record_nodes`], each with its own pipeline
    /// layout, descriptor set, push constants and grid, but every kernel replaced by an empty
    /// one (`nr/launch_floor`). Its GPU time is what the launches and barriers cost without
    /// their work. Nothing is written (no timestamps, no readback): the workspace keeps
    /// whatever it held, so never read results after it.
    pub fn record_launch_floor(
        &mut self,
        rec: &mut Recorder<'_>,
        range: std::ops::Range<usize>,
    ) -> Result<(), RecordError> {
        self.record_range(rec, range, LaunchKernels::Empty)
    }

    fn record_range(
        &mut self,
        rec: &mut Recorder<'_>,
        range: std::ops::Range<usize>,
        kernels: LaunchKernels,
    ) -> Result<(), RecordError> {
        let floor = kernels == LaunchKernels::Empty;
        let len = self.graph.nodes.len();
        if range.start > range.end || range.end > len {
            return Err(RecordError::Graph(format!(
                "node range {range:?} outside the schedule's {len} nodes"
            )));
        }
        // A strip runs its bands across all its nodes: a range may not cut one.
        if let Some((first, last)) = self.strips.cut_by(&range) {
            return Err(RecordError::Graph(format!(
                "node range {range:?} cuts the strip of nodes {first}..={last} (`{}`): record a \
                 block's nodes together",
                self.graph.nodes[first].label
            )));
        }
        if let Some((first, second)) = self.fusions.cut_by(&range) {
            return Err(RecordError::Graph(format!(
                "node range {range:?} separates `{}` from `{}`, which runs it: record a block's \
                 nodes together",
                self.graph.nodes[first].label, self.graph.nodes[second].label
            )));
        }
        // Entry: whatever the caller wrote before (features by a shader or a copy) is visible,
        // and earlier reads of the workspace are done before this part overwrites it.
        rec.compute_to_compute();
        rec.transfer_to_compute();
        // The floor writes no timestamps: its caller times the whole range.
        let mut timestamps = if floor {
            None
        } else {
            self.timestamps.as_mut()
        };
        if range.start == 0 {
            if let Some(ts) = timestamps.as_deref_mut() {
                ts.reset(rec);
                ts.mark(rec, "start")?;
            }
        }
        let mut i = range.start;
        // Whether a launch was recorded in this range (the next one then waits for it).
        let mut after_launch = false;
        while i < range.end {
            let (first, last) = self.strips.span(i);
            if last > first {
                // A strip: band by band, every node of it in each; a barrier before each
                // launch (it reads what the one before wrote, or reuses bytes a launch of the
                // band before read). A node fused into the next has no launches.
                let bands = (first..=last)
                    .map(|j| self.prepared[j].len())
                    .max()
                    .unwrap_or(0);
                for k in 0..bands {
                    for j in first..=last {
                        let Some(launch) = self.prepared[j].get(k) else {
                            continue;
                        };
                        if after_launch {
                            rec.compute_to_compute();
                        }
                        record_launch(&self.ctx, launch, rec, kernels)?;
                        after_launch = true;
                        if let Some(ts) = timestamps.as_deref_mut() {
                            ts.mark(rec, &self.graph.nodes[j].label)?;
                        }
                    }
                }
                i = last + 1;
                continue;
            }
            if self.prepared[i].is_empty() {
                // Run inside the next node's kernel.
                i += 1;
                continue;
            }
            if after_launch {
                rec.compute_to_compute();
            }
            after_launch = true;
            for launch in &self.prepared[i] {
                record_launch(&self.ctx, launch, rec, kernels)?;
            }
            if let Some(ts) = timestamps.as_deref_mut() {
                ts.mark(rec, &self.graph.nodes[i].label)?;
            }
            i += 1;
        }
        // Exit: results are visible to the caller's later shaders and copies.
        rec.compute_to_compute();
        rec.compute_to_transfer();
        if range.end == len && !floor {
            self.record_readback(rec)?;
        }
        Ok(())
    }

    /// Record copies of the kept tensors into the readback buffer (and a barrier to the host),
    /// when the recorder has one. [`Self::record_nodes`] does it after the last node; a caller
    /// that runs only the first nodes (`bench --blocks N --check`) records it after them, behind
    /// their exit barrier; tensors no recorded node wrote are copied as they are.
    pub fn record_readback(&self, rec: &mut Recorder<'_>) -> Result<(), RecordError> {
        if let Some(rb) = &self.readback {
            for (t, at) in self.readback_at.iter().enumerate() {
                if let Some(at) = at {
                    let src = self.workspace.binding(t);
                    let size = self.workspace.plan().slots[t].1;
                    rec.copy(src, rb.range(*at, size)?, size)?;
                }
            }
            rec.to_host();
        }
        Ok(())
    }

    /// The bytes of a kept tensor after the recording's submission has completed (requires
    /// `readback`).
    pub fn read_tensor(&self, t: TensorId) -> Result<Vec<u8>, GpuError> {
        let name = || {
            format!(
                "tensor `{}`",
                self.graph.tensors.get(t).map_or("?", |x| &x.name)
            )
        };
        let rb = self
            .readback
            .as_ref()
            .ok_or_else(|| GpuError::invalid(name(), "the recorder was built without readback"))?;
        let at = self
            .readback_at
            .get(t)
            .copied()
            .flatten()
            .ok_or_else(|| GpuError::invalid(name(), "is not kept"))?;
        let mut v = vec![0u8; self.workspace.plan().slots[t].1 as usize];
        rb.read(at, &mut v)?;
        Ok(v)
    }

    /// The head `[field rows][4]` f32 (requires `readback`).
    pub fn read_head(&self) -> Result<Vec<f32>, GpuError> {
        Ok(self
            .read_tensor(self.graph.head)?
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect())
    }

    /// Per-node GPU times of the last completed frame, labelled with the node labels (`None`
    /// while not available or without timestamps).
    pub fn timings(&self) -> Result<Option<Vec<StageTime>>, GpuError> {
        match &self.timestamps {
            Some(ts) => ts.read(),
            None => Ok(None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nr::geometry::Geometry;
    use crate::nr::graph;
    use crate::nr::record::workspace::plan;

    fn overlaps(a: (u64, u64), b: (u64, u64)) -> bool {
        a.1 > 0 && b.1 > 0 && a.0 < b.0 + b.1 && b.0 < a.0 + a.1
    }

    /// A caller that uploads the features once and runs the network several times (the bench)
    /// must find them intact: they share no bytes unless the caller says it rewrites them.
    #[test]
    fn the_input_is_kept_unless_rewritten_every_frame() {
        let g = graph::build(&Geometry::new(1920, 1080).expect("size"));
        let once = NetworkOptions::default();
        let per_frame = NetworkOptions {
            input_per_frame: true,
            ..NetworkOptions::default()
        };
        let f = g.features;
        let none = Strips::none(&g);
        let p = plan(&g, &kept_tensors(&g, &once), &none, u64::MAX);
        for t in (0..g.tensors.len()).filter(|&t| t != f) {
            assert!(
                !overlaps(p.slots[f], p.slots[t]),
                "features share bytes with `{}`",
                g.tensors[t].name
            );
        }
        let q = plan(&g, &kept_tensors(&g, &per_frame), &none, u64::MAX);
        assert!(
            (0..g.tensors.len()).any(|t| t != f && overlaps(q.slots[f], q.slots[t])),
            "rewritten features are never reused"
        );
        assert!(q.bytes < p.bytes, "{} vs {}", q.bytes, p.bytes);
        // Boundaries kept for readback add to, never replace, the input.
        let b = kept_tensors(
            &g,
            &NetworkOptions {
                keep: Keep::Boundaries,
                ..NetworkOptions::default()
            },
        );
        assert!(b.contains(&f) && b.contains(&g.head) && b.len() == g.boundaries.len() + 2);
    }
}
