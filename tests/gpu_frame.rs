//! The GPU frame kernels against the CPU frame reference, byte for byte, on the harness's Vulkan
//! device (lavapipe in CI) with the validation layer: `prepare` and `compose` at 64x64 (field
//! 336x320) and 33x33 (field 320x320, repeated mirror), with and without history and motion,
//! the synthetic scene's motion, random sub-pixel motion, Reset, disabled and Intensity frames;
//! and the image bridge: import of every supported colour and motion format and export to every
//! supported output format, at a sub-rectangle of a larger image, with exact expected values; and
//! how long the bridge keeps its views of the caller's images.

mod common;

use std::sync::Arc;
use std::time::Instant;

use ash::vk;
use common::{bytes_to_words, Harness, HostBuffer, Rng, TestImage};
use openngx::gpu::{
    BufferBinding, CallerImage, CallerImages, DescriptorArena, GpuBuffer, GpuContext, MemoryKind,
    Recorder,
};
use openngx::nr::frame::prepare::features_f32;
use openngx::nr::frame::{
    compose, prepare, scene, FrameConstants, FrameInputs, FrameParams, FrameSetup,
    DEFAULT_BLEND_SCALE_BITS,
};
use openngx::nr::geometry::Geometry;
use openngx::nr::record::passes::{
    import_bands, record_compose, record_export, record_import_color, record_import_color_within,
    record_import_motion, record_import_motion_within, record_prepare, ComposeBindings,
    ComposePass, PassSize, PrepareBindings, PreparePass,
};
use openngx::nr::record::BindLimits;
use openngx::numerics::f16::{self, F16};

fn upload(ctx: &Arc<GpuContext>, name: &str, bytes: &[u8]) -> GpuBuffer {
    let mut b = GpuBuffer::new(ctx, name, bytes.len().max(16) as u64, MemoryKind::Upload)
        .expect("upload buffer");
    b.write(0, bytes).expect("write upload buffer");
    b
}

/// A readback buffer pre-filled with a sentinel word (so unwritten bytes are detectable).
fn readback(ctx: &Arc<GpuContext>, name: &str, bytes: u64) -> GpuBuffer {
    let mut b = GpuBuffer::new(ctx, name, bytes, MemoryKind::Readback).expect("readback buffer");
    let sentinel: Vec<u8> = (0..bytes).map(|i| [0xA5u8, 0x5A][i as usize % 2]).collect();
    b.write(0, &sentinel).expect("write sentinel");
    b
}

fn rgba_bytes(v: &[[f32; 4]]) -> Vec<u8> {
    v.iter()
        .flat_map(|p| p.iter().flat_map(|c| c.to_le_bytes()))
        .collect()
}

fn rg_bytes(v: &[[f32; 2]]) -> Vec<u8> {
    v.iter()
        .flat_map(|p| p.iter().flat_map(|c| c.to_le_bytes()))
        .collect()
}

fn half_bytes(v: &[[F16; 4]]) -> Vec<u8> {
    v.iter()
        .flat_map(|p| p.iter().flat_map(|c| c.to_le_bytes()))
        .collect()
}

fn halves(bytes: &[u8]) -> Vec<[F16; 4]> {
    bytes
        .chunks_exact(8)
        .map(|c| {
            [
                u16::from_le_bytes([c[0], c[1]]),
                u16::from_le_bytes([c[2], c[3]]),
                u16::from_le_bytes([c[4], c[5]]),
                u16::from_le_bytes([c[6], c[7]]),
            ]
        })
        .collect()
}

fn setup(enabled: bool, seed: u32, history_valid: bool) -> FrameSetup {
    FrameSetup {
        enabled,
        seed,
        history_valid,
        read_slot: 0,
        write_slot: 1,
    }
}

fn constants(
    g: &Geometry,
    params: &FrameParams,
    s: &FrameSetup,
    has_motion: bool,
) -> FrameConstants {
    FrameConstants::new(
        g,
        params,
        s,
        f16::to_f32(DEFAULT_BLEND_SCALE_BITS),
        has_motion,
    )
}

/// History content: another scene frame, rounded to halves (alpha 1), as compose would leave it.
fn history_image(w: u32, h: u32, frame: u32) -> Vec<[F16; 4]> {
    scene::render(w, h, frame)
        .proxy
        .iter()
        .map(|p| [p[0], p[1], p[2], 1.0].map(f16::from_f32_rtz))
        .collect()
}

/// Random sub-pixel motion in [-4, 4) px with every fraction bit pattern likely.
fn random_motion(n: usize, rng: &mut Rng) -> Vec<[f32; 2]> {
    (0..n)
        .map(|_| {
            [
                (rng.below(1 << 20) as f32 / (1 << 17) as f32) - 4.0,
                (rng.below(1 << 20) as f32 / (1 << 17) as f32) - 4.0,
            ]
        })
        .collect()
}

/// One frame's GPU inputs.
struct Case<'a> {
    name: &'a str,
    c: FrameConstants,
    proxy: &'a [[f32; 4]],
    motion: Option<&'a [[f32; 2]]>,
    history: Option<&'a [[F16; 4]]>,
}

