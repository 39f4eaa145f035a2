//! Dynamic resolution of feature 13 (Ray Reconstruction): frames whose render size
//! (`DLSS.Render.Subrect.Dimensions`) changes within the creation's bounds, docs/rr.md
//! "Dynamic resolution".
//!
//! * The CPU reference (`CpuFrame::set_render_size`) runs a feature created at 64x48 -> 96x72
//!   over frames at 64x48, 56x40, 32x32 (the smallest size), 64x48, 56x40 (a Reset) and 56x40
//!   again, the temporal state (history, frame counter) carried across every change; the
//!   outputs' SHA-256 are committed here (a change of the numerics or of the carry rule shows as
//!   a mismatch), and the carried history is shown to be read (frame 1 differs from a fresh
//!   pipeline's first frame on the same inputs).
//! * Then (one test, so that the CPU frames run once) the same frames through the exported C
//!   entry points on the harness's device (lavapipe in CI, validation and synchronization
//!   validation on), each frame's guides in the top-left W'xH' of the caller's 64x48 images:
//!   every `Output` equals the CPU's byte for byte. Sizes outside the bounds (31x48, 64x49,
//!   72x48) are refused with `FAIL_InvalidParameter` before anything is recorded; the frame
//!   after them still matches, so a refusal left the feature as it was. `SizeInBytes` follows
//!   the current size (less at 32x32, the same at 64x48 again) and is 0 after the release.

mod common;

use std::ffi::c_void;
use std::time::Instant;

use ash::vk;
use common::ngx::ok;
use common::rr::{c, range, size_in_bytes, upload_guide, GuideImage};
use common::Harness;
use openngx::ngx::abi::*;
use openngx::ngx::exports::*;
use openngx::ngx::param_exports::*;
use openngx::rr::cpu_frame::{CpuFrame, FrameParams};
use openngx::rr::feature::Guide;
use openngx::rr::frame::scene;
use openngx::rr::geometry::{Geometry, Size};
use openngx::rr::graph::guide::LANES;
use openngx::rr::keys;
use openngx::rr::preset::Preset;
use openngx::rr::weights::model::RrModel;
use openngx_tools::devkit::ngx_resource;
use openngx_tools::rr_synth::{write_model, RrSynthParams};
use sha2::{Digest, Sha256};

const RENDER: Size = Size::new(64, 48);
const OUTPUT: Size = Size::new(96, 72);

/// The sequence: each frame's render size and whether it is a Reset.
const FRAMES: [(Size, bool); 6] = [
    (Size::new(64, 48), false),
    (Size::new(56, 40), false),
    (Size::new(32, 32), false),
    (Size::new(64, 48), false),
    (Size::new(56, 40), true),
    // The same size again: the frame built at the change keeps its own history.
    (Size::new(56, 40), false),
];

/// SHA-256 of each frame's `output` bytes (seed-0 synthetic model, preset E). Frame 0 (no size
/// change yet) is the golden sequence's `f0.output`
/// (`tests/golden/rr-reference-64x48-96x72-seed0.txt`).
const DIGESTS: [&str; 6] = [
    "ed367005e38d6cc2918bae7ec2a4c501d7e1e28efba1ba8b445b912ed49e8938",
    "27a13f5aa69b5d8f7637015e7f1be03c77b03f1e1a1bd44b27b0aac6adfbc48a",
    "2b5e0b214d7e321e0c11efb56bafe6234d28106f0867364a28a43e8546c0ec80",
    "e6bf4efaf2527e4cfeb0fa526db8e32090d6211fa096162d7d156aed771d5e2a",
    "b8fce4b75ae87e38962cee5ad97cbfb11e9b192c27559b49a0ff50cf0229da65",
    "3337f57576c36836a29a474763aabf45c7e19aee3cf83e73a902844a5913849a",
];

/// One frame's inputs and the CPU's output bytes.
struct Frame {
    size: Size,
    params: FrameParams,
    color: Vec<f32>,
    guides: Vec<f32>,
    want: Vec<u8>,
}

