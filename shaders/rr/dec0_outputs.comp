#version 450
// dec0's other outputs (the graph's Dec0Outputs op): per token out48 = q8 of block channels
// 16..23, out144 = tanh of channels 24..27 as f32 (the correctly rounded table of
// numerics::rr::gates). One invocation per token.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require
#extension GL_EXT_shader_16bit_storage : require
#include "f16.glsl"
#include "rr/q8.glsl"
#include "common.glsl"

layout(local_size_x = 64) in;

layout(std430, binding = 0) readonly buffer X { uint16_t x[]; };
layout(std430, binding = 1) writeonly buffer Codes { uint8_t codes[]; };
layout(std430, binding = 2) writeonly buffer Kernel { uint kernel[]; };
layout(std430, binding = 3) readonly buffer TanhTable { uint tanh_table[]; };

layout(push_constant) uniform Push {
    uint rows;
    uint ch;
} pc;

void main() {
    uint r = rr_flat_index(64u);
    if (r >= pc.rows) {
        return;
    }
    for (uint j = 0u; j < 8u; ++j) {
        codes[r * 8u + j] = uint8_t(rr_q8(uint(x[r * pc.ch + 16u + j])));
    }
    for (uint j = 0u; j < 4u; ++j) {
        kernel[r * 4u + j] = tanh_table[uint(x[r * pc.ch + 24u + j])];
    }
}
