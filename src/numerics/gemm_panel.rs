//! The E4M3 GEMM inner kernel: outputs computed 8 columns at a time (one "panel" of `bt` rows held
//! in SIMD lanes) for a block of up to 4 rows, so that the decoded operands of one K step are
//! loaded once and shared by 32 outputs.
//!
//! Why this layout: the group rule (spec nr-network §2.2) needs, per output and group, first the
//! max exponent `E` and then per-term truncations at that `E`. Vectorising along K would need a
//! horizontal max and sum per output per group; vectorising across output columns needs none —
//! each lane runs the model's group step for its own output, and the accumulator rounding to f16
//! is one `vcvtps2ph` for 8 outputs.
//!
//! Exactness (every step is exact, no floating-point rounding happens before the f16 rounding):
//! an E4M3 operand is `±S * 2^(exp-3)` with `S < 16`, so `a*b` is exact in f32, `a*b * 2^(P-E)` is
//! an exact power-of-two scaling (no overflow: `E >= exp(a)+exp(b)`; no f32 underflow: the
//! smallest product is 2^-18) and `cvttps2dq` truncates toward zero, which is the per-term rule.
//! The accumulator term `trunc(acc * 2^(P-E))` is exact the same way. With the profile bound
//! checked by [`fits`], the exact integer sum fits an i32. Its rounding: for `|sum| < 2^24` the
//! f32 conversion is exact, the scale by `2^(E-P)` too, and f32 -> f16 RNE is then the model's
//! rounding. Larger sums (P > 18) are first rounded to odd at bit 8 (bits below 8 folded into a
//! sticky bit): the f16 rounding point of such a sum lies at bit 13 or above, at least two bits
//! higher, where round-to-odd followed by RNE equals RNE of the exact value.
//!
//! Lanes of an inf/NaN accumulator keep their bits (E4M3 products are always finite); every zero
//! result is +0. Column lanes beyond `n` are padded with zero operands and dropped at the end.

use super::e4m3::E4;
use super::f16::{self, F16};
use super::gemm::EXP_ZERO;

/// Output columns per panel (SIMD lanes of one 256-bit f32/i32 vector).
pub(crate) const LANES: usize = 8;
/// Rows per register block.
const ROWS: usize = 4;
/// Exponent of a zero accumulator.
const EXP_ACC_ZERO: i32 = -2048;
/// Floor of `E`: reached only when the group has no nonzero product and the accumulator is zero
/// (real exponents are >= -18), where the sum is 0 whatever `E` is; it keeps `2^(P-E)` finite.
const E_FLOOR: i32 = -100;

/// Whether the kernel is exact for a profile with group `g` and `p` fraction bits: the largest
/// group sum (16 terms of at most 225 * 2^(P-6) plus an accumulator term below 2^(P+1)) must fit an
/// i32. Holds for G = 16 up to P = 25 (H25).
pub(crate) fn fits(g: usize, p: u32) -> bool {
    if g == 0 || p > 40 {
        return false;
    }
    let bound = g as f64 * 225.0 * 2f64.powi(p as i32 - 6) + 2f64.powi(p as i32 + 1);
    bound < 2f64.powi(31)
}

/// `bt` (n x K) decoded into panels: `exps[panel * k + x][lane]`, `vals[panel * k + x][lane]`.
#[derive(Clone, Debug)]
pub(crate) struct Panels {
    pub exps: Vec<[i16; LANES]>,
    pub vals: Vec<[f32; LANES]>,
}

impl Panels {
    /// Decode `codes` (rows x k) with the per-code lanes `te`/`tv`.
    pub fn new(codes: &[E4], rows: usize, k: usize, te: &[i16; 256], tv: &[f32; 256]) -> Self {
        let np = rows.div_ceil(LANES);
        let mut exps = vec![[EXP_ZERO; LANES]; np * k];
        let mut vals = vec![[0f32; LANES]; np * k];
        for (j, row) in codes.chunks_exact(k.max(1)).take(rows).enumerate() {
            let (p, l) = (j / LANES, j % LANES);
            for (x, &c) in row.iter().enumerate() {
                exps[p * k + x][l] = te[c as usize];
                vals[p * k + x][l] = tv[c as usize];
            }
        }
        Panels { exps, vals }
    }
}

