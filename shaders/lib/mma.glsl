// MMA group models with integer arithmetic (spec nr-network.md 2.2-2.3, h200-tensor-numerics.md 5).
//
// One group: E = max(exp(acc) if acc is nonzero, exp(a_i) + exp(b_i) over nonzero products);
// sum = trunc(acc * 2^(P-E)) + sum_i trunc(a_i*b_i * 2^(P-E)) (each term truncated toward zero,
// exact integer sum); result = f16 RNE of sum * 2^(E-P); any zero result is +0; an inf/NaN
// accumulator passes through unchanged.
//   F13: E4M3 operands, G = 16, P = 13 (E4M3 subnormals have exponent -6).
//   F24: f16 operands, G = 8, P = 24 (the adapter and the head).
//   H25: f16 operands, G = 16 (8 for 16x8x8), P = 25 (the H200's f16 tensor cores).
// Positive and negative terms are summed apart in uint: every |term| < 2^27 and G <= 16, so each
// partial sum stays below 2^32 without 64-bit integers.
// f16 operands that are inf/NaN (not covered by the spec) propagate IEEE-like: a NaN product
// (NaN operand, inf * 0) or infinities of both signs give F16_QNAN, else the infinity present;
// a NaN accumulator is returned unchanged.
#ifndef OPENNGX_MMA_GLSL
#define OPENNGX_MMA_GLSL
#include "f16.glsl"
#include "e4m3.glsl"

const int MMA_NO_EXPONENT = -1000;

// trunc(sig * 2^k), magnitude only.
uint mma_scaled(uint sig, int k) {
    if (k >= 0) {
        return sig << uint(k);
    }
    return k <= -32 ? 0u : (sig >> uint(-k));
}

// The accumulator's contribution: exponent (or MMA_NO_EXPONENT for zero) and scaled magnitude.
int mma_acc_exponent(uint acc) {
    return f16_is_zero(acc) ? MMA_NO_EXPONENT : f16_exponent(acc);
}

uint mma_acc_term(uint acc, int E, int P) {
    return mma_scaled(f16_significand(acc), f16_exponent(acc) - 10 + P - E);
}

// E4M3 pair: exponent sum of a nonzero product, else MMA_NO_EXPONENT.
int mma_e4m3_exponent(uint a, uint b) {
    if (e4m3_significand(a) == 0u || e4m3_significand(b) == 0u) {
        return MMA_NO_EXPONENT;
    }
    return e4m3_exponent(a) + e4m3_exponent(b);
}

uint mma_e4m3_term(uint a, uint b, int E, int P) {
    uint sig = e4m3_significand(a) * e4m3_significand(b);
    return mma_scaled(sig, e4m3_exponent(a) + e4m3_exponent(b) - 6 + P - E);
}

int mma_f16_exponent(uint a, uint b) {
    if (f16_is_zero(a) || f16_is_zero(b)) {
        return MMA_NO_EXPONENT;
    }
    return f16_exponent(a) + f16_exponent(b);
}

uint mma_f16_term(uint a, uint b, int E, int P) {
    uint sig = f16_significand(a) * f16_significand(b);
    return mma_scaled(sig, f16_exponent(a) + f16_exponent(b) - 20 + P - E);
}

// The accumulator's term (none for a zero accumulator) into the positive or negative sum.
void mma_add_acc_term(uint acc, int E, int P, inout uint pos, inout uint neg) {
    if (!f16_is_zero(acc)) {
        uint t = mma_acc_term(acc, E, P);
        if ((acc & 0x8000u) != 0u) {
            neg += t;
        } else {
            pos += t;
        }
    }
}

// The group result from the split sums (E from pass 1).
uint mma_finish(uint pos, uint neg, int E, int P) {
    uint mag = pos >= neg ? pos - neg : neg - pos;
    uint sign = pos >= neg ? 0u : 0x8000u;
    uint r = f16_round_fixed_rne(mag, E - P, sign);
    return f16_is_zero(r) ? F16_POS_ZERO : r;
}

// One group of n <= 16 E4M3 products (F13 with P = 13).
uint mma_group_e4m3(uint acc, uint a[16], uint b[16], int n, int P) {
    if (f16_is_nonfinite(acc)) {
        return acc;
    }
    int E = mma_acc_exponent(acc);
    for (int i = 0; i < n; i++) {
        E = max(E, mma_e4m3_exponent(a[i], b[i]));
    }
    if (E == MMA_NO_EXPONENT) {
        return F16_POS_ZERO;
    }
    uint pos = 0u;
    uint neg = 0u;
    mma_add_acc_term(acc, E, P, pos, neg);
    for (int i = 0; i < n; i++) {
        uint t = mma_e4m3_term(a[i], b[i], E, P);
        if (((a[i] ^ b[i]) & 0x80u) != 0u) {
            neg += t;
        } else {
            pos += t;
        }
    }
    return mma_finish(pos, neg, E, P);
}

