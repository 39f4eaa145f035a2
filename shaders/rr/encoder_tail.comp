#version 450
// An encoder's tail (spec rr-network.md 4.3; the graph's EncoderTail op, rr::frame::tails): per
// token the 3x3 kernel prediction over the level's colour (edge taps clamped) with the softmax of
// logits 0..9 and the gate s = sigmoid(logit 10): out112 = f - s*f and out120 = s*f (SPLIT), or
// out112 = f (enc5). One invocation per token; the quarter-average to the next level is
// quad.comp, launched after this one.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_16bit_storage : require
#include "f16.glsl"
#include "common.glsl"

layout(local_size_x = 64) in;
layout(constant_id = 0) const bool SPLIT = true;

layout(std430, binding = 0) readonly buffer Logits { uint16_t logits[]; };
layout(std430, binding = 1) readonly buffer Image { uint16_t img[]; };
// RGBA f16 surfaces as two words per token (R | G << 16, B | A << 16).
layout(std430, binding = 2) writeonly buffer Out112 { uint out112[]; };
layout(std430, binding = 3) writeonly buffer Out120 { uint out120[]; };
layout(std430, binding = 4) readonly buffer ExpTable { uint16_t exp_table[]; };
layout(std430, binding = 5) readonly buffer SigmoidTable { uint16_t sigmoid_table[]; };

layout(push_constant) uniform Push {
    uint w;
    uint h;
    uint lc; // logits channels
    // A band of rows (src/rr/record/bands.rs): its first row and rows (logits and the outputs
    // are bound from its first row) and the row the image is bound from (0, h, 0 unsplit).
    uint row0;
    uint rows;
    uint in_row0;
} pc;

#include "tails.glsl"

void main() {
    uint i = rr_flat_index(64u);
    if (i >= pc.w * pc.rows) {
        return;
    }
    uint x = i % pc.w;
    uint y = i / pc.w + pc.row0;
    uint l[11];
    for (uint j = 0u; j < 11u; ++j) {
        l[j] = uint(logits[i * pc.lc + j]);
    }
    uint wt[10];
    uint s = rr_tail_weights(l, wt);
    uint f[3];
    for (uint ch = 0u; ch < 3u; ++ch) {
        uint t[9];
        for (uint k = 0u; k < 9u; ++k) {
            int tx = clamp(int(x) + int(k % 3u) - 1, 0, int(pc.w) - 1);
            int ty = clamp(int(y) + int(k / 3u) - 1, 0, int(pc.h) - 1);
            t[k] = uint(img[((uint(ty) - pc.in_row0) * pc.w + uint(tx)) * 4u + ch]);
        }
        f[ch] = rr_tail_filter(wt, t);
    }
    if (SPLIT) {
        uint keep[3];
        uint pass_[3];
        for (uint ch = 0u; ch < 3u; ++ch) {
            keep[ch] = f16_mul(s, f[ch]);
            pass_[ch] = f16_add(f[ch], f16_neg(keep[ch]));
        }
        out112[2u * i] = pass_[0] | (pass_[1] << 16u);
        out112[2u * i + 1u] = pass_[2];
        out120[2u * i] = keep[0] | (keep[1] << 16u);
        out120[2u * i + 1u] = keep[2];
    } else {
        out112[2u * i] = f[0] | (f[1] << 16u);
        out112[2u * i + 1u] = f[2];
    }
}
