#version 450
// Test build of the tensor route's fused window staging (shaders/nr/window_stage.glsl,
// NORM_FUSED): one workgroup per (window, head) stages q', k', v' from the f16 QKV exactly as
// window_attention_coopmat_qkv.comp does, then writes the staged rows (f16 pairs) out instead
// of running the products, so devices without cooperative matrices (lavapipe) can check the
// staging against numerics::norm. Emulated halves (f16.glsl): the same bytes as the native
// build's. Output: for workgroup (x, y, head), part p (0 q, 1 k, 2 v) and row r (queries in
// natural order, keys and values in physical order), 16 words at
// ((((y * groups_x + x) * heads + head) * 3 + p) * 64 + r) * 16.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#define NORM_FUSED 1
#include "e4m3.glsl"
#include "e4m3_widen.glsl"

layout(local_size_x = 128) in;

layout(std430, binding = 0) readonly buffer QkvWords { uint qkv_words[]; };
layout(std430, binding = 1) readonly buffer Temps { uint8_t temps[]; };
// numerics::tables::ATTENTION.
layout(std430, binding = 2) readonly buffer Tables { uint table_words[]; };
layout(std430, binding = 3) writeonly buffer Staged { uint staged[]; };
#include "tables.glsl"

layout(push_constant) uniform Push {
    uint width;
    uint height;
    uint heads;
    uint shift_x;
    uint shift_y;
    uint qkv_off;  // words
    uint temp_off; // bytes
} pc;

const uint CS = 20u;
shared uint s_lut[256];
shared uint s_q[64 * CS];
shared uint s_k[64 * CS];
shared uint s_v[64 * CS];

#include "../nr/window_stage.glsl"

void main() {
    uint tid = gl_LocalInvocationID.x;
    s_lut[tid] = e4m3_to_f16(tid);
    s_lut[tid + 128u] = e4m3_to_f16(tid + 128u);
    barrier();
    uint row = tid >> 1;
    uint h = tid & 1u;
    stage_normalized(token_of(row), token_of(physical_to_natural(row)), h, row * CS + 8u * h);
    barrier();
    uint wg = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * pc.heads + gl_WorkGroupID.z;
    for (uint e = tid; e < 3u * 64u * 16u; e += 128u) {
        uint p = e / 1024u;
        uint r = (e / 16u) % 64u;
        uint i = e % 16u;
        uint w = p == 0u ? s_q[r * CS + i] : (p == 1u ? s_k[r * CS + i] : s_v[r * CS + i]);
        staged[wg * 3072u + e] = w;
    }
}
