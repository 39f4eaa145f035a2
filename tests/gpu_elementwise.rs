//! The elementwise kernels (`nr/pool`, `nr/upmerge`, `nr/post_blend`) against the CPU reference
//! op (`Executor::exec` of the same graph node), byte for byte, on the harness's device (lavapipe
//! in CI) with the validation layer: every Pool, UpMerge and PostBlend node of the 64x64 schedule
//! (pools that zero-fill past the input level, merges with and without the raw f16 output).
//!
//! Inputs are random f16 bit patterns (subnormals, ±0, inf, NaN included) mixed with moderate
//! values, random E4M3 codes (NaN codes included) and scale vectors with adversarial halves.
//! Bindings start at offsets that are not multiples of the storage-buffer alignment; outputs are
//! poisoned first so unwritten elements fail too.

mod common;

use common::kernels::{policy, range, run_gpu, slice, sparse_model, Staging};
use common::{Harness, Rng};
use openngx::gpu::{DescriptorArena, GpuBuffer, GpuError, MemoryKind, Recorder};
use openngx::nr::geometry::{Geometry, Size};
use openngx::nr::graph::{self, DType, Graph, Node, Op};
use openngx::nr::record::elementwise::{record_pool, record_post_blend, record_upmerge};
use openngx::nr::reference::{Executor, TensorData, Weights};
use openngx::numerics::Profiles;

// ------------------------------------------------------------------------------------------------
// Support: test data (the sparse model and staging are in common::kernels).

fn node<'g>(g: &'g Graph, label: &str) -> &'g Node {
    g.nodes
        .iter()
        .find(|n| n.label == label)
        .unwrap_or_else(|| panic!("graph has no node `{label}`"))
}

/// Index and count of the first differing bytes, for a readable failure.
fn assert_bytes_eq(what: &str, got: &[u8], want: &[u8], row_bytes: usize) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    let diffs: Vec<usize> = (0..got.len()).filter(|&i| got[i] != want[i]).collect();
    assert!(
        diffs.is_empty(),
        "{what}: {} of {} bytes differ; first at row {} byte {}: gpu {:#04x} cpu {:#04x}",
        diffs.len(),
        got.len(),
        diffs[0] / row_bytes,
        diffs[0] % row_bytes,
        got[diffs[0]],
        want[diffs[0]]
    );
}

/// Distinct values in a byte tensor (to show the data is informative, not all one code).
fn distinct(v: &[u8]) -> usize {
    let mut seen = [false; 256];
    v.iter().for_each(|&b| seen[b as usize] = true);
    seen.iter().filter(|&&s| s).count()
}

/// f16 halves: moderate values mostly, any bit pattern (inf, NaN, subnormals) in 1 of 8.
fn halves(rng: &mut Rng, n: usize) -> Vec<u16> {
    (0..n)
        .map(|_| match rng.below(8) {
            0 => rng.below(0x10000) as u16,
            _ => {
                let sign = (rng.below(2) as u16) << 15;
                sign | (((8 + rng.below(10)) as u16) << 10) | rng.below(0x400) as u16
            }
        })
        .collect()
}

/// E4M3 codes, every code possible (NaN codes and ±0 included).
fn codes(rng: &mut Rng, n: usize) -> Vec<u8> {
    (0..n).map(|_| rng.below(256) as u8).collect()
}

/// A scale vector of `c` halves: values in [0.5, 1) with ±0, a subnormal, inf, NaN and a large
/// value at fixed channels.
fn scale(rng: &mut Rng, c: usize) -> Vec<u8> {
    let special = [0x0000u16, 0x8000, 0x0001, 0x7C00, 0x7E00, 0x5BFF];
    (0..c)
        .map(|i| {
            special
                .get(i)
                .copied()
                .unwrap_or(0x3800 | rng.below(0x400) as u16)
        })
        .flat_map(|h| h.to_le_bytes())
        .collect()
}

