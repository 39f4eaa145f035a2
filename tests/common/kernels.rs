//! Helpers of the kernel tests (`gpu_attention`, `gpu_elementwise`, `gpu_gemm`): a sparse model
//! directory holding only the weight slices a test writes, staging of inputs at skewed offsets,
//! one record + submit + read-back of a kernel on the harness's device, and the kernel policies
//! (the device's, and the one that runs the tensor route's kernels here).

use std::collections::HashMap;
use std::io::{Seek, SeekFrom, Write};
use std::sync::Arc;
use std::time::{Duration, Instant};

use openngx::gpu::{
    BufferBinding, DescriptorArena, GpuBuffer, GpuContext, GpuError, MemoryKind, Recorder,
};
use openngx::model::blocks::{BLOCK_COUNT, STAGES};
use openngx::model::layout::{self, RecordId};
use openngx::model::manifest::{Manifest, Stage, Tensor, Totals};
use openngx::model::{LoadOptions, Model};
use openngx::nr::graph::WeightRef;
use openngx::nr::record::KernelPolicy;

use super::Harness;

/// A model directory whose stage files are sparse zeros except the slices a test writes.
pub struct SparseModel {
    _dir: tempfile::TempDir,
    pub model: Model,
}

pub fn sparse_model(writes: &[(WeightRef, Vec<u8>)]) -> SparseModel {
    let dir = tempfile::tempdir().unwrap();
    let model_dir = dir.path().join("model");
    std::fs::create_dir_all(&model_dir).unwrap();
    let mut stages = Vec::new();
    let mut tensors = Vec::new();
    let mut at: HashMap<RecordId, (&str, u64)> = HashMap::new();
    for id in STAGES {
        let mut offset = 0u64;
        for spec in layout::records().iter().filter(|r| r.stage == id) {
            tensors.push(Tensor {
                name: spec.id.to_string(),
                block: spec.id.block as u64,
                layer: spec.id.layer as u64,
                parameter: spec.id.param.as_str().to_string(),
                stage: id.to_string(),
                stage_offset: offset,
                byte_length: spec.len as u64,
            });
            at.insert(spec.id, (id, offset));
            offset += spec.len as u64;
        }
        std::fs::File::create(model_dir.join(id))
            .unwrap()
            .set_len(offset)
            .unwrap();
        stages.push(Stage {
            id: id.to_string(),
            file: id.to_string(),
            packed_byte_length: offset,
            sha256: "0".repeat(64),
        });
    }
    for (w, bytes) in writes {
        let (stage, base) = at[&RecordId::layer(w.block, w.layer)];
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .open(model_dir.join(stage))
            .unwrap();
        f.seek(SeekFrom::Start(base + w.offset as u64)).unwrap();
        f.write_all(bytes).unwrap();
    }
    let manifest = Manifest {
        generator: Some("openngx kernel test".into()),
        network: None,
        totals: Totals {
            block_count: BLOCK_COUNT as u64,
            tensor_count: None,
            byte_length: None,
        },
        stages,
        tensors,
    };
    std::fs::write(dir.path().join("manifest.json"), manifest.to_json()).unwrap();
    let model = Model::load(dir.path(), LoadOptions { verify_sha: false }).unwrap();
    SparseModel { _dir: dir, model }
}

/// Bytes laid out for one buffer; every slice starts `skew` bytes past a 256-byte boundary.
#[derive(Default)]
pub struct Staging {
    pub bytes: Vec<u8>,
}

impl Staging {
    pub fn put(&mut self, data: &[u8], skew: usize) -> (u64, u64) {
        let off = self.bytes.len().div_ceil(256) * 256 + 256 + skew;
        self.bytes.resize(off, 0);
        self.bytes.extend_from_slice(data);
        (off as u64, data.len() as u64)
    }
    pub fn reserve(&mut self, len: usize, skew: usize) -> (u64, u64) {
        self.put(&vec![0u8; len], skew)
    }
}

pub fn range(buf: &GpuBuffer, slot: (u64, u64)) -> BufferBinding {
    buf.range(slot.0, slot.1).unwrap()
}

/// Upload `inputs`, poison an output buffer shaped like `outputs`, record with `f`, run it.
pub fn run_gpu(
    h: &Harness,
    ctx: &Arc<GpuContext>,
    inputs: &Staging,
    outputs: &Staging,
    f: impl FnOnce(
        &mut Recorder<'_>,
        &mut DescriptorArena,
        &GpuBuffer,
        &GpuBuffer,
    ) -> Result<(), GpuError>,
) -> (Vec<u8>, Duration) {
    let mut input = GpuBuffer::new(
        ctx,
        "test inputs",
        inputs.bytes.len() as u64,
        MemoryKind::Upload,
    )
    .unwrap();
    input.write(0, &inputs.bytes).unwrap();
    let out_len = outputs.bytes.len().div_ceil(4) * 4;
    let output = GpuBuffer::new(ctx, "test outputs", out_len as u64, MemoryKind::Readback).unwrap();
    let mut arena = DescriptorArena::new(ctx, 4, 24).unwrap();
    let start = Instant::now();
    let mut result = Ok(());
    let mut recorded = start;
    h.submit(|cmd| {
        // SAFETY: the harness's command buffer is recording on the context's device.
        let mut rec = unsafe { Recorder::new(ctx, cmd) }.unwrap();
        rec.fill(output.binding(), 0xA5A5_A5A5).unwrap();
        rec.transfer_to_compute();
        result = f(&mut rec, &mut arena, &input, &output);
        rec.to_host();
        recorded = Instant::now();
    });
    // Recording includes building the pipeline (the driver's shader compile); report the run.
    let took = recorded.elapsed();
    println!("  record (pipeline build) {:?}", recorded - start);
    result.unwrap();
    (output.read_all().unwrap(), took)
}

pub fn slice(bytes: &[u8], slot: (u64, u64)) -> &[u8] {
    &bytes[slot.0 as usize..(slot.0 + slot.1) as usize]
}

/// The kernel builds the tests run on `ctx`'s device: the fast ones where the device has them,
/// the portable ones under `OPENNGX_PORTABLE_KERNELS=1` (as a network created in this process
/// would).
pub fn policy(ctx: &openngx::gpu::GpuContext) -> KernelPolicy {
    KernelPolicy::resolve(
        ctx.capabilities(),
        openngx::nr::record::KernelBuild::from_env(),
    )
}

/// The policy that runs the tensor route's cooperative-matrix kernels here: the device's builds
/// where the tensor route runs and the creation probe identifies h25 (the H200 or H100), else
/// their emulated builds (`KernelPolicy::with_emulated_tiles`: every MMA in integer arithmetic
/// as the H25 model, the device builds' bytes), and a line saying which.
pub fn tile_policy(ctx: &Arc<GpuContext>) -> KernelPolicy {
    use openngx::nr::route::TensorRoute;
    use openngx::numerics::Profile;
    let missing = TensorRoute::missing(ctx.capabilities());
    let why = if missing.is_empty() {
        let id = openngx::nr::route::tensor::probe::identify(ctx);
        if id.matched == Some(Profile::H25) {
            println!("cooperative-matrix kernels: the device's builds (probe: h25)");
            return policy(ctx).with_tensor_cores();
        }
        format!(
            "its cooperative matrix is not identified as h25: {}",
            id.reason
        )
    } else {
        format!("it lacks: {}", missing.join("; "))
    };
    println!(
        "cooperative-matrix kernels: their emulated builds (integer MMAs in h25); the device \
         cannot run the tensor route's own: {why}"
    );
    KernelPolicy::PORTABLE.with_emulated_tiles()
}
