//! Sigmoid, the tail softmax's exponential and reciprocal, and tanh (spec rr-network §4.3, §4.4,
//! §5.5): the places where NVIDIA's RR uses approximate hardware instructions.
//!
//! NVIDIA evaluates `ex2.approx`, `div.approx` and `rcp.approx` in f32 on an f16 input and rounds
//! the result to f16 (§5.1: "f16 -> f32 -> op -> f16"). Those instructions' low bits belong to the
//! hardware, so openngx defines each function as the **correctly rounded** result of the exact
//! real function of its f16 input(s):
//!
//! * [`sigmoid`]`(x) = RN_f16(1 / (1 + e^-x))` (NVIDIA: `1/(1 + 2^(-log2e·x))` with `ex2.approx`
//!   and `div.approx`, about one f16 ulp apart at most);
//! * [`exp`]`(d) = RN_f16(e^d)` for the tail softmax's `d = f16(l - max)` (NVIDIA: `ex2.approx`
//!   of `d·log2e`);
//! * [`tanh`]`(x) = RN_f32(tanh x)` (dec0's four f32 outputs; NVIDIA: CUDA's tanhf, a piecewise
//!   `ex2`/`rcp` formula with a polynomial below 0.6, a few f32 ulps from the true value);
//! * the tail softmax's `r = RN_f16(1 / Σ e_i)` over the **exact** sum of its f16 weights
//!   (NVIDIA: an f32 sum, then `div.approx`).
//!
//! Each unary function has one f16 input, so it is a 65536-entry table, built once from an f64
//! evaluation; `tests::correctly_rounded_everywhere` proves, for every input, that the f64 value
//! lies farther than 2^-40 (relative) from every rounding boundary of the output format, so
//! rounding it gives the correctly rounded result whatever libm computed it (any libm within
//! 4000 f64 ulps agrees). The GPU kernels read the same tables.

use std::sync::OnceLock;

use crate::numerics::f16::{self, F16};

use super::cubic;

/// Canonical f32 NaN bits.
pub const F32_QNAN: u32 = 0x7FC0_0000;

fn sigmoid_f64(v: f64) -> f64 {
    1.0 / (1.0 + (-v).exp())
}

/// `RN_f16(1 / (1 + e^-x))`; NaN gives 0x7E00, -inf +0, +inf 1.
pub fn sigmoid(x: F16) -> F16 {
    sigmoid_table()[x as usize]
}

/// `RN_f16(e^x)`; NaN gives 0x7E00.
pub fn exp(x: F16) -> F16 {
    exp_table()[x as usize]
}

/// `RN_f32(tanh x)` as f32 bits; NaN gives 0x7FC00000, ±inf ±1, ±0 keep their sign.
pub fn tanh(x: F16) -> u32 {
    tanh_table()[x as usize]
}

fn half_table(f: fn(f64) -> f64) -> Box<[F16; 65536]> {
    let mut t = Box::new([0u16; 65536]);
    for (i, v) in t.iter_mut().enumerate() {
        let h = i as F16;
        *v = if f16::is_nan(h) {
            f16::QNAN
        } else {
            f16::from_f64_rne(f(f16::to_f32(h) as f64))
        };
    }
    t
}

/// The sigmoid of every half (index = input bits).
pub fn sigmoid_table() -> &'static [F16; 65536] {
    static T: OnceLock<Box<[F16; 65536]>> = OnceLock::new();
    T.get_or_init(|| half_table(sigmoid_f64))
}

/// `e^x` of every half (index = input bits).
pub fn exp_table() -> &'static [F16; 65536] {
    static T: OnceLock<Box<[F16; 65536]>> = OnceLock::new();
    T.get_or_init(|| half_table(f64::exp))
}

/// `tanh x` of every half as f32 bits (index = input bits).
pub fn tanh_table() -> &'static [u32; 65536] {
    static T: OnceLock<Box<[u32; 65536]>> = OnceLock::new();
    T.get_or_init(|| {
        let mut t = Box::new([0u32; 65536]);
        for (i, v) in t.iter_mut().enumerate() {
            let h = i as F16;
            *v = if f16::is_nan(h) {
                F32_QNAN
            } else {
                ((f16::to_f32(h) as f64).tanh() as f32).to_bits()
            };
        }
        t
    })
}

