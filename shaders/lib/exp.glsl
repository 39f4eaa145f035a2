// The exponential bit tricks of the attention softmax (spec nr-network.md 2.6, 8.5, 8.7).
// Window: x = f16(f32 fma(0.044921875, s, 1.30078125)) (the f32 product is exact, so a plain f32
//   add after it is the fused f32 FMA), clamp to [1.03125, 1.5693359375],
//   bits = ((bits(x) << 5) ^ 0x8000) & 0xFFFF.
// ViT: x = f16(0.08953857421875*s + 1.708984375) (half FMA, one rounding), clamp to
//   [1.439453125, 1.9775390625], bits = ((bits(x) << 4) + 0x4000) & 0xFFFF.
// Clamps use min/max semantics: a NaN score takes the low end, +-inf the ends.
#ifndef OPENNGX_EXP_GLSL
#define OPENNGX_EXP_GLSL
#include "f16.glsl"

const uint EXPW_LO = 0x3C20u; // 1.03125
const uint EXPW_HI = 0x3E47u; // 1.5693359375
const uint EXPV_SCALE = 0x2DBBu; // 0.08953857421875
const uint EXPV_BIAS = 0x3ED6u; // 1.708984375
const uint EXPV_LO = 0x3DC2u; // 1.439453125
const uint EXPV_HI = 0x3FE9u; // 1.9775390625
// exp weight of a zero score in the ViT (the padding correction uses it).
const uint EXPV_OF_ZERO = 0x2D60u; // 0.083984375

uint exp_window(uint s) {
    precise float prod = 0.044921875 * f16_to_f32(s);
    precise float y = prod + 1.30078125;
    uint x = f16_clamp(f16_from_f32_rne(y), EXPW_LO, EXPW_HI);
    return ((x << 5) ^ 0x8000u) & 0xFFFFu;
}

uint exp_vit(uint s) {
    uint x = f16_clamp(f16_fma(EXPV_SCALE, s, EXPV_BIAS), EXPV_LO, EXPV_HI);
    return ((x << 4) + 0x4000u) & 0xFFFFu;
}

#endif
