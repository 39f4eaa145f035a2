#version 450
// RR's RMS norm (spec rr-network.md 5.2; the graph's Norm op): per row, the f16 squares summed
// in the MMA fragment's lanes tree, inv = rsqrt(f16(sum + eps)), out = q8(f16(x * f16(inv * g)))
// (shaders/lib/rr/rms.glsl). One invocation per row; X_F16 picks the input type (f16, or E4M3
// decoded).
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require
#extension GL_EXT_shader_16bit_storage : require
#include "f16.glsl"
#include "recip.glsl"
#include "rr/q8.glsl"
#include "rr/lanes.glsl"
#include "rr/rms.glsl"
#include "common.glsl"

layout(local_size_x = 64) in;
layout(constant_id = 0) const bool X_F16 = false;

layout(std430, binding = 0) readonly buffer X { uint8_t xb[]; };
layout(std430, binding = 1) readonly buffer Gain { uint16_t gain[]; };
layout(std430, binding = 2) writeonly buffer Out { uint8_t outb[]; };

layout(push_constant) uniform Push {
    uint rows;
    uint ch;
    uint eps;
} pc;

void main() {
    uint r = rr_flat_index(64u);
    if (r >= pc.rows) {
        return;
    }
    uint v[RR_MAX_ROW];
    uint sq[RR_MAX_ROW];
    for (uint j = 0u; j < RR_MAX_ROW; ++j) {
        uint h = 0u;
        if (j < pc.ch) {
            uint i = r * pc.ch + j;
            h = X_F16 ? (uint(xb[2u * i]) | (uint(xb[2u * i + 1u]) << 8u))
                      : rr_q8_to_f16(uint(xb[i]));
        }
        v[j] = h;
        sq[j] = rr_square(h);
    }
    uint inv = rr_inv_root(rr_row_sum(sq, pc.ch), pc.eps);
    for (uint j = 0u; j < pc.ch; ++j) {
        outb[r * pc.ch + j] = uint8_t(rr_q8(rr_norm_apply(v[j], inv, uint(gain[j]))));
    }
}
