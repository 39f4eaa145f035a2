//! The MMA model: one parameterised fixed-point dot product of which NVIDIA's native F13 (FP8) and
//! F24 (f16) tensor-core arithmetic and the H200's H25 are profiles (spec nr-network §2.2-2.3, §8.2-8.3;
//! h200-tensor-numerics §5).
//!
//! This module is the readable definition: a group step, a K chain and split-K partitions, for E4M3
//! and for f16 operands, with an f16-RNE or f32-RZ accumulator. It favours clarity over speed; the
//! GEMM kernels in [`super::gemm`] are the fast path and are tested against these functions.
//!
//! One group step (G products and the accumulator `acc`):
//!
//! 1. `E = max(exp(acc) if acc != 0, max over nonzero products of exp(a) + exp(b))`. With neither
//!    (an empty group on a zero accumulator) `E` is the profile's `empty_exponent`; the sum is then
//!    zero whatever `E` is, so the rule cannot change a result.
//! 2. `sum = trunc(acc * 2^(P-E)) + Σ trunc(a_i*b_i * 2^(P-E))`, each term truncated toward zero on
//!    its own, the sum exact.
//! 3. `acc' = round(sum * 2^(E-P))`: f16 RNE (±inf on overflow) or f32 RZ. Every zero result,
//!    including a nonzero sum that rounds to zero, is +0.
//!
//! Non-finite values: an inf/NaN accumulator passes through a group unchanged when every product is
//! finite (E4M3 operands are always finite: the NaN codes decode to 0). With f16 operands the chosen
//! reading is IEEE-like propagation: a NaN operand or `inf * 0` makes the product NaN; the result is
//! the quiet NaN 0x7E00 if any product is NaN or infinities of both signs meet (products and
//! accumulator), otherwise the infinity present (an infinite accumulator is returned bit for bit).
//! A NaN accumulator is always returned unchanged.

use super::e4m3::E4;
use super::f16::{self, F16};

/// How the accumulator is rounded after each group.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AccRounding {
    /// f16 accumulator, round to nearest even (F13, F24, H25).
    F16Rne,
    /// f32 accumulator, round toward zero (the H200 coopmat route with an f32 accumulator).
    F32Rz,
}

/// Which exponent an operand contributes to `E`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ExponentConvention {
    /// Subnormals of the operand's own format count as that format's minimum normal exponent:
    /// E4M3 subnormals -6, f16 subnormals -14 (native Ada FP8 and f16 MMAs).
    FormatMinNormal,
    /// Operands are first widened to f16 and contribute the f16 exponent: an E4M3 subnormal
    /// `m * 2^-9` becomes an f16 normal with its true exponent (-9..-7); f16 subnormals count -14.
    /// This is how a route that converts E4M3 to f16 before an f16 MMA (H200) sees them.
    WidenedF16,
}

/// One MMA arithmetic: group size, fraction bits, accumulator rounding and exponent rules.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Profile {
    /// Short name used in reports ("f13", "f24", "h25", ...).
    pub name: &'static str,
    /// G: consecutive K indices per group (a K chain is a sequence of groups in K order).
    pub group: usize,
    /// P: fraction bits kept below the group exponent `E`.
    pub frac_bits: u32,
    /// Rounding of the accumulator after each group.
    pub acc: AccRounding,
    /// `E` of a group with no nonzero product and a zero accumulator (F13: -21). Documented for
    /// completeness: such a group's sum is 0, so its result is +0 for any value.
    pub empty_exponent: i32,
    /// Exponent convention for subnormal operands.
    pub exponents: ExponentConvention,
}

