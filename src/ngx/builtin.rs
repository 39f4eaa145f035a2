//! The features built into the library, installed once before the first call that looks at
//! the feature table (a cdylib has no `main` where an application could register them). One
//! line per feature: its ABI description and its backend.

use std::sync::{Arc, Once};

use super::registry::{insert, BackendOf};

static INSTALL: Once = Once::new();

/// Installs the built-in features (idempotent; later `register_backend` calls win).
pub fn ensure_installed() {
    INSTALL.call_once(install);
}

fn install() {
    let nr: Arc<BackendOf<super::dlss_nr::DlssNr>> = Arc::new(crate::nr::feature::NrBackend::new());
    insert(super::dlss_nr::DlssNr, Some(nr));
    // Feature 13 (DLSS-RR) on RR's exact GPU route.
    let rr: Arc<BackendOf<super::dlss_d::DlssD>> = Arc::new(crate::rr::feature::RrBackend::new());
    insert(super::dlss_d::DlssD::new(), Some(rr));
}
