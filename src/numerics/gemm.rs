//! Fast whole-GEMM kernels for the MMA profiles of [`super::mma`]: the CPU reference's inner loop.
//!
//! Layout: `a` is M x K row-major (natural K order), `bt` is N x K (row n = the K-vector of output
//! column n), `out` and the optional `seeds` are M x N row-major f16 bit patterns. Each output is
//! exactly [`mma::split_e4m3`] / [`mma::split_f16`] of its row and column; the tests check that.
//!
//! E4M3 GEMMs run the column-panel kernel of [`super::gemm_panel`] (8 outputs per SIMD vector,
//! AVX2 with runtime detection and a portable fallback); [`PackedE4m3`] holds `bt` in its layout.
//!
//! f16 GEMMs keep the per-output path: operands are decoded once into an exponent lane (`i16`, with
//! a sentinel for zero) and an f32 value lane. A group's `E` is a max over `ea + eb`; each term
//! `trunc(a*b * 2^(P-E))` is `(a*b*2^(P-E)) as i64`, which is exact because the product of two
//! f16 (11-bit) significands fits an f32 significand, the power-of-two scale is exact, and Rust's
//! float-to-int cast truncates toward zero.
//!
//! The kernels are single-threaded and pure; callers parallelise over row blocks. Profiles outside
//! the fast paths (an f32 accumulator; for E4M3 a group sum that could overflow an i32, i.e. more
//! than 25 fraction bits at G = 16; for f16 a G other than 8/16) and f16 rows that hold inf/NaN are
//! computed by the model itself, so every profile is supported.

use super::e4m3::E4;
use super::f16::{self, F16};
use super::gemm_panel::{self, Arith, Panels, Path};
use super::mma::{self, AccRounding, ExponentConvention, Profile, Val};
use std::sync::OnceLock;

/// Exponent lane value of a zero operand: any sum with it stays far below every real exponent.
pub(crate) const EXP_ZERO: i16 = -8192;
/// Exponent lane value of a zero accumulator (never the max unless the group is empty).
const EXP_ACC_ZERO: i16 = -16384;

/// A GEMM call whose slices do not match its shape.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GemmError {
    #[error("gemm: operand `{operand}` has {got} elements, the shape needs {expected}")]
    Length {
        operand: &'static str,
        expected: usize,
        got: usize,
    },
    #[error("gemm: shape {rows} x {k} of `{operand}` overflows usize")]
    Shape {
        operand: &'static str,
        rows: usize,
        k: usize,
    },
    #[error(
        "gemm: `bt` was packed with {packed:?} exponents but profile `{profile}` uses {wanted:?}"
    )]
    Convention {
        profile: &'static str,
        packed: ExponentConvention,
        wanted: ExponentConvention,
    },
    #[error("gemm: `a` has K = {a_k} but the packed `bt` has K = {b_k}")]
    K { a_k: usize, b_k: usize },
}

fn check_len(operand: &'static str, got: usize, rows: usize, k: usize) -> Result<(), GemmError> {
    let expected = rows
        .checked_mul(k)
        .ok_or(GemmError::Shape { operand, rows, k })?;
    if got != expected {
        return Err(GemmError::Length {
            operand,
            expected,
            got,
        });
    }
    Ok(())
}

/// Per-code exponent lane and value lane for E4M3 under a convention.
type E4m3Lanes = ([i16; 256], [f32; 256]);

/// The lanes of [`e4m3_lanes`], built once per convention (GEMM calls are small and many).
fn e4m3_lanes(conv: ExponentConvention) -> &'static E4m3Lanes {
    static MIN_NORMAL: OnceLock<E4m3Lanes> = OnceLock::new();
    static WIDENED: OnceLock<E4m3Lanes> = OnceLock::new();
    let cell = match conv {
        ExponentConvention::FormatMinNormal => &MIN_NORMAL,
        ExponentConvention::WidenedF16 => &WIDENED,
    };
    cell.get_or_init(|| {
        let mut exps = [EXP_ZERO; 256];
        let mut vals = [0f32; 256];
        for c in 0..=255u8 {
            if let Val::Finite(q) = mma::e4m3_val(c, conv) {
                exps[c as usize] = q.exp as i16;
                let v = q.sig as f32 * (q.lsb as f32).exp2();
                vals[c as usize] = if q.neg { -v } else { v };
            }
        }
        (exps, vals)
    })
}

