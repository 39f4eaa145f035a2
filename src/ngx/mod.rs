//! The NGX C ABI: exported entry points, parameter objects (C++-compatible vtable), resources,
//! result codes, handles, logging, model-directory lookup, and the [`backend::FeatureBackend`]
//! seam through which the DLSS-NR recorder plugs in.
//!
//! Layout: `abi` (C types/constants, source of the header), `exports` + `param_exports` (the
//! `#[no_mangle]` functions), `params` (parameter objects), `nr` (feature 18 parameters and
//! capabilities), `resource` (`NVSDK_NGX_Resource_VK` checks), `state` (registries), `backend`
//! (trait + registry + model-validator hook), `builtin` (where the real backend is wired), `model_dir`, `log`, `result`, `guard`.
#![allow(non_camel_case_types, non_upper_case_globals, non_snake_case)]
pub mod abi;
pub mod backend;
pub mod builtin;
pub mod exports;
pub mod guard;
pub mod log;
pub mod model_dir;
pub mod nr;
pub mod param_exports;
pub mod params;
pub mod resource;
pub mod result;
pub mod state;

pub use backend::{
    clear_model_validator, register_backend, set_model_validator, unregister_backend, CreateParams,
    DeviceContext, EvalInputs, FeatureBackend, FeatureError, FeatureInstance, ImageInput, Rect,
};
