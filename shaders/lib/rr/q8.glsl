// Ray Reconstruction's E4M3 (mirror of src/numerics/rr/q8.rs; spec rr-network.md 4.1, 5.1):
// cvt.rn.satfinite from the half (RNE, +-inf and overflow -> +-448, +-0 keep their sign), NaN
// kept with its sign (0x7F / 0xFF); the .relu form of enc0 (negatives and -0 -> +0, NaN -> 0x7F);
// decoding gives the canonical half NaN for the NaN codes.
#ifndef OPENNGX_RR_Q8_GLSL
#define OPENNGX_RR_Q8_GLSL
#include "f16.glsl"
#include "e4m3.glsl"

bool rr_q8_is_nan(uint c) { return (c & 0x7Fu) == 0x7Fu; }

uint rr_q8(uint h) {
    if (f16_is_nan(h)) {
        return 0x7Fu | ((h >> 8) & 0x80u);
    }
    return e4m3_from_f16(h);
}

uint rr_q8_relu(uint h) {
    if (f16_is_nan(h)) {
        return 0x7Fu;
    }
    if ((h & 0x8000u) != 0u) {
        return 0u;
    }
    return e4m3_from_f16(h);
}

uint rr_q8_to_f16(uint c) { return rr_q8_is_nan(c) ? F16_QNAN : e4m3_to_f16(c); }

#endif
