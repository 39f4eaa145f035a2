//! The CPU reference of Ray Reconstruction: executes every op of `rr::graph` with
//! `numerics::rr` and `rr::frame`, the oracle the GPU route is compared with byte for byte.
//!
//! Work is spread with rayon over rows, windows and pixels; every output element is computed
//! on its own (sums that span rows, like the auto-exposure's, are exact integers), so results do
//! not depend on the thread count.

mod attention;
mod exec;
mod weights;

pub use exec::{Executor, TensorData};
pub use weights::Weights;

/// Why a reference run failed.
#[derive(Debug, thiserror::Error)]
pub enum ReferenceError {
    #[error("weights: {0}")]
    Weights(String),
    #[error("numerics: {0}")]
    Numerics(String),
    #[error("tensor `{0}` was read before it was written")]
    Unwritten(String),
    #[error("tensor `{name}`: expected {expected} elements of {dtype}, got {got}")]
    TensorSize {
        name: String,
        dtype: &'static str,
        expected: usize,
        got: usize,
    },
}