/// The arithmetic of one call.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Arith {
    /// P.
    pub frac: i32,
    /// G.
    pub group: usize,
    /// Split-K partition length (K itself for one chain).
    pub part: usize,
}

/// Which kernel runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Path {
    /// AVX2 + F16C when the CPU has them, else portable.
    Auto,
    /// The portable kernel (tests use it to check it on AVX2 machines too).
    #[cfg_attr(not(test), allow(dead_code))]
    Portable,
}

/// The E4M3 GEMM over panels: `out[i*n + j]` for all `i < m`, `j < n` (layout of
/// [`super::gemm::gemm_e4m3_packed`]). Shapes are checked by the caller.
#[allow(clippy::too_many_arguments)]
pub(crate) fn gemm(
    path: Path,
    ar: Arith,
    te: &[i16; 256],
    tv: &[f32; 256],
    a: &[E4],
    b: &Panels,
    m: usize,
    n: usize,
    k: usize,
    seeds: Option<&[F16]>,
    out: &mut [F16],
) {
    let np = n.div_ceil(LANES);
    let wide = ar.frac > 18;
    let avx2 = path == Path::Auto && has_avx2();
    // Decode all of `a` once, as `[row block][k][ROWS]`: the panels are the outer loop so a panel
    // stays in cache while every row block passes over it.
    let nb = m.div_ceil(ROWS);
    let mut ae = vec![[EXP_ZERO as i32; ROWS]; nb * k];
    let mut av = vec![[0f32; ROWS]; nb * k];
    for (i, row) in a.chunks_exact(k.max(1)).take(m).enumerate() {
        let (rb, r) = (i / ROWS, i % ROWS);
        for ((e, v), &c) in ae[rb * k..].iter_mut().zip(&mut av[rb * k..]).zip(row) {
            e[r] = te[c as usize] as i32;
            v[r] = tv[c as usize];
        }
    }
    for p in 0..np {
        let pe = &b.exps[p * k..(p + 1) * k];
        let pv = &b.vals[p * k..(p + 1) * k];
        let j0 = p * LANES;
        let cols = LANES.min(n - j0);
        for rb in 0..nb {
            let i0 = rb * ROWS;
            let rows = ROWS.min(m - i0);
            let mut sd = [[f16::POS_ZERO; LANES]; ROWS];
            if let Some(s) = seeds {
                for (r, lanes) in sd.iter_mut().enumerate().take(rows) {
                    lanes[..cols].copy_from_slice(&s[(i0 + r) * n + j0..(i0 + r) * n + j0 + cols]);
                }
            }
            let mut res = [[f16::POS_ZERO; LANES]; ROWS];
            let ops = Operands {
                k,
                ae: &ae[rb * k..(rb + 1) * k],
                av: &av[rb * k..(rb + 1) * k],
                pe,
                pv,
            };
            if avx2 {
                run_avx2(ar, wide, rows, &ops, &sd, &mut res);
            } else {
                block_portable(ar, &ops, &sd, &mut res);
            }
            for (r, lanes) in res.iter().enumerate().take(rows) {
                out[(i0 + r) * n + j0..(i0 + r) * n + j0 + cols].copy_from_slice(&lanes[..cols]);
            }
        }
    }
}

/// The operands of one row block x panel.
struct Operands<'a> {
    k: usize,
    ae: &'a [[i32; ROWS]],
    av: &'a [[f32; ROWS]],
    pe: &'a [[i16; LANES]],
    pv: &'a [[f32; LANES]],
}

/// Split-K partitions of `0..k` as (start, end, is_first).
fn partitions(k: usize, part: usize) -> impl Iterator<Item = (usize, usize)> {
    let part = part.max(1);
    (0..k.div_ceil(part)).map(move |i| (i * part, ((i + 1) * part).min(k)))
}

/// Add a later partition's result into the running total (f16 adds in partition order).
fn merge(first: bool, total: &mut [F16; LANES], acc: &[F16; LANES]) {
    for (t, &a) in total.iter_mut().zip(acc) {
        *t = if first { a } else { f16::add(*t, a) };
    }
}

