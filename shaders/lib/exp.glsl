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

// Computed in integers so that the result does not depend on the shader's f32 rounding mode (the
// RTZ attention kernel includes this too). With s = sig * 2^(es - 10): |s| >= 8 clamps (the
// affine is then outside [LO, HI] and rounding is monotonic); otherwise y is held in units of
// 2^-26 (the product 23 * sig * 2^(es - 19) has its lowest bit at 2^-33, so a sticky bit keeps
// what is shifted out), rounded RNE to f32 (ulp 2^-23 on [1, 2); y < 1 clamps to LO anyway),
// then RNE to f16 (ulp 2^-10).
uint exp_window(uint s) {
    uint neg = s & 0x8000u;
    if (f16_is_nan(s)) {
        return ((EXPW_LO << 5) ^ 0x8000u) & 0xFFFFu;
    }
    int es = f16_exponent(s);
    uint x;
    if (f16_is_inf(s) || es >= 3) {
        x = neg != 0u ? EXPW_LO : EXPW_HI;
    } else {
        uint prod = 23u * f16_significand(s);
        int shift = es + 7; // units of 2^-26: |s * 0.044921875| = prod * 2^(es - 19)
        uint p;
        bool sticky = false;
        if (shift >= 0) {
            p = prod << uint(shift);
        } else {
            p = prod >> uint(-shift);
            sticky = (prod & ((1u << uint(-shift)) - 1u)) != 0u;
        }
        const uint OFFSET = 333u << 18; // 1.30078125 * 2^26
        uint y; // floor of the exact value; sticky: a fraction remains
        if (neg == 0u) {
            y = OFFSET + p;
        } else {
            y = OFFSET - p - (sticky ? 1u : 0u);
        }
        if (y < (1u << 26)) {
            x = EXPW_LO;
        } else {
            // f32 RNE: keep multiples of 8 units.
            uint rem = y & 7u;
            uint f = y - rem;
            if (rem > 4u || (rem == 4u && (sticky || (f & 8u) != 0u))) {
                f += 8u;
            }
            // f16 RNE of the f32 value: multiples of 2^16 units.
            uint q = f >> 16;
            uint r16 = f & 0xFFFFu;
            if (r16 > 0x8000u || (r16 == 0x8000u && (q & 1u) != 0u)) {
                q += 1u;
            }
            x = f16_clamp(0x3C00u + (q - 1024u), EXPW_LO, EXPW_HI);
        }
    }
    return ((x << 5) ^ 0x8000u) & 0xFFFFu;
}

uint exp_vit(uint s) {
    uint x = f16_clamp(f16_fma(EXPV_SCALE, s, EXPV_BIAS), EXPV_LO, EXPV_HI);
    return ((x << 4) + 0x4000u) & 0xFFFFu;
}

#endif
