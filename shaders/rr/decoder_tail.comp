#version 450
// A decoder's tail (spec rr-network.md 4.4; the graph's DecoderTail op, rr::frame::tails): per
// token the 3x3 kernel prediction over the coarser level's image upsampled bilinearly (weights
// 1/4, 3/4; edges clamped), u = filter, m = fma(s, u - low, low), out = m + detail (m where the
// detail is NaN); alpha 0. One invocation per token.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_16bit_storage : require
#include "f16.glsl"
#include "common.glsl"

layout(local_size_x = 64) in;

layout(std430, binding = 0) readonly buffer Logits { uint16_t logits[]; };
layout(std430, binding = 1) readonly buffer Coarse { uint16_t coarse[]; };
layout(std430, binding = 2) readonly buffer Low { uint16_t low[]; };
layout(std430, binding = 3) readonly buffer Detail { uint16_t detail[]; };
layout(std430, binding = 4) writeonly buffer Out { uint outw[]; }; // R | G << 16, B | A << 16
layout(std430, binding = 5) readonly buffer ExpTable { uint16_t exp_table[]; };
layout(std430, binding = 6) readonly buffer SigmoidTable { uint16_t sigmoid_table[]; };

layout(push_constant) uniform Push {
    uint w;
    uint h;
    uint lc;
    uint cw;
    uint chh;
    // A band of rows (src/rr/record/bands.rs): its first row and rows (logits, low, detail and
    // out are bound from its first row) and the coarse row the coarse surface is bound from
    // (0, h, 0 unsplit).
    uint row0;
    uint rows;
    uint c_row0;
} pc;

#include "tails.glsl"

const uint QUARTER = 0x3400u;
const uint THREE_QUARTERS = 0x3A00u;

// tails::bilinear_axis: the two coarse indices and their weights.
void axis(uint x, int d, uint n, out uint i0, out uint i1, out uint w0, out uint w1) {
    int i = int(x >> 1u) + d;
    int hi = int(n) - 1;
    if ((x & 1u) == 0u) {
        i0 = uint(clamp(i - 1, 0, hi));
        i1 = uint(clamp(i, 0, hi));
        w0 = QUARTER;
        w1 = THREE_QUARTERS;
    } else {
        i0 = uint(clamp(i, 0, hi));
        i1 = uint(clamp(i + 1, 0, hi));
        w0 = THREE_QUARTERS;
        w1 = QUARTER;
    }
}

uint cimg(uint x, uint y, uint ch) { return uint(coarse[((y - pc.c_row0) * pc.cw + x) * 4u + ch]); }

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
    uint t[3][9];
    for (uint k = 0u; k < 9u; ++k) {
        uint cx0, cx1, wx0, wx1, cy0, cy1, wy0, wy1;
        axis(x, int(k % 3u) - 1, pc.cw, cx0, cx1, wx0, wx1);
        axis(y, int(k / 3u) - 1, pc.chh, cy0, cy1, wy0, wy1);
        for (uint ch = 0u; ch < 3u; ++ch) {
            uint r0 = f16_fma(wx1, cimg(cx1, cy0, ch), f16_mul(wx0, cimg(cx0, cy0, ch)));
            uint r1 = f16_fma(wx1, cimg(cx1, cy1, ch), f16_mul(wx0, cimg(cx0, cy1, ch)));
            t[ch][k] = f16_fma(wy1, r1, f16_mul(wy0, r0));
        }
    }
    uint o[3];
    for (uint ch = 0u; ch < 3u; ++ch) {
        uint u = rr_tail_filter(wt, t[ch]);
        uint lo = uint(low[i * 4u + ch]);
        uint d = uint(detail[i * 4u + ch]);
        uint m = f16_fma(s, f16_add(u, f16_neg(lo)), lo);
        o[ch] = f16_is_nan(d) ? m : f16_add(m, d);
    }
    outw[2u * i] = o[0] | (o[1] << 16u);
    outw[2u * i + 1u] = o[2];
}
