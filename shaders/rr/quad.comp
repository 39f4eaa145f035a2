#version 450
// The quarter-average of an encoder tail's out112 to the next level (rr::frame::tails::
// quad_average): per channel f16(f16(f16(a + b) + f16(c + d)) * 0.25), a, b the top pair, c, d
// the bottom pair; alpha 0. One invocation per coarse token.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_16bit_storage : require
#include "f16.glsl"
#include "common.glsl"

layout(local_size_x = 64) in;

layout(std430, binding = 0) readonly buffer Fine { uint16_t fine[]; };
layout(std430, binding = 1) writeonly buffer Coarse { uint coarse[]; }; // R | G << 16, B | A << 16

layout(push_constant) uniform Push {
    uint cw;
    uint ch;
    uint fw;
} pc;

void main() {
    uint i = rr_flat_index(64u);
    if (i >= pc.cw * pc.ch) {
        return;
    }
    uint x = 2u * (i % pc.cw);
    uint y = 2u * (i / pc.cw);
    uint p0 = (y * pc.fw + x) * 4u;
    uint p2 = p0 + pc.fw * 4u;
    uint o[3];
    for (uint c = 0u; c < 3u; ++c) {
        uint top = f16_add(uint(fine[p0 + c]), uint(fine[p0 + 4u + c]));
        uint bottom = f16_add(uint(fine[p2 + c]), uint(fine[p2 + 4u + c]));
        o[c] = f16_mul(f16_add(top, bottom), 0x3400u);
    }
    coarse[2u * i] = o[0] | (o[1] << 16u);
    coarse[2u * i + 1u] = o[2];
}
