//! The CPU reference on the synthetic model: informative activations at every boundary, and golden
//! SHA-256 digests of all 75 boundaries, the head and the output, so any change of numerics shows.

use std::sync::OnceLock;
use std::time::Instant;

use openngx::model::{synth, LoadOptions, Model};
use openngx::nr::frame::{scene, FrameParams};
use openngx::nr::pipeline::{CpuPipeline, FrameResult};
use openngx::nr::reference::Profiles;
use sha2::{Digest, Sha256};

/// The synthetic model (seed 0), written once per test process.
fn model() -> &'static Model {
    static MODEL: OnceLock<(tempfile::TempDir, Model)> = OnceLock::new();
    &MODEL
        .get_or_init(|| {
            let dir = tempfile::tempdir().expect("temp dir");
            let path = dir.path().join("model");
            synth::write_model(&path, 0, &synth::SynthParams::DEFAULT, false).expect("synthesize");
            let model = Model::load(&path, LoadOptions { verify_sha: false }).expect("load");
            (dir, model)
        })
        .1
}

/// Frame 0 of the synthetic scene at `w x h`, run once per size.
fn frame0(w: u32, h: u32) -> &'static FrameResult {
    static RUNS: OnceLock<std::sync::Mutex<Vec<((u32, u32), &'static FrameResult)>>> =
        OnceLock::new();
    let runs = RUNS.get_or_init(Default::default);
    let mut runs = runs.lock().expect("lock");
    if let Some((_, r)) = runs.iter().find(|(k, _)| *k == (w, h)) {
        return r;
    }
    let t = Instant::now();
    let mut p = CpuPipeline::new(model(), w, h, Profiles::NATIVE).expect("pipeline");
    let s = scene::render(w, h, 0);
    let r = p
        .run_frame(&FrameParams::default(), &s.proxy, Some(&s.motion))
        .expect("frame");
    eprintln!(
        "CPU reference frame {w}x{h}: {:.1} s",
        t.elapsed().as_secs_f64()
    );
    let r: &'static FrameResult = Box::leak(Box::new(r));
    runs.push(((w, h), r));
    r
}

#[test]
fn every_boundary_is_informative_at_64x64() {
    let r = frame0(64, 64);
    let net = r.network.as_ref().expect("enabled frame");
    assert_eq!(net.boundaries.len(), 75);
    for (name, bytes) in &net.boundaries {
        let nonzero = bytes.iter().filter(|&&b| b & 0x7F != 0).count() as f64 / bytes.len() as f64;
        let saturated =
            bytes.iter().filter(|&&b| b & 0x7F == 0x7E).count() as f64 / bytes.len() as f64;
        let mut seen = [false; 256];
        for &b in bytes {
            seen[b as usize] = true;
        }
        let distinct = seen.iter().filter(|&&s| s).count();
        eprintln!(
            "{name:>18}: nonzero {:5.1}%  ±448 {:5.2}%  codes {distinct}",
            100.0 * nonzero,
            100.0 * saturated
        );
        assert!(
            nonzero >= 0.30,
            "{name}: only {:.1}% nonzero",
            100.0 * nonzero
        );
        assert!(
            saturated <= 0.01,
            "{name}: {:.2}% saturated",
            100.0 * saturated
        );
        assert!(distinct >= 64, "{name}: only {distinct} distinct codes");
    }
    // The head's RGB residual is not constant.
    let rgb: Vec<f32> = net
        .head
        .chunks_exact(4)
        .flat_map(|c| [c[0], c[1], c[2]])
        .collect();
    let first = rgb[0];
    assert!(rgb.iter().any(|&v| v != first), "constant head");
}
