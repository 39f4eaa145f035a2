// E4M3 codes widened to the f16 they equal, exactly, in a few integer operations and one f16
// multiply per pair instead of a code table (mirror: e4m3::to_f16, every code; the tensor route's
// kernels). Needs the device's own f16 multiply with subnormals kept: the including shader
// defines OPENNGX_F16_NATIVE and declares DenormPreserve for 16-bit floats. Without
// OPENNGX_F16_NATIVE it decodes each code with e4m3.glsl instead (same halves, slower).
#ifndef OPENNGX_E4M3_WIDEN_GLSL
#define OPENNGX_E4M3_WIDEN_GLSL
#include "f16.glsl"

// The codes at the low bytes of the two halves of `x` (0x00cc00cc) as an f16 pair, exactly:
// sign, exponent and mantissa bits moved to their f16 places give the value times 2^-8 (f16's
// bias is 8 more than E4M3's; an E4M3 subnormal lands on an f16 subnormal), and the f16 multiply
// by 256 is exact (subnormals kept: DenormPreserve). The NaN codes 0x7F/0xFF become +0 first.
#ifdef OPENNGX_F16_NATIVE
uint widen_halves(uint x) {
    uint mag = x & 0x007F007Fu;
    uint nan = ((mag + 0x00010001u) & 0x00800080u) >> 7;
    x &= ~(nan * 0xFFFFu);
    uint bits = ((x & 0x007F007Fu) << 7) | ((x & 0x00800080u) << 8);
    return f16_bitcast_to_u32(f16_bitcast_from_u32(bits) * f16vec2(256.0));
}
#else
// Builds without the device's f16 (the emulated tensor-route kernels, tile_mma.glsl): the same
// halves through e4m3_to_f16 (NaN codes also give +0 there).
#include "e4m3.glsl"
uint widen_halves(uint x) { return e4m3_to_f16(x & 0xFFu) | (e4m3_to_f16((x >> 16) & 0xFFu) << 16); }
#endif

// The four codes of `w` as two f16 pairs (codes 0, 1 and 2, 3).
uvec2 widen_word(uint w) {
    uint even = widen_halves(w & 0x00FF00FFu);        // codes 0, 2
    uint odd = widen_halves((w >> 8) & 0x00FF00FFu);  // codes 1, 3
    return uvec2((even & 0xFFFFu) | (odd << 16), (even >> 16) | (odd & 0xFFFF0000u));
}

#endif