fn le_bytes(v: &[u16]) -> Vec<u8> {
    v.iter().flat_map(|h| h.to_le_bytes()).collect()
}

fn out_bytes(out: &[(usize, TensorData)], t: usize) -> Vec<u8> {
    match out.iter().find(|(id, _)| *id == t) {
        Some((_, TensorData::E4(v))) => v.clone(),
        Some((_, TensorData::F16(v))) => le_bytes(v),
        _ => panic!("reference did not write tensor {t}"),
    }
}

fn size_of(g: &Graph, t: usize) -> Size {
    let (w, h) = g.dims(t);
    Size::new(w as u32, h as u32)
}

fn graph_64() -> Graph {
    graph::build(&Geometry::new(64, 64).unwrap())
}

#[test]
fn pool_every_transition() {
    let Some(h) = Harness::new() else { return };
    let ctx = h.context();
    let g = graph_64();
    let sm = sparse_model(&[]);
    let weights = Weights::new(&sm.model);
    let mut rng = Rng(0x600D);
    let mut zero_filled = 0;
    let pools: Vec<&Node> = g
        .nodes
        .iter()
        .filter(|n| matches!(n.op, Op::Pool { .. }))
        .collect();
    assert_eq!(
        pools.len(),
        6,
        "transitions 0-1, 4-5, 8-9, 14-15, 22-23, 30-31"
    );
    for n in pools {
        let Op::Pool { input, out } = n.op else {
            unreachable!()
        };
        let c = g.tensors[input].channels;
        let (si, so_) = (size_of(&g, input), size_of(&g, out));
        let x = halves(&mut rng, g.rows(input) * c);
        let mut ex = Executor::new(&g, &weights, Profiles::NATIVE);
        ex.set_tensor(input, TensorData::F16(x.clone())).unwrap();
        let want = out_bytes(&ex.exec(n).unwrap(), out);

        // Skewed tensors (halves and bytes), then aligned ones (whole words).
        for aligned in [false, true] {
            let skew = |s: usize| if aligned { 0 } else { s };
            let mut ins = Staging::default();
            let sx = ins.put(&le_bytes(&x), skew(2));
            let mut outs = Staging::default();
            let so = outs.reserve(g.rows(out) * c, skew(3));
            let (got, took) = run_gpu(&h, &ctx, &ins, &outs, |rec, arena, i, o| {
                record_pool(
                    &ctx,
                    rec,
                    arena,
                    policy(&ctx),
                    range(i, sx),
                    range(o, so),
                    si,
                    so_,
                    c as u32,
                )
            });
            println!(
                "{} ({}x{} -> {}x{}, C{c}, aligned {aligned}): gpu {took:?}",
                n.label, si.w, si.h, so_.w, so_.h
            );
            if 2 * so_.w > si.w || 2 * so_.h > si.h {
                zero_filled += 1;
            }
            assert!(distinct(&want) > 100, "{}: not informative", n.label);
            assert_bytes_eq(
                &format!("{} (aligned {aligned})", n.label),
                slice(&got, so),
                &want,
                c,
            );
        }
    }
    assert!(zero_filled > 0, "no pool crossed the input edge");
}

