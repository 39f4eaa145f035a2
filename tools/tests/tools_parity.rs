//! `openngx parity` and `nr::compare`: fixtures written from one CPU reference run on a synthetic
//! model at 64x64 (shared by every test of this file) pass bit-exactly; a flipped byte, a
//! sign-of-zero difference and an 8-bit output one code off get their verdicts; malformed
//! fixtures are refused before anything runs. `--route gpu` runs a two-frame sequence on the test
//! device: frame 0 matches the CPU run, frame 1 the CPU's frame code on the GPU's head.

#[path = "../../tests/common/mod.rs"]
mod common;
mod tools_common;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::OnceLock;

use openngx::nr::frame::{self, FrameConstants, FrameInputs, FrameParams, FrameSetup};
use openngx::nr::geometry::Geometry;
use openngx::numerics::f16::{self, F16};
use openngx_tools::compare::{self, Position, Produced, Value, Verdict};
use openngx_tools::fixture::{
    f32_to_bytes, BlockRef, FileRef, Fixture, FrameParameters, Manifest, OutputRef, ProxyRef,
    Sequence, SequenceFrame, TransitionRef,
};
use tools_common::{openngx, scratch, stderr, stdout, synthetic_model, tempdir};

const SIZE: u32 = 64;
const FRAME_SEED: u32 = 5;

/// The one network run of this file: `openngx parity --dump` on a fixture whose references are
/// all zero (so it must fail), its dump read back. The CPU reference takes minutes at 64x64 on
/// two cores, so every other test compares against this run instead of running again.
struct Run {
    geometry: Geometry,
    proxy: Vec<[f32; 4]>,
    /// The dump directory (`--from-dump` tests read it).
    dump: std::path::PathBuf,
    features: Vec<f32>,
    boundaries: Vec<(String, Vec<u8>)>,
    head: Vec<f32>,
    output: Vec<[F16; 4]>,
    /// What the CLI printed.
    stdout: String,
    /// Its files, in the process's scratch directory (removed at exit: a `TempDir` in this
    /// static would never be dropped).
    dir: std::path::PathBuf,
}

fn shared_run() -> &'static Run {
    static RUN: OnceLock<Run> = OnceLock::new();
    RUN.get_or_init(|| {
        let (model_dir, _) = synthetic_model();
        let geometry = Geometry::new(SIZE, SIZE).unwrap();
        let proxy = frame::scene::render(SIZE, SIZE, 3).proxy;
        let rows = geometry.field.w as usize * geometry.field.h as usize;
        let zero = Run {
            geometry,
            proxy,
            dump: Default::default(),
            features: Vec::new(),
            boundaries: geometry
                .boundaries()
                .iter()
                .map(|b| (b.name.clone(), vec![0u8; b.bytes() as usize]))
                .collect(),
            head: vec![0.0; rows * 4],
            output: vec![[0; 4]; (SIZE * SIZE) as usize],
            stdout: String::new(),
            dir: scratch().join("parity-run"),
        };
        std::fs::create_dir_all(&zero.dir).expect("scratch dir");
        let fx = zero.dir.join("zero-fixture");
        write_fixture(&fx, &zero, &Edits::default());
        let dump = zero.dir.join("dump");
        let t = std::time::Instant::now();
        let o = openngx(
            &[
                "parity",
                "--model",
                model_dir.to_str().unwrap(),
                "--fixture",
                fx.to_str().unwrap(),
                "--dump",
                dump.to_str().unwrap(),
                "--no-verify",
            ],
            &[],
        );
        eprintln!(
            "openngx parity (one CPU reference run at {SIZE}x{SIZE}): {:.1} s",
            t.elapsed().as_secs_f64()
        );
        let text = stdout(&o);
        assert_eq!(o.status.code(), Some(1), "{text}\n{}", stderr(&o));
        let read = |n: &str| std::fs::read(dump.join(n)).unwrap();
        let f32s = |n: &str| openngx_tools::fixture::bytes_to_f32(&read(n));
        let boundaries = geometry
            .boundaries()
            .iter()
            .map(|b| (b.name.clone(), read(&format!("{}.u8", b.name))))
            .collect();
        let output = f32s("output.f32")
            .chunks_exact(4)
            .map(|c| [c[0], c[1], c[2], c[3]].map(f16::from_f32_rne))
            .collect();
        let (features, head) = (f32s("features.f32"), f32s("head.f32"));
        Run {
            dump,
            features,
            boundaries,
            head,
            output,
            stdout: text,
            ..zero
        }
    })
}

