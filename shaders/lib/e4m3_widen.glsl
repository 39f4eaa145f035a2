// E4M3 codes widened to the f16 they equal, exactly, in a few integer operations and one f16
// multiply per pair instead of a code table, and halves published to E4M3 the same way
// (mirrors: e4m3::to_f16 and e4m3::from_f16, every code and half; the tensor route's kernels). Needs the device's own f16 multiply with subnormals kept: the including shader
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

// The E4M3 subnormal codes k = RNE(h 2^9) (0 to 8; 8 is the smallest normal, 2^-6) of both
// halves of `w`, for halves below 2^-6 in magnitude (others masked to +0 by the caller), as
// floats. f16 -> f32, the scaling by 2^9 and roundEven are exact, and no floating-point add
// follows a multiply anywhere on the way: the kernels' exactness must not depend on `precise`,
// whose NoContraction the SPIR-V optimizer drops from inlined copies (docs/numerics.md).
vec2 e4_subnormal_codes(uint w) { return roundEven(f16_pair_to_vec2(w) * 512.0); }

// widen(E4(h)) of both halves h of `w`, for halves in [+0, 464] (0x5F40, the largest that
// rounds to 448; the softmax weights: the window attention's P = f16(e r) lies in [0, 1]): E4M3
// publication and its widening in one, without a code table. From 2^-6 (0x2400, E4M3's smallest
// normal) the f16 mantissa is rounded to 3 bits, nearest even (a carry steps the exponent, as it
// should); below, the subnormal code k scaled back, k 2^-9, converts to a half exactly. Mirror:
// `numerics::e4m3`'s test, every half of the range.
uint e4_round_pair(uint w) {
    uint nrm = (w + 0x003F003Fu + ((w >> 7) & 0x00010001u)) & 0xFF80FF80u;
    uint normal = ((((w | 0x80008000u) - 0x24002400u) & 0x80008000u) >> 15) * 0xFFFFu;
    uint sub = f16_pair_from_vec2_exact(e4_subnormal_codes(w & ~normal) * 0.001953125);
    return (nrm & normal) | (sub & ~normal);
}

// E4(h) of both halves h of `w` (any halves) as codes at bytes 0 and 2 (0x00cc00cc), without a
// code table: e4m3.glsl's rules (NaN -> +0, +-0 keep the sign, +-inf and overflow saturate to
// +-448, nearest even) on the magnitude. From 2^-6 (0x2400) the mantissa rounded to 3 bits,
// nearest even, and the bits above it less E4M3's exponent offset (8 << 3) are the code; 0x7F
// and above (overflow, inf) saturate to 0x7E. Below, the subnormal code k (e4_subnormal_codes),
// on magnitudes masked to that range. Mirror: `numerics::e4m3`'s test, every half.
uint e4_publish_pair(uint w) {
    uint mag = w & 0x7FFF7FFFu;
    uint normal = (((mag + 0x5C005C00u) & 0x80008000u) >> 15) * 0xFFFFu;  // mag >= 0x2400
    uint up = ((mag + 0x003F003Fu + ((mag >> 7) & 0x00010001u)) >> 7) & 0x01FF01FFu;
    uint code = (up + 0x01C001C0u) & 0x01FF01FFu;  // up - 0x40 where normal
    uint over = ((((code | 0x80008000u) - 0x007F007Fu) & 0x80008000u) >> 15) * 0xFFFFu;
    code = (code & ~over) | (0x007E007Eu & over);
    uvec2 k = uvec2(e4_subnormal_codes(mag & ~normal));
    uint sub = k.x | (k.y << 16);
    uint nan = (((mag + 0x03FF03FFu) & 0x80008000u) >> 15) * 0xFFFFu;
    return (((code & normal) | (sub & ~normal)) | ((w >> 8) & 0x00800080u)) & ~nan;
}

// The four codes of `w` as two f16 pairs (codes 0, 1 and 2, 3).
uvec2 widen_word(uint w) {
    uint even = widen_halves(w & 0x00FF00FFu);        // codes 0, 2
    uint odd = widen_halves((w >> 8) & 0x00FF00FFu);  // codes 1, 3
    return uvec2((even & 0xFFFFu) | (odd << 16), (even >> 16) | (odd & 0xFFFF0000u));
}

#endif
