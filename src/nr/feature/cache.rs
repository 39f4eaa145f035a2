//! Loaded models shared between features, and the quick model-directory check the NGX layer runs
//! before a feature is created.
//!
//! A model is loaded (manifest, stage files, SHA-256) once per directory and shared by every
//! feature created from that directory while any of them is alive: features hold an
//! `Arc<Model>`, the cache only a `Weak`, so the host copy of the weights is freed with the last
//! feature that uses it. The cache key includes the manifest's size and modification time, so a
//! model replaced in place (e.g. `synth-model --force`) is loaded again rather than served stale.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Weak};
use std::time::SystemTime;

use parking_lot::Mutex;

use crate::model::{LoadOptions, Model, ModelError};

/// What identifies one model directory's content for the cache.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Key {
    dir: PathBuf,
    manifest_len: u64,
    manifest_modified: Option<SystemTime>,
}

impl Key {
    fn of(dir: &Path) -> Result<Key, ModelError> {
        // Canonical so that `./m` and `/abs/m` share one entry.
        let dir = dir.canonicalize().map_err(|e| ModelError::Io {
            path: dir.to_path_buf(),
            source: e,
        })?;
        let path = dir.join("manifest.json");
        let meta = std::fs::metadata(&path).map_err(|e| ModelError::Io {
            path: path.clone(),
            source: e,
        })?;
        Ok(Key {
            dir,
            manifest_len: meta.len(),
            manifest_modified: meta.modified().ok(),
        })
    }
}

/// Models loaded by directory; see the module documentation.
#[derive(Debug, Default)]
pub struct ModelCache {
    models: Mutex<HashMap<Key, Weak<Model>>>,
}

impl ModelCache {
    /// An empty cache.
    pub fn new() -> ModelCache {
        ModelCache::default()
    }

    /// The model in `dir`, loaded with every check (SHA-256 included) unless a live feature
    /// already holds the same directory's model. Two threads asking for the same new directory
    /// at once may both load it; the second result replaces the first in the cache (both are
    /// valid, only memory is spent twice for a moment).
    pub fn get(&self, dir: &Path) -> Result<Arc<Model>, ModelError> {
        let key = Key::of(dir)?;
        if let Some(m) = self.models.lock().get(&key).and_then(Weak::upgrade) {
            return Ok(m);
        }
        // Loading takes a while (hashing ~150 MB); the lock is not held meanwhile.
        let model = Arc::new(Model::load(&key.dir, LoadOptions { verify_sha: true })?);
        let mut map = self.models.lock();
        map.retain(|_, w| w.strong_count() > 0);
        map.insert(key, Arc::downgrade(&model));
        Ok(model)
    }

    /// Directories whose model is currently alive (for diagnostics and tests).
    pub fn live(&self) -> usize {
        self.models
            .lock()
            .values()
            .filter(|w| w.strong_count() > 0)
            .count()
    }
}

/// The check the NGX layer runs on a model directory before creating a feature: the manifest
/// parses and validates, and every stage file is a regular file inside the directory, with the
/// size the manifest states, used by one stage only (`model::load::check_files`). The hashes
/// are checked when the feature loads the model (that costs a full read).
pub fn quick_check(dir: &Path) -> Result<(), String> {
    crate::model::load::check_files(dir).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmp(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("openngx-cache-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    #[test]
    fn quick_check_names_the_problem() {
        let d = tmp("quick");
        std::fs::create_dir_all(&d).expect("mkdir");
        let e = quick_check(&d).expect_err("no manifest");
        assert!(e.contains("manifest.json"), "{e}");
        std::fs::write(d.join("manifest.json"), "{}").expect("write");
        let e = quick_check(&d).expect_err("empty manifest");
        assert!(e.contains("manifest.json"), "{e}");
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn a_missing_directory_is_a_typed_error() {
        let cache = ModelCache::new();
        let e = cache.get(&tmp("absent")).expect_err("absent");
        assert!(matches!(e, ModelError::Io { .. }), "{e}");
        assert_eq!(cache.live(), 0);
    }
}
