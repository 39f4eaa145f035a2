#version 450
// Input adapter (spec nr-network.md 1.7, 2.3): f32 features [rows][16] -> f16 (RNE) -> f16 GEMM
// 16 -> 32 from a zero accumulator in the f16 MMA profile (F24: groups of 8, P = 24; H25: 16, 25),
// published as raw f16 [rows][32] and E4 [rows][32]. One invocation per (row, 4 output columns);
// a workgroup is 8 rows x 8 column quads.
//
// The workgroup converts each feature once and decodes the 512 weights once (significand with
// the sign in bit 31, exponent) into shared memory. Groups whose operands are all finite take
// mma_group_f16_finite on those decoded operands; a row or column with an inf/NaN operand takes
// mma_group_f16 itself (the same split as the Rust `gemm_f16_packed`).
// H200 1080p: 5.2 ms per frame with every invocation converting its row and decoding its
// weights in every group.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#include "f16.glsl"
#include "e4m3.glsl"
#include "mma.glsl"

layout(local_size_x = 64) in;
layout(constant_id = 0) const int G = 8;
layout(constant_id = 1) const int P = 24;

layout(std430, binding = 0) readonly buffer Features { uint features[]; }; // f32 bits
// [32 outputs][16 inputs] halves, two per word.
layout(std430, binding = 1) readonly buffer Weights { uint w_words[]; };
layout(std430, binding = 2) writeonly buffer Raw { uint raw_words[]; };
layout(std430, binding = 3) writeonly buffer Out { uint out_words[]; };

layout(push_constant) uniform Push { uint rows; } pc;

shared uint s_x[8][16];      // the rows' features as halves
shared uint s_wsig[32 * 16]; // weights, decoded (mma_f16_decoded_sig/exp)
shared int s_wexp[32 * 16];
// Per invocation: 1 when one of its 8 weights (all in column tid / 2) is inf/NaN. Each invocation
// writes its own word, so no atomics: a shared-memory atomicOr compiles to a Device-scope atomic,
// which a device with vulkanMemoryModel but not vulkanMemoryModelDeviceScope must not be given.
shared uint s_wspecial[64];

uint weight(uint n, uint k) {
    uint idx = n * 16u + k;
    return (w_words[idx >> 1] >> (16u * (idx & 1u))) & 0xFFFFu;
}

void main() {
    uint tid = gl_LocalInvocationID.x;
    uint lr = tid / 8u;
    uint q = tid % 8u;
    uint r = gl_WorkGroupID.x * 8u + lr;
    bool live = r < pc.rows;

    // Features 2q, 2q + 1 of row lr; weights 8 * tid .. + 7.
    [[unroll]] for (uint j = 0u; j < 2u; j++) {
        uint k = 2u * q + j;
        s_x[lr][k] = live ? f16_from_f32_bits(features[r * 16u + k], false, 0) : 0u;
    }
    bool wspecial = false;
    [[unroll]] for (uint j = 0u; j < 8u; j++) {
        uint idx = 8u * tid + j;
        uint h = weight(idx / 16u, idx % 16u);
        s_wsig[idx] = mma_f16_decoded_sig(h);
        s_wexp[idx] = mma_f16_decoded_exp(h);
        wspecial = wspecial || f16_is_nonfinite(h);
    }
    s_wspecial[tid] = wspecial ? 1u : 0u;
    barrier();
    if (!live) {
        return;
    }

    uint x[16];
    uint xs[16];
    int xe[16];
    bool row_special = false;
    [[unroll]] for (uint k = 0u; k < 16u; k++) {
        x[k] = s_x[lr][k];
        xs[k] = mma_f16_decoded_sig(x[k]);
        xe[k] = mma_f16_decoded_exp(x[k]);
        row_special = row_special || f16_is_nonfinite(x[k]);
    }
    uint h[4];
    [[unroll]] for (uint j = 0u; j < 4u; j++) {
        uint n = 4u * q + j;
        uint acc = F16_POS_ZERO;
        if (row_special || (s_wspecial[2u * n] | s_wspecial[2u * n + 1u]) != 0u) {
            for (int kb = 0; kb < 16; kb += G) {
                uint a[16];
                uint b[16];
                for (int i = 0; i < 16; i++) {
                    a[i] = i < G ? x[kb + i] : 0u;
                    b[i] = i < G ? weight(n, uint(kb + i)) : 0u;
                }
                acc = mma_group_f16(acc, a, b, G, P);
            }
        } else {
            [[unroll]] for (int kb = 0; kb < 16; kb += G) {
                uint as_[16];
                int ae[16];
                uint bs[16];
                int be[16];
                [[unroll]] for (int i = 0; i < 16; i++) {
                    // Pairs past G are never read (the group has G products).
                    uint k = uint(kb + i) & 15u;
                    as_[i] = xs[k];
                    ae[i] = xe[k];
                    bs[i] = s_wsig[n * 16u + k];
                    be[i] = s_wexp[n * 16u + k];
                }
                acc = mma_group_f16_finite(acc, as_, ae, bs, be, G, P);
            }
        }
        h[j] = acc;
    }
    uint at = r * 32u + 4u * q;
    raw_words[at / 2u] = h[0] | (h[1] << 16);
    raw_words[at / 2u + 1u] = h[2] | (h[3] << 16);
    out_words[at / 4u] = e4m3_from_f16(h[0]) | (e4m3_from_f16(h[1]) << 8) |
                         (e4m3_from_f16(h[2]) << 16) | (e4m3_from_f16(h[3]) << 24);
}
