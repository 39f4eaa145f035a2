//! The committed seeds of the `model`, `fixture` and `params` targets (`fuzz/corpus/TARGET/`),
//! written by `fuzz/run seeds` (this module's test, ignored in ordinary runs) and checked there:
//! each seed must get as far as it is meant to (a model seed through every stage check, a
//! fixture seed loaded, ...), or the fuzzer would start from inputs that stop early. The `pe`
//! seeds come from `tools/tests/pe_mutation.rs` (its DLL writer is the tools' test support).

use std::path::{Path, PathBuf};

use openngx::model::load::check_files;
use openngx::model::Manifest;
use openngx::nr::geometry::Geometry;
use openngx_tools::fixture::{self, BlockRef, FileRef, OutputRef, ProxyRef, TransitionRef};

use crate::tree::{self, Scratch, Script};

/// `fuzz/corpus/<target>`.
fn corpus(target: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("corpus")
        .join(target)
}

fn put(target: &str, name: &str, bytes: &[u8]) {
    let dir = corpus(target);
    std::fs::create_dir_all(&dir).expect("corpus dir");
    std::fs::write(dir.join(name), bytes).expect("write seed");
}

/// Builds the directory of a `manifest + script` input as the targets do.
/// (Without a script, `auto` runs alone, as the model target does.)
fn build(scratch: &Scratch, input: &[u8], mut auto: impl FnMut(&Path)) -> tree::Top {
    let (m, s) = tree::split(input);
    let top = scratch.fresh();
    match s {
        Some(s) => tree::apply(&top, s, auto),
        None => auto(&top.dir),
    }
    tree::write_new(&top.dir, Path::new("manifest.json"), m);
    top
}

/// The model seeds: a synthetic model's manifest (as `openngx synth-model` writes it), alone
/// (every stage made at its size) and with scripts that put links, FIFOs, aliases and
/// directories where the loader must refuse them.
fn model_seeds() {
    let synth = openngx_tools::synth::synthesize(11, &openngx_tools::synth::SynthParams::DEFAULT);
    let manifest = synth.manifest.to_json();
    let m = Manifest::from_json(&manifest).expect("synthetic manifest");
    let stage = |i: usize| format!("model/{}", m.stages[i].file);
    let scratch = Scratch::new("seeds-model");
    let make = |dir: &Path| {
        for st in &m.stages {
            tree::sparse(
                dir,
                &Path::new("model").join(&st.file),
                st.packed_byte_length,
            );
        }
    };

    put("model", "synth", manifest.as_bytes());
    let top = build(&scratch, manifest.as_bytes(), make);
    check_files(&top.dir).expect("the synthetic manifest passes every stage check");

    // Two stages of one size, for the alias (a file under two names is refused by identity,
    // after the size check).
    let same = (0..m.stages.len()).find_map(|i| {
        (i + 1..m.stages.len())
            .find(|&j| m.stages[j].packed_byte_length == m.stages[i].packed_byte_length)
            .map(|j| (i, j))
    });
    let mut inside = Script::new();
    for st in &m.stages {
        inside = inside.sparse(&format!("real/{}", st.file), st.packed_byte_length);
    }
    let mut variants: Vec<(&str, Script, Option<&str>)> = vec![
        (
            "stage-link-outside",
            Script::new().link_to(&stage(0), 3).auto(),
            Some("outside the model directory"),
        ),
        (
            "stage-fifo",
            Script::new().fifo(&stage(1)).auto(),
            Some("not a regular file"),
        ),
        ("model-dir-link-inside", inside.link("model", "real"), None),
        (
            "manifest-dev-zero",
            Script::new().link_to("manifest.json", 1),
            Some("not a regular file"),
        ),
        (
            "manifest-fifo",
            Script::new().fifo("manifest.json"),
            Some("not a regular file"),
        ),
        (
            "stage-short",
            Script::new()
                .sparse(&stage(3), m.stages[3].packed_byte_length - 1)
                .auto(),
            Some("packedByteLength says"),
        ),
    ];
    if let Some((i, j)) = same {
        variants.push((
            "stage-alias",
            Script::new()
                .sparse(&stage(i), m.stages[i].packed_byte_length)
                .hard_link(&stage(j), &stage(i))
                .auto(),
            Some("under another name"),
        ));
    }
    for (name, script, says) in variants {
        let input = script.input(manifest.as_bytes());
        put("model", name, &input);
        let top = build(&scratch, &input, make);
        match (check_files(&top.dir), says) {
            (Ok(()), None) => {}
            (Err(e), Some(says)) => assert!(e.to_string().contains(says), "{name}: {e}"),
            (r, _) => panic!("{name}: {r:?}"),
        }
    }
}