/// The CPU reference over [`FRAMES`], checked against [`DIGESTS`].
fn cpu_sequence(model: &std::path::Path) -> Vec<Frame> {
    let m = RrModel::load(model, Default::default()).expect("model");
    let geo = Geometry::new(RENDER, OUTPUT).expect("geometry");
    let mut pipe = CpuFrame::new(m.weights(), geo, Preset::E).expect("pipeline");
    // Larger than the output: refused, nothing changed.
    assert!(pipe.set_render_size(Size::new(97, 48)).is_err());
    assert_eq!(pipe.geometry(), geo);
    let mut frames = Vec::new();
    for (n, &(size, reset)) in FRAMES.iter().enumerate() {
        pipe.set_render_size(size).expect("size inside the output");
        let s = scene::render(size, n as u32);
        let params = FrameParams {
            jitter: scene::JITTER[n % scene::JITTER.len()],
            reset,
            ..FrameParams::default()
        };
        let r = pipe.run(&params, &s.color, &s.guides).expect("frame");
        // The temporal state went on across the size changes.
        assert_eq!(r.constants.frame_index, n as u64);
        assert_eq!(r.constants.history_valid, n > 0 && !reset, "frame {n}");
        let want = r.get("output").expect("output").to_bytes();
        assert_eq!(want.len(), OUTPUT.area() * 8);
        frames.push(Frame {
            size,
            params,
            color: s.color,
            guides: s.guides,
            want,
        });
    }
    let got: Vec<String> = frames
        .iter()
        .map(|f| hex::encode(Sha256::digest(&f.want)))
        .collect();
    println!("CPU output digests: {got:#?}");
    assert_eq!(got, DIGESTS, "the CPU sequence's outputs changed");
    frames
}

/// The CPU sequence (checked against [`DIGESTS`]), and the proof that its carried history is
/// read: frame 1 (56x40, after a 64x48 frame) differs from a fresh pipeline's first frame at
/// 56x40 on the same inputs and scalars.
fn cpu_checked(model: &std::path::Path) -> Vec<Frame> {
    let t = Instant::now();
    let frames = cpu_sequence(model);
    let m = RrModel::load(model, Default::default()).expect("model");
    let geo = Geometry::new(frames[1].size, OUTPUT).expect("geometry");
    let mut fresh = CpuFrame::new(m.weights(), geo, Preset::E).expect("pipeline");
    let f = &frames[1];
    let r = fresh.run(&f.params, &f.color, &f.guides).expect("frame");
    assert_ne!(
        r.get("output").expect("output").to_bytes(),
        f.want,
        "the carried history did not change the output"
    );
    println!(
        "CPU: {} frames with size changes in {:.2} s",
        frames.len() + 1,
        t.elapsed().as_secs_f64()
    );
    frames
}

