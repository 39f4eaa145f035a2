//! The exact route: portable compute shaders that emulate the MMA profile with integer and
//! float arithmetic (no cooperative matrices). What it needs of the device, the features an
//! application enables for it, and the kernel of every op of the graph; which build of each
//! kernel runs (fast or portable, same bytes) is its [`KernelPolicy`], resolved once here.

use std::sync::Arc;

use ash::vk;

use super::{NetworkRoute, NodeBindings};
use crate::feature::Route;
use crate::gpu::{Capabilities, DescriptorArena, Dispatch, GpuContext, GpuError};
use crate::model::blocks::PRIOR_BYTES;
use crate::nr::geometry::Phase;
use crate::nr::graph::{Graph, Node, Op, TensorId};
use crate::nr::record::attention::{
    prepare_normalize, prepare_vit_attention, prepare_window_attention,
};
use crate::nr::record::bands::{doubling_band, halving_band, window_band};
use crate::nr::record::elementwise::{prepare_pool, prepare_post_blend, prepare_upmerge};
use crate::nr::record::{gemm, GpuWeights, KernelBuild, KernelPolicy, RecordError};
use crate::numerics::Profiles;

/// Storage buffers per descriptor set the route's kernels may use (upstream used 12).
pub const MAX_BUFFERS: u32 = 12;
/// Push-constant bytes the route's kernels may use (the Vulkan minimum guarantee).
pub const PUSH_CONSTANT_BYTES: u32 = 128;

/// The exact route in one pair of profiles on one device.
#[derive(Clone, Copy, Debug)]
pub struct ExactRoute {
    profiles: Profiles,
    kernels: KernelPolicy,
}

impl ExactRoute {
    /// What the route needs and a device with `caps` lacks (empty when it can run).
    /// Timestamps are not required: without them timing is simply unavailable.
    pub fn missing(caps: &Capabilities) -> Vec<String> {
        let mut missing = Vec::new();
        if caps.api_version < vk::API_VERSION_1_2 {
            missing.push(format!(
                "Vulkan 1.2 (device reports {}.{}.{})",
                vk::api_version_major(caps.api_version),
                vk::api_version_minor(caps.api_version),
                vk::api_version_patch(caps.api_version)
            ));
        }
        let flags = [
            (caps.shader_float16, "shaderFloat16"),
            (caps.shader_int8, "shaderInt8"),
            (caps.storage_buffer_8bit, "storageBuffer8BitAccess"),
            (caps.storage_buffer_16bit, "storageBuffer16BitAccess"),
        ];
        for (ok, name) in flags {
            if !ok {
                missing.push(name.to_owned());
            }
        }
        if caps.max_push_constants_size < PUSH_CONSTANT_BYTES {
            missing.push(format!("maxPushConstantsSize >= {PUSH_CONSTANT_BYTES}"));
        }
        missing
    }

    /// Sets, in the caller's feature structs, every feature the route needs. An application
    /// (or the test harness playing one) chains these into `VkDeviceCreateInfo`; the library
    /// can only check that the physical device supports them, not that they were enabled.
    pub fn enable_features(
        f11: &mut vk::PhysicalDeviceVulkan11Features<'_>,
        f12: &mut vk::PhysicalDeviceVulkan12Features<'_>,
    ) {
        f11.storage_buffer16_bit_access = vk::TRUE;
        f12.shader_float16 = vk::TRUE;
        f12.shader_int8 = vk::TRUE;
        f12.storage_buffer8_bit_access = vk::TRUE;
    }

    /// The route on a device with `caps` in `profiles`, with the kernel builds `build` allows.
    /// Refuses a device that lacks what the route needs (naming each item) and profiles the
    /// kernels cannot emulate.
    pub fn new(
        caps: &Capabilities,
        profiles: Profiles,
        build: KernelBuild,
    ) -> Result<ExactRoute, GpuError> {
        let missing = Self::missing(caps);
        if !missing.is_empty() {
            return Err(GpuError::MissingCapabilities {
                device: caps.device_name.clone(),
                route: "exact",
                missing,
            });
        }
        gemm::check_profiles(profiles)?;
        Ok(ExactRoute {
            profiles,
            kernels: KernelPolicy::resolve(caps, build),
        })
    }

    /// The kernel builds this route runs.
    pub fn kernels(&self) -> KernelPolicy {
        self.kernels
    }

    /// The same route preparing its kernels under `kernels` (the tensor route runs the exact
    /// route's op table with its cooperative-matrix kernels switched on).
    pub(crate) fn with_kernels(self, kernels: KernelPolicy) -> ExactRoute {
        ExactRoute { kernels, ..self }
    }
}

impl NetworkRoute for ExactRoute {
    fn route(&self) -> Route {
        Route::Exact
    }

    fn profiles(&self) -> Profiles {
        self.profiles
    }

    fn describe(&self) -> String {
        format!(
            "exact {}, {} kernels",
            self.profiles.name,
            self.kernels.describe()
        )
    }

