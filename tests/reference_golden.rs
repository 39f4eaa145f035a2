//! The CPU reference on the synthetic model: informative activations at every boundary, and golden
//! SHA-256 digests of all 75 boundaries, the head and the output, so any change of numerics shows.

use std::sync::OnceLock;
use std::time::Instant;

use openngx::model::{LoadOptions, Model};
use openngx::nr::cpu_frame::{CpuPipeline, FrameResult};
use openngx::nr::frame::{scene, FrameParams};
use openngx::numerics::Profiles;
use openngx_tools::fixture::{self, Fixture, FrameParameters, RecordedFrame};
use openngx_tools::synth;
use sha2::{Digest, Sha256};

/// The synthetic model (seed 0), written once per test process.
fn model() -> &'static Model {
    static MODEL: OnceLock<Model> = OnceLock::new();
    MODEL.get_or_init(|| {
        // Removed at exit (a `TempDir` in a static never is).
        let dir = openngx_tools::scratch::process_dir(&std::env::temp_dir(), "openngx-golden")
            .expect("scratch dir");
        let path = dir.join("model");
        synth::write_model(&path, 0, &synth::SynthParams::DEFAULT, false).expect("synthesize");
        Model::load(&path, LoadOptions { verify_sha: false }).expect("load")
    })
}

/// CPU frames already run in this process, by size.
type Runs = std::sync::Mutex<Vec<((u32, u32), &'static FrameResult)>>;

/// Frame 0 of the synthetic scene at `w x h`, run once per size.
fn frame0(w: u32, h: u32) -> &'static FrameResult {
    static RUNS: OnceLock<Runs> = OnceLock::new();
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

/// SHA-256 (hex) of every published tensor of a frame: the 75 boundaries, the head, the output.
fn digests(r: &FrameResult) -> Vec<(String, String)> {
    let net = r.network.as_ref().expect("enabled frame");
    let hex = |b: &[u8]| format!("{:x}", Sha256::digest(b));
    let mut v: Vec<(String, String)> = net
        .boundaries
        .iter()
        .map(|(n, b)| (n.clone(), hex(b)))
        .collect();
    let head: Vec<u8> = net.head.iter().flat_map(|x| x.to_le_bytes()).collect();
    v.push(("head".into(), hex(&head)));
    let out: Vec<u8> = r
        .output
        .iter()
        .flat_map(|p| p.iter().flat_map(|h| h.to_le_bytes()))
        .collect();
    v.push(("output".into(), hex(&out)));
    v
}

/// Compare with (or, with `OPENNGX_UPDATE_GOLDEN=1`, rewrite) `tests/golden/<name>.txt`.
fn check_golden(name: &str, got: &[(String, String)]) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(format!("{name}.txt"));
    let text: String = got.iter().map(|(n, d)| format!("{n} {d}\n")).collect();
    if std::env::var("OPENNGX_UPDATE_GOLDEN").as_deref() == Ok("1") {
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
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
        "{name}: digests differ for {bad:?} (numerics changed?)"
    );
}

#[test]
fn golden_digests_64x64() {
    check_golden("reference-64x64-f13-seed0", &digests(frame0(64, 64)));
}

#[test]
fn golden_digests_non_square_96x40() {
    check_golden("reference-96x40-f13-seed0", &digests(frame0(96, 40)));
}

#[test]
fn fixture_round_trip() {
    let r = frame0(64, 64);
    let s = scene::render(64, 64, 0);
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("fx");
    let frame = RecordedFrame {
        proxy: &s.proxy,
        motion: &s.motion,
        parameters: FrameParameters::default(),
        result: r,
    };
    let geometry = openngx::nr::geometry::Geometry::new(64, 64).expect("geometry");
    fixture::write(&out, &geometry, &[frame], "f13").expect("write");
    let fx = Fixture::load(&out).expect("load");
    assert_eq!(fx.manifest.full_dimensions, [336, 320]);
    assert_eq!(fx.manifest.blocks.len(), 70);
    assert_eq!(fx.manifest.transitions.len(), 5);
    let net = r.network.as_ref().expect("net");
    assert_eq!(
        fx.read("native/block-37.u8").expect("read"),
        net.boundaries
            .iter()
            .find(|b| b.0 == "block-37")
            .expect("b37")
            .1
    );
    assert_eq!(fx.read_f32("head.f32").expect("head"), net.head);
    // Writing over an existing directory is refused and leaves it intact.
    let again = RecordedFrame {
        proxy: &s.proxy,
        motion: &s.motion,
        parameters: FrameParameters::default(),
        result: r,
    };
    assert!(fixture::write(&out, &geometry, &[again], "f13").is_err());
    assert!(Fixture::load(&out).is_ok());
    // A truncated boundary file is refused by the strict loader, naming the file.
    std::fs::write(out.join("native/block-5.u8"), [0u8; 3]).expect("truncate");
    let err = Fixture::load(&out).expect_err("short file");
    assert!(err.to_string().contains("block-5"), "{err}");
}
