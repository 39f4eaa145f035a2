//! Ray Reconstruction (feature 13) as a feature (`crate::feature`): its typed creation
//! parameters ([`RrCreate`]) and evaluation inputs ([`RrInputs`]), validated once when made, and
//! the guide table ([`Guide`]: which image feeds which of the graph's lanes). It knows no C ABI:
//! `crate::ngx::dlss_d` parses a caller's parameter objects into these types.
//!
//! No backend exists yet: the GPU route (`rr::gpu_frame`) is being built. A backend implements
//! `feature::Backend<Create = RrCreate, Eval = RrInputs>`, reads the images of an [`RrInputs`]
//! into the graph's colour and guide tensors ([`Guide::lanes`]) and runs the frame with
//! [`RrInputs::frame_params`]; registering it (one line in `ngx::builtin`) makes feature 13
//! available through the C ABI with no other change.
//!
//! * `params` — [`RrCreate`], [`RrInputs`], [`CreateFlags`], [`Guide`].

pub mod params;

pub use params::{
    CreateFlags, DepthType, Guide, RoughnessMode, RrCreate, RrFrame, RrInputs, MAX_OUTPUT_AREA,
    MAX_SIZE, MIN_OUTPUT, MIN_RENDER,
};
