//! The model directory: the block table of the network, manifest parsing and validation, loading
//! stage files (with SHA-256 checks), the FusedLayout of every record and the storage orders of
//! weights (packing/unpacking) (spec nr-network §3). Writing models (synthesis, extraction from
//! a DLL) and weight statistics are the tools' (`openngx_tools`), not the shipped library's.
//!
//! This module owns the bytes of the weights and where they are; it knows nothing about how the
//! network computes with them (that is `nr::graph` / `nr::reference` and the GPU code).

pub mod blocks;
pub mod cache;
pub mod error;
pub mod file;
pub mod layout;
pub mod load;
pub mod manifest;
pub mod pack;

pub use blocks::{block_kind, BlockKind};
pub use cache::ModelCache;
pub use error::ModelError;
pub use layout::{
    record_fields, records, split512_layout, vit_entry_layout, vit_exit_layout, vit_layout,
    window_layout, F16Mat, F16Vec, F32Vec, Field, FieldKind, Fp8Mat, Priors, RecordId,
    Split512Layout, VitEntryLayout, VitExitLayout, VitLayout, WindowLayout,
};
pub use load::{LoadOptions, Model, ShaStatus, StageData};
pub use manifest::Manifest;