impl Profile {
    /// Native FP8 (Ada `mma.sync...e4m3.e4m3.f16`): G16, P13, f16 RNE, E4M3 subnormals at -6.
    pub const F13: Profile = Profile {
        name: "f13",
        group: 16,
        frac_bits: 13,
        acc: AccRounding::F16Rne,
        empty_exponent: -21,
        exponents: ExponentConvention::FormatMinNormal,
    };
    /// Native f16 MMA (adapter K=16, head K=32): G8, P24, f16 RNE, f16 subnormals at -14.
    pub const F24: Profile = Profile {
        name: "f24",
        group: 8,
        frac_bits: 24,
        acc: AccRounding::F16Rne,
        empty_exponent: -21,
        exponents: ExponentConvention::FormatMinNormal,
    };
    /// H200 f16 tensor cores through Vulkan (coopmat 16x16x16 / 16x8x16, coopvec E4M3):
    /// G16, P25, f16 RNE, operands seen as f16.
    pub const H25: Profile = Profile {
        name: "h25",
        group: 16,
        frac_bits: 25,
        acc: AccRounding::F16Rne,
        empty_exponent: -21,
        exponents: ExponentConvention::WidenedF16,
    };
    /// H25 for the 16x8x8 coopmat shape (G8).
    pub const H25_G8: Profile = Profile {
        name: "h25-g8",
        group: 8,
        ..Profile::H25
    };
    /// H25 with an f32 accumulator truncated (RZ) after every group.
    pub const H25_F32: Profile = Profile {
        name: "h25-f32",
        acc: AccRounding::F32Rz,
        ..Profile::H25
    };
    /// Ray Reconstruction's GEMM step (spec rr-network §5.1): the exact sum of one k32 slice of
    /// E4M3 products plus the accumulator, rounded to f16 (RNE) once per step. With G = 32 and
    /// P = 48 no term is ever truncated: an E4M3 product's lowest bit is at least 2^-18, an f16
    /// accumulator's at least 2^-24, and `E` is at most 17 (448² < 2^18; an f16's exponent is at
    /// most 15), so P >= 41 already keeps every bit and any such P gives the same results; the
    /// exponent convention cannot matter either. `numerics::rr::k32` adds RR's rule for the
    /// E4M3 NaN codes (which this model decodes as 0).
    pub const RR_K32: Profile = Profile {
        name: "rr-k32",
        group: 32,
        frac_bits: 48,
        acc: AccRounding::F16Rne,
        empty_exponent: -21,
        exponents: ExponentConvention::FormatMinNormal,
    };
}

/// A finite nonzero value split exactly: `value = (-1)^neg * sig * 2^lsb`; `exp` is the exponent it
/// contributes to `E`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Parts {
    pub neg: bool,
    pub sig: u64,
    pub lsb: i32,
    pub exp: i32,
}

/// An operand or accumulator value as the model sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Val {
    Zero,
    Finite(Parts),
    Inf { neg: bool },
    NaN,
}

/// Decode an E4M3 code under a convention. The NaN codes decode to zero (spec §2.1).
pub(crate) fn e4m3_val(c: E4, conv: ExponentConvention) -> Val {
    if c & 0x7F == 0x7F || c & 0x7F == 0 {
        return Val::Zero;
    }
    let neg = c & 0x80 != 0;
    let e = ((c >> 3) & 0xF) as i32;
    let m = (c & 7) as u64;
    if e == 0 {
        let exp = match conv {
            ExponentConvention::FormatMinNormal => -6,
            // m * 2^-9 with m in 1..7: the f16 exponent is that of its top bit.
            ExponentConvention::WidenedF16 => (63 - m.leading_zeros() as i32) - 9,
        };
        Val::Finite(Parts {
            neg,
            sig: m,
            lsb: -9,
            exp,
        })
    } else {
        Val::Finite(Parts {
            neg,
            sig: 8 | m,
            lsb: e - 10,
            exp: e - 7,
        })
    }
}

/// Decode a half. Both conventions give f16 subnormals the exponent -14.
pub(crate) fn f16_val(h: F16) -> Val {
    let neg = h & 0x8000 != 0;
    let e = ((h >> 10) & 0x1F) as i32;
    let m = (h & 0x3FF) as u64;
    match (e, m) {
        (0, 0) => Val::Zero,
        (0x1F, 0) => Val::Inf { neg },
        (0x1F, _) => Val::NaN,
        (0, _) => Val::Finite(Parts {
            neg,
            sig: m,
            lsb: -24,
            exp: -14,
        }),
        _ => Val::Finite(Parts {
            neg,
            sig: m | 0x400,
            lsb: e - 25,
            exp: e - 15,
        }),
    }
}

