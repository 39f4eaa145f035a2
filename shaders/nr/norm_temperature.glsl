// The f16 of a head's learned f32 temperature (little-endian, read as bytes: the weight slice
// may be only 2-aligned), as every kernel that normalises q takes it: normalize_io.glsl's
// kernels, the QKV GEMM's normalisation epilogue (gemm_coopmat.glsl, GEMM_NORM) and the window
// attention's fused staging (window_stage.glsl). The includer declares the bytes `temps`, the
// push constant `temp_off` (bytes) and includes f16.glsl.
#ifndef OPENNGX_NORM_TEMPERATURE_GLSL
#define OPENNGX_NORM_TEMPERATURE_GLSL

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

#endif