/// An E4M3 matrix (rows x K) decoded into lanes once, for reuse across GEMM calls (the weights).
#[derive(Clone, Debug)]
pub struct PackedE4m3 {
    rows: usize,
    k: usize,
    conv: ExponentConvention,
    codes: Vec<E4>,
    /// The decoded lanes in the kernel's column-panel layout.
    panels: Panels,
}

impl PackedE4m3 {
    /// Decode `codes` (rows x k, row-major) under the exponent convention of the profile it will be
    /// used with.
    pub fn new(
        codes: &[E4],
        rows: usize,
        k: usize,
        conv: ExponentConvention,
    ) -> Result<Self, GemmError> {
        check_len("bt", codes.len(), rows, k)?;
        let (te, tv) = e4m3_lanes(conv);
        Ok(PackedE4m3 {
            rows,
            k,
            conv,
            codes: codes.to_vec(),
            panels: Panels::new(codes, rows, k, te, tv),
        })
    }

    /// Number of rows (GEMM output columns).
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// K.
    pub fn k(&self) -> usize {
        self.k
    }
}

/// An f16 matrix (rows x K) decoded into lanes once.
#[derive(Clone, Debug)]
pub struct PackedF16 {
    rows: usize,
    k: usize,
    halves: Vec<F16>,
    exps: Vec<i16>,
    vals: Vec<f32>,
    /// Per row: holds an inf or NaN (such dot products take the model's path).
    special: Vec<bool>,
}

#[inline]
fn f16_exp_lane(h: F16) -> i16 {
    let e = ((h >> 10) & 0x1F) as i16;
    if h & 0x7FFF == 0 {
        EXP_ZERO
    } else if e == 0 {
        -14
    } else {
        e - 15
    }
}

impl PackedF16 {
    /// Decode `halves` (rows x k, row-major).
    pub fn new(halves: &[F16], rows: usize, k: usize) -> Result<Self, GemmError> {
        check_len("bt", halves.len(), rows, k)?;
        let special = (0..rows)
            .map(|r| {
                halves[r * k..(r + 1) * k]
                    .iter()
                    .any(|&h| f16::is_nonfinite(h))
            })
            .collect();
        Ok(PackedF16 {
            rows,
            k,
            halves: halves.to_vec(),
            exps: halves.iter().map(|&h| f16_exp_lane(h)).collect(),
            vals: halves.iter().map(|&h| f16::to_f32(h)).collect(),
            special,
        })
    }

    /// Number of rows (GEMM output columns).
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// K.
    pub fn k(&self) -> usize {
        self.k
    }
}

/// Lanes of a finite, nonzero-or-zero f16 accumulator: `None` for inf/NaN.
#[inline(always)]
fn acc_lanes(acc: F16) -> Option<(i16, f32)> {
    if acc & 0x7FFF == 0 {
        Some((EXP_ACC_ZERO, 0.0))
    } else if f16::is_nonfinite(acc) {
        None
    } else {
        Some((f16_exp_lane(acc), f16::to_f32(acc)))
    }
}

/// The group step of the f16 fast path (finite accumulator and operands); terms can reach 2^27
/// each, so they are summed in i64.
#[inline(always)]
fn group_fast<const G: usize>(
    frac: i32,
    acc: (i16, f32),
    ae: &[i16; G],
    av: &[f32; G],
    be: &[i16; G],
    bv: &[f32; G],
) -> F16 {
    let mut e = acc.0;
    for l in 0..G {
        e = e.max(ae[l] + be[l]);
    }
    if e < EXP_ZERO {
        // No nonzero product and a zero accumulator: the sum is 0.
        return f16::POS_ZERO;
    }
    let e = e as i32;
    let scale = f32::from_bits(((frac - e + 127) as u32) << 23);
    let mut terms = 0i64;
    for l in 0..G {
        terms += ((av[l] * bv[l]) * scale) as i64;
    }
    let sum = terms + (acc.1 * scale) as i64;
    let r = f16::round_i64_rne(sum, e - frac);
    if r & 0x7FFF == 0 {
        f16::POS_ZERO
    } else {
        r
    }
}

