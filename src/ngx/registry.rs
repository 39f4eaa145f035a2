//! The table of features the C ABI offers. Each entry is a [`Description`] (the feature's id,
//! capability keys, model-directory name and the parsing of its creation and evaluation
//! parameters into the network's own typed values) plus, when one is installed, the network's
//! [`Backend`]. The exports look features up here and never compare ids themselves.
//!
//! Adding a feature takes one description, one backend and one [`register_backend`] call (the
//! built-in ones are in `builtin.rs`). A feature whose backend was removed stays described: it
//! is reported as not available and creation fails with `FAIL_NotImplemented`.
//!
//! The model check: each description validates its model directory; tests may replace every
//! check ([`set_model_validator`]) or reduce it to "`manifest.json` is a file"
//! ([`clear_model_validator`]).

use std::path::Path;
use std::sync::Arc;

use ash::vk;
use parking_lot::RwLock;

use super::abi::*;
use super::params::{ParamObject, ParamRef, Value};
use std::ffi::CStr;

use crate::feature::{Backend, DeviceContext, FeatureError, Instance, RouteReport};

/// The ABI side of one feature: how a caller's parameter objects become the network's typed
/// parameters, and what the capability maps say about it.
pub trait Description: Send + Sync + 'static {
    /// The network's creation parameters.
    type Create: Send + Sync + 'static;
    /// The network's evaluation inputs.
    type Eval: 'static;

    /// The NGX feature id.
    fn id(&self) -> NVSDK_NGX_Feature;
    /// The feature's name in log lines (e.g. `"DLSS-NR"`).
    fn label(&self) -> &'static str;
    /// The directory name its model is looked up under (next to the library, under the
    /// application's paths); `None` for a feature that needs no model.
    fn model_subdir(&self) -> Option<&'static str>;
    /// The environment variable that, when set, is the only model directory for this feature
    /// (`OPENNGX_MODEL_DIR` unless the feature names its own, so that two features' models can
    /// be pointed at side by side).
    fn model_env(&self) -> &'static str {
        super::model_dir::MODEL_DIR_ENV
    }
    /// Checks a model directory before a backend loads it (`Err` carries the reason).
    fn check_model(&self, dir: &Path) -> Result<(), String> {
        manifest_exists(dir)
    }
    /// Writes the feature's capability keys; `available` says whether a backend is installed.
    fn capabilities(&self, o: &ParamObject, available: bool);
    /// Reads and validates the creation parameters.
    fn parse_create(&self, p: &ParamRef) -> Result<Self::Create, FeatureError>;
    /// Reads and validates the parameters of one evaluation of a feature created with `created`.
    fn parse_eval(&self, p: &ParamRef, created: &Self::Create) -> Result<Self::Eval, FeatureError>;
    /// A short text for the creation log line (e.g. `"1920x1080"`).
    fn summary(&self, created: &Self::Create) -> String;
    /// Device extensions the feature uses where the physical device offers them (a faster
    /// route's), listed by `GetFeatureDeviceExtensionRequirements` only where offered.
    fn device_extensions(&self) -> &'static [&'static CStr] {
        &[]
    }
}

/// The backend type a description `D` accepts.
pub type BackendOf<D> =
    dyn Backend<Create = <D as Description>::Create, Eval = <D as Description>::Eval>;

/// A created feature as the exports hold it: parses each evaluation's parameters, then records.
pub trait LiveFeature: Send {
    /// Parses `p` and records one evaluation into `cmd`.
    fn evaluate(&mut self, cmd: vk::CommandBuffer, p: &ParamRef) -> Result<(), FeatureError>;
    /// Frees the instance (once).
    fn release(self: Box<Self>);
    /// Where the instance runs (see [`crate::feature::Instance::route_report`]).
    fn route_report(&self) -> Option<RouteReport>;
}

/// Written back into the creation parameters (openngx's own keys): the route a created feature
/// runs (uint: 1 exact, 2 tensor) and the fraction bits of its FP8 MMA profile (13 for f13, 25
/// for h25).
pub const ACTIVE_ROUTE: &CStr = c"OpenNGX.ActiveRoute";
pub const ACTIVE_PROFILE: &CStr = c"OpenNGX.ActiveProfile";

/// Parsed creation parameters waiting for the model directory.
pub trait CreateRequest: Send {
    /// For the log line.
    fn summary(&self) -> String;
    /// Creates the feature with its backend (`BackendUnavailable` when none is installed).
    fn create(
        self: Box<Self>,
        device: &DeviceContext,
        model_dir: &Path,
        cmd: vk::CommandBuffer,
    ) -> Result<Box<dyn LiveFeature>, FeatureError>;
}

