//! DLSS Ray Reconstruction (NGX feature 13, DLSS-D): the denoiser network of spec
//! rr-network.md. [`layers`] is the one layer table; [`weights`] the prepared weight images
//! (layout, fragment orders, natural reads and writes); [`geometry`] the grids, windows and the
//! shift schedule; [`graph`] the one schedule both executors walk; [`reference`] and
//! [`cpu_frame`] the CPU executor, [`record`] and [`gpu_frame`] the GPU route; [`keys`] the
//! NGX parameter names of feature 13 and [`feature`] its typed creation and evaluation
//! parameters.
//!
//! May use `feature`, `gpu`, `model` and `numerics`; never `ngx` nor `nr`.

pub mod cpu_frame;
pub mod feature;
pub mod frame;
pub mod geometry;
pub mod gpu_frame;
pub mod graph;
pub mod keys;
pub mod layers;
pub mod preset;
pub mod record;
pub mod reference;
pub mod weights;
