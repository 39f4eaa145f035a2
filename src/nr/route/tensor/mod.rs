//! The tensor route: the FP8 GEMMs and the window and ViT attention on the device's f16
//! cooperative matrices
//! (`VK_KHR_cooperative_matrix`, 16x16x16, E4M3 widened to f16 exactly), in the `h25` profiles.
//! The hardware's arithmetic *is* the profile, so the route is offered only where the creation
//! probe ([`probe`]) found the device's MMA to be H25 exactly; every byte is then checkable
//! against the CPU reference run in `h25`. The input adapter's f16 GEMM is one H25 group per
//! output (K = 16), so it runs on the cooperative matrices too. The ops without a
//! cooperative-matrix kernel yet (head, element-wise, the ViT's normalisation) run the exact
//! route's kernels in the same profiles, so the route is exact as a whole. Under the network's
//! fusion (`NetworkOptions::fusion`; by default each window block's FFN pair, docs/performance.md
//! has the others' times) it runs neighbouring nodes as one kernel ([`fuses`], [`chain`]): the
//! window normalisation as the QKV GEMM's epilogue or in the window attention's staging, a
//! window block's FFN pair, or a C = 32 block's attention half.

pub mod probe;

use std::ffi::CStr;
use std::sync::Arc;

use ash::vk;

use super::{ExactRoute, Fusion, NetworkRoute, NodeBindings};
use crate::feature::Route;
use crate::gpu::{Capabilities, CoopMatrixShape, DescriptorArena, Dispatch, GpuContext, GpuError};
use crate::model::blocks::PRIOR_BYTES;
use crate::nr::geometry::Phase;
use crate::nr::graph::{DType, Epilogue, Graph, InputMode, MatRef, Node, Op, TensorId};
use crate::nr::record::attention::prepare_window_attention_qkv;
use crate::nr::record::attention_block::{prepare_attention_block, BlockBindings};
use crate::nr::record::bands::window_band;
use crate::nr::record::gemm::{CoopmatTile, GemmShape};
use crate::nr::record::gemm_ffn::{prepare_ffn, FfnBindings, SeedBindings, WidenedBindings};
use crate::nr::record::gemm_norm::{prepare_gemm_norm, NormOutputs};
use crate::nr::record::{GpuWeights, KernelBuild, KernelPolicy, RecordError};
use crate::numerics::probe::Identification;
use crate::numerics::{Profile, Profiles};

/// Device extensions an application enables for the route (besides the exact route's).
pub const EXTENSIONS: [&CStr; 1] = [ash::khr::cooperative_matrix::NAME];

/// Shared memory the cooperative-matrix GEMM takes per workgroup with its base tile (64 x 64;
/// larger tiles are used only where the device has room for them).
const GEMM_SHARED_BYTES: u32 = CoopmatTile::base(64).shared_bytes();

