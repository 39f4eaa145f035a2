#version 450
// Second step of a split-K GEMM (`gemm.glsl` with PART < K): the partitions' f16 results,
// [partition][row][channel] in the partials binding, added in partition order with f16 adds
// (partition 0, which carries the seed, first: the model's order, spec nr-network.md 1.4), then
// the GEMM's epilogue (gemm_store.glsl). One invocation per 4 adjacent outputs of a row (one E4
// word). Portable arithmetic on every device (emulated f16 adds; a small share of the frame:
// the bench's GEMM times include it).
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#include "f16.glsl"

layout(local_size_x = 64) in;

layout(std430, binding = 0) readonly buffer Partials { uint part_words[]; };
layout(std430, binding = 1) writeonly buffer Out { uint out_words[]; };
// The raw f16 output of the dual epilogue (bound to `Out` otherwise, then never written).
layout(std430, binding = 2) writeonly buffer OutRaw { uint raw_words[]; };
// `numerics::tables::GEMM_EPILOGUE`, as in gemm.glsl (bound to the partials for the f16
// epilogue, then never read).
layout(std430, binding = 3) readonly buffer EpilogueTable { uint table_words[]; };
#include "gemm_store.glsl"

layout(push_constant) uniform Push {
    uint outputs; // rows * channels (a multiple of 4)
    uint parts;   // partitions (>= 2)
    uint epi;     // as gemm.glsl: 0 = E4(SiLU(x)), 1 = E4(x), 2 = f16, 3 = f16 raw + E4
} pc;

void main() {
    uint quad = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * 64u
        + gl_LocalInvocationID.x;
    uint at = 4u * quad; // element index of the first of 4 outputs
    if (at >= pc.outputs) {
        return;
    }
    uint w0 = part_words[at / 2u];
    uint w1 = part_words[at / 2u + 1u];
    uint h[4] = uint[4](w0 & 0xFFFFu, w0 >> 16, w1 & 0xFFFFu, w1 >> 16);
    for (uint p = 1u; p < pc.parts; p++) {
        uint pat = p * pc.outputs + at;
        uint v0 = part_words[pat / 2u];
        uint v1 = part_words[pat / 2u + 1u];
        h[0] = f16_add(h[0], v0 & 0xFFFFu);
        h[1] = f16_add(h[1], v0 >> 16);
        h[2] = f16_add(h[2], v1 & 0xFFFFu);
        h[3] = f16_add(h[3], v1 >> 16);
    }
    gemm_store_quad(pc.epi, at, h);
}
