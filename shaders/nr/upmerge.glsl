// Body of the decoder merge (upmerge.comp: emulated halves; upmerge_rtz.comp: the RTZ builds'
// native halves; spec nr-network.md 1.6, 2.4, 8.10): nearest 2x upsample of a low-level f16
// tensor (pixel (x, y) reads low (x>>1, y>>1)) merged with a skip at the output level:
// merged = f16(up + skip * scale[c]) with one rounding -> E4M3, and the raw f16 when RAW is set.
// The skip is E4M3 or f16 (SKIP_F16); the f16 scale vector is read as bytes (weight slices may
// be only 2-aligned). One invocation per 4 channels of a token; with WORDS (every tensor's
// offset on 4 elements) its loads and stores of the tensors are whole words, else halves and
// bytes.
#include "e4m3.glsl"
#include "ops.glsl"

layout(local_size_x = 64) in;
layout(constant_id = 0) const bool SKIP_F16 = false;
layout(constant_id = 1) const bool RAW = false;
layout(constant_id = 2) const bool WORDS = false;

layout(std430, binding = 0) readonly buffer Low { uint16_t low[]; };
layout(std430, binding = 0) readonly buffer LowPairs { uvec2 low_pairs[]; };
layout(std430, binding = 1) readonly buffer Skip { uint8_t skip[]; };
layout(std430, binding = 1) readonly buffer SkipWords { uint skip_words[]; };
layout(std430, binding = 2) readonly buffer Scale { uint8_t scale[]; };
layout(std430, binding = 3) writeonly buffer Out { uint8_t outb[]; };
layout(std430, binding = 3) writeonly buffer OutWords { uint out_words[]; };
layout(std430, binding = 4) writeonly buffer OutRaw { uint16_t outraw[]; };
layout(std430, binding = 4) writeonly buffer OutRawPairs { uvec2 outraw_pairs[]; };

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
    // The four channels' up, skip (f16) and scale halves.
    uint up[4];
    uint s[4];
    if (WORDS) {
        uvec2 u = low_pairs[lo >> 2];
        up = uint[4](u.x & 0xFFFFu, u.x >> 16, u.y & 0xFFFFu, u.y >> 16);
    } else {
        [[unroll]] for (uint i = 0u; i < 4u; i++) {
            up[i] = uint(low[lo + i]);
        }
    }
    if (WORDS && SKIP_F16) {
        uint b = (pc.skip_off >> 1) + e; // halves
        uvec2 w = uvec2(skip_words[b >> 1], skip_words[(b >> 1) + 1u]);
        s = uint[4](w.x & 0xFFFFu, w.x >> 16, w.y & 0xFFFFu, w.y >> 16);
    } else if (WORDS) {
        uint w = skip_words[(pc.skip_off + e) >> 2];
        [[unroll]] for (uint i = 0u; i < 4u; i++) {
            s[i] = e4m3_to_f16((w >> (8u * i)) & 0xFFu);
        }
    } else {
        [[unroll]] for (uint i = 0u; i < 4u; i++) {
            if (SKIP_F16) {
                uint b = pc.skip_off + 2u * (e + i);
                s[i] = uint(skip[b]) | (uint(skip[b + 1u]) << 8);
            } else {
                s[i] = e4m3_to_f16(uint(skip[pc.skip_off + e + i]));
            }
        }
    }
    uint word = 0u;
    uint m[4];
    for (uint i = 0u; i < 4u; i++) {
        uint sb = pc.scale_off + 2u * (ch + i);
        uint sc = uint(scale[sb]) | (uint(scale[sb + 1u]) << 8);
        m[i] = decoder_merge(up[i], s[i], sc);
        word |= e4m3_from_f16(m[i]) << (8u * i);
    }
    if (WORDS) {
        out_words[(pc.out_off + e) >> 2] = word;
        if (RAW) {
            outraw_pairs[(pc.raw_off + e) >> 2] = uvec2(m[0] | (m[1] << 16), m[2] | (m[3] << 16));
        }
    } else {
        [[unroll]] for (uint i = 0u; i < 4u; i++) {
            outb[pc.out_off + e + i] = uint8_t(word >> (8u * i));
            if (RAW) {
                outraw[pc.raw_off + e + i] = uint16_t(m[i]);
            }
        }
    }
}