/// One test, so that the CPU sequence runs once: the CPU part runs everywhere, the GPU part where
/// the harness finds a device (skipped, and saying so, elsewhere).
#[test]
fn dynamic_resolution_cpu_then_through_the_c_abi() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let model = tmp.path().join("model");
    write_model(&model, 0, &RrSynthParams::DEFAULT, false).expect("synthetic model");
    let t0 = Instant::now();
    let frames = cpu_checked(&model);
    let cpu_s = t0.elapsed().as_secs_f64();
    let Some(h) = Harness::new() else { return };

    // The caller's images, at the creation's (largest) render size.
    let sampled = vk::ImageUsageFlags::SAMPLED | vk::ImageUsageFlags::TRANSFER_DST;
    let mut images = Vec::new();
    let mut staging_bytes = 0usize;
    for g in Guide::ALL {
        let (first, lanes) = match (g, g.lanes()) {
            (Guide::Exposure, _) => continue,
            (Guide::Color, _) => (0, 4),
            (_, Some(l)) => l,
            (_, None) => continue,
        };
        let (format, texel) = match (g, lanes) {
            (Guide::Depth, _) => (vk::Format::D32_SFLOAT, 1),
            (_, 1) => (vk::Format::R32_SFLOAT, 1),
            (_, 2) => (vk::Format::R32G32_SFLOAT, 2),
            _ => (vk::Format::R32G32B32A32_SFLOAT, 4),
        };
        let aspect = if g == Guide::Depth {
            vk::ImageAspectFlags::DEPTH
        } else {
            vk::ImageAspectFlags::COLOR
        };
        let img = h.image(RENDER.w, RENDER.h, format, sampled);
        let info = vk::ImageViewCreateInfo::default()
            .image(img.image)
            .view_type(vk::ImageViewType::TYPE_2D)
            .format(format)
            .subresource_range(range(aspect));
        // SAFETY: a live image of the harness's device; destroyed by the test.
        let view = unsafe { h.device.create_image_view(&info, None) }.expect("vkCreateImageView");
        staging_bytes += RENDER.area() * texel * 4;
        images.push(GuideImage {
            guide: g,
            first,
            lanes,
            texel,
            aspect,
            img,
            view,
        });
    }
    let output = h.image(
        OUTPUT.w,
        OUTPUT.h,
        vk::Format::R16G16B16A16_SFLOAT,
        vk::ImageUsageFlags::STORAGE | vk::ImageUsageFlags::TRANSFER_SRC,
    );
    let out_view = h.view(&output);
    let staging = h.host_buffer(staging_bytes as u64);
    let readback = h.host_buffer((OUTPUT.area() * 8) as u64);
    h.submit(|cmd| {
        h.barrier(
            cmd,
            output.image,
            (vk::ImageLayout::UNDEFINED, vk::ImageLayout::GENERAL),
            (vk::AccessFlags::empty(), vk::AccessFlags::SHADER_WRITE),
            (
                vk::PipelineStageFlags::TOP_OF_PIPE,
                vk::PipelineStageFlags::COMPUTE_SHADER,
            ),
        )
    });

    std::env::set_var("OPENNGX_RR_MODEL_DIR", &model);
    let path: Vec<wchar_t> = "/tmp".chars().map(|c| c as wchar_t).chain([0]).collect();
    // SAFETY: the harness's live handles and the loader's proc addrs.
    ok("Init", unsafe {
        NVSDK_NGX_VULKAN_Init(
            7,
            path.as_ptr(),
            h.instance.handle(),
            h.physical,
            h.device.handle(),
            Some(h.gipa()),
            Some(h.gdpa()),
            std::ptr::null(),
            NVSDK_NGX_Version_API,
        )
    });
    let mut p = std::ptr::null_mut();
    // SAFETY: a local out pointer.
    ok("AllocateParameters", unsafe {
        NVSDK_NGX_VULKAN_AllocateParameters(&mut p)
    });
    let set_ui = |k: &str, v: u32| {
        // SAFETY: a live map, a C string.
        unsafe { NVSDK_NGX_Parameter_SetUI(p, c(k).as_ptr(), v) }
    };
    let set_i = |k: &str, v: i32| {
        // SAFETY: as above.
        unsafe { NVSDK_NGX_Parameter_SetI(p, c(k).as_ptr(), v) }
    };
    let set_f = |k: &str, v: f32| {
        // SAFETY: as above.
        unsafe { NVSDK_NGX_Parameter_SetF(p, c(k).as_ptr(), v) }
    };
    let set_vp = |k: &str, v: *mut c_void| {
        // SAFETY: as above; the pointee outlives the evaluations that read it.
        unsafe { NVSDK_NGX_Parameter_SetVoidPointer(p, c(k).as_ptr(), v) }
    };
    set_ui("CreationNodeMask", 1);
    set_ui("VisibilityNodeMask", 1);
    set_ui("Width", RENDER.w);
    set_ui("Height", RENDER.h);
    set_ui("OutWidth", OUTPUT.w);
    set_ui("OutHeight", OUTPUT.h);
    set_i("PerfQualityValue", NVSDK_NGX_PerfQuality_Value_DLAA as i32);
    set_i("DLSS.Feature.Create.Flags", 0b11);
    set_i("DLSS.Enable.Output.Subrects", 0);
    set_i("DLSS.Denoise.Mode", 1);
    set_ui("RayReconstruction.Hint.Render.Preset.DLAA", 5);
    let mut handle = std::ptr::null_mut();
    let r = h.submit(|cmd| {
        // SAFETY: our device, a recording command buffer, a live map, a local out pointer.
        unsafe {
            NVSDK_NGX_VULKAN_CreateFeature1(
                h.device.handle(),
                cmd,
                NVSDK_NGX_Feature_RayReconstruction,
                p,
                &mut handle,
            )
        }
    });
    ok("CreateFeature1", r);
    let mut resources: Vec<NVSDK_NGX_Resource_VK> = images
        .iter()
        .map(|gi| ngx_resource(&gi.img, gi.view, false))
        .collect();
    let mut out = ngx_resource(&output, out_view, true);
    for (gi, res) in images.iter().zip(resources.iter_mut()) {
        set_vp(gi.guide.key(), (res as *mut NVSDK_NGX_Resource_VK).cast());
    }
    set_vp(
        keys::OUTPUT,
        (&mut out as *mut NVSDK_NGX_Resource_VK).cast(),
    );
    let subrect = |s: Size| {
        set_ui("DLSS.Render.Subrect.Dimensions.Width", s.w);
        set_ui("DLSS.Render.Subrect.Dimensions.Height", s.h);
    };
    // Sizes outside the bounds (32x32 ..= 64x48): refused, nothing recorded.
    let refuse = |s: Size| {
        subrect(s);
        // SAFETY: a recording command buffer, a live handle and map.
        let r = h.submit(|cmd| unsafe { NVSDK_NGX_VULKAN_EvaluateFeature_C(cmd, handle, p, None) });
        assert_eq!(r, NVSDK_NGX_Result_FAIL_InvalidParameter, "{s}: {r:#x}");
    };
    let mut report = Vec::new();
    let mut held = Vec::new();
    for (n, f) in frames.iter().enumerate() {
        if n == 2 {
            for s in [Size::new(31, 48), Size::new(64, 49), Size::new(72, 48)] {
                refuse(s);
            }
        }
        let (w, ht) = (f.size.w, f.size.h);
        let mut offsets = Vec::new();
        let mut off = 0usize;
        for gi in &images {
            let (src, stride) = if gi.guide == Guide::Color {
                (&f.color, 4)
            } else {
                (&f.guides, LANES)
            };
            let mut bytes = Vec::with_capacity(f.size.area() * gi.texel * 4);
            for px in 0..f.size.area() {
                for ch in 0..gi.texel {
                    let v = if ch < gi.lanes {
                        src[px * stride + gi.first + ch]
                    } else {
                        0.0
                    };
                    bytes.extend_from_slice(&v.to_le_bytes());
                }
            }
            staging.write(off, &bytes);
            offsets.push(off as u64);
            off += bytes.len();
        }
        subrect(f.size);
        set_f(keys::JITTER_X, f.params.jitter[0]);
        set_f(keys::JITTER_Y, f.params.jitter[1]);
        set_f(keys::MV_SCALE_X, f.params.mv_scale[0]);
        set_f(keys::MV_SCALE_Y, f.params.mv_scale[1]);
        set_f(keys::PRE_EXPOSURE, f.params.pre_exposure);
        set_f(keys::EXPOSURE_SCALE, f.params.exposure_scale);
        set_i(keys::RESET, i32::from(f.params.reset));
        let mut record_s = 0.0;
        let r = h.submit(|cmd| {
            for (gi, &o) in images.iter().zip(&offsets) {
                upload_guide(&h, cmd, gi, staging.buffer, o, (w, ht));
            }
            let t = Instant::now();
            // SAFETY: a recording command buffer, a live handle and map.
            let r = unsafe { NVSDK_NGX_VULKAN_EvaluateFeature_C(cmd, handle, p, None) };
            record_s = t.elapsed().as_secs_f64();
            h.barrier(
                cmd,
                output.image,
                (vk::ImageLayout::GENERAL, vk::ImageLayout::GENERAL),
                (
                    vk::AccessFlags::SHADER_WRITE,
                    vk::AccessFlags::TRANSFER_READ,
                ),
                (
                    vk::PipelineStageFlags::ALL_COMMANDS,
                    vk::PipelineStageFlags::TRANSFER,
                ),
            );
            h.copy_to_host(cmd, output.image, (OUTPUT.w, OUTPUT.h), readback.buffer);
            r
        });
        ok("EvaluateFeature_C", r);
        let got = readback.read();
        let differ = got.iter().zip(&f.want).filter(|(a, b)| a != b).count();
        assert!(
            differ == 0,
            "frame {n} at {}: {differ} of {} output bytes differ from the CPU's, first at {:?}",
            f.size,
            f.want.len(),
            got.iter().zip(&f.want).position(|(a, b)| a != b)
        );
        held.push(size_in_bytes());
        let changed = n > 0 && frames[n - 1].size != f.size;
        report.push(format!(
            "frame {n} {}{}{}: equal, Evaluate recorded in {:.3} s",
            f.size,
            if changed { " (size change)" } else { "" },
            if f.params.reset { " (Reset)" } else { "" },
            record_s
        ));
    }
    // `SizeInBytes` counts the current size's tensors: less at 32x32, the same again at 64x48.
    assert!(
        held[2] < held[0] && held[3] == held[0] && held[1] == held[4] && held[4] == held[5],
        "SizeInBytes per frame: {held:?}"
    );
    // SAFETY: every submission was waited for; the handle is live.
    ok("ReleaseFeature", unsafe {
        NVSDK_NGX_VULKAN_ReleaseFeature(handle)
    });
    assert_eq!(size_in_bytes(), 0, "released: nothing held");
    // SAFETY: our map and device; every submission was waited for.
    unsafe {
        NVSDK_NGX_VULKAN_DestroyParameters(p);
        NVSDK_NGX_VULKAN_Shutdown1(h.device.handle());
        for gi in &images {
            h.device.destroy_image_view(gi.view, None);
        }
        h.device.destroy_image_view(out_view, None);
    }
    std::env::remove_var("OPENNGX_RR_MODEL_DIR");
    for line in &report {
        println!("{line}");
    }
    println!(
        "RR dynamic resolution through the C ABI: {} frames {RENDER} -> {OUTPUT} byte-exact on \
         {} (CPU {cpu_s:.2} s; validation {}, synchronization validation {})",
        frames.len(),
        h.device_name,
        h.validation,
        h.sync_validation
    );
    h.assert_validation_clean();
}
