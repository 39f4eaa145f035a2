#version 450
// Block 70's input (spec nr-network.md 1.6, 2.4): u = f16(E4(b69)[x>>1, y>>1] * inputScale[c]),
// m = f16(u + E4(b0)[x, y] * adapterScale[c]) (the second product folded into the add) -> raw f16
// and E4M3. Scales are f16 vectors read as bytes. One invocation per 4 channels of a token.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require
#extension GL_EXT_shader_16bit_storage : require
#include "e4m3.glsl"
#include "ops.glsl"

layout(local_size_x = 64) in;

layout(std430, binding = 0) readonly buffer Low { uint8_t low[]; };
layout(std430, binding = 1) readonly buffer Skip { uint8_t skip[]; };
layout(std430, binding = 2) readonly buffer InScale { uint8_t in_scale[]; };
layout(std430, binding = 3) readonly buffer AdScale { uint8_t ad_scale[]; };
layout(std430, binding = 4) writeonly buffer OutRaw { uint16_t outraw[]; };
layout(std430, binding = 5) writeonly buffer Out { uint8_t outb[]; };

layout(push_constant) uniform Push {
    uint width;
    uint height;
    uint low_w;
    uint channels;
    uint low_off;      // bytes
    uint skip_off;     // bytes
    uint in_scale_off; // bytes
    uint ad_scale_off; // bytes
    uint raw_off;      // elements
    uint out_off;      // bytes
} pc;

void main() {
    uint idx = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * 64u
        + gl_LocalInvocationID.x;
    uint quads = pc.channels >> 2;
    uint tok = idx / quads;
    if (tok >= pc.width * pc.height) {
        return;
    }
    uint ch = 4u * (idx % quads);
    uint x = tok % pc.width;
    uint y = tok / pc.width;
    uint lo = pc.low_off + ((y >> 1) * pc.low_w + (x >> 1)) * pc.channels + ch;
    uint e = tok * pc.channels + ch;
    for (uint i = 0u; i < 4u; i++) {
        uint ib = pc.in_scale_off + 2u * (ch + i);
        uint ab = pc.ad_scale_off + 2u * (ch + i);
        uint is = uint(in_scale[ib]) | (uint(in_scale[ib + 1u]) << 8);
        uint asc = uint(ad_scale[ab]) | (uint(ad_scale[ab + 1u]) << 8);
        uint m = post_blend(e4m3_to_f16(uint(low[lo + i])), is,
                            e4m3_to_f16(uint(skip[pc.skip_off + e + i])), asc);
        outraw[pc.raw_off + e + i] = uint16_t(m);
        outb[pc.out_off + e + i] = uint8_t(e4m3_from_f16(m));
    }
}
