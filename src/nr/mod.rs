//! The DLSS-NR network on the host side: geometry of a frame, the per-pixel frame work
//! (prepare/compose and the temporal state), and (added by the lead) the op graph and the CPU
//! reference.
pub mod compare;
pub mod feature;
pub mod fixture;
pub mod frame;
pub mod geometry;
pub mod graph;
pub mod image;
pub mod pipeline;
pub mod record;
pub mod reference;
