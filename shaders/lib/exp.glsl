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

// The clamped affine value x = clamp(offset + 2^-10 roundEven(s * slope_1024), lo, hi) of both
// scores of `w`, as an f16 pair, for the tensor route's attention (no table load in its
// softmax). Scores of magnitude 8 or more (inf and NaN too) clamp whatever the affine value is
// in both exp forms, so they become +-8 first (NaN -8: the low end, as the min/max clamp gives
// it) and the f32 steps see finite halves only. s * slope_1024 is exact (slope_1024 is the
// slope times 2^10, 6 or 11 significant bits against the half's 11), roundEven puts the value on
// the f16 grid of [1, 2) in one rounding, nearest even, and offset + 2^-10 k is exact, as is the
// clamp; the clamped value is a half, so its conversion is exact too. No step depends on the
// f32 rounding mode or on `precise` (a fused multiply-add here is exact as well).
uint exp_affine_pair(uint w, float slope_1024, float offset, float lo, float hi) {
    uint mag = w & 0x7FFF7FFFu;
    uint big = (((mag + 0x38003800u) & 0x80008000u) >> 15) * 0xFFFFu;  // |s| >= 8 (0x4800)
    uint nan = (((mag + 0x03FF03FFu) & 0x80008000u) >> 15) * 0xFFFFu;  // |s| > inf
    w = (w & ~big) | ((((w | nan) & 0x80008000u) | 0x48004800u) & big);
    vec2 k = roundEven(f16_pair_to_vec2(w) * slope_1024);
    return f16_pair_from_vec2_exact(clamp(k * 0.0009765625 + offset, lo, hi));
}

// exp_window of both halves of `w`: slope 0.044921875 (46 / 2^10). One rounding to the f16 grid
// equals exp_window's two (f32, then f16) for every half; `numerics::exp`'s test runs these
// steps on all 65536 of them.
uint exp_window_pair(uint w) {
    uint bits = exp_affine_pair(w, 46.0, 1.30078125, 1.03125, 1.5693359375);
    return ((bits << 5) & 0xFFE0FFE0u) ^ 0x80008000u;
}

// exp_vit of both halves of `w`: slope 0.08953857421875 (91.6875 / 2^10), one rounding as the
// half FMA's (beyond [LO, HI] both clamp alike); +0x4000 on a half changes only its bits 14 and
// 15, so the pair form flips them without a carry into the other half. `numerics::exp`'s test
// runs these steps on every half.
uint exp_vit_pair(uint w) {
    uint bits = exp_affine_pair(w, 91.6875, 1.708984375, 1.439453125, 1.9775390625);
    uint v = (bits << 4) & 0xFFF0FFF0u;
    return v ^ 0x40004000u ^ ((v & 0x40004000u) << 1);
}

uint exp_vit(uint s) {
    uint x = f16_clamp(f16_fma(EXPV_SCALE, s, EXPV_BIAS), EXPV_LO, EXPV_HI);
    return ((x << 4) + 0x4000u) & 0xFFFFu;
}

#endif
