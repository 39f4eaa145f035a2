#version 450
// Head (spec nr-network.md 1.7, 2.3): f16 GEMM 32 -> 4 of block 70's raw f16 output from a zero
// accumulator in the f16 MMA profile (F24: 4 groups of 8, P = 24; H25: 2 groups of 16, P = 25);
// each f16 result is stored as the f32 it equals. One invocation per row.
#extension GL_GOOGLE_include_directive : require
#include "f16.glsl"
#include "mma.glsl"

layout(local_size_x = 64) in;
layout(constant_id = 0) const int G = 8;
layout(constant_id = 1) const int P = 24;

layout(std430, binding = 0) readonly buffer In { uint in_words[]; };
// [4 outputs][32 inputs] halves, two per word.
layout(std430, binding = 1) readonly buffer Weights { uint w_words[]; };
layout(std430, binding = 2) writeonly buffer Out { uint outv[]; }; // f32 bits

layout(push_constant) uniform Push { uint rows; } pc;

uint half_at(uint idx) { return (in_words[idx >> 1] >> (16u * (idx & 1u))) & 0xFFFFu; }
uint weight(uint idx) { return (w_words[idx >> 1] >> (16u * (idx & 1u))) & 0xFFFFu; }

void main() {
    uint r = gl_GlobalInvocationID.x;
    if (r >= pc.rows) {
        return;
    }
    for (uint n = 0u; n < 4u; n++) {
        uint acc = F16_POS_ZERO;
        for (int kb = 0; kb < 32; kb += G) {
            uint a[16];
            uint b[16];
            for (int i = 0; i < 16; i++) {
                a[i] = i < G ? half_at(r * 32u + uint(kb + i)) : 0u;
                b[i] = i < G ? weight(n * 32u + uint(kb + i)) : 0u;
            }
            acc = mma_group_f16(acc, a, b, G, P);
        }
        outv[r * 4u + n] = floatBitsToUint(f16_to_f32(acc));
    }
}
