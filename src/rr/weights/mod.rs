//! RR's prepared weight images (spec rr-network §6): where every item of each layer's image
//! lies ([`layout`]), the fragment orders inside items ([`tiles`]), and natural reads and writes
//! of whole images ([`image`]).
//!
//! # Reading weights (the API the graph, the CPU reference and the GPU route use)
//!
//! ```no_run
//! use openngx::rr::layers::LayerId;
//! use openngx::rr::weights::RrWeights;
//! # fn f(w: &RrWeights) {
//! let enc2 = w.layer(LayerId::Enc2);
//! let qk = enc2.qk(3); // Matrix { n: 32, k: 96, codes: [n][k] E4M3 }
//! let u_code = qk.at(5, 17); // output column 5, input channel 17
//! let bias = enc2.score_bias(3); // [64 queries][96 keys] f16 bits
//! let gain = enc2.g1(); // 96 f16 bits
//! let merge = enc2.merge().expect("enc0..enc4 merge"); // w: [128][384], b: 128 f16
//! let bytes = enc2.bytes(); // the prepared image as stored, for a GPU buffer
//! # }
//! ```
//!
//! * Matrices are natural `[n][k]`: `n` the GEMM's output column, `k` its input (reduction)
//!   index, k contiguous ([`Matrix::at`], [`Matrix::row`]). QK and V are `[32][C]`, Wo `[C][32]`,
//!   W1 `[32][C]`, W2 `[C][32]`, the merge `[C_next][4C]`, the expand `[4C][C_in]` (sub-position
//!   q's outputs at `q·C..q·C+C`), the tail head `[16][C]`, the embedding `[32][32]` twice.
//!   What the k index of the merge means (which of the 2x2 tokens and channel) is the graph's to
//!   state; the image only fixes the GEMM's indices.
//! * Vectors (g1, g2, bo, b1, b2, the merge/expand/tail/embedding biases) and the score biases
//!   are f16 bit patterns (`u16`); decode them with `numerics::f16`.
//! * E4M3 codes are returned as stored; decoding them (including the NaN codes 0x7F/0xFF) is
//!   the numerics' business.
//! * [`LayerImage::layout`] gives the offsets when a kernel binds a slice of the image instead.
//!
//! Where the weights come from: a model directory (`rr::weights::model`, loaded with SHA-256
//! checks), synthesis and DLL extraction (the tools), or [`RrWeights::from_images`] for images
//! made in memory; building an image from natural values is [`encode_layer`].

pub mod image;
pub mod layout;
pub mod model;
pub mod tiles;

pub use image::{
    encode_item, encode_layer, ImageError, LayerImage, LinearWeights, Matrix, RrWeights, Values,
};
pub use layout::{layout, LayerLayout};
pub use tiles::TileOrder;
