//! Ray Reconstruction (feature 13) as a feature (`crate::feature`): its typed creation
//! parameters ([`RrCreate`]) and evaluation inputs ([`RrInputs`]), validated once when made, and
//! the guide table ([`Guide`]: which image feeds which of the graph's lanes). It knows no C ABI:
//! `crate::ngx::dlss_d` parses a caller's parameter objects into these types.
//!
//! Its backend ([`RrBackend`], registered in `ngx::builtin`) runs RR's exact GPU route
//! (`rr::gpu_frame`): it reads the images of an [`RrInputs`] into the graph's colour and guide
//! tensors ([`Guide::lanes`]) and runs the frame with [`RrInputs::frame_params`].
//!
//! * `params` — [`RrCreate`], [`RrInputs`], [`CreateFlags`], [`Guide`];
//! * `backend` — [`RrBackend`] and [`RrFeature`] (creation, evaluation on the caller's device);
//! * `depth24` — the exact read of 24-bit depth (a copy of the depth aspect and its decode).

pub mod backend;
pub mod depth24;
pub mod params;

pub use backend::{RrBackend, RrFeature};

pub use params::{
    dynamic_min, CreateFlags, DepthType, Guide, RoughnessMode, RrCreate, RrFrame, RrInputs,
    MAX_OUTPUT_AREA, MAX_SIZE, MIN_OUTPUT, MIN_RENDER,
};