/// Whether the route runs `node` inside `next`'s kernel under `fusion`:
///
/// * [`Fusion::NormInGemm`]: a window normalisation run as the epilogue of the QKV GEMM before
///   it (`gemm_coopmat_norm.comp`): one f16 chain over the whole K, no seed, one group, N the
///   normalisation's `96 * heads` columns;
/// * [`Fusion::NormInAttention`]: a window normalisation whose q', k', v' are exactly what the
///   window attention after it reads (`window_attention_coopmat_qkv.comp`);
/// * [`Fusion::Ffn`]: a window block's `ffn1` (C -> 128 per expert, SiLU E4, no seed) run
///   inside the `ffn2` (128 -> 32 per expert) that reads its output (`ffn_coopmat.comp`): the
///   C = 32 blocks' (one expert, `ffn2` seeded) and the expert blocks' (`ffn2` unseeded);
///   [`Fusion::Block`] fuses these pairs too (and, as a [`chain`], each C = 32 block's
///   attention half);
/// * [`Fusion::FfnNormInGemm`]: both the pairs of [`Fusion::NormInGemm`] and of [`Fusion::Ffn`].
///
/// The ViT's normalisation stays a launch of its own (its q takes another scale, and in the
/// attention's staging each ViT workgroup would repeat the keys' work once per query block).
pub fn fuses(fusion: Fusion, node: &Node, next: &Node) -> bool {
    match (fusion, &node.op, &next.op) {
        (
            Fusion::NormInGemm | Fusion::FfnNormInGemm,
            Op::Gemm {
                mat,
                seed: None,
                partition,
                epilogue: Epilogue::F16,
                out,
                out_raw: None,
                ..
            },
            Op::Normalize {
                vit: false,
                qkv,
                heads,
                ..
            },
        ) => {
            out == qkv
                && mat.groups == 1
                && mat.n == 96 * heads
                && partition.is_none_or(|p| p == 0 || p >= mat.k)
        }
        (
            Fusion::NormInAttention,
            Op::Normalize {
                vit: false,
                q,
                k,
                v,
                heads,
                ..
            },
            Op::WindowAttention {
                q: q2,
                k: k2,
                v: v2,
                heads: h2,
                ..
            },
        ) => (q, k, v, heads) == (q2, k2, v2, h2),
        (
            Fusion::Ffn | Fusion::Block | Fusion::FfnNormInGemm,
            Op::Gemm {
                mode: InputMode::Shared,
                mat,
                seed: None,
                partition,
                epilogue: Epilogue::SiluE4,
                out,
                out_raw: None,
                ..
            },
            Op::Gemm {
                input,
                mode: mode2,
                mat: mat2,
                seed: seed2,
                partition: partition2,
                epilogue: epilogue2 @ (Epilogue::E4 | Epilogue::Dual),
                ..
            },
        ) => {
            let one_chain = |p: &Option<usize>, k: usize| p.is_none_or(|p| p == 0 || p >= k);
            let experts = mat.groups;
            // The kernel seeds and writes two outputs for one expert only (the C = 32 blocks).
            let one_expert_only = seed2.is_some() || *epilogue2 == Epilogue::Dual;
            out == input
                && experts >= 1
                && mat.k % 32 == 0
                && mat.k > 0
                && mat.n == 128
                && (mat2.groups, mat2.k, mat2.n) == (experts, 128, 32)
                && (*mode2 == InputMode::Split || experts == 1)
                && !(one_expert_only && experts != 1)
                && one_chain(partition, mat.k)
                && one_chain(partition2, mat2.k)
        }
        _ => false,
    }
}

/// How many nodes of `graph` from node `i` on the route runs as one kernel under `fusion`
/// (`nr::route::chain`): under [`Fusion::Block`] a C = 32 block's attention half
/// ([`attention_block`]) is 4; otherwise a pair of [`fuses`] is 2, and 1 means none.
pub fn chain(fusion: Fusion, graph: &Graph, i: usize) -> usize {
    let nodes = graph.nodes.get(i..).unwrap_or_default();
    if fusion == Fusion::Block && nodes.len() >= 4 && attention_block(graph, &nodes[..4]) {
        return 4;
    }
    match nodes {
        [node, next, ..] if fuses(fusion, node, next) => 2,
        _ => 1,
    }
}

/// Whether `nodes` are a C = 32 window block's attention half as `attention_block_coopmat.comp`
/// runs it: the QKV GEMM (32 -> 96, one group, one chain, f16, unseeded), the window
/// normalisation of its output (one head), the window attention of those q', k', v', and the
/// projection of its output (32 -> 32, one chain) seeded from a raw f16 skip, published E4 or
/// dual.
pub fn attention_block(graph: &Graph, nodes: &[Node]) -> bool {
    let [qkv, norm, attention, proj] = nodes else {
        return false;
    };
    let one_chain = |p: &Option<usize>| p.is_none_or(|p| p == 0 || p >= 32);
    match (&qkv.op, &norm.op, &attention.op, &proj.op) {
        (
            Op::Gemm {
                mode: InputMode::Shared,
                mat,
                seed: None,
                partition,
                epilogue: Epilogue::F16,
                out: qkv_out,
                out_raw: None,
                ..
            },
            Op::Normalize {
                qkv: norm_in,
                heads: 1,
                vit: false,
                q,
                k,
                v,
                ..
            },
            Op::WindowAttention {
                q: q2,
                k: k2,
                v: v2,
                heads: 1,
                out: att,
                ..
            },
            Op::Gemm {
                input: proj_in,
                mode: InputMode::Shared,
                mat: pmat,
                seed: Some(seed),
                partition: ppart,
                epilogue: Epilogue::E4 | Epilogue::Dual,
                ..
            },
        ) => {
            qkv_out == norm_in
                && (q, k, v) == (q2, k2, v2)
                && att == proj_in
                && (mat.groups, mat.k, mat.n) == (1, 32, 96)
                && (pmat.groups, pmat.k, pmat.n) == (1, 32, 32)
                && one_chain(partition)
                && one_chain(ppart)
                && graph.tensors[seed.skip].dtype == DType::F16
        }
        _ => false,
    }
}