fn produced(run: &Run) -> Produced {
    Produced {
        boundaries: run.boundaries.clone(),
        head: run.head.clone(),
        output: Some(run.output.clone()),
    }
}

/// Edits applied while writing a fixture.
#[derive(Default)]
struct Edits {
    /// Replace these boundary files (by name) with these bytes.
    boundaries: BTreeMap<String, Vec<u8>>,
    head: Option<Vec<f32>>,
    /// Write the output as 8-bit codes instead of f32.
    output_u8: Option<Vec<u8>>,
    /// Leave this boundary out of the manifest (without a reason unless given).
    omit: Option<(String, Option<String>)>,
    /// Use `inputFeatures` instead of the proxy (checks boundaries + head only).
    features_only: bool,
}

fn write_fixture(dir: &Path, run: &Run, edits: &Edits) {
    std::fs::create_dir_all(dir.join("native")).unwrap();
    let g = &run.geometry;
    let mut m = Manifest {
        source_dimensions: [g.valid.w as usize, g.valid.h as usize],
        full_dimensions: [g.field.w as usize, g.field.h as usize],
        checks: vec!["boundaries".into(), "head".into()],
        profile: Some("f13".into()),
        ..Manifest::default()
    };
    for (b, (name, bytes)) in g.boundaries().iter().zip(&run.boundaries) {
        assert_eq!(&b.name, name, "graph and geometry boundary order");
        if let Some((omit, reason)) = &edits.omit {
            if omit == name {
                if let Some(r) = reason {
                    m.omitted_boundaries.insert(name.clone(), r.clone());
                }
                continue;
            }
        }
        let file = format!("native/{name}.u8");
        let data = edits.boundaries.get(name).unwrap_or(bytes);
        std::fs::write(dir.join(&file), data).unwrap();
        let (w, h, c) = (b.width as usize, b.height as usize, b.channels as usize);
        if let Some(id) = name.strip_prefix("transition-") {
            m.transitions.push(TransitionRef {
                id: id.into(),
                width: w,
                height: h,
                channels: c,
                file,
            });
        } else {
            let block = name.trim_start_matches("block-").parse().unwrap();
            m.blocks.push(BlockRef {
                block,
                width: w,
                height: h,
                channels: c,
                file,
            });
        }
    }
    let head = edits.head.as_ref().unwrap_or(&run.head);
    std::fs::write(dir.join("head.f32"), f32_to_bytes(head)).unwrap();
    m.reference_head = Some(FileRef {
        file: "head.f32".into(),
    });
    if edits.features_only {
        std::fs::write(dir.join("features.f32"), f32_to_bytes(&run.features)).unwrap();
        m.input_features = Some(FileRef {
            file: "features.f32".into(),
        });
    } else {
        let px: Vec<f32> = run.proxy.iter().flatten().copied().collect();
        std::fs::write(dir.join("proxy.f32"), f32_to_bytes(&px)).unwrap();
        m.proxy = Some(ProxyRef {
            file: "proxy.f32".into(),
            width: SIZE as usize,
            height: SIZE as usize,
            conditioning: Default::default(),
            seed: FRAME_SEED,
            auto_mask: true,
            motion: None,
        });
        m.checks.push("output".into());
        let (file, dtype, bytes) = match &edits.output_u8 {
            Some(b) => ("output.u8", "u8", b.clone()),
            None => {
                let v: Vec<f32> = run
                    .output
                    .iter()
                    .flatten()
                    .map(|&h| f16::to_f32(h))
                    .collect();
                ("output.f32", "f32", f32_to_bytes(&v))
            }
        };
        std::fs::write(dir.join(file), bytes).unwrap();
        m.native_output = Some(OutputRef {
            file: file.into(),
            dtype: dtype.into(),
        });
    }
    std::fs::write(
        dir.join("manifest.json"),
        serde_json::to_string_pretty(&m).unwrap(),
    )
    .unwrap();
}

fn check(run: &Run, edits: &Edits) -> compare::Report {
    let tmp = tempdir("tools-parity-");
    write_fixture(tmp.path(), run, edits);
    let fx = Fixture::load(tmp.path()).unwrap();
    compare::compare_fixture(&fx, &produced(run)).unwrap()
}