    fn descriptor_budget(&self, node: &Node) -> (u32, u32) {
        // A GEMM binds 7 buffers (the adapter and head fewer) and the sum of a split-K GEMM 4
        // more in a second set; the other kernels at most 6.
        match node.op {
            Op::Gemm { .. } | Op::Adapter { .. } | Op::Head { .. } => (2, 11),
            _ => (1, 6),
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
        let policy = self.kernels;
        let band = bindings.band;
        if let Some(f) = bindings.fused.first() {
            return Err(RecordError::Graph(format!(
                "{}: the exact route runs no node inside another (asked to run `{}` in it)",
                node.label, f.label
            )));
        }
        if let Some(d) = gemm::prepare_node(
            ctx,
            arena,
            policy,
            self.profiles,
            g,
            node,
            w,
            bindings.tensor,
            bindings.origin,
            bindings.scratch,
            band,
        )? {
            return Ok(d);
        }
        let size = |t: TensorId| g.geometry.level(g.tensors[t].level);
        let sub = |t: TensorId, first: u32, rows: u32, width: u32| {
            bindings.rows(g, t, first, rows, width)
        };
        // The band's token rows of a row-independent op.
        let tokens = |t: TensorId| sub(t, band.start, band.len(), 1);
        let p = &self.profiles.fp8;
        let prior_bytes = PRIOR_BYTES as u64;
        let d = match &node.op {
            Op::Normalize {
                qkv,
                heads,
                temperatures,
                vit,
                q,
                k,
                v,
            } => prepare_normalize(
                ctx,
                arena,
                policy,
                policy.normalize_kernel(),
                tokens(*qkv),
                w.binding(*temperatures, 4 * *heads as u64)?,
                w.normalize_table()?,
                tokens(*q),
                tokens(*k),
                tokens(*v),
                band.len(),
                *heads as u32,
                *vit,
            )?,
            Op::WindowAttention {
                q,
                k,
                v,
                heads,
                priors,
                phase,
                out,
            } => {
                let level = size(*q);
                let (first, part, phase) = window_band(level, Phase(*phase as u8), band);
                let b = |t: TensorId| sub(t, first, part.h, level.w);
                prepare_window_attention(
                    ctx,
                    arena,
                    policy,
                    b(*q),
                    b(*k),
                    b(*v),
                    w.binding(*priors, *heads as u64 * prior_bytes)?,
                    b(*out),
                    w.attention_table()?,
                    part,
                    *heads as u32,
                    u32::from(phase.0),
                    p,
                )?
            }
            Op::VitAttention {
                q,
                k,
                v,
                heads,
                out,
            } => prepare_vit_attention(
                ctx,
                arena,
                policy,
                tokens(*q),
                tokens(*k),
                tokens(*v),
                tokens(*out),
                w.attention_table()?,
                band.len(),
                *heads as u32,
                p,
            )?,
            Op::Pool { input, out } => {
                let (fi, si, fo, so) = halving_band(size(*input), size(*out), band);
                prepare_pool(
                    ctx,
                    arena,
                    policy,
                    sub(*input, fi, si.h, si.w),
                    sub(*out, fo, so.h, so.w),
                    si,
                    so,
                    g.tensors[*input].channels as u32,
                )?
            }
            Op::UpMerge {
                low,
                skip,
                scale,
                out,
                out_raw,
            } => {
                let c = g.tensors[*skip].channels;
                let (fl, sl, fo, so) = doubling_band(size(*low), size(*skip), band);
                let b = |t: TensorId| sub(t, fo, so.h, so.w);
                prepare_upmerge(
                    ctx,
                    arena,
                    policy,
                    sub(*low, fl, sl.h, sl.w),
                    b(*skip),
                    g.tensors[*skip].dtype,
                    w.binding(*scale, 2 * c as u64)?,
                    b(*out),
                    out_raw.map(b),
                    sl,
                    so,
                    c as u32,
                )?
            }
            Op::PostBlend {
                low,
                skip,
                input_scale,
                adapter_scale,
                out_raw,
                out,
            } => {
                let (fl, sl, fo, so) = doubling_band(size(*low), size(*skip), band);
                let b = |t: TensorId| sub(t, fo, so.h, so.w);
                prepare_post_blend(
                    ctx,
                    arena,
                    policy,
                    sub(*low, fl, sl.h, sl.w),
                    b(*skip),
                    w.binding(*input_scale, 64)?,
                    w.binding(*adapter_scale, 64)?,
                    b(*out_raw),
                    b(*out),
                    sl,
                    so,
                )?
            }
            Op::Gemm { .. } | Op::Adapter { .. } | Op::Head { .. } => {
                return Err(RecordError::Graph(format!(
                    "{}: GEMM-family node the GEMM kernels did not prepare",
                    node.label
                )))
            }
        };
        Ok(d)
    }
}