/// Run prepare on the GPU and compare every feature word with the CPU reference; with
/// `limits`, in the launches those (lowered) limits need, which must be several.
fn check_prepare(
    h: &Harness,
    ctx: &Arc<GpuContext>,
    case: &Case,
    limits: Option<&BindLimits>,
) -> f64 {
    let c = &case.c;
    let inputs = FrameInputs {
        proxy: case.proxy,
        motion: case.motion,
        history: case.history,
    };
    let want = features_f32(&prepare(c, &inputs).expect("CPU prepare"));
    let proxy = upload(ctx, "proxy", &rgba_bytes(case.proxy));
    let motion = case.motion.map(|m| upload(ctx, "motion", &rg_bytes(m)));
    let history = case
        .history
        .map(|hh| upload(ctx, "history", &half_bytes(hh)));
    let features = readback(ctx, "features", want.len() as u64 * 4);
    let mut arena = DescriptorArena::new(ctx, 32, 128).expect("arena");
    let bindings = PrepareBindings {
        proxy: proxy.binding(),
        motion: motion.as_ref().map(GpuBuffer::binding),
        history: history.as_ref().map(GpuBuffer::binding),
        features: features.binding(),
    };
    let t = Instant::now();
    h.submit(|cmd| {
        // SAFETY: `cmd` is the harness's command buffer, recording, on `ctx`'s device (the
        // harness's context), from its compute family's pool, used only by this thread.
        let mut rec = unsafe { Recorder::new(ctx, cmd) }.expect("recorder");
        match limits {
            Some(l) => {
                let pass = PreparePass::new(ctx, &mut arena, &bindings, PassSize::of(c), l)
                    .expect("prepare pass");
                assert!(pass.launches() > 1, "{}: one launch", case.name);
                pass.record(&mut rec, c).expect("record prepare");
            }
            None => {
                record_prepare(ctx, &mut rec, &mut arena, &bindings, c).expect("record prepare")
            }
        }
        rec.to_host();
    });
    let ms = t.elapsed().as_secs_f64() * 1e3;
    let got = bytes_to_words(&features.read_all().expect("read features"));
    let fw = c.field_width as usize;
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        let (row, lane) = (i / 16, i % 16);
        assert_eq!(
            *g,
            w.to_bits(),
            "{}: pixel ({}, {}) lane {lane}: GPU {:#010x}, CPU {:#010x}",
            case.name,
            row % fw,
            row / fw,
            g,
            w.to_bits()
        );
    }
    assert_eq!(got.len(), want.len());
    // The history lanes really come from the reprojected history when it is usable.
    let from_history = want
        .chunks_exact(16)
        .filter(|l| l[7..10] != l[4..7])
        .count();
    let usable = c.history_valid != 0 && case.history.is_some();
    assert_eq!(
        from_history > c.field_width as usize * 10,
        usable,
        "{}: {from_history} pixels with history lanes",
        case.name
    );
    ms
}

fn random_head(rows: usize, rng: &mut Rng) -> Vec<[f32; 4]> {
    (0..rows)
        .map(|i| {
            let u = |rng: &mut Rng, span: f32| {
                (rng.below(1 << 24) as f32 / (1 << 23) as f32 - 1.0) * span
            };
            let logit = match i % 97 {
                0 => 0.0,
                1 => 120.0,
                2 => -120.0,
                3 => -87.5, // sigmoid near the f32 normal floor
                _ => u(rng, 12.0),
            };
            [u(rng, 2.0), u(rng, 2.0), u(rng, 2.0), logit]
        })
        .collect()
}

/// Run compose on the GPU and compare output and next history with the CPU reference; with
/// `limits` as in [`check_prepare`].
fn check_compose(
    h: &Harness,
    ctx: &Arc<GpuContext>,
    case: &Case,
    head: &[[f32; 4]],
    limits: Option<&BindLimits>,
) -> f64 {
    let c = &case.c;
    let inputs = FrameInputs {
        proxy: case.proxy,
        motion: case.motion,
        history: case.history,
    };
    let want = compose(c, &inputs, head).expect("CPU compose");
    // Whether the temporal blend changed anything (it must when history is usable).
    let unblended = compose(
        c,
        &FrameInputs {
            history: None,
            ..inputs
        },
        head,
    )
    .expect("CPU compose without history");
    let blended = match (&want.next_history, &unblended.next_history) {
        (Some(a), Some(b)) => a.iter().zip(b).filter(|(p, q)| p != q).count(),
        _ => 0,
    };
    let usable = c.enabled != 0 && c.history_valid != 0 && case.history.is_some();
    assert_eq!(
        blended > 100,
        usable,
        "{}: {blended} blended pixels",
        case.name
    );
    let n = (c.width * c.height) as u64;
    let proxy = upload(ctx, "proxy", &rgba_bytes(case.proxy));
    let motion = case.motion.map(|m| upload(ctx, "motion", &rg_bytes(m)));
    let history = case
        .history
        .map(|hh| upload(ctx, "history", &half_bytes(hh)));
    let head_buf = upload(ctx, "head", &rgba_bytes(head));
    let output = readback(ctx, "output", n * 8);
    let next = readback(ctx, "next history", n * 8);
    let mut arena = DescriptorArena::new(ctx, 32, 192).expect("arena");
    let bindings = ComposeBindings {
        proxy: proxy.binding(),
        motion: motion.as_ref().map(GpuBuffer::binding),
        history: history.as_ref().map(GpuBuffer::binding),
        head: head_buf.binding(),
        output: output.binding(),
        next_history: next.binding(),
    };
    let t = Instant::now();
    h.submit(|cmd| {
        // SAFETY: `cmd` is the harness's command buffer, recording, on `ctx`'s device (the
        // harness's context), from its compute family's pool, used only by this thread.
        let mut rec = unsafe { Recorder::new(ctx, cmd) }.expect("recorder");
        match limits {
            Some(l) => {
                let pass = ComposePass::new(ctx, &mut arena, &bindings, PassSize::of(c), l)
                    .expect("compose pass");
                assert!(pass.launches() > 1, "{}: one launch", case.name);
                pass.record(&mut rec, c).expect("record compose");
            }
            None => {
                record_compose(ctx, &mut rec, &mut arena, &bindings, c).expect("record compose")
            }
        }
        rec.to_host();
    });
    let ms = t.elapsed().as_secs_f64() * 1e3;
    let got_out = halves(&output.read_all().expect("read output"));
    let got_next = next.read_all().expect("read next history");
    let w = c.width as usize;
    for (i, (g, e)) in got_out.iter().zip(&want.output).enumerate() {
        assert_eq!(g, e, "{}: output at ({}, {})", case.name, i % w, i / w);
    }
    match &want.next_history {
        Some(want_next) => {
            for (i, (g, e)) in halves(&got_next).iter().zip(want_next).enumerate() {
                assert_eq!(
                    g,
                    e,
                    "{}: next history at ({}, {})",
                    case.name,
                    i % w,
                    i / w
                );
            }
        }
        None => {
            // Disabled: the next history is not written (the sentinel survives).
            assert!(
                got_next.chunks(2).all(|p| p == [0xA5, 0x5A]),
                "{}: a disabled frame wrote the history",
                case.name
            );
        }
    }
    ms
}

