// Correctly rounded f16 reciprocal and reciprocal square root (spec nr-network.md 2.5, 2.7, 2.8:
// native .approx.ftz then cvt.rn.f16 equals the correctly rounded half for every half input).
// A float estimate gives a candidate; exact integer tests against the midpoints between
// neighbouring halves move it to the correctly rounded result. No midpoint can be hit exactly
// (the midpoint significand is odd and > 1), so there are no ties.
// Special values follow IEEE: rcp(+-0) = +-inf, rcp(+-inf) = +-0, rsqrt(+0) = +inf,
// rsqrt(-0) = -inf, rsqrt(+inf) = +0, rsqrt(x < 0) = NaN; NaN results are F16_QNAN.
#ifndef OPENNGX_RECIP_GLSL
#define OPENNGX_RECIP_GLSL
#include "f16.glsl"

// true when Q * 2^-k < 1, i.e. Q < 2^k, for the 64-bit Q = hi:lo.
bool recip_below_pow2(uint hi, uint lo, int k) {
    if (k <= 0) {
        return false; // Q >= 1 always here
    }
    if (k >= 64) {
        return true;
    }
    if (k >= 32) {
        return hi < (1u << uint(k - 32));
    }
    return hi == 0u && lo < (1u << uint(k));
}

// 1/x > midpoint(h, h + 1 ulp) for positive finite x (= mx * 2^ex) and positive finite h.
// midpoint m = (2*sig(h) + 1) * 2^(exp(h) - 11); test m * x < 1.
bool rcp_above_mid(uint mx, int ex, uint h) {
    uint o = 2u * f16_significand(h) + 1u;
    uint hi;
    uint lo;
    umulExtended(o, mx, hi, lo);
    return recip_below_pow2(hi, lo, -(f16_exponent(h) - 11 + ex));
}

// 1/sqrt(x) > midpoint above h: test m^2 * x < 1.
bool rsqrt_above_mid(uint mx, int ex, uint h) {
    uint o = 2u * f16_significand(h) + 1u;
    uint hi;
    uint lo;
    umulExtended(o * o, mx, hi, lo);
    return recip_below_pow2(hi, lo, -(2 * (f16_exponent(h) - 11) + ex));
}

uint recip(uint x) {
    uint sign = x & 0x8000u;
    uint ax = x & 0x7FFFu;
    if (f16_is_nan(x)) {
        return F16_QNAN;
    }
    if (ax == 0u) {
        return sign | F16_POS_INF;
    }
    if (ax == F16_POS_INF) {
        return sign;
    }
    uint mx = f16_significand(ax);
    int ex = f16_exponent(ax) - 10;
    uint h = f16_from_f32_rne(1.0 / f16_to_f32(ax)) & 0x7FFFu;
    h = min(h, F16_POS_INF);
    for (int i = 0; i < 4 && h < F16_POS_INF && rcp_above_mid(mx, ex, h); i++) {
        h += 1u;
    }
    for (int i = 0; i < 4 && h > 0u && !rcp_above_mid(mx, ex, h - 1u); i++) {
        h -= 1u;
    }
    return sign | h;
}

uint rsqrt(uint x) {
    if (f16_is_nan(x)) {
        return F16_QNAN;
    }
    if (f16_is_zero(x)) {
        return (x & 0x8000u) | F16_POS_INF;
    }
    if ((x & 0x8000u) != 0u) {
        return F16_QNAN;
    }
    if (x == F16_POS_INF) {
        return F16_POS_ZERO;
    }
    uint mx = f16_significand(x);
    int ex = f16_exponent(x) - 10;
    uint h = f16_from_f32_rne(inversesqrt(f16_to_f32(x))) & 0x7FFFu;
    h = min(h, F16_MAX);
    for (int i = 0; i < 4 && rsqrt_above_mid(mx, ex, h); i++) {
        h += 1u;
    }
    for (int i = 0; i < 4 && h > 0u && !rsqrt_above_mid(mx, ex, h - 1u); i++) {
        h -= 1u;
    }
    return h;
}

#endif
