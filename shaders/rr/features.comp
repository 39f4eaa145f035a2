#version 450
// enc0's input (the graph's Features op, rr::frame::input::{features, colour_token}; openngx's
// own slot map, docs/rr.md): per level-0 token, read at its mirrored render pixel, the 32
// feature slots as q8 codes and the exposure-normalised colour sat(c) * E the tails filter.
// One invocation per token.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require
#extension GL_EXT_shader_16bit_storage : require
#include "f16.glsl"
#include "rr/q8.glsl"
#include "common.glsl"
#include "rr_frame.glsl"

layout(local_size_x = 64) in;
layout(constant_id = 0) const bool DEPTH_OF_FIELD = false;

layout(std430, binding = 0) readonly buffer Color { uint color[]; };   // [render][4] f32
layout(std430, binding = 1) readonly buffer Guides { uint guides[]; }; // [render][16] f32
layout(std430, binding = 2) readonly buffer History { uint16_t hist[]; }; // [render][4] f16
layout(std430, binding = 3) readonly buffer Exposure { uint16_t exposure[]; };
layout(std430, binding = 4) writeonly buffer Features { uint8_t feat[]; };
layout(std430, binding = 5) writeonly buffer Colour { uint colour[]; }; // R | G << 16, B | A << 16

layout(push_constant) uniform Push {
    uint rw;
    uint rh;
    uint lw;
    // A band of level-0 rows (src/rr/record/bands.rs): its rows, its first row (features and
    // colour are bound from it) and the first render row colour, guides and history are bound
    // from (lh, 0, 0 unsplit).
    uint lh;
    uint row0;
    uint in_row0;
    float jitter_x;
    float jitter_y;
    float mv_scale_x;
    float mv_scale_y;
} pc;

// rr::graph::guide lanes.
const uint DIFFUSE_ALBEDO = 0u;
const uint SPECULAR_ALBEDO = 3u;
const uint NORMALS = 6u;
const uint ROUGHNESS = 9u;
const uint DEPTH = 10u;
const uint MOTION = 11u;
const uint SPECULAR_HIT = 13u;
const uint DIFFUSE_HIT = 14u;
const uint DOF = 15u;
const uint LANES = 16u;

uint s;

uint g(uint lane) { return rr_sat(uintBitsToFloat(guides[s * LANES + lane])); }

void main() {
    uint i = rr_flat_index(64u);
    if (i >= pc.lw * pc.lh) {
        return;
    }
    uint x = i % pc.lw;
    uint y = i / pc.lw + pc.row0;
    s = (rr_mirror(y, pc.rh) - pc.in_row0) * pc.rw + rr_mirror(x, pc.rw);
    uint e = uint(exposure[0]);
    uint cn[3];
    for (uint c = 0u; c < 3u; ++c) {
        cn[c] = f16_mul(rr_sat(uintBitsToFloat(color[4u * s + c])), e);
    }
    uint f[32];
    for (uint j = 0u; j < 32u; ++j) {
        f[j] = 0u;
    }
    for (uint c = 0u; c < 3u; ++c) {
        f[c] = rr_comp(cn[c]);
        f[4u + c] = g(DIFFUSE_ALBEDO + c);
        f[7u + c] = g(SPECULAR_ALBEDO + c);
        f[10u + c] = g(NORMALS + c);
        f[19u + c] = rr_comp(uint(hist[4u * s + c]));
    }
    f[3] = rr_comp(rr_luma(cn[0], cn[1], cn[2]));
    f[13] = g(ROUGHNESS);
    f[14] = g(DEPTH);
    float mvs[2] = float[2](pc.mv_scale_x, pc.mv_scale_y);
    float jit[2] = float[2](pc.jitter_x, pc.jitter_y);
    for (uint a = 0u; a < 2u; ++a) {
        precise float m = frame_ftz(uintBitsToFloat(guides[s * LANES + MOTION + a])) * mvs[a];
        f[15u + a] = rr_comp(f16_mul(rr_sat(m), RR_EIGHTH));
        f[23u + a] = rr_sat(jit[a]);
    }
    f[17] = rr_comp(g(SPECULAR_HIT));
    f[18] = rr_comp(g(DIFFUSE_HIT));
    f[22] = uint(hist[4u * s + 3u]);
    if (DEPTH_OF_FIELD) {
        f[25] = g(DOF);
    }
    f[31] = F16_ONE;
    for (uint j = 0u; j < 32u; ++j) {
        feat[32u * i + j] = uint8_t(rr_q8(f[j]));
    }
    colour[2u * i] = cn[0] | (cn[1] << 16u);
    colour[2u * i + 1u] = cn[2];
}
