// E4M3 (e4m3fn) publication from f16 bits and decoding (mirror of src/numerics/e4m3.rs).
// Half NaN -> +0 (0x00); +-0 keep their sign; +-inf and overflow saturate to +-448 (0x7E/0xFE);
// RNE everywhere, subnormals included. The NaN codes 0x7F/0xFF decode to +0.
#ifndef OPENNGX_E4M3_GLSL
#define OPENNGX_E4M3_GLSL
#include "f16.glsl"

uint e4m3_rne_shift(uint v, uint s) {
    if (s == 0u) {
        return v;
    }
    if (s >= 32u) {
        return 0u;
    }
    uint kept = v >> s;
    uint rem = v & ((1u << s) - 1u);
    uint halfway = 1u << (s - 1u);
    return (rem > halfway || (rem == halfway && (kept & 1u) == 1u)) ? kept + 1u : kept;
}

// Publish a half (bits) to an E4M3 code.
uint e4m3_from_f16(uint h) {
    if (f16_is_nan(h)) {
        return 0u;
    }
    uint sign = (h >> 8) & 0x80u;
    uint e = (h >> 10) & 0x1Fu;
    uint m = h & 0x3FFu;
    if (e == 0x1Fu) {
        return sign | 0x7Eu;
    }
    if (e <= 8u) {
        // |x| < 2^-6: E4M3 subnormal m * 2^-9 (code 8 = the smallest normal after a carry).
        uint q = e == 0u ? e4m3_rne_shift(m, 15u) : e4m3_rne_shift(m | 0x400u, 16u - e);
        return sign | min(q, 8u);
    }
    uint ee = e - 8u;
    uint mm = e4m3_rne_shift(m, 7u);
    if (mm == 8u) {
        mm = 0u;
        ee += 1u;
    }
    if (ee > 15u || (ee == 15u && mm > 6u)) {
        return sign | 0x7Eu;
    }
    return sign | (ee << 3) | mm;
}

// Publish an f32: f32 -> f16 (RNE) -> E4M3 (RNE), never directly.
uint e4m3_from_f32(float x) { return e4m3_from_f16(f16_from_f32_rne(x)); }

// Decode an E4M3 code to the half it equals exactly (NaN codes -> +0).
uint e4m3_to_f16(uint c) {
    uint sign = (c & 0x80u) << 8;
    uint e = (c >> 3) & 0xFu;
    uint m = c & 7u;
    if ((c & 0x7Fu) == 0x7Fu) {
        return 0u;
    }
    if (e == 0u) {
        if (m == 0u) {
            return sign;
        }
        int p = findMSB(m); // 0..2; value = 1.f * 2^(p - 9)
        uint frac = (m << uint(10 - p)) & 0x3FFu;
        return sign | (uint(p - 9 + 15) << 10) | frac;
    }
    return sign | ((e + 8u) << 10) | (m << 7);
}

float e4m3_to_f32(uint c) { return f16_to_f32(e4m3_to_f16(c)); }

// F13 operand view: value = e4m3_significand(c) * 2^(e4m3_exponent(c) - 3); subnormals have
// exponent -6 and no implicit bit; NaN codes have significand 0 (they decode to 0).
uint e4m3_significand(uint c) {
    if ((c & 0x7Fu) == 0x7Fu) {
        return 0u;
    }
    uint e = (c >> 3) & 0xFu;
    return e == 0u ? (c & 7u) : ((c & 7u) | 8u);
}

int e4m3_exponent(uint c) {
    int e = int((c >> 3) & 0xFu);
    return e == 0 ? -6 : e - 7;
}

#endif