/// The portable kernel: the same lane arithmetic in plain Rust, one row at a time.
fn block_portable(
    ar: Arith,
    ops: &Operands<'_>,
    seeds: &[[F16; LANES]; ROWS],
    out: &mut [[F16; LANES]; ROWS],
) {
    for r in 0..ROWS {
        let mut total = seeds[r];
        for (i, (ps, pe)) in partitions(ops.k, ar.part).enumerate() {
            let mut acc = if i == 0 {
                seeds[r]
            } else {
                [f16::POS_ZERO; LANES]
            };
            let mut g0 = ps;
            while g0 < pe {
                let g1 = (g0 + ar.group).min(pe);
                for (l, acc_l) in acc.iter_mut().enumerate() {
                    *acc_l = group_lane(ar.frac, *acc_l, ops, r, l, g0, g1);
                }
                g0 = g1;
            }
            merge(i == 0, &mut total, &acc);
        }
        out[r] = total;
    }
}

/// One group step of one output lane (portable kernel).
fn group_lane(
    frac: i32,
    acc: F16,
    ops: &Operands<'_>,
    r: usize,
    l: usize,
    g0: usize,
    g1: usize,
) -> F16 {
    if f16::is_nonfinite(acc) {
        return acc;
    }
    let mut e = if acc & 0x7FFF == 0 {
        EXP_ACC_ZERO
    } else {
        f16::exponent(acc).max(-14)
    };
    for x in g0..g1 {
        e = e.max(ops.ae[x][r] + ops.pe[x][l] as i32);
    }
    let e = e.max(E_FLOOR);
    let scale = f32::from_bits(((frac - e + 127) as u32) << 23);
    let mut s = (f16::to_f32(acc) * scale) as i32;
    for x in g0..g1 {
        s = s.wrapping_add(((ops.av[x][r] * ops.pv[x][l]) * scale) as i32);
    }
    let h = f16::round_i64_rne(s as i64, e - frac);
    if h & 0x7FFF == 0 {
        f16::POS_ZERO
    } else {
        h
    }
}

#[cfg(target_arch = "x86_64")]
fn has_avx2() -> bool {
    std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("f16c")
}

#[cfg(not(target_arch = "x86_64"))]
fn has_avx2() -> bool {
    false
}

