//! Attention softmax pieces (spec nr-network §2.7, §8.8): the 64-key pairing tree, the window
//! softmax, and the ViT block sums, padding correction and final normalisation.
//!
//! There is no max subtraction: the exponential tricks of [`super::exp`] are bounded. Every `+` is
//! an f16 add (RNE) and the order is part of the result.

use super::e4m3::{self, E4};
use super::exp;
use super::f16::{self, F16};
use super::recip;

/// Keys per softmax block (a window, or one ViT key block).
pub const KEYS: usize = 64;

/// The pairing tree over 64 weights in physical key order:
/// `b[g][j] = e[g+16j] + e[g+16j+8]` (g = 0..7, j = 0..3), `t[g] = ((b0 + b1) + b2) + b3`,
/// `sum = (((t0 + t2) + t4) + t6) + (((t1 + t3) + t5) + t7)`.
pub fn tree_sum(e: &[F16; KEYS]) -> F16 {
    let mut t = [0u16; 8];
    for (g, tg) in t.iter_mut().enumerate() {
        let b = |j: usize| f16::add(e[g + 16 * j], e[g + 16 * j + 8]);
        *tg = f16::add(f16::add(f16::add(b(0), b(1)), b(2)), b(3));
    }
    let even = f16::add(f16::add(f16::add(t[0], t[2]), t[4]), t[6]);
    let odd = f16::add(f16::add(f16::add(t[1], t[3]), t[5]), t[7]);
    f16::add(even, odd)
}

/// Window weights `e[k] = exp_window(S[k])`.
pub fn window_weights(s: &[F16; KEYS]) -> [F16; KEYS] {
    s.map(exp::exp_window)
}

/// Window probabilities from the weights: `r = f16(1/tree_sum(e))` (correctly rounded),
/// `P[k] = E4(f16(e[k] * r))`.
pub fn window_probs(e: &[F16; KEYS]) -> [E4; KEYS] {
    let r = recip::recip(tree_sum(e));
    e.map(|x| e4m3::from_f16(f16::mul(x, r)))
}

/// The whole window softmax of one query row: 64 scores (`prior + q.k`, physical key order) to 64
/// E4M3 probabilities.
pub fn window_softmax(s: &[F16; KEYS]) -> [E4; KEYS] {
    window_probs(&window_weights(s))
}

/// A ViT weight as published for the P.V MMA: `E4(exp_vit(s))`, unnormalised.
pub fn vit_weight(s: F16) -> E4 {
    e4m3::from_f16(exp::exp_vit(s))
}

/// The ViT sum of one 64-key block of weights (`exp_vit` halves, token order): the same tree.
pub fn vit_block_sum(e: &[F16; KEYS]) -> F16 {
    tree_sum(e)
}

/// The ViT denominator: the first block sum sets the total, the others are added in block order
/// (f16), then the padded key rows' `exp_vit(0)` weights are removed once:
/// `total = f16(total - f16(0.083984375 * padded_rows))`. No blocks gives +0 before the correction.
pub fn vit_total(block_sums: &[F16], padded_rows: u32) -> F16 {
    let mut total = block_sums.first().copied().unwrap_or(f16::POS_ZERO);
    for &b in block_sums.iter().skip(1) {
        total = f16::add(total, b);
    }
    // padded_rows < 2^24 is exact in f32; the half conversion is exact below 2049.
    let rows = f16::from_f32_rne(padded_rows as f32);
    let correction = f16::mul(exp::VIT_EXP0, rows);
    f16::add(total, f16::neg(correction))
}

/// The ViT reciprocal `r = f16(1/total)` (correctly rounded).
pub fn vit_recip(total: F16) -> F16 {
    recip::recip(total)
}

/// The ViT output element: `E4(f16(acc * r))` where `acc` is the f16 P.V MMA result.
pub fn vit_output(acc: F16, r: F16) -> E4 {
    e4m3::from_f16(f16::mul(acc, r))
}
