// Cosine normalisation of one 32-channel head vector (mirror of src/numerics/norm.rs; spec
// nr-network.md 2.5, 7.3, 8.9): r[c] = f16(v[c]^2 + f16(v[c+16]^2)) for c < 16 (the low square
// and the add one fused half FMA), stride tree 8/4/2/1 of f16 adds, norm = f16(1/sqrt(r[0]))
// correctly rounded (+0 -> +inf, so a zero row gives 0*inf = NaN, published as E4M3 +0).
#ifndef OPENNGX_NORM_GLSL
#define OPENNGX_NORM_GLSL
#include "f16.glsl"
#include "ops.glsl"
#include "recip.glsl"

const uint NORM_VIT_Q_SCALE = 0x45A8u; // 5.65625 = f16(sqrt 32)

uint norm_sum_squares(uint v[32]) {
    uint r[16];
    for (int c = 0; c < 16; c++) {
        r[c] = sumsq_pair(v[c], v[c + 16]);
    }
    for (int s = 8; s >= 1; s >>= 1) {
        for (int c = 0; c < s; c++) {
            r[c] = f16_add(r[c], r[c + s]);
        }
    }
    return r[0];
}

uint norm_cosine(uint v[32]) { return rsqrt(norm_sum_squares(v)); }

#endif
