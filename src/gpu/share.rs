//! [`DeviceShare`]: an object uploaded once per device (a network's weights) and shared by the
//! features created on it, made so that a feature creation can still fail after building it.
//!
//! The rule (DLSS-NR's weights first, Ray Reconstruction's the same): a creation that finds the
//! object live in its [`DeviceRegistry`] shares it. Otherwise it takes the registry's first-upload
//! lock, builds the object and *stages* its upload (allocations: may fail), and holds the lock
//! until [`DeviceShare::record`] has recorded the copies into its command buffer and published
//! the object, or until the creation fails and drops the value (which frees everything it
//! staged: nothing was recorded, nobody else saw it). A second creation of the same key waits
//! on the lock and then shares, rather than uploading a second copy; an object is never handed
//! to another feature before its upload is recorded (the first creation's submission must then
//! run before any user's, the NGX contract for creation work). The registry keeps only weak
//! references, so the object is freed with the last feature holding it.

use std::sync::Arc;

use parking_lot::MutexGuard;

use super::{DeviceRegistry, Recorder, UploadBatch};

/// What a feature creation uses: an object already on the device (shared), or one this
/// creation staged and shares only once [`DeviceShare::record`] recorded its upload.
pub enum DeviceShare<T: 'static> {
    /// Uploaded by an earlier creation on the same device (same key).
    Shared(Arc<T>),
    /// Staged in the creation's [`UploadBatch`], not yet recorded nor visible to others.
    Staged {
        value: Arc<T>,
        key: u64,
        registry: &'static DeviceRegistry<T>,
        _first: MutexGuard<'static, ()>,
    },
}

impl<T: 'static> DeviceRegistry<T> {
    /// The live object of `key`, or one `stage` builds (staging its upload into the creation's
    /// batch, recording nothing). See the module documentation.
    pub fn share_or_stage<E>(
        &'static self,
        key: u64,
        stage: impl FnOnce() -> Result<T, E>,
    ) -> Result<DeviceShare<T>, E> {
        if let Some(v) = self.get(key) {
            return Ok(DeviceShare::Shared(v));
        }
        let first = self.first.lock();
        // Another creation may have published it while this one waited.
        if let Some(v) = self.get(key) {
            return Ok(DeviceShare::Shared(v));
        }
        Ok(DeviceShare::Staged {
            value: Arc::new(stage()?),
            key,
            registry: self,
            _first: first,
        })
    }
}

impl<T: 'static> DeviceShare<T> {
    /// The object (to build on before its upload is recorded).
    pub fn value(&self) -> &Arc<T> {
        match self {
            DeviceShare::Shared(v) | DeviceShare::Staged { value: v, .. } => v,
        }
    }

    /// Whether this creation staged the upload (the first user on the device).
    pub fn is_staged(&self) -> bool {
        matches!(self, DeviceShare::Staged { .. })
    }

    /// Records the staged upload (every copy staged in `batch`, then the transfer -> compute
    /// barrier) and makes the object visible to later creations on the device; a shared object
    /// records nothing. Cannot fail.
    pub fn record(self, batch: &mut UploadBatch, rec: &mut Recorder<'_>) -> Arc<T> {
        match self {
            DeviceShare::Shared(v) => v,
            DeviceShare::Staged {
                value,
                key,
                registry,
                ..
            } => {
                batch.record(rec);
                rec.transfer_to_compute();
                registry.publish(key, &value);
                value
            }
        }
    }
}