/// One output: partitions, chains, groups (fast path). `ae/av` and `be/bv` are the K-long lanes.
#[inline(always)]
fn dot_fast<const G: usize>(
    frac: i32,
    ae: &[i16],
    av: &[f32],
    be: &[i16],
    bv: &[f32],
    seed: F16,
    part: usize,
) -> F16 {
    let k = ae.len();
    if k == 0 {
        return seed;
    }
    let mut total = f16::POS_ZERO;
    let mut ps = 0;
    while ps < k {
        let pe = (ps + part).min(k);
        let mut acc = if ps == 0 { seed } else { f16::POS_ZERO };
        let mut g0 = ps;
        while g0 < pe {
            let Some(lanes) = acc_lanes(acc) else {
                // inf/NaN accumulator: passes through the rest of the partition unchanged.
                break;
            };
            let g1 = (g0 + G).min(pe);
            acc = if g1 - g0 == G {
                group_fast::<G>(
                    frac,
                    lanes,
                    arr(&ae[g0..g1]),
                    arr(&av[g0..g1]),
                    arr(&be[g0..g1]),
                    arr(&bv[g0..g1]),
                )
            } else {
                // A partial group equals one padded with zero operands.
                let (mut pae, mut pav, mut pbe, mut pbv) =
                    ([EXP_ZERO; G], [0f32; G], [EXP_ZERO; G], [0f32; G]);
                let n = g1 - g0;
                pae[..n].copy_from_slice(&ae[g0..g1]);
                pav[..n].copy_from_slice(&av[g0..g1]);
                pbe[..n].copy_from_slice(&be[g0..g1]);
                pbv[..n].copy_from_slice(&bv[g0..g1]);
                group_fast::<G>(frac, lanes, &pae, &pav, &pbe, &pbv)
            };
            g0 = g1;
        }
        total = if ps == 0 { acc } else { f16::add(total, acc) };
        ps = pe;
    }
    total
}

/// A slice of exactly G elements as an array reference (the callers slice G elements).
#[inline(always)]
fn arr<T, const G: usize>(s: &[T]) -> &[T; G] {
    match s.try_into() {
        Ok(a) => a,
        Err(_) => unreachable!("group slices are exactly G long"),
    }
}

fn partition(partition_k: Option<usize>, k: usize) -> usize {
    match partition_k {
        Some(p) if p > 0 && p < k => p,
        _ => k.max(1),
    }
}

fn check_out(m: usize, n: usize, seeds: Option<&[F16]>, out: &[F16]) -> Result<(), GemmError> {
    check_len("out", out.len(), m, n)?;
    if let Some(s) = seeds {
        check_len("seeds", s.len(), m, n)?;
    }
    Ok(())
}

/// E4M3 x E4M3 -> f16 GEMM under `p`: `out[i*n + j] = split_e4m3(p, seed[i*n + j], a row i,
/// bt row j, partition_k)`; seeds default to +0.
#[allow(clippy::too_many_arguments)]
pub fn gemm_e4m3(
    p: &Profile,
    a: &[E4],
    bt: &[E4],
    m: usize,
    n: usize,
    k: usize,
    seeds: Option<&[F16]>,
    partition_k: Option<usize>,
    out: &mut [F16],
) -> Result<(), GemmError> {
    let b = PackedE4m3::new(bt, n, k, p.exponents)?;
    gemm_e4m3_packed(p, a, &b, m, seeds, partition_k, out)
}

/// [`gemm_e4m3`] with `bt` decoded once by [`PackedE4m3::new`] (same convention as `p`).
pub fn gemm_e4m3_packed(
    p: &Profile,
    a: &[E4],
    bt: &PackedE4m3,
    m: usize,
    seeds: Option<&[F16]>,
    partition_k: Option<usize>,
    out: &mut [F16],
) -> Result<(), GemmError> {
    let (n, k) = (bt.rows, bt.k);
    check_len("a", a.len(), m, k)?;
    check_out(m, n, seeds, out)?;
    if bt.conv != p.exponents {
        return Err(GemmError::Convention {
            profile: p.name,
            packed: bt.conv,
            wanted: p.exponents,
        });
    }
    gemm_e4m3_packed_with(Path::Auto, p, a, bt, m, seeds, partition_k, out);
    Ok(())
}