/// The fixture seed: a 64x64 fixture manifest like `openngx reference` writes, with sparse data
/// files of exactly the sizes docs/testing.md gives, and a two-frame sequence.
fn fixture_seeds() {
    let g = Geometry::new(64, 64).expect("64x64");
    let (w, h) = (g.valid.w as usize, g.valid.h as usize);
    let rows = g.field.w as usize * g.field.h as usize;
    let mut script = Script::new()
        .sparse("proxy.f32", (w * h * 16) as u64)
        .sparse("motion.f32", (w * h * 8) as u64)
        .sparse("features.f32", (rows * 64) as u64)
        .sparse("head.f32", (rows * 16) as u64)
        .sparse("output.f32", (w * h * 16) as u64);
    let (mut blocks, mut transitions) = (Vec::new(), Vec::new());
    for b in g.boundaries() {
        let file = format!("native/{}.u8", b.name);
        script = script.sparse(&file, b.bytes());
        let (width, height, channels) = (b.width as usize, b.height as usize, b.channels as usize);
        if let Some(id) = b.name.strip_prefix("transition-") {
            transitions.push(TransitionRef {
                id: id.into(),
                width,
                height,
                channels,
                file,
            });
        } else if let Some(n) = b.name.strip_prefix("block-").and_then(|n| n.parse().ok()) {
            blocks.push(BlockRef {
                block: n,
                width,
                height,
                channels,
                file,
            });
        }
    }
    for f in ["frames/001", "frames/002"] {
        script = script
            .sparse(&format!("{f}/proxy.f32"), (w * h * 16) as u64)
            .sparse(&format!("{f}/motion.f32"), (w * h * 8) as u64)
            .sparse(&format!("{f}/output.f32"), (w * h * 16) as u64)
            .sparse(&format!("{f}/head.f32"), (rows * 16) as u64);
    }
    let frame = |f: &str| fixture::SequenceFrame {
        proxy: format!("{f}/proxy.f32"),
        motion: format!("{f}/motion.f32"),
        parameters: fixture::FrameParameters::default(),
        output: format!("{f}/output.f32"),
        head: Some(format!("{f}/head.f32")),
    };
    let manifest = fixture::Manifest {
        source_dimensions: [w, h],
        full_dimensions: [g.field.w as usize, g.field.h as usize],
        proxy: Some(ProxyRef {
            file: "proxy.f32".into(),
            width: w,
            height: h,
            conditioning: fixture::Conditioning::default(),
            seed: 7,
            auto_mask: true,
            motion: Some("motion.f32".into()),
        }),
        input_features: Some(FileRef {
            file: "features.f32".into(),
        }),
        checks: vec!["boundaries".into(), "head".into(), "output".into()],
        blocks,
        transitions,
        omitted_boundaries: Default::default(),
        reference_head: Some(FileRef {
            file: "head.f32".into(),
        }),
        native_output: Some(OutputRef {
            file: "output.f32".into(),
            dtype: "f32".into(),
        }),
        sequence: Some(fixture::Sequence {
            frames: vec![frame("frames/001"), frame("frames/002")],
        }),
        profile: Some("f13".into()),
    };
    let json = serde_json::to_string_pretty(&manifest).expect("fixture manifest");
    let scratch = Scratch::new("seeds-fixture");
    let input = script.input(json.as_bytes());
    put("fixture", "seq64", &input);
    let top = build(&scratch, &input, |_| {});
    fixture::Fixture::load(&top.dir).expect("the fixture seed loads");

    // A proxy-only fixture (output check) and one whose files are links and FIFOs.
    let small = fixture::Manifest {
        input_features: None,
        checks: vec!["output".into()],
        blocks: vec![],
        transitions: vec![],
        reference_head: None,
        sequence: None,
        ..manifest.clone()
    };
    let json = serde_json::to_string_pretty(&small).expect("fixture manifest");
    let ok = Script::new()
        .sparse("proxy.f32", (w * h * 16) as u64)
        .sparse("motion.f32", (w * h * 8) as u64)
        .sparse("output.f32", (w * h * 16) as u64);
    let input = ok.input(json.as_bytes());
    put("fixture", "output64", &input);
    let top = build(&scratch, &input, |_| {});
    fixture::Fixture::load(&top.dir).expect("the output-only seed loads");
    let hostile = Script::new()
        .link_to("proxy.f32", 3)
        .fifo("motion.f32")
        .link("output.f32", "../outside/secret");
    put("fixture", "links64", &hostile.input(json.as_bytes()));
}