/// One feature of the table, its types erased.
pub trait Feature: Send + Sync {
    /// The NGX feature id.
    fn id(&self) -> NVSDK_NGX_Feature;
    /// The feature's name in log lines.
    fn label(&self) -> &'static str;
    /// The installed backend's name.
    fn backend_name(&self) -> Option<String>;
    /// Device bytes the backend reports (0 without one).
    fn memory_in_use(&self) -> u64;
    /// See [`Description::model_subdir`].
    fn model_subdir(&self) -> Option<&'static str>;
    /// See [`Description::model_env`].
    fn model_env(&self) -> &'static str;
    /// See [`Description::device_extensions`].
    fn device_extensions(&self) -> &'static [&'static CStr];
    /// The model check in force for this feature.
    fn check_model(&self, dir: &Path) -> Result<(), String>;
    /// Writes the capability keys.
    fn capabilities(&self, o: &ParamObject);
    /// Parses the creation parameters.
    fn parse_create(self: Arc<Self>, p: &ParamRef) -> Result<Box<dyn CreateRequest>, FeatureError>;
    /// Removes the backend.
    fn clear_backend(&self);
    /// See [`Backend::device_shutdown`].
    fn device_shutdown(&self, device: vk::Device);
}

struct Entry<D: Description> {
    description: D,
    backend: RwLock<Option<Arc<BackendOf<D>>>>,
}

struct Request<D: Description> {
    entry: Arc<Entry<D>>,
    created: D::Create,
}

struct Live<D: Description> {
    entry: Arc<Entry<D>>,
    created: D::Create,
    instance: Box<dyn Instance<D::Eval>>,
}

impl<D: Description> Feature for Entry<D> {
    fn id(&self) -> NVSDK_NGX_Feature {
        self.description.id()
    }
    fn label(&self) -> &'static str {
        self.description.label()
    }
    fn backend_name(&self) -> Option<String> {
        self.backend.read().as_ref().map(|b| b.name().to_owned())
    }
    fn memory_in_use(&self) -> u64 {
        self.backend
            .read()
            .as_ref()
            .map_or(0, |b| b.memory_in_use())
    }
    fn model_subdir(&self) -> Option<&'static str> {
        self.description.model_subdir()
    }
    fn model_env(&self) -> &'static str {
        self.description.model_env()
    }
    fn device_extensions(&self) -> &'static [&'static CStr] {
        self.description.device_extensions()
    }
    fn check_model(&self, dir: &Path) -> Result<(), String> {
        let check = MODEL_CHECK.read().clone();
        match check {
            ModelCheck::Feature => self.description.check_model(dir),
            ModelCheck::Custom(f) => f(dir),
            ModelCheck::ManifestOnly => manifest_exists(dir),
        }
    }
    fn capabilities(&self, o: &ParamObject) {
        self.description
            .capabilities(o, self.backend.read().is_some());
    }
    fn parse_create(self: Arc<Self>, p: &ParamRef) -> Result<Box<dyn CreateRequest>, FeatureError> {
        let created = self.description.parse_create(p)?;
        Ok(Box::new(Request {
            entry: self,
            created,
        }))
    }
    fn clear_backend(&self) {
        *self.backend.write() = None;
    }
    fn device_shutdown(&self, device: vk::Device) {
        let backend = self.backend.read().clone();
        if let Some(b) = backend {
            b.device_shutdown(device);
        }
    }
}

impl<D: Description> CreateRequest for Request<D> {
    fn summary(&self) -> String {
        self.entry.description.summary(&self.created)
    }
    fn create(
        self: Box<Self>,
        device: &DeviceContext,
        model_dir: &Path,
        cmd: vk::CommandBuffer,
    ) -> Result<Box<dyn LiveFeature>, FeatureError> {
        let backend = self.entry.backend.read().clone();
        let Some(backend) = backend else {
            return Err(FeatureError::BackendUnavailable {
                feature: self.entry.id(),
            });
        };
        let instance = backend.create(device, model_dir, &self.created, cmd)?;
        Ok(Box::new(Live {
            entry: self.entry,
            created: self.created,
            instance,
        }))
    }
}

impl<D: Description> LiveFeature for Live<D> {
    fn evaluate(&mut self, cmd: vk::CommandBuffer, p: &ParamRef) -> Result<(), FeatureError> {
        let inputs = self.entry.description.parse_eval(p, &self.created)?;
        self.instance.evaluate(cmd, &inputs)
    }
    fn route_report(&self) -> Option<RouteReport> {
        self.instance.route_report()
    }
    fn release(self: Box<Self>) {
        self.instance.release();
    }
}