/// The body of [`gemm_e4m3_packed`] after the checks, with the kernel choice (tests force the
/// portable kernel to check it on machines that have AVX2).
#[allow(clippy::too_many_arguments)]
pub(crate) fn gemm_e4m3_packed_with(
    path: Path,
    p: &Profile,
    a: &[E4],
    bt: &PackedE4m3,
    m: usize,
    seeds: Option<&[F16]>,
    partition_k: Option<usize>,
    out: &mut [F16],
) {
    let (n, k) = (bt.rows, bt.k);
    if p.acc == AccRounding::F16Rne && gemm_panel::fits(p.group, p.frac_bits) {
        let (te, tv) = e4m3_lanes(p.exponents);
        let ar = Arith {
            frac: p.frac_bits as i32,
            group: p.group,
            part: partition(partition_k, k),
        };
        gemm_panel::gemm(path, ar, te, tv, a, &bt.panels, m, n, k, seeds, out);
        return;
    }
    for i in 0..m {
        let arow = &a[i * k..(i + 1) * k];
        for j in 0..n {
            let seed = seeds.map_or(f16::POS_ZERO, |s| s[i * n + j]);
            out[i * n + j] =
                mma::split_e4m3(p, seed, arow, &bt.codes[j * k..(j + 1) * k], partition_k);
        }
    }
}

/// f16 x f16 -> f16 GEMM under `p` (the adapter and head use [`Profile::F24`]); same layout and
/// semantics as [`gemm_e4m3`], outputs equal [`mma::split_f16`].
#[allow(clippy::too_many_arguments)]
pub fn gemm_f16(
    p: &Profile,
    a: &[F16],
    bt: &[F16],
    m: usize,
    n: usize,
    k: usize,
    seeds: Option<&[F16]>,
    partition_k: Option<usize>,
    out: &mut [F16],
) -> Result<(), GemmError> {
    let b = PackedF16::new(bt, n, k)?;
    gemm_f16_packed(p, a, &b, m, seeds, partition_k, out)
}

/// [`gemm_f16`] with `bt` decoded once by [`PackedF16::new`].
pub fn gemm_f16_packed(
    p: &Profile,
    a: &[F16],
    bt: &PackedF16,
    m: usize,
    seeds: Option<&[F16]>,
    partition_k: Option<usize>,
    out: &mut [F16],
) -> Result<(), GemmError> {
    let (n, k) = (bt.rows, bt.k);
    check_len("a", a.len(), m, k)?;
    check_out(m, n, seeds, out)?;
    let part = partition(partition_k, k);
    let frac = p.frac_bits as i32;
    // Terms stay below 2^(P+2) and must be exact in f32 and i64.
    let fast = p.acc == AccRounding::F16Rne && p.frac_bits <= 32;
    let mut ae = vec![EXP_ZERO; k];
    let mut av = vec![0f32; k];
    for i in 0..m {
        let arow = &a[i * k..(i + 1) * k];
        let a_special = arow.iter().any(|&h| f16::is_nonfinite(h));
        for (x, &h) in arow.iter().enumerate() {
            ae[x] = f16_exp_lane(h);
            av[x] = f16::to_f32(h);
        }
        for j in 0..n {
            let seed = seeds.map_or(f16::POS_ZERO, |s| s[i * n + j]);
            let (be, bv) = (&bt.exps[j * k..(j + 1) * k], &bt.vals[j * k..(j + 1) * k]);
            let fast_here = fast && !a_special && !bt.special[j];
            out[i * n + j] = match (fast_here, p.group) {
                (true, 16) => dot_fast::<16>(frac, &ae, &av, be, bv, seed, part),
                (true, 8) => dot_fast::<8>(frac, &ae, &av, be, bv, seed, part),
                _ => mma::split_f16(p, seed, arow, &bt.halves[j * k..(j + 1) * k], partition_k),
            };
        }
    }
    Ok(())
}
