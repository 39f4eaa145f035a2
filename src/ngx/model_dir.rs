//! Where the model directory is looked up, in order:
//!
//! 1. `$OPENNGX_MODEL_DIR` — when set it is authoritative: it is used (and must validate) even if
//!    other candidates exist, so a user who points at a directory never silently gets another.
//! 2. `openngx-model/` next to the shared library (found with `dladdr`).
//! 3. `openngx-model/` under the application data path given to Init.
//! 4. `openngx-model/` under each `FeatureCommonInfo.PathListInfo` entry given to Init.
//!
//! The directory name (`openngx-model` for DLSS-NR) and the check are the feature's. The first
//! candidate that exists as a directory is validated with the feature's check; a failure is
//! final (no silent fallback to a later candidate, which could be a different model). Owns no
//! state.

use std::path::{Path, PathBuf};

/// Environment variable naming the model directory.
pub const MODEL_DIR_ENV: &str = "OPENNGX_MODEL_DIR";
/// DLSS-NR's directory name, searched next to the library and under the application paths.
pub const MODEL_SUBDIR: &str = "openngx-model";

/// What a feature's model lookup needs: the directory name and the check of a candidate.
pub struct ModelLookup<'a> {
    /// The directory name searched next to the library and under the application paths.
    pub subdir: &'a str,
    /// Validates a candidate (`Err` carries the reason).
    pub check: &'a dyn Fn(&Path) -> Result<(), String>,
}

/// Why no model directory could be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ModelDirError {
    /// `$OPENNGX_MODEL_DIR` names something that is not a directory.
    #[error("{MODEL_DIR_ENV}={path}: not a directory")]
    EnvNotADirectory {
        /// The path from the environment.
        path: PathBuf,
    },
    /// A candidate exists but the validator refused it.
    #[error("model directory {path} is invalid: {reason}")]
    Invalid {
        /// The directory.
        path: PathBuf,
        /// The validator's reason.
        reason: String,
    },
    /// No candidate exists.
    #[error("no model directory found (set {MODEL_DIR_ENV}); tried: {}", tried.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", "))]
    NotFound {
        /// Every candidate tried, in order.
        tried: Vec<PathBuf>,
    },
}

impl ModelDirError {
    /// The path the error is about (the first tried path for `NotFound`).
    pub fn path(&self) -> Option<&Path> {
        match self {
            ModelDirError::EnvNotADirectory { path } | ModelDirError::Invalid { path, .. } => {
                Some(path)
            }
            ModelDirError::NotFound { tried } => tried.first().map(PathBuf::as_path),
        }
    }
}

/// The directory holding the loaded `libopenngx` (or the executable for a static link).
pub fn library_dir() -> Option<PathBuf> {
    // SAFETY: dladdr only reads loader tables; the address is a function of this library, and
    // `dli_fname` is a NUL-terminated string owned by the loader.
    unsafe {
        let mut info: libc::Dl_info = std::mem::zeroed();
        let addr = library_dir as *const libc::c_void;
        if libc::dladdr(addr, &mut info) == 0 || info.dli_fname.is_null() {
            return None;
        }
        let file = std::ffi::CStr::from_ptr(info.dli_fname)
            .to_string_lossy()
            .into_owned();
        let path = PathBuf::from(file);
        let path = std::fs::canonicalize(&path).unwrap_or(path);
        path.parent().map(Path::to_path_buf)
    }
}

/// The ordered candidate list for `subdir` (without the environment variable).
pub fn candidates(subdir: &str, app_data: Option<&Path>, extra: &[PathBuf]) -> Vec<PathBuf> {
    let mut c = Vec::new();
    if let Some(d) = library_dir() {
        c.push(d.join(subdir));
    }
    if let Some(a) = app_data {
        c.push(a.join(subdir));
    }
    c.extend(extra.iter().map(|p| p.join(subdir)));
    c
}

/// Finds and validates the model directory (see the module comment for the order).
pub fn find_model_dir(
    lookup: &ModelLookup<'_>,
    env_value: Option<&str>,
    app_data: Option<&Path>,
    extra: &[PathBuf],
) -> Result<PathBuf, ModelDirError> {
    if let Some(v) = env_value.filter(|v| !v.is_empty()) {
        let path = PathBuf::from(v);
        if !path.is_dir() {
            return Err(ModelDirError::EnvNotADirectory { path });
        }
        return (lookup.check)(&path)
            .map(|_| path.clone())
            .map_err(|reason| ModelDirError::Invalid { path, reason });
    }
    let tried = candidates(lookup.subdir, app_data, extra);
    match tried.iter().find(|p| p.is_dir()) {
        Some(p) => (lookup.check)(p)
            .map(|_| p.clone())
            .map_err(|reason| ModelDirError::Invalid {
                path: p.clone(),
                reason,
            }),
        None => Err(ModelDirError::NotFound { tried }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn find(
        env_value: Option<&str>,
        app_data: Option<&Path>,
        extra: &[PathBuf],
    ) -> Result<PathBuf, ModelDirError> {
        let lookup = ModelLookup {
            subdir: MODEL_SUBDIR,
            check: &crate::ngx::registry::manifest_exists,
        };
        find_model_dir(&lookup, env_value, app_data, extra)
    }

    fn tmp(name: &str) -> PathBuf {
        let d =
            std::env::temp_dir().join(format!("openngx-model-dir-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).expect("temp dir");
        d
    }

    #[test]
    fn env_value_is_authoritative() {
        let d = tmp("env");
        assert!(matches!(
            find(Some(d.join("nope").to_str().unwrap_or("")), None, &[]),
            Err(ModelDirError::EnvNotADirectory { .. })
        ));
        let e = find(Some(d.to_str().unwrap_or("")), None, &[]).expect_err("no manifest");
        assert!(
            matches!(&e, ModelDirError::Invalid { reason, .. } if reason.contains("manifest.json")),
            "{e}"
        );
        std::fs::write(d.join("manifest.json"), "{}").expect("write");
        assert_eq!(
            find(Some(d.to_str().unwrap_or("")), None, &[]),
            Ok(d.clone())
        );
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn app_data_and_extra_paths_are_searched_in_order() {
        let a = tmp("app");
        let b = tmp("extra");
        let e = find(None, Some(&a), std::slice::from_ref(&b)).expect_err("nothing there");
        match &e {
            ModelDirError::NotFound { tried } => {
                assert!(tried.contains(&a.join(MODEL_SUBDIR)));
                assert_eq!(tried.last(), Some(&b.join(MODEL_SUBDIR)));
            }
            other => panic!("unexpected {other}"),
        }
        std::fs::create_dir_all(b.join(MODEL_SUBDIR)).expect("mkdir");
        std::fs::write(b.join(MODEL_SUBDIR).join("manifest.json"), "{}").expect("write");
        assert_eq!(
            find(None, Some(&a), std::slice::from_ref(&b)),
            Ok(b.join(MODEL_SUBDIR))
        );
        // An existing but invalid earlier candidate wins and fails: no silent fallback.
        std::fs::create_dir_all(a.join(MODEL_SUBDIR)).expect("mkdir");
        assert!(matches!(
            find(None, Some(&a), std::slice::from_ref(&b)),
            Err(ModelDirError::Invalid { .. })
        ));
        let _ = std::fs::remove_dir_all(&a);
        let _ = std::fs::remove_dir_all(&b);
    }

    #[test]
    fn library_dir_is_found() {
        assert!(library_dir().is_some_and(|d| d.is_dir()));
    }
}