/// `RN_f16(1 / Σ e_i)` over the exact sum of halves in [0, 1] (the tail softmax's weights): NaN
/// if any is NaN, +inf for a zero sum.
pub fn recip_of_sum(e: &[F16]) -> F16 {
    if e.iter().any(|&v| f16::is_nan(v)) {
        return f16::QNAN;
    }
    // Every half in [0, 1] is an integer multiple of 2^-24 no larger than 2^24.
    let mut sum: u128 = 0;
    for &v in e {
        sum += fixed24(v) as u128;
    }
    if sum == 0 {
        return f16::POS_INF;
    }
    // 1/S = 2^24 / sum; the quotient 2^64 / sum keeps at least 24 bits more than the 11 needed
    // (sum < 2^29), and a sticky bit makes the one rounding exact.
    let num = 1u128 << 64;
    let q = num / sum;
    let sticky = u128::from(num % sum != 0);
    // 2^24 / sum = q · 2^-40 (+ a fraction); with the sticky bit the value is at 2^-41.
    f16::round_fixed_rne(((q << 1) | sticky) as i128, -41)
}

/// A finite non-negative half as an integer multiple of 2^-24.
fn fixed24(h: F16) -> u64 {
    let e = ((h >> 10) & 0x1F) as u32;
    let m = (h & 0x3FF) as u64;
    if e == 0 {
        m
    } else {
        (m | 0x400) << (e - 1)
    }
}

/// Taps of the tail softmax: nine 3x3 kernel weights and one more (spec §4.3: five packed pairs).
pub const TAIL_TAPS: usize = 10;