#[test]
fn the_run_prepares_and_composes_like_an_independent_path() {
    let run = shared_run();
    // The zero-reference fixture failed, and said why.
    for line in [
        "features from proxy",
        "run 1/1: route cpu (profile f13)",
        "head: FAIL mismatch",
        "dumped to",
        "-> FAIL",
    ] {
        assert!(
            run.stdout.contains(line),
            "missing `{line}` in:\n{}",
            run.stdout
        );
    }
    // Features: prepare of the proxy as the first frame with the manifest's seed.
    let (_, model) = synthetic_model();
    let blend = f16::to_f32(model.blend_scale());
    let setup = FrameSetup {
        enabled: true,
        seed: FRAME_SEED,
        history_valid: false,
        read_slot: 0,
        write_slot: 1,
    };
    let c = FrameConstants::new(&run.geometry, &FrameParams::default(), &setup, blend, false);
    let inputs = FrameInputs {
        proxy: &run.proxy,
        motion: None,
        history: None,
    };
    let features = frame::prepare::features_f32(&frame::prepare(&c, &inputs).unwrap());
    assert_eq!(features.len(), 336 * 320 * 16);
    assert_eq!(f32_to_bytes(&run.features), f32_to_bytes(&features));
    // Output: compose of the run's head.
    let head4: Vec<[f32; 4]> = run
        .head
        .chunks_exact(4)
        .map(|c| [c[0], c[1], c[2], c[3]])
        .collect();
    assert_eq!(
        frame::compose(&c, &inputs, &head4).unwrap().output,
        run.output
    );

    // The library's fixture input path gives the same features, and the same output.
    let tmp = tempdir("tools-parity-input-");
    write_fixture(tmp.path(), run, &Edits::default());
    let fx = Fixture::load(tmp.path()).unwrap();
    let input = compare::fixture_input(&fx, blend).unwrap();
    assert_eq!(input.source, "proxy");
    assert_eq!(f32_to_bytes(&input.features), f32_to_bytes(&features));
    let out = compare::compose_output(&input, &run.head).unwrap();
    assert_eq!(out.as_ref(), Some(&run.output));

    // A features-only fixture feeds the file as is and checks boundaries and head.
    let tmp = tempdir("tools-parity-features-");
    let edits = Edits {
        features_only: true,
        ..Edits::default()
    };
    write_fixture(tmp.path(), run, &edits);
    let fx = Fixture::load(tmp.path()).unwrap();
    let input = compare::fixture_input(&fx, blend).unwrap();
    assert_eq!(input.source, "inputFeatures");
    assert_eq!(f32_to_bytes(&input.features), f32_to_bytes(&features));
    let mut p = produced(run);
    p.output = None;
    let report = compare::compare_fixture(&fx, &p).unwrap();
    assert_eq!(report.comparisons.len(), 76);
    assert!(report.all_exact(), "{}", report.summary());

    // A fixture written by `nr::fixture::write` (what `openngx reference` writes) from the same
    // results: strict validation accepts it and every one of its 77 checks is exact.
    let tmp = tempdir("tools-parity-writer-");
    let result = openngx::nr::cpu_frame::FrameResult {
        output: run.output.clone(),
        features: Some(run.features.clone()),
        network: Some(openngx::nr::reference::Output {
            boundaries: run.boundaries.clone(),
            head: run.head.clone(),
        }),
    };
    let motion = vec![[0.0f32; 2]; run.proxy.len()];
    let frame = openngx_tools::fixture::RecordedFrame {
        proxy: &run.proxy,
        motion: &motion,
        parameters: Default::default(),
        result: &result,
    };
    let dir = tmp.path().join("fx");
    openngx_tools::fixture::write(&dir, &run.geometry, &[frame], "f13").unwrap();
    let fx = Fixture::load(&dir).unwrap();
    let report = compare::compare_fixture(&fx, &produced(run)).unwrap();
    assert_eq!(report.comparisons.len(), 77);
    assert!(report.all_exact(), "{}", report.summary());
}

fn parity_from_dump(run: &Run, fixture: &Path) -> std::process::Output {
    parity_from_dump_dir(&run.dump, fixture)
}

