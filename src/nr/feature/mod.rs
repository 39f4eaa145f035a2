//! Feature 18 (DLSS-NR) behind the NGX C ABI: the backend the ABI layer calls to create a feature
//! on the caller's device, and the per-feature state that records each frame into the caller's
//! command buffer.
//!
//! * `cache` — models loaded once per directory and shared by the features using them; the quick
//!   model-directory check the ABI layer runs before creating a feature;
//! * `backend` — [`NrBackend`], the `FeatureBackend` of feature 18 (create, memory report);
//! * `instance` — [`NrFeature`], one created feature: its buffers, passes, network, temporal
//!   state and the per-frame recording (the image-layout contract is documented there);
//! * `deferred` — objects kept alive until a recorded command buffer has run (event-based);
//! * `errors` — GPU/recorder errors as NGX errors;
//! * `frame` — the host side of an evaluation: NGX inputs -> frame parameters, the temporal
//!   state (seed, counter, history) and the kernels' constant block.
pub mod backend;
pub mod cache;
pub mod deferred;
pub mod errors;
pub mod frame;
pub mod instance;

pub use backend::NrBackend;
pub use cache::{quick_check, ModelCache};
pub use frame::{FrameDriver, PlannedFrame};
pub use instance::{NrFeature, FRAMES_IN_FLIGHT, INPUT_LAYOUT, OUTPUT_LAYOUT};
