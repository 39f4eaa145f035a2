//! Window attention on the CPU (spec rr-network §3 steps 3-5): per window and head, scores
//! `S = q8(U_q)·q8(U_k)ᵀ + B` (one k32 step seeded with the score bias), the cubic softmax of
//! each row over 96 keys, `O = q8(P)·q8(V)` (three k32 steps from +0), published as `q8(O)` for
//! the window's in-grid queries.

use rayon::prelude::*;

use crate::numerics::f16::F16;
use crate::numerics::rr::{cubic, k32, q8};
use crate::rr::geometry::{mirror, Shift, Size, KEYS, KEY_OFFSETS, QUERIES, WINDOW};

use super::ReferenceError;

/// Head width.
const HW: usize = 32;

/// One (window, head)'s outputs: the byte offset of each in-grid query's head slice and its row.
type WindowRows = Vec<(usize, [u8; HW])>;

fn num(e: k32::K32Error) -> ReferenceError {
    ReferenceError::Numerics(e.to_string())
}

/// Attention of one layer over a grid of `size` tokens: `u`, `v` are E4 `[rows][heads·32]`,
/// `biases[h]` is head h's `[64][96]` score bias. Returns E4 `[rows][heads·32]`.
pub fn window_attention(
    u: &[u8],
    v: &[u8],
    biases: &[Vec<F16>],
    heads: usize,
    size: Size,
    shift: Shift,
) -> Result<Vec<u8>, ReferenceError> {
    let width = heads * HW;
    let wx = (size.w + shift.x).div_ceil(WINDOW) as usize;
    let wy = (size.h + shift.y).div_ceil(WINDOW) as usize;
    let per: Vec<Result<WindowRows, ReferenceError>> = (0..wx * wy * heads)
        .into_par_iter()
        .map(|job| {
            let hd = job % heads;
            let win = job / heads;
            let ox = (win % wx) as i64 * 8 - shift.x as i64;
            let oy = (win / wx) as i64 * 8 - shift.y as i64;
            let token = |k: usize| -> usize {
                let (dx, dy) = KEY_OFFSETS[k];
                let x = mirror(ox + dx as i64, size.w) as usize;
                let y = mirror(oy + dy as i64, size.h) as usize;
                y * size.w as usize + x
            };
            let mut uk = vec![0u8; KEYS * HW];
            let mut vt = vec![0u8; HW * KEYS]; // [channel][key]
            for k in 0..KEYS {
                let base = token(k) * width + hd * HW;
                uk[k * HW..(k + 1) * HW].copy_from_slice(&u[base..base + HW]);
                for c in 0..HW {
                    vt[c * KEYS + k] = v[base + c];
                }
            }
            let kp = k32::Packed::new(&uk, KEYS, HW).map_err(num)?;
            let mut s = vec![0u16; QUERIES * KEYS];
            k32::gemm(&uk[..QUERIES * HW], &kp, QUERIES, Some(&biases[hd]), &mut s).map_err(num)?;
            let mut p = vec![0u8; QUERIES * KEYS];
            for (srow, prow) in s.chunks_exact(KEYS).zip(p.chunks_exact_mut(KEYS)) {
                cubic::softmax_row(srow, prow);
            }
            let vp = k32::Packed::new(&vt, HW, KEYS).map_err(num)?;
            let mut o = vec![0u16; QUERIES * HW];
            k32::gemm(&p, &vp, QUERIES, None, &mut o).map_err(num)?;
            let mut rows = Vec::with_capacity(QUERIES);
            for t in 0..QUERIES {
                let x = ox + (t % 8) as i64;
                let y = oy + (t / 8) as i64;
                if x >= 0 && y >= 0 && x < size.w as i64 && y < size.h as i64 {
                    let mut row = [0u8; HW];
                    for (c, r) in row.iter_mut().enumerate() {
                        *r = q8::from_f16(o[t * HW + c]);
                    }
                    rows.push((
                        (y as usize * size.w as usize + x as usize) * width + hd * HW,
                        row,
                    ));
                }
            }
            Ok(rows)
        })
        .collect();
    let mut out = vec![0u8; size.area() * width];
    for rows in per {
        for (at, row) in rows? {
            out[at..at + HW].copy_from_slice(&row);
        }
    }
    Ok(out)
}