fn parity_from_dump_dir(dump: &Path, fixture: &Path) -> std::process::Output {
    openngx(
        &[
            "parity",
            "--fixture",
            fixture.to_str().unwrap(),
            "--from-dump",
            dump.to_str().unwrap(),
        ],
        &[],
    )
}

#[test]
fn cli_passes_an_exact_fixture_and_fails_a_flipped_one() {
    let run = shared_run();
    let tmp = tempdir("tools-parity-cli-");
    let fx_dir = tmp.path().join("fx");
    write_fixture(&fx_dir, run, &Edits::default());
    let o = parity_from_dump(run, &fx_dir);
    let text = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{text}\n{}", stderr(&o));
    let b0 = &run.geometry.boundaries()[0];
    let field = run.geometry.field;
    for line in [
        &format!("block-0: exact ({} values)", b0.bytes()),
        "transition-22-23: exact",
        "block-69: exact",
        &format!("head: exact ({} values)", field.w * field.h * 4),
        "output: exact (16384 values)",
        "77 checks: 77 exact, 0 sign-of-zero only, 0 within one code, 0 mismatched, 0 errors, 0 omitted -> PASS",
    ] {
        assert!(text.contains(line), "missing `{line}` in:\n{text}");
    }

    // One byte of block-20 changed in the fixture: exit 1 and the mismatch line.
    let (name, bytes) = &run.boundaries[24];
    assert_eq!(name, "block-20");
    let mut bad = bytes.clone();
    bad[100] ^= 0x01;
    let fx_dir = tmp.path().join("fx-bad");
    let edits = Edits {
        boundaries: [(name.clone(), bad)].into(),
        ..Edits::default()
    };
    write_fixture(&fx_dir, run, &edits);
    let o = parity_from_dump(run, &fx_dir);
    let text = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{text}");
    let b = &run.geometry.boundaries()[24];
    let (c, p) = (100 % b.channels as usize, 100 / b.channels as usize);
    let (x, y) = (p % b.width as usize, p / b.width as usize);
    let first = format!(
        "first x={x} y={y} c={c}: got 0x{:02x} expected 0x{:02x}",
        bytes[100],
        bytes[100] ^ 1
    );
    assert!(
        text.contains(&format!("block-20: FAIL mismatch 1 of {} (", b.bytes()))
            && text.contains(&first),
        "{text}"
    );
    assert!(
        text.contains("1 mismatched") && text.contains("-> FAIL"),
        "{text}"
    );
}

#[test]
fn flipped_byte_is_a_mismatch_with_position_and_histogram() {
    let run = shared_run();
    let g = &run.geometry;
    // Flip one element of block-5 at x=7, y=3, c=9.
    let (name, bytes) = &run.boundaries[7];
    assert_eq!(name, "block-5");
    let b = &g.boundaries()[7];
    let (x, y, c) = (7usize, 3usize, 9usize);
    let i = (y * b.width as usize + x) * b.channels as usize + c;
    let mut bad = bytes.clone();
    // Two codes up in sign-magnitude order (away from zero keeps the sign), saturating below NaN.
    let orig = bad[i];
    bad[i] = if orig & 0x7F <= 0x7C {
        orig + 2
    } else {
        orig - 2
    };
    let delta: i64 = if orig & 0x7F <= 0x7C { 2 } else { -2 };
    let delta = if orig & 0x80 != 0 { -delta } else { delta };
    let edits = Edits {
        boundaries: [(name.clone(), bad.clone())].into(),
        ..Edits::default()
    };
    let report = check(run, &edits);
    assert!(!report.all_exact());
    let failing: Vec<_> = report
        .comparisons
        .iter()
        .filter(|c| !c.verdict.is_exact())
        .collect();
    assert_eq!(failing.len(), 1);
    let cmp = failing[0];
    assert_eq!(cmp.name, "block-5");
    // The fixture holds `bad`: the run's byte is "got", the edited one "expected".
    let Verdict::Mismatch(m) = &cmp.verdict else {
        panic!("{cmp}")
    };
    assert_eq!(m.count, 1);
    assert_eq!(m.first, Position { x, y, c });
    assert_eq!(
        (m.got, m.expected),
        (Value::Byte(orig), Value::Byte(bad[i]))
    );
    assert_eq!(m.bin(-delta), 1);
    assert_eq!(m.histogram.iter().sum::<u64>(), 1);
    assert_eq!(m.zero_sign, 0);
    let text = cmp.to_string();
    assert!(
        text.starts_with(&format!("block-5: FAIL mismatch 1 of {}", b.bytes()))
            && text.contains("first x=7 y=3 c=9")
            && text.contains(&format!("{}:1", if -delta > 0 { "+2" } else { "-2" })),
        "{text}"
    );
    assert!(
        report.summary().contains("1 mismatched"),
        "{}",
        report.summary()
    );
}

