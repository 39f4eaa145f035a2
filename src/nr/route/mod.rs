//! DLSS-NR's GPU routes: how each op of the graph becomes a kernel on a device. A route states
//! what it needs of the device, the features an application must enable for it, its MMA
//! profiles, and prepares one [`Dispatch`] per node of a schedule when a network is created
//! (so a frame's recording allocates nothing).
//!
//! Adding a route takes a folder beside `exact` implementing [`NetworkRoute`] and one line in
//! [`build`] (and one in [`fuses`] if it runs a node inside the kernel of the next).

pub mod exact;
pub mod tensor;

use std::sync::Arc;

use crate::feature::Route;
use crate::gpu::{BufferBinding, DescriptorArena, Dispatch, GpuContext, GpuError};
use crate::nr::graph::{Graph, Node, TensorId};
use crate::nr::record::bands::{row_bytes, sub_binding, Band};
use crate::nr::record::{GpuWeights, KernelBuild, RecordError};
use crate::numerics::Profiles;

pub use exact::ExactRoute;
pub use tensor::TensorRoute;

/// The tensors of one schedule as a route binds them, and the share of a node one launch
/// computes.
pub struct NodeBindings<'a> {
    /// The workspace binding of a tensor: the whole tensor, or the band's rows of a tensor
    /// band-local to a strip (`nr::record::strips`), which starts at row [`Self::origin`].
    pub tensor: &'a dyn Fn(TensorId) -> BufferBinding,
    /// The first token row the binding of each tensor holds (0 but for band-local tensors).
    pub origin: &'a dyn Fn(TensorId) -> u64,
    /// The node's whole scratch (split-K partials), when it has one.
    pub scratch: Option<BufferBinding>,
    /// The rows of the node's band axis this launch computes (`nr::record::bands`): all of
    /// them unless the node's tensors exceed the device's limits. The route binds the band's
    /// sub-ranges and sizes.
    pub band: Band,
    /// The nodes before this one, in schedule order, that the route runs inside this launch
    /// (a pair of [`fuses`] or a longer [`chain`] that the recorder fused:
    /// `nr::record::fusion`); empty for none. This launch then also computes their work, from
    /// their inputs, and their outputs are never written.
    pub fused: &'a [Node],
    /// The band of each of [`Self::fused`] that this launch computes (its band axis's rows,
    /// as [`Self::band`] is this node's).
    pub fused_bands: &'a [Band],
}

impl NodeBindings<'_> {
    /// Token rows `first .. first + rows` (of `width` tokens each) of tensor `t` of `graph`: the
    /// band's share of its binding, which holds rows from its origin on.
    pub fn rows(
        &self,
        graph: &Graph,
        t: TensorId,
        first: u32,
        rows: u32,
        width: u32,
    ) -> BufferBinding {
        let (w, f, r) = (u64::from(width), u64::from(first), u64::from(rows));
        let o = (self.origin)(t).min(w * f);
        sub_binding(
            (self.tensor)(t),
            w * f - o..w * (f + r) - o,
            row_bytes(graph, t),
        )
    }
}

/// Which pairs of neighbouring ops a network runs as one kernel where its route can
/// (`NetworkOptions::fusion`, `bench --fusion`, `OPENNGX_FUSION`). Every choice publishes the
/// same bytes. The default is [`Fusion::Ffn`], the only one measured faster than none
/// (docs/performance.md); the exact route fuses nothing whatever the choice ([`fuses`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Fusion {
    /// Every op in launches of its own.
    Off,
    /// The window normalisation as the epilogue of the QKV GEMM before it: the f16 QKV is never
    /// written (`gemm_coopmat_norm.comp`).
    NormInGemm,
    /// The window normalisation in the staging of the window attention after it: q', k', v' are
    /// never written (`window_attention_coopmat_qkv.comp`).
    NormInAttention,
    /// Each window block's `ffn1` and `ffn2` as one kernel (the C = 32 blocks' whole FFN, the
    /// expert blocks' first two GEMMs per expert): the hidden 128 channels per expert stay in
    /// shared memory and are never written (`ffn_coopmat.comp`). The default.
    #[default]
    Ffn,
    /// [`Fusion::Ffn`], and each C = 32 window block's attention half (the QKV GEMM, the window
    /// normalisation, the window attention and the projection) as one kernel per launch: the
    /// f16 QKV, q', k', v' and the attention output stay in shared memory and are never
    /// written (`attention_block_coopmat.comp`). Exact, and slower on the H100 (1080p 41.24
    /// against 36.94 ms: docs/performance.md, session 22).
    Block,
    /// [`Fusion::Ffn`] and [`Fusion::NormInGemm`] together: each window block's FFN pair as one
    /// kernel, and each window normalisation as its QKV GEMM's epilogue.
    FfnNormInGemm,
}

impl Fusion {
    /// Every choice, in the order of [`Fusion::name`]'s list.
    pub const ALL: [Fusion; 6] = [
        Fusion::Off,
        Fusion::NormInGemm,
        Fusion::NormInAttention,
        Fusion::Ffn,
        Fusion::Block,
        Fusion::FfnNormInGemm,
    ];

