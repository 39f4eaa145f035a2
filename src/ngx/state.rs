//! The library's process-wide state behind the C ABI: initialised devices, live feature handles
//! (and released ones, kept until the final Shutdown so a stale handle is never mistaken for a
//! new one), and the registry of parameter objects the library allocated with their owner.
//!
//! One mutex guards it. Entry points copy what they need out of it and call backends and log
//! sinks without holding it (a log callback or a slow `evaluate` never blocks other calls and
//! cannot deadlock by calling back into the API).

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use ash::vk::{self, Handle};
use parking_lot::Mutex;

use super::abi::*;
use super::params::{ParamObject, Populate};
use super::registry::LiveFeature;
use crate::feature::DeviceContext;

/// How the application identified itself at Init.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AppIdentity {
    /// `NVSDK_NGX_VULKAN_Init`.
    ApplicationId(u64),
    /// `NVSDK_NGX_VULKAN_Init_with_ProjectID`.
    Project {
        /// Project id.
        project_id: String,
        /// Engine type.
        engine_type: u32,
        /// Engine version.
        engine_version: String,
    },
}

/// One initialised device.
#[derive(Debug, Clone)]
pub struct DeviceEntry {
    /// The Vulkan objects given to Init.
    pub ctx: DeviceContext,
    /// `InApplicationDataPath`.
    pub app_data: Option<PathBuf>,
    /// `FeatureCommonInfo.PathListInfo` entries.
    pub extra_paths: Vec<PathBuf>,
    /// Who initialised it.
    pub app: AppIdentity,
    /// `InSDKVersion`.
    pub sdk_version: u32,
}

/// One created feature.
pub struct FeatureEntry {
    /// The handle id.
    pub id: u32,
    /// The feature id.
    pub feature: NVSDK_NGX_Feature,
    /// The device it was created on.
    pub device: u64,
    /// The instance; `None` once released.
    pub instance: Mutex<Option<Box<dyn LiveFeature>>>,
}

/// Who frees a parameter object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Owner {
    /// From AllocateParameters / GetCapabilityParameters: freed by DestroyParameters.
    App,
    /// From GetParameters: freed by the final Shutdown; DestroyParameters refuses it.
    Library,
}

/// Objects that keep the library in use: initialised devices, live features and
/// application-owned parameter maps (whose vtables point into the library's code).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Remaining {
    /// Devices still initialised.
    pub devices: usize,
    /// Features not yet released.
    pub features: usize,
    /// Maps from AllocateParameters / GetCapabilityParameters not yet destroyed.
    pub app_maps: usize,
}

impl Remaining {
    /// The sum, saturated to the C `unsigned int` the Core reports.
    pub fn total(&self) -> u32 {
        let sum = self
            .devices
            .saturating_add(self.features)
            .saturating_add(self.app_maps);
        u32::try_from(sum).unwrap_or(u32::MAX)
    }
}

/// Everything behind the mutex.
#[derive(Default)]
pub struct State {
    /// Initialised devices, keyed by the raw `VkDevice`.
    pub devices: Vec<(u64, DeviceEntry)>,
    /// Live features, keyed by the handle's address.
    pub features: HashMap<usize, (Box<NVSDK_NGX_Handle>, Arc<FeatureEntry>)>,
    /// Released handles, kept allocated so their addresses are not reused before Shutdown.
    pub released: Vec<Box<NVSDK_NGX_Handle>>,
    /// Parameter objects made by the library, keyed by address.
    pub params: HashMap<usize, (Owner, Box<ParamObject>)>,
    /// The one library-owned map of GetParameters.
    pub library_params: Option<usize>,
}

static STATE: Mutex<Option<State>> = Mutex::new(None);
/// Handle ids: never reused within a process (the state itself may be dropped and rebuilt).
static NEXT_ID: AtomicU32 = AtomicU32::new(1);

/// Runs `f` with the state locked. When the state ends up empty (no device, feature or
/// parameter object) it is dropped entirely, so a process that shut the library down holds no
/// heap memory of it but the shells of destroyed parameter maps ([`retire`]: reachable from a
/// static, so leak checkers count them as held, not lost).
pub fn with<R>(f: impl FnOnce(&mut State) -> R) -> R {
    let mut g = STATE.lock();
    let r = f(g.get_or_insert_with(State::default));
    if g.as_ref().is_some_and(State::is_empty) {
        *g = None;
    }
    r
}

/// A raw device key.
pub fn device_key(d: vk::Device) -> u64 {
    d.as_raw()
}

impl State {
    /// True when nothing is held.
    pub fn is_empty(&self) -> bool {
        self.devices.is_empty()
            && self.features.is_empty()
            && self.released.is_empty()
            && self.params.is_empty()
    }