#[test]
fn sign_of_zero_only_is_reported_and_fails() {
    let run = shared_run();
    // A boundary +0 published by the run (the pool's zero fill at 64x64 guarantees some).
    let (bi, i) = run
        .boundaries
        .iter()
        .enumerate()
        .find_map(|(bi, (_, b))| b.iter().position(|&v| v == 0x00).map(|i| (bi, i)))
        .expect("a +0 code in some boundary");
    let (name, bytes) = &run.boundaries[bi];
    let mut bad = bytes.clone();
    bad[i] = 0x80;
    // And a head value with its zero sign flipped, if the head has a zero.
    let mut head = run.head.clone();
    let hz = head.iter().position(|&v| v == 0.0);
    if let Some(h) = hz {
        head[h] = -head[h];
    }
    let edits = Edits {
        boundaries: [(name.clone(), bad)].into(),
        head: Some(head),
        ..Edits::default()
    };
    let report = check(run, &edits);
    assert!(!report.all_exact());
    let zero: Vec<_> = report
        .comparisons
        .iter()
        .filter(|c| matches!(c.verdict, Verdict::SignOfZero(_)))
        .collect();
    assert_eq!(zero.len(), 1 + hz.is_some() as usize);
    assert_eq!(&zero[0].name, name);
    let m = zero[0].verdict.mismatch().unwrap();
    assert_eq!((m.count, m.zero_sign), (1, 1));
    assert_eq!((m.got, m.expected), (Value::Byte(0x00), Value::Byte(0x80)));
    assert!(
        zero[0]
            .to_string()
            .contains("FAIL equal up to the sign of zero"),
        "{}",
        zero[0]
    );
    assert_eq!(
        report.count(|v| matches!(v, Verdict::Mismatch(_))),
        0,
        "{}",
        report.summary()
    );
}

#[test]
fn u8_output_one_code_off_is_reported_apart() {
    let run = shared_run();
    let mut codes: Vec<u8> = run
        .output
        .iter()
        .flatten()
        .map(|&h| compare::unorm8(h))
        .collect();
    // Exact 8-bit capture first.
    let report = check(
        run,
        &Edits {
            output_u8: Some(codes.clone()),
            ..Edits::default()
        },
    );
    assert!(report.all_exact(), "{}", report.summary());
    // Channel 1 of pixel (10, 20) one code off.
    let i = (20 * 64 + 10) * 4 + 1;
    codes[i] = if codes[i] == 255 { 254 } else { codes[i] + 1 };
    let report = check(
        run,
        &Edits {
            output_u8: Some(codes),
            ..Edits::default()
        },
    );
    let out = report
        .comparisons
        .iter()
        .find(|c| c.name == "output")
        .unwrap();
    let Verdict::WithinOneCode(m) = &out.verdict else {
        panic!("{out}")
    };
    assert_eq!(m.first, Position { x: 10, y: 20, c: 1 });
    assert!(!report.all_exact());
    assert!(report.summary().contains("1 within one code"));
}