/// Decode an f32 (as bits) accumulator; f32 subnormals count as -126.
pub(crate) fn f32_val(b: u32) -> Val {
    let neg = b & 0x8000_0000 != 0;
    let e = ((b >> 23) & 0xFF) as i32;
    let m = (b & 0x7F_FFFF) as u64;
    match (e, m) {
        (0, 0) => Val::Zero,
        (0xFF, 0) => Val::Inf { neg },
        (0xFF, _) => Val::NaN,
        (0, _) => Val::Finite(Parts {
            neg,
            sig: m,
            lsb: -149,
            exp: -126,
        }),
        _ => Val::Finite(Parts {
            neg,
            sig: m | 0x80_0000,
            lsb: e - 150,
            exp: e - 127,
        }),
    }
}

/// An accumulator format: how to read it, how to round a group's sum into it.
pub(crate) trait Acc: Copy {
    fn val(self) -> Val;
    /// `sum * 2^scale` rounded; zero (exact or by rounding) gives +0.
    fn round(sum: i128, scale: i32) -> Self;
    fn qnan() -> Self;
    fn inf(neg: bool) -> Self;
}

impl Acc for F16 {
    fn val(self) -> Val {
        f16_val(self)
    }
    fn round(sum: i128, scale: i32) -> Self {
        let r = f16::round_fixed_rne(sum, scale);
        if f16::is_zero(r) {
            f16::POS_ZERO
        } else {
            r
        }
    }
    fn qnan() -> Self {
        f16::QNAN
    }
    fn inf(neg: bool) -> Self {
        if neg {
            f16::NEG_INF
        } else {
            f16::POS_INF
        }
    }
}

/// An f32 accumulator as bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct F32Bits(pub u32);

impl Acc for F32Bits {
    fn val(self) -> Val {
        f32_val(self.0)
    }
    fn round(sum: i128, scale: i32) -> Self {
        let r = positive_zero(f16::round_fixed_f32_rz(sum, scale));
        F32Bits(r)
    }
    fn qnan() -> Self {
        F32Bits(0x7FC0_0000)
    }
    fn inf(neg: bool) -> Self {
        F32Bits(if neg { 0xFF80_0000 } else { 0x7F80_0000 })
    }
}

/// Map an f32 zero of either sign to +0.
#[inline]
fn positive_zero(b: u32) -> u32 {
    if b & 0x7FFF_FFFF == 0 {
        0
    } else {
        b
    }
}

/// The product of two operand values.
fn product(a: Val, b: Val) -> Val {
    match (a, b) {
        (Val::NaN, _) | (_, Val::NaN) => Val::NaN,
        (Val::Inf { .. }, Val::Zero) | (Val::Zero, Val::Inf { .. }) => Val::NaN,
        (Val::Inf { neg: x }, Val::Inf { neg: y }) => Val::Inf { neg: x != y },
        (Val::Inf { neg: x }, Val::Finite(p)) | (Val::Finite(p), Val::Inf { neg: x }) => {
            Val::Inf { neg: x != p.neg }
        }
        (Val::Zero, _) | (_, Val::Zero) => Val::Zero,
        (Val::Finite(p), Val::Finite(q)) => Val::Finite(Parts {
            neg: p.neg != q.neg,
            sig: p.sig * q.sig,
            lsb: p.lsb + q.lsb,
            exp: p.exp + q.exp,
        }),
    }
}