/// The frame cases of one size: first frame, scene with history + motion, random sub-pixel
/// motion with a motion scale, history without motion, Reset, and conditioning variants.
fn frame_cases(w: u32, hgt: u32, mut f: impl FnMut(&Case)) {
    let g = Geometry::new(w, hgt).expect("geometry");
    let n = (w * hgt) as usize;
    let now = scene::render(w, hgt, 10);
    let hist = history_image(w, hgt, 9);
    let mut rng = Rng(0x5EED_0000 + w as u64);
    let wild = random_motion(n, &mut rng);
    let on = FrameParams::default();

    f(&Case {
        name: "first frame",
        c: constants(&g, &on, &setup(true, 0, false), false),
        proxy: &now.proxy,
        motion: None,
        history: None,
    });
    f(&Case {
        name: "scene motion",
        c: constants(&g, &on, &setup(true, 7, true), true),
        proxy: &now.proxy,
        motion: Some(&now.motion),
        history: Some(&hist),
    });
    let scaled = FrameParams {
        mvec_scale: [0.75, -1.5],
        local_tone_strength: 0.3,
        skin_structure_strength: 0.45,
        ..on
    };
    f(&Case {
        name: "random sub-pixel motion, scaled",
        c: constants(&g, &scaled, &setup(true, 0xFFFF_FFF0, true), true),
        proxy: &now.proxy,
        motion: Some(&wild),
        history: Some(&hist),
    });
    let no_mask = FrameParams {
        use_auto_mask: false,
        local_structure_strength: 0.6,
        ..on
    };
    f(&Case {
        name: "history without motion, no auto mask",
        c: constants(&g, &no_mask, &setup(true, 3, true), false),
        proxy: &now.proxy,
        motion: None,
        history: Some(&hist),
    });
    f(&Case {
        name: "reset (history bound, not valid)",
        c: constants(&g, &on, &setup(true, 0, false), true),
        proxy: &now.proxy,
        motion: Some(&now.motion),
        history: Some(&hist),
    });
}

/// The device's limits with the binding range lowered to `bytes`.
fn lowered(ctx: &GpuContext, bytes: u64) -> BindLimits {
    BindLimits::of(ctx.capabilities()).lowered(Some(bytes))
}

#[test]
fn prepare_matches_the_cpu_reference() {
    let Some(h) = Harness::new() else { return };
    let ctx = h.context();
    for (w, hgt) in [(64u32, 64u32), (33, 33)] {
        frame_cases(w, hgt, |case| {
            let ms = check_prepare(&h, &ctx, case, None);
            println!(
                "prepare {w}x{hgt} {}: {ms:.1} ms (submit + wait)",
                case.name
            );
            // With a 1 MiB binding range the features (21 KiB per field row) take 10 launches
            // of 32 field rows, each binding the proxy rows its mirror reads (33x33: the field
            // repeats the image's rows).
            check_prepare(&h, &ctx, case, Some(&lowered(&ctx, 1 << 20)));
        });
    }
    drop(ctx);
    h.assert_validation_clean();
}