static FEATURES: RwLock<Vec<Arc<dyn Feature>>> = RwLock::new(Vec::new());

/// Installs `description` with `backend`, replacing any entry with the same id (instances
/// created earlier stay alive until released). The one registration path, for the built-in
/// features and any other.
pub fn register_backend<D: Description>(description: D, backend: Arc<BackendOf<D>>) {
    super::builtin::ensure_installed();
    insert(description, Some(backend));
}

/// `register_backend` without the built-in installation step (for `builtin.rs` itself).
pub(crate) fn insert<D: Description>(description: D, backend: Option<Arc<BackendOf<D>>>) {
    let entry: Arc<dyn Feature> = Arc::new(Entry {
        description,
        backend: RwLock::new(backend),
    });
    let mut table = FEATURES.write();
    table.retain(|f| f.id() != entry.id());
    table.push(entry);
}

/// Removes the backend of `feature`; its description stays (tests, diagnostics).
pub fn unregister_backend(feature: NVSDK_NGX_Feature) {
    if let Some(f) = lookup(feature) {
        f.clear_backend();
    }
}

/// The entry of `feature`, when the table describes it.
pub fn lookup(feature: NVSDK_NGX_Feature) -> Option<Arc<dyn Feature>> {
    super::builtin::ensure_installed();
    FEATURES.read().iter().find(|f| f.id() == feature).cloned()
}

/// Every described feature, in registration order.
pub fn features() -> Vec<Arc<dyn Feature>> {
    super::builtin::ensure_installed();
    FEATURES.read().clone()
}

/// The feature ids of the table, for "only ..." log lines.
pub fn described_ids() -> String {
    let list: Vec<String> = features()
        .iter()
        .map(|f| format!("{} ({})", f.id(), f.label()))
        .collect();
    list.join(", ")
}

/// Capability keys of features this library does not provide; written as 0 first, so an
/// engine does not probe them (a description may set its own key afterwards).
const NOT_PROVIDED: [&str; 4] = [
    "SuperSampling.Available",
    "SuperSamplingDenoising.Available",
    "FrameGeneration.Available",
    "FrameInterpolation.Available",
];

/// Fills a capability map (GetCapabilityParameters / GetParameters, and again on `Reset()`).
pub fn populate_capabilities(o: &ParamObject) {
    for k in NOT_PROVIDED {
        o.set(k.as_bytes(), Value::I(0));
    }
    for f in features() {
        f.capabilities(o);
    }
}

// ---------------------------------------------------------------------------------------------
// Model directory checks

/// Checks that a directory holds a usable model; `Err` carries a human-readable reason.
pub type ModelValidator = dyn Fn(&Path) -> Result<(), String> + Send + Sync;

#[derive(Clone)]
enum ModelCheck {
    /// Each description's own check (the unit tests' builds start from `ManifestOnly`).
    #[cfg_attr(test, allow(dead_code))]
    Feature,
    /// One check for every feature.
    Custom(Arc<ModelValidator>),
    /// Only "`manifest.json` is a file".
    ManifestOnly,
}

// The library's own unit tests exercise the model lookup with placeholder directories that
// hold only an empty manifest.json; every other build runs the features' checks.
#[cfg(not(test))]
static MODEL_CHECK: RwLock<ModelCheck> = RwLock::new(ModelCheck::Feature);
#[cfg(test)]
static MODEL_CHECK: RwLock<ModelCheck> = RwLock::new(ModelCheck::ManifestOnly);

/// Replaces every feature's model check with `v` (tests).
pub fn set_model_validator(v: Arc<ModelValidator>) {
    *MODEL_CHECK.write() = ModelCheck::Custom(v);
}

/// Reduces every feature's model check to "the directory holds a `manifest.json` file" (tests
/// with placeholder directories).
pub fn clear_model_validator() {
    *MODEL_CHECK.write() = ModelCheck::ManifestOnly;
}

/// The minimal check: `dir/manifest.json` is a file.
pub fn manifest_exists(dir: &Path) -> Result<(), String> {
    let manifest = dir.join("manifest.json");
    match std::fs::metadata(&manifest) {
        Ok(m) if m.is_file() => Ok(()),
        Ok(_) => Err(format!("{} is not a file", manifest.display())),
        Err(e) => Err(format!("{}: {e}", manifest.display())),
    }
}