/// The tensor route on one device.
pub struct TensorRoute {
    exact: ExactRoute,
    policy: KernelPolicy,
    probe: Identification,
}

impl TensorRoute {
    /// What the route needs and a device with `caps` lacks (empty when it can run; the
    /// profile probe is a further condition, see [`TensorRoute::new`]).
    pub fn missing(caps: &Capabilities) -> Vec<String> {
        let mut missing = ExactRoute::missing(caps);
        if !caps.offers_coop_matrix(CoopMatrixShape::F16_16X16X16) {
            missing.push(
                "VK_KHR_cooperative_matrix with a 16x16x16 f16 x f16 -> f16 subgroup shape in \
                 compute shaders"
                    .to_owned(),
            );
        }
        if !caps.native_f16() {
            missing.push(
                "native f16 arithmetic (shaderFloat16 with RTE rounding and preserved subnormals \
                 for 16-bit floats)"
                    .to_owned(),
            );
        }
        if !caps.vulkan_memory_model {
            missing.push("vulkanMemoryModel".to_owned());
        }
        if caps.subgroup_size != 32 {
            missing.push(format!(
                "subgroup size 32 (device reports {})",
                caps.subgroup_size
            ));
        }
        if !caps.subgroup_shuffles {
            missing.push(
                "subgroup operations basic, shuffle, shuffle relative and ballot in compute \
                 shaders"
                    .to_owned(),
            );
        }
        if caps.max_compute_shared_memory_size < GEMM_SHARED_BYTES {
            missing.push(format!("maxComputeSharedMemorySize >= {GEMM_SHARED_BYTES}"));
        }
        missing
    }

    /// [`TensorRoute::missing`] as an error naming each item (`Ok` when the device can run
    /// the route, the probe aside).
    pub fn require(caps: &Capabilities) -> Result<(), GpuError> {
        let missing = Self::missing(caps);
        if missing.is_empty() {
            Ok(())
        } else {
            Err(GpuError::MissingCapabilities {
                device: caps.device_name.clone(),
                route: "tensor",
                missing,
            })
        }
    }

    /// Sets, in the caller's feature structs, every feature the route needs (the exact
    /// route's, the Vulkan memory model its shaders declare and `cooperativeMatrix`); the
    /// application also enables [`EXTENSIONS`].
    pub fn enable_features(
        f11: &mut vk::PhysicalDeviceVulkan11Features<'_>,
        f12: &mut vk::PhysicalDeviceVulkan12Features<'_>,
        coop: &mut vk::PhysicalDeviceCooperativeMatrixFeaturesKHR<'_>,
    ) {
        ExactRoute::enable_features(f11, f12);
        f12.vulkan_memory_model = vk::TRUE;
        coop.cooperative_matrix = vk::TRUE;
    }

    /// The route on a device with `caps` whose probe gave `probe`, in `profiles` (which must be
    /// the profiles the probe identified: `h25`). Refuses, naming the reason, a device that
    /// lacks what the route needs, a probe that matched no profile or another one, and other
    /// profiles.
    pub fn new(
        caps: &Capabilities,
        profiles: Profiles,
        build: KernelBuild,
        probe: Identification,
    ) -> Result<TensorRoute, GpuError> {
        Self::require(caps)?;
        if probe.matched != Some(Profile::H25) {
            return Err(GpuError::invalid(
                "tensor route",
                format!(
                    "the device's f16 cooperative matrix is not the h25 profile: {}",
                    probe.reason
                ),
            ));
        }
        if profiles != Profiles::H25 {
            return Err(GpuError::invalid(
                "tensor route",
                format!(
                    "the device's tensor cores compute h25, not `{}`",
                    profiles.name
                ),
            ));
        }
        let exact = ExactRoute::new(caps, profiles, build)?;
        let policy = exact.kernels().with_tensor_cores();
        Ok(TensorRoute {
            policy,
            exact: exact.with_kernels(policy),
            probe,
        })
    }

