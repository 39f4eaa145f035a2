//! Helpers shared by the `tools_*` integration tests: a private copy of the `openngx` binary, a
//! synthetic model written once per test process, and writers for the native weights container
//! and for just enough of a PE file (one `.rsrc` section with a three-level resource tree) to
//! carry it.
#![allow(dead_code)] // each test binary uses a different part

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use openngx::model::{layout, LoadOptions, Model};
use openngx_tools::synth;

/// A private copy of the binary under test. The target directory is shared by several
/// worktrees whose builds may replace `openngx` at any time; a copy taken once (and checked to be
/// this branch's) keeps the tests from racing them.
pub fn binary() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        let copy = scratch().join("openngx");
        std::fs::copy(env!("CARGO_BIN_EXE_openngx"), &copy).expect("copy the openngx binary");
        let help = Command::new(&copy)
            .arg("--help")
            .output()
            .expect("run openngx");
        let help = String::from_utf8_lossy(&help.stdout);
        assert!(
            ["extract-model", "parity", "doctor"]
                .iter()
                .all(|c| help.contains(c)),
            "{} is not this branch's openngx (another worktree rebuilt it); rerun the test",
            env!("CARGO_BIN_EXE_openngx")
        );
        copy
    })
}

/// Run the private binary.
pub fn openngx(args: &[&str], envs: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(binary());
    cmd.args(args);
    for (k, v) in envs {
        cmd.env(k, v);
    }
    cmd.output().expect("run openngx")
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A fresh temporary directory under the target's test scratch space.
pub fn tempdir(prefix: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(prefix)
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .expect("temp dir")
}

/// This test process's scratch directory (the binary's copy, the synthetic model), removed when
/// the process exits: what statics hold is never dropped, so a `TempDir` there would stay behind
/// in the target directory, which CI keeps between runs.
pub fn scratch() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        openngx_tools::scratch::process_dir(Path::new(env!("CARGO_TARGET_TMPDIR")), "tools-test")
            .expect("scratch dir")
    })
}

/// Seed of the shared synthetic model.
pub const SEED: u64 = 11;

/// A synthetic model directory written once per test process (and removed at its exit), with
/// the model loaded from it.
pub fn synthetic_model() -> &'static (PathBuf, Model) {
    static MODEL: OnceLock<(PathBuf, Model)> = OnceLock::new();
    MODEL.get_or_init(|| {
        let dir = scratch().join("model");
        synth::write_model(&dir, SEED, &synth::SynthParams::DEFAULT, false)
            .expect("write the synthetic model");
        let model = Model::load(&dir, LoadOptions { verify_sha: false }).expect("load it back");
        (dir, model)
    })
}

// ------------------------------------------------------------------------------------------------
// The native container (spec nr-network §3.7)

/// One record as written: every field can be set independently to build malformed containers.
#[derive(Clone, Debug)]
pub struct RawRecord {
    pub name: Vec<u8>,
    pub size: u64,
    pub header_size: u64,
    pub data_len: u64,
    pub one: u32,
    pub data: Vec<u8>,
    pub trailer: (u64, u64, u32),
}

impl RawRecord {
    /// A well-formed record.
    pub fn new(name: &str, data: &[u8]) -> RawRecord {
        let n = data.len() as u64;
        RawRecord {
            name: name.as_bytes().to_vec(),
            size: n + 40,
            header_size: n + 40,
            data_len: n,
            one: 1,
            data: data.to_vec(),
            trailer: (0, 1, (n / 2) as u32),
        }
    }

    /// Bytes this record occupies in the container.
    pub fn encoded_len(&self) -> usize {
        8 + self.name.len() + 8 + 20 + self.data.len() + 20
    }
}