    /// What still needs the library's code after a Shutdown (the Core's `Shutdown1` reports it
    /// so that NVIDIA's static library unloads the Core only when nothing is left).
    pub fn remaining(&self) -> Remaining {
        Remaining {
            devices: self.devices.len(),
            features: self.features.len(),
            app_maps: self
                .params
                .values()
                .filter(|(o, _)| *o == Owner::App)
                .count(),
        }
    }

    /// True when at least one device is initialised.
    pub fn initialized(&self) -> bool {
        !self.devices.is_empty()
    }

    /// The entry of `device`.
    pub fn device(&self, device: u64) -> Option<&DeviceEntry> {
        self.devices
            .iter()
            .find(|(k, _)| *k == device)
            .map(|(_, e)| e)
    }

    /// Adds or replaces a device.
    pub fn add_device(&mut self, entry: DeviceEntry) {
        let key = device_key(entry.ctx.device);
        self.devices.retain(|(k, _)| *k != key);
        self.devices.push((key, entry));
    }

    /// Registers a new parameter object and returns its C pointer.
    pub fn new_params(
        &mut self,
        owner: Owner,
        populate: Option<Populate>,
    ) -> *mut NVSDK_NGX_Parameter {
        let obj = ParamObject::new(populate);
        let p = obj.as_c();
        self.params.insert(p as usize, (owner, obj));
        p
    }

    /// Registers a created feature and returns its handle pointer.
    pub fn add_feature(&mut self, mut entry: FeatureEntry) -> *mut NVSDK_NGX_Handle {
        entry.id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        let mut handle = Box::new(NVSDK_NGX_Handle { Id: entry.id });
        let p: *mut NVSDK_NGX_Handle = &mut *handle;
        self.features.insert(p as usize, (handle, Arc::new(entry)));
        p
    }

    /// The live feature behind a handle pointer (compared by address, never dereferenced).
    pub fn feature(&self, handle: *const NVSDK_NGX_Handle) -> Option<Arc<FeatureEntry>> {
        self.features
            .get(&(handle as usize))
            .map(|(_, e)| e.clone())
    }

    /// Removes a live feature; its handle memory stays allocated until the final Shutdown.
    pub fn remove_feature(&mut self, handle: *const NVSDK_NGX_Handle) -> Option<Arc<FeatureEntry>> {
        let (h, e) = self.features.remove(&(handle as usize))?;
        self.released.push(h);
        Some(e)
    }

    /// Removes the devices selected by `device` (all for `None`) and their features. Returns the
    /// removed device keys and features (to release outside the lock), and frees library-owned
    /// state when no device remains.
    pub fn shutdown(&mut self, device: Option<u64>) -> (Vec<u64>, Vec<Arc<FeatureEntry>>) {
        let gone: Vec<u64> = self
            .devices
            .iter()
            .map(|(k, _)| *k)
            .filter(|k| device.is_none_or(|d| d == *k))
            .collect();
        self.devices.retain(|(k, _)| !gone.contains(k));
        let dead: Vec<usize> = self
            .features
            .iter()
            .filter(|(_, (_, e))| gone.contains(&e.device))
            .map(|(k, _)| *k)
            .collect();
        let mut features = Vec::new();
        for k in dead {
            if let Some(e) = self.remove_feature(k as *const NVSDK_NGX_Handle) {
                features.push(e);
            }
        }
        if self.devices.is_empty() {
            if let Some(lp) = self.library_params.take() {
                if let Some((_, obj)) = self.params.remove(&lp) {
                    retire(obj);
                }
            }
            self.released.clear();
        }
        (gone, features)
    }
}

/// Shells of destroyed parameter maps, kept for the life of the process; see [`retire`].
/// The boxes are the point: each shell must stay at the address its C pointer names (moving the
/// objects into the vector would free those addresses).
#[allow(clippy::vec_box)]
static RETIRED: Mutex<Vec<Box<ParamObject>>> = Mutex::new(Vec::new());

/// Ends a parameter map's life: its contents are freed now, its shell (the 24 bytes its C
/// pointer points at) never.
///
/// Why never: an application names a map only by its address. Once a map is freed, the
/// allocator may give the same address to the next map, and from then on no check (a registry,
/// a generation or cookie stored in the object) can tell a stale pointer to the old map from
/// the new map's pointer: they are the same bits and point at the same, live, object. The only
/// sound rule is that no two maps ever share an address, so the shell's memory is never returned
/// to the allocator. It is small (the vtable pointer and an empty slot), the contents (every key
/// and value) are freed at once, and a stale pointer stays harmless even when the application
/// calls through it (its methods answer as a destroyed map). The shells are kept outside
/// [`State`], which is dropped when the library holds nothing else, so they outlive that too.
pub fn retire(obj: Box<ParamObject>) {
    obj.retire();
    RETIRED.lock().push(obj);
}

/// Releases a feature's backend instance (idempotent).
pub fn release_instance(e: &FeatureEntry) {
    if let Some(inst) = e.instance.lock().take() {
        inst.release();
    }
}
