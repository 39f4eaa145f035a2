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
//!
//! A backend also keeps, for its memory report and the device's Shutdown, weak references to
//! the shared objects it handed out ([`Handed`]) and each device's context from its first
//! creation until its Shutdown ([`KeptContexts`]): the same for every network.

use std::sync::{Arc, Weak};

use ash::vk::{self, Handle};
use parking_lot::{Mutex, MutexGuard};

use super::{DeviceRegistry, GpuContext, Recorder, UploadBatch};

/// Weak references to the shared objects a backend handed out, to sum what is still live.
pub struct Handed<T>(Mutex<Vec<Weak<T>>>);

impl<T> Default for Handed<T> {
    fn default() -> Self {
        Handed(Mutex::new(Vec::new()))
    }
}

impl<T> Handed<T> {
    /// Remembers `v` (once, however often it is handed out).
    pub fn track(&self, v: &Arc<T>) {
        let mut list = self.0.lock();
        list.retain(|x| x.strong_count() > 0);
        if !list
            .iter()
            .any(|x| std::ptr::eq(x.as_ptr(), Arc::as_ptr(v)))
        {
            list.push(Arc::downgrade(v));
        }
    }

    /// The sum of `f` over the objects still live.
    pub fn sum_live(&self, f: impl Fn(&T) -> u64) -> u64 {
        let mut list = self.0.lock();
        list.retain(|x| x.strong_count() > 0);
        list.iter().filter_map(Weak::upgrade).map(|v| f(&v)).sum()
    }
}

/// Each device's context, kept from a backend's first creation on it until its Shutdown (so its
/// pipelines are built once per device, not per feature).
#[derive(Default)]
pub struct KeptContexts(Mutex<Vec<(u64, Arc<GpuContext>)>>);

impl KeptContexts {
    /// Keeps `ctx` until its device's [`KeptContexts::release`].
    pub fn keep(&self, ctx: &Arc<GpuContext>) {
        let key = ctx.device().handle().as_raw();
        let mut devices = self.0.lock();
        if !devices.iter().any(|(k, _)| *k == key) {
            devices.push((key, Arc::clone(ctx)));
        }
    }

    /// Lets `device`'s context go (destroyed with its last user).
    pub fn release(&self, device: vk::Device) {
        let key = device.as_raw();
        // Dropped outside the lock: the last reference destroys the pipelines.
        let gone: Vec<_> = {
            let mut devices = self.0.lock();
            let (gone, kept) = devices.drain(..).partition(|(k, _)| *k == key);
            *devices = kept;
            gone
        };
        drop(gone);
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// The first creation stages and holds the first-upload lock; nothing is shared before it
    /// publishes; a failed creation (the staged value dropped) releases the lock and leaves no
    /// entry, so a waiting creation then stages its own. (Publishing needs a command buffer:
    /// tests/rr_replay.rs and tests/feature_soak.rs prove it on a device.)
    #[test]
    fn a_staged_value_is_not_shared_and_a_failure_leaves_nothing() {
        static REGISTRY: DeviceRegistry<u32> = DeviceRegistry::new();
        static STAGED: AtomicUsize = AtomicUsize::new(0);
        let stage = |v: u32| {
            move || {
                STAGED.fetch_add(1, Ordering::SeqCst);
                Ok::<u32, ()>(v)
            }
        };
        let first = REGISTRY.share_or_stage(7, stage(1)).expect("stage");
        assert!(first.is_staged());
        assert_eq!(**first.value(), 1);
        assert!(
            REGISTRY.get(7).is_none(),
            "shared before its upload was recorded"
        );
        // A second creation waits for the first to publish or fail.
        let waiter = std::thread::spawn(move || {
            let second = REGISTRY.share_or_stage(7, stage(2)).expect("stage");
            (second.is_staged(), **second.value())
        });
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert_eq!(STAGED.load(Ordering::SeqCst), 1, "the second did not wait");
        drop(first);
        assert_eq!(waiter.join().expect("thread"), (true, 2));
        assert_eq!(STAGED.load(Ordering::SeqCst), 2);
        assert_eq!(REGISTRY.live(), 0);
        // A failing stage leaves nothing and releases the lock.
        assert!(REGISTRY.share_or_stage(7, || Err::<u32, ()>(())).is_err());
        let again = REGISTRY.share_or_stage(7, stage(3)).expect("stage");
        assert!(again.is_staged());
    }
}
