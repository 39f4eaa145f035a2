// The cubic window softmax weight (mirror of src/numerics/rr/cubic.rs; spec rr-network.md 5.3):
// m = clamp(f16(x * 0x2466), -0x3873, 0x3873) (PTX max then min: NaN takes the low end),
// t = f16(m * -m + 0x3B6B), u = f16(m * t + 0x3D80) (single-rounding FMAs),
// e = (bits(u) << 5) & 0x7FE0. The row reciprocal is recip() of the lanes-tree sum.
#ifndef OPENNGX_RR_CUBIC_GLSL
#define OPENNGX_RR_CUBIC_GLSL
#include "f16.glsl"

// max/min of halves with PTX semantics: a NaN operand yields the other one.
uint rr_max(uint a, uint b) {
    if (f16_is_nan(a)) {
        return b;
    }
    if (f16_is_nan(b)) {
        return a;
    }
    return f16_to_f32(b) > f16_to_f32(a) ? b : a;
}

uint rr_min(uint a, uint b) {
    if (f16_is_nan(a)) {
        return b;
    }
    if (f16_is_nan(b)) {
        return a;
    }
    return f16_to_f32(b) < f16_to_f32(a) ? b : a;
}

uint rr_cubic_exp(uint x) {
    uint m = rr_min(rr_max(f16_mul(x, 0x2466u), 0xB873u), 0x3873u);
    uint t = f16_fma(m, f16_neg(m), 0x3B6Bu);
    uint u = f16_fma(m, t, 0x3D80u);
    return (u << 5) & 0x7FE0u;
}

#endif
