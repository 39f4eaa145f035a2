//! Spec: h200-tensor-numerics §4-§5. Docs: `docs/numerics.md`, "Profile probe".
//!
//! A tile is one `D = A·B + C` on the 16x16x16 f16 coopmat with an f16 accumulator, chained over K
//! in steps of 16: `D[i][j] = mma::chain_f16(profile, C[i][j], row i of A, column j of B)`. Every
//! one of the 256 outputs of every tile is compared, cross terms included. A route that relies on
//! H25 is offered only when [`identify`] returns `matched == Some(Profile::H25)`.
//!
//! The tiles are built from constants and a fixed integer generator, so the set and the expected
//! answers never change unless this file does. Each tile builder says which profile pairs its
//! cases separate; the tests check those claims and that every pair of candidates differs.

use sha2::{Digest, Sha256};

use super::e4m3;
use super::f16::{self, F16};
use super::mma::{self, Profile};

/// Rows and columns of a tile (M = N = 16).
pub const TILE_DIM: usize = 16;
/// Outputs per tile (16 x 16).
pub const OUTPUTS_PER_TILE: usize = TILE_DIM * TILE_DIM;

/// The f16-accumulator profiles [`identify`] tells apart, in order of preference when reporting
/// the closest one. `H25_F32` is not a candidate: its accumulator is f32, the probe's is f16.
pub const CANDIDATES: [Profile; 4] = [Profile::H25, Profile::H25_G8, Profile::F13, Profile::F24];

/// One probe tile: the device computes `D = C`, then for `s in 0..k/16`:
/// `D = A[:, 16s..16s+16] * B[16s..16s+16, :] + D` (`coopMatMulAdd`), and stores D row-major.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProbeTile {
    /// K: a multiple of 16 in 16..=64.
    pub k: usize,
    /// A, 16 x k, row-major, f16 bits.
    pub a: Vec<u16>,
    /// B, k x 16, row-major, f16 bits.
    pub b: Vec<u16>,
    /// C, 16 x 16, row-major, f16 bits: the initial accumulator.
    pub c: [u16; 256],
}

impl ProbeTile {
    /// Check the shape: `k` a multiple of 16 in 16..=64, `a` and `b` of 16·k elements.
    pub fn validate(&self) -> Result<(), String> {
        if self.k % 16 != 0 || !(16..=64).contains(&self.k) {
            return Err(format!("k = {} is not a multiple of 16 in 16..=64", self.k));
        }
        let want = TILE_DIM * self.k;
        if self.a.len() != want {
            return Err(format!(
                "a has {} elements, 16 x {} needs {want}",
                self.a.len(),
                self.k
            ));
        }
        if self.b.len() != want {
            return Err(format!(
                "b has {} elements, {} x 16 needs {want}",
                self.b.len(),
                self.k
            ));
        }
        Ok(())
    }

    /// The 256 outputs under `p`, row-major, appended to `out`. A tile that fails
    /// [`validate`](Self::validate) gives 256 quiet NaNs (0x7E00); [`identify`] rejects such tiles
    /// before comparing anything.
    fn outputs_into(&self, p: &Profile, out: &mut Vec<u16>) {
        if self.validate().is_err() {
            out.extend(std::iter::repeat_n(f16::QNAN, OUTPUTS_PER_TILE));
            return;
        }
        let k = self.k;
        let cols: Vec<Vec<F16>> = (0..TILE_DIM)
            .map(|j| (0..k).map(|s| self.b[s * TILE_DIM + j]).collect())
            .collect();
        for i in 0..TILE_DIM {
            let row = &self.a[i * k..(i + 1) * k];
            for (j, col) in cols.iter().enumerate() {
                out.push(mma::chain_f16(p, self.c[i * TILE_DIM + j], row, col));
            }
        }
    }
}

/// Every tile's D under `p`, concatenated: tile-major, then row-major within a tile.
pub fn expected(tiles: &[ProbeTile], p: &Profile) -> Vec<u16> {
    let mut out = Vec::with_capacity(tiles.len() * OUTPUTS_PER_TILE);
    for tile in tiles {
        tile.outputs_into(p, &mut out);
    }
    out
}

/// The outcome of comparing a device's answers with every candidate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Identification {
    /// The one candidate that agrees on every output, if exactly one does and the answer has the
    /// probe's length.
    pub matched: Option<Profile>,
    /// For each candidate (in [`CANDIDATES`] order): its name and how many outputs differ. Missing
    /// or extra outputs count as differing. Empty when the tiles are malformed.
    pub mismatches: Vec<(&'static str, usize)>,
    /// One line for logs: the match, or why there is none (closest candidate, its mismatch count,
    /// the first differing output as tile, row, col, got, want).
    pub reason: String,
}

impl Identification {
    /// No identification because the probe could not run (`reason` says why).
    pub fn failed(reason: String) -> Identification {
        Identification {
            matched: None,
            mismatches: Vec::new(),
            reason,
        }
    }
}

/// Compare `answers` (all tiles' D, as [`expected`] lays them out) with each of [`CANDIDATES`].
/// `matched` is the unique candidate with no mismatch. A wrong answer length, malformed tiles or
/// several exact candidates are rejections with a reason, never a panic.
pub fn identify(tiles: &[ProbeTile], answers: &[u16]) -> Identification {
    for (t, tile) in tiles.iter().enumerate() {
        if let Err(e) = tile.validate() {
            return Identification {
                matched: None,
                mismatches: Vec::new(),
                reason: format!("probe tile {t} is malformed: {e}"),
            };
        }
    }
    let sets: Vec<(Profile, Vec<u16>)> = CANDIDATES
        .iter()
        .map(|p| (*p, expected(tiles, p)))
        .collect();
    classify(&sets, answers)
}

/// How one candidate's expected answers compare with the device's.
struct Comparison {
    count: usize,
    /// Index of the first differing output (may be past the end of either vector).
    first: Option<usize>,
}

fn compare(want: &[u16], got: &[u16]) -> Comparison {
    let common = want.len().min(got.len());
    let mut count = want.len().max(got.len()) - common;
    let mut first = None;
    for (i, (w, g)) in want.iter().zip(got).enumerate() {
        if w != g {
            count += 1;
            first.get_or_insert(i);
        }
    }
    if first.is_none() && want.len() != got.len() {
        first = Some(common);
    }
    Comparison { count, first }
}

fn describe(h: Option<&u16>) -> String {
    match h {
        Some(&h) => format!("0x{h:04x} ({})", f16::to_f32(h)),
        None => "nothing".to_string(),
    }
}

