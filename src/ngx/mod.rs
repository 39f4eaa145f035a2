//! The NGX C ABI: exported entry points, parameter objects (C++-compatible vtable), resources,
//! result codes, handles, logging, model-directory lookup, and the feature table through which
//! the networks are offered.
//!
//! Layout: `abi` (C types/constants, source of the header), `exports` + `param_exports` (the
//! public `#[no_mangle]` functions, off in the Core build), `core_abi` (the NGX Core's entry
//! points, for NVIDIA's static library) + `core_exports` (their `#[no_mangle]` symbols, only in
//! the Core build, `--cfg openngx_core`), `params` (parameter objects), `registry` (the feature table:
//! [`Description`] per feature plus its backend), `builtin` (the built-in entries), `dlss_nr`
//! (feature 18's description), `dlss_d` (feature 13's), `param_read` and `resource` (typed reads for descriptions),
//! `state` (devices, handles, maps), `model_dir`, `log`, `result`, `guard`.
#![allow(non_camel_case_types, non_upper_case_globals, non_snake_case)]
pub mod abi;
pub mod builtin;
pub mod core_abi;
#[cfg(openngx_core)]
pub mod core_exports;
pub mod dlss_d;
pub mod dlss_nr;
pub mod exports;
pub mod guard;
pub mod log;
pub mod model_dir;
pub mod param_exports;
pub mod param_read;
pub mod params;
pub mod registry;
pub mod resource;
pub mod result;
pub mod state;

pub use registry::{
    clear_model_validator, register_backend, set_model_validator, unregister_backend, BackendOf,
    Description,
};
pub use result::ResultCode;
