//! `openngx extract-model --feature rr` and `rr_dll`: a synthetic DLL built by the test from
//! synthetic Ray Reconstruction weights (binary16 stages inside a PE section) is extracted into
//! the same images byte for byte; DLLs whose tensors do not have the structure are refused with a
//! message that names what is wrong. About 6 MB of stages per DLL; a few seconds in all.

mod tools_common;

use std::sync::OnceLock;

use openngx::model::LoadOptions;
use openngx::rr::layers::LayerId;
use openngx::rr::weights::model::RrModel;
use openngx::rr::weights::RrWeights;
use openngx_tools::rr_dll::{self, RrDllError};
use openngx_tools::rr_synth::{self, RrSynthParams};
use tools_common::{openngx, pe, stderr, stdout, tempdir, PeFile, PeSpec};

/// Junk before the stages (even: binary16 arrays are 2-byte aligned).
const PREFIX: usize = 1000;

fn weights() -> &'static RrWeights {
    static W: OnceLock<RrWeights> = OnceLock::new();
    W.get_or_init(|| rr_synth::synthesize(11, &RrSynthParams::DEFAULT).expect("synthesize"))
}

/// A PE whose one data section holds `data` (in an RCDATA resource, which is just a place in
/// a section: the extractor searches every section's raw data).
fn dll_with(data: &[u8]) -> PeFile {
    pe(&PeSpec {
        type_id: 10,
        name: "DLDN",
        language: 1033,
        data,
        no_resource_dir: false,
    })
}

/// Junk, the stages, junk (even lengths: the extractor searches 2-byte aligned offsets).
fn framed(stages: &[u8]) -> Vec<u8> {
    let mut data: Vec<u8> = (0..PREFIX).map(|i| (i * 37 % 251) as u8).collect();
    data.extend_from_slice(stages);
    data.extend((0..778).map(|i| (i * 11 % 253) as u8));
    data
}

fn structure_error(pe: &[u8]) -> String {
    match rr_dll::extract(pe, "test.dll") {
        Err(RrDllError::Structure(m)) => m,
        Err(other) => panic!("expected a structure error, got: {other}"),
        Ok(ex) => panic!(
            "extracted from a DLL that should be refused: {:?}",
            ex.located
        ),
    }
}

#[test]
fn a_synthetic_dll_gives_back_the_same_images() {
    let w = weights();
    let stages = rr_dll::stage_bytes(w);
    assert_eq!(stages.len(), rr_dll::dll_bytes());
    let dll = dll_with(&framed(&stages));
    let ex = rr_dll::extract(&dll.bytes, "test.dll").expect("extract");
    assert_eq!(ex.located.offset, dll.data_offset + PREFIX);
    assert_eq!(ex.located.len, stages.len());
    assert_eq!(ex.located.section, ".rsrc");
    assert_eq!((ex.saturated, ex.nan), (0, 0));
    for id in LayerId::ALL {
        assert_eq!(ex.weights.image(id), w.image(id), "{id}");
    }
    assert!(ex
        .manifest
        .generator
        .as_deref()
        .unwrap_or("")
        .contains("test.dll"));
}

