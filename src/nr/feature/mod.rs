//! DLSS-NR as a feature (`crate::feature`): the backend that creates a feature on the caller's
//! device, its typed parameters, and the per-feature state that records each frame into the
//! caller's command buffer. It knows no C ABI: `crate::ngx::dlss_nr` parses the caller's
//! parameter objects into [`NrCreate`] and [`NrInputs`].
//!
//! * `cache` — the quick model-directory check the ABI layer runs before creating a feature (the
//!   models themselves are loaded once per directory and shared through
//!   `crate::model::ModelCache`);
//! * `params` — [`NrCreate`] and [`NrInputs`], validated once when made;
//! * `backend` — [`NrBackend`], the backend of feature 18 (create, memory report);
//! * `instance` — [`NrFeature`], one created feature: the frame (`nr::gpu_frame`) with the
//!   caller's images imported and exported around it, and the temporal state (the image-layout
//!   contract is documented there);
//! * `errors` — GPU/recorder errors as feature errors;
//! * `driver` — the host side of an evaluation: the temporal state (seed, counter, history) and
//!   the kernels' constant block.
//!
//! The generic Vulkan pieces it uses (views of the caller's images, deferred frees) are
//! `crate::gpu`'s.
pub mod backend;
pub mod cache;
pub mod driver;
pub mod errors;
pub mod instance;
pub mod params;
pub mod route_choice;

pub use crate::model::ModelCache;
pub use backend::NrBackend;
pub use cache::quick_check;
pub use driver::{FrameDriver, PlannedFrame};
pub use instance::{NrFeature, INPUT_LAYOUT, OUTPUT_LAYOUT, VIEW_IDLE_FRAMES};
pub use params::{NrCreate, NrInputs, MAX_AREA, MAX_SIZE, MIN_SIZE};
