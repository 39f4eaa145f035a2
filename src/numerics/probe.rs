//! The MMA profile probe (placeholder until the full probe set lands): tiles of f16 dot
//! products a device's cooperative matrix computes, their expected answers per profile, and the
//! matcher.

use super::f16::{from_f32_rne, F16};
use super::mma::{chain_f16, Profile};

/// One 16x16 tile: D = C, then per K group of 16 D = A[:, g] B[g, :] + D.
#[derive(Clone, Debug)]
pub struct ProbeTile {
    pub k: usize,
    pub a: Vec<u16>,
    pub b: Vec<u16>,
    pub c: [u16; 256],
}

/// The candidates, in the order they are tried.
pub const CANDIDATES: [Profile; 4] = [Profile::H25, Profile::H25_G8, Profile::F13, Profile::F24];

/// The fixed probe tiles.
pub fn probe_tiles() -> Vec<ProbeTile> {
    let mut tiles = Vec::new();
    // Tie 32768 + 16 with a tiny product 2^t per row t: P13 / P24 / P25 differ.
    let mut a = vec![0u16; 16 * 16];
    let mut b = vec![0u16; 16 * 16];
    for r in 0..16 {
        a[r * 16] = from_f32_rne(128.0);
        a[r * 16 + 1] = from_f32_rne(4.0);
        a[r * 16 + 2] = from_f32_rne(2f32.powi(r as i32 - 15));
    }
    for c in 0..16 {
        b[c] = from_f32_rne(256.0);
        b[16 + c] = from_f32_rne(4.0);
        b[32 + c] = from_f32_rne(1.0);
    }
    tiles.push(ProbeTile { k: 16, a, b, c: [0; 256] });
    // Deterministic mixed values over K = 32, seeded C.
    let mut s = 0x1234_5678u32;
    let mut next = || {
        s ^= s << 13;
        s ^= s >> 17;
        s ^= s << 5;
        s
    };
    let mut a = vec![0u16; 16 * 32];
    let mut b = vec![0u16; 32 * 16];
    let mut c = [0u16; 256];
    for x in a.iter_mut().chain(b.iter_mut()) {
        let v = next();
        *x = (((v >> 16) & 0x8000) | (0x3000 + (v & 0x0FFF))) as u16;
    }
    for x in c.iter_mut() {
        *x = (0x4000 + (next() & 0x03FF)) as u16;
    }
    tiles.push(ProbeTile { k: 32, a, b, c });
    tiles
}

/// The answers `p` gives for `tiles`: each tile's D, row-major, tile after tile.
pub fn expected(tiles: &[ProbeTile], p: &Profile) -> Vec<u16> {
    let mut out = Vec::new();
    for t in tiles {
        for i in 0..16 {
            let row: Vec<F16> = (0..t.k).map(|k| t.a[i * t.k + k]).collect();
            for j in 0..16 {
                let col: Vec<F16> = (0..t.k).map(|k| t.b[k * 16 + j]).collect();
                out.push(chain_f16(p, t.c[i * 16 + j], &row, &col));
            }
        }
    }
    out
}

/// What the probe's answers matched.
#[derive(Clone, Debug)]
pub struct Identification {
    pub matched: Option<Profile>,
    pub mismatches: Vec<(&'static str, usize)>,
    pub reason: String,
}

impl Identification {
    /// No match because the probe could not run.
    pub fn failed(reason: String) -> Identification {
        Identification {
            matched: None,
            mismatches: Vec::new(),
            reason,
        }
    }
}

/// Match `answers` against every candidate.
pub fn identify(tiles: &[ProbeTile], answers: &[u16]) -> Identification {
    let mut mismatches = Vec::new();
    let mut matched = None;
    for p in CANDIDATES {
        let want = expected(tiles, &p);
        let bad = if want.len() == answers.len() {
            want.iter().zip(answers).filter(|(a, b)| a != b).count()
        } else {
            want.len()
        };
        if bad == 0 && matched.is_none() {
            matched = Some(p);
        }
        mismatches.push((p.name, bad));
    }
    let reason = match matched {
        Some(p) => format!("{} exactly ({} answers)", p.name, answers.len()),
        None => format!("no profile matches: {mismatches:?}"),
    };
    Identification {
        matched,
        mismatches,
        reason,
    }
}
