//! [`ModelCache`]: loaded model directories shared between the features of one network (DLSS-NR's
//! `Model`, RR's `RrModel`: the cache is generic over what a directory loads into).
//!
//! A model is loaded (manifest, stage files, SHA-256) once per directory and shared by every
//! feature created from that directory while any of them is alive: features hold an `Arc<M>`,
//! the cache only a `Weak`, so the host copy of the weights is freed with the last feature that
//! uses it. The cache key includes the manifest's size and modification time, so a model
//! replaced in place (e.g. `synth-model --force`) is loaded again rather than served stale.
//!
//! It lives here rather than in `crate::feature` because it is about model directories (their
//! manifest, `ModelError`), which `feature` does not know; both networks' features use it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Weak};
use std::time::SystemTime;

use parking_lot::Mutex;

use super::ModelError;

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
#[derive(Debug)]
pub struct ModelCache<M> {
    models: Mutex<HashMap<Key, Weak<M>>>,
}

impl<M> Default for ModelCache<M> {
    fn default() -> Self {
        ModelCache {
            models: Mutex::new(HashMap::new()),
        }
    }
}

impl<M> ModelCache<M> {
    /// An empty cache.
    pub fn new() -> ModelCache<M> {
        ModelCache::default()
    }

    /// The model in `dir`, loaded by `load` (given the canonical directory; callers load with
    /// every check, SHA-256 included) unless a live feature already holds the same directory's
    /// model. Two threads asking for the same new directory at once may both load it; the second
    /// result replaces the first in the cache (both are valid, only memory is spent twice for a
    /// moment).
    pub fn get(
        &self,
        dir: &Path,
        load: impl FnOnce(&Path) -> Result<M, ModelError>,
    ) -> Result<Arc<M>, ModelError> {
        let key = Key::of(dir)?;
        if let Some(m) = self.models.lock().get(&key).and_then(Weak::upgrade) {
            return Ok(m);
        }
        // Loading takes a while (hashing ~150 MB for DLSS-NR); the lock is not held meanwhile.
        let model = Arc::new(load(&key.dir)?);
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

#[cfg(test)]
mod tests {
    use super::*;

    fn tmp(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("openngx-cache-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    #[test]
    fn a_missing_directory_is_a_typed_error() {
        let cache = ModelCache::<()>::new();
        let e = cache
            .get(&tmp("absent"), |_| panic!("never loaded"))
            .expect_err("absent");
        assert!(matches!(e, ModelError::Io { .. }), "{e}");
        assert_eq!(cache.live(), 0);
    }

    #[test]
    fn a_directory_is_loaded_once_while_held_and_again_when_replaced() {
        let d = tmp("shared");
        std::fs::create_dir_all(&d).expect("mkdir");
        std::fs::write(d.join("manifest.json"), "{}").expect("write");
        let cache = ModelCache::<usize>::new();
        let loads = std::cell::Cell::new(0usize);
        let load = |_: &Path| {
            loads.set(loads.get() + 1);
            Ok(loads.get())
        };
        let a = cache.get(&d, load).expect("first");
        // The same directory by another spelling: shared, not loaded again.
        let b = cache.get(&d.join("."), load).expect("second");
        assert!(Arc::ptr_eq(&a, &b));
        assert_eq!((loads.get(), cache.live()), (1, 1));
        // The last holder gone: loaded again.
        drop((a, b));
        assert_eq!(cache.live(), 0);
        let c = cache.get(&d, load).expect("third");
        assert_eq!((*c, loads.get()), (2, 2));
        // Replaced in place (another manifest size) while held: loaded again.
        std::fs::write(d.join("manifest.json"), "{ }").expect("rewrite");
        let e = cache.get(&d, load).expect("fourth");
        assert_eq!((*e, loads.get()), (3, 3));
        // A failed load is not cached.
        std::fs::write(d.join("manifest.json"), "{  }").expect("rewrite");
        let err = cache.get(&d, |p| {
            Err(ModelError::Io {
                path: p.to_path_buf(),
                source: std::io::Error::other("refused"),
            })
        });
        assert!(err.is_err());
        assert_eq!(cache.live(), 2);
        let _ = std::fs::remove_dir_all(&d);
    }
}
