//! The GEMM-family kernels of the exact route (grouped FP8 GEMM, adapter, head) on the test
//! device, byte for byte against the CPU: every GEMM variant the schedule uses (taken from a real
//! graph with a synthetic model, inputs random and adversarial) against `nr::reference`'s
//! `Executor::exec`, and GEMMs with adversarial weights against `numerics::gemm_e4m3`.

mod common;

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use common::{Harness, Rng};
use openngx::gpu::{
    BufferBinding, DescriptorArena, GpuBuffer, GpuContext, MemoryKind, Recorder, UploadBatch,
};
use openngx::model::{LoadOptions, Model};
use openngx::nr::geometry::Geometry;
use openngx::nr::graph::{self, DType, Epilogue, Graph, InputMode, Op, TensorId};
use openngx::nr::record::bands::Axis;
use openngx::nr::record::gemm::{self, GemmBindings, GemmShape};
use openngx::nr::record::{GpuWeights, KernelPolicy};
use openngx::nr::reference::{Executor, TensorData, Weights};
use openngx::numerics::{e4m3, f16, gemm_e4m3, gemm_f16, ops, silu, Profile, Profiles};
use openngx_tools::synth;

/// One synthetic model per test binary (written to a temporary directory, loaded, deleted).
fn model() -> &'static Model {
    static MODEL: OnceLock<Model> = OnceLock::new();
    MODEL.get_or_init(|| {
        let t = Instant::now();
        let dir = std::env::temp_dir().join(format!("openngx-gpu-gemm-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        if let Err(e) = synth::write_model(&dir, 7, &synth::SynthParams::DEFAULT, true) {
            panic!("synthesize model into {}: {e}", dir.display());
        }
        let m = match Model::load(&dir, LoadOptions { verify_sha: false }) {
            Ok(m) => m,
            Err(e) => panic!("load synthetic model: {e}"),
        };
        let _ = std::fs::remove_dir_all(&dir);
        println!("synthetic model: {:.1} s", t.elapsed().as_secs_f64());
        m
    })
}

/// E4M3 codes: mostly ordinary values, plus subnormals, both zeros, the NaN codes and large
/// values that drive sums to overflow (saturating publication).
fn e4_code(rng: &mut Rng, adversarial: bool) -> u8 {
    let sign = (rng.below(2) << 7) as u8;
    let roll = rng.below(100);
    if !adversarial || roll < 60 {
        return sign | ((rng.below(8) + 3) << 3) as u8 | rng.below(8) as u8;
    }
    match roll {
        60..=69 => sign | rng.below(8) as u8, // subnormal (and zero)
        70..=74 => sign,                      // +-0
        75..=79 => sign | 0x7F,               // NaN codes
        80..=89 => sign | ((rng.below(3) + 13) << 3) as u8 | rng.below(7) as u8, // large
        _ => rng.below(256) as u8,
    }
}

fn half(rng: &mut Rng, adversarial: bool) -> u16 {
    let sign = (rng.below(2) << 15) as u16;
    let roll = rng.below(100);
    if !adversarial || roll < 70 {
        return sign | ((rng.below(12) + 9) << 10) as u16 | rng.below(1024) as u16;
    }
    match roll {
        70..=77 => sign | rng.below(1024) as u16, // subnormal / zero
        78..=81 => sign,
        82..=84 => sign | 0x7C00,                                // inf
        85..=86 => 0x7C00 | sign | (rng.below(1023) + 1) as u16, // NaN
        _ => sign | ((rng.below(4) + 27) << 10) as u16 | rng.below(1024) as u16, // huge
    }
}

fn random_tensor(g: &Graph, t: TensorId, rng: &mut Rng, adversarial: bool) -> TensorData {
    let n = g.rows(t) * g.tensors[t].channels;
    match g.tensors[t].dtype {
        DType::E4 => TensorData::E4((0..n).map(|_| e4_code(rng, adversarial)).collect()),
        DType::F16 => TensorData::F16((0..n).map(|_| half(rng, adversarial)).collect()),
        DType::F32 => TensorData::F32(
            (0..n)
                .map(|i| {
                    if adversarial && i % 97 == 0 {
                        [f32::NAN, f32::INFINITY, -0.0, 1e-30, 70000.0, -3e-6][i % 6]
                    } else {
                        f16::to_f32(half(rng, false)) * 0.25
                    }
                })
                .collect(),
        ),
    }
}