/// Operation sequences for the `params` target (its opcodes: fuzz_targets/params.rs).
fn params_seeds() {
    // Init (device 0, version 0x15, no info), Allocate, SetUI "DLSSNR.Width" on map 0, GetF,
    // GetULL through the vtable, Destroy map 0, Destroy it again, Get on the stale map, Shutdown.
    let init = [0u8, 0x0C, 0x00, 0x00];
    let mut seq = Vec::new();
    seq.extend_from_slice(&init);
    seq.push(2); // AllocateParameters
    seq.extend_from_slice(&[6, 0, 6, 3]); // C SetUI(map 0, "DLSSNR.Width")
    seq.extend_from_slice(&1920u32.to_le_bytes());
    seq.extend_from_slice(&[8, 0, 6, 1]); // C GetF
    seq.extend_from_slice(&[9, 0, 6, 0]); // vtable GetULL
    seq.extend_from_slice(&[5, 0, 5, 0]); // Destroy map 0, twice
    seq.extend_from_slice(&[8, 0, 6, 3]); // GetUI on the stale map
    seq.extend_from_slice(&[1, 0]); // Shutdown
    put("params", "lifecycle", &seq);

    // Capability maps, GetParameters, the callbacks, Reset, a foreign object, NULL.
    let mut seq = Vec::new();
    seq.extend_from_slice(&init);
    seq.extend_from_slice(&[3, 4]); // GetCapabilityParameters, GetParameters
    seq.extend_from_slice(&[11 | 0x80, 0, 0]); // stats callback of map 0 on map 0
    seq.extend_from_slice(&[11, 8, 5]); // scaling callback of map 1 on the foreign object
    seq.extend_from_slice(&[6, 5, 8, 4]); // SetI(foreign, "PerfQualityValue")
    seq.extend_from_slice(&2i32.to_le_bytes());
    seq.extend_from_slice(&[11, 0, 5]); // scaling callback again: reads it
    seq.extend_from_slice(&[10, 8]); // Reset map 1
    seq.extend_from_slice(&[8, 8, 0, 4]); // GetI "DLSSNR.Available" on map 1
    seq.extend_from_slice(&[6, 7, 13, 0]); // SetULL on NULL
    seq.extend_from_slice(&0u64.to_le_bytes());
    seq.extend_from_slice(&[7, 6, 13, 1]); // SetF through... the no-vtable object (skipped)
    seq.extend_from_slice(&1.5f32.to_le_bytes());
    seq.extend_from_slice(&[5, 0xFF]); // Destroy an arbitrary address
    seq.extend_from_slice(&0x1234_5678u64.to_le_bytes());
    seq.extend_from_slice(&[5, 8]); // Destroy the GetParameters map: refused
    seq.extend_from_slice(&[1, 0]); // Shutdown (retires the GetParameters map)
    seq.extend_from_slice(&[8, 8, 0, 4]); // Get on it
    put("params", "capabilities", &seq);

    // Values that exercise the conversions: floats out of range, NaN, large integers.
    let mut seq = Vec::new();
    seq.extend_from_slice(&init);
    seq.push(2);
    for (ty, bits) in [
        (1u8, 1e10f32.to_bits() as u64),
        (1, (-5.0f32).to_bits() as u64),
        (1, f32::NAN.to_bits() as u64),
        (2, (-1e300f64).to_bits()),
        (0, (1u64 << 60) + (1 << 36) + 1),
        (4, 0xFFFF_FFFF),
    ] {
        seq.extend_from_slice(&[6, 0, 13, ty]);
        let n = match ty {
            1 | 3 | 4 => 4,
            _ => 8,
        };
        seq.extend_from_slice(&bits.to_le_bytes()[..n]);
        for get in 0..5u8 {
            seq.extend_from_slice(&[8, 0, 13, get]);
        }
    }
    seq.extend_from_slice(&[1, 0]);
    put("params", "conversions", &seq);
}

#[test]
#[ignore = "writes fuzz/corpus/; run by `fuzz/run seeds`"]
fn write_seeds() {
    model_seeds();
    fixture_seeds();
    params_seeds();
}
