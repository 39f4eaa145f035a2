//! Attention on the CPU: shifted 8x8 windows with learned priors, and the global ViT attention.

use rayon::prelude::*;

use crate::nr::geometry;
use crate::numerics::{e4m3, exp, f16, mma, softmax, Profile};

/// Window attention of one level (spec §1.5, §2.6-2.7).
///
/// `q`, `k`, `v` are E4 `[w*h][heads*32]`; `priors` is `[head][q_phys][k_phys]`. Queries are taken
/// in natural window order, keys and values in physical (4x4-tiled) order. Tokens outside the level
/// are zero vectors whose keys still enter the softmax denominator; outputs are written only for
/// in-level tokens.
#[allow(clippy::too_many_arguments)]
pub fn window(
    q: &[u8],
    k: &[u8],
    v: &[u8],
    priors: &[u16],
    heads: usize,
    w: usize,
    h: usize,
    phase: usize,
    p: &Profile,
) -> Vec<u8> {
    let c = heads * 32;
    let (sx, sy) = geometry::Phase(phase as u8).shift();
    let (sx, sy) = (sx as usize, sy as usize);
    let wx = (w + sx).div_ceil(8);
    let wy = (h + sy).div_ceil(8);
    let per_window: Vec<Vec<(usize, [u8; 32], usize)>> = (0..wx * wy * heads)
        .into_par_iter()
        .map(|job| {
            let hd = job % heads;
            let win = job / heads;
            let (ox, oy) = (
                (win % wx) as isize * 8 - sx as isize,
                (win / wx) as isize * 8 - sy as isize,
            );
            // Token index (or None) of natural window position t.
            let token = |t: usize| -> Option<usize> {
                let x = ox + (t % 8) as isize;
                let y = oy + (t / 8) as isize;
                (x >= 0 && y >= 0 && (x as usize) < w && (y as usize) < h)
                    .then(|| y as usize * w + x as usize)
            };
            // Keys and values in physical order: kp[p] = K row of the natural token at physical p.
            let mut kp = [[0u8; 32]; 64];
            let mut vt = vec![[0u8; 64]; 32]; // [channel][physical key]
            for t in 0..64 {
                if let Some(tok) = token(t) {
                    let ph = geometry::natural_to_physical(t);
                    let base = tok * c + hd * 32;
                    kp[ph].copy_from_slice(&k[base..base + 32]);
                    for ch in 0..32 {
                        vt[ch][ph] = v[base + ch];
                    }
                }
            }
            let prior = &priors[hd * 4096..(hd + 1) * 4096];
            let mut outs = Vec::new();
            for t in 0..64 {
                let Some(tok) = token(t) else { continue };
                let qrow = &q[tok * c + hd * 32..tok * c + hd * 32 + 32];
                let qp = geometry::natural_to_physical(t);
                let mut e = [0u16; 64];
                for (kk, ek) in e.iter_mut().enumerate() {
                    let s = mma::chain_e4m3(p, prior[qp * 64 + kk], qrow, &kp[kk]);
                    *ek = exp::exp_window(s);
                }
                let pw = softmax::window_probs(&e);
                let mut o = [0u8; 32];
                for (ch, oc) in o.iter_mut().enumerate() {
                    *oc = e4m3::from_f16(mma::chain_e4m3(p, f16::POS_ZERO, &pw, &vt[ch]));
                }
                outs.push((tok, o, hd));
            }
            outs
        })
        .collect();
    let mut att = vec![0u8; w * h * c];
    for outs in per_window {
        for (tok, o, hd) in outs {
            att[tok * c + hd * 32..tok * c + hd * 32 + 32].copy_from_slice(&o);
        }
    }
    att
}

/// Global ViT attention over all `tokens` (spec §1.4, §2.7): keys padded with zero rows to a
/// multiple of 64, unnormalised E4 weights, block-wise totals, padding correction at the end.
pub fn vit(q: &[u8], k: &[u8], v: &[u8], heads: usize, tokens: usize, p: &Profile) -> Vec<u8> {
    let c = heads * 32;
    let padded = tokens.div_ceil(64) * 64;
    let rows: Vec<(usize, usize, [u8; 32])> = (0..tokens * heads)
        .into_par_iter()
        .map(|job| {
            let hd = job % heads;
            let t = job / heads;
            let qrow = &q[t * c + hd * 32..t * c + hd * 32 + 32];
            let zero = [0u8; 32];
            let mut pw = vec![0u8; padded];
            let mut e = vec![0u16; padded];
            for key in 0..padded {
                let krow = if key < tokens {
                    &k[key * c + hd * 32..key * c + hd * 32 + 32]
                } else {
                    &zero[..]
                };
                let s = mma::chain_e4m3(p, f16::POS_ZERO, qrow, krow);
                e[key] = exp::exp_vit(s);
                pw[key] = e4m3::from_f16(e[key]);
            }
            let sums: Vec<u16> = e
                .chunks_exact(64)
                .map(|b| {
                    let mut blk = [0u16; 64];
                    blk.copy_from_slice(b);
                    softmax::vit_block_sum(&blk)
                })
                .collect();
            let total = softmax::vit_total(&sums, (padded - tokens) as u32);
            let r = softmax::vit_recip(total);
            let mut o = [0u8; 32];
            let mut col = vec![0u8; padded];
            for (ch, oc) in o.iter_mut().enumerate() {
                for key in 0..padded {
                    col[key] = if key < tokens {
                        v[key * c + hd * 32 + ch]
                    } else {
                        0
                    };
                }
                let acc = mma::chain_e4m3(p, f16::POS_ZERO, &pw, &col);
                *oc = softmax::vit_output(acc, r);
            }
            (t, hd, o)
        })
        .collect();
    let mut att = vec![0u8; tokens * c];
    for (t, hd, o) in rows {
        att[t * c + hd * 32..t * c + hd * 32 + 32].copy_from_slice(&o);
    }
    att
}