/// The matching rule on precomputed expected answers (one vector per candidate).
pub(crate) fn classify(sets: &[(Profile, Vec<u16>)], answers: &[u16]) -> Identification {
    let comparisons: Vec<(Profile, &Vec<u16>, Comparison)> = sets
        .iter()
        .map(|(p, want)| (*p, want, compare(want, answers)))
        .collect();
    let mismatches: Vec<(&'static str, usize)> = comparisons
        .iter()
        .map(|(p, _, c)| (p.name, c.count))
        .collect();
    let n = sets.first().map_or(0, |(_, w)| w.len());
    let length_note = if answers.len() == n {
        String::new()
    } else {
        format!(
            "answers have {} outputs, the probe has {n} ({} tiles of {OUTPUTS_PER_TILE}); ",
            answers.len(),
            n / OUTPUTS_PER_TILE
        )
    };
    // The closest candidate: fewest mismatches, the earlier in CANDIDATES on a tie.
    let Some((closest, want, cmp)) = comparisons
        .iter()
        .min_by_key(|(_, _, c)| c.count)
        .map(|(p, w, c)| (*p, *w, c))
    else {
        return Identification {
            matched: None,
            mismatches,
            reason: "no candidate profiles to compare with".to_string(),
        };
    };
    let exact: Vec<&'static str> = comparisons
        .iter()
        .filter(|(_, _, c)| c.count == 0)
        .map(|(p, _, _)| p.name)
        .collect();
    if exact.len() > 1 {
        return Identification {
            matched: None,
            mismatches,
            reason: format!(
                "ambiguous: {} all agree on every one of the {n} outputs; the tiles do not separate them",
                exact.join(", ")
            ),
        };
    }
    if cmp.count == 0 && length_note.is_empty() {
        let runner_up = comparisons
            .iter()
            .filter(|(p, _, _)| p.name != closest.name)
            .min_by_key(|(_, _, c)| c.count)
            .map(|(p, _, c)| format!("; next closest {} differs in {}", p.name, c.count))
            .unwrap_or_default();
        return Identification {
            matched: Some(closest),
            mismatches,
            reason: format!(
                "matched {}: all {n} outputs agree (sha256 {}){runner_up}",
                closest.name,
                digest(answers)
            ),
        };
    }
    let at = match cmp.first {
        Some(i) => format!(
            ", first at tile {} row {} col {}: got {}, want {}",
            i / OUTPUTS_PER_TILE,
            (i % OUTPUTS_PER_TILE) / TILE_DIM,
            i % TILE_DIM,
            describe(answers.get(i)),
            describe(want.get(i))
        ),
        None => String::new(),
    };
    Identification {
        matched: None,
        mismatches,
        reason: format!(
            "{length_note}no candidate matches; closest {}: {} of {} outputs differ{at}",
            closest.name,
            cmp.count,
            n.max(answers.len())
        ),
    }
}

/// Answers as little-endian bytes (2 per output), the layout of `tests/data/probe/*.bin`.
pub fn answers_to_bytes(answers: &[u16]) -> Vec<u8> {
    answers.iter().flat_map(|h| h.to_le_bytes()).collect()
}

/// Answers from little-endian bytes; an odd byte count is an error.
pub fn answers_from_bytes(bytes: &[u8]) -> Result<Vec<u16>, String> {
    if bytes.len() % 2 != 0 {
        return Err(format!(
            "probe answers: {} bytes is not a whole number of 16-bit outputs",
            bytes.len()
        ));
    }
    Ok(bytes
        .chunks_exact(2)
        .map(|b| u16::from_le_bytes([b[0], b[1]]))
        .collect())
}

/// SHA-256 of the answers' little-endian bytes, lowercase hex (for logs and the docs).
pub fn digest(answers: &[u16]) -> String {
    hex::encode(Sha256::digest(answers_to_bytes(answers)))
}

// ---------------------------------------------------------------------------------------------
// The probe set.

/// f16 bit patterns of the exact values the hand-made tiles use.
mod v {
    pub const X0_125: u16 = 0x3000;
    pub const X1: u16 = 0x3C00;
    pub const X4: u16 = 0x4400;
    pub const X12: u16 = 0x4A00;
    pub const X16: u16 = 0x4C00;
    pub const X128: u16 = 0x5800;
    pub const X255_875: u16 = 0x5BFF;
    pub const X256: u16 = 0x5C00;
    pub const X1024: u16 = 0x6400;
    pub const X2048: u16 = 0x6800;
    pub const X8192: u16 = 0x7000;
    pub const X32768: u16 = 0x7800;
    pub const X32800: u16 = 0x7801;
    pub const X65504: u16 = 0x7BFF;
}
use v::*;

/// `2^e` as f16 bits, `e` in -24..=15 (subnormal below -14).
const fn pow2(e: i32) -> u16 {
    if e >= -14 {
        ((e + 15) as u16) << 10
    } else {
        1u16 << (e + 24)
    }
}

const fn neg(h: u16) -> u16 {
    h ^ 0x8000
}

/// A tile under construction, all operands +0.
struct Build(ProbeTile);

impl Build {
    fn new(k: usize) -> Build {
        Build(ProbeTile {
            k,
            a: vec![0; TILE_DIM * k],
            b: vec![0; TILE_DIM * k],
            c: [0; 256],
        })
    }
    fn a(&mut self, i: usize, s: usize, h: u16) {
        self.0.a[i * self.0.k + s] = h;
    }
    fn b(&mut self, s: usize, j: usize, h: u16) {
        self.0.b[s * TILE_DIM + j] = h;
    }
    fn c(&mut self, i: usize, j: usize, h: u16) {
        self.0.c[i * TILE_DIM + j] = h;
    }
}

/// splitmix64 with a fixed seed: the random-looking tiles are pure integer functions of it.
struct Gen(u64);

impl Gen {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn sign(&mut self) -> u16 {
        if self.next() & 1 == 1 {
            0x8000
        } else {
            0
        }
    }
    /// A half with exponent field in `lo..=hi` (0 = subnormal; a zero mantissa there gives ±0),
    /// random mantissa and sign.
    fn half(&mut self, lo: u16, hi: u16) -> u16 {
        let e = lo + self.below((hi - lo + 1) as u64) as u16;
        (e << 10) | (self.next() as u16 & 0x3FF) | self.sign()
    }
    /// An E4M3 value as f16, exponent field in `lo..=hi` (0 = subnormal), never a NaN code.
    fn e4m3(&mut self, lo: u8, hi: u8) -> u16 {
        let e = lo + self.below((hi - lo + 1) as u64) as u8;
        let mut c = (e << 3) | (self.next() as u8 & 7);
        if c == 0x7F {
            c = 0x7E;
        }
        let sign = if self.next() & 1 == 1 { 0x80 } else { 0 };
        e4m3::to_f16(c | sign)
    }
    /// An initial accumulator: ±0, subnormal, small, ordinary or large.
    fn seed(&mut self) -> u16 {
        match self.below(6) {
            0 => f16::POS_ZERO,
            1 => f16::NEG_ZERO,
            2 => self.half(0, 0),
            3 => self.half(1, 10),
            4 => self.half(25, 29),
            _ => self.half(11, 24),
        }
    }
}

/// Tile 0 — f16 ties decided by one tiny product (h200 §2 truncation probe). Products
/// `32768 + 16` form an exact tie (ulp 32 at 2^15, E = 15); a tiny `2^t`, t = α_i + β_j in
/// -16..=2 (α_i = i - 13 from A, β_j = -(j % 4) from B), breaks it only if it survives the
/// alignment: t >= E - P, so t >= 2 for P13, -9 for P24, -10 for P25. Columns by `j / 4`:
/// 0. one tiny product: P13 vs P24 vs P25 (F13 / F24 / H25 differ).
/// 1. two products of `2^(t-1)`: per-term truncation, two halves are lost where one whole
///    survives; at t = -9 P25 keeps both halves, P24 neither (F24 vs H25).
/// 2. column 0 with every product negated: truncation is toward zero (sign-mirrored results).
/// 3. `32768 + 48 - 2^t`: a tie that RNE rounds up (to 32832) unless the negative tiny survives.
///
/// C is ±0 (alternating), which no nonzero result may depend on.
fn tile_ties() -> ProbeTile {
    let mut t = Build::new(16);
    for i in 0..16 {
        let alpha = i as i32 - 13;
        t.a(i, 0, X128);
        t.a(i, 1, X4);
        t.a(i, 2, pow2(alpha));
        t.a(i, 3, pow2(alpha));
        for j in 0..16 {
            if (i + j) % 2 == 1 {
                t.c(i, j, f16::NEG_ZERO);
            }
        }
    }
    for j in 0..16 {
        let beta = -((j % 4) as i32);
        match j / 4 {
            0 => {
                t.b(0, j, X256);
                t.b(1, j, X4);
                t.b(2, j, pow2(beta));
            }
            1 => {
                t.b(0, j, X256);
                t.b(1, j, X4);
                t.b(2, j, pow2(beta - 1));
                t.b(3, j, pow2(beta - 1));
            }
            2 => {
                t.b(0, j, neg(X256));
                t.b(1, j, neg(X4));
                t.b(2, j, neg(pow2(beta)));
            }
            _ => {
                t.b(0, j, X256);
                t.b(1, j, X12);
                t.b(2, j, neg(pow2(beta)));
            }
        }
    }
    t.0
}

/// Tile 1 — the accumulator C inside the alignment (h200 §2: "C is aligned with the products, not
/// added afterwards"). A row i = `[4, 2^α_i, 4]`, α_i = i - 13; β_j = -(j % 4); t = α_i + β_j.
/// Columns by `j / 4`:
/// 0. C = 32768, products `16 + 2^t`: C sets E = 15, so the tiny term flips the tie from
///    t = -10 under P25 (t = -9 under P24, t = 2 under P13). A model that adds C after the aligned
///    products keeps 2^t and gives 32800 for every t.
/// 1. column 0 mirrored (C = -32768, products negated).
/// 2. C = 2^t is the tiny term, products `32768 + 16`: C is truncated like a product.
/// 3. C = 1024, products `0.5 + 2^(t-5)`: the same cutoffs at another exponent (E = 10).
fn tile_accumulator() -> ProbeTile {
    let mut t = Build::new(16);
    for i in 0..16 {
        t.a(i, 0, X4);
        t.a(i, 1, pow2(i as i32 - 13));
        t.a(i, 2, X4);
    }
    for j in 0..16 {
        let beta = -((j % 4) as i32);
        let variant = j / 4;
        match variant {
            0 => {
                t.b(0, j, X4);
                t.b(1, j, pow2(beta));
            }
            1 => {
                t.b(0, j, neg(X4));
                t.b(1, j, neg(pow2(beta)));
            }
            2 => {
                t.b(0, j, X8192);
                t.b(2, j, X4);
            }
            _ => {
                t.b(0, j, X0_125);
                t.b(1, j, pow2(beta - 5));
            }
        }
        for i in 0..16 {
            let c = match variant {
                0 => X32768,
                1 => neg(X32768),
                2 => pow2(i as i32 - 13 + beta),
                _ => X1024,
            };
            t.c(i, j, c);
        }
    }
    t.0
}

/// Tile 2 — zeros (h200 §4-§5: every zero result is +0). A rows by `i % 4`: all -0; all 2^-14;
/// 2^-14 in k 0..8 only; alternating ±1. B columns by `j % 4`: all -s; all +s; alternating ±s;
/// -s in k 0..8 and +s after, with s = 2^-14, 2^-15, 2^-13, 2^-12 by `j / 4`. C by `i / 4`: -0,
/// +0, -2^-24, +2^-24.
/// * -0 products with C = -0, and exact cancellation, give +0 (all candidates agree; an IEEE
///   signed-zero device would not).
/// * 16 products of -2^-28 sum to -2^-24 in one group of 16 but to -2^-25 per group of 8, which
///   rounds to zero and gives +0 (h200 §4 16x8x8 probe): G16 (H25, F13) vs G8 (H25_G8, F24).
fn tile_zeros() -> ProbeTile {
    let mut t = Build::new(16);
    for i in 0..16 {
        for s in 0..16 {
            let a = match i % 4 {
                0 => f16::NEG_ZERO,
                1 => pow2(-14),
                2 if s < 8 => pow2(-14),
                2 => f16::POS_ZERO,
                _ if s % 2 == 0 => X1,
                _ => neg(X1),
            };
            t.a(i, s, a);
        }
        for j in 0..16 {
            let c = [f16::NEG_ZERO, f16::POS_ZERO, 0x8001, 0x0001][i / 4];
            t.c(i, j, c);
        }
    }
    for j in 0..16 {
        let scale = pow2([-14, -15, -13, -12][j / 4]);
        for s in 0..16 {
            let b = match j % 4 {
                0 => neg(scale),
                1 => scale,
                2 if s % 2 == 0 => scale,
                2 => neg(scale),
                _ if s < 8 => neg(scale),
                _ => scale,
            };
            t.b(s, j, b);
        }
    }
    t.0
}

/// Tile 3 — group boundaries in a K = 32 chain (h200 §4: G = MMA K, f16 RNE after every group).
/// Rows 0..8 form the tie `32768 + 16` at k = 0, 1; rows 8..16 at k = 0, 16 (the 16 in the second
/// step). A tiny `2^t` (t = j - 12) sits at k = 2, 7, 8, 15, 17, 23, 24, 31 by `i % 8`.
/// * Rows 0..8: at k = 8 or 15 the tiny term is in the tie's group under G16 but in the next
///   group under G8, where it meets the already rounded 32768 and is lost (G8 vs G16); at
///   k >= 17 it is lost under both (the 16x16x16 accumulator is rounded after each step).
/// * Rows 8..16: the tie is formed in k 16..32 (G16) or 16..24 (G8); a tiny term at k = 24 or 31
///   separates G8 from G16 again, at k < 16 it is lost under both.
fn tile_group_boundaries() -> ProbeTile {
    const POS: [usize; 8] = [2, 7, 8, 15, 17, 23, 24, 31];
    let mut t = Build::new(32);
    for i in 0..16 {
        t.a(i, 0, X128);
        t.a(i, if i < 8 { 1 } else { 16 }, X4);
        t.a(i, POS[i % 8], pow2(-6));
    }
    for j in 0..16 {
        for s in 0..32 {
            let b = match s {
                0 => X256,
                1 | 16 => X4,
                _ => pow2(j as i32 - 6),
            };
            t.b(s, j, b);
        }
    }
    t.0
}

/// Tile 4 — cancellation and rounding across groups in a K = 64 chain (four 16x16x16 steps).
/// Rows 0..8 place `2048, 1, -2048` at three k; `2048 + 1` is an f16 tie (ulp 2) that rounds to
/// 2048 whenever a group ends between the `1` and the `-2048`:
/// rows 0 and 5 give 1 under G16 and +0 under G8; rows 2 and 6 give +0 under both (an exact dot
/// product would give 1); the others give 1 under both. Rows 8..16: `32768 + 16 + 2^-10` with the
/// three terms at varying k (one group, split at 8, split at 16, ...): P24 vs P25 and G8 vs G16.
/// B is ±2^-(j % 4), the sign by `j / 4`: all +, all −, negated from k = 32, negated at odd k
/// (these break the cancellations in varied ways).
fn tile_chain64() -> ProbeTile {
    const CANCEL: [[usize; 3]; 8] = [
        [0, 1, 8],
        [0, 8, 9],
        [0, 1, 16],
        [15, 16, 17],
        [7, 8, 9],
        [6, 7, 8],
        [0, 31, 32],
        [0, 32, 33],
    ];
    const TIE: [[usize; 2]; 8] = [
        [1, 2],
        [1, 8],
        [8, 9],
        [15, 16],
        [16, 17],
        [31, 32],
        [47, 48],
        [62, 63],
    ];
    let mut t = Build::new(64);
    for i in 0..8 {
        let [p, q, r] = CANCEL[i];
        t.a(i, p, X2048);
        t.a(i, q, X1);
        t.a(i, r, neg(X2048));
        let [p, q] = TIE[i];
        t.a(8 + i, 0, X32768);
        t.a(8 + i, p, X16);
        t.a(8 + i, q, pow2(-10));
    }
    for j in 0..16 {
        for s in 0..64 {
            let negate = match j / 4 {
                0 => false,
                1 => true,
                2 => s >= 32,
                _ => s % 2 == 1,
            };
            let b = pow2(-((j % 4) as i32));
            t.b(s, j, if negate { neg(b) } else { b });
        }
    }
    t.0
}

/// Tiles 5 and 6 — E4M3-valued f16 inputs (h200 §4: they behave like any f16 input; F13 matches
/// 78.6 %, F24 68.7 %). Tile 5: all codes (subnormals and 448 included), K = 32. Tile 6: a limited
/// range (exponent fields 5..=9) with many close magnitudes and cancellations, K = 64.
fn tile_e4m3(seed: u64, k: usize, lo: u8, hi: u8) -> ProbeTile {
    let mut g = Gen(seed);
    let mut t = Build::new(k);
    for i in 0..16 {
        for s in 0..k {
            let h = g.e4m3(lo, hi);
            t.a(i, s, h);
        }
    }
    for s in 0..k {
        for j in 0..16 {
            let h = g.e4m3(lo, hi);
            t.b(s, j, h);
        }
    }
    for i in 0..16 {
        for j in 0..16 {
            let h = g.seed();
            t.c(i, j, h);
        }
    }
    t.0
}

/// Tile 7 — random f16 with full 11-bit significands (exponent fields 8..=22, 2^-7..2^8): the
/// general case where P13, P24 and P25 and both group sizes disagree often (h200 §4: F13 65 %,
/// F24 64 %).
fn tile_f16_random() -> ProbeTile {
    let mut g = Gen(0x7072_6F62_6537);
    let mut t = Build::new(16);
    for i in 0..16 {
        for s in 0..16 {
            let h = g.half(8, 22);
            t.a(i, s, h);
        }
    }
    for s in 0..16 {
        for j in 0..16 {
            let h = g.half(8, 22);
            t.b(s, j, h);
        }
    }
    for i in 0..16 {
        for j in 0..16 {
            let h = g.seed();
            t.c(i, j, h);
        }
    }
    t.0
}

/// Tile 8 — subnormal f16 inputs: A alternates subnormals (exponent field 0) and tiny normals,
/// B spans 2^-7..2^10, C is ±0, subnormal or small. Products fall near the bottom of the f16 range,
/// so results are subnormal, zero or small, with truncation at P13 visible; f16 subnormals count
/// exponent -14 under every candidate.
fn tile_subnormal() -> ProbeTile {
    let mut g = Gen(0x0053_7562_6E6F_726D);
    let mut t = Build::new(16);
    for i in 0..16 {
        for s in 0..16 {
            let h = if (i + s) % 2 == 0 {
                g.half(0, 0)
            } else {
                g.half(1, 6)
            };
            t.a(i, s, h);
        }
    }
    for s in 0..16 {
        for j in 0..16 {
            let h = g.half(8, 25);
            t.b(s, j, h);
        }
    }
    for i in 0..16 {
        for j in 0..16 {
            let h = match g.below(4) {
                0 => f16::NEG_ZERO,
                1 => f16::POS_ZERO,
                2 => g.half(0, 0),
                _ => g.half(1, 8),
            };
            t.c(i, j, h);
        }
    }
    t.0
}

/// Tile 9 — overflow (h200 §4-§7: f16 overflow gives ±inf, which passes through later groups).
/// A row i = `255.875` at k = 0 and 16, `4` at k = 1, `2^α_i` at k = 2 (α_i = i - 13);
/// β_j = -(j % 4). Columns by `j / 4`:
/// 0. `65504 + 16 - 2^t`: the tie 65520 rounds to even, 2^16, i.e. +inf, unless the negative tiny
///    term survives (t >= -10 P25, -9 P24, 2 P13) and the result stays 65504.
/// 1. column 0 mirrored (-65504 / -inf).
/// 2. `65504 + 16 + 2^t` overflows in the first step; the second step adds -65504 to +inf, which
///    stays +inf (all candidates).
/// 3. C = -65504 with products `65504 + 16 + 2^t`: cancellation of a large C leaves `16 + 2^t`,
///    where 2^t survives from t = -10 (P25) but only from t = 2 (P13).
fn tile_overflow() -> ProbeTile {
    let mut t = Build::new(32);
    for i in 0..16 {
        t.a(i, 0, X255_875);
        t.a(i, 1, X4);
        t.a(i, 2, pow2(i as i32 - 13));
        t.a(i, 16, X255_875);
    }
    for j in 0..16 {
        let tiny = pow2(-((j % 4) as i32));
        let variant = j / 4;
        match variant {
            0 => {
                t.b(0, j, X256);
                t.b(1, j, X4);
                t.b(2, j, neg(tiny));
            }
            1 => {
                t.b(0, j, neg(X256));
                t.b(1, j, neg(X4));
                t.b(2, j, tiny);
            }
            2 => {
                t.b(0, j, X256);
                t.b(1, j, X4);
                t.b(2, j, tiny);
                t.b(16, j, neg(X256));
            }
            _ => {
                t.b(0, j, X256);
                t.b(1, j, X4);
                t.b(2, j, tiny);
            }
        }
        if variant == 3 {
            for i in 0..16 {
                t.c(i, j, neg(X65504));
            }
        }
    }
    t.0
}

/// Tile 10 — one large product among many small ones in every group (h200 §1 case type): A row i
/// has a large value (2^6..2^10) at k ≡ i (mod 16) and small ones (2^-13..2^-7) elsewhere, B is
/// 2^-3..2^3, K = 32. Each group's E comes from its large product and every small term is cut at
/// E - P: the P13 cut is visible in the result (F13 vs H25), and under G8 half the groups have no
/// large product (G8 vs G16). The P24/P25 difference is one bit far below the f16 result and
/// practically never shows in such data; tiles 0, 1, 3, 4 and 9 are built for it. C = 32800 in a
/// diagonal band gives accumulator-dominated groups.
fn tile_one_large() -> ProbeTile {
    let mut g = Gen(0x4C61_7267_6531);
    let mut t = Build::new(32);
    for i in 0..16 {
        for s in 0..32 {
            let h = if s % 16 == i {
                g.half(21, 25)
            } else {
                g.half(2, 8)
            };
            t.a(i, s, h);
        }
    }
    for s in 0..32 {
        for j in 0..16 {
            let h = g.half(12, 18);
            t.b(s, j, h);
        }
    }
    for i in 0..16 {
        for j in 0..16 {
            let h = if (i + 16 - j) % 16 < 2 {
                X32800
            } else {
                g.seed()
            };
            t.c(i, j, h);
        }
    }
    t.0
}

/// The fixed probe set (11 tiles, 2 816 outputs). See the tile builders for what each case
/// separates, and `docs/numerics.md` for a summary and the expected digests.
pub fn probe_tiles() -> Vec<ProbeTile> {
    vec![
        tile_ties(),
        tile_accumulator(),
        tile_zeros(),
        tile_group_boundaries(),
        tile_chain64(),
        tile_e4m3(0x4534_4D33_0001, 32, 0, 15),
        tile_e4m3(0x4534_4D33_0002, 64, 5, 9),
        tile_f16_random(),
        tile_subnormal(),
        tile_overflow(),
        tile_one_large(),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::numerics::mma::{Acc, Parts, Val};
    use std::path::{Path, PathBuf};

    /// Output index of (tile, row, col).
    fn at(tile: usize, row: usize, col: usize) -> usize {
        tile * OUTPUTS_PER_TILE + row * TILE_DIM + col
    }

    fn sets(tiles: &[ProbeTile]) -> Vec<(Profile, Vec<u16>)> {
        CANDIDATES
            .iter()
            .map(|p| (*p, expected(tiles, p)))
            .collect()
    }

    fn differing(a: &[u16], b: &[u16]) -> usize {
        assert_eq!(a.len(), b.len());
        a.iter().zip(b).filter(|(x, y)| x != y).count()
    }

    /// The candidate with the fewest mismatches (the first on a tie), as `identify` reports it.
    fn closest(id: &Identification) -> &'static str {
        id.mismatches
            .iter()
            .min_by_key(|(_, n)| *n)
            .map(|(name, _)| *name)
            .unwrap()
    }

    fn data_dir() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/probe")
    }

    /// Every row of A and column of B of a tile as f16 operand pairs (for the local variant models).
    fn pairs(tile: &ProbeTile, i: usize, j: usize) -> Vec<(Val, Val)> {
        (0..tile.k)
            .map(|s| {
                (
                    mma::f16_val(tile.a[i * tile.k + s]),
                    mma::f16_val(tile.b[s * TILE_DIM + j]),
                )
            })
            .collect()
    }

    /// All tiles' D under a local per-(tile, i, j) model.
    fn model(tiles: &[ProbeTile], f: impl Fn(u16, &[(Val, Val)]) -> u16) -> Vec<u16> {
        let mut out = Vec::new();
        for tile in tiles {
            for i in 0..TILE_DIM {
                for j in 0..TILE_DIM {
                    out.push(f(tile.c[i * TILE_DIM + j], &pairs(tile, i, j)));
                }
            }
        }
        out
    }

    /// `v * 2^scale` rounded toward zero to f16 (saturating at ±65504), zero -> +0.
    fn round_fixed_rz(v: i128, scale: i32) -> u16 {
        if v == 0 {
            return f16::POS_ZERO;
        }
        let mag = v.unsigned_abs();
        let ue = 127 - mag.leading_zeros() as i32 + scale;
        let lsb = if ue >= -14 { ue - 10 } else { -24 };
        let drop = lsb - scale;
        let kept = if drop <= 0 {
            mag
        } else if drop >= 128 {
            0
        } else {
            (mag >> drop) << drop
        };
        if kept == 0 {
            return f16::POS_ZERO;
        }
        let signed = if v < 0 { -(kept as i128) } else { kept as i128 };
        let r = f16::round_fixed_rne(signed, scale); // exact: kept has at most 11 significant bits
        if f16::is_inf(r) {
            (r & 0x8000) | X65504
        } else {
            r
        }
    }

    /// An f16 accumulator rounded toward zero after each group ("RZ per group", h200 §4: 25.8 %).
    #[derive(Clone, Copy)]
    struct RzF16(u16);

    impl Acc for RzF16 {
        fn val(self) -> Val {
            mma::f16_val(self.0)
        }
        fn round(sum: i128, scale: i32) -> Self {
            RzF16(round_fixed_rz(sum, scale))
        }
        fn qnan() -> Self {
            RzF16(f16::QNAN)
        }
        fn inf(neg: bool) -> Self {
            RzF16(if neg { f16::NEG_INF } else { f16::POS_INF })
        }
    }

    fn rz_per_group(c: u16, pairs: &[(Val, Val)]) -> u16 {
        pairs
            .chunks(16)
            .fold(RzF16(c), |acc, g| mma::group_vals(&Profile::H25, acc, g))
            .0
    }

    fn signed_aligned(q: &Parts, frac_bits: i32, e: i32) -> i128 {
        let shift = q.lsb + frac_bits - e;
        let mag = if shift >= 0 {
            (q.sig as i128) << shift
        } else if shift <= -64 {
            0
        } else {
            (q.sig >> -shift) as i128
        };
        if q.neg {
            -mag
        } else {
            mag
        }
    }

    /// H25 with the accumulator added after the aligned product sum ("C late", h200 §2/§4): E and
    /// the truncation come from the products alone, then `acc + sum` is rounded once.
    fn c_late_group(acc: u16, pairs: &[(Val, Val)]) -> u16 {
        let acc_v = mma::f16_val(acc);
        if matches!(acc_v, Val::Inf { .. } | Val::NaN) {
            return acc;
        }
        let products: Vec<Parts> = pairs
            .iter()
            .filter_map(|&(a, b)| match (a, b) {
                (Val::Finite(p), Val::Finite(q)) => Some(Parts {
                    neg: p.neg != q.neg,
                    sig: p.sig * q.sig,
                    lsb: p.lsb + q.lsb,
                    exp: p.exp + q.exp,
                }),
                (Val::Zero, _) | (_, Val::Zero) => None,
                _ => panic!("the probe has no inf/NaN operands"),
            })
            .collect();
        let Some(e) = products.iter().map(|q| q.exp).max() else {
            return if f16::is_zero(acc) {
                f16::POS_ZERO
            } else {
                acc
            };
        };
        let scale = e - 25;
        let sum: i128 = products.iter().map(|q| signed_aligned(q, 25, e)).sum();
        let (total, sc) = match acc_v {
            Val::Finite(a) => {
                let s = scale.min(a.lsb);
                let a_int = if a.neg {
                    -(a.sig as i128)
                } else {
                    a.sig as i128
                };
                ((sum << (scale - s)) + (a_int << (a.lsb - s)), s)
            }
            _ => (sum, scale),
        };
        let r = f16::round_fixed_rne(total, sc);
        if f16::is_zero(r) {
            f16::POS_ZERO
        } else {
            r
        }
    }

    fn c_late(c: u16, pairs: &[(Val, Val)]) -> u16 {
        pairs.chunks(16).fold(c, c_late_group)
    }

    #[test]
    fn constants_are_the_values_named() {
        let named = [
            (X0_125, 0.125),
            (X1, 1.0),
            (X4, 4.0),
            (X12, 12.0),
            (X16, 16.0),
            (X128, 128.0),
            (X255_875, 255.875),
            (X256, 256.0),
            (X1024, 1024.0),
            (X2048, 2048.0),
            (X8192, 8192.0),
            (X32768, 32768.0),
            (X32800, 32800.0),
            (X65504, 65504.0),
        ];
        for (h, x) in named {
            assert_eq!(f16::to_f32(h), x, "0x{h:04x}");
        }
        for e in -24..=15 {
            assert_eq!(f16::to_f32(pow2(e)), 2f32.powi(e), "2^{e}");
        }
    }

    #[test]
    fn tiles_are_well_formed_and_fixed() {
        let tiles = probe_tiles();
        assert!(tiles.len() <= 16);
        assert_eq!(tiles, probe_tiles(), "the set is deterministic");
        for (t, tile) in tiles.iter().enumerate() {
            tile.validate().unwrap();
            let inputs = tile.a.iter().chain(&tile.b).chain(&tile.c);
            assert!(
                inputs.clone().all(|&h| !f16::is_nonfinite(h)),
                "tile {t}: inputs are finite (inf/NaN inputs were never measured)"
            );
        }
        for p in CANDIDATES {
            let e = expected(&tiles, &p);
            assert_eq!(e.len(), tiles.len() * OUTPUTS_PER_TILE);
            assert!(
                e.iter().all(|&h| !f16::is_nan(h)),
                "{}: no NaN results",
                p.name
            );
        }
        // The overflow cases do produce infinities.
        let h25 = expected(&tiles, &Profile::H25);
        assert!(h25.contains(&f16::POS_INF));
        assert!(h25.contains(&f16::NEG_INF));
    }

    #[test]
    fn probe_separates_every_pair_of_candidates() {
        let tiles = probe_tiles();
        let sets = sets(&tiles);
        for (p, ep) in &sets {
            for (q, eq) in &sets {
                if p.name == q.name {
                    continue;
                }
                let n = differing(ep, eq);
                eprintln!(
                    "{} vs {}: {n} of {} outputs differ",
                    p.name,
                    q.name,
                    ep.len()
                );
                assert!(n >= 8, "{} vs {}: only {n} outputs differ", p.name, q.name);
                assert_ne!(expected(&tiles, p), expected(&tiles, q));
            }
        }
        for (p, e) in &sets {
            eprintln!("digest {}: {}", p.name, digest(e));
        }
    }

    #[test]
    fn identify_matches_each_candidate() {
        let tiles = probe_tiles();
        for p in CANDIDATES {
            let id = identify(&tiles, &expected(&tiles, &p));
            assert_eq!(id.matched, Some(p), "{}", id.reason);
            assert!(
                id.reason.starts_with(&format!("matched {}", p.name)),
                "{}",
                id.reason
            );
            let zero: Vec<_> = id.mismatches.iter().filter(|(_, n)| *n == 0).collect();
            assert_eq!(zero, [&(p.name, 0)]);
            eprintln!("{}", id.reason);
        }
    }

    /// The tiles' comments, checked: each tile separates the pairs it claims to.
    #[test]
    fn each_tile_separates_what_it_claims() {
        const H25: &str = "h25";
        const G8: &str = "h25-g8";
        const F13: &str = "f13";
        const F24: &str = "f24";
        let claims: [(usize, &[(&str, &str)]); 11] = [
            (0, &[(F13, H25), (F24, H25), (F13, F24)]),
            (1, &[(F13, H25), (F24, H25)]),
            (2, &[(H25, G8), (F13, F24)]),
            (3, &[(H25, G8), (F13, F24), (F24, G8)]),
            (4, &[(H25, G8), (F24, G8)]),
            (5, &[(F13, H25), (F24, H25), (G8, H25)]),
            (6, &[(F13, H25), (F24, H25), (G8, H25)]),
            (7, &[(F13, H25), (F24, H25), (G8, H25)]),
            (8, &[(F13, H25)]),
            (9, &[(F13, H25), (F24, H25)]),
            (10, &[(F13, H25), (F24, H25), (G8, H25)]),
        ];
        let tiles = probe_tiles();
        assert_eq!(claims.len(), tiles.len());
        let sets = sets(&tiles);
        let of = |name: &str| &sets.iter().find(|(p, _)| p.name == name).unwrap().1;
        for (t, pairs) in claims {
            let range = t * OUTPUTS_PER_TILE..(t + 1) * OUTPUTS_PER_TILE;
            let line: Vec<String> = sets
                .iter()
                .map(|(p, e)| {
                    let n = differing(&of(H25)[range.clone()], &e[range.clone()]);
                    format!("{} {n}", p.name)
                })
                .collect();
            eprintln!("tile {t}: outputs differing from h25: {}", line.join(", "));
            for (p, q) in pairs {
                let n = differing(&of(p)[range.clone()], &of(q)[range.clone()]);
                assert!(n > 0, "tile {t} does not separate {p} from {q}");
            }
        }
    }

    /// Single outputs against the numbers in h200-tensor-numerics §2/§4 (truncation probe, signed
    /// zeros, G8) and the tile comments.
    #[test]
    fn spot_checks_follow_the_spec() {
        let tiles = probe_tiles();
        let sets = sets(&tiles);
        let of = |name: &str| &sets.iter().find(|(p, _)| p.name == name).unwrap().1;
        let (h25, g8, f13, f24) = (of("h25"), of("h25-g8"), of("f13"), of("f24"));
        // Tile 0, one tiny product 2^t, t = i - 13 in column 0: H25 flips from t = -10, F24 from
        // -9, F13 at 2.
        assert_eq!(h25[at(0, 2, 0)], X32768);
        assert_eq!(h25[at(0, 3, 0)], X32800);
        assert_eq!(f24[at(0, 3, 0)], X32768);
        assert_eq!(f24[at(0, 4, 0)], X32800);
        assert_eq!(f13[at(0, 14, 0)], X32768);
        assert_eq!(f13[at(0, 15, 0)], X32800);
        // Two halves: lost at t = -10, kept at t = -9 (H25); F24 loses them at -9.
        assert_eq!(h25[at(0, 3, 4)], X32768);
        assert_eq!(h25[at(0, 4, 4)], X32800);
        assert_eq!(f24[at(0, 4, 4)], X32768);
        // Mirrored, and the tie that rounds up unless -2^t survives.
        assert_eq!(h25[at(0, 3, 8)], neg(X32800));
        assert_eq!(h25[at(0, 2, 8)], neg(X32768));
        assert_eq!(h25[at(0, 3, 12)], X32800);
        assert_eq!(h25[at(0, 2, 12)], 0x7802); // 32832
                                               // Tile 1: C = 32768 aligned with the products, and C = 2^t as the tiny term.
        for col in [0, 8] {
            assert_eq!(h25[at(1, 3, col)], X32800);
            assert_eq!(h25[at(1, 2, col)], X32768);
        }
        // Tile 2: -0 products with C = -0 give +0; 16 x -2^-28 is -2^-24 under G16, +0 under G8.
        for s in [h25, g8, f13, f24] {
            assert_eq!(s[at(2, 0, 0)], f16::POS_ZERO);
            assert_eq!(s[at(2, 1, 2)], f16::POS_ZERO);
        }
        assert_eq!(h25[at(2, 1, 0)], 0x8001);
        assert_eq!(f13[at(2, 1, 0)], 0x8001);
        assert_eq!(g8[at(2, 1, 0)], f16::POS_ZERO);
        assert_eq!(f24[at(2, 1, 0)], f16::POS_ZERO);
        // Tile 3: tiny at k = 8 (t = -10) counts under G16 only; at k = 17 under neither; rows 8..16
        // (tie formed in the second step) with the tiny at k = 24 again under G16 only.
        assert_eq!(h25[at(3, 0, 2)], X32800);
        assert_eq!(g8[at(3, 0, 2)], X32800);
        assert_eq!(h25[at(3, 2, 2)], X32800);
        assert_eq!(g8[at(3, 2, 2)], X32768);
        assert_eq!(h25[at(3, 4, 2)], X32768);
        assert_eq!(h25[at(3, 14, 2)], X32800);
        assert_eq!(g8[at(3, 14, 2)], X32768);
        // Tile 4: 2048 + 1 - 2048.
        assert_eq!(h25[at(4, 0, 0)], X1);
        assert_eq!(g8[at(4, 0, 0)], f16::POS_ZERO);
        assert_eq!(h25[at(4, 2, 0)], f16::POS_ZERO);
        assert_eq!(g8[at(4, 2, 0)], f16::POS_ZERO);
        assert_eq!(h25[at(4, 5, 0)], X1);
        assert_eq!(g8[at(4, 5, 0)], f16::POS_ZERO);
        // Tile 9: 65520 - 2^t stays finite iff 2^t survives; overflow passes through step 2.
        assert_eq!(h25[at(9, 3, 0)], X65504);
        assert_eq!(h25[at(9, 2, 0)], f16::POS_INF);
        assert_eq!(f13[at(9, 3, 0)], f16::POS_INF);
        assert_eq!(h25[at(9, 3, 4)], neg(X65504));
        assert_eq!(h25[at(9, 2, 4)], f16::NEG_INF);
        for s in [h25, g8, f13, f24] {
            assert_eq!(s[at(9, 0, 8)], f16::POS_INF);
        }
    }

    #[test]
    fn local_variant_models_behave_as_described() {
        let vals = |a: &[u16], b: &[u16]| -> Vec<(Val, Val)> {
            a.iter()
                .zip(b)
                .map(|(&x, &y)| (mma::f16_val(x), mma::f16_val(y)))
                .collect()
        };
        // 32768 + 16 + 2^-8 from +0: H25 keeps 2^-8 (t >= -10) and rounds up; C late is the same
        // on a zero accumulator; RZ truncates to 32768.
        let (a, b) = ([X128, X4, pow2(-8)], [X256, X4, X1]);
        assert_eq!(mma::chain_f16(&Profile::H25, 0, &a, &b), X32800);
        assert_eq!(c_late(0, &vals(&a, &b)), X32800);
        assert_eq!(rz_per_group(0, &vals(&a, &b)), X32768);
        // C = 32768 with products 16 + 2^-12: H25 cuts 2^-12 at E = 15, C late keeps it.
        let (a, b) = ([X4, pow2(-12)], [X4, X1]);
        assert_eq!(mma::chain_f16(&Profile::H25, X32768, &a, &b), X32768);
        assert_eq!(c_late(X32768, &vals(&a, &b)), X32800);
        // RZ saturates instead of overflowing: 65504 + 16 + 8.
        let (a, b) = ([X255_875, X4, X4], [X256, X4, pow2(1)]);
        assert_eq!(mma::chain_f16(&Profile::H25, 0, &a, &b), f16::POS_INF);
        assert_eq!(rz_per_group(0, &vals(&a, &b)), X65504);
    }

    #[test]
    fn accepts_h25_answers() {
        let tiles = probe_tiles();
        let id = identify(&tiles, &expected(&tiles, &Profile::H25));
        assert_eq!(id.matched, Some(Profile::H25), "{}", id.reason);
        assert!(id.reason.contains("matched h25"), "{}", id.reason);
    }

    /// A rejection for the H25 route: not matched to H25, and the reason names the closest
    /// candidate (or the match, when the answers are another candidate's).
    fn assert_rejected(id: &Identification) {
        assert_ne!(id.matched, Some(Profile::H25), "{}", id.reason);
        let name = id.matched.map_or_else(|| closest(id), |p| p.name);
        assert!(
            id.reason.contains(&format!("closest {name}:"))
                || id.reason.contains(&format!("matched {name}:")),
            "{}",
            id.reason
        );
    }

    #[test]
    fn rejects_f13_answers() {
        let tiles = probe_tiles();
        let id = identify(&tiles, &expected(&tiles, &Profile::F13));
        assert_rejected(&id);
        assert_eq!(id.matched, Some(Profile::F13));
        eprintln!("{}", id.reason);
    }

    #[test]
    fn rejects_h25_with_the_accumulator_added_late() {
        let tiles = probe_tiles();
        let answers = model(&tiles, c_late);
        let h25 = expected(&tiles, &Profile::H25);
        assert_eq!(
            answers[at(1, 2, 0)],
            X32800,
            "C late keeps 2^-11 next to C = 32768"
        );
        let id = identify(&tiles, &answers);
        assert_eq!(id.matched, None, "{}", id.reason);
        assert_rejected(&id);
        assert_eq!(closest(&id), "h25");
        eprintln!(
            "c late: {} outputs differ from h25; {}",
            differing(&answers, &h25),
            id.reason
        );
    }

    #[test]
    fn rejects_rz_per_group_answers() {
        let tiles = probe_tiles();
        let answers = model(&tiles, rz_per_group);
        let id = identify(&tiles, &answers);
        assert_eq!(id.matched, None, "{}", id.reason);
        assert_rejected(&id);
        eprintln!(
            "rz per group: {} outputs differ from h25; {}",
            differing(&answers, &expected(&tiles, &Profile::H25)),
            id.reason
        );
    }

    #[test]
    fn rejects_any_single_low_bit_flip() {
        let tiles = probe_tiles();
        let sets = sets(&tiles);
        let h25 = &sets[0].1;
        for i in 0..h25.len() {
            let mut answers = h25.clone();
            answers[i] ^= 1;
            let id = classify(&sets, &answers);
            assert_eq!(id.matched, None, "output {i}: {}", id.reason);
            assert_eq!(id.mismatches[0], ("h25", 1), "output {i}");
            assert!(id.mismatches[1..].iter().all(|(_, n)| *n > 1));
            let (t, r, c) = (i / 256, (i % 256) / 16, i % 16);
            let want = format!(
                "closest h25: 1 of {} outputs differ, first at tile {t} row {r} col {c}:",
                h25.len()
            );
            assert!(id.reason.contains(&want), "{}", id.reason);
        }
    }

    #[test]
    fn rejects_wrong_answer_lengths() {
        let tiles = probe_tiles();
        let h25 = expected(&tiles, &Profile::H25);
        let n = h25.len();
        let short = identify(&tiles, &h25[..n - 1]);
        assert_eq!(short.matched, None);
        assert_rejected(&short);
        assert_eq!(short.mismatches[0], ("h25", 1));
        assert!(short.reason.starts_with(&format!(
            "answers have {} outputs, the probe has {n}",
            n - 1
        )));
        assert!(short.reason.contains("got nothing"), "{}", short.reason);
        let mut long = h25.clone();
        long.push(0);
        let long = identify(&tiles, &long);
        assert_eq!(long.matched, None);
        assert_rejected(&long);
        assert_eq!(long.mismatches[0], ("h25", 1));
        let empty = identify(&tiles, &[]);
        assert_eq!(empty.matched, None);
        assert_rejected(&empty);
        assert!(empty.mismatches.iter().all(|&(_, m)| m == n));
        eprintln!("{}\n{}\n{}", short.reason, long.reason, empty.reason);
    }

    #[test]
    fn rejects_all_zero_answers() {
        let tiles = probe_tiles();
        let zeros = vec![0u16; tiles.len() * OUTPUTS_PER_TILE];
        let id = identify(&tiles, &zeros);
        assert_eq!(id.matched, None);
        assert_rejected(&id);
        eprintln!("{}", id.reason);
    }

    #[test]
    fn malformed_tiles_are_rejected_without_panicking() {
        let mut tiles = probe_tiles();
        let answers = expected(&tiles, &Profile::H25);
        tiles[3].a.pop();
        let id = identify(&tiles, &answers);
        assert_eq!(id.matched, None);
        assert!(
            id.reason.starts_with("probe tile 3 is malformed"),
            "{}",
            id.reason
        );
        let bad = expected(&tiles, &Profile::H25);
        assert!(bad[at(3, 0, 0)..at(4, 0, 0)]
            .iter()
            .all(|&h| h == f16::QNAN));
        tiles[3].a.push(0);
        tiles[3].k = 20;
        assert!(tiles[3].validate().is_err());
        assert!(identify(&tiles, &answers).matched.is_none());
        tiles[3].k = 128;
        assert!(identify(&tiles, &answers).matched.is_none());
        // No tiles: nothing separates the candidates.
        let id = identify(&[], &[]);
        assert_eq!(id.matched, None);
        assert!(id.reason.starts_with("ambiguous"), "{}", id.reason);
    }

    #[test]
    fn bytes_and_digest() {
        let answers = [0x0000, 0x7800, 0xFC00, 0x1234];
        let bytes = answers_to_bytes(&answers);
        assert_eq!(bytes, [0x00, 0x00, 0x00, 0x78, 0x00, 0xFC, 0x34, 0x12]);
        assert_eq!(answers_from_bytes(&bytes).unwrap(), answers);
        assert!(answers_from_bytes(&bytes[..3]).is_err());
        assert_eq!(
            digest(&[]),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        assert_eq!(digest(&answers).len(), 64);
    }

    /// Output flipped in `synthetic-reject-bitflip.bin`: tile 5 (E4M3 values), row 3, col 7.
    const BITFLIP_AT: (usize, usize, usize) = (5, 3, 7);

    fn synthetic_files() -> Vec<(&'static str, Vec<u16>)> {
        let tiles = probe_tiles();
        let mut flipped = expected(&tiles, &Profile::H25);
        let (t, r, c) = BITFLIP_AT;
        flipped[at(t, r, c)] ^= 1;
        vec![
            ("synthetic-reject-f13.bin", expected(&tiles, &Profile::F13)),
            ("synthetic-reject-bitflip.bin", flipped),
        ]
    }

    /// The committed synthetic answer files equal what the probe gives today. After changing the
    /// tiles, regenerate them: `OPENNGX_WRITE_PROBE_DATA=1 cargo test --lib numerics::probe`.
    #[test]
    fn synthetic_answer_files_are_current() {
        let dir = data_dir();
        let write = std::env::var_os("OPENNGX_WRITE_PROBE_DATA").is_some();
        for (name, answers) in synthetic_files() {
            let path = dir.join(name);
            let bytes = answers_to_bytes(&answers);
            if write {
                std::fs::create_dir_all(&dir).unwrap();
                std::fs::write(&path, &bytes).unwrap();
                continue;
            }
            let got = std::fs::read(&path).unwrap_or_else(|e| {
                panic!(
                    "{}: {e}; write it with OPENNGX_WRITE_PROBE_DATA=1",
                    path.display()
                )
            });
            assert!(
                got == bytes,
                "{} is stale; rewrite it with OPENNGX_WRITE_PROBE_DATA=1",
                path.display()
            );
        }
    }

    /// Recorded answers without an accept/reject tag in their name and the profile they must
    /// match: the H200's 16x16x16 f16 coopmat is H25(16) (h200-tensor-numerics §4).
    const UNTAGGED: [(&str, &str); 1] = [("h200-coopmat-f16", "h25")];

    /// Every `tests/data/probe/*.bin`: `*-accept-<profile>.bin` must be matched to that profile,
    /// `*-reject-*.bin` must not be matched to H25 (and the reason must name the closest
    /// candidate), names in [`UNTAGGED`] must match their profile. Any other name fails.
    #[test]
    fn recorded_answers_in_tests_data() {
        let dir = data_dir();
        let Ok(entries) = std::fs::read_dir(&dir) else {
            eprintln!("{}: no recorded answers", dir.display());
            return;
        };
        let mut paths: Vec<PathBuf> = entries
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "bin"))
            .collect();
        paths.sort();
        let tiles = probe_tiles();
        let sets = sets(&tiles);
        for path in &paths {
            let stem = path.file_stem().unwrap().to_str().unwrap();
            let bytes = std::fs::read(path).unwrap();
            let answers = answers_from_bytes(&bytes).unwrap_or_else(|e| panic!("{stem}: {e}"));
            let id = classify(&sets, &answers);
            eprintln!("{stem}: {}", id.reason);
            let want = if let Some(pos) = stem.rfind("-accept-") {
                Some(&stem[pos + "-accept-".len()..])
            } else if stem.contains("-reject-") {
                None
            } else if let Some((_, p)) = UNTAGGED.iter().find(|(n, _)| *n == stem) {
                Some(*p)
            } else {
                panic!("{stem}.bin: name it *-accept-<profile>.bin or *-reject-<what>.bin");
            };
            match want {
                Some(name) => {
                    assert!(
                        CANDIDATES.iter().any(|p| p.name == name),
                        "{stem}: `{name}` is not a candidate profile"
                    );
                    assert_eq!(
                        id.matched.map(|p| p.name),
                        Some(name),
                        "{stem}: {}",
                        id.reason
                    );
                }
                None => assert_rejected(&id),
            }
        }
    }

    #[test]
    fn digests_are_documented() {
        let doc =
            std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/numerics.md"))
                .unwrap();
        let tiles = probe_tiles();
        for p in CANDIDATES {
            let d = digest(&expected(&tiles, &p));
            let name = format!("`{}`", p.name);
            assert!(
                doc.lines().any(|l| l.contains(&name) && l.contains(&d)),
                "docs/numerics.md lacks the digest of {}: {d}",
                p.name
            );
        }
    }
}
