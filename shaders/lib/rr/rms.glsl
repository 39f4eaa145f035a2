// The RMS norm (mirror of src/numerics/rr/rms.rs; spec rr-network.md 5.2): sumsq of f16 squares
// in the lanes tree, inv = rsqrt(f16(sumsq + eps)) correctly rounded, out = f16(x * f16(inv * g)).
#ifndef OPENNGX_RR_RMS_GLSL
#define OPENNGX_RR_RMS_GLSL
#include "f16.glsl"
#include "recip.glsl"

const uint RR_EPS = 0x0800u;               // 2^-13
const uint RR_EPS_ENC0_ATTENTION = 0x1400u; // 2^-10

uint rr_square(uint x) { return f16_mul(x, x); }

uint rr_inv_root(uint sumsq, uint eps) { return rsqrt(f16_add(sumsq, eps)); }

uint rr_norm_apply(uint x, uint inv, uint gain) { return f16_mul(x, f16_mul(inv, gain)); }

#endif