#[test]
fn compose_matches_the_cpu_reference() {
    let Some(h) = Harness::new() else { return };
    let ctx = h.context();
    // The binding ranges that split the head (5 KiB per row) into launches of 32 rows.
    for (w, hgt, range) in [(64u32, 64u32, 256 << 10), (33, 33, 166_000)] {
        let g = Geometry::new(w, hgt).expect("geometry");
        let mut rng = Rng(0xC0FFEE + w as u64);
        let head = random_head(g.field.area(), &mut rng);
        let banded = lowered(&ctx, range);
        frame_cases(w, hgt, |case| {
            let ms = check_compose(&h, &ctx, case, &head, None);
            println!(
                "compose {w}x{hgt} {}: {ms:.1} ms (submit + wait)",
                case.name
            );
            check_compose(&h, &ctx, case, &head, Some(&banded));
        });
        // Intensity, disabled, and a proxy outside 0..1 (disabled copies it truncated).
        let now = scene::render(w, hgt, 4);
        let hist = history_image(w, hgt, 3);
        let mut odd = now.proxy.clone();
        for (i, p) in odd.iter_mut().enumerate() {
            p[i % 4] = (i as f32 * 0.013) - 1.7;
        }
        for (name, intensity) in [("intensity 0.5", 0.5f32), ("intensity 0", 0.0)] {
            let p = FrameParams {
                intensity,
                ..FrameParams::default()
            };
            check_compose(
                &h,
                &ctx,
                &Case {
                    name,
                    c: constants(&g, &p, &setup(true, 1, true), true),
                    proxy: &odd,
                    motion: Some(&now.motion),
                    history: Some(&hist),
                },
                &head,
                None,
            );
        }
        let off = FrameParams {
            enabled: false,
            ..FrameParams::default()
        };
        let disabled = Case {
            name: "disabled",
            c: constants(&g, &off, &setup(false, 0, false), true),
            proxy: &odd,
            motion: Some(&now.motion),
            history: Some(&hist),
        };
        check_compose(&h, &ctx, &disabled, &head, None);
        check_compose(&h, &ctx, &disabled, &head, Some(&banded));
    }
    drop(ctx);
    h.assert_validation_clean();
}

// ------------------------------------------------------------------------------------------
// Image bridge.

const IMG_W: u32 = 45;
const IMG_H: u32 = 40;
const FEATURE: u32 = 33;
const BASE: (u32, u32) = (7, 4);

fn bridge_constants() -> FrameConstants {
    let g = Geometry::new(FEATURE, FEATURE).expect("geometry");
    let mut c = constants(&g, &FrameParams::default(), &setup(true, 0, false), true);
    (c.color_x, c.color_y) = BASE;
    (c.motion_x, c.motion_y) = (BASE.0 + 2, BASE.1 + 3);
    (c.output_x, c.output_y) = (BASE.0 + 1, BASE.1 + 2);
    c
}

fn barrier(
    h: &Harness,
    cmd: vk::CommandBuffer,
    image: vk::Image,
    old: vk::ImageLayout,
    new: vk::ImageLayout,
) {
    let b = vk::ImageMemoryBarrier::default()
        .src_access_mask(vk::AccessFlags::MEMORY_WRITE)
        .dst_access_mask(vk::AccessFlags::MEMORY_READ | vk::AccessFlags::MEMORY_WRITE)
        .old_layout(old)
        .new_layout(new)
        .src_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
        .dst_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
        .image(image)
        .subresource_range(vk::ImageSubresourceRange {
            aspect_mask: vk::ImageAspectFlags::COLOR,
            base_mip_level: 0,
            level_count: 1,
            base_array_layer: 0,
            layer_count: 1,
        });
    // SAFETY: callers pass a command buffer of the harness in the recording state (inside
    // `submit`) and one of the harness's live images; the barrier names its only mip and layer
    // and the layout the caller last left it in.
    unsafe {
        h.device.cmd_pipeline_barrier(
            cmd,
            vk::PipelineStageFlags::ALL_COMMANDS,
            vk::PipelineStageFlags::ALL_COMMANDS,
            vk::DependencyFlags::empty(),
            &[],
            &[],
            &[b],
        )
    };
}

fn copy_region(img: &TestImage) -> vk::BufferImageCopy {
    openngx_tools::devkit::copy_region(0, img.width, img.height)
}

/// Fill the whole image from `staging` and leave it in `layout`.
fn fill_image(
    h: &Harness,
    cmd: vk::CommandBuffer,
    img: &TestImage,
    staging: &HostBuffer,
    layout: vk::ImageLayout,
) {
    barrier(
        h,
        cmd,
        img.image,
        vk::ImageLayout::UNDEFINED,
        vk::ImageLayout::TRANSFER_DST_OPTIMAL,
    );
    // SAFETY: `cmd` is recording (as for `barrier`); the image was created with TRANSFER_DST
    // usage and was just moved to TRANSFER_DST_OPTIMAL; `staging` holds the whole image's texels
    // (the callers size it so), and the region is the whole image.
    unsafe {
        h.device.cmd_copy_buffer_to_image(
            cmd,
            staging.buffer,
            img.image,
            vk::ImageLayout::TRANSFER_DST_OPTIMAL,
            &[copy_region(img)],
        )
    };
    barrier(
        h,
        cmd,
        img.image,
        vk::ImageLayout::TRANSFER_DST_OPTIMAL,
        layout,
    );
}

fn caller(img: &TestImage, layout: vk::ImageLayout) -> CallerImage {
    CallerImage {
        image: img.image,
        format: img.format,
        width: img.width,
        height: img.height,
        mip_level: 0,
        array_layer: 0,
        layout,
    }
}