/// Dispatch to the AVX2 kernel for the block's row count.
#[cfg(target_arch = "x86_64")]
fn run_avx2(
    ar: Arith,
    wide: bool,
    rows: usize,
    ops: &Operands<'_>,
    seeds: &[[F16; LANES]; ROWS],
    out: &mut [[F16; LANES]; ROWS],
) {
    // SAFETY: only called when `has_avx2()` saw AVX2 and F16C on this CPU.
    unsafe {
        match (rows, wide) {
            (4, false) => avx2::block::<4, false>(ar, ops, seeds, out),
            (4, true) => avx2::block::<4, true>(ar, ops, seeds, out),
            (2 | 3, false) => avx2::block::<3, false>(ar, ops, seeds, out),
            (2 | 3, true) => avx2::block::<3, true>(ar, ops, seeds, out),
            (_, false) => avx2::block::<1, false>(ar, ops, seeds, out),
            (_, true) => avx2::block::<1, true>(ar, ops, seeds, out),
        }
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn run_avx2(
    ar: Arith,
    _wide: bool,
    _rows: usize,
    ops: &Operands<'_>,
    seeds: &[[F16; LANES]; ROWS],
    out: &mut [[F16; LANES]; ROWS],
) {
    block_portable(ar, ops, seeds, out)
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use super::{merge, partitions, Arith, Operands, EXP_ACC_ZERO, E_FLOOR, LANES, ROWS};
    use crate::numerics::f16::F16;
    use std::arch::x86_64::*;
    use std::mem::transmute;

    /// Rows `0..R` of a block (R <= ROWS) x one panel.
    ///
    /// # Safety
    /// The CPU must support AVX2 and F16C.
    #[target_feature(enable = "avx2,f16c")]
    pub(super) unsafe fn block<const R: usize, const WIDE: bool>(
        ar: Arith,
        ops: &Operands<'_>,
        seeds: &[[F16; LANES]; ROWS],
        out: &mut [[F16; LANES]; ROWS],
    ) {
        let mut total = [_mm_setzero_si128(); R];
        for r in 0..R {
            total[r] = load8(&seeds[r]);
        }
        for (i, (ps, pe)) in partitions(ops.k, ar.part).enumerate() {
            let mut acc = [_mm_setzero_si128(); R];
            if i == 0 {
                acc = total;
            }
            let mut g0 = ps;
            while g0 < pe {
                let g1 = (g0 + ar.group).min(pe);
                group::<R, WIDE>(ar.frac, ops, g0, g1, &mut acc);
                g0 = g1;
            }
            if i == 0 {
                total = acc;
            } else {
                for r in 0..R {
                    let (mut t, mut a) = ([0u16; LANES], [0u16; LANES]);
                    store8(&mut t, total[r]);
                    store8(&mut a, acc[r]);
                    merge(false, &mut t, &a);
                    total[r] = load8(&t);
                }
            }
        }
        for r in 0..R {
            store8(&mut out[r], total[r]);
        }
    }

    #[inline(always)]
    fn load8(h: &[u16; LANES]) -> __m128i {
        // SAFETY: [u16; 8] and __m128i have the same size and every bit pattern is valid.
        unsafe { transmute::<[u16; LANES], __m128i>(*h) }
    }

    #[inline(always)]
    fn store8(h: &mut [u16; LANES], v: __m128i) {
        // SAFETY: as in `load8`.
        *h = unsafe { transmute::<__m128i, [u16; LANES]>(v) };
    }

    /// One group step `g0..g1` for R rows x 8 columns; `acc` holds f16 bit patterns.
    #[inline(always)]
    unsafe fn group<const R: usize, const WIDE: bool>(
        frac: i32,
        ops: &Operands<'_>,
        g0: usize,
        g1: usize,
        acc: &mut [__m128i; R],
    ) {
        let (ae, av) = (&ops.ae[g0..g1], &ops.av[g0..g1]);
        let (pe, pv) = (&ops.pe[g0..g1], &ops.pv[g0..g1]);
        // E starts from the accumulator's exponent (f16 subnormals count -14, zero never wins).
        let mut e = [_mm256_setzero_si256(); R];
        let mut accf = [_mm256_setzero_ps(); R];
        for r in 0..R {
            let h = acc[r];
            let ex = _mm_sub_epi16(
                _mm_max_epi16(
                    _mm_and_si128(_mm_srli_epi16::<10>(h), _mm_set1_epi16(0x1F)),
                    _mm_set1_epi16(1),
                ),
                _mm_set1_epi16(15),
            );
            let zero = _mm_cmpeq_epi16(
                _mm_and_si128(h, _mm_set1_epi16(0x7FFF)),
                _mm_setzero_si128(),
            );
            let ex = _mm_blendv_epi8(ex, _mm_set1_epi16(EXP_ACC_ZERO as i16), zero);
            e[r] = _mm256_max_epi32(_mm256_cvtepi16_epi32(ex), _mm256_set1_epi32(E_FLOOR));
            accf[r] = _mm256_cvtph_ps(h);
        }
        for (lanes, a) in pe.iter().zip(ae) {
            // SAFETY: [i16; 8] and __m128i have the same size and every bit pattern is valid.
            let b = _mm256_cvtepi16_epi32(unsafe { transmute::<[i16; LANES], __m128i>(*lanes) });
            for r in 0..R {
                e[r] = _mm256_max_epi32(e[r], _mm256_add_epi32(_mm256_set1_epi32(a[r]), b));
            }
        }
        // scale = 2^(P-E), built from its exponent bits.
        let mut scale = [_mm256_setzero_ps(); R];
        let mut sum = [_mm256_setzero_si256(); R];
        for r in 0..R {
            scale[r] = _mm256_castsi256_ps(_mm256_slli_epi32::<23>(_mm256_sub_epi32(
                _mm256_set1_epi32(frac + 127),
                e[r],
            )));
            sum[r] = _mm256_cvttps_epi32(_mm256_mul_ps(accf[r], scale[r]));
        }
        for (lanes, a) in pv.iter().zip(av) {
            // SAFETY: [f32; 8] and __m256 have the same size and every bit pattern is valid.
            let b = unsafe { transmute::<[f32; LANES], __m256>(*lanes) };
            for r in 0..R {
                let t = _mm256_mul_ps(_mm256_mul_ps(_mm256_set1_ps(a[r]), b), scale[r]);
                sum[r] = _mm256_add_epi32(sum[r], _mm256_cvttps_epi32(t));
            }
        }
        for r in 0..R {
            // 2^(E-P): the sum's weight.
            let mut unit = _mm256_sub_epi32(e[r], _mm256_set1_epi32(frac - 127));
            let v = if WIDE {
                let s = sum[r];
                let mag = _mm256_abs_epi32(s);
                let big = _mm256_cmpgt_epi32(mag, _mm256_set1_epi32((1 << 24) - 1));
                let sticky = _mm256_andnot_si256(
                    _mm256_cmpeq_epi32(
                        _mm256_and_si256(mag, _mm256_set1_epi32(0xFF)),
                        _mm256_setzero_si256(),
                    ),
                    _mm256_set1_epi32(1),
                );
                let odd = _mm256_or_si256(_mm256_srli_epi32::<8>(mag), sticky);
                let m = _mm256_blendv_epi8(mag, odd, big);
                unit = _mm256_add_epi32(unit, _mm256_and_si256(big, _mm256_set1_epi32(8)));
                let f = _mm256_mul_ps(
                    _mm256_cvtepi32_ps(m),
                    _mm256_castsi256_ps(_mm256_slli_epi32::<23>(unit)),
                );
                let sign = _mm256_and_si256(s, _mm256_set1_epi32(i32::MIN));
                _mm256_or_ps(f, _mm256_castsi256_ps(sign))
            } else {
                _mm256_mul_ps(
                    _mm256_cvtepi32_ps(sum[r]),
                    _mm256_castsi256_ps(_mm256_slli_epi32::<23>(unit)),
                )
            };
            let h = _mm256_cvtps_ph::<_MM_FROUND_TO_NEAREST_INT>(v);
            // Zero results, -0 included, are +0.
            let h = _mm_andnot_si128(_mm_cmpeq_epi16(h, _mm_set1_epi16(i16::MIN)), h);
            // inf/NaN accumulators pass through bit for bit.
            let old = acc[r];
            let nf = _mm_cmpeq_epi16(
                _mm_and_si128(old, _mm_set1_epi16(0x7C00)),
                _mm_set1_epi16(0x7C00),
            );
            acc[r] = _mm_blendv_epi8(h, old, nf);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::gemm::{gemm_e4m3_packed_with, PackedE4m3};
    use super::super::mma::{self, Profile};
    use super::*;

    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }

        /// An E4M3 code: 1 in 8 zero, the rest spread over every exponent and both signs.
        fn code(&mut self) -> E4 {
            let r = self.next();
            if r % 8 == 0 {
                0
            } else {
                (r >> 8) as u8
            }
        }

        /// A seed: mostly finite halves, sometimes -0, infinities or NaNs (one signalling).
        fn seed(&mut self) -> F16 {
            let r = self.next();
            match r % 16 {
                0 => [0x8000, 0x7C00, 0xFC00, 0x7E00, 0xFE01, 0x7C01][(r >> 8) as usize % 6],
                1 => 0,
                _ => ((r >> 8) as u16 % 0x7C00) | ((r >> 30) as u16 & 0x8000),
            }
        }
    }

    /// Every output of both kernels against the model's split-K.
    fn check(p: &Profile, rng: &mut Rng, m: usize, n: usize, k: usize, part: Option<usize>) {
        let a: Vec<E4> = (0..m * k).map(|_| rng.code()).collect();
        let bt: Vec<E4> = (0..n * k).map(|_| rng.code()).collect();
        let seeds: Vec<F16> = (0..m * n).map(|_| rng.seed()).collect();
        let packed = PackedE4m3::new(&bt, n, k, p.exponents).expect("consistent shapes");
        for path in [Path::Auto, Path::Portable] {
            for s in [None, Some(&seeds[..])] {
                let mut out = vec![0x5555u16; m * n];
                gemm_e4m3_packed_with(path, p, &a, &packed, m, s, part, &mut out);
                for i in 0..m {
                    for j in 0..n {
                        let seed = s.map_or(0, |s| s[i * n + j]);
                        let want = mma::split_e4m3(
                            p,
                            seed,
                            &a[i * k..(i + 1) * k],
                            &bt[j * k..(j + 1) * k],
                            part,
                        );
                        assert_eq!(
                            out[i * n + j],
                            want,
                            "{} {path:?} {m}x{n}x{k} part {part:?} ({i},{j}) seed {seed:#06x}",
                            p.name
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn kernels_match_the_model_on_row_and_column_remainders() {
        // Rows 1..9 cover full 4-row blocks and remainders of 1, 2 and 3; columns 1..17 cover
        // partial, full and multiple panels; K covers empty, partial and several groups, with
        // split-K partitions that are and are not multiples of G.
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        for p in [Profile::F13, Profile::H25, Profile::H25_G8] {
            for m in [1, 2, 3, 4, 5, 7, 9] {
                for (n, k) in [(1, 16), (7, 40), (8, 0), (9, 5), (17, 33), (8, 64)] {
                    for part in [None, Some(24), Some(16)] {
                        check(&p, &mut rng, m, n, k, part);
                    }
                }
            }
        }
    }

    #[test]
    fn kernels_match_the_model_on_attention_shapes() {
        let mut rng = Rng(0x0123_4567_89AB_CDEF);
        for p in [Profile::F13, Profile::H25] {
            check(&p, &mut rng, 64, 64, 32, None);
            check(&p, &mut rng, 64, 32, 64, None);
            check(&p, &mut rng, 12, 40, 1024, Some(256));
        }
    }

    #[test]
    fn wide_sums_round_through_the_sticky_bit() {
        // H25, acc 1.0: E = 0, the accumulator term is 2^25 and the f16 lsb is 2^15 in sum units.
        // 2^-5 * 2^-6 adds 2^14 (a tie) and the two smallest widened subnormals 2^-9 * 2^-9 add
        // 2^7, below the bits the kernel keeps for sums >= 2^24: only the sticky bit breaks the
        // tie upward, to 1 + 2^-10.
        let p = Profile::H25;
        let (a, b) = ([0x10u8, 0x01], [0x08u8, 0x01]);
        assert_eq!(mma::chain_e4m3(&p, 0x3C00, &a, &b), 0x3C01);
        let na = [0x90u8, 0x81];
        assert_eq!(mma::chain_e4m3(&p, 0xBC00, &na, &b), 0xBC01);
        // Without the 2^7 term the tie goes to even.
        assert_eq!(mma::chain_e4m3(&p, 0x3C00, &a[..1], &b[..1]), 0x3C00);
        for path in [Path::Auto, Path::Portable] {
            for (seed, a, want) in [(0x3C00, &a, 0x3C01), (0xBC00, &na, 0xBC01)] {
                let packed = PackedE4m3::new(&b, 1, 2, p.exponents).expect("consistent shapes");
                let mut out = [0u16; 1];
                gemm_e4m3_packed_with(path, &p, a, &packed, 1, Some(&[seed]), None, &mut out);
                assert_eq!(out[0], want, "{path:?} seed {seed:#06x}");
            }
        }
    }

    #[test]
    fn special_accumulators_pass_through_and_zeros_are_positive() {
        let p = Profile::F13;
        let seeds = [
            0x7C00u16, 0xFC00, 0x7E00, 0x7C01, 0xFE01, 0x8000, 0x3C00, 0xBC00,
        ];
        // Row 0: zero operands; row 1: 1.0 * 1.0 and -1.0 * 1.0 (the products cancel).
        let a = [0u8, 0, 0x38, 0xB8];
        let bt = [
            0x38u8, 0x38, 0x38, 0x38, 0x38, 0x38, 0x38, 0x38, 0x38, 0x38, 0x38, 0x38, 0x38, 0x38,
            0x38, 0x38,
        ];
        let packed = PackedE4m3::new(&bt, 8, 2, p.exponents).expect("consistent shapes");
        let mut sd = seeds.to_vec();
        sd.extend(seeds);
        for path in [Path::Auto, Path::Portable] {
            let mut out = [0x5555u16; 16];
            gemm_e4m3_packed_with(path, &p, &a, &packed, 2, Some(&sd), None, &mut out);
            for row in out.chunks_exact(8) {
                // inf/NaN bits unchanged, -0 + 0 is +0, ±1 stays ±1.
                assert_eq!(
                    row,
                    [0x7C00, 0xFC00, 0x7E00, 0x7C01, 0xFE01, 0, 0x3C00, 0xBC00],
                    "{path:?}"
                );
            }
        }
    }

    #[test]
    fn the_i32_bound_admits_f13_and_h25_only_up_to_p25() {
        assert!(fits(16, 13));
        assert!(fits(16, 25));
        assert!(fits(8, 25));
        assert!(!fits(16, 26));
        assert!(!fits(4, 30));
        assert!(!fits(0, 13));
    }
}