    /// The route's schedule and kernels with every MMA emulated in integer arithmetic as the
    /// H25 model (`KernelPolicy::with_emulated_tiles`, `shaders/emulated`), on any device the
    /// exact route runs on, in the portable builds of the other kernels. For tests: it checks
    /// the route's kernels and wiring byte for byte against the CPU reference in h25 where the
    /// device has no cooperative matrices (lavapipe). It is far slower than either route, no
    /// probe runs, and nothing chooses it.
    pub fn emulated(caps: &Capabilities) -> Result<TensorRoute, GpuError> {
        let exact = ExactRoute::new(caps, Profiles::H25, KernelBuild::Portable)?;
        let policy = exact.kernels().with_emulated_tiles();
        Ok(TensorRoute {
            policy,
            exact: exact.with_kernels(policy),
            probe: Identification {
                matched: Some(Profile::H25),
                mismatches: Vec::new(),
                reason: "none run: the MMAs are emulated in the h25 model".to_owned(),
            },
        })
    }

    /// The probe result the route was built on.
    pub fn probe(&self) -> &Identification {
        &self.probe
    }
}

impl NetworkRoute for TensorRoute {
    fn route(&self) -> Route {
        Route::Tensor
    }

    fn profiles(&self) -> Profiles {
        self.exact.profiles()
    }

    fn describe(&self) -> String {
        format!(
            "tensor {}, {} kernels (probe: {})",
            self.exact.profiles().name,
            self.policy.describe(),
            self.probe.reason
        )
    }

    fn descriptor_budget(&self, node: &Node) -> (u32, u32) {
        // The cooperative-matrix GEMM binds what the emulated one binds; a normalisation may
        // run as the QKV GEMM's epilogue (9 buffers: `gemm_norm`).
        let (sets, buffers) = self.exact.descriptor_budget(node);
        match node.op {
            Op::Normalize { .. } => (sets, buffers.max(9)),
            // A C = 32 `ffn2` may run its `ffn1` too (8 buffers: `gemm_ffn`), a projection its
            // block's attention half (10: `attention_block`).
            Op::Gemm { .. } => (sets, buffers.max(10)),
            _ => (sets, buffers),
        }
    }

    fn prepare(
        &self,
        ctx: &Arc<GpuContext>,
        arena: &mut DescriptorArena,
        g: &Graph,
        node: &Node,
        w: &GpuWeights,
        bindings: &NodeBindings<'_>,
    ) -> Result<Dispatch, RecordError> {
        match bindings.fused {
            [] => {}
            [producer] => return self.prepare_fused(ctx, arena, g, producer, node, w, bindings),
            [qkv, norm, attention] => {
                let nodes = [qkv.clone(), norm.clone(), attention.clone(), node.clone()];
                return self.prepare_block(ctx, arena, g, &nodes, w, bindings);
            }
            chain => {
                return Err(RecordError::Graph(format!(
                    "{}: the tensor route has no kernel for {} nodes inside it",
                    node.label,
                    chain.len()
                )))
            }
        }
        // The exact route's op table under this route's policy: the GEMMs and the window and
        // ViT attention take their cooperative-matrix kernels, the rest the exact kernels in h25.
        self.exact.prepare(ctx, arena, g, node, w, bindings)
    }
}

