//! The Ray Reconstruction (feature 13) section of `openngx doctor`: the route RR has in this
//! build (read from the library's feature table, so it says what the C ABI will answer) and where
//! RR's model is looked for, in the library's own order (`openngx::ngx::model_dir` with RR's
//! directory name and environment variable), and whether the directory it would take validates.

use std::cell::RefCell;
use std::path::Path;
use std::time::Instant;

use openngx::model::LoadOptions;
use openngx::ngx::abi::NVSDK_NGX_Feature_RayReconstruction;
use openngx::ngx::dlss_d::MODEL_DIR_ENV;
use openngx::ngx::model_dir::{ModelDirError, ModelLookup, Search};
use openngx::ngx::registry;
use openngx::rr::weights::model::{RrModel, MODEL_SUBDIR};

use crate::doctor_model::core_path;

/// Print the RR section; false when the model directory RR would take is invalid.
pub fn report(verify: bool, core: Option<&Path>) -> bool {
    let backend =
        registry::lookup(NVSDK_NGX_Feature_RayReconstruction).and_then(|f| f.backend_name());
    match backend {
        Some(b) => println!("rr (feature 13, DLSS-RR): route: backend `{b}` (SuperSamplingDenoising.Available = 1)"),
        None => println!(
            "rr (feature 13, DLSS-RR): route: cpu reference only (tools and tests); no GPU route in \
             this build: SuperSamplingDenoising.Available = 0, CreateFeature checks the parameters \
             and answers FAIL_NotImplemented"
        ),
    }
    let (core, _) = core_path(core);
    let search = Search {
        model_dir_env: std::env::var_os(MODEL_DIR_ENV),
        library: Some(core),
        app_data: None,
        extra: Vec::new(),
        ..Search::from_process(None, &[])
    };
    match search.env_dir() {
        Some(p) => println!(
            "  ${MODEL_DIR_ENV}: {} - authoritative: nothing else is searched",
            p.display()
        ),
        None => {
            println!("  ${MODEL_DIR_ENV}: not set");
            for (n, c) in search.candidates(MODEL_SUBDIR).iter().enumerate() {
                let state = if c.path.is_dir() {
                    "found"
                } else {
                    "not found"
                };
                println!(
                    "  {}. {}: {} ({state})",
                    n + 1,
                    c.place.label(),
                    c.path.display()
                );
            }
            println!("  (and `{MODEL_SUBDIR}` under the game's Init paths, after the library's directory)");
        }
    }
    let summary = RefCell::new(None);
    let check = |d: &Path| {
        let m = RrModel::load(d, LoadOptions { verify_sha: verify }).map_err(|e| e.to_string())?;
        *summary.borrow_mut() = Some((m.stages().len(), m.weights().total_bytes()));
        Ok(())
    };
    let lookup = ModelLookup {
        subdir: MODEL_SUBDIR,
        check: &check,
    };
    let start = Instant::now();
    match search.find(&lookup) {
        Ok(dir) => {
            if let Some((stages, bytes)) = *summary.borrow() {
                println!(
                    "rr model: {} valid ({stages} stages, 11 layer images, {bytes} bytes, SHA-256 {}, {:.2} s)",
                    dir.display(),
                    if verify { "verified" } else { "not checked" },
                    start.elapsed().as_secs_f64()
                );
            }
            true
        }
        Err(ModelDirError::NotFound { .. }) => {
            println!(
                "rr model: none found (feature 13's creation fails until there is one; `openngx \
                 synth-model --feature rr` or `openngx extract-model --feature rr --dll \
                 nvngx_dlssd.dll` writes one to the user data directory; `openngx demo --feature rr` \
                 synthesizes its own into the cache directory)"
            );
            true
        }
        Err(ModelDirError::EnvNotADirectory { path }) => {
            println!("rr model: {} INVALID: not a directory", path.display());
            false
        }
        Err(ModelDirError::Invalid { path, reason }) => {
            println!("rr model: {} INVALID: {reason}", path.display());
            false
        }
    }
}