/// Import `texels` (raw bytes of the whole IMG_W x IMG_H image) and return the buffer's words.
fn run_import(
    h: &Harness,
    ctx: &Arc<GpuContext>,
    format: vk::Format,
    texels: &[u8],
    motion: bool,
    limits: Option<&BindLimits>,
) -> Vec<u32> {
    let c = bridge_constants();
    let img = h.image(
        IMG_W,
        IMG_H,
        format,
        vk::ImageUsageFlags::SAMPLED | vk::ImageUsageFlags::TRANSFER_DST,
    );
    let staging = h.host_buffer(texels.len() as u64);
    staging.write(0, texels);
    let channels = if motion { 2 } else { 4 };
    let dst = readback(ctx, "import", (FEATURE * FEATURE * channels * 4) as u64);
    let mut bridge = CallerImages::new(ctx);
    let layout = vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL;
    h.submit(|cmd| {
        fill_image(h, cmd, &img, &staging, layout);
        // SAFETY: `cmd` is the harness's command buffer, recording, on `ctx`'s device (the
        // harness's context), from its compute family's pool, used only by this thread.
        let mut rec = unsafe { Recorder::new(ctx, cmd) }.expect("recorder");
        let src = caller(&img, layout);
        let device = BindLimits::of(ctx.capabilities());
        let l = limits.unwrap_or(&device);
        let dst = dst.binding();
        if motion {
            record_import_motion_within(ctx, &mut rec, &mut bridge, &src, dst, &c, l)
        } else {
            record_import_color_within(ctx, &mut rec, &mut bridge, &src, dst, &c, l)
        }
        .expect("record import");
        rec.to_host();
    });
    assert_eq!(bridge.view_count(), 1);
    drop(bridge);
    bytes_to_words(&dst.read_all().expect("read import"))
}

/// Check imported words against `want(x, y)` (image coordinates) for the feature rectangle.
fn check_import(
    name: &str,
    got: &[u32],
    base: (u32, u32),
    channels: usize,
    want: impl Fn(u32, u32) -> Vec<f32>,
) {
    for y in 0..FEATURE {
        for x in 0..FEATURE {
            let i = (y * FEATURE + x) as usize * channels;
            let w = want(x + base.0, y + base.1);
            for ch in 0..channels {
                assert_eq!(
                    got[i + ch],
                    w[ch].to_bits(),
                    "{name}: pixel ({x}, {y}) channel {ch}: GPU {}, want {}",
                    f32::from_bits(got[i + ch]),
                    w[ch]
                );
            }
        }
    }
}

fn random_half(rng: &mut Rng, lo: f32, hi: f32) -> F16 {
    let u = rng.below(1 << 24) as f32 / (1 << 24) as f32;
    f16::from_f32_rne(lo + (hi - lo) * u)
}

