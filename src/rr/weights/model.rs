//! RR's model directory: the same format as DLSS-NR's (`manifest.json` + stage files under
//! `model/` with SHA-256, read with `model::load`'s bounded, untrusted reads), with RR's own
//! [`Schema`]: the manifest says `"network": "dlss-rr"`, `totals.blockCount` is 11 (the layers),
//! and its records are the eleven prepared images, one per layer, named by the layer (`enc0` ..
//! `dec0`) with `block` = the layer's pipeline index, `layer` = 0 and `parameter` = `image`.
//! Each record's length is the layout's image size. enc0's 4096-byte unread region ("any
//! tables") is part of enc0's image, at its offset 0, as in NVIDIA's upload; it is no record of its
//! own.
//!
//! Any stage split is accepted (as for DLSS-NR); synthesis and extraction write one stage file
//! per layer ([`build_manifest`]).

use std::path::Path;

use sha2::{Digest, Sha256};

use super::super::layers::{LayerId, LAYER_COUNT};
use super::image::RrWeights;
use super::layout;
use crate::model::load::{self, LoadOptions, Loaded, StageData};
use crate::model::manifest::{Manifest, Schema, Stage, Tensor, Totals};
use crate::model::ModelError;

/// The manifest's `network` value for Ray Reconstruction.
pub const NETWORK: &str = "dlss-rr";
/// The tensor entries' `parameter`.
pub const PARAMETER: &str = "image";
/// RR's directory name next to the library and under the application paths; under the data
/// directories it is `openngx/rr-model` (the lookup maps `openngx-<name>` to `openngx/<name>`).
pub const MODEL_SUBDIR: &str = "openngx-rr-model";

/// RR's manifest schema (see the module doc).
pub struct RrSchema;

/// RR's manifest schema.
pub const SCHEMA: RrSchema = RrSchema;

impl Schema for RrSchema {
    fn network(&self) -> Option<&'static str> {
        Some(NETWORK)
    }
    fn label(&self) -> &'static str {
        "DLSS-RR"
    }
    fn block_count(&self) -> u64 {
        LAYER_COUNT as u64
    }
    fn record_count(&self) -> usize {
        LAYER_COUNT
    }
    fn expected_name(&self, t: &Tensor) -> String {
        // A block past the last layer has no name of its own: the entry is then reported as an
        // unknown record rather than as a misnamed one.
        layer_of(t.block).map_or_else(|| t.name.clone(), |l| l.name().to_string())
    }
    fn record_index(&self, t: &Tensor) -> Option<usize> {
        let l = layer_of(t.block)?;
        (t.layer == 0 && t.parameter == PARAMETER && t.name == l.name()).then_some(l.index())
    }
    fn record_len(&self, index: usize) -> usize {
        LayerId::from_index(index).map_or(0, |l| layout::layout(l).size)
    }
    fn record_name(&self, index: usize) -> String {
        LayerId::from_index(index).map_or_else(|| format!("#{index}"), |l| l.name().to_string())
    }
}

fn layer_of(block: u64) -> Option<LayerId> {
    usize::try_from(block).ok().and_then(LayerId::from_index)
}

/// A loaded, validated RR model directory.
#[derive(Debug, Clone)]
pub struct RrModel {
    loaded: Loaded,
    weights: RrWeights,
}

impl RrModel {
    /// Load `<dir>/manifest.json` and its stage files, checked against [`SCHEMA`] (and the
    /// SHA-256s unless `opts` says not to).
    pub fn load(dir: &Path, opts: LoadOptions) -> Result<RrModel, ModelError> {
        let loaded = load::load_with(dir, opts, &SCHEMA)?;
        let images = (0..LAYER_COUNT)
            .map(|i| loaded.record(i).map(<[u8]>::to_vec).unwrap_or_default())
            .collect();
        // The schema gave every record its layout size, so this cannot refuse; reported, not
        // unwrapped, all the same.
        let weights = RrWeights::from_images(images).map_err(|e| ModelError::Output {
            path: dir.to_path_buf(),
            reason: e.to_string(),
        })?;
        Ok(RrModel { loaded, weights })
    }

    /// The checks of [`RrModel::load`] that read no stage file (manifest, file sizes, no file
    /// outside the directory), for a quick check before creating a feature.
    pub fn check_files(dir: &Path) -> Result<(), ModelError> {
        load::check_files_with(dir, &SCHEMA)
    }

    /// The eleven images.
    pub fn weights(&self) -> &RrWeights {
        &self.weights
    }

    pub fn dir(&self) -> &Path {
        &self.loaded.dir
    }

    pub fn manifest(&self) -> &Manifest {
        &self.loaded.manifest
    }

    /// Stage files in manifest order.
    pub fn stages(&self) -> &[StageData] {
        &self.loaded.stages
    }
}

/// The manifest of a directory holding `weights` as one stage file per layer (file and stage id
/// = the layer's name), with their SHA-256s; `generator` says who wrote it.
pub fn build_manifest(generator: String, weights: &RrWeights) -> Manifest {
    let stages = LayerId::ALL
        .into_iter()
        .map(|l| {
            let bytes = weights.image(l);
            Stage {
                id: l.name().to_string(),
                file: l.name().to_string(),
                packed_byte_length: bytes.len() as u64,
                sha256: hex::encode(Sha256::digest(bytes)),
            }
        })
        .collect();
    let tensors = LayerId::ALL
        .into_iter()
        .map(|l| Tensor {
            name: l.name().to_string(),
            block: l.index() as u64,
            layer: 0,
            parameter: PARAMETER.to_string(),
            stage: l.name().to_string(),
            stage_offset: 0,
            byte_length: weights.image(l).len() as u64,
        })
        .collect();
    Manifest {
        generator: Some(generator),
        network: Some(NETWORK.to_string()),
        totals: Totals {
            block_count: LAYER_COUNT as u64,
            tensor_count: Some(LAYER_COUNT as u64),
            byte_length: Some(weights.total_bytes() as u64),
        },
        stages,
        tensors,
    }
}

