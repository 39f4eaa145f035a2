// Ray Reconstruction's GEMM step (mirror of src/numerics/rr/k32.rs; spec rr-network.md 5.1):
// D = f16(C + sum of a k32 slice of E4M3 products), the sum exact, one RNE rounding per step,
// every zero result +0, any NaN code among the operands (or a NaN C) -> 0x7E00, an infinite C
// passes unchanged. Exact in 32-bit integers: an E4M3 code is an integer multiple of 2^-9 below
// 2^18, so a product is an integer at 2^-18 below 2^36 (umulExtended); C and the products are
// summed at 2^-24 as 64-bit magnitudes (two words, positive and negative parts apart), which a
// step keeps below 2^47.
#ifndef OPENNGX_RR_K32_GLSL
#define OPENNGX_RR_K32_GLSL
#include "f16.glsl"
#include "rr/q8.glsl"

struct RrAcc {
    uint pos_lo;
    uint pos_hi;
    uint neg_lo;
    uint neg_hi;
    // 0: finite; otherwise the f16 the step returns (an infinite C, or F16_QNAN).
    uint special;
};

// v << s as a 64-bit value (v < 2^32, s < 64).
void rr_shl64(uint v, uint s, out uint lo, out uint hi) {
    if (s == 0u) {
        lo = v;
        hi = 0u;
    } else if (s < 32u) {
        lo = v << s;
        hi = v >> (32u - s);
    } else {
        lo = 0u;
        hi = v << (s - 32u);
    }
}

void rr_acc_add(inout RrAcc a, bool neg, uint lo, uint hi) {
    uint carry;
    if (neg) {
        a.neg_lo = uaddCarry(a.neg_lo, lo, carry);
        a.neg_hi = a.neg_hi + hi + carry;
    } else {
        a.pos_lo = uaddCarry(a.pos_lo, lo, carry);
        a.pos_hi = a.pos_hi + hi + carry;
    }
}

// Start a step from the accumulator C (a half).
RrAcc rr_acc_begin(uint c) {
    RrAcc a = RrAcc(0u, 0u, 0u, 0u, 0u);
    if (f16_is_nan(c)) {
        a.special = F16_QNAN;
    } else if (f16_is_inf(c)) {
        a.special = c;
    } else if (!f16_is_zero(c)) {
        uint e = (c >> 10) & 0x1Fu;
        uint m = c & 0x3FFu;
        uint lo;
        uint hi;
        // value * 2^24: subnormal m, normal (m | 0x400) << (e - 1).
        rr_shl64(e == 0u ? m : (m | 0x400u), e == 0u ? 0u : e - 1u, lo, hi);
        rr_acc_add(a, (c & 0x8000u) != 0u, lo, hi);
    }
    return a;
}

// |value| * 2^9 of a finite code (an integer below 2^18).
uint rr_code_magnitude(uint c) {
    uint e = (c >> 3) & 0xFu;
    uint m = c & 7u;
    return e == 0u ? m : ((m | 8u) << (e - 1u));
}

// Add the product of two codes.
void rr_acc_mac(inout RrAcc a, uint ca, uint cb) {
    if (rr_q8_is_nan(ca) || rr_q8_is_nan(cb)) {
        a.special = F16_QNAN;
        return;
    }
    uint hi;
    uint lo;
    umulExtended(rr_code_magnitude(ca), rr_code_magnitude(cb), hi, lo);
    // From 2^-18 to 2^-24: shift left by 6 (the product is below 2^36, so hi < 16).
    hi = (hi << 6u) | (lo >> 26u);
    lo = lo << 6u;
    rr_acc_add(a, ((ca ^ cb) & 0x80u) != 0u, lo, hi);
}