impl TensorRoute {
    /// The launch of `node` that also runs `producer`, the node before it ([`fuses`]).
    #[allow(clippy::too_many_arguments)]
    fn prepare_fused(
        &self,
        ctx: &Arc<GpuContext>,
        arena: &mut DescriptorArena,
        g: &Graph,
        producer: &Node,
        node: &Node,
        w: &GpuWeights,
        bindings: &NodeBindings<'_>,
    ) -> Result<Dispatch, RecordError> {
        if let (Op::Gemm { input, mat, .. }, Op::Normalize { .. }) = (&producer.op, &node.op) {
            return self.prepare_gemm_norm(ctx, arena, g, producer, node, *input, mat, w, bindings);
        }
        if let (Op::Gemm { .. }, Op::Gemm { .. }) = (&producer.op, &node.op) {
            return self.prepare_ffn(ctx, arena, g, producer, node, w, bindings);
        }
        let (
            Op::Normalize {
                qkv, temperatures, ..
            },
            Op::WindowAttention {
                q,
                heads,
                priors,
                phase,
                out,
                ..
            },
        ) = (&producer.op, &node.op)
        else {
            return Err(RecordError::Graph(format!(
                "{}: the tensor route cannot run `{}` inside it",
                node.label, producer.label
            )));
        };
        if !fuses(Fusion::NormInAttention, producer, node) {
            return Err(RecordError::Graph(format!(
                "{}: `{}` does not produce exactly the q, k, v it reads",
                node.label, producer.label
            )));
        }
        let level = g.geometry.level(g.tensors[*q].level);
        let (first, part, phase) = window_band(level, Phase(*phase as u8), bindings.band);
        let b = |t| bindings.rows(g, t, first, part.h, level.w);
        Ok(prepare_window_attention_qkv(
            ctx,
            arena,
            self.policy,
            b(*qkv),
            w.binding(*temperatures, 4 * *heads as u64)?,
            w.binding(*priors, *heads as u64 * PRIOR_BYTES as u64)?,
            b(*out),
            w.attention_table()?,
            part,
            *heads as u32,
            u32::from(phase.0),
            &self.exact.profiles().fp8,
        )?)
    }

    /// A C = 32 block's attention half (`nodes`: QKV GEMM, normalisation, window attention,
    /// projection; [`attention_block`]) as one launch over the attention's band of windows.
    fn prepare_block(
        &self,
        ctx: &Arc<GpuContext>,
        arena: &mut DescriptorArena,
        g: &Graph,
        nodes: &[Node; 4],
        w: &GpuWeights,
        bindings: &NodeBindings<'_>,
    ) -> Result<Dispatch, RecordError> {
        let (
            true,
            Op::Gemm {
                input: y,
                mat: wqkv,
                ..
            },
            Op::Normalize { temperatures, .. },
            Op::WindowAttention {
                q, priors, phase, ..
            },
            Op::Gemm {
                mat: wproj,
                seed: Some(seed),
                epilogue,
                out,
                out_raw,
                ..
            },
        ) = (
            attention_block(g, nodes),
            &nodes[0].op,
            &nodes[1].op,
            &nodes[2].op,
            &nodes[3].op,
        )
        else {
            return Err(RecordError::Graph(format!(
                "{}: `{}`, `{}` and `{}` are not the C = 32 attention half it can run",
                nodes[3].label, nodes[0].label, nodes[1].label, nodes[2].label
            )));
        };
        // The launch covers the attention's band of window rows.
        let band = bindings.fused_bands.get(2).copied().ok_or_else(|| {
            RecordError::Graph(format!("{}: no band for its attention", nodes[3].label))
        })?;
        let level = g.geometry.level(g.tensors[*q].level);
        let (first, part, phase) = window_band(level, Phase(*phase as u8), band);
        let b = |t| bindings.rows(g, t, first, part.h, level.w);
        let blocks = BlockBindings {
            y: b(*y),
            wqkv: w.matrix(wqkv)?,
            wproj: w.matrix(wproj)?,
            skip: b(seed.skip),
            scale: w.binding(seed.scale, 64)?,
            temperature: w.binding(*temperatures, 4)?,
            prior: w.binding(*priors, PRIOR_BYTES as u64)?,
            out: b(*out),
            out_raw: out_raw.map(b),
            table: w.attention_table()?,
        };
        Ok(prepare_attention_block(
            ctx,
            arena,
            self.policy,
            self.exact.profiles(),
            &blocks,
            part,
            u32::from(phase.0),
            *epilogue,
        )?)
    }

