//! Attention on the CPU: shifted 8x8 windows with learned priors, and the global ViT attention.
//!
//! Both MMAs of an attention head are small GEMMs run through the fast exact kernel
//! (`numerics::gemm_e4m3_packed`): scores `S = prior + Q·Kᵀ` (K = 32, one k32 step) and
//! `O = P·V` (K = the keys in physical order for windows, all padded keys for the ViT).

use rayon::prelude::*;

use crate::nr::geometry;
use crate::numerics::{e4m3, exp, gemm_e4m3_packed, softmax, PackedE4m3, Profile};

use super::exec::ReferenceError;

/// The outputs of one (window, head): the attention row of each in-level query token.
type WindowRows = Vec<(usize, [u8; 32])>;

fn num(e: impl std::fmt::Display) -> ReferenceError {
    ReferenceError::Numerics(e.to_string())
}

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
) -> Result<Vec<u8>, ReferenceError> {
    let c = heads * 32;
    let (sx, sy) = geometry::Phase(phase as u8).shift();
    let (sx, sy) = (sx as usize, sy as usize);
    let wx = (w + sx).div_ceil(8);
    let wy = (h + sy).div_ceil(8);
    let per_window: Vec<Result<WindowRows, ReferenceError>> = (0..wx * wy * heads)
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
            // Q rows in natural order, K rows and Vᵀ columns in physical order; zero outside.
            let mut qa = vec![0u8; 64 * 32];
            let mut kp = vec![0u8; 64 * 32];
            let mut vt = vec![0u8; 32 * 64]; // [channel][physical key]
            let mut seeds = vec![0u16; 64 * 64];
            let prior = &priors[hd * 4096..(hd + 1) * 4096];
            for t in 0..64 {
                let ph = geometry::natural_to_physical(t);
                seeds[t * 64..(t + 1) * 64].copy_from_slice(&prior[ph * 64..(ph + 1) * 64]);
                if let Some(tok) = token(t) {
                    let base = tok * c + hd * 32;
                    qa[t * 32..(t + 1) * 32].copy_from_slice(&q[base..base + 32]);
                    kp[ph * 32..(ph + 1) * 32].copy_from_slice(&k[base..base + 32]);
                    for ch in 0..32 {
                        vt[ch * 64 + ph] = v[base + ch];
                    }
                }
            }
            let kb = PackedE4m3::new(&kp, 64, 32, p.exponents).map_err(num)?;
            let mut s = vec![0u16; 64 * 64];
            gemm_e4m3_packed(p, &qa, &kb, 64, Some(&seeds), None, &mut s).map_err(num)?;
            let mut pw = vec![0u8; 64 * 64];
            for t in 0..64 {
                let mut e = [0u16; 64];
                for (kk, ek) in e.iter_mut().enumerate() {
                    *ek = exp::exp_window(s[t * 64 + kk]);
                }
                pw[t * 64..(t + 1) * 64].copy_from_slice(&softmax::window_probs(&e));
            }
            let vb = PackedE4m3::new(&vt, 32, 64, p.exponents).map_err(num)?;
            let mut o = vec![0u16; 64 * 32];
            gemm_e4m3_packed(p, &pw, &vb, 64, None, None, &mut o).map_err(num)?;
            let mut outs = Vec::with_capacity(64);
            for t in 0..64 {
                if let Some(tok) = token(t) {
                    let mut row = [0u8; 32];
                    for (ch, r) in row.iter_mut().enumerate() {
                        *r = e4m3::from_f16(o[t * 32 + ch]);
                    }
                    outs.push((tok * c + hd * 32, row));
                }
            }
            Ok(outs)
        })
        .collect();
    let mut att = vec![0u8; w * h * c];
    for outs in per_window {
        for (at, row) in outs? {
            att[at..at + 32].copy_from_slice(&row);
        }
    }
    Ok(att)
}

/// Global ViT attention over all `tokens` (spec §1.4, §2.7): keys padded with zero rows to a
/// multiple of 64, unnormalised E4 weights, block-wise totals, padding correction at the end.
pub fn vit(
    q: &[u8],
    k: &[u8],
    v: &[u8],
    heads: usize,
    tokens: usize,
    p: &Profile,
) -> Result<Vec<u8>, ReferenceError> {
    let c = heads * 32;
    let padded = tokens.div_ceil(64) * 64;
    let per_head: Vec<Result<Vec<u8>, ReferenceError>> = (0..heads)
        .into_par_iter()
        .map(|hd| {
            let mut qa = vec![0u8; tokens * 32];
            let mut kp = vec![0u8; padded * 32];
            let mut vt = vec![0u8; 32 * padded];
            for t in 0..tokens {
                let base = t * c + hd * 32;
                qa[t * 32..(t + 1) * 32].copy_from_slice(&q[base..base + 32]);
                kp[t * 32..(t + 1) * 32].copy_from_slice(&k[base..base + 32]);
                for ch in 0..32 {
                    vt[ch * padded + t] = v[base + ch];
                }
            }
            let kb = PackedE4m3::new(&kp, padded, 32, p.exponents).map_err(num)?;
            let mut s = vec![0u16; tokens * padded];
            gemm_e4m3_packed(p, &qa, &kb, tokens, None, None, &mut s).map_err(num)?;
            let mut pw = vec![0u8; tokens * padded];
            let mut r = vec![0u16; tokens];
            for t in 0..tokens {
                let e: Vec<u16> = s[t * padded..(t + 1) * padded]
                    .iter()
                    .map(|&x| exp::exp_vit(x))
                    .collect();
                for (key, &ev) in e.iter().enumerate() {
                    pw[t * padded + key] = e4m3::from_f16(ev);
                }
                let sums: Vec<u16> = e
                    .chunks_exact(64)
                    .map(|b| {
                        let mut blk = [0u16; 64];
                        blk.copy_from_slice(b);
                        softmax::vit_block_sum(&blk)
                    })
                    .collect();
                r[t] = softmax::vit_recip(softmax::vit_total(&sums, (padded - tokens) as u32));
            }
            let vb = PackedE4m3::new(&vt, 32, padded, p.exponents).map_err(num)?;
            let mut o = vec![0u16; tokens * 32];
            gemm_e4m3_packed(p, &pw, &vb, tokens, None, None, &mut o).map_err(num)?;
            Ok((0..tokens * 32)
                .map(|i| softmax::vit_output(o[i], r[i / 32]))
                .collect())
        })
        .collect();
    let mut att = vec![0u8; tokens * c];
    for (hd, rows) in per_head.into_iter().enumerate() {
        let rows = rows?;
        for t in 0..tokens {
            att[t * c + hd * 32..t * c + hd * 32 + 32].copy_from_slice(&rows[t * 32..(t + 1) * 32]);
        }
    }
    Ok(att)
}
