//! The fixed f16 addition tree of a row held in MMA fragments (spec rr-network §5.2, §5.3).
//!
//! An m16n8 C/D fragment gives lane `(g, t)` (g = lane >> 2, t = lane & 3) the columns `2t` and
//! `2t + 1` of every 8-column n-tile of row g. A row is therefore spread over the four lanes of a
//! quad, each holding one packed f16 pair per n-tile. NVIDIA sums such a row as follows, and the
//! order is part of the result (f16 addition does not associate):
//!
//! 1. In each lane, per pair half, the even n-tiles and the odd n-tiles separately:
//!    `A = ((e0 + e2) + (e4 + e6)) + (e8 + e10)` for 12 tiles (the softmax row of 96 keys),
//!    `A = e0 + e2` for 4 tiles (enc0's norm, C = 32), `B` the same over e1, e3, ...; then `A + B`.
//!    For other tile counts (C = 64..160: 8, 12, 16, 20 tiles) openngx reads the pattern as its
//!    general form: pairs `e_{4j} + e_{4j+2}` folded from the left, `((p0 + p1) + p2) + ...`,
//!    which gives both stated trees.
//! 2. Butterflies over the quad: lane xor 1, then lane xor 2 (packed f16x2 adds), so every lane
//!    ends with `(S0 + S1) + (S2 + S3)` per half.
//! 3. The two halves (even columns, odd columns) added with one f16 add.

use crate::numerics::f16::{self, F16};

/// n-tile width in columns.
pub const TILE: usize = 8;

/// The tree sum of one row `v` in GEMM column order; `v.len()` must be a positive multiple of 32
/// (whole groups of four n-tiles).
pub fn row_sum(v: &[F16]) -> F16 {
    assert!(
        !v.is_empty() && v.len() % 32 == 0,
        "row_sum: {} columns",
        v.len()
    );
    let tiles = v.len() / TILE;
    let half = |h: usize| -> F16 {
        let lane = |t: usize| -> F16 {
            let e = |i: usize| v[TILE * i + 2 * t + h];
            let side = |odd: usize| -> F16 {
                (0..tiles / 4)
                    .map(|j| f16::add(e(4 * j + odd), e(4 * j + 2 + odd)))
                    .reduce(f16::add)
                    .unwrap_or(f16::POS_ZERO)
            };
            f16::add(side(0), side(1))
        };
        f16::add(f16::add(lane(0), lane(1)), f16::add(lane(2), lane(3)))
    };
    f16::add(half(0), half(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Small integers (exact in f16) summed by the tree give the exact sum.
    #[test]
    fn exact_on_integers() {
        for n in [32, 64, 96, 128, 160] {
            let v: Vec<F16> = (0..n).map(|i| f16::from_f32_rne((i % 7) as f32)).collect();
            let want: f32 = (0..n).map(|i| (i % 7) as f32).sum();
            assert_eq!(f16::to_f32(row_sum(&v)), want, "{n}");
        }
    }

    /// The stated trees, written out by hand, on values where the order changes the result.
    #[test]
    fn stated_trees() {
        let mut s = 0x2468_ACE1u32;
        let mut next = || {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            (s as u16 & 0x03FF) | (((s >> 16) as u16 % 6 + 13) << 10)
        };
        let add = f16::add;
        let mut differs = 0;
        for _ in 0..2000 {
            // 96 columns: per (t, h) A = ((e0+e2)+(e4+e6))+(e8+e10), B odd, A+B; butterflies.
            let v: Vec<F16> = (0..96).map(|_| next()).collect();
            let e = |i: usize, t: usize, h: usize| v[8 * i + 2 * t + h];
            let s_th = |t: usize, h: usize| {
                let a = add(
                    add(add(e(0, t, h), e(2, t, h)), add(e(4, t, h), e(6, t, h))),
                    add(e(8, t, h), e(10, t, h)),
                );
                let b = add(
                    add(add(e(1, t, h), e(3, t, h)), add(e(5, t, h), e(7, t, h))),
                    add(e(9, t, h), e(11, t, h)),
                );
                add(a, b)
            };
            let w = |h: usize| add(add(s_th(0, h), s_th(1, h)), add(s_th(2, h), s_th(3, h)));
            assert_eq!(row_sum(&v), add(w(0), w(1)));
            // 32 columns: (n0 + n2) + (n1 + n3).
            let v32 = &v[..32];
            let e = |i: usize, t: usize, h: usize| v32[8 * i + 2 * t + h];
            let s_th =
                |t: usize, h: usize| add(add(e(0, t, h), e(2, t, h)), add(e(1, t, h), e(3, t, h)));
            let w = |h: usize| add(add(s_th(0, h), s_th(1, h)), add(s_th(2, h), s_th(3, h)));
            assert_eq!(row_sum(v32), add(w(0), w(1)));
            // The order matters on this data: a plain left-to-right sum differs somewhere.
            let seq = v.iter().copied().reduce(add).unwrap();
            differs += usize::from(seq != row_sum(&v));
        }
        assert!(differs > 100, "{differs}");
    }
}