#[test]
fn import_of_every_colour_and_motion_format_is_exact() {
    let Some(h) = Harness::new() else { return };
    let ctx = h.context();
    let c = bridge_constants();
    let base = (c.color_x, c.color_y);
    let n = (IMG_W * IMG_H) as usize;
    let mut rng = Rng(0x1A9_0123);

    // 8-bit formats: every code appears (random bytes over 7200 channels).
    let bytes: Vec<u8> = (0..n * 4).map(|_| rng.below(256) as u8).collect();
    let at = |x: u32, y: u32, k: usize| bytes[((y * IMG_W + x) * 4) as usize + k] as f32 / 255.0;
    for (format, name) in [
        (vk::Format::R8G8B8A8_UNORM, "RGBA8 UNORM"),
        (vk::Format::R8G8B8A8_SRGB, "RGBA8 SRGB"),
    ] {
        let got = run_import(&h, &ctx, format, &bytes, false, None);
        check_import(name, &got, base, 4, |x, y| {
            (0..4).map(|k| at(x, y, k)).collect()
        });
    }
    for (format, name) in [
        (vk::Format::B8G8R8A8_UNORM, "BGRA8 UNORM"),
        (vk::Format::B8G8R8A8_SRGB, "BGRA8 SRGB"),
    ] {
        let got = run_import(&h, &ctx, format, &bytes, false, None);
        check_import(name, &got, base, 4, |x, y| {
            vec![at(x, y, 2), at(x, y, 1), at(x, y, 0), at(x, y, 3)]
        });
    }

    // A2B10G10R10: R in bits 0-9, G 10-19, B 20-29, A 30-31.
    let packed: Vec<u32> = (0..n).map(|_| rng.next_u32()).collect();
    let bytes10: Vec<u8> = packed.iter().flat_map(|w| w.to_le_bytes()).collect();
    let got = run_import(
        &h,
        &ctx,
        vk::Format::A2B10G10R10_UNORM_PACK32,
        &bytes10,
        false,
        None,
    );
    check_import("A2B10G10R10", &got, base, 4, |x, y| {
        let w = packed[(y * IMG_W + x) as usize];
        vec![
            (w & 1023) as f32 / 1023.0,
            ((w >> 10) & 1023) as f32 / 1023.0,
            ((w >> 20) & 1023) as f32 / 1023.0,
            (w >> 30) as f32 / 3.0,
        ]
    });

    // RGBA16F: halves in [-2, 2] plus exact zeros and ones.
    let hs: Vec<F16> = (0..n * 4)
        .map(|i| match i % 53 {
            0 => 0x0000,
            1 => 0x8000,
            2 => 0x3C00,
            3 => 0x0001, // subnormal halves are normal f32: exact too
            4 => 0x83FF,
            _ => random_half(&mut rng, -2.0, 2.0),
        })
        .collect();
    let bytes16: Vec<u8> = hs.iter().flat_map(|v| v.to_le_bytes()).collect();
    let got = run_import(
        &h,
        &ctx,
        vk::Format::R16G16B16A16_SFLOAT,
        &bytes16,
        false,
        None,
    );
    check_import("RGBA16F", &got, base, 4, |x, y| {
        let i = ((y * IMG_W + x) * 4) as usize;
        (0..4).map(|k| f16::to_f32(hs[i + k])).collect()
    });

    // RGBA32F: arbitrary normal f32 in a wide range.
    let fs: Vec<f32> = (0..n * 4)
        .map(|_| {
            let e = 100 + rng.below(56);
            f32::from_bits((rng.below(2) << 31) | (e << 23) | rng.below(1 << 23))
        })
        .collect();
    let bytes32: Vec<u8> = fs.iter().flat_map(|v| v.to_le_bytes()).collect();
    let got = run_import(
        &h,
        &ctx,
        vk::Format::R32G32B32A32_SFLOAT,
        &bytes32,
        false,
        None,
    );
    check_import("RGBA32F", &got, base, 4, |x, y| {
        let i = ((y * IMG_W + x) * 4) as usize;
        fs[i..i + 4].to_vec()
    });
    // In two launches (rows 0-31 and 32) where the binding range holds 32 of the 33 rows.
    let two = lowered(&ctx, 32 * 33 * 16 + 300);
    assert_eq!(
        import_bands(FEATURE, FEATURE, 4, &two).map(|b| b.len()),
        Ok(2)
    );
    let got = run_import(
        &h,
        &ctx,
        vk::Format::R32G32B32A32_SFLOAT,
        &bytes32,
        false,
        Some(&two),
    );
    check_import("RGBA32F in two launches", &got, base, 4, |x, y| {
        let i = ((y * IMG_W + x) * 4) as usize;
        fs[i..i + 4].to_vec()
    });

    // Motion: RG16F and RG32F at the motion sub-rectangle.
    let mbase = (c.motion_x, c.motion_y);
    let mh: Vec<F16> = (0..n * 2)
        .map(|_| random_half(&mut rng, -40.0, 40.0))
        .collect();
    let mbytes: Vec<u8> = mh.iter().flat_map(|v| v.to_le_bytes()).collect();
    let got = run_import(&h, &ctx, vk::Format::R16G16_SFLOAT, &mbytes, true, None);
    check_import("RG16F motion", &got, mbase, 2, |x, y| {
        let i = ((y * IMG_W + x) * 2) as usize;
        vec![f16::to_f32(mh[i]), f16::to_f32(mh[i + 1])]
    });
    let mf: Vec<f32> = (0..n * 2)
        .map(|_| (rng.below(1 << 24) as f32 / (1 << 18) as f32) - 32.0)
        .collect();
    let mbytes: Vec<u8> = mf.iter().flat_map(|v| v.to_le_bytes()).collect();
    let got = run_import(&h, &ctx, vk::Format::R32G32_SFLOAT, &mbytes, true, None);
    check_import("RG32F motion", &got, mbase, 2, |x, y| {
        let i = ((y * IMG_W + x) * 2) as usize;
        mf[i..i + 2].to_vec()
    });
    let two = lowered(&ctx, 32 * 33 * 8 + 257);
    assert_eq!(
        import_bands(FEATURE, FEATURE, 2, &two).map(|b| b.len()),
        Ok(2)
    );
    let got = run_import(
        &h,
        &ctx,
        vk::Format::R32G32_SFLOAT,
        &mbytes,
        true,
        Some(&two),
    );
    check_import("RG32F motion in two launches", &got, mbase, 2, |x, y| {
        let i = ((y * IMG_W + x) * 2) as usize;
        mf[i..i + 2].to_vec()
    });
    drop(ctx);
    h.assert_validation_clean();
}

/// Export `out` (the feature's RGBA16F output) into an image pre-filled with `sentinel` texels
/// and return the whole image's bytes.
fn run_export(
    h: &Harness,
    ctx: &Arc<GpuContext>,
    format: vk::Format,
    texel_bytes: usize,
    out: &[[F16; 4]],
) -> Vec<u8> {
    let c = bridge_constants();
    let img = h.image(
        IMG_W,
        IMG_H,
        format,
        vk::ImageUsageFlags::STORAGE
            | vk::ImageUsageFlags::TRANSFER_SRC
            | vk::ImageUsageFlags::TRANSFER_DST,
    );
    let size = (IMG_W * IMG_H) as usize * texel_bytes;
    let staging = h.host_buffer(size as u64);
    staging.write(0, &vec![0x77u8; size]);
    let src = upload(ctx, "output", &half_bytes(out));
    let mut bridge = CallerImages::new(ctx);
    let layout = vk::ImageLayout::GENERAL;
    h.submit(|cmd| {
        fill_image(h, cmd, &img, &staging, layout);
        // SAFETY: `cmd` is the harness's command buffer, recording, on `ctx`'s device (the
        // harness's context), from its compute family's pool, used only by this thread.
        let mut rec = unsafe { Recorder::new(ctx, cmd) }.expect("recorder");
        record_export(
            ctx,
            &mut rec,
            &mut bridge,
            src.binding(),
            &caller(&img, layout),
            &c,
        )
        .expect("record export");
        barrier(
            h,
            cmd,
            img.image,
            layout,
            vk::ImageLayout::TRANSFER_SRC_OPTIMAL,
        );
        // SAFETY: `cmd` is recording; the image has TRANSFER_SRC usage and was just moved to
        // TRANSFER_SRC_OPTIMAL after the export; `staging` is `size` bytes, the whole image.
        unsafe {
            h.device.cmd_copy_image_to_buffer(
                cmd,
                img.image,
                vk::ImageLayout::TRANSFER_SRC_OPTIMAL,
                staging.buffer,
                &[copy_region(&img)],
            )
        };
        rec.to_host();
    });
    drop(bridge);
    staging.read()
}