/// Run the CLI on a broken fixture: it must be refused (exit 2) before the model is even read
/// (the model path does not exist).
fn refused(edit: impl FnOnce(&Path)) -> String {
    let run = shared_run();
    let tmp = tempdir("tools-parity-bad-");
    write_fixture(tmp.path(), run, &Edits::default());
    edit(tmp.path());
    let o = openngx(
        &[
            "parity",
            "--model",
            "/nonexistent/model",
            "--fixture",
            tmp.path().to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    let err = stderr(&o);
    assert!(err.contains("fixture refused"), "{err}");
    err
}

#[test]
fn malformed_fixtures_are_refused_before_running() {
    let run = shared_run();
    // A boundary with neither a reference nor a reason.
    let tmp = tempdir("tools-parity-omit-");
    let edits = Edits {
        omit: Some(("block-12".into(), None)),
        ..Edits::default()
    };
    write_fixture(tmp.path(), run, &edits);
    let e = Fixture::load(tmp.path()).unwrap_err().to_string();
    assert!(
        e.contains("boundary block-12 has neither a reference nor an omission reason"),
        "{e}"
    );
    // With a reason it is accepted and listed as omitted.
    let report = check(
        run,
        &Edits {
            omit: Some(("block-12".into(), Some("not captured".into()))),
            ..Edits::default()
        },
    );
    assert_eq!(
        report.omitted,
        [("block-12".to_string(), "not captured".to_string())]
    );
    assert!(report.all_exact());

    let e = refused(|d| {
        let f = d.join("native/block-3.u8");
        let len = std::fs::metadata(&f).unwrap().len();
        std::fs::write(&f, vec![0u8; len as usize - 1]).unwrap();
    });
    let b3 = run.geometry.boundaries()[4].bytes();
    assert!(
        e.contains("block-3") && e.contains(&format!("expected {b3}")),
        "{e}"
    );
    let e = refused(|d| std::fs::remove_file(d.join("head.f32")).unwrap());
    assert!(e.contains("head.f32"), "{e}");
    let e = refused(|d| {
        let m = std::fs::read_to_string(d.join("manifest.json")).unwrap();
        std::fs::write(d.join("manifest.json"), m.replace("\"head\"", "\"heads\"")).unwrap();
    });
    assert!(e.contains("unknown check `heads`"), "{e}");
    let e = refused(|d| {
        let m = std::fs::read_to_string(d.join("manifest.json")).unwrap();
        std::fs::write(d.join("manifest.json"), m.replace("336", "320")).unwrap();
    });
    assert!(e.contains("fullDimensions"), "{e}");
}

/// Add a second frame to a fixture written by [`write_fixture`]: the scene's frame 4 with its
/// motion and default parameters (so it reads frame 0's history), `output` as its reference.
fn add_frame(dir: &Path, proxy: &[[f32; 4]], motion: &[[f32; 2]], output: &[f32]) {
    let bytes = |v: &[f32]| f32_to_bytes(v);
    std::fs::create_dir_all(dir.join("frames/001")).unwrap();
    std::fs::write(
        dir.join("frames/001/proxy.f32"),
        bytes(proxy.as_flattened()),
    )
    .unwrap();
    std::fs::write(
        dir.join("frames/001/motion.f32"),
        bytes(motion.as_flattened()),
    )
    .unwrap();
    std::fs::write(dir.join("frames/001/output.f32"), bytes(output)).unwrap();
    let path = dir.join("manifest.json");
    let mut m: Manifest = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    m.sequence = Some(Sequence {
        frames: vec![SequenceFrame {
            proxy: "frames/001/proxy.f32".into(),
            motion: "frames/001/motion.f32".into(),
            parameters: FrameParameters::default(),
            output: "frames/001/output.f32".into(),
            head: None,
        }],
    });
    std::fs::write(path, serde_json::to_string_pretty(&m).unwrap()).unwrap();
}

/// `parity --route gpu` on a two-frame sequence: frame 0 (prepared from the proxy on the GPU)
/// matches the CPU run's 77 references; frame 1 has a placeholder reference (a CPU network run
/// of it would take minutes), so it fails, and its dump is checked instead: the GPU's features
/// of frame 1 equal the CPU's prepare with the history of frame 0, and its output the CPU's
/// compose of the GPU's head. With that output as the reference, `--from-dump` passes all 78.
#[test]
fn gpu_route_runs_every_frame_of_a_sequence() {
    if common::Harness::new().is_none() {
        return; // SKIP printed
    }
    let run = shared_run();
    let (model_dir, model) = synthetic_model();
    let scene1 = frame::scene::render(SIZE, SIZE, 4);
    let tmp = tempdir("tools-parity-gpu-");
    let fx = tmp.path().join("fx");
    write_fixture(&fx, run, &Edits::default());
    add_frame(
        &fx,
        &scene1.proxy,
        &scene1.motion,
        &vec![0.0; (SIZE * SIZE * 4) as usize],
    );
    let dump = tmp.path().join("dump");
    let t = std::time::Instant::now();
    let o = openngx(
        &[
            "parity",
            "--model",
            model_dir.to_str().unwrap(),
            "--fixture",
            fx.to_str().unwrap(),
            "--route",
            "gpu",
            "--repeat",
            "1",
            "--dump",
            dump.to_str().unwrap(),
            "--no-verify",
        ],
        &[],
    );
    eprintln!(
        "openngx parity --route gpu (two frames at {SIZE}x{SIZE}): {:.1} s",
        t.elapsed().as_secs_f64()
    );
    let text = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{text}\n{}", stderr(&o));
    let field = run.geometry.field;
    for line in [
        "features from proxy".to_string(),
        "run 1/1: route gpu (".to_string(),
        "(profile f13), 2 frame(s)".to_string(),
        "block-0: exact".to_string(),
        "block-69: exact".to_string(),
        format!("head: exact ({} values)", field.w * field.h * 4),
        "output: exact (16384 values)".to_string(),
        "frame 1 output: FAIL mismatch".to_string(),
        "78 checks: 77 exact, 0 sign-of-zero only, 0 within one code, 1 mismatched, 0 errors, 0 omitted -> FAIL".to_string(),
    ] {
        assert!(text.contains(&line), "missing `{line}` in:\n{text}");
    }

    // Frame 0 of the dump is the CPU run's, features included.
    let read = |n: &str| std::fs::read(dump.join(n)).unwrap();
    assert_eq!(read("features.f32"), f32_to_bytes(&run.features));
    assert_eq!(read("head.f32"), f32_to_bytes(&run.head));
    // Frame 1 on the CPU: the temporal loop from the manifest's seed, frame 0 with the CPU's
    // head, frame 1 with the GPU's head.
    let gpu_features = openngx_tools::fixture::bytes_to_f32(&read("frames/001/features.f32"));
    let gpu_head = openngx_tools::fixture::bytes_to_f32(&read("frames/001/head.f32"));
    let gpu_output = openngx_tools::fixture::bytes_to_f32(&read("frames/001/output.f32"));
    let mut tl = frame::TemporalLoop::new(run.geometry, f16::to_f32(model.blend_scale()));
    tl.state.seed = FRAME_SEED;
    let heads = |h: &[f32]| -> Vec<[f32; 4]> {
        h.chunks_exact(4)
            .map(|c| [c[0], c[1], c[2], c[3]])
            .collect()
    };
    let f0 = tl
        .run_frame(
            &FrameParameters::default().to_frame_params(),
            &run.proxy,
            None,
            |_| heads(&run.head),
        )
        .unwrap();
    assert_eq!(f0.output, run.output);
    let mut cpu_features = Vec::new();
    let f1 = tl
        .run_frame(
            &FrameParameters::default().to_frame_params(),
            &scene1.proxy,
            Some(&scene1.motion),
            |f| {
                cpu_features = frame::prepare::features_f32(f);
                heads(&gpu_head)
            },
        )
        .unwrap();
    assert!(f1.setup.history_valid && f1.setup.seed == FRAME_SEED + 1);
    assert_eq!(f32_to_bytes(&cpu_features), f32_to_bytes(&gpu_features));
    let cpu_output: Vec<f32> = f1
        .output
        .iter()
        .flatten()
        .map(|&h| f16::to_f32(h))
        .collect();
    assert_eq!(f32_to_bytes(&cpu_output), f32_to_bytes(&gpu_output));

    // The same fixture with that output as frame 1's reference: every check of the dump passes.
    let fx2 = tmp.path().join("fx2");
    write_fixture(&fx2, run, &Edits::default());
    add_frame(&fx2, &scene1.proxy, &scene1.motion, &cpu_output);
    let o = parity_from_dump_dir(&dump, &fx2);
    let text = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{text}\n{}", stderr(&o));
    assert!(
        text.contains("frame 1 output: exact (16384 values)")
            && text.contains("78 checks: 78 exact, 0 sign-of-zero only, 0 within one code, 0 mismatched, 0 errors, 0 omitted -> PASS"),
        "{text}"
    );
    // A dump without the later frames lists frame 1 as omitted.
    let o = parity_from_dump(run, &fx2);
    let text = stdout(&o);
    assert!(
        text.contains("frame 1: omitted (not run") && text.contains("77 checks: 77 exact"),
        "{text}"
    );
}
