// Interface of the normalisation kernels (normalize.glsl, normalize_coop.glsl): the bindings,
// the push constants and the per-head temperature (f32 little-endian, read as bytes: the
// weight slice may be only 2-aligned), all set by `nr::record::attention::record_normalize`.
// The cooperative kernels add binding 5 (the lookup table).
#include "f16.glsl"

layout(std430, binding = 0) readonly buffer Qkv { uint16_t qkv[]; };
layout(std430, binding = 1) readonly buffer Temps { uint8_t temps[]; };
layout(std430, binding = 2) writeonly buffer QOut { uint8_t qout[]; };
layout(std430, binding = 3) writeonly buffer KOut { uint8_t kout[]; };
layout(std430, binding = 4) writeonly buffer VOut { uint8_t vout[]; };

layout(push_constant) uniform Push {
    uint rows;
    uint heads;
    uint qkv_off;  // elements
    uint temp_off; // bytes
    uint q_off;    // bytes
    uint k_off;
    uint v_off;
} pc;

// f16 (RNE) of head `head`'s temperature.
uint norm_temperature(uint head) {
    uint tb = pc.temp_off + 4u * head;
    uint tbits = uint(temps[tb]) | (uint(temps[tb + 1u]) << 8) | (uint(temps[tb + 2u]) << 16)
        | (uint(temps[tb + 3u]) << 24);
#if defined(NORM_SUBGROUP) && defined(OPENNGX_F16_NATIVE)
    // The tensor route's builds convert with the device (RTE for 16-bit results): this integer
    // rounding was a quarter of the kernel's time on an H100 (docs/performance.md, session 15).
    // An f32 zero or subnormal gives the signed zero, whatever the device does with 32-bit
    // subnormals. A NaN temperature may come out with another NaN's bits: the kernel only
    // multiplies by it with f16_mul, which canonicalises, so the bytes are the same.
    if ((tbits & 0x7F800000u) == 0u) {
        return (tbits >> 16) & 0x8000u;
    }
    return f16_bits(float16_t(uintBitsToFloat(tbits)));
#else
    return f16_from_f32_bits(tbits, false, 0);
#endif
}
