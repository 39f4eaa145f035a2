#version 450
// 2x2 pool of a raw f16 tensor to the next level, published E4M3 (spec nr-network.md 1.6, 2.4):
// out = E4(f16(f16(f16(a+b) + f16(c+d)) * 0.25)), a,b the top pair, c,d the bottom pair; output
// pixels whose 2x2 source leaves the input level are 0. One invocation per 4 channels of a token.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require
#extension GL_EXT_shader_16bit_storage : require
#include "e4m3.glsl"
#include "ops.glsl"

layout(local_size_x = 64) in;

layout(std430, binding = 0) readonly buffer In { uint16_t inh[]; };
layout(std430, binding = 1) writeonly buffer Out { uint8_t outb[]; };

layout(push_constant) uniform Push {
    uint in_w;
    uint in_h;
    uint out_w;
    uint out_h;
    uint channels;
    uint in_off;  // elements
    uint out_off; // bytes
} pc;

void main() {
    uint idx = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * 64u
        + gl_LocalInvocationID.x;
    uint quads = pc.channels >> 2;
    uint tok = idx / quads;
    if (tok >= pc.out_w * pc.out_h) {
        return;
    }
    uint ch = 4u * (idx % quads);
    uint ox = tok % pc.out_w;
    uint oy = tok / pc.out_w;
    uint ix = 2u * ox;
    uint iy = 2u * oy;
    bool inside = ix + 1u < pc.in_w && iy + 1u < pc.in_h;
    uint o = pc.out_off + tok * pc.channels + ch;
    uint top = pc.in_off + (iy * pc.in_w + ix) * pc.channels + ch;
    uint bottom = top + pc.in_w * pc.channels;
    for (uint i = 0u; i < 4u; i++) {
        uint e = 0u;
        if (inside) {
            e = e4m3_from_f16(pool2x2(uint(inh[top + i]), uint(inh[top + pc.channels + i]),
                                      uint(inh[bottom + i]), uint(inh[bottom + pc.channels + i])));
        }
        outb[o + i] = uint8_t(e);
    }
}
