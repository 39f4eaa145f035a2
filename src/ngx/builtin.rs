//! The backends and the model validator built into the library, installed once before the first
//! call that asks for a backend (a cdylib has no `main` where an application could register
//! them). This is the one place where the DLSS-NR recorder and the `openngx::model` manifest
//! check are wired to the C ABI.

use std::sync::{Arc, Once};

static INSTALL: Once = Once::new();

/// Installs the built-in backends (idempotent; later explicit `register_backend` calls win).
pub fn ensure_installed() {
    INSTALL.call_once(install);
}

fn install() {
    super::backend::insert_backend(
        super::nr::FEATURE,
        Arc::new(crate::nr::feature::NrBackend::new()),
    );
    // The library's own unit tests exercise the model lookup with placeholder directories that
    // hold only an empty manifest.json; every other build checks the manifest and stage files.
    #[cfg(not(test))]
    super::backend::put_model_validator(Arc::new(|dir: &std::path::Path| {
        crate::nr::feature::quick_check(dir)
    }));
}
