#version 450
// Test kernel: one MMA group per invocation. Record i is 33 words: acc, a[0..16], b[0..16]
// (E4M3 codes or f16 bits in the low bits). MODE: 0 = F13, 1 = F24 (first 8), 2 = H25 G16,
// 3 = H25 G8 (first 8).
#extension GL_GOOGLE_include_directive : require
#include "mma.glsl"

layout(local_size_x = 64) in;
layout(constant_id = 0) const uint MODE = 0u;
layout(std430, binding = 0) readonly buffer Groups { uint words[]; };
layout(std430, binding = 1) writeonly buffer Out { uint outv[]; };
layout(push_constant) uniform Push { uint count; } pc;

void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i >= pc.count) {
        return;
    }
    uint base = 33u * i;
    uint acc = words[base];
    uint a[16];
    uint b[16];
    for (int k = 0; k < 16; k++) {
        a[k] = words[base + 1u + uint(k)];
        b[k] = words[base + 17u + uint(k)];
    }
    uint r;
    if (MODE == 0u) {
        r = mma_f13_group(acc, a, b);
    } else if (MODE == 1u) {
        r = mma_f24_group(acc, a, b);
    } else if (MODE == 2u) {
        r = mma_h25_group(acc, a, b, 16);
    } else {
        r = mma_h25_group(acc, a, b, 8);
    }
    outv[i] = r;
}