// Round the step's exact sum to f16 (RNE; zero -> +0; overflow -> +-inf).
uint rr_acc_round(RrAcc a) {
    if (a.special == F16_QNAN) {
        return F16_QNAN;
    }
    if (a.special != 0u) {
        return a.special;
    }
    // Signed difference pos - neg as sign and 64-bit magnitude.
    bool neg = a.neg_hi > a.pos_hi || (a.neg_hi == a.pos_hi && a.neg_lo > a.pos_lo);
    uint borrow;
    uint lo;
    uint hi;
    if (neg) {
        lo = usubBorrow(a.neg_lo, a.pos_lo, borrow);
        hi = a.neg_hi - a.pos_hi - borrow;
    } else {
        lo = usubBorrow(a.pos_lo, a.neg_lo, borrow);
        hi = a.pos_hi - a.neg_hi - borrow;
    }
    if (lo == 0u && hi == 0u) {
        return 0u;
    }
    uint sign = neg ? 0x8000u : 0u;
    int msb = hi != 0u ? 32 + findMSB(hi) : findMSB(lo);
    int ue = msb - 24;
    if (ue > 15) {
        return sign | F16_POS_INF;
    }
    int lsb_exp = ue >= -14 ? ue - 10 : -24;
    uint drop = uint(lsb_exp + 24); // 0..29: the dropped bits are all in lo
    uint q;
    if (drop == 0u) {
        q = lo;
    } else {
        uint kept = (lo >> drop) | (drop == 0u ? 0u : (hi << (32u - drop)));
        uint rem = lo & ((1u << drop) - 1u);
        uint halfway = 1u << (drop - 1u);
        q = kept + ((rem > halfway || (rem == halfway && (kept & 1u) == 1u)) ? 1u : 0u);
    }
    uint bits = lsb_exp == -24 ? q : ((uint(lsb_exp + 24) << 10) + q);
    if (bits >= 0x7C00u) {
        return sign | F16_POS_INF;
    }
    return bits == 0u ? 0u : (sign | bits);
}

// The same step in fewer operations (what the RR kernels use): each code decoded once to a signed
// significand m (|m| <= 15) and a shift s (<= 14), |value| * 2^9 = |m| << s; a product is
// m_a m_b << (s_a + s_b) (|m_a m_b| <= 225, shift <= 28). Products with a shift below 16 are
// summed in `lo` (each below 2^23, 32 of them below 2^28), the others as (m_a m_b << (shift - 16))
// in `hi` (each below 2^20, 32 below 2^25): both exact in signed 32-bit integers, joined once per
// step as hi * 2^16 + lo at 2^-18 and added to C with rr_acc_round's rounding.
struct RrCode {
    int m;
    uint s;
    bool nan;
};

RrCode rr_code(uint c) {
    uint e = (c >> 3) & 0xFu;
    uint m = c & 7u;
    int mag = int(e == 0u ? m : (m | 8u));
    return RrCode((c & 0x80u) != 0u ? -mag : mag, e == 0u ? 0u : e - 1u, rr_q8_is_nan(c));
}

struct RrStep {
    int lo;
    int hi;
    bool nan;
};

const RrStep RR_STEP_ZERO = RrStep(0, 0, false);

void rr_step_mac(inout RrStep st, RrCode a, RrCode b) {
    uint s = a.s + b.s;
    int v = (a.m * b.m) << (s & 15u);
    bool high = s >= 16u;
    st.lo += high ? 0 : v;
    st.hi += high ? v : 0;
    st.nan = st.nan || a.nan || b.nan;
}

// f16(c + the step's products), as rr_acc_round of the same sum.
uint rr_step_round(RrStep st, uint c) {
    RrAcc a = rr_acc_begin(c);
    if (st.nan) {
        a.special = F16_QNAN;
        return rr_acc_round(a);
    }
    // t = hi * 2^16 + lo as a signed 64-bit (t_hi, t_lo), |t| < 2^42.
    uint t_lo = uint(st.hi) << 16u;
    int t_hi = st.hi >> 16;
    uint carry;
    t_lo = uaddCarry(t_lo, uint(st.lo), carry);
    t_hi = t_hi + (st.lo < 0 ? -1 : 0) + int(carry);
    bool neg = t_hi < 0;
    uint m_lo = t_lo;
    uint m_hi = uint(t_hi);
    if (neg) {
        // Two's complement negation of the 64-bit value.
        m_lo = ~m_lo + 1u;
        m_hi = ~m_hi + (m_lo == 0u ? 1u : 0u);
    }
    // From 2^-18 to 2^-24.
    uint hi = (m_hi << 6u) | (m_lo >> 26u);
    uint lo = m_lo << 6u;
    rr_acc_add(a, neg, lo, hi);
    return rr_acc_round(a);
}

#endif
