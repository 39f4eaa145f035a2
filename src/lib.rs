//! openngx: a Vulkan stand-in for NVIDIA's NGX SDK that runs the DLSS-NR network bit-exactly.
//!
//! See `docs/architecture.md` for the layout; `numerics` is the single source of truth for the
//! arithmetic, `nr::graph` for the network schedule, `feature` the seam between the networks
//! and the C ABI (`ngx`).

pub mod feature;
pub mod gpu;
pub mod model;
pub mod ngx;
pub mod nr;
pub mod numerics;
pub mod rr;