/// The container bytes: u64 total length, then the records. `total` = None writes the true length.
pub fn container(records: &[RawRecord], total: Option<u64>) -> Vec<u8> {
    let len = 8 + records.iter().map(RawRecord::encoded_len).sum::<usize>();
    let mut out = Vec::with_capacity(len);
    out.extend_from_slice(&total.unwrap_or(len as u64).to_le_bytes());
    for r in records {
        out.extend_from_slice(&(r.name.len() as u64).to_le_bytes());
        out.extend_from_slice(&r.name);
        out.extend_from_slice(&r.size.to_le_bytes());
        out.extend_from_slice(&r.header_size.to_le_bytes());
        out.extend_from_slice(&r.data_len.to_le_bytes());
        out.extend_from_slice(&r.one.to_le_bytes());
        out.extend_from_slice(&r.data);
        out.extend_from_slice(&r.trailer.0.to_le_bytes());
        out.extend_from_slice(&r.trailer.1.to_le_bytes());
        out.extend_from_slice(&r.trailer.2.to_le_bytes());
    }
    out
}

/// The 153 records of a model, in an order unlike the reference packing (reversed), to show
/// that the extractor does not depend on it.
pub fn model_records(model: &Model) -> Vec<RawRecord> {
    layout::records()
        .iter()
        .rev()
        .map(|spec| {
            let bytes = model.try_record(spec.id).expect("record of a loaded model");
            RawRecord::new(&spec.id.name(), bytes)
        })
        .collect()
}

// ------------------------------------------------------------------------------------------------
// A minimal PE32+ file

/// Layout facts of a written PE, for tests that patch fields.
#[derive(Clone, Debug)]
pub struct PeFile {
    pub bytes: Vec<u8>,
    /// File offset of the `.rsrc` section's raw data (= the resource tree root).
    pub rsrc_offset: usize,
    /// RVA of the `.rsrc` section.
    pub rsrc_rva: u32,
    /// File offset of the section table entry of `.rsrc`.
    pub section_entry: usize,
    /// File offset of the data entry (`OffsetToData` RVA, `Size`, ...).
    pub data_entry: usize,
    /// File offset of the resource data.
    pub data_offset: usize,
}

/// What to put in the resource tree.
#[derive(Clone, Debug)]
pub struct PeSpec<'a> {
    /// Resource type id (10 = RCDATA).
    pub type_id: u32,
    /// Resource name.
    pub name: &'a str,
    /// Language id.
    pub language: u32,
    pub data: &'a [u8],
    /// Leave the resource data directory empty (no resource tree at all).
    pub no_resource_dir: bool,
}