    /// A window block's `ffn1` (`producer`) inside its `ffn2` (`node`) ([`Fusion::Ffn`]): one
    /// launch over the band's token rows.
    #[allow(clippy::too_many_arguments)]
    fn prepare_ffn(
        &self,
        ctx: &Arc<GpuContext>,
        arena: &mut DescriptorArena,
        g: &Graph,
        producer: &Node,
        node: &Node,
        w: &GpuWeights,
        bindings: &NodeBindings<'_>,
    ) -> Result<Dispatch, RecordError> {
        let (
            true,
            Op::Gemm {
                input, mat: mat1, ..
            },
            Op::Gemm {
                mat: mat2,
                seed,
                out,
                out_raw,
                ..
            },
        ) = (fuses(Fusion::Ffn, producer, node), &producer.op, &node.op)
        else {
            return Err(RecordError::Graph(format!(
                "{}: `{}` is not the FFN input GEMM it can run inside",
                node.label, producer.label
            )));
        };
        let shape = |n: &Node| {
            GemmShape::of_node(g, n)
                .map(|mut s| {
                    s.rows = bindings.band.len() as usize;
                    s
                })
                .ok_or_else(|| RecordError::Graph(format!("{}: not a GEMM", n.label)))
        };
        let (s1, s2) = (shape(producer)?, shape(node)?);
        let band = bindings.band;
        let tokens = |t: TensorId| bindings.rows(g, t, band.start, band.len(), 1);
        let seed = seed
            .map(|seed| {
                w.binding(seed.scale, 2 * mat2.n as u64 * mat2.groups as u64)
                    .map(|scale| SeedBindings {
                        skip: tokens(seed.skip),
                        scale,
                    })
            })
            .transpose()?;
        let b = FfnBindings {
            x: tokens(*input),
            w1: w.matrix(mat1)?,
            w2: w.matrix(mat2)?,
            widened: match (w.widened(mat1)?, w.widened(mat2)?) {
                (Some(w1), Some(w2)) => Some(WidenedBindings { w1, w2 }),
                _ => None,
            },
            seed,
            out: tokens(*out),
            out_raw: out_raw.map(tokens),
            table: w.gemm_table()?,
        };
        Ok(prepare_ffn(
            ctx,
            arena,
            self.policy,
            self.exact.profiles(),
            &s1,
            &s2,
            &b,
        )?)
    }

    /// The QKV GEMM `producer` with `node`, the window normalisation of its result, as its
    /// epilogue ([`Fusion::NormInGemm`]): one launch over the band's token rows.
    #[allow(clippy::too_many_arguments)]
    fn prepare_gemm_norm(
        &self,
        ctx: &Arc<GpuContext>,
        arena: &mut DescriptorArena,
        g: &Graph,
        producer: &Node,
        node: &Node,
        input: TensorId,
        mat: &MatRef,
        w: &GpuWeights,
        bindings: &NodeBindings<'_>,
    ) -> Result<Dispatch, RecordError> {
        let Op::Normalize {
            heads,
            temperatures,
            q,
            k,
            v,
            ..
        } = &node.op
        else {
            return Err(RecordError::Graph(format!(
                "{}: not a normalisation",
                node.label
            )));
        };
        if !fuses(Fusion::NormInGemm, producer, node) {
            return Err(RecordError::Graph(format!(
                "{}: `{}` is not the QKV GEMM it can run inside",
                node.label, producer.label
            )));
        }
        let mut shape = GemmShape::of_node(g, producer)
            .ok_or_else(|| RecordError::Graph(format!("{}: not a GEMM", producer.label)))?;
        let band = bindings.band;
        shape.rows = band.len() as usize;
        let tokens = |t: TensorId| bindings.rows(g, t, band.start, band.len(), 1);
        let norm = NormOutputs {
            q: tokens(*q),
            k: tokens(*k),
            v: tokens(*v),
            temperatures: w.binding(*temperatures, 4 * *heads as u64)?,
            table: w.normalize_table()?,
            heads: *heads as u32,
        };
        Ok(prepare_gemm_norm(
            ctx,
            arena,
            self.policy,
            self.exact.profiles(),
            &shape,
            tokens(input),
            w.matrix(mat)?,
            &norm,
        )?)
    }
}