fn bytes(d: &TensorData) -> Vec<u8> {
    match d {
        TensorData::E4(v) => v.clone(),
        TensorData::F16(v) => v.iter().flat_map(|h| h.to_le_bytes()).collect(),
        TensorData::F32(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
    }
}

fn host_buffer(ctx: &Arc<GpuContext>, name: &str, data: &[u8], kind: MemoryKind) -> GpuBuffer {
    let mut b = match GpuBuffer::new(ctx, name, data.len().max(4) as u64, kind) {
        Ok(b) => b,
        Err(e) => panic!("buffer {name}: {e}"),
    };
    if kind == MemoryKind::Upload {
        b.write(0, data).expect("write upload buffer");
    }
    b
}

fn first_mismatch(a: &[u8], b: &[u8]) -> Option<usize> {
    a.iter().zip(b).position(|(x, y)| x != y)
}

/// Raw f16 outputs compare equal up to the NaN sign: the Rust f16 ops keep the sign the host's
/// f32 NaN happens to carry, the GLSL ones return the canonical 0x7E00. A NaN only ever reaches
/// E4 publication (as +0) or the head's MMA (canonical QNAN), so no published byte depends on it.
fn first_f16_mismatch(a: &[u8], b: &[u8]) -> Option<usize> {
    let h = |v: &[u8], i: usize| {
        let x = u16::from_le_bytes([v[2 * i], v[2 * i + 1]]);
        if f16::is_nan(x) {
            f16::QNAN
        } else {
            x
        }
    };
    (0..a.len().min(b.len()) / 2)
        .find(|&i| h(a, i) != h(b, i))
        .map(|i| 2 * i)
}

/// Field order matters: the context must go before the harness's device.
struct Gpu {
    ctx: Arc<GpuContext>,
    h: Harness,
}

impl Gpu {
    fn new() -> Option<Gpu> {
        let h = Harness::new()?;
        let ctx = h.context();
        Some(Gpu { ctx, h })
    }

    fn weights(&self, model: &Model) -> Arc<GpuWeights> {
        let mut batch = UploadBatch::new(&self.ctx);
        let w = self.h.submit(|cmd| {
            // SAFETY: the harness's command buffer is recording on the context's device.
            let mut rec = unsafe { Recorder::new(&self.ctx, cmd) }.expect("recorder");
            GpuWeights::shared(&self.ctx, model, &mut rec, &mut batch)
        });
        batch.release();
        match w {
            Ok(w) => w,
            Err(e) => panic!("upload weights: {e}"),
        }
    }

    /// Run one GEMM-family node of `g` on the device with `inputs`; returns its outputs' bytes.
    fn run_node(
        &self,
        g: &Graph,
        node: usize,
        weights: &GpuWeights,
        inputs: &HashMap<TensorId, TensorData>,
        profiles: Profiles,
        policy: KernelPolicy,
    ) -> Vec<(TensorId, Vec<u8>)> {
        let node = &g.nodes[node];
        let mut bufs: HashMap<TensorId, GpuBuffer> = HashMap::new();
        for (t, d) in inputs {
            bufs.insert(
                *t,
                host_buffer(
                    &self.ctx,
                    &g.tensors[*t].name,
                    &bytes(d),
                    MemoryKind::Upload,
                ),
            );
        }
        for t in node.op.outputs() {
            let n = g.rows(t) * g.tensors[t].channels * g.tensors[t].dtype.size();
            let b = host_buffer(
                &self.ctx,
                &g.tensors[t].name,
                &vec![0xA5; n],
                MemoryKind::Readback,
            );
            bufs.insert(t, b);
        }
        // Split-K GEMMs: a scratch of garbage (its contents must not matter).
        let partials = GemmShape::of_node(g, node)
            .map(|s| s.partials_bytes())
            .filter(|&n| n > 0)
            .map(|n| host_buffer(&self.ctx, "partials", &vec![0x5A; n], MemoryKind::Readback));
        let mut arena = DescriptorArena::new(&self.ctx, 4, 16).expect("arena");
        let binding = |t: TensorId| -> BufferBinding {
            match bufs.get(&t) {
                Some(b) => b.binding(),
                None => panic!("tensor `{}` has no buffer", g.tensors[t].name),
            }
        };
        let dispatch = match gemm::prepare_node(
            &self.ctx,
            &mut arena,
            policy,
            profiles,
            g,
            node,
            weights,
            &binding,
            &|_| 0,
            partials.as_ref().map(|b| b.binding()),
            Axis::of(g, node).whole(),
        ) {
            Ok(Some(d)) => d,
            Ok(None) => panic!("{} is not a GEMM-family node", node.label),
            Err(e) => panic!("{}: {e}", node.label),
        };
        self.h.submit(|cmd| {
            // SAFETY: as in `weights`.
            let mut rec = unsafe { Recorder::new(&self.ctx, cmd) }.expect("recorder");
            dispatch.record(&mut rec).expect("record");
            rec.to_host();
        });
        node.op
            .outputs()
            .into_iter()
            .map(|t| (t, bufs[&t].read_all().expect("read back")))
            .map(|(t, mut v)| {
                v.truncate(g.rows(t) * g.tensors[t].channels * g.tensors[t].dtype.size());
                (t, v)
            })
            .collect()
    }
}

/// The harness's device, the 64x64 graph and the synthetic model's weights there and on the
/// CPU. Fields drop in order: the weights' buffers before the harness's device.
struct At64 {
    cpu: Weights<'static>,
    weights: Arc<GpuWeights>,
    g: Graph,
    gpu: Gpu,
}

impl At64 {
    /// `None` (with the harness's line) where there is no device.
    fn new() -> Option<At64> {
        let gpu = Gpu::new()?;
        let model = model();
        let g = graph::build(&Geometry::new(64, 64).expect("64x64"));
        let weights = gpu.weights(model);
        Some(At64 {
            cpu: Weights::new(model),
            weights,
            g,
            gpu,
        })
    }

    /// A readback buffer per tensor of `outs`, filled with 0xA5 (the kernel must write every
    /// byte a test compares).
    fn output_buffers(&self, outs: impl Iterator<Item = TensorId>) -> Vec<(TensorId, GpuBuffer)> {
        let g = &self.g;
        outs.map(|t| {
            let n = g.rows(t) * g.tensors[t].channels * g.tensors[t].dtype.size();
            let b = host_buffer(
                &self.gpu.ctx,
                &g.tensors[t].name,
                &vec![0xA5; n],
                MemoryKind::Readback,
            );
            (t, b)
        })
        .collect()
    }

    /// Records `dispatch` alone, runs it and compares every tensor of `want` with its buffer
    /// in `outs`, byte for byte (`what` names the case in a failure).
    fn run_and_compare(
        &self,
        what: &str,
        dispatch: &openngx::gpu::Dispatch,
        want: Vec<(TensorId, TensorData)>,
        outs: &[(TensorId, GpuBuffer)],
    ) {
        let (gpu, g) = (&self.gpu, &self.g);
        gpu.h.submit(|cmd| {
            // SAFETY: as in `Gpu::weights`.
            let mut rec = unsafe { Recorder::new(&gpu.ctx, cmd) }.expect("recorder");
            dispatch.record(&mut rec).expect("record");
            rec.to_host();
        });
        assert_eq!(want.len(), outs.len(), "{what}: outputs");
        for (t, w) in want {
            let w = bytes(&w);
            let Some((_, buf)) = outs.iter().find(|(o, _)| *o == t) else {
                panic!("{what}: no buffer for `{}`", g.tensors[t].name);
            };
            let mut got = buf.read_all().expect("read back");
            got.truncate(w.len());
            if let Some(at) = first_mismatch(&w, &got) {
                panic!(
                    "{what} `{}`: byte {at} gpu {:#04x} cpu {:#04x}",
                    g.tensors[t].name, got[at], w[at]
                );
            }
        }
    }

    /// Check the node labelled `label` under `policy` in each (adversarial, profiles) of
    /// `configs`, on random or adversarial inputs drawn from `seed`.
    fn check_node(
        &self,
        label: &str,
        seed: u64,
        configs: &[(bool, Profiles)],
        policy: KernelPolicy,
    ) {
        let (gpu, g, weights, cpu) = (&self.gpu, &self.g, &*self.weights, &self.cpu);
        let Some(i) = g.nodes.iter().position(|n| n.label == label) else {
            panic!("no node `{label}` in the graph");
        };
        let node = &g.nodes[i];
        for &(adversarial, profiles) in configs {
            let t = Instant::now();
            let mut rng = Rng(seed * 7919 + adversarial as u64 + 1);
            let mut ex = Executor::new(g, cpu, profiles);
            let mut inputs = HashMap::new();
            for t in node.op.inputs() {
                let d = random_tensor(g, t, &mut rng, adversarial);
                ex.set_tensor(t, d.clone()).expect("set input");
                inputs.insert(t, d);
            }
            let want = match ex.exec(node) {
                Ok(w) => w,
                Err(e) => panic!("{label}: reference: {e}"),
            };
            let t_cpu = t.elapsed().as_secs_f64();
            let got = gpu.run_node(g, i, weights, &inputs, profiles, policy);
            for (t, w) in want {
                let raw = w.dtype() == DType::F16;
                let w = bytes(&w);
                let (_, gb) = got.iter().find(|(o, _)| *o == t).expect("output present");
                let mismatch = if raw {
                    first_f16_mismatch(&w, gb)
                } else {
                    first_mismatch(&w, gb)
                };
                if let Some(at) = mismatch {
                    panic!(
                        "{label} ({}, adversarial {adversarial}) tensor `{}`: byte {at} differs: \
                         gpu {:#04x} cpu {:#04x}",
                        profiles.name, g.tensors[t].name, gb[at], w[at]
                    );
                }
                assert_eq!(w.len(), gb.len());
            }
            println!(
                "{label:<20} {} adversarial={adversarial}: cpu {t_cpu:.2} s, total {:.2} s",
                profiles.name,
                t.elapsed().as_secs_f64()
            );
        }
    }
}

#[test]
fn schedule_gemm_variants_match_the_reference() {
    let Some(at) = At64::new() else { return };
    // Every kind of GEMM-family node of the schedule (label, what it covers); the H25 profile
    // (P = 25, E4M3 widened to f16) runs on the nodes marked `true` (lavapipe time).
    let h25 = [
        "block-0.adapter",
        "block-1.ffn2",
        "block-6.ffn2",
        "block-31.proj",
        "head",
    ];
    let nodes = [
        "block-0.adapter",    // f32 -> f16 -> F24 16->32, raw + E4 (field)
        "block-1.ffn1",       // C=32 dense W1, SiLU E4
        "block-1.ffn2",       // C=32 W2 seeded from E4 skip, dual epilogue
        "block-4.proj",       // projection seeded from raw f16 y, dual (stage end)
        "block-66.ffn2",      // seeded from the raw f16 decoder merge
        "block-6.ffn1",       // expert W1, shared input, 2 groups
        "block-6.ffn2",       // expert W2, split input, 2 groups
        "block-6.ffn3",       // W3 seeded from E4 skip
        "block-12.qkv",       // f16 epilogue, 3C columns
        "block-8.transition", // transition C -> 2C
        "block-23.branch1",   // split-512 branches: split input, 8 groups, SiLU
        "block-31.ffn2",      // ViT contract, split-K 1024, seeded
        "block-31.qkv",       // ViT qkv, split-K 512, f16
        "block-31.proj",      // ViT projection, split-K 256, seeded
        "block-39.vit-exit",  // ViT exit split-K 256, f16
        "head",               // F24 32->4, f16 stored as f32
    ];
    let policy = common::kernels::policy(&at.gpu.ctx);
    for (i, label) in nodes.iter().enumerate() {
        let mut configs = vec![(false, Profiles::NATIVE), (true, Profiles::NATIVE)];
        if h25.contains(label) {
            configs.push((true, Profiles::H25));
        }
        at.check_node(label, i as u64, &configs, policy);
    }
}

/// The tensor route's GEMM kernel (`gemm_coopmat.glsl`) in its emulated build
/// (`KernelPolicy::with_emulated_tiles`: every 16x16x16 MMA in integer arithmetic as the H25
/// model) on every kind of GEMM node it runs, against the CPU reference in H25: its tiling, its
/// split-K partitions, its seeds, its epilogues, its row-tile loop (three tiles per workgroup;
/// with one, the chains of several K steps load two steps ahead) and its workgroups of eight
/// subgroups, byte for byte, on any device. Only the MMA itself is the device's in the
/// real build; `bench --route tensor --check` covers that on the H200.
#[test]
fn coopmat_gemm_kernel_matches_h25_emulated() {
    let Some(at) = At64::new() else { return };
    let base = KernelPolicy::PORTABLE.with_emulated_tiles();
    let nodes = [
        "block-1.ffn1",       // C=32 dense W1, SiLU E4, one K step (B tile kept over tiles)
        "block-1.ffn2",       // W2 seeded from E4 skip, dual epilogue, 4 K steps
        "block-4.proj",       // projection seeded from raw f16 y, dual
        "block-66.ffn2",      // seeded from the raw f16 decoder merge
        "block-6.ffn1",       // expert W1, shared input, 2 groups
        "block-6.ffn2",       // expert W2, split input, 2 groups
        "block-12.qkv",       // f16 epilogue, 3C columns (32-column tiles)
        "block-23.branch1",   // split-512 branches: split input, 8 groups, SiLU
        "block-31.ffn2",      // ViT contract, split-K 1024, seeded
        "block-31.qkv",       // ViT qkv, split-K 512, f16
        "block-8.transition", // transition C -> 2C
    ];
    for (i, label) in nodes.iter().enumerate() {
        for tiles in [1, 3] {
            let t = Instant::now();
            at.check_node(
                label,
                100 + i as u64,
                &[(true, Profiles::H25)],
                base.with_gemm_tiles(tiles),
            );
            println!(
                "  {label}: {tiles} row tiles per workgroup, {:.2} s",
                t.elapsed().as_secs_f64()
            );
        }
    }
    // Workgroups of eight subgroups: 128 rows (four subgroups down; B widened once for them,
    // with 16-column subgroups where N = 32) and 128 columns (four across). The MMA chains are
    // the same, so the bytes are too.
    for (i, (label, rows, cols)) in [
        ("block-1.ffn2", 4, 2),  // seeded from E4, dual, 128 x 32
        ("block-31.ffn2", 4, 2), // split-K 1024, seeded, 128 x 64
        ("block-31.qkv", 2, 4),  // split-K 512, f16, 64 x 128
    ]
    .into_iter()
    .enumerate()
    {
        let t = Instant::now();
        at.check_node(
            label,
            200 + i as u64,
            &[(true, Profiles::H25)],
            base.with_gemm_subgroups(rows, cols),
        );
        println!(
            "  {label}: {rows} x {cols} subgroups per workgroup, {:.2} s",
            t.elapsed().as_secs_f64()
        );
    }
}

/// A window block's FFN pair as one kernel (`ffn_coopmat.glsl` and `ffn_rows_coopmat.glsl`,
/// `Fusion::Ffn`) against the CPU reference running `ffn1` then `ffn2` in h25, on random and
/// adversarial inputs: a C = 32 block whose `ffn2` is seeded from an E4 skip and one seeded from
/// a raw f16 skip (E4 and raw outputs), and expert blocks of 2 and 8 experts, byte for byte.
/// The device's build where the tensor route runs with the probe's h25, else the
/// emulated build (lavapipe), as the line printed says.
#[test]
fn ffn_kernel_matches_the_two_gemms_h25() {
    use openngx::nr::record::gemm_ffn::{self, FfnBindings, SeedBindings, WidenedBindings};
    use openngx::nr::record::policy::FFN_GRID;
    let Some(at) = At64::new() else { return };
    let (gpu, g, weights, cpu) = (&at.gpu, &at.g, &*at.weights, &at.cpu);
    let policy = common::kernels::tile_policy(&gpu.ctx);
    // C = 32 with an E4 and an f16 skip (seeded, dual), and expert blocks of 2 and 8 experts
    // (unseeded, E4; K = 64 and 256 in steps of 32).
    for (i, block) in [1usize, 66, 5, 15].into_iter().enumerate() {
        let node_at = |label: String| match g.nodes.iter().position(|n| n.label == label) {
            Some(i) => i,
            None => panic!("no node `{label}`"),
        };
        let (n1, n2) = (
            node_at(format!("block-{block}.ffn1")),
            node_at(format!("block-{block}.ffn2")),
        );
        let (node1, node2) = (&g.nodes[n1], &g.nodes[n2]);
        let (
            Op::Gemm {
                input: x, mat: m1, ..
            },
            Op::Gemm {
                mat: m2,
                seed,
                out,
                out_raw,
                ..
            },
        ) = (&node1.op, &node2.op)
        else {
            panic!("block {block}: the FFN does not start with two GEMMs");
        };
        let s1 = GemmShape::of_node(g, node1).expect("shape");
        let s2 = GemmShape::of_node(g, node2).expect("shape");
        assert!(gemm_ffn::computes(&s1, &s2), "block {block}");
        assert_eq!(seed.is_some(), m1.groups == 1, "block {block}");
        for adversarial in [false, true] {
            let mut rng = Rng(0xFF1 + 2 * i as u64 + adversarial as u64);
            let xd = random_tensor(g, *x, &mut rng, adversarial);
            // The skip may be the FFN's own input (the block input).
            let skd = seed.map(|seed| {
                if seed.skip == *x {
                    xd.clone()
                } else {
                    random_tensor(g, seed.skip, &mut rng, adversarial)
                }
            });
            let mut ex = Executor::new(g, cpu, Profiles::H25);
            ex.set_tensor(*x, xd.clone()).expect("x");
            if let (Some(seed), Some(skd)) = (seed, &skd) {
                ex.set_tensor(seed.skip, skd.clone()).expect("skip");
            }
            for (t, d) in ex.exec(node1).expect("ffn1") {
                ex.set_tensor(t, d).expect("h");
            }
            let want = ex.exec(node2).expect("ffn2");
            let up = |name: &str, d: &[u8], kind| host_buffer(&gpu.ctx, name, d, kind);
            let xb = up("x", &bytes(&xd), MemoryKind::Upload);
            let skb = skd.map(|d| up("skip", &bytes(&d), MemoryKind::Upload));
            // (kernel, row tiles per workgroup): the C = 32 blocks run `ffn_rows_coopmat.glsl`
            // with 2 subgroups and one tile, and on adversarial inputs both kernels with three
            // row tiles per workgroup (W1 and W2 kept in shared memory over them, the last
            // stride partial): `ffn_coopmat.glsl` (FFN_GRID) and `ffn_rows_coopmat.glsl` with 4
            // subgroups asked for (the device's shared memory may give fewer: 3 on lavapipe).
            // The C = 64 block (two experts) runs the recorder's choice on random inputs and
            // both kernels on adversarial ones (`ffn_rows_coopmat.glsl` with 4 asked for, 1 on
            // lavapipe, and 3 tiles); the larger expert blocks `ffn_coopmat.glsl`.
            // `ffn_rows_coopmat.glsl` copies the weights' f16 copy of W1 and W2 on random
            // inputs (the recorder's way) and widens the E4M3 matrices on adversarial ones.
            let runs: &[(u32, u32)] = match (s1.k, adversarial) {
                (32, false) => &[(2, 1)],
                (32 | 64, true) => &[(FFN_GRID, 3), (4, 3)],
                _ => &[(0, 1)],
            };
            let rows_kernel = matches!((s1.k, m1.groups), (32, 1) | (64, 2));
            let widened = match (
                weights.widened(m1).expect("widened w1"),
                weights.widened(m2).expect("widened w2"),
            ) {
                (Some(w1), Some(w2)) => Some(WidenedBindings { w1, w2 }),
                (None, None) => None,
                _ => panic!("block {block}: only one of the FFN's matrices is widened"),
            };
            assert_eq!(
                widened.is_some(),
                rows_kernel && gemm_ffn::reads_widened(&s1),
                "block {block}: the weights' widened copy"
            );
            assert_eq!(widened.is_some(), rows_kernel, "block {block}");
            let widened = widened.filter(|_| !adversarial);
            for &(kernel, tiles) in runs {
                // Fresh outputs each run, so a run that writes nothing cannot pass.
                let outs = at.output_buffers(std::iter::once(*out).chain(*out_raw));
                let b = FfnBindings {
                    x: xb.binding(),
                    w1: weights.matrix(m1).expect("w1"),
                    w2: weights.matrix(m2).expect("w2"),
                    widened,
                    seed: seed.zip(skb.as_ref()).map(|(seed, skb)| SeedBindings {
                        skip: skb.binding(),
                        scale: weights.binding(seed.scale, 64).expect("scale"),
                    }),
                    out: outs[0].1.binding(),
                    out_raw: outs.get(1).map(|(_, b)| b.binding()),
                    table: weights.gemm_table().expect("table"),
                };
                let policy = policy.with_ffn_tiles(tiles).with_ffn_rows_subgroups(kernel);
                let shared = gpu.ctx.capabilities().max_compute_shared_memory_size;
                let subgroups =
                    gemm_ffn::ffn_rows_subgroups(policy, s1.k as u64, m1.groups as u64, shared);
                if rows_kernel && kernel != FFN_GRID && kernel != 0 {
                    // The largest count the device's shared memory allows, up to the one asked.
                    let fit = (1..=kernel)
                        .rev()
                        .find(|&n| gemm_ffn::ffn_rows_shared_bytes(s1.k as u32, n) <= shared);
                    assert_eq!(subgroups, fit, "block {block}: subgroups for {kernel}");
                    assert!(subgroups.is_some(), "block {block}: no ffn_rows run");
                } else if kernel == FFN_GRID || !rows_kernel {
                    assert_eq!(subgroups, None, "block {block}");
                }
                let mut arena = DescriptorArena::new(&gpu.ctx, 1, 8).expect("arena");
                let dispatch = match gemm_ffn::prepare_ffn(
                    &gpu.ctx,
                    &mut arena,
                    policy,
                    Profiles::H25,
                    &s1,
                    &s2,
                    &b,
                ) {
                    Ok(d) => d,
                    Err(e) => panic!("block {block}: prepare: {e}"),
                };
                let rows_per_tile = match subgroups {
                    Some(n) => 16 * n as usize,
                    None => 32,
                };
                // `ffn_coopmat.glsl` keeps W1 over row tiles only where it is one step (C = 32).
                let tiles = if subgroups.is_none() && s1.k != 32 {
                    1
                } else {
                    tiles
                };
                if tiles > 1 {
                    assert_eq!(
                        dispatch.groups[0] as usize,
                        s1.rows.div_ceil(rows_per_tile).div_ceil(tiles as usize),
                        "block {block}: workgroups for {tiles} row tiles each"
                    );
                }
                let kernel_name = match (subgroups, widened) {
                    (Some(n), Some(_)) => format!("ffn_rows_coopmat, {n} subgroups, f16 copy"),
                    (Some(n), None) => format!("ffn_rows_coopmat, {n} subgroups"),
                    (None, _) => "ffn_coopmat".to_owned(),
                };
                at.run_and_compare(
                    &format!(
                        "block {block} ffn (adversarial {adversarial}, {kernel_name}, {tiles} \
                         tiles)"
                    ),
                    &dispatch,
                    want.clone(),
                    &outs,
                );
                println!(
                    "block {block} ffn (adversarial {adversarial}, {kernel_name}, {tiles} row \
                     tiles per workgroup): exact, {}",
                    policy.describe()
                );
            }
        }
    }
}

/// A C = 32 block's attention half as one kernel (`attention_block_coopmat.glsl`,
/// `Fusion::Block`: QKV GEMM, normalisation, window attention, projection) against the CPU
/// reference running the four ops in h25, on random and adversarial y and skip: blocks of all
/// four window phases, at the field and at level 0, with the dual and the E4 epilogue, the
/// output byte for byte. The device's build where the tensor route runs with the probe's h25
/// (every block on both inputs), else the emulated build (lavapipe, about 12 s a run: the
/// adversarial inputs on blocks 0 and 4, the random ones on the others), as the line printed
/// says.
#[test]
fn attention_block_kernel_matches_the_four_ops_h25() {
    use openngx::nr::record::attention_block::{self, BlockBindings};
    use openngx::nr::route::tensor::attention_block as is_attention_block;
    let Some(at) = At64::new() else { return };
    let (gpu, g, weights, cpu) = (&at.gpu, &at.g, &*at.weights, &at.cpu);
    let policy = common::kernels::tile_policy(&gpu.ctx);
    let mut epilogues = Vec::new();
    for (i, block) in [0usize, 2, 3, 4, 70].into_iter().enumerate() {
        let node_at = |label: String| match g.nodes.iter().position(|n| n.label == label) {
            Some(i) => i,
            None => panic!("no node `{label}`"),
        };
        let first = node_at(format!("block-{block}.qkv"));
        let nodes = &g.nodes[first..first + 4];
        assert!(is_attention_block(g, nodes), "block {block}");
        assert_eq!(nodes[3].label, format!("block-{block}.proj"));
        let (
            Op::Gemm {
                input: y, mat: wq, ..
            },
            Op::Normalize { temperatures, .. },
            Op::WindowAttention {
                q, priors, phase, ..
            },
            Op::Gemm {
                mat: wp,
                seed: Some(seed),
                epilogue,
                out,
                out_raw,
                ..
            },
        ) = (&nodes[0].op, &nodes[1].op, &nodes[2].op, &nodes[3].op)
        else {
            panic!("block {block}: not the attention half");
        };
        epilogues.push(*epilogue);
        let size = g.geometry.level(g.tensors[*q].level);
        let inputs: &[bool] = match (policy.emulated_tiles(), block) {
            (false, _) => &[false, true],
            (true, 0 | 4) => &[true],
            (true, _) => &[false],
        };
        for &adversarial in inputs {
            let mut rng = Rng(0xB10C + 2 * i as u64 + adversarial as u64);
            let yd = random_tensor(g, *y, &mut rng, adversarial);
            let skd = random_tensor(g, seed.skip, &mut rng, adversarial);
            let mut ex = Executor::new(g, cpu, Profiles::H25);
            ex.set_tensor(*y, yd.clone()).expect("y");
            ex.set_tensor(seed.skip, skd.clone()).expect("skip");
            let mut want = Vec::new();
            for node in nodes {
                want = ex.exec(node).expect("reference");
                for (t, d) in &want {
                    ex.set_tensor(*t, d.clone()).expect("output");
                }
            }
            let up = |name: &str, d: &[u8], kind| host_buffer(&gpu.ctx, name, d, kind);
            let yb = up("y", &bytes(&yd), MemoryKind::Upload);
            let skb = up("skip", &bytes(&skd), MemoryKind::Upload);
            let outs = at.output_buffers(std::iter::once(*out).chain(*out_raw));
            let b = BlockBindings {
                y: yb.binding(),
                wqkv: weights.matrix(wq).expect("wqkv"),
                wproj: weights.matrix(wp).expect("wproj"),
                skip: skb.binding(),
                scale: weights.binding(seed.scale, 64).expect("scale"),
                temperature: weights.binding(*temperatures, 4).expect("temperature"),
                prior: weights.binding(*priors, 8192).expect("prior"),
                out: outs[0].1.binding(),
                out_raw: outs.get(1).map(|(_, b)| b.binding()),
                table: weights.attention_table().expect("table"),
            };
            let mut arena = DescriptorArena::new(&gpu.ctx, 1, 10).expect("arena");
            let dispatch = match attention_block::prepare_attention_block(
                &gpu.ctx,
                &mut arena,
                policy,
                Profiles::H25,
                &b,
                size,
                *phase as u32,
                *epilogue,
            ) {
                Ok(d) => d,
                Err(e) => panic!("block {block}: prepare: {e}"),
            };
            at.run_and_compare(
                &format!("block {block} (phase {phase}, adversarial {adversarial})"),
                &dispatch,
                want,
                &outs,
            );
            println!(
                "block {block} attention half (phase {phase}, {epilogue:?}, adversarial \
                 {adversarial}): exact, {}",
                policy.describe()
            );
        }
    }
    assert!(epilogues.contains(&Epilogue::Dual) && epilogues.contains(&Epilogue::E4));
}

/// A GEMM with hand-made operands (adversarial weights too) against `numerics::gemm_e4m3`.
#[allow(clippy::too_many_arguments)]
fn check_synthetic(
    gpu: &Gpu,
    profile: Profile,
    rows: usize,
    k: usize,
    n: usize,
    groups: usize,
    mode: InputMode,
    partition: Option<usize>,
    epilogue: Epilogue,
    seed: Option<DType>,
    rng: &mut Rng,
) {
    let ctx = &gpu.ctx;
    let cin = match mode {
        InputMode::Shared => k + 16, // extra channels the GEMM must not read
        InputMode::Split => k * groups,
    };
    let nout = n * groups;
    let a: Vec<u8> = (0..rows * cin).map(|_| e4_code(rng, true)).collect();
    let w: Vec<u8> = (0..groups * n * k).map(|_| e4_code(rng, true)).collect();
    let skip: Vec<u8> = match seed {
        Some(DType::E4) => (0..rows * nout).map(|_| e4_code(rng, true)).collect(),
        Some(DType::F16) => (0..rows * nout)
            .flat_map(|_| half(rng, true).to_le_bytes())
            .collect(),
        _ => Vec::new(),
    };
    // Scale vector placed at a 2-byte (not 16-byte) offset to exercise the alignment skew.
    let scale: Vec<u16> = (0..nout).map(|_| half(rng, false)).collect();
    let mut scale_bytes = vec![0u8; 2];
    scale_bytes.extend(scale.iter().flat_map(|h| h.to_le_bytes()));

    // CPU: per group, the exact GEMM, then the epilogue.
    let mut res = vec![0u16; rows * nout];
    for gi in 0..groups {
        let ag: Vec<u8> = (0..rows)
            .flat_map(|r| {
                let base = r * cin + if mode == InputMode::Split { gi * k } else { 0 };
                a[base..base + k].to_vec()
            })
            .collect();
        let seeds: Option<Vec<u16>> = seed.map(|dt| {
            (0..rows * n)
                .map(|i| {
                    let (r, c) = (i / n, gi * n + i % n);
                    let s = match dt {
                        DType::E4 => e4m3::to_f16(skip[r * nout + c]),
                        _ => u16::from_le_bytes([
                            skip[2 * (r * nout + c)],
                            skip[2 * (r * nout + c) + 1],
                        ]),
                    };
                    ops::scaled_skip(s, scale[c])
                })
                .collect()
        });
        let mut o = vec![0u16; rows * n];
        gemm_e4m3(
            &profile,
            &ag,
            &w[gi * n * k..(gi + 1) * n * k],
            rows,
            n,
            k,
            seeds.as_deref(),
            partition,
            &mut o,
        )
        .expect("cpu gemm");
        for r in 0..rows {
            res[r * nout + gi * n..r * nout + gi * n + n].copy_from_slice(&o[r * n..r * n + n]);
        }
    }
    let e4: Vec<u8> = res
        .iter()
        .map(|&h| match epilogue {
            Epilogue::SiluE4 => e4m3::from_f16(silu::silu_lookup(h)),
            _ => e4m3::from_f16(h),
        })
        .collect();
    let raw: Vec<u8> = res.iter().flat_map(|h| h.to_le_bytes()).collect();

    // GPU.
    let up = |name: &str, d: &[u8]| host_buffer(ctx, name, d, MemoryKind::Upload);
    let a_buf = up("a", &a);
    let w_buf = up("w", &w);
    let skip_buf = up("skip", &skip);
    let scale_buf = up("scale", &scale_bytes);
    let tables = openngx::numerics::tables::gpu();
    let table_buf = up(
        "epilogue table",
        &tables[openngx::numerics::tables::GEMM_EPILOGUE],
    );
    let out_len = if epilogue == Epilogue::F16 {
        2 * rows * nout
    } else {
        rows * nout
    };
    let out_buf = host_buffer(ctx, "out", &vec![0; out_len], MemoryKind::Readback);
    let raw_buf = host_buffer(ctx, "raw", &vec![0; 2 * rows * nout], MemoryKind::Readback);
    let shape = GemmShape {
        rows,
        cin,
        k,
        n,
        groups,
        mode,
        partition,
        epilogue,
        seed,
    };
    let partials_buf = (shape.partials_bytes() > 0).then(|| {
        host_buffer(
            ctx,
            "partials",
            &vec![0x5A; shape.partials_bytes()],
            MemoryKind::Readback,
        )
    });
    let bindings = GemmBindings {
        input: a_buf.binding(),
        matrix: w_buf.binding(),
        seed: seed.map(|_| {
            (
                skip_buf.binding(),
                BufferBinding {
                    offset: 2,
                    range: (2 * nout) as u64,
                    ..scale_buf.binding()
                },
            )
        }),
        out: out_buf.binding(),
        out_raw: (epilogue == Epilogue::Dual).then(|| raw_buf.binding()),
        table: (epilogue != Epilogue::F16).then(|| table_buf.binding()),
        partials: partials_buf.as_ref().map(|b| b.binding()),
    };
    let profiles = Profiles {
        name: profile.name,
        fp8: profile,
        f16: Profile::F24,
    };
    let mut arena = DescriptorArena::new(ctx, 2, 12).expect("arena");
    gpu.h.submit(|cmd| {
        // SAFETY: the harness's command buffer is recording on the context's device.
        let mut rec = unsafe { Recorder::new(ctx, cmd) }.expect("recorder");
        if let Err(e) = gemm::record_gemm(
            ctx,
            &mut rec,
            &mut arena,
            common::kernels::policy(ctx),
            profiles,
            &shape,
            &bindings,
        ) {
            panic!("{shape:?}: {e}");
        }
        rec.to_host();
    });
    let got = out_buf.read_all().expect("read");
    let want: &[u8] = if epilogue == Epilogue::F16 { &raw } else { &e4 };
    let mismatch = if epilogue == Epilogue::F16 {
        first_f16_mismatch(want, &got[..want.len()])
    } else {
        first_mismatch(want, &got[..want.len()])
    };
    if let Some(at) = mismatch {
        panic!(
            "{} {shape:?}: output byte {at} (row {}) gpu {:#04x} cpu {:#04x}",
            profile.name,
            at / (nout * if epilogue == Epilogue::F16 { 2 } else { 1 }),
            got[at],
            want[at]
        );
    }
    if epilogue == Epilogue::Dual {
        let got = raw_buf.read_all().expect("read");
        if let Some(at) = first_f16_mismatch(&raw, &got) {
            let e = at / 2;
            panic!(
                "{} {shape:?}: raw output element {e} gpu {:#06x} cpu {:#06x}",
                profile.name,
                u16::from_le_bytes([got[2 * e], got[2 * e + 1]]),
                res[e]
            );
        }
    }
}

#[test]
fn adversarial_gemms_match_the_model() {
    let Some(gpu) = Gpu::new() else { return };
    let mut rng = Rng(0x5eed_0fa1);
    for profile in [Profile::F13, Profile::H25] {
        // (rows, k, n, groups, mode, partition, epilogue, seed)
        let cases = [
            (
                200,
                32,
                128,
                1,
                InputMode::Shared,
                None,
                Epilogue::SiluE4,
                None,
            ),
            (
                131,
                128,
                32,
                1,
                InputMode::Shared,
                None,
                Epilogue::Dual,
                Some(DType::E4),
            ),
            (
                77,
                64,
                64,
                1,
                InputMode::Shared,
                None,
                Epilogue::Dual,
                Some(DType::F16),
            ),
            (
                90,
                64,
                128,
                2,
                InputMode::Shared,
                None,
                Epilogue::SiluE4,
                None,
            ),
            (90, 128, 32, 3, InputMode::Split, None, Epilogue::E4, None),
            (
                70,
                256,
                64,
                1,
                InputMode::Shared,
                Some(64),
                Epilogue::E4,
                Some(DType::E4),
            ),
            (
                70,
                192,
                96,
                1,
                InputMode::Shared,
                Some(32),
                Epilogue::F16,
                None,
            ),
            (
                65,
                96,
                64,
                1,
                InputMode::Shared,
                Some(64),
                Epilogue::F16,
                Some(DType::F16),
            ),
            // Split-K with the dual and SiLU epilogues (partials summed by gemm_sum.comp), a
            // short last partition, two groups.
            (
                40,
                64,
                32,
                2,
                InputMode::Split,
                Some(32),
                Epilogue::Dual,
                Some(DType::E4),
            ),
            (
                33,
                128,
                64,
                1,
                InputMode::Shared,
                Some(48),
                Epilogue::SiluE4,
                None,
            ),
        ];
        for (rows, k, n, groups, mode, part, epi, seed) in cases {
            check_synthetic(
                &gpu, profile, rows, k, n, groups, mode, part, epi, seed, &mut rng,
            );
        }
    }
}

/// The input adapter and the head with hand-made weights (zeros, subnormals, huge values, and
/// columns with an infinity or a NaN, which take the kernels' general path) against
/// `numerics::gemm_f16`.
#[test]
fn adapter_and_head_match_the_model_on_adversarial_weights() {
    let Some(gpu) = Gpu::new() else { return };
    let ctx = &gpu.ctx;
    let mut rng = Rng(0xada9_7e55);
    let rows = 203; // not a multiple of the workgroup's 8 rows
    for (profiles, profile) in [
        (Profiles::NATIVE, Profile::F24),
        (Profiles::H25, Profile::H25),
    ] {
        let mut w: Vec<u16> = (0..32 * 16).map(|_| half(&mut rng, false)).collect();
        for (i, v) in w.iter_mut().enumerate() {
            match (i / 16, i % 16) {
                (3, k) if k % 3 == 0 => *v = 0x8000 * (k as u16 & 1),
                (5, k) => *v = (k as u16 * 37) & 0x83FF, // subnormals and zeros
                (7, 4) => *v = 0x7C00,                   // +inf: column 7 is special
                (9, 11) => *v = 0xFE01,                  // NaN: column 9
                (12, k) => *v = 0x7800 | (k as u16 * 61), // huge: the sums overflow
                _ => {}
            }
        }
        let x: Vec<f32> = (0..rows * 16)
            .map(|i| {
                if i % 53 == 0 {
                    [f32::INFINITY, -0.0, 1e-30, 70000.0, 3e-6, -65504.0][i % 6]
                } else {
                    f16::to_f32(half(&mut rng, false)) * 4.0
                }
            })
            .collect();
        let a: Vec<u16> = x.iter().map(|&v| f16::from_f32_rne(v)).collect();
        let mut want = vec![0u16; rows * 32];
        gemm_f16(&profile, &a, &w, rows, 32, 16, None, None, &mut want).expect("cpu gemm");
        let up = |name: &str, d: &[u8]| host_buffer(ctx, name, d, MemoryKind::Upload);
        let x_buf = up(
            "features",
            &x.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<_>>(),
        );
        let w_buf = up(
            "weights",
            &w.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<_>>(),
        );
        let raw_buf = host_buffer(ctx, "raw", &vec![0xA5; rows * 64], MemoryKind::Readback);
        let out_buf = host_buffer(ctx, "out", &vec![0xA5; rows * 32], MemoryKind::Readback);
        let mut arena = DescriptorArena::new(ctx, 1, 4).expect("arena");
        gpu.h.submit(|cmd| {
            // SAFETY: the harness's command buffer is recording on the context's device.
            let mut rec = unsafe { Recorder::new(ctx, cmd) }.expect("recorder");
            if let Err(e) = gemm::record_adapter(
                ctx,
                &mut rec,
                &mut arena,
                common::kernels::policy(ctx),
                profiles,
                rows,
                x_buf.binding(),
                w_buf.binding(),
                raw_buf.binding(),
                out_buf.binding(),
            ) {
                panic!("adapter: {e}");
            }
            rec.to_host();
        });
        let raw: Vec<u8> = want.iter().flat_map(|h| h.to_le_bytes()).collect();
        let got = raw_buf.read_all().expect("read");
        if let Some(at) = first_f16_mismatch(&raw, &got[..raw.len()]) {
            let e = at / 2;
            panic!(
                "{}: adapter output {e} (row {}, column {}): gpu {:#06x} cpu {:#06x}",
                profile.name,
                e / 32,
                e % 32,
                u16::from_le_bytes([got[at], got[at + 1]]),
                want[e]
            );
        }
        let e4: Vec<u8> = want.iter().map(|&h| e4m3::from_f16(h)).collect();
        let got = out_buf.read_all().expect("read");
        assert_eq!(
            first_mismatch(&e4, &got[..e4.len()]),
            None,
            "{}: E4 output",
            profile.name
        );
        // The special columns really produced non-finite results, the huge one overflowed.
        assert!(want.iter().any(|&h| f16::is_nonfinite(h)));

        // The head: 32 -> 4, inputs with specials, weights with zeros, subnormals and an
        // infinity in output 2's column.
        let mut hw: Vec<u16> = (0..4 * 32).map(|_| half(&mut rng, false)).collect();
        for k in 0..32 {
            match k % 4 {
                0 => hw[k] = 0,
                1 => hw[32 + k] = (k as u16 * 29) & 0x83FF,
                _ => {}
            }
        }
        hw[2 * 32 + 17] = 0xFC00;
        let hx: Vec<u16> = (0..rows * 32).map(|_| half(&mut rng, true)).collect();
        let mut hwant = vec![0u16; rows * 4];
        gemm_f16(&profile, &hx, &hw, rows, 4, 32, None, None, &mut hwant).expect("cpu head");
        let hx_buf = up(
            "head in",
            &hx.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<_>>(),
        );
        let hw_buf = up(
            "head w",
            &hw.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<_>>(),
        );
        let hout = host_buffer(
            ctx,
            "head out",
            &vec![0xA5; rows * 16],
            MemoryKind::Readback,
        );
        let mut arena = DescriptorArena::new(ctx, 1, 3).expect("arena");
        gpu.h.submit(|cmd| {
            // SAFETY: as above.
            let mut rec = unsafe { Recorder::new(ctx, cmd) }.expect("recorder");
            if let Err(e) = gemm::record_head(
                ctx,
                &mut rec,
                &mut arena,
                profiles,
                rows,
                hx_buf.binding(),
                hw_buf.binding(),
                hout.binding(),
            ) {
                panic!("head: {e}");
            }
            rec.to_host();
        });
        let want: Vec<u8> = hwant
            .iter()
            .flat_map(|&h| f16::to_f32(h).to_bits().to_le_bytes())
            .collect();
        let got = hout.read_all().expect("read");
        assert_eq!(
            first_mismatch(&want, &got[..want.len()]),
            None,
            "{}: head output",
            profile.name
        );
    }
}

#[test]
fn unsupported_profiles_and_bad_shapes_are_refused() {
    let Some(gpu) = Gpu::new() else { return };
    let ctx = &gpu.ctx;
    let buf = host_buffer(ctx, "any", &[0; 4096], MemoryKind::Upload);
    let b = buf.binding();
    let mut arena = DescriptorArena::new(ctx, 2, 12).expect("arena");
    let shape = GemmShape {
        rows: 4,
        cin: 32,
        k: 32,
        n: 32,
        groups: 1,
        mode: InputMode::Shared,
        partition: None,
        epilogue: Epilogue::E4,
        seed: None,
    };
    let bindings = GemmBindings {
        input: b,
        matrix: b,
        seed: None,
        out: b,
        out_raw: None,
        table: Some(b),
        partials: None,
    };
    let f32acc = Profiles {
        name: "h25-f32",
        fp8: Profile::H25_F32,
        f16: Profile::F24,
    };
    let pol = common::kernels::policy(ctx);
    let e = gemm::prepare_gemm(ctx, &mut arena, pol, f32acc, &shape, &bindings)
        .expect_err("f32 accumulators have no integer kernel");
    assert!(e.to_string().contains("h25-f32"), "{e}");
    let bad = GemmShape { k: 24, ..shape };
    let e = gemm::prepare_gemm(ctx, &mut arena, pol, Profiles::NATIVE, &bad, &bindings)
        .expect_err("K must be a multiple of 16");
    assert!(e.to_string().contains("multiple of 16"), "{e}");
    let dual = GemmShape {
        epilogue: Epilogue::Dual,
        ..shape
    };
    let e = gemm::prepare_gemm(ctx, &mut arena, pol, Profiles::NATIVE, &dual, &bindings)
        .expect_err("dual needs a raw output");
    assert!(e.to_string().contains("raw output"), "{e}");
    let big = GemmShape {
        rows: 1000,
        ..shape
    };
    let e = gemm::prepare_gemm(ctx, &mut arena, pol, Profiles::NATIVE, &big, &bindings)
        .expect_err("bindings too small");
    assert!(e.to_string().contains("needs"), "{e}");
    let silu = GemmShape {
        epilogue: Epilogue::SiluE4,
        ..shape
    };
    let none = GemmBindings {
        table: None,
        ..bindings
    };
    let e = gemm::prepare_gemm(ctx, &mut arena, pol, Profiles::NATIVE, &silu, &none)
        .expect_err("SiLU needs the table");
    assert!(e.to_string().contains("epilogue table"), "{e}");
    let short = GemmBindings {
        table: Some(BufferBinding { range: 100, ..b }),
        ..bindings
    };
    let e = gemm::prepare_gemm(ctx, &mut arena, pol, Profiles::NATIVE, &silu, &short)
        .expect_err("a table of 100 bytes");
    assert!(e.to_string().contains("epilogue table"), "{e}");
    let split = GemmShape {
        partition: Some(16),
        epilogue: Epilogue::F16,
        ..shape
    };
    let e = gemm::prepare_gemm(ctx, &mut arena, pol, Profiles::NATIVE, &split, &bindings)
        .expect_err("split-K without partials");
    assert!(e.to_string().contains("partials"), "{e}");
    let small = GemmBindings {
        partials: Some(BufferBinding { range: 100, ..b }),
        ..bindings
    };
    let e = gemm::prepare_gemm(ctx, &mut arena, pol, Profiles::NATIVE, &split, &small)
        .expect_err("partials of 100 bytes");
    assert!(e.to_string().contains("gemm partials"), "{e}");
    assert!(gemm::check_profiles(Profiles::NATIVE).is_ok());
    assert!(gemm::check_profiles(Profiles::H25).is_ok());
}