#[test]
fn the_cli_writes_a_model_directory_that_loads() {
    let tmp = tempdir("rr-extract-");
    let dll_path = tmp.path().join("nvngx_dlssd.dll");
    std::fs::write(
        &dll_path,
        dll_with(&framed(&rr_dll::stage_bytes(weights()))).bytes,
    )
    .expect("write the DLL");
    let out = tmp.path().join("rr");
    let o = openngx(
        &[
            "extract-model",
            "--feature",
            "rr",
            "--dll",
            dll_path.to_str().expect("utf-8"),
            "--out",
            out.to_str().expect("utf-8"),
        ],
        &[],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(text.contains("Ray Reconstruction stages: "), "{text}");
    assert!(text.contains("11 images, 2852736 bytes"), "{text}");
    let model = RrModel::load(&out, LoadOptions::default()).expect("load");
    assert_eq!(model.weights(), weights());
    let o = openngx(&["validate-model", out.to_str().expect("utf-8")], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    assert!(stdout(&o).contains("network: Ray Reconstruction"));

    // A DLL without the structure: exit 1, the reason on stderr, nothing written.
    std::fs::write(&dll_path, dll_with(&vec![0u8; 100_000]).bytes).expect("write");
    let out2 = tmp.path().join("none");
    let o = openngx(
        &[
            "extract-model",
            "--feature",
            "rr",
            "--dll",
            dll_path.to_str().expect("utf-8"),
            "--out",
            out2.to_str().expect("utf-8"),
        ],
        &[],
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("no section holds a relative-position bias table"),
        "{}",
        stderr(&o)
    );
    assert!(!out2.exists());
}

#[test]
fn conversion_rounds_saturates_and_keeps_nan() {
    // enc0's embedding W1 is the first item of the stages: natural [32][32] binary16.
    let mut stages = rr_dll::stage_bytes(weights());
    let put =
        |s: &mut Vec<u8>, i: usize, h: u16| s[2 * i..2 * i + 2].copy_from_slice(&h.to_le_bytes());
    put(&mut stages, 0, 0x7C00); // +inf -> +448
    put(&mut stages, 1, 0xFE00); // -NaN -> 0xFF
    put(&mut stages, 2, 0x5F80); // 480 -> saturates to 448
    put(&mut stages, 3, 0x5A40); // 200: halfway between 192 and 208 -> 192 (even mantissa)
    put(&mut stages, 4, 0x3C40); // 1.0625: halfway between 1.0 and 1.125 -> 1.0 (even)
    put(&mut stages, 5, 0x3CC0); // 1.1875: halfway between 1.125 and 1.25 -> 1.25 (even)
    put(&mut stages, 6, 0x8000); // -0 keeps its sign
    let ex = rr_dll::extract(&dll_with(&framed(&stages)).bytes, "t").expect("extract");
    let w1 = ex.weights.layer(LayerId::Enc0).embed_p1().expect("enc0").w;
    let row0: Vec<u8> = w1.row(0)[..7].to_vec();
    assert_eq!(row0, [0x7E, 0xFF, 0x7E, 0x74, 0x38, 0x3A, 0x80]);
    assert_eq!((ex.saturated, ex.nan), (2, 1));
}

#[test]
fn missing_head_is_named() {
    // Drop enc4's last head (its QK, V, bias and Wo: 192·160 + 12288 bytes).
    let stages = rr_dll::stage_bytes(weights());
    // Where enc4's head 7 starts in the stages: the bias positions step 192C + 12288, and the
    // head's slab starts 2·(32C + 32C) bytes before its bias.
    let enc4_head7_bias = locate_bias(&stages, LayerId::Enc4, 7);
    let head = enc4_head7_bias - 2 * 64 * 160;
    let mut cut = stages[..head].to_vec();
    cut.extend_from_slice(&stages[head + 192 * 160 + 12288..]);
    let m = structure_error(&dll_with(&framed(&cut)).bytes);
    assert!(
        m.contains("enc4 head 7 (C=160, 8 heads) has no bias table"),
        "{m}"
    );
    assert!(m.contains("7 heads of C=160"), "{m}");
    assert!(
        m.contains("the tables of enc0 head 0 .. enc4 head 6"),
        "{m}"
    );
}

#[test]
fn a_broken_table_is_named() {
    let mut stages = rr_dll::stage_bytes(weights());
    let bias = locate_bias(&stages, LayerId::Dec2, 1);
    // One entry of the window block (query 10, key 3) no longer matches its offset's value.
    let at = bias + 2 * (10 * 96 + 3);
    stages[at] ^= 0x40;
    let m = structure_error(&dll_with(&framed(&stages)).bytes);
    assert!(
        m.contains("then dec2 head 1 (C=96, 4 heads) has no bias table"),
        "{m}"
    );
}

#[test]
fn two_copies_are_ambiguous() {
    let stages = rr_dll::stage_bytes(weights());
    let mut data = framed(&stages);
    data.extend_from_slice(&stages);
    let m = structure_error(&dll_with(&data).bytes);
    assert!(m.contains("the eleven stages occur 2 times"), "{m}");
}

#[test]
fn stages_cut_short_are_refused() {
    let stages = rr_dll::stage_bytes(weights());
    // Every table is there, but dec0's MLP is cut off by the end of the section.
    let cut = &stages[..stages.len() - 4096];
    let m = structure_error(&dll_with(cut).bytes);
    assert!(m.contains("run past the section's raw data"), "{m}");
    assert!(!m.contains("best start"), "{m}");
}

#[test]
fn no_tables_and_not_a_pe() {
    let m = structure_error(&dll_with(&vec![0u8; 50_000]).bytes);
    assert!(
        m.contains("no section holds a relative-position bias table"),
        "{m}"
    );
    // Not a PE file at all: the PE reader's error.
    match rr_dll::extract(b"not a dll at all, just some bytes", "t") {
        Err(RrDllError::Dll(e)) => assert!(e.to_string().contains("not `MZ`"), "{e}"),
        other => panic!("expected a PE error, got {:?}", other.map(|e| e.located)),
    }
}

/// Offset of layer `id` head `h`'s bias table in `stages` (found by search: the test does not
/// restate the extractor's offsets).
fn locate_bias(stages: &[u8], id: LayerId, h: usize) -> usize {
    let tables = rr_dll::find_bias_tables(stages);
    assert_eq!(tables.len(), 48);
    let index: usize = LayerId::ALL[..id.index()]
        .iter()
        .map(|l| l.layer().heads)
        .sum::<usize>()
        + h;
    tables[index]
}