#[test]
fn upmerge_every_decoder_transition() {
    let Some(h) = Harness::new() else { return };
    let ctx = h.context();
    let g = graph_64();
    let mut rng = Rng(0x3E26);
    let merges: Vec<&Node> = g
        .nodes
        .iter()
        .filter(|n| matches!(n.op, Op::UpMerge { .. }))
        .collect();
    assert_eq!(merges.len(), 5, "merges into blocks 39, 48, 56, 62, 66");
    let mut with_raw = 0;
    for n in merges {
        let Op::UpMerge {
            low,
            skip,
            scale: sref,
            out,
            out_raw,
        } = n.op
        else {
            unreachable!()
        };
        let c = g.tensors[skip].channels;
        let skip_dtype = g.tensors[skip].dtype;
        let lowd = halves(&mut rng, g.rows(low) * c);
        let skipd = match skip_dtype {
            DType::E4 => TensorData::E4(codes(&mut rng, g.rows(skip) * c)),
            _ => TensorData::F16(halves(&mut rng, g.rows(skip) * c)),
        };
        let skip_bytes = match &skipd {
            TensorData::E4(v) => v.clone(),
            TensorData::F16(v) => le_bytes(v),
            TensorData::F32(_) => unreachable!(),
        };
        let sc = scale(&mut rng, c);
        let sm = sparse_model(&[(sref, sc.clone())]);
        let weights = Weights::new(&sm.model);
        let mut ex = Executor::new(&g, &weights, Profiles::NATIVE);
        ex.set_tensor(low, TensorData::F16(lowd.clone())).unwrap();
        ex.set_tensor(skip, skipd).unwrap();
        let res = ex.exec(n).unwrap();

        // Skewed tensors (halves and bytes), then aligned ones (whole words; the scale stays
        // 2-aligned as weight slices may be).
        for aligned in [false, true] {
            let skew = |s: usize| if aligned { 0 } else { s };
            let mut ins = Staging::default();
            let sl = ins.put(&le_bytes(&lowd), skew(2));
            let ss = ins.put(&skip_bytes, skew(1));
            let sw = ins.put(&sc, 10);
            let mut outs = Staging::default();
            let so = outs.reserve(g.rows(out) * c, skew(7));
            let sr = outs.reserve(g.rows(out) * c * 2, skew(6));
            let (got, took) = run_gpu(&h, &ctx, &ins, &outs, |rec, arena, i, o| {
                record_upmerge(
                    &ctx,
                    rec,
                    arena,
                    policy(&ctx),
                    range(i, sl),
                    range(i, ss),
                    skip_dtype,
                    range(i, sw),
                    range(o, so),
                    out_raw.map(|_| range(o, sr)),
                    size_of(&g, low),
                    size_of(&g, out),
                    c as u32,
                )
            });
            println!(
                "{} (C{c}, raw {}, aligned {aligned}): gpu {took:?}",
                n.label,
                out_raw.is_some()
            );
            let want = out_bytes(&res, out);
            assert!(distinct(&want) > 100, "{}: not informative", n.label);
            assert_bytes_eq(&n.label, slice(&got, so), &want, c);
            match out_raw {
                Some(r) => {
                    with_raw += 1;
                    assert_bytes_eq(
                        &format!("{} raw", n.label),
                        slice(&got, sr),
                        &out_bytes(&res, r),
                        2 * c,
                    );
                }
                // Without a raw output nothing may be written there.
                None => assert!(slice(&got, sr).iter().all(|&b| b == 0xA5)),
            }
        }
    }
    assert_eq!(
        with_raw, 2,
        "only block 66 keeps the raw f16 merge (two placements)"
    );
}

