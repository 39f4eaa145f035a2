#version 450
// Decoder merge (spec nr-network.md 1.6, 2.4, 8.10): nearest 2x upsample of a low-level f16
// tensor (pixel (x, y) reads low (x>>1, y>>1)) merged with a skip at the output level:
// merged = f16(up + skip * scale[c]) with one rounding -> E4M3, and the raw f16 when RAW is set.
// The skip is E4M3 or f16 (SKIP_F16), read as bytes like the f16 scale vector (weight slices
// may be only 2-aligned). One invocation per 4 channels of a token.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require
#extension GL_EXT_shader_16bit_storage : require
#include "e4m3.glsl"
#include "ops.glsl"

layout(local_size_x = 64) in;
layout(constant_id = 0) const bool SKIP_F16 = false;
layout(constant_id = 1) const bool RAW = false;

layout(std430, binding = 0) readonly buffer Low { uint16_t low[]; };
layout(std430, binding = 1) readonly buffer Skip { uint8_t skip[]; };
layout(std430, binding = 2) readonly buffer Scale { uint8_t scale[]; };
layout(std430, binding = 3) writeonly buffer Out { uint8_t outb[]; };
layout(std430, binding = 4) writeonly buffer OutRaw { uint16_t outraw[]; };

layout(push_constant) uniform Push {
    uint width;
    uint height;
    uint low_w;
    uint channels;
    uint low_off;   // elements
    uint skip_off;  // bytes
    uint scale_off; // bytes
    uint out_off;   // bytes
    uint raw_off;   // elements
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
        uint s;
        if (SKIP_F16) {
            uint b = pc.skip_off + 2u * (e + i);
            s = uint(skip[b]) | (uint(skip[b + 1u]) << 8);
        } else {
            s = e4m3_to_f16(uint(skip[pc.skip_off + e + i]));
        }
        uint sb = pc.scale_off + 2u * (ch + i);
        uint sc = uint(scale[sb]) | (uint(scale[sb + 1u]) << 8);
        uint m = decoder_merge(uint(low[lo + i]), s, sc);
        outb[pc.out_off + e + i] = uint8_t(e4m3_from_f16(m));
        if (RAW) {
            outraw[pc.raw_off + e + i] = uint16_t(m);
        }
    }
}