impl<'a> PeSpec<'a> {
    pub fn weights(data: &'a [u8]) -> PeSpec<'a> {
        PeSpec {
            type_id: 10,
            name: "WEIGHTS_HT",
            language: 1033,
            data,
            no_resource_dir: false,
        }
    }
}

fn put16(b: &mut [u8], at: usize, v: u16) {
    b[at..at + 2].copy_from_slice(&v.to_le_bytes());
}
fn put32(b: &mut [u8], at: usize, v: u32) {
    b[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

/// Write a PE32+ image: DOS header, PE signature, COFF header, optional header with 16 data
/// directories, one `.text`-like empty section and the `.rsrc` section holding a type -> name ->
/// language tree whose single data entry points at `spec.data`.
pub fn pe(spec: &PeSpec) -> PeFile {
    const FILE_ALIGN: usize = 0x200;
    let e_lfanew = 0x80usize;
    let coff = e_lfanew + 4;
    let opt = coff + 20;
    let opt_size = 112 + 16 * 8; // PE32+ fixed part + 16 directories
    let table = opt + opt_size;
    let n_sections = 2;
    let headers_end = (table + 40 * n_sections).next_multiple_of(FILE_ALIGN);

    // Resource tree, offsets relative to its start.
    let root = 0usize;
    let names_dir = 0x18usize; // root: 16 + 1 entry
    let langs_dir = names_dir + 0x18;
    let data_entry = langs_dir + 0x18;
    let name_str = data_entry + 16;
    let name_units: Vec<u16> = spec.name.encode_utf16().collect();
    let data_rel = (name_str + 2 + 2 * name_units.len()).next_multiple_of(16);
    let rsrc_len = data_rel + spec.data.len();
    let rsrc_raw = rsrc_len.next_multiple_of(FILE_ALIGN);
    let rsrc_offset = headers_end + FILE_ALIGN; // after the first (one-block) section
    let rsrc_rva = 0x2000u32;
    let total = rsrc_offset + rsrc_raw;

    let mut b = vec![0u8; total];
    b[0..2].copy_from_slice(b"MZ");
    put32(&mut b, 0x3C, e_lfanew as u32);
    b[e_lfanew..e_lfanew + 4].copy_from_slice(b"PE\0\0");
    put16(&mut b, coff, 0x8664); // x86-64
    put16(&mut b, coff + 2, n_sections as u16);
    put16(&mut b, coff + 16, opt_size as u16);
    put16(&mut b, coff + 18, 0x2022); // executable, large-address aware, DLL
    put16(&mut b, opt, 0x20B);
    put32(&mut b, opt + 32, 0x1000); // SectionAlignment
    put32(&mut b, opt + 36, FILE_ALIGN as u32);
    put32(
        &mut b,
        opt + 56,
        rsrc_rva + rsrc_len.next_multiple_of(0x1000) as u32,
    ); // SizeOfImage
    put32(&mut b, opt + 60, headers_end as u32); // SizeOfHeaders
    put32(&mut b, opt + 108, 16); // NumberOfRvaAndSizes
    if !spec.no_resource_dir {
        put32(&mut b, opt + 112 + 16, rsrc_rva);
        put32(&mut b, opt + 112 + 20, rsrc_len as u32);
    }
    // Section 0: `.text`, one file block, nothing in it.
    let s0 = table;
    b[s0..s0 + 5].copy_from_slice(b".text");
    put32(&mut b, s0 + 8, 0x10);
    put32(&mut b, s0 + 12, 0x1000);
    put32(&mut b, s0 + 16, FILE_ALIGN as u32);
    put32(&mut b, s0 + 20, headers_end as u32);
    // Section 1: `.rsrc`.
    let s1 = table + 40;
    b[s1..s1 + 5].copy_from_slice(b".rsrc");
    put32(&mut b, s1 + 8, rsrc_len as u32);
    put32(&mut b, s1 + 12, rsrc_rva);
    put32(&mut b, s1 + 16, rsrc_raw as u32);
    put32(&mut b, s1 + 20, rsrc_offset as u32);
    put32(&mut b, s1 + 36, 0x4000_0040); // initialized data, readable

    let t = rsrc_offset;
    // Root: one id entry (the type) -> names directory.
    put16(&mut b, t + root + 14, 1);
    put32(&mut b, t + root + 16, spec.type_id);
    put32(&mut b, t + root + 20, 0x8000_0000 | names_dir as u32);
    // Names: one named entry -> languages directory.
    put16(&mut b, t + names_dir + 12, 1);
    put32(&mut b, t + names_dir + 16, 0x8000_0000 | name_str as u32);
    put32(&mut b, t + names_dir + 20, 0x8000_0000 | langs_dir as u32);
    // Languages: one id entry -> data entry.
    put16(&mut b, t + langs_dir + 14, 1);
    put32(&mut b, t + langs_dir + 16, spec.language);
    put32(&mut b, t + langs_dir + 20, data_entry as u32);
    // Data entry: RVA and size of the data.
    put32(&mut b, t + data_entry, rsrc_rva + data_rel as u32);
    put32(&mut b, t + data_entry + 4, spec.data.len() as u32);
    // Name string: u16 length + UTF-16LE.
    put16(&mut b, t + name_str, name_units.len() as u16);
    for (i, u) in name_units.iter().enumerate() {
        put16(&mut b, t + name_str + 2 + 2 * i, *u);
    }
    b[t + data_rel..t + data_rel + spec.data.len()].copy_from_slice(spec.data);
    PeFile {
        bytes: b,
        rsrc_offset,
        rsrc_rva,
        section_entry: s1,
        data_entry: t + data_entry,
        data_offset: t + data_rel,
    }
}
