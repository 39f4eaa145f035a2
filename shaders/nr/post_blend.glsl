// Body of block 70's input (post_blend.comp: emulated halves; post_blend_rtz.comp: the RTZ
// builds' native halves; spec nr-network.md 1.6, 2.4): u = f16(E4(b69)[x>>1, y>>1] *
// inputScale[c]), m = f16(u + E4(b0)[x, y] * adapterScale[c]) (the second product folded into
// the add) -> raw f16 and E4M3. Scales are f16 vectors read as bytes. One invocation per 4
// channels of a token; with WORDS (every tensor's offset on 4 elements) its loads and stores of
// the tensors are whole words, else bytes and halves.
#include "e4m3.glsl"
#include "ops.glsl"

layout(local_size_x = 64) in;
layout(constant_id = 0) const bool WORDS = false;

layout(std430, binding = 0) readonly buffer Low { uint8_t low[]; };
layout(std430, binding = 0) readonly buffer LowWords { uint low_words[]; };
layout(std430, binding = 1) readonly buffer Skip { uint8_t skip[]; };
layout(std430, binding = 1) readonly buffer SkipWords { uint skip_words[]; };
layout(std430, binding = 2) readonly buffer InScale { uint8_t in_scale[]; };
layout(std430, binding = 3) readonly buffer AdScale { uint8_t ad_scale[]; };
layout(std430, binding = 4) writeonly buffer OutRaw { uint16_t outraw[]; };
layout(std430, binding = 4) writeonly buffer OutRawPairs { uvec2 outraw_pairs[]; };
layout(std430, binding = 5) writeonly buffer Out { uint8_t outb[]; };
layout(std430, binding = 5) writeonly buffer OutWords { uint out_words[]; };

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
    // The four channels' E4 codes of the low level and of the skip.
    uint lw = 0u;
    uint sw = 0u;
    if (WORDS) {
        lw = low_words[lo >> 2];
        sw = skip_words[(pc.skip_off + e) >> 2];
    } else {
        [[unroll]] for (uint i = 0u; i < 4u; i++) {
            lw |= uint(low[lo + i]) << (8u * i);
            sw |= uint(skip[pc.skip_off + e + i]) << (8u * i);
        }
    }
    uint word = 0u;
    uint m[4];
    for (uint i = 0u; i < 4u; i++) {
        uint ib = pc.in_scale_off + 2u * (ch + i);
        uint ab = pc.ad_scale_off + 2u * (ch + i);
        uint is = uint(in_scale[ib]) | (uint(in_scale[ib + 1u]) << 8);
        uint asc = uint(ad_scale[ab]) | (uint(ad_scale[ab + 1u]) << 8);
        m[i] = post_blend(e4m3_to_f16((lw >> (8u * i)) & 0xFFu), is,
                          e4m3_to_f16((sw >> (8u * i)) & 0xFFu), asc);
        word |= e4m3_from_f16(m[i]) << (8u * i);
    }
    if (WORDS) {
        outraw_pairs[(pc.raw_off + e) >> 2] = uvec2(m[0] | (m[1] << 16), m[2] | (m[3] << 16));
        out_words[(pc.out_off + e) >> 2] = word;
    } else {
        [[unroll]] for (uint i = 0u; i < 4u; i++) {
            outraw[pc.raw_off + e + i] = uint16_t(m[i]);
            outb[pc.out_off + e + i] = uint8_t(word >> (8u * i));
        }
    }
}
