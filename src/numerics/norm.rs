//! Cosine normalisation of attention q and k per token and head (spec nr-network §2.5, §7.3, §8.9).
//!
//! `r[c] = f16(v[c]^2 + f16(v[c+16]^2))` for c = 0..15 — the high square rounded first, the low
//! square and the add one single-rounding half FMA; a stride tree 8/4/2/1 of f16 adds; and
//! `norm = f16(1/sqrt(r[0]))` correctly rounded (+0 -> +inf). A zero row then gives `0 * inf = NaN`,
//! which publishes as E4M3 +0.

use super::e4m3::{self, E4};
use super::f16::{self, F16};
use super::recip;

/// Channels per head.
pub const HEAD: usize = 32;
/// 5.65625 = f16(sqrt 32), the extra ViT q factor.
pub const VIT_Q_SCALE: F16 = 0x45A8;

/// The squared norm `r[0]` of one head vector.
pub fn sum_squares(v: &[F16; HEAD]) -> F16 {
    let mut r = [0u16; 16];
    for (c, rc) in r.iter_mut().enumerate() {
        let hi = f16::mul(v[c + 16], v[c + 16]);
        *rc = f16::fma(v[c], v[c], hi);
    }
    for s in [8, 4, 2, 1] {
        for c in 0..s {
            r[c] = f16::add(r[c], r[c + s]);
        }
    }
    r[0]
}

/// `norm = f16(1/sqrt(sum_squares(v)))`, correctly rounded; +inf for a zero vector.
pub fn cosine_norm(v: &[F16; HEAD]) -> F16 {
    recip::rsqrt(sum_squares(v))
}

/// A per-head f32 temperature as used: rounded to f16 (RNE) first.
pub fn temperature_f16(t: f32) -> F16 {
    f16::from_f32_rne(t)
}

/// Window q': `E4(f16(f16(q * norm) * f16(temperature)))`.
pub fn window_q(q: &[F16; HEAD], temperature: f32) -> [E4; HEAD] {
    let norm = cosine_norm(q);
    let t = temperature_f16(temperature);
    q.map(|x| e4m3::from_f16(f16::mul(f16::mul(x, norm), t)))
}

/// ViT q': `E4(f16(f16(f16(q * norm) * 5.65625) * f16(temperature)))` — three half multiplies.
pub fn vit_q(q: &[F16; HEAD], temperature: f32) -> [E4; HEAD] {
    let norm = cosine_norm(q);
    let t = temperature_f16(temperature);
    q.map(|x| e4m3::from_f16(f16::mul(f16::mul(f16::mul(x, norm), VIT_Q_SCALE), t)))
}

/// k' (window and ViT): `E4(f16(k * norm_k))`.
pub fn normalize_k(k: &[F16; HEAD]) -> [E4; HEAD] {
    let norm = cosine_norm(k);
    k.map(|x| e4m3::from_f16(f16::mul(x, norm)))
}

/// v' (window and ViT): `E4(v)`.
pub fn publish_v(v: &[F16; HEAD]) -> [E4; HEAD] {
    v.map(e4m3::from_f16)
}
