//! The backends and the model validator built into the library, installed once before the first
//! call that asks for a backend (a cdylib has no `main` where an application could register
//! them). This is the one place where the DLSS-NR recorder and the `openngx::model` manifest
//! check are wired to the C ABI.

use std::sync::Once;

static INSTALL: Once = Once::new();

/// Installs the built-in backends (idempotent; later explicit `register_backend` calls win).
pub fn ensure_installed() {
    INSTALL.call_once(install);
}

fn install() {
    // Nothing is built in yet. The lead wires the real pieces here, with the crate-internal
    // setters (the public ones would re-enter this one-time installation), e.g.:
    //   super::backend::insert_backend(super::nr::FEATURE, Arc::new(crate::nr::feature::NrBackend::new()));
    //   super::backend::put_model_validator(Arc::new(|dir| crate::model::validate_dir(dir).map_err(|e| e.to_string())));
    // Until then CreateFeature(18) fails with FAIL_NotImplemented and logs that no backend is
    // available, and model directories are checked only for a manifest.json file.
}
