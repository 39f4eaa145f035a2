// Elementwise f16 ops of the network with their exact rounding points (spec nr-network.md 2.4,
// 2.5); names follow src/numerics/ops.rs.
#ifndef OPENNGX_OPS_GLSL
#define OPENNGX_OPS_GLSL
#include "f16.glsl"

// 2x2 pool: f16(f16(f16(a+b) + f16(c+d)) * 0.25).
uint pool2x2(uint a, uint b, uint c, uint d) {
    return f16_mul(f16_add(f16_add(a, b), f16_add(c, d)), 0x3400u);
}

// Scaled skip seed: f16(skip * scale).
uint scaled_skip(uint skip, uint scale) { return f16_mul(skip, scale); }

// Decoder merge: f16(up + skip * scale), one fused rounding.
uint decoder_merge(uint up, uint skip, uint scale) { return f16_fma(skip, scale, up); }

// Post blend: u = f16(up * inputScale); f16(u + block0 * adapterScale) (fused).
uint post_blend(uint up, uint input_scale, uint block0, uint adapter_scale) {
    return f16_fma(block0, adapter_scale, f16_mul(up, input_scale));
}

// Cosine-norm pair: f16(v_lo^2 + f16(v_hi^2)), the low square fused into the add.
uint sumsq_pair(uint v_lo, uint v_hi) { return f16_fma(v_lo, v_lo, f16_mul(v_hi, v_hi)); }

// History store: f32 -> f16 round toward zero.
uint history_store(float x) { return f16_from_f32_rtz(x); }

// Feature input: f32 -> f16 RNE before the adapter GEMM.
uint feature_input(float x) { return f16_from_f32_rne(x); }

#endif