/// The tail softmax with a real row maximum (spec §4.3): `mx = max l_i` (PTX max: NaN operands
/// are skipped), `d_i = f16(l_i - mx)`, `e_i = exp(d_i)`, `r = recip_of_sum(e)`,
/// `p_i = f16(e_i · r)`. `out` has the length of `l`.
pub fn tail_softmax(l: &[F16], out: &mut [F16]) {
    let Some(mx) = l.iter().copied().reduce(cubic::max) else {
        return;
    };
    let t = exp_table();
    let e: Vec<F16> = l
        .iter()
        .map(|&v| t[f16::add(v, f16::neg(mx)) as usize])
        .collect();
    let r = recip_of_sum(&e);
    for (o, &v) in out.iter_mut().zip(&e) {
        *o = f16::mul(v, r);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Relative margin every f64 evaluation keeps from the rounding boundaries.
    const MARGIN: f64 = 1.0 / (1u64 << 40) as f64;

    /// The f16 neighbours of a finite half (as f64), by magnitude bit pattern.
    fn f16_neighbours(r: F16) -> Vec<f64> {
        let mut v = Vec::new();
        let mag = r & 0x7FFF;
        let sign = r & 0x8000;
        if mag < 0x7BFF {
            v.push(f16::to_f32(sign | (mag + 1)) as f64);
        }
        if mag > 0 {
            v.push(f16::to_f32(sign | (mag - 1)) as f64);
        } else {
            v.push(f16::to_f32(0x8001 ^ sign) as f64);
        }
        v
    }

    fn far_from_f16_boundaries(y: f64, r: F16) -> bool {
        if !y.is_finite() || f16::is_nonfinite(r) {
            return true;
        }
        let rv = f16::to_f32(r) as f64;
        f16_neighbours(r).into_iter().all(|n| {
            let mid = (rv + n) / 2.0; // exact: halves have few bits
            (y - mid).abs() > MARGIN * y.abs().max(f64::MIN_POSITIVE)
        })
    }

    fn far_from_f32_boundaries(y: f64, r: f32) -> bool {
        if !y.is_finite() || !r.is_finite() {
            return true;
        }
        let b = r.to_bits();
        let up = f32::from_bits(if r >= 0.0 { b + 1 } else { b - 1 }) as f64;
        let down = if r == 0.0 {
            -(f32::from_bits(1) as f64)
        } else {
            f32::from_bits(if r > 0.0 { b - 1 } else { b + 1 }) as f64
        };
        let rv = r as f64;
        [up, down]
            .into_iter()
            .all(|n| (y - (rv + n) / 2.0).abs() > MARGIN * y.abs())
    }

    #[test]
    fn correctly_rounded_everywhere() {
        for h in 0..=u16::MAX {
            if f16::is_nan(h) {
                assert_eq!(sigmoid(h), f16::QNAN);
                assert_eq!(exp(h), f16::QNAN);
                assert_eq!(tanh(h), F32_QNAN);
                continue;
            }
            let v = f16::to_f32(h) as f64;
            let s = sigmoid_f64(v);
            assert!(far_from_f16_boundaries(s, sigmoid(h)), "sigmoid {h:#06x}");
            let e = v.exp();
            assert!(far_from_f16_boundaries(e, exp(h)), "exp {h:#06x}");
            let t = v.tanh();
            assert!(
                far_from_f32_boundaries(t, f32::from_bits(tanh(h))),
                "tanh {h:#06x}: {t:e}"
            );
        }
    }

    #[test]
    fn special_values() {
        assert_eq!(sigmoid(0), 0x3800);
        assert_eq!(sigmoid(0x8000), 0x3800);
        assert_eq!(sigmoid(0x7C00), f16::ONE);
        assert_eq!(sigmoid(0xFC00), 0);
        assert_eq!(exp(0), f16::ONE);
        assert_eq!(exp(0xFC00), 0);
        assert_eq!(exp(0x7C00), 0x7C00);
        assert_eq!(tanh(0x8000), 0x8000_0000);
        assert_eq!(f32::from_bits(tanh(0x7C00)), 1.0);
        assert_eq!(f32::from_bits(tanh(0xFC00)), -1.0);
        // Sigmoid of ±1 against the f32 formula NVIDIA spells (within one f16 ulp).
        for x in [0x3C00u16, 0xBC00, 0x4200, 0xC500] {
            let v = f16::to_f32(x);
            let nv = f16::from_f32_rne(1.0 / (1.0 + (-v * std::f32::consts::LOG2_E).exp2()));
            assert!(sigmoid(x).abs_diff(nv) <= 1, "{x:#06x}");
        }
    }

    #[test]
    fn recip_of_sum_is_exact_then_rounded_once() {
        // Halves in [0, 1]: compare with the exact rational 1/S rounded by f64 where f64 is
        // exact enough (a quotient with 53 bits is rounded once more only near ties, which a
        // margin check excludes).
        let mut s = 0x9E37_79B9u32;
        for _ in 0..200_000 {
            let n = 1 + (s % 16) as usize;
            let e: Vec<F16> = (0..n)
                .map(|_| {
                    s ^= s << 13;
                    s ^= s >> 17;
                    s ^= s << 5;
                    (s % 0x3C01) as u16
                })
                .collect();
            let sum: f64 = e.iter().map(|&h| f16::to_f32(h) as f64).sum();
            let got = recip_of_sum(&e);
            if sum == 0.0 {
                assert_eq!(got, f16::POS_INF);
                continue;
            }
            let q = 1.0 / sum;
            if far_from_f16_boundaries(q, got) {
                assert_eq!(got, f16::from_f64_rne(q), "{e:x?}");
            }
        }
        assert_eq!(recip_of_sum(&[f16::ONE; 4]), 0x3400);
        assert_eq!(recip_of_sum(&[f16::ONE, f16::QNAN]), f16::QNAN);
    }

    #[test]
    fn tail_softmax_sums_to_one() {
        let l: Vec<F16> = [0.5f32, -1.0, 2.0, 0.0, 3.5, -7.0, 1.25, 0.75, -0.5, 2.5]
            .iter()
            .map(|&v| f16::from_f32_rne(v))
            .collect();
        let mut p = [0u16; TAIL_TAPS];
        tail_softmax(&l, &mut p);
        let total: f32 = p.iter().map(|&h| f16::to_f32(h)).sum();
        assert!((total - 1.0).abs() < 4e-3, "{total}");
        // The largest logit has d = 0, e = 1, p = r.
        let r = recip_of_sum(
            &l.iter()
                .map(|&v| exp(f16::add(v, f16::neg(f16::from_f32_rne(3.5)))))
                .collect::<Vec<_>>(),
        );
        assert_eq!(p[4], r);
        // Shift invariance of the definition: adding a constant that keeps every d the same.
        let l2: Vec<F16> = l.iter().map(|&v| f16::add(v, f16::ONE)).collect();
        let mut p2 = [0u16; TAIL_TAPS];
        tail_softmax(&l2, &mut p2);
        assert_eq!(p, p2);
        // NaN logits are skipped by the max but poison the sum.
        let mut l3 = l.clone();
        l3[2] = f16::QNAN;
        tail_softmax(&l3, &mut p2);
        assert!(p2.iter().all(|&h| f16::is_nan(h)));
    }
}
