//! Ray Reconstruction's CPU reference on the synthetic model (`synth-model --feature rr`, seed 0):
//! informative activations at every layer, a temporal sequence that uses its history, and golden
//! SHA-256 digests of every published tensor (each layer's block output, every surface, dec0's
//! outputs, the output and its alpha) over three frames, so any change of numerics or wiring
//! shows.

use std::sync::OnceLock;
use std::time::Instant;

use openngx::rr::cpu_frame::{CpuFrame, FrameParams, FrameResult};
use openngx::rr::frame::scene;
use openngx::rr::geometry::{Geometry, Size};
use openngx::rr::layers::LAYERS;
use openngx::rr::preset::Preset;
use openngx::rr::reference::TensorData;
use openngx::rr::weights::RrWeights;
use openngx_tools::rr_synth::{synthesize, RrSynthParams};
use sha2::{Digest, Sha256};

const RENDER: Size = Size::new(64, 48);
const OUTPUT: Size = Size::new(96, 72);
const FRAMES: u32 = 3;
/// Per-frame jitter: the Halton sequence the fixtures use too.
const JITTER: [[f32; 2]; 8] = scene::JITTER;

fn weights() -> &'static RrWeights {
    static W: OnceLock<RrWeights> = OnceLock::new();
    W.get_or_init(|| synthesize(0, &RrSynthParams::DEFAULT).expect("synthesize"))
}

/// The three frames of the synthetic scene, run once per process.
fn frames() -> &'static [FrameResult] {
    static F: OnceLock<Vec<FrameResult>> = OnceLock::new();
    F.get_or_init(|| {
        let t = Instant::now();
        let geo = Geometry::new(RENDER, OUTPUT).expect("geometry");
        let mut p = CpuFrame::new(weights(), geo, Preset::E).expect("pipeline");
        let out: Vec<FrameResult> = (0..FRAMES)
            .map(|f| {
                let s = scene::render(RENDER, f);
                let params = FrameParams {
                    jitter: JITTER[f as usize],
                    ..FrameParams::default()
                };
                let r = p.run(&params, &s.color, &s.guides).expect("frame");
                let times: Vec<String> = r
                    .seconds
                    .iter()
                    .map(|(k, s)| format!("{k} {s:.2}"))
                    .collect();
                eprintln!("frame {f}: {}", times.join(", "));
                r
            })
            .collect();
        eprintln!(
            "RR CPU reference: {FRAMES} frames {RENDER} -> {OUTPUT} in {:.2} s",
            t.elapsed().as_secs_f64()
        );
        out
    })
}

fn code_stats(bytes: &[u8]) -> (f64, f64, usize) {
    let n = bytes.len() as f64;
    let nonzero = bytes.iter().filter(|&&b| b & 0x7F != 0).count() as f64 / n;
    let saturated = bytes.iter().filter(|&&b| b & 0x7F >= 0x7E).count() as f64 / n;
    let mut seen = [false; 256];
    for &b in bytes {
        seen[b as usize] = true;
    }
    (nonzero, saturated, seen.iter().filter(|&&s| s).count())
}