// One group of n <= 16 f16 products (F24: n = 8, P = 24; H25: n = 16 or 8, P = 25).
uint mma_group_f16(uint acc, uint a[16], uint b[16], int n, int P) {
    if (f16_is_nan(acc)) {
        return acc;
    }
    // IEEE-like propagation for inf/NaN operands (same reading as src/numerics/mma.rs).
    bool nan = false;
    bool pos_inf = acc == F16_POS_INF;
    bool neg_inf = acc == F16_NEG_INF;
    for (int i = 0; i < n; i++) {
        bool an = f16_is_nan(a[i]);
        bool bn = f16_is_nan(b[i]);
        bool ai = f16_is_inf(a[i]);
        bool bi = f16_is_inf(b[i]);
        if (an || bn || (ai && f16_is_zero(b[i])) || (bi && f16_is_zero(a[i]))) {
            nan = true;
        } else if (ai || bi) {
            if (((a[i] ^ b[i]) & 0x8000u) != 0u) {
                neg_inf = true;
            } else {
                pos_inf = true;
            }
        }
    }
    if (nan || (pos_inf && neg_inf)) {
        return F16_QNAN;
    }
    if (f16_is_inf(acc)) {
        return acc;
    }
    if (pos_inf || neg_inf) {
        return neg_inf ? F16_NEG_INF : F16_POS_INF;
    }
    int E = mma_acc_exponent(acc);
    for (int i = 0; i < n; i++) {
        E = max(E, mma_f16_exponent(a[i], b[i]));
    }
    if (E == MMA_NO_EXPONENT) {
        return F16_POS_ZERO;
    }
    uint pos = 0u;
    uint neg = 0u;
    mma_add_acc_term(acc, E, P, pos, neg);
    for (int i = 0; i < n; i++) {
        if (f16_is_zero(a[i]) || f16_is_zero(b[i])) {
            continue;
        }
        uint t = mma_f16_term(a[i], b[i], E, P);
        if (((a[i] ^ b[i]) & 0x8000u) != 0u) {
            neg += t;
        } else {
            pos += t;
        }
    }
    return mma_finish(pos, neg, E, P);
}

// Operands of mma_group_f16_finite, decoded once: significand | sign << 31, and the exponent or
// MMA_ZERO_EXP for a zero (a product with a zero then sums below MMA_NO_EXPONENT, so it never
// sets the group exponent, and its significand 0 gives a zero term).
const int MMA_ZERO_EXP = 2 * MMA_NO_EXPONENT;
uint mma_f16_decoded_sig(uint h) { return f16_significand(h) | ((h & 0x8000u) << 16); }
int mma_f16_decoded_exp(uint h) { return f16_is_zero(h) ? MMA_ZERO_EXP : f16_exponent(h); }

// mma_group_f16 when all n operand pairs are finite (decoded as above; the accumulator may be
// anything): the same result, for the kernels that decode their operands once and reuse them
// (the adapter and the head).
uint mma_group_f16_finite(uint acc, uint as_[16], int ae[16], uint bs[16], int be[16], int n,
                          int P) {
    if (f16_is_nonfinite(acc)) {
        return acc; // finite operands: inf and NaN accumulators pass through
    }
    int E = mma_acc_exponent(acc);
    for (int i = 0; i < n; i++) {
        E = max(E, ae[i] + be[i]);
    }
    if (E == MMA_NO_EXPONENT) {
        return F16_POS_ZERO;
    }
    uint pos = 0u;
    uint neg = 0u;
    mma_add_acc_term(acc, E, P, pos, neg);
    for (int i = 0; i < n; i++) {
        uint sig = (as_[i] & 0x7FFFFFFFu) * (bs[i] & 0x7FFFFFFFu);
        // trunc(sig * 2^(ae + be - 20 + P - E)) as mma_f16_term: E >= ae + be for a nonzero
        // product and sig << (P - 20) < 2^27 (P <= 25); a zero product is 0 whatever the shift.
        int d = E - ae[i] - be[i];
        uint t = P >= 20 ? (sig << uint(max(P - 20, 0))) >> uint(min(d, 31))
                         : sig >> uint(min(d + 20 - P, 31));
        if (((as_[i] ^ bs[i]) & 0x80000000u) != 0u) {
            neg += t;
        } else {
            pos += t;
        }
    }
    return mma_finish(pos, neg, E, P);
}

uint mma_f13_group(uint acc, uint a[16], uint b[16]) { return mma_group_e4m3(acc, a, b, 16, 13); }
uint mma_f24_group(uint acc, uint a[16], uint b[16]) { return mma_group_f16(acc, a, b, 8, 24); }
uint mma_h25_group(uint acc, uint a[16], uint b[16], int g) { return mma_group_f16(acc, a, b, g, 25); }

#endif
