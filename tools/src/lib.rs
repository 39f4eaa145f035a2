//! The openngx tools' library: everything the `openngx` CLI and the tests need that the shipped
//! library (`openngx`, linked by engines) must not carry.
//!
//! * `synth` — deterministic synthetic models with the real structure; `rr_synth` the same for
//!   Ray Reconstruction's eleven weight images, `rr_stats` their per-layer statistics;
//! * `dll` — model extraction from a user's own `nvngx_dlssnr.dll` (PE parsing, never loaded);
//!   `rr_dll` Ray Reconstruction's from `nvngx_dlssd.dll`, found by the tensors' structure;
//! * `stats` — weight statistics of a model;
//! * `model_write` — writing a model directory atomically (any network's);
//! * `fixture` — fixture directories ("captured frames") written by the CPU reference;
//!   `rr_fixture` Ray Reconstruction's;
//! * `compare` — the parity verdicts between a run and a fixture;
//! * `image` — PNG in and out;
//! * `devkit` — the caller-device kit: the instance, device, queue and pool the tools, the demo
//!   and the tests own when they play the NGX caller, submission and buffers/images;
//! * `scratch` — per-process scratch directories for what tests keep in statics, removed at exit.

pub mod compare;
pub mod devkit;
pub mod dll;
pub mod fixture;
pub mod image;
pub mod model_write;
pub mod rr_dll;
pub mod rr_fixture;
pub mod rr_stats;
pub mod rr_synth;
pub mod scratch;
pub mod stats;
pub mod synth;