#[test]
fn export_to_every_output_format_is_exact() {
    let Some(h) = Harness::new() else { return };
    let ctx = h.context();
    let c = bridge_constants();
    let (bx, by) = (c.output_x, c.output_y);
    let mut rng = Rng(0xE4_9017);
    // Output values as compose makes them (0..1), plus out-of-range and signed values that a
    // disabled frame can copy through from the proxy.
    let out: Vec<[F16; 4]> = (0..FEATURE * FEATURE)
        .map(|i| {
            let mut p = [0u16; 4];
            for (k, v) in p.iter_mut().enumerate() {
                *v = match (i as usize * 4 + k) % 41 {
                    0 => 0x0000,
                    1 => 0x3C00,
                    2 => 0xBC00, // -1
                    3 => 0x4000, // 2
                    4 => 0x8000,
                    5 => 0x0001, // subnormal halves
                    6 => 0x03FF,
                    _ => random_half(&mut rng, 0.0, 1.0),
                };
            }
            p
        })
        .collect();
    let inside = |x: u32, y: u32| -> Option<[F16; 4]> {
        if x >= bx && x < bx + FEATURE && y >= by && y < by + FEATURE {
            Some(out[((y - by) * FEATURE + (x - bx)) as usize])
        } else {
            None
        }
    };
    for (format, texel, name) in [
        (vk::Format::R16G16B16A16_SFLOAT, 8usize, "RGBA16F"),
        (vk::Format::R32G32B32A32_SFLOAT, 16, "RGBA32F"),
        (vk::Format::R8G8B8A8_UNORM, 4, "RGBA8 UNORM"),
    ] {
        let got = run_export(&h, &ctx, format, texel, &out);
        for y in 0..IMG_H {
            for x in 0..IMG_W {
                let at = ((y * IMG_W + x) as usize) * texel;
                let t = &got[at..at + texel];
                let want: Vec<u8> = match inside(x, y) {
                    None => vec![0x77; texel],
                    Some(p) => match texel {
                        8 => p.iter().flat_map(|v| v.to_le_bytes()).collect(),
                        16 => p
                            .iter()
                            .flat_map(|v| f16::to_f32(*v).to_le_bytes())
                            .collect(),
                        _ => p
                            .iter()
                            .map(|v| {
                                let f = f16::to_f32(*v).clamp(0.0, 1.0) as f64;
                                (f * 255.0 + 0.5).floor() as u8
                            })
                            .collect(),
                    },
                };
                assert_eq!(t, &want[..], "{name}: texel ({x}, {y})");
            }
        }
    }
    drop(ctx);
    h.assert_validation_clean();
}

#[test]
fn bridge_refuses_bad_formats_layouts_and_rectangles() {
    let Some(h) = Harness::new() else { return };
    let ctx = h.context();
    let c = bridge_constants();
    let img = h.image(
        IMG_W,
        IMG_H,
        vk::Format::R8G8B8A8_UNORM,
        vk::ImageUsageFlags::SAMPLED,
    );
    let dst = readback(&ctx, "dst", (FEATURE * FEATURE * 16) as u64);
    let mut bridge = CallerImages::new(&ctx);
    h.record_only(|cmd| {
        // SAFETY: `cmd` is the harness's command buffer, recording, on `ctx`'s device (the
        // harness's context), from its compute family's pool, used only by this thread.
        let mut rec = unsafe { Recorder::new(&ctx, cmd) }.expect("recorder");
        let ok = caller(&img, vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL);
        let e = record_import_motion(&ctx, &mut rec, &mut bridge, &ok, dst.binding(), &c)
            .expect_err("RGBA8 motion");
        assert!(e.to_string().contains("motion import"), "{e}");
        let bad_layout = CallerImage {
            layout: vk::ImageLayout::TRANSFER_DST_OPTIMAL,
            ..ok
        };
        let e = record_import_color(&ctx, &mut rec, &mut bridge, &bad_layout, dst.binding(), &c)
            .expect_err("layout");
        assert!(e.to_string().contains("SHADER_READ_ONLY_OPTIMAL"), "{e}");
        let far = FrameConstants {
            color_x: IMG_W - FEATURE + 1,
            ..c
        };
        let e = record_import_color(&ctx, &mut rec, &mut bridge, &ok, dst.binding(), &far)
            .expect_err("rectangle");
        assert!(e.to_string().contains("leaves the 45x40 image"), "{e}");
        let short = BufferBinding {
            range: 64,
            ..dst.binding()
        };
        let e = record_import_color(&ctx, &mut rec, &mut bridge, &ok, short, &c)
            .expect_err("short buffer");
        assert!(e.to_string().contains("needed"), "{e}");
        let e = record_export(&ctx, &mut rec, &mut bridge, dst.binding(), &ok, &c)
            .expect_err("export layout");
        assert!(e.to_string().contains("GENERAL"), "{e}");
        assert_eq!(rec.dispatch_count(), 0);
    });
    assert_eq!(bridge.view_count(), 0);
    // A good image: one view, reused by the next frame; forgetting the image destroys it.
    for _ in 0..2 {
        h.record_only(|cmd| {
            // SAFETY: `cmd` is the harness's command buffer, recording, on `ctx`'s device (the
            // harness's context), from its compute family's pool, used only by this thread.
            let mut rec = unsafe { Recorder::new(&ctx, cmd) }.expect("recorder");
            let ok = caller(&img, vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL);
            record_import_color(&ctx, &mut rec, &mut bridge, &ok, dst.binding(), &c)
                .expect("record import");
            assert_eq!(rec.dispatch_count(), 1);
        });
        assert_eq!(bridge.view_count(), 1);
    }
    bridge.forget_image(img.image);
    assert_eq!(bridge.view_count(), 0);
    drop(bridge);
    drop(ctx);
    h.assert_validation_clean();
}