/// `trunc(|x| * 2^(P-E))` with x's sign, for x = sig * 2^lsb.
#[inline]
fn aligned(p: &Parts, frac_bits: u32, e: i32) -> i128 {
    let shift = p.lsb + frac_bits as i32 - e;
    let mag: i128 = if shift >= 0 {
        (p.sig as i128) << shift
    } else if shift <= -64 {
        0
    } else {
        (p.sig >> (-shift)) as i128
    };
    if p.neg {
        -mag
    } else {
        mag
    }
}

/// One group step on already decoded values (the model's core).
pub(crate) fn group_vals<A: Acc>(p: &Profile, acc: A, pairs: &[(Val, Val)]) -> A {
    let acc_v = acc.val();
    if acc_v == Val::NaN {
        return acc;
    }
    let mut finite: Vec<Parts> = Vec::with_capacity(pairs.len());
    let mut nan = false;
    let mut pos_inf = matches!(acc_v, Val::Inf { neg: false });
    let mut neg_inf = matches!(acc_v, Val::Inf { neg: true });
    for &(a, b) in pairs {
        match product(a, b) {
            Val::NaN => nan = true,
            Val::Inf { neg: true } => neg_inf = true,
            Val::Inf { neg: false } => pos_inf = true,
            Val::Zero => {}
            Val::Finite(q) => finite.push(q),
        }
    }
    if nan || (pos_inf && neg_inf) {
        return A::qnan();
    }
    if let Val::Inf { .. } = acc_v {
        // Every infinite product (if any) has the accumulator's sign: it passes through as is.
        return acc;
    }
    if pos_inf || neg_inf {
        return A::inf(neg_inf);
    }
    let acc_parts = match acc_v {
        Val::Finite(q) => Some(q),
        _ => None,
    };
    let e = acc_parts
        .iter()
        .chain(finite.iter())
        .map(|q| q.exp)
        .max()
        .unwrap_or(p.empty_exponent);
    let sum: i128 = acc_parts
        .iter()
        .chain(finite.iter())
        .map(|q| aligned(q, p.frac_bits, e))
        .sum();
    A::round(sum, e - p.frac_bits as i32)
}

fn e4m3_pairs(p: &Profile, a: &[E4], b: &[E4]) -> Vec<(Val, Val)> {
    a.iter()
        .zip(b)
        .map(|(&x, &y)| (e4m3_val(x, p.exponents), e4m3_val(y, p.exponents)))
        .collect()
}

fn f16_pairs(a: &[F16], b: &[F16]) -> Vec<(Val, Val)> {
    a.iter()
        .zip(b)
        .map(|(&x, &y)| (f16_val(x), f16_val(y)))
        .collect()
}

/// Run the chain of groups of G over already decoded pairs from `seed`.
fn chain_vals<A: Acc>(p: &Profile, seed: A, pairs: &[(Val, Val)]) -> A {
    let g = p.group.max(1);
    pairs
        .chunks(g)
        .fold(seed, |acc, chunk| group_vals(p, acc, chunk))
}

/// The f16 result of a chain whatever the profile's accumulator: an f32 accumulator is seeded with
/// the exact f32 of the seed and rounded to f16 (RNE) at the end.
fn chain_vals_f16(p: &Profile, seed: F16, pairs: &[(Val, Val)]) -> F16 {
    match p.acc {
        AccRounding::F16Rne => chain_vals(p, seed, pairs),
        AccRounding::F32Rz => {
            let r = chain_vals(p, F32Bits(f16::to_f32(seed).to_bits()), pairs);
            f16::from_f32_rne(f32::from_bits(r.0))
        }
    }
}

/// Split-K: partitions of `partition_k` from the start of K; partition 0 chains from the seed, the
/// others from +0; the partial f16 results are added with f16 adds in partition order.
fn split_vals_f16(p: &Profile, seed: F16, pairs: &[(Val, Val)], partition_k: Option<usize>) -> F16 {
    let part = match partition_k {
        Some(k) if k > 0 && k < pairs.len() => k,
        _ => return chain_vals_f16(p, seed, pairs),
    };
    let mut total = f16::POS_ZERO;
    for (i, chunk) in pairs.chunks(part).enumerate() {
        if i == 0 {
            total = chain_vals_f16(p, seed, chunk);
        } else {
            total = f16::add(total, chain_vals_f16(p, f16::POS_ZERO, chunk));
        }
    }
    total
}

