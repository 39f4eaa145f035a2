//! The DLL extractor (`openngx_tools::dll`) on the input as a DLL: the PE headers and section
//! table, the resource tree down to `WEIGHTS_HT`, the weights container inside it and the
//! repacking; and the container parser on the input as a bare container.
//!
//! Checked beyond "no panic, no hang": every offset the reader returns lies inside the file (a
//! section's raw data, the resource's bytes, each record's data), and the steps agree (a DLL
//! that extracts has a resource that was found, in an image that parsed).
#![no_main]

use std::collections::HashSet;

use openngx::model::layout::RECORD_COUNT;
use openngx_tools::dll::{self, PeImage};

openngx_fuzz::fuzz_target!(|data| {
    let image = PeImage::parse(data);
    match &image {
        Ok(img) => {
            for s in &img.sections {
                assert!(s.raw_offset as u64 + s.raw_size as u64 <= data.len() as u64);
            }
            // The resource directory's RVA and a few others translated: inside the file.
            let probes = [
                img.resource_rva,
                img.resource_rva.wrapping_add(16),
                0,
                0x1000,
            ];
            for rva in probes {
                for len in [0u64, 1, 16, img.resource_size as u64] {
                    if let Some(off) = img.rva_to_offset(rva, len) {
                        assert!(off as u64 + len <= data.len() as u64, "rva {rva:#x}+{len}");
                    }
                }
            }
        }
        Err(e) => drop(e.to_string()),
    }

    let found = dll::find_weights_resource(data);
    match &found {
        Ok(loc) => {
            assert!(
                image.is_ok(),
                "a resource found in an image that did not parse"
            );
            assert!(loc.offset + loc.len <= data.len(), "resource past the end");
        }
        Err(e) => drop(e.to_string()),
    }

    match dll::extract(data, "fuzz") {
        Ok(x) => {
            assert!(found.is_ok());
            assert_eq!(x.manifest.tensors.len(), RECORD_COUNT);
            x.manifest
                .validate()
                .expect("an extracted manifest validates");
        }
        Err(e) => drop(e.to_string()),
    }

    // The input as a container on its own (reaches the record parser without a PE around it).
    match dll::parse_container(data, 0) {
        Ok(records) => {
            assert_eq!(records.len(), RECORD_COUNT);
            let mut ids = HashSet::new();
            for r in &records {
                assert!(r.data.start <= r.data.end && r.data.end <= data.len());
                assert!(ids.insert(r.id), "record {:?} twice", r.id);
            }
        }
        Err(e) => drop(e.to_string()),
    }
});
