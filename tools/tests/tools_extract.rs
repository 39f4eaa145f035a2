//! `openngx extract-model` and `model::dll`: a synthetic DLL built from a synthetic model is
//! extracted into an identical model directory; malformed PE files and containers are refused
//! with errors that name the offset and the field.

mod tools_common;

use openngx::model::blocks::STAGES;
use openngx::model::layout;
use openngx::model::{LoadOptions, Model};
use openngx_tools::dll::{self, DllError};
use tools_common::{
    container, model_records, openngx, pe, stderr, stdout, synthetic_model, tempdir, PeSpec,
    RawRecord,
};

fn container_err(e: DllError) -> (u64, u64, Option<usize>, String, String) {
    match e {
        DllError::Container {
            offset,
            file_offset,
            record,
            field,
            reason,
        } => (offset, file_offset, record, field, reason),
        other => panic!("expected a container error, got: {other}"),
    }
}

fn pe_err(e: DllError) -> (u64, String, String) {
    match e {
        DllError::Pe {
            offset,
            field,
            reason,
        } => (offset, field, reason),
        other => panic!("expected a PE error, got: {other}"),
    }
}

#[test]
fn extracts_a_synthetic_dll_into_the_reference_packing() {
    let (model_dir, model) = synthetic_model();
    let c = container(&model_records(model), None);
    assert_eq!(c.len(), 8 + 147_683_778 + 153 * 56 + name_bytes());
    let c_len = c.len();
    let file = pe(&PeSpec::weights(&c));
    drop(c);
    let tmp = tempdir("tools-extract-");
    let dll_path = tmp.path().join("nvngx_dlssnr.dll");
    std::fs::write(&dll_path, &file.bytes).unwrap();
    let out = tmp.path().join("extracted");
    let args = [
        "extract-model",
        "--dll",
        dll_path.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ];
    let o = openngx(&args, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(
        text.contains(&format!(
            "WEIGHTS_HT: {} bytes at file offset {:#x} (language 1033)",
            c_len, file.data_offset
        )),
        "{text}"
    );
    assert!(
        text.contains("11 stages, 153 records, 147683778 bytes"),
        "{text}"
    );

    // Same packing as the synthetic model: every stage file is byte-identical, and the manifest
    // lists the same tensors at the same offsets with the same hashes.
    for stage in STAGES {
        let a = std::fs::read(model_dir.join("model").join(stage)).unwrap();
        let b = std::fs::read(out.join("model").join(stage)).unwrap();
        assert!(a == b, "stage {stage} differs");
    }
    let extracted = Model::load(&out, LoadOptions { verify_sha: true }).unwrap();
    assert_eq!(extracted.manifest().tensors, model.manifest().tensors);
    assert_eq!(extracted.manifest().stages, model.manifest().stages);
    assert!(extracted.manifest().generator.as_deref().is_some_and(
        |g| g.starts_with("openngx extract-model (nvngx_dlssnr.dll, WEIGHTS_HT sha256 ")
    ));

    // The temporary directory was renamed into place: nothing else is left beside it.
    let mut names: Vec<_> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["extracted", "nvngx_dlssnr.dll"]);

    // A second extraction into the now non-empty directory is refused and changes nothing.
    let o = openngx(&args, &[]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("exists and is not empty"),
        "{}",
        stderr(&o)
    );
    assert!(Model::load(&out, LoadOptions { verify_sha: true }).is_ok());

    // Without --out it writes the user data directory the library and the Core search.
    let data = tmp.path().join("data");
    let o = openngx(
        &["extract-model", "--dll", dll_path.to_str().unwrap()],
        &[("XDG_DATA_HOME", data.to_str().unwrap())],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let default = data.join("openngx/model");
    assert!(
        stdout(&o).contains(&format!("{} is the user data directory", default.display())),
        "{}",
        stdout(&o)
    );
    for stage in STAGES {
        let a = std::fs::read(out.join("model").join(stage)).unwrap();
        let b = std::fs::read(default.join("model").join(stage)).unwrap();
        assert!(a == b, "stage {stage} differs in the default directory");
    }
}

/// Bytes of all 153 record names.
fn name_bytes() -> usize {
    layout::records().iter().map(|r| r.id.name().len()).sum()
}

#[test]
fn container_count_total_and_truncation() {
    let (_, model) = synthetic_model();
    let records = model_records(model);
    let good = container(&records, None);
    assert_eq!(dll::parse_container(&good, 0).unwrap().len(), 153);

    // Wrong total length.
    let e = container_err(dll::parse_container(&good[..good.len() - 1], 0x400).unwrap_err());
    assert_eq!(
        (e.0, e.1, e.2, e.3.as_str()),
        (0, 0x400, None, "total length")
    );
    assert!(e.4.contains(&format!("is {}", good.len())), "{}", e.4);

    // Truncated (total adjusted): the last record's trailer is cut short.
    let mut cut = good[..good.len() - 10].to_vec();
    let n = cut.len() as u64;
    cut[..8].copy_from_slice(&n.to_le_bytes());
    let e = container_err(dll::parse_container(&cut, 0).unwrap_err());
    let trailer1 = good.len() - 12;
    assert_eq!(
        (e.0, e.2, e.3.as_str()),
        (trailer1 as u64, Some(152), "trailer word 1")
    );
    assert!(e.4.contains("needs 8 bytes"), "{}", e.4);

    // One record short.
    let mut fewer = records.clone();
    let dropped = fewer.remove(40);
    let c = container(&fewer, None);
    let e = container_err(dll::parse_container(&c, 0).unwrap_err());
    assert_eq!(
        (e.0, e.2, e.3.as_str()),
        (c.len() as u64, None, "record count")
    );
    let dropped_name = String::from_utf8(dropped.name).unwrap();
    assert!(
        e.4.contains("ends after 152 records, expected 153")
            && e.4.contains(&format!("first missing: `{dropped_name}`")),
        "{}",
        e.4
    );

    // Bytes after the 153rd record.
    let mut more = good.clone();
    more.extend_from_slice(&[0u8; 8]);
    let n = more.len() as u64;
    more[..8].copy_from_slice(&n.to_le_bytes());
    let e = container_err(dll::parse_container(&more, 0).unwrap_err());
    assert_eq!(
        (e.0, e.2, e.3.as_str()),
        (good.len() as u64, Some(153), "record count")
    );

    // A record twice (in place of another).
    let mut dup = records.clone();
    dup[5] = dup[4].clone();
    let c = container(&dup, None);
    let e = container_err(dll::parse_container(&c, 0).unwrap_err());
    let at: usize = 8 + dup[..5].iter().map(RawRecord::encoded_len).sum::<usize>() + 8;
    assert_eq!((e.0, e.2, e.3.as_str()), (at as u64, Some(5), "name"));
    assert!(e.4.contains("appears twice (first as record 4)"), "{}", e.4);
}

/// A container of one record, wrapped in a PE, extracted: the error it gives.
fn one_record_error(r: RawRecord) -> (u64, u64, Option<usize>, String, String) {
    let c = container(&[r], None);
    let file = pe(&PeSpec::weights(&c));
    let e = container_err(dll::extract(&file.bytes, "test.dll").unwrap_err());
    assert_eq!(
        e.1,
        file.data_offset as u64 + e.0,
        "file offset of the field"
    );
    e
}

#[test]
fn bad_records_are_refused_with_offset_and_field() {
    let blend = [0xEB, 0x39];
    // Name of a record the model does not have.
    let e = one_record_error(RawRecord::new("block71.layer0.layer", &blend));
    assert_eq!((e.0, e.2, e.3.as_str()), (16, Some(0), "name"));
    assert!(e.4.contains("not a record of the DLSS-NR model"), "{}", e.4);
    // Malformed names.
    for bad in ["block7.layer0.weights", "block07.layer0.layer", "WEIGHTS"] {
        let e = one_record_error(RawRecord::new(bad, &blend));
        assert_eq!((e.0, e.3.as_str()), (16, "name"), "{bad}");
        assert!(e.4.contains("is not block<B>.layer<L>"), "{}", e.4);
    }
    let mut r = RawRecord::new("block70.layer0.blend_scale", &blend);
    r.name = vec![0x62, 0xFF, 0x6C];
    let e = one_record_error(r);
    assert!(e.4.contains("not UTF-8"), "{}", e.4);
    // Name length out of range.
    let mut r = RawRecord::new("block70.layer0.blend_scale", &blend);
    r.name = vec![b'x'; 129];
    let e = one_record_error(r);
    assert_eq!((e.0, e.3.as_str()), (8, "name length"));
    assert!(e.4.contains("is 129, expected 1..=128"), "{}", e.4);

    let name = "block70.layer0.blend_scale";
    let size_at = 16 + name.len() as u64;
    // Odd data length (size fields consistent with it).
    let e = one_record_error(RawRecord::new(name, &[1, 2, 3]));
    assert_eq!((e.0, e.3.as_str()), (size_at + 16, "header dataLength"));
    assert!(e.4.contains("3 is odd"), "{}", e.4);
    // Even but not the record's size.
    let e = one_record_error(RawRecord::new("block0.layer0.layer", &[0; 100]));
    assert_eq!(e.3, "header dataLength");
    assert!(
        e.4.contains("100 bytes, the model's record has 21696"),
        "{}",
        e.4
    );
    // size != dataLength + 40.
    let mut r = RawRecord::new(name, &blend);
    r.size = 43;
    r.header_size = 43;
    let e = one_record_error(r);
    assert_eq!((e.0, e.3.as_str()), (size_at, "size"));
    assert!(
        e.4.contains("is 43, expected dataLength + 40 = 42"),
        "{}",
        e.4
    );
    // Header size copy differs.
    let mut r = RawRecord::new(name, &blend);
    r.header_size = 41;
    let e = one_record_error(r);
    assert_eq!((e.0, e.3.as_str()), (size_at + 8, "header size"));
    // Header word.
    let mut r = RawRecord::new(name, &blend);
    r.one = 2;
    let e = one_record_error(r);
    assert_eq!((e.0, e.3.as_str()), (size_at + 24, "header word"));
    // Trailer.
    let data_end = size_at + 28 + 2;
    let mut r = RawRecord::new(name, &blend);
    r.trailer.0 = 5;
    let e = one_record_error(r);
    assert_eq!((e.0, e.3.as_str()), (data_end, "trailer word 0"));
    let mut r = RawRecord::new(name, &blend);
    r.trailer.1 = 0;
    let e = one_record_error(r);
    assert_eq!((e.0, e.3.as_str()), (data_end + 8, "trailer word 1"));
    let mut r = RawRecord::new(name, &blend);
    r.trailer.2 = 2;
    let e = one_record_error(r);
    assert_eq!(
        (e.0, e.3.as_str()),
        (data_end + 16, "trailer element count")
    );
    assert!(e.4.contains("is 2, expected dataLength/2 = 1"), "{}", e.4);
    // A single well-formed record passes every record check and fails only on the count.
    let e = one_record_error(RawRecord::new(name, &blend));
    assert_eq!(e.3, "record count");
    assert!(e.4.contains("ends after 1 records"), "{}", e.4);
}

#[test]
fn missing_resource_and_bad_pe_structure() {
    let data = container(
        &[RawRecord::new("block70.layer0.blend_scale", &[0xEB, 0x39])],
        None,
    );
    let missing = |spec: PeSpec| match dll::extract(&pe(&spec).bytes, "t").unwrap_err() {
        DllError::MissingResource { reason } => reason,
        other => panic!("expected a missing resource, got: {other}"),
    };
    let r = missing(PeSpec {
        name: "WEIGHTS_XY",
        ..PeSpec::weights(&data)
    });
    assert!(r.contains("no entry named WEIGHTS_HT"), "{r}");
    let r = missing(PeSpec {
        type_id: 3,
        ..PeSpec::weights(&data)
    });
    assert!(r.contains("no RCDATA (type 10) directory"), "{r}");
    let r = missing(PeSpec {
        no_resource_dir: true,
        ..PeSpec::weights(&data)
    });
    assert!(r.contains("no resource directory"), "{r}");
    // The name is matched case-insensitively, like FindResource.
    let lower = pe(&PeSpec {
        name: "weights_ht",
        ..PeSpec::weights(&data)
    });
    let loc = dll::find_weights_resource(&lower.bytes).unwrap();
    assert_eq!((loc.offset, loc.len), (lower.data_offset, data.len()));

    let good = pe(&PeSpec::weights(&data));
    // Not a PE at all.
    let mut b = good.bytes.clone();
    b[0] = b'Z';
    let e = pe_err(dll::extract(&b, "t").unwrap_err());
    assert_eq!((e.0, e.1.as_str()), (0, "DOS header e_magic"));
    let mut b = good.bytes.clone();
    b[0x80] = b'N';
    let e = pe_err(dll::extract(&b, "t").unwrap_err());
    assert_eq!((e.0, e.1.as_str()), (0x80, "PE signature"));
    // Truncated file: the resource section's raw data runs past the end.
    let b = &good.bytes[..good.data_offset + 10];
    let e = pe_err(dll::extract(b, "t").unwrap_err());
    assert_eq!(
        (e.0, e.1.as_str()),
        (good.section_entry as u64 + 16, "section[1] SizeOfRawData")
    );
    assert!(e.2.contains("runs past the end of the file"), "{}", e.2);
    // Truncated inside the headers.
    let e = pe_err(dll::extract(&good.bytes[..0x90], "t").unwrap_err());
    assert_eq!(e.1, "COFF SizeOfOptionalHeader");

    // Bad section mapping: the data entry's RVA lies beyond the section.
    let mut b = good.bytes.clone();
    let beyond = good.rsrc_rva + 0x10_0000;
    b[good.data_entry..good.data_entry + 4].copy_from_slice(&beyond.to_le_bytes());
    let e = pe_err(dll::extract(&b, "t").unwrap_err());
    assert_eq!(
        (e.0, e.1.as_str()),
        (good.data_entry as u64, "WEIGHTS_HT data entry OffsetToData")
    );
    assert!(
        e.2.contains("is not inside one section's raw data"),
        "{}",
        e.2
    );
    // ... or the section's raw data ends before the resource does.
    let mut b = good.bytes.clone();
    let raw = (good.data_offset - good.rsrc_offset + 4) as u32;
    b[good.section_entry + 16..good.section_entry + 20].copy_from_slice(&raw.to_le_bytes());
    let e = pe_err(dll::extract(&b, "t").unwrap_err());
    assert_eq!(e.1, "WEIGHTS_HT data entry OffsetToData");
    assert!(e.2.contains("section `.rsrc`"), "{}", e.2);
    // The resource directory itself not backed by the file.
    let mut b = good.bytes.clone();
    let opt = 0x80 + 4 + 20;
    b[opt + 128..opt + 132].copy_from_slice(&0x9000u32.to_le_bytes());
    let e = pe_err(dll::extract(&b, "t").unwrap_err());
    assert_eq!(e.1, "resource data directory RVA");
}