/// One group step with E4M3 operands: `a` and `b` hold the group's operands (normally G of each;
/// a shorter group is the same as one padded with zeros). With an f32-RZ profile the accumulator is
/// widened exactly and the f32 result rounded to f16 RNE.
pub fn group_e4m3(p: &Profile, acc: F16, a: &[E4], b: &[E4]) -> F16 {
    let pairs = e4m3_pairs(p, a, b);
    let one = Profile {
        group: pairs.len().max(1),
        ..*p
    };
    chain_vals_f16(&one, acc, &pairs)
}

/// One group step with f16 operands (see [`group_e4m3`]).
pub fn group_f16(p: &Profile, acc: F16, a: &[F16], b: &[F16]) -> F16 {
    let pairs = f16_pairs(a, b);
    let one = Profile {
        group: pairs.len().max(1),
        ..*p
    };
    chain_vals_f16(&one, acc, &pairs)
}

/// A K chain with E4M3 operands: groups of G consecutive K in K order, the first from `seed`, each
/// next one from the previous group's result. `a` and `b` are the two K-vectors (same length; a
/// trailing partial group is padded with zeros).
pub fn chain_e4m3(p: &Profile, seed: F16, a: &[E4], b: &[E4]) -> F16 {
    chain_vals_f16(p, seed, &e4m3_pairs(p, a, b))
}

/// A K chain with f16 operands (see [`chain_e4m3`]).
pub fn chain_f16(p: &Profile, seed: F16, a: &[F16], b: &[F16]) -> F16 {
    chain_vals_f16(p, seed, &f16_pairs(a, b))
}

/// Split-K with E4M3 operands (spec §2.2): K is cut into partitions of `partition_k` (one
/// partition when it is None, 0 or at least K); each partition is its own chain, partition 0 from
/// `seed`, the others from +0; the partial f16 results are summed with f16 adds in partition
/// order, `((p0 + p1) + p2) + ...`.
pub fn split_e4m3(p: &Profile, seed: F16, a: &[E4], b: &[E4], partition_k: Option<usize>) -> F16 {
    split_vals_f16(p, seed, &e4m3_pairs(p, a, b), partition_k)
}

/// Split-K with f16 operands (see [`split_e4m3`]).
pub fn split_f16(p: &Profile, seed: F16, a: &[F16], b: &[F16], partition_k: Option<usize>) -> F16 {
    split_vals_f16(p, seed, &f16_pairs(a, b), partition_k)
}

/// One group step with an f32 accumulator (bits in, bits out), E4M3 operands. The profile's
/// `acc` field is not consulted: the accumulator is rounded to f32 toward zero.
pub fn group_e4m3_f32acc(p: &Profile, acc: u32, a: &[E4], b: &[E4]) -> u32 {
    group_vals(p, F32Bits(acc), &e4m3_pairs(p, a, b)).0
}

/// One group step with an f32 accumulator, f16 operands (see [`group_e4m3_f32acc`]).
pub fn group_f16_f32acc(p: &Profile, acc: u32, a: &[F16], b: &[F16]) -> u32 {
    group_vals(p, F32Bits(acc), &f16_pairs(a, b)).0
}

/// A K chain with an f32-RZ accumulator, E4M3 operands; returns the final f32 bits.
pub fn chain_e4m3_f32acc(p: &Profile, seed: u32, a: &[E4], b: &[E4]) -> u32 {
    chain_vals(p, F32Bits(seed), &e4m3_pairs(p, a, b)).0
}

/// A K chain with an f32-RZ accumulator, f16 operands; returns the final f32 bits.
pub fn chain_f16_f32acc(p: &Profile, seed: u32, a: &[F16], b: &[F16]) -> u32 {
    chain_vals(p, F32Bits(seed), &f16_pairs(a, b)).0
}
