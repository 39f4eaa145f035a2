//! The model section of `openngx doctor`: where an unmodified game's NGX Core would look for the
//! model, each candidate in the library's own order (`openngx::ngx::model_dir`, so the two cannot
//! drift apart), and whether the one it would take is there and validates.
//!
//! The game's Init paths (application data path, `PathListInfo`) are only known to the game, so
//! they are shown as placeholders in their place in the order.

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::time::Instant;

use openngx::model::{LoadOptions, Model};
use openngx::ngx::model_dir::{
    ModelDirError, ModelLookup, Place, Search, CORE_DIR_NAME, MODEL_DIR_ENV, MODEL_SUBDIR,
};

/// The Core's file name (the name NVIDIA's static library `dlopen`s).
pub const CORE_FILE: &str = "libnvidia-ngx.so.1";

/// The Core an unmodified game would load, and whether that file is there: `--core` when given;
/// else the installed one (`<prefix>/lib/openngx/` beside this tool's `<prefix>/bin/`); else the
/// build tree's (`ngx-core/` beside this tool, where `./x build` presents it); else where
/// `./x install` would put it.
pub fn core_path(given: Option<&Path>) -> (PathBuf, bool) {
    if let Some(p) = given {
        return (p.to_path_buf(), p.is_file());
    }
    let exe_dir = std::env::current_exe()
        .ok()
        .map(|p| std::fs::canonicalize(&p).unwrap_or(p))
        .and_then(|p| p.parent().map(Path::to_path_buf))
        .unwrap_or_default();
    let installed = exe_dir
        .parent()
        .map(|prefix| prefix.join("lib").join(CORE_DIR_NAME).join(CORE_FILE))
        .unwrap_or_else(|| PathBuf::from(CORE_FILE));
    let built = exe_dir.join("ngx-core").join(CORE_FILE);
    for p in [&installed, &built] {
        if p.is_file() {
            let real = std::fs::canonicalize(p).unwrap_or_else(|_| p.clone());
            return (real, true);
        }
    }
    (installed, false)
}

fn state(p: &Path) -> &'static str {
    if p.is_dir() {
        "found"
    } else if p.exists() {
        "not a directory"
    } else {
        "not found"
    }
}

/// What a valid model looked like, for the summary line.
struct Summary {
    stages: usize,
    records: usize,
    bytes: usize,
}

/// Print the model section; false when the directory the Core would take is invalid.
pub fn report(verify: bool, core: Option<&Path>) -> bool {
    let (core, present) = core_path(core);
    println!(
        "model search of an unmodified game's Core, {} ({}):",
        core.display(),
        if present {
            "present"
        } else {
            "not there: where `./x install` puts it"
        }
    );
    let search = Search {
        library: Some(core),
        app_data: None,
        extra: Vec::new(),
        ..Search::from_process(None, &[])
    };
    let env = search.env_dir();
    let skipped = if env.is_some() {
        " (not searched: $OPENNGX_MODEL_DIR is set)"
    } else {
        ""
    };
    match &env {
        Some(p) => println!(
            "  ${MODEL_DIR_ENV}: {} ({}) - authoritative: nothing else is searched",
            p.display(),
            state(p)
        ),
        None => println!("  ${MODEL_DIR_ENV}: not set"),
    }
    let mut n = 1;
    let mut line = |label: &str, what: String| {
        println!("  {n}. {label}: {what}");
        n += 1;
    };
    for c in search.candidates(MODEL_SUBDIR) {
        let what = if env.is_some() {
            format!("{}{skipped}", c.path.display())
        } else {
            format!("{} ({})", c.path.display(), state(&c.path))
        };
        line(c.place.label(), what);
        // The game's own Init paths come right after the library's directory.
        if c.place == Place::BesideLibrary {
            line(
                Place::AppData.label(),
                format!("<the data path the game gives to Init>/{MODEL_SUBDIR}{skipped}"),
            );
            line(
                Place::PathList.label(),
                format!("<each PathListInfo path the game gives to Init>/{MODEL_SUBDIR}{skipped}"),
            );
        }
    }
    println!(
        "  (the first existing directory is the model and must validate; an engine linked with \
         libopenngx.so looks the same way from libopenngx.so's directory)"
    );

    // The library's own lookup, with the full model check (SHA-256 unless --no-verify).
    let summary = RefCell::new(None);
    let check = |d: &Path| {
        let m = Model::load(d, LoadOptions { verify_sha: verify }).map_err(|e| e.to_string())?;
        *summary.borrow_mut() = Some(Summary {
            stages: m.stages().len(),
            records: m.manifest().tensors.len(),
            bytes: m.total_bytes(),
        });
        Ok(())
    };
    let lookup = ModelLookup {
        subdir: MODEL_SUBDIR,
        check: &check,
    };
    let start = Instant::now();
    match search.find(&lookup) {
        Ok(dir) => {
            if let Some(s) = summary.borrow().as_ref() {
                println!(
                    "model: {} valid ({} stages, {} records, {} bytes, SHA-256 {}, {:.2} s)",
                    dir.display(),
                    s.stages,
                    s.records,
                    s.bytes,
                    if verify { "verified" } else { "not checked" },
                    start.elapsed().as_secs_f64()
                );
            }
            true
        }
        Err(ModelDirError::NotFound { .. }) => {
            println!(
                "model: none found (warning: features cannot be created until one is installed; \
                 `openngx extract-model --dll nvngx_dlssnr.dll` writes it to the user data directory)"
            );
            true
        }
        Err(ModelDirError::EnvNotADirectory { path }) => {
            println!("model: {} INVALID: not a directory", path.display());
            false
        }
        Err(ModelDirError::Invalid { path, reason }) => {
            println!("model: {} INVALID: {reason}", path.display());
            false
        }
    }
}