/// The files of a directory holding `weights` (paths relative to `<dir>/model/`), in the order
/// of [`build_manifest`]'s stages.
pub fn stage_files(weights: &RrWeights) -> Vec<(String, &[u8])> {
    LayerId::ALL
        .into_iter()
        .map(|l| (l.name().to_string(), weights.image(l)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn weights() -> RrWeights {
        let images = LayerId::ALL
            .into_iter()
            .map(|l| {
                let n = layout::layout(l).size;
                (0..n).map(|i| (i * 7 + l.index()) as u8).collect()
            })
            .collect();
        RrWeights::from_images(images).expect("sizes")
    }

    fn write(dir: &Path, m: &Manifest, w: &RrWeights) {
        std::fs::create_dir_all(dir.join("model")).expect("mkdir");
        for (file, bytes) in stage_files(w) {
            std::fs::write(dir.join("model").join(file), bytes).expect("write stage");
        }
        std::fs::write(dir.join("manifest.json"), m.to_json()).expect("write manifest");
    }

    #[test]
    fn a_written_directory_loads_back_and_names_its_network() {
        let w = weights();
        let m = build_manifest("test".into(), &w);
        let dir = tempfile::tempdir().expect("temp dir");
        write(dir.path(), &m, &w);
        let loaded = RrModel::load(dir.path(), LoadOptions::default()).expect("load");
        assert_eq!(loaded.weights(), &w);
        assert_eq!(loaded.manifest().network.as_deref(), Some("dlss-rr"));
        RrModel::check_files(dir.path()).expect("quick check");
        // The JSON says which network it is.
        let text = std::fs::read_to_string(dir.path().join("manifest.json")).expect("read");
        assert!(text.contains("\"network\": \"dlss-rr\""), "{text}");
        // DLSS-NR's loader refuses it, naming the network.
        let e = crate::model::Model::load(dir.path(), LoadOptions::default()).unwrap_err();
        assert_eq!(
            e.to_string(),
            "manifest.json: network is `dlss-rr`, expected a DLSS-NR model"
        );
    }

    #[test]
    fn the_schema_refuses_what_is_not_rr() {
        let w = weights();
        let good = build_manifest("test".into(), &w);
        good.validate_with(&SCHEMA).expect("valid");
        let check = |edit: &dyn Fn(&mut Manifest)| {
            let mut m = good.clone();
            edit(&mut m);
            m.validate_with(&SCHEMA).unwrap_err().to_string()
        };
        assert_eq!(
            check(&|m| m.network = None),
            "manifest.json: network is none (a DLSS-NR model), expected a DLSS-RR model"
        );
        assert_eq!(
            check(&|m| m.totals.block_count = 71),
            "manifest.json: totals.blockCount is 71, expected 11"
        );
        assert_eq!(
            check(&|m| m.tensors[3].name = "enc2".into()),
            "manifest.json: tensors[3]: name `enc2` does not match block/layer/parameter (`enc3`)"
        );
        assert_eq!(
            check(&|m| m.tensors[3].parameter = "table".into()),
            "manifest.json: tensors[3] `enc3`: no such record in the DLSS-RR model"
        );
        assert_eq!(
            check(&|m| {
                m.tensors[3].block = 11;
                m.tensors[3].name = "dec-1".into();
            }),
            "manifest.json: tensors[3] `dec-1`: no such record in the DLSS-RR model"
        );
        assert_eq!(
            check(&|m| m.tensors[10].byte_length -= 1),
            "manifest.json: tensors[10] `dec0`: byteLength 47871, the model's record has 47872"
        );
        assert_eq!(
            check(&|m| {
                m.tensors.remove(6);
            }),
            "manifest.json: tensors[] has 10 records, expected 11 (first missing: `dec4`)"
        );
    }

    #[test]
    fn any_stage_split_is_accepted() {
        // All eleven images in one stage file, back to back.
        let w = weights();
        let mut m = build_manifest("test".into(), &w);
        let all: Vec<u8> = w.images().concat();
        let mut at = 0u64;
        for t in &mut m.tensors {
            t.stage = "all".into();
            t.stage_offset = at;
            at += t.byte_length;
        }
        m.stages = vec![Stage {
            id: "all".into(),
            file: "all.bin".into(),
            packed_byte_length: all.len() as u64,
            sha256: hex::encode(Sha256::digest(&all)),
        }];
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::create_dir_all(dir.path().join("model")).expect("mkdir");
        std::fs::write(dir.path().join("model/all.bin"), &all).expect("write");
        std::fs::write(dir.path().join("manifest.json"), m.to_json()).expect("write");
        let loaded = RrModel::load(dir.path(), LoadOptions::default()).expect("load");
        assert_eq!(loaded.weights(), &w);
        // A flipped byte is caught by the hash.
        let mut bad = all.clone();
        bad[100] ^= 1;
        std::fs::write(dir.path().join("model/all.bin"), &bad).expect("write");
        let e = RrModel::load(dir.path(), LoadOptions::default()).unwrap_err();
        assert!(e.to_string().contains("SHA-256 mismatch"), "{e}");
    }
}