#[test]
fn every_layer_is_informative() {
    for (f, r) in frames().iter().enumerate() {
        for (name, data) in &r.published {
            match data {
                TensorData::E4(b) => {
                    let (nz, sat, distinct) = code_stats(b);
                    eprintln!(
                        "frame {f} {name:>15}: nonzero {:5.1}%  ±448/NaN {:5.2}%  codes {distinct}",
                        100.0 * nz,
                        100.0 * sat
                    );
                    if LAYERS.iter().any(|l| l.name == name) {
                        assert!(nz >= 0.30, "{name}: {:.1}% nonzero", 100.0 * nz);
                        assert!(sat <= 0.01, "{name}: {:.2}% saturated", 100.0 * sat);
                        assert!(distinct >= 64, "{name}: {distinct} codes");
                    }
                }
                TensorData::F16(h) => {
                    let vals: Vec<f32> = h
                        .iter()
                        .map(|&x| openngx::numerics::f16::to_f32(x))
                        .collect();
                    let finite = vals.iter().all(|v| v.is_finite());
                    let nz = vals.iter().filter(|v| **v != 0.0).count() as f64 / vals.len() as f64;
                    let (lo, hi) = vals
                        .iter()
                        .fold((f32::MAX, f32::MIN), |(a, b), &v| (a.min(v), b.max(v)));
                    eprintln!(
                        "frame {f} {name:>15}: f16 nonzero {:5.1}%  range [{lo}, {hi}]",
                        100.0 * nz
                    );
                    assert!(finite, "{name}: non-finite values");
                }
                TensorData::F32(v) => {
                    let (lo, hi) = v
                        .iter()
                        .fold((f32::MAX, f32::MIN), |(a, b), &x| (a.min(x), b.max(x)));
                    eprintln!("frame {f} {name:>15}: f32 range [{lo}, {hi}]");
                    assert!(v.iter().all(|x| x.is_finite()), "{name}: non-finite values");
                }
            }
        }
    }
}

/// SHA-256 (hex) of every published tensor of every frame, named `f<frame>.<name>`.
fn digests() -> Vec<(String, String)> {
    frames()
        .iter()
        .enumerate()
        .flat_map(|(f, r)| {
            r.published.iter().map(move |(n, d)| {
                (
                    format!("f{f}.{n}"),
                    format!("{:x}", Sha256::digest(d.to_bytes())),
                )
            })
        })
        .collect()
}

/// Compare with (or, with `OPENNGX_UPDATE_GOLDEN=1`, rewrite) `tests/golden/<name>.txt`.
fn check_golden(name: &str, got: &[(String, String)]) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(format!("{name}.txt"));
    let text: String = got.iter().map(|(n, d)| format!("{n} {d}\n")).collect();
    if std::env::var("OPENNGX_UPDATE_GOLDEN").as_deref() == Ok("1") {
        std::fs::write(&path, &text).expect("write golden");
        return;
    }
    let want = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let want: Vec<(&str, &str)> = want.lines().filter_map(|l| l.split_once(' ')).collect();
    assert_eq!(want.len(), got.len(), "{}: entry count", path.display());
    let mut bad = Vec::new();
    for ((wn, wd), (gn, gd)) in want.iter().zip(got) {
        assert_eq!(*wn, gn, "{}: entry order", path.display());
        if *wd != gd {
            bad.push(gn.clone());
        }
    }
    assert!(
        bad.is_empty(),
        "{name}: digests differ for {bad:?} (numerics or wiring changed?)"
    );
}

#[test]
fn golden_digests_three_frames() {
    check_golden("rr-reference-64x48-96x72-seed0", &digests());
}

#[test]
fn the_sequence_uses_its_history() {
    let r = frames();
    assert!(!r[0].constants.history_valid);
    assert!(r[1].constants.history_valid && r[2].constants.history_valid);
    assert_eq!(r[2].constants.frame_index, 2);
    // Frame 1 again, as a Reset: no history, and a different output.
    let geo = Geometry::new(RENDER, OUTPUT).unwrap();
    let mut p = CpuFrame::new(weights(), geo, Preset::E).unwrap();
    let s0 = scene::render(RENDER, 0);
    let p0 = FrameParams {
        jitter: JITTER[0],
        ..FrameParams::default()
    };
    let again = p.run(&p0, &s0.color, &s0.guides).unwrap();
    assert_eq!(
        again.get("output"),
        r[0].get("output"),
        "a frame is reproducible"
    );
    let s1 = scene::render(RENDER, 1);
    let reset = FrameParams {
        jitter: JITTER[1],
        reset: true,
        ..FrameParams::default()
    };
    let r1 = p.run(&reset, &s1.color, &s1.guides).unwrap();
    assert!(!r1.constants.history_valid);
    assert_ne!(r1.get("output"), r[1].get("output"));
    assert_ne!(r1.get("history.render"), r[1].get("history.render"));
}