#[test]
fn post_blend_block_70() {
    let Some(h) = Harness::new() else { return };
    let ctx = h.context();
    let g = graph_64();
    let n = node(&g, "block-70.blend");
    let Op::PostBlend {
        low,
        skip,
        input_scale,
        adapter_scale,
        out_raw,
        out,
    } = n.op
    else {
        panic!("block-70.blend is not a post blend");
    };
    let mut rng = Rng(0xB1E4D);
    let lowd = codes(&mut rng, g.rows(low) * 32);
    let skipd = codes(&mut rng, g.rows(skip) * 32);
    let (is, asc) = (scale(&mut rng, 32), scale(&mut rng, 32));
    let sm = sparse_model(&[(input_scale, is.clone()), (adapter_scale, asc.clone())]);
    let weights = Weights::new(&sm.model);
    let mut ex = Executor::new(&g, &weights, Profiles::NATIVE);
    ex.set_tensor(low, TensorData::E4(lowd.clone())).unwrap();
    ex.set_tensor(skip, TensorData::E4(skipd.clone())).unwrap();
    let res = ex.exec(n).unwrap();

    // Skewed tensors (bytes and halves), then aligned ones (whole words).
    for aligned in [false, true] {
        let skew = |s: usize| if aligned { 0 } else { s };
        let mut ins = Staging::default();
        let sl = ins.put(&lowd, skew(3));
        let ss = ins.put(&skipd, skew(1));
        let si = ins.put(&is, 2);
        let sa = ins.put(&asc, 14);
        let mut outs = Staging::default();
        let sr = outs.reserve(g.rows(out) * 64, skew(2));
        let so = outs.reserve(g.rows(out) * 32, skew(5));
        let (got, took) = run_gpu(&h, &ctx, &ins, &outs, |rec, arena, i, o| {
            record_post_blend(
                &ctx,
                rec,
                arena,
                policy(&ctx),
                range(i, sl),
                range(i, ss),
                range(i, si),
                range(i, sa),
                range(o, sr),
                range(o, so),
                size_of(&g, low),
                size_of(&g, out),
            )
        });
        println!("block-70.blend (aligned {aligned}): gpu {took:?}");
        let want = out_bytes(&res, out);
        assert!(distinct(&want) > 100, "post blend: not informative");
        assert_bytes_eq("post blend", slice(&got, so), &want, 32);
        assert_bytes_eq(
            "post blend raw",
            slice(&got, sr),
            &out_bytes(&res, out_raw),
            64,
        );
    }
}

#[test]
fn rejects_bad_shapes() {
    let Some(h) = Harness::new() else { return };
    let ctx = h.context();
    let buf = GpuBuffer::new(&ctx, "small", 4096, MemoryKind::DeviceLocal).unwrap();
    let mut arena = DescriptorArena::new(&ctx, 4, 24).unwrap();
    let b = buf.binding();
    let odd = buf.range(1, 1024).unwrap();
    let mut errors = Vec::new();
    h.record_only(|cmd| {
        // SAFETY: the harness's command buffer is recording on the context's device.
        let mut rec = unsafe { Recorder::new(&ctx, cmd) }.unwrap();
        // 3 channels; a too-small output; an f16 input at an odd offset; an f32 skip; a low
        // level that does not cover the upsampled one.
        let s8 = Size::new(8, 8);
        errors.push(record_pool(
            &ctx,
            &mut rec,
            &mut arena,
            policy(&ctx),
            b,
            b,
            s8,
            Size::new(4, 4),
            3,
        ));
        errors.push(record_pool(
            &ctx,
            &mut rec,
            &mut arena,
            policy(&ctx),
            b,
            odd,
            Size::new(16, 8),
            Size::new(8, 4),
            32,
        ));
        errors.push(record_pool(
            &ctx,
            &mut rec,
            &mut arena,
            policy(&ctx),
            odd,
            b,
            Size::new(4, 4),
            Size::new(2, 2),
            4,
        ));
        errors.push(record_upmerge(
            &ctx,
            &mut rec,
            &mut arena,
            policy(&ctx),
            b,
            b,
            DType::F32,
            b,
            b,
            None,
            Size::new(4, 4),
            s8,
            4,
        ));
        errors.push(record_post_blend(
            &ctx,
            &mut rec,
            &mut arena,
            policy(&ctx),
            b,
            b,
            b,
            b,
            b,
            b,
            Size::new(3, 4),
            Size::new(8, 8),
        ));
        assert_eq!(rec.dispatch_count(), 0);
    });
    for (i, e) in errors.into_iter().enumerate() {
        assert!(
            matches!(e, Err(GpuError::Invalid { .. })),
            "case {i}: expected a typed refusal, got {e:?}"
        );
    }
    drop(arena);
    drop(buf);
    drop(ctx);
}
