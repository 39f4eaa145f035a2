// One MMA group of 16 E4M3 products on packed operands, with the profile as parameters
// (mirror of src/numerics/mma.rs for E4M3 operands; spec nr-network.md 2.2, 8.2,
// h200-tensor-numerics.md 5). The attention kernels keep q/k/v/P as E4M3 codes packed four per
// uint (little-endian bytes), so a 16-group is one uvec4 per operand.
//
//   E = max(exp(acc) if acc != 0, exp(a_i) + exp(b_i) over nonzero products)
//   sum = trunc(acc * 2^(P-E)) + sum_i trunc(a_i*b_i * 2^(P-E));  result = f16 RNE, zero -> +0.
//
// `widened` selects the exponent an E4M3 subnormal m*2^-9 contributes to E: false = the format's
// minimum normal exponent -6 (native F13), true = its true exponent msb(m) - 9 (an f16 route that
// widens E4M3 first, H25). The value itself (sig * 2^lsb) does not depend on it. Every term is
// below 2^(P+2) and the accumulator's below 2^(P+1), so with P <= 25 the positive and negative
// partial sums of 16 terms fit a uint.
#ifndef OPENNGX_MMA_E4_GLSL
#define OPENNGX_MMA_E4_GLSL
#include "mma.glsl"

// Code i (0..15) of a packed 16-group.
uint mma_e4_code(uvec4 v, uint i) { return (v[i >> 2u] >> (8u * (i & 3u))) & 0xFFu; }

// Exponent a nonzero code contributes to E.
int mma_e4_eexp(uint c, bool widened) {
    uint e = (c >> 3) & 0xFu;
    if (e == 0u) {
        return widened ? findMSB(c & 7u) - 9 : -6;
    }
    return int(e) - 7;
}

// One group: acc (f16 bits) plus the 16 products a_i * b_i. The products are decoded twice
// (for E, then for the terms) instead of being kept in arrays: smaller code, faster to compile.
uint mma_e4_group(uint acc, uvec4 a, uvec4 b, int P, bool widened) {
    if (f16_is_nonfinite(acc)) {
        return acc;
    }
    int E = mma_acc_exponent(acc);
    for (uint i = 0u; i < 16u; i++) {
        uint ca = mma_e4_code(a, i);
        uint cb = mma_e4_code(b, i);
        if (e4m3_significand(ca) * e4m3_significand(cb) != 0u) {
            E = max(E, mma_e4_eexp(ca, widened) + mma_e4_eexp(cb, widened));
        }
    }
    if (E == MMA_NO_EXPONENT) {
        return F16_POS_ZERO;
    }
    uint pos = 0u;
    uint neg = 0u;
    if (!f16_is_zero(acc)) {
        uint t = mma_acc_term(acc, E, P);
        if ((acc & 0x8000u) != 0u) {
            neg += t;
        } else {
            pos += t;
        }
    }
    for (uint i = 0u; i < 16u; i++) {
        uint ca = mma_e4_code(a, i);
        uint cb = mma_e4_code(b, i);
        // value = sig * 2^lsb with lsb = exponent - 3 of each code in the format's convention.
        uint t = mma_scaled(e4m3_significand(ca) * e4m3_significand(cb),
                            e4m3_exponent(ca) + e4m3_exponent(cb) - 6 + P - E);
        if (((ca ^ cb) & 0x80u) != 0u) {
            neg += t;
        } else {
            pos += t;
        }
    }
    return mma_finish(pos, neg, E, P);
}

#endif