/// The bridge's views follow the caller's images and the frames that used them: a view lives as
/// long as any frame that used it may still run, however many frames pass (a recorded, never
/// submitted frame keeps it), and goes once those frames are seen complete and its image has been
/// unused for the idle count; a handle that comes back with another caller view (the image was
/// destroyed and recreated) gets a fresh view, while the old one is retired until its own frames
/// are done.
#[test]
fn bridge_views_follow_their_images() {
    use ash::vk::Handle;
    const IDLE: u64 = 2;
    let Some(h) = Harness::new() else { return };
    let ctx = h.context();
    let c = bridge_constants();
    let img = h.image(
        IMG_W,
        IMG_H,
        vk::Format::R16G16B16A16_SFLOAT,
        vk::ImageUsageFlags::SAMPLED,
    );
    let dst = readback(&ctx, "dst", (FEATURE * FEATURE * 16) as u64);
    let src = caller(&img, vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL);
    // The frames are submitted: the image must be in the layout `src` states (its texels are
    // whatever the memory holds; only the views' lifetimes are under test).
    h.submit(|cmd| {
        h.barrier(
            cmd,
            img.image,
            (vk::ImageLayout::UNDEFINED, src.layout),
            (vk::AccessFlags::empty(), vk::AccessFlags::SHADER_READ),
            (
                vk::PipelineStageFlags::TOP_OF_PIPE,
                vk::PipelineStageFlags::COMPUTE_SHADER,
            ),
        )
    });
    // One frame: it imports `img` (known to the caller through its view `caller_view`) or, with
    // `None`, nothing; it is submitted and waited for, or (`submit` false) recorded and dropped.
    let frame = |images: &mut CallerImages, caller_view: Option<u64>, submit: bool| {
        let body = |cmd: vk::CommandBuffer| {
            // SAFETY: `cmd` is the harness's command buffer, recording, on `ctx`'s device (the
            // harness's context), from its compute family's pool, used only by this thread.
            let mut rec = unsafe { Recorder::new(&ctx, cmd) }.expect("recorder");
            if let Some(v) = caller_view {
                images.track(&src, vk::ImageView::from_raw(v));
                record_import_color(&ctx, &mut rec, images, &src, dst.binding(), &c)
                    .expect("record import");
            }
            images.end_frame(&mut rec, IDLE).expect("end frame");
        };
        if submit {
            h.submit(body)
        } else {
            h.record_only(body)
        }
    };

    // Submitted frames: one view for an image used every frame, gone after IDLE unused frames.
    let mut images = CallerImages::new(&ctx);
    frame(&mut images, Some(1), true);
    frame(&mut images, Some(1), true);
    assert_eq!(
        images.view_count(),
        1,
        "one view for an image used every frame"
    );
    for _ in 0..IDLE - 1 {
        frame(&mut images, None, true);
        assert_eq!(images.view_count(), 1, "kept while recently used");
    }
    frame(&mut images, None, true);
    assert_eq!(images.view_count(), 0, "unused for {IDLE} frames, all done");
    // Each frame looks before its own submission, so the last one is the only pending frame.
    assert_eq!(
        images.pending_frames(),
        1,
        "earlier submitted frames seen complete"
    );

    // A frame that never completes keeps its view, however many frames pass.
    let mut images = CallerImages::new(&ctx);
    frame(&mut images, Some(1), false);
    for _ in 0..IDLE + 8 {
        frame(&mut images, None, true);
    }
    assert_eq!(
        images.view_count(),
        1,
        "a pending frame may still use the view"
    );
    assert_eq!(
        images.pending_frames(),
        2,
        "the unsubmitted frame and the last one"
    );
    drop(images);

    // Recreated image, old frames done: the retired view goes at once.
    let mut images = CallerImages::new(&ctx);
    frame(&mut images, Some(1), true);
    frame(&mut images, Some(2), true);
    assert_eq!(images.view_count(), 1, "the retired view's frames are done");
    drop(images);

    // Recreated image, old frame pending: the retired view stays beside the fresh one, and
    // outlives it.
    let mut images = CallerImages::new(&ctx);
    frame(&mut images, Some(1), false);
    frame(&mut images, Some(2), true);
    assert_eq!(
        images.view_count(),
        2,
        "the recreated image's view beside the retired one"
    );
    for _ in 0..IDLE + 2 {
        frame(&mut images, None, true);
    }
    assert_eq!(
        images.view_count(),
        1,
        "only the retired view, still pending, is left"
    );
    drop(images);
    drop(ctx);
    h.assert_validation_clean();
}
