#version 450
// Input adapter (spec nr-network.md 1.7, 2.3): f32 features [rows][16] -> f16 (RNE) -> f16 GEMM
// 16 -> 32 from a zero accumulator in the f16 MMA profile (F24: groups of 8, P = 24; H25: 16, 25),
// published as raw f16 [rows][32] and E4 [rows][32]. One invocation per (row, 4 output columns).
#extension GL_GOOGLE_include_directive : require
#include "f16.glsl"
#include "e4m3.glsl"
#include "mma.glsl"

layout(local_size_x = 64) in;
layout(constant_id = 0) const int G = 8;
layout(constant_id = 1) const int P = 24;

layout(std430, binding = 0) readonly buffer Features { uint features[]; }; // f32 bits
// [32 outputs][16 inputs] halves, two per word.
layout(std430, binding = 1) readonly buffer Weights { uint w_words[]; };
layout(std430, binding = 2) writeonly buffer Raw { uint raw_words[]; };
layout(std430, binding = 3) writeonly buffer Out { uint out_words[]; };

layout(push_constant) uniform Push { uint rows; } pc;

uint weight(uint n, uint k) {
    uint idx = n * 16u + k;
    return (w_words[idx >> 1] >> (16u * (idx & 1u))) & 0xFFFFu;
}

void main() {
    uint id = gl_GlobalInvocationID.x;
    uint r = id / 8u;
    uint q = id % 8u;
    if (r >= pc.rows) {
        return;
    }
    uint x[16];
    for (uint k = 0u; k < 16u; k++) {
        x[k] = f16_from_f32_bits(features[r * 16u + k], false, 0);
    }
    uint h[4];
    for (uint j = 0u; j < 4u; j++) {
        uint n = 4u * q + j;
        uint acc = F16_POS_ZERO;
        for (int kb = 0; kb < 16; kb += G) {
            uint a[16];
            uint b[16];
            for (int i = 0; i < 16; i++) {
                a[i] = i < G ? x[kb + i] : 0u;
                b[i] = i < G ? weight(n, uint(kb + i)) : 0u;
            }
            acc = mma_group_f16(acc, a, b, G, P);
        }
        h[j] = acc;
    }
    uint at = r * 32u + 4u * q;
    raw_words[at / 2u] = h[0] | (h[1] << 16);
    raw_words[at / 2u + 1u] = h[2] | (h[3] << 16);
    out_words[at / 4u] = e4m3_from_f16(h[0]) | (e4m3_from_f16(h[1]) << 8) |
                         (e4m3_from_f16(h[2]) << 16) | (e4m3_from_f16(h[3]) << 24);
}
