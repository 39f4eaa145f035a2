#version 450
// RR's history at render pixels (the graph's Reproject op, rr::frame::input::reproject_pixel;
// openngx's own): the previous output sampled with the 5-tap Catmull-Rom of
// shaders/lib/frame_history.glsl at ((x + 0.5 + jitter) + mv * MV.Scale) * (output / render),
// RGB = sat(sample * E), A = 1; all zero without usable history or off screen. One invocation
// per render pixel.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_16bit_storage : require
#include "f16.glsl"
#include "common.glsl"

layout(local_size_x = 64) in;

layout(std430, binding = 0) readonly buffer History { uint16_t hist[]; }; // [output][4] f16
layout(std430, binding = 1) readonly buffer Guides { uint guides[]; };    // [render][16] f32
layout(std430, binding = 2) readonly buffer Exposure { uint16_t exposure[]; };
layout(std430, binding = 3) writeonly buffer Out { uint outw[]; }; // R | G << 16, B | A << 16

layout(push_constant) uniform Push {
    uint rw;
    uint rh;
    uint ow;
    uint oh;
    // A band of render rows (src/rr/record/bands.rs): its first row and rows; guides and out
    // are bound from its first row (0 and rh unsplit).
    uint row0;
    uint rows;
    float jitter_x;
    float jitter_y;
    float mv_scale_x;
    float mv_scale_y;
    uint history_valid;
} pc;

float frame_history_texel(uint col, uint row, uint ch) {
    return f16_to_f32(uint(hist[(row * pc.ow + col) * 4u + ch]));
}

#include "frame_history.glsl"
#include "rr_frame.glsl"

const uint MOTION = 11u;
const uint LANES = 16u;

void main() {
    uint i = rr_flat_index(64u);
    if (i >= pc.rw * pc.rows) {
        return;
    }
    uint x = i % pc.rw;
    uint y = i / pc.rw + pc.row0;
    uint o[4] = uint[4](0u, 0u, 0u, 0u);
    if (pc.history_valid != 0u) {
        float rx = rr_ratio(pc.ow, pc.rw);
        float ry = rr_ratio(pc.oh, pc.rh);
        float mvx = frame_ftz(uintBitsToFloat(guides[i * LANES + MOTION]));
        float mvy = frame_ftz(uintBitsToFloat(guides[i * LANES + MOTION + 1u]));
        precise float px = (((float(x) + 0.5) + pc.jitter_x) + mvx * pc.mv_scale_x) * rx;
        precise float py = (((float(y) + 0.5) + pc.jitter_y) + mvy * pc.mv_scale_y) * ry;
        vec2 p = vec2(px, py);
        if (frame_on_screen(p, pc.ow, pc.oh)) {
            vec3 s = frame_catmull_rom(pc.ow, pc.oh, p);
            float ef = f16_to_f32(uint(exposure[0]));
            for (uint ch = 0u; ch < 3u; ++ch) {
                precise float v = s[ch] * ef;
                o[ch] = rr_sat(v);
            }
            o[3] = F16_ONE;
        }
    }
    outw[2u * i] = o[0] | (o[1] << 16u);
    outw[2u * i + 1u] = o[2] | (o[3] << 16u);
}