    /// The name `bench --fusion` and `OPENNGX_FUSION` take: `off`, `gemm`, `attention`, `ffn`,
    /// `block`, `ffn-gemm`.
    pub fn name(self) -> &'static str {
        match self {
            Fusion::Off => "off",
            Fusion::NormInGemm => "gemm",
            Fusion::NormInAttention => "attention",
            Fusion::Ffn => "ffn",
            Fusion::Block => "block",
            Fusion::FfnNormInGemm => "ffn-gemm",
        }
    }
}

impl std::fmt::Display for Fusion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Fusion {
    type Err = String;

    /// A [`Fusion::name`]; anything else is refused with the list of names.
    fn from_str(s: &str) -> Result<Fusion, String> {
        Fusion::ALL
            .into_iter()
            .find(|f| f.name() == s)
            .ok_or_else(|| {
                let names: Vec<&str> = Fusion::ALL.iter().map(|f| f.name()).collect();
                let (last, rest) = names.split_last().unwrap_or((&"", &[]));
                format!("`{s}`: expected {} or {last}", rest.join(", "))
            })
    }
}

/// Whether `route` can run `node` inside the kernel of `next`, the node after it in the schedule,
/// under `fusion` (the recorder fuses the two only where nothing else reads `node`'s outputs and
/// both run in the same launches: `nr::record::fusion`). Known without a device, so the
/// workspace plan and the limits check see the fusions.
pub fn fuses(route: Route, fusion: Fusion, node: &Node, next: &Node) -> bool {
    match route {
        Route::Tensor => tensor::fuses(fusion, node, next),
        Route::Exact | Route::Cpu => false,
    }
}

/// How many nodes of `graph`'s schedule from node `i` on `route` runs as one kernel under
/// `fusion`: 2 for a pair of [`fuses`], more for a longer chain the route has a kernel for, 1
/// for none. The recorder checks every link of a chain as it checks a pair
/// (`nr::record::fusion`); where one fails, nothing of the chain is fused.
pub fn chain(route: Route, fusion: Fusion, graph: &Graph, i: usize) -> usize {
    match route {
        Route::Tensor => tensor::chain(fusion, graph, i),
        Route::Exact | Route::Cpu => 1,
    }
}

/// A GPU route of the network.
pub trait NetworkRoute: Send + Sync {
    /// Which route this is.
    fn route(&self) -> Route;
    /// The MMA profiles every byte follows.
    fn profiles(&self) -> Profiles;
    /// For logs and tools, e.g. `"exact f13, fast kernels (rtz + native f16)"`.
    fn describe(&self) -> String;
    /// Descriptor sets and storage-buffer descriptors one prepared launch of `node` takes.
    fn descriptor_budget(&self, node: &Node) -> (u32, u32);
    /// Prepares the kernel of `node` over `bindings.band`.
    fn prepare(
        &self,
        ctx: &Arc<GpuContext>,
        arena: &mut DescriptorArena,
        graph: &Graph,
        node: &Node,
        weights: &GpuWeights,
        bindings: &NodeBindings<'_>,
    ) -> Result<Dispatch, RecordError>;
}

/// Why a route cannot run.
#[derive(Debug, thiserror::Error)]
pub enum RouteError {
    /// The route has no GPU implementation (the CPU reference is not a device route).
    #[error("route `{0}` does not run on a Vulkan device")]
    NotADeviceRoute(Route),
    /// The device lacks what the route needs, or the route cannot run the profiles.
    #[error(transparent)]
    Gpu(#[from] GpuError),
}

/// The route `route` on `ctx`'s device, in `profiles`, with kernel builds `kernels`: the one
/// place routes are registered. The tensor route runs its profile probe here (once per physical
/// device). The caller must have enabled the features the route names on the device.
pub fn build(
    route: Route,
    ctx: &GpuContext,
    profiles: Profiles,
    kernels: KernelBuild,
) -> Result<Box<dyn NetworkRoute>, RouteError> {
    let caps = ctx.capabilities();
    match route {
        Route::Exact => Ok(Box::new(ExactRoute::new(caps, profiles, kernels)?)),
        Route::Tensor => {
            // Checked before the probe, which needs the cooperative-matrix shape.
            TensorRoute::require(caps)?;
            let probe = tensor::probe::identify(ctx);
            Ok(Box::new(TensorRoute::new(caps, profiles, kernels, probe)?))
        }
        Route::Cpu => Err(RouteError::NotADeviceRoute(route)),
    }
}

#[cfg(test)]
mod fusion_names {
    use super::Fusion;

    #[test]
    fn fusion_names_round_trip_and_unknown_names_are_refused() {
        for f in Fusion::ALL {
            assert_eq!(f.name().parse::<Fusion>(), Ok(f));
            assert_eq!(f.to_string(), f.name());
        }
        assert_eq!("ffn".parse::<Fusion>(), Ok(Fusion::Ffn));
        assert_eq!("attention".parse::<Fusion>(), Ok(Fusion::NormInAttention));
        assert_eq!("ffn-gemm".parse::<Fusion>(), Ok(Fusion::FfnNormInGemm));
        let e = "everything".parse::<Fusion>().expect_err("unknown");
        assert!(e.contains("everything") && e.contains("ffn"), "{e}");
        assert!("".parse::<Fusion>().is_err());
    }
}
