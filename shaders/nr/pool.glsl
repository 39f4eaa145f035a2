// Body of the 2x2 pool (pool.comp: emulated halves; pool_rtz.comp: the RTZ builds' native
// halves). A raw f16 tensor to the next level, published E4M3 (spec nr-network.md 1.6, 2.4):
// out = E4(f16(f16(f16(a+b) + f16(c+d)) * 0.25)), a,b the top pair, c,d the bottom pair; output
// pixels whose 2x2 source leaves the input level are 0. One invocation per 4 channels of a
// token; with WORDS (both offsets on 4 elements) each of its four inputs is one 8-byte load and
// its output one 32-bit store, else halves and bytes.
#include "e4m3.glsl"
#include "ops.glsl"

layout(local_size_x = 64) in;
layout(constant_id = 0) const bool WORDS = false;

layout(std430, binding = 0) readonly buffer In { uint16_t inh[]; };
layout(std430, binding = 0) readonly buffer InPairs { uvec2 in_pairs[]; };
layout(std430, binding = 1) writeonly buffer Out { uint8_t outb[]; };
layout(std430, binding = 1) writeonly buffer OutWords { uint out_words[]; };

layout(push_constant) uniform Push {
    uint in_w;
    uint in_h;
    uint out_w;
    uint out_h;
    uint channels;
    uint in_off;  // elements
    uint out_off; // bytes
} pc;

// Halves at .. at + 3 of the input as two pairs.
uvec2 load4(uint at) {
    if (WORDS) {
        return in_pairs[at >> 2];
    }
    return uvec2(uint(inh[at]) | (uint(inh[at + 1u]) << 16),
                 uint(inh[at + 2u]) | (uint(inh[at + 3u]) << 16));
}

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
    uint word = 0u;
    if (inside) {
        uint top = pc.in_off + (iy * pc.in_w + ix) * pc.channels + ch;
        uint bottom = top + pc.in_w * pc.channels;
        uvec2 a = load4(top);
        uvec2 b = load4(top + pc.channels);
        uvec2 c = load4(bottom);
        uvec2 d = load4(bottom + pc.channels);
        for (uint i = 0u; i < 4u; i++) {
            uint e = e4m3_from_f16(pool2x2(f16_quad_half(a, i), f16_quad_half(b, i),
                                           f16_quad_half(c, i), f16_quad_half(d, i)));
            word |= e << (8u * i);
        }
    }
    if (WORDS) {
        out_words[o >> 2] = word;
    } else {
        [[unroll]] for (uint i = 0u; i < 4u; i++) {
            outb[o + i] = uint8_t(word >> (8u * i));
        }
    }
}
