// SiLU, NVIDIA's cubic "MpCubicSiLU" (spec nr-network.md 2.4, 8.6):
//   b = clamp(x, -4, 4); p = f16(-0.055908203125*|b| + 0.447265625); p = f16(b*p + 0.89453125);
//   out = f16(x * p) with x unclamped. Each "fma" is exact, then rounded once to f16.
// Kernels may instead read a 65536-entry table built on the host from the Rust function; both
// give the same bytes.
#ifndef OPENNGX_SILU_GLSL
#define OPENNGX_SILU_GLSL
#include "f16.glsl"

const uint SILU_C3 = 0xAB28u; // -0.055908203125
const uint SILU_C2 = 0x3728u; //  0.447265625
const uint SILU_C1 = 0x3B28u; //  0.89453125
const uint SILU_CLAMP = 0x4400u; // 4.0

uint silu(uint x) {
    uint b = x;
    if (f16_is_nan(x)) {
        b = SILU_CLAMP | 0x8000u; // min/max semantics; the product with x is NaN anyway
    } else if ((x & 0x7FFFu) > SILU_CLAMP) {
        b = (x & 0x8000u) | SILU_CLAMP;
    }
    uint p = f16_fma(SILU_C3, b & 0x7FFFu, SILU_C2);
    p = f16_fma(b, p, SILU_C1);
    return f16_mul(x, p);
}

#endif
