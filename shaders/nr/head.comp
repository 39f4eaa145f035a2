#version 450
// Head (spec nr-network.md 1.7, 2.3): f16 GEMM 32 -> 4 of block 70's raw f16 output from a zero
// accumulator in the f16 MMA profile (F24: 4 groups of 8, P = 24; H25: 2 groups of 16, P = 25);
// each f16 result is stored as the f32 it equals. One invocation per row.
//
// The workgroup decodes the 128 weights once into shared memory; a row whose operands are all
// finite takes mma_group_f16_finite on operands decoded once, a row or column with an inf/NaN
// operand mma_group_f16 itself (the split of the Rust `gemm_f16_packed`).
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#include "f16.glsl"
#include "mma.glsl"

layout(local_size_x = 64) in;
layout(constant_id = 0) const int G = 8;
layout(constant_id = 1) const int P = 24;

layout(std430, binding = 0) readonly buffer In { uint in_words[]; };
// [4 outputs][32 inputs] halves, two per word.
layout(std430, binding = 1) readonly buffer Weights { uint w_words[]; };
layout(std430, binding = 2) writeonly buffer Out { uint outv[]; }; // f32 bits

layout(push_constant) uniform Push { uint rows; } pc;

shared uint s_wsig[4 * 32]; // weights, decoded (mma_f16_decoded_sig/exp)
shared int s_wexp[4 * 32];
// Per invocation: 1 when one of its 2 weights (both in output tid / 16's column) is inf/NaN; each
// invocation writes its own word (no Device-scope atomic, see adapter.comp).
shared uint s_wspecial[64];

uint half_at(uint idx) { return (in_words[idx >> 1] >> (16u * (idx & 1u))) & 0xFFFFu; }
uint weight(uint idx) { return (w_words[idx >> 1] >> (16u * (idx & 1u))) & 0xFFFFu; }

void main() {
    uint tid = gl_LocalInvocationID.x;
    bool wspecial = false;
    [[unroll]] for (uint j = 0u; j < 2u; j++) {
        uint idx = 2u * tid + j;
        uint h = weight(idx);
        s_wsig[idx] = mma_f16_decoded_sig(h);
        s_wexp[idx] = mma_f16_decoded_exp(h);
        wspecial = wspecial || f16_is_nonfinite(h);
    }
    s_wspecial[tid] = wspecial ? 1u : 0u;
    barrier();
    uint r = gl_GlobalInvocationID.x;
    if (r >= pc.rows) {
        return;
    }
    uint x[32];
    uint xs[32];
    int xe[32];
    bool row_special = false;
    [[unroll]] for (uint k = 0u; k < 32u; k += 2u) {
        uint w = in_words[(r * 32u + k) >> 1];
        x[k] = w & 0xFFFFu;
        x[k + 1u] = w >> 16;
    }
    [[unroll]] for (uint k = 0u; k < 32u; k++) {
        xs[k] = mma_f16_decoded_sig(x[k]);
        xe[k] = mma_f16_decoded_exp(x[k]);
        row_special = row_special || f16_is_nonfinite(x[k]);
    }
    [[unroll]] for (uint n = 0u; n < 4u; n++) {
        uint acc = F16_POS_ZERO;
        uint col_special = 0u;
        [[unroll]] for (uint i = 0u; i < 16u; i++) {
            col_special |= s_wspecial[16u * n + i];
        }
        if (row_special || col_special != 0u) {
            for (int kb = 0; kb < 32; kb += G) {
                uint a[16];
                uint b[16];
                for (int i = 0; i < 16; i++) {
                    a[i] = i < G ? half_at(r * 32u + uint(kb + i)) : 0u;
                    b[i] = i < G ? weight(n * 32u + uint(kb + i)) : 0u;
                }
                acc = mma_group_f16(acc, a, b, G, P);
            }
        } else {
            [[unroll]] for (int kb = 0; kb < 32; kb += G) {
                uint as_[16];
                int ae[16];
                uint bs[16];
                int be[16];
                [[unroll]] for (int i = 0; i < 16; i++) {
                    // Pairs past G are never read (the group has G products).
                    uint k = uint(kb + i) & 31u;
                    as_[i] = xs[k];
                    ae[i] = xe[k];
                    bs[i] = s_wsig[n * 32u + k];
                    be[i] = s_wexp[n * 32u + k];
                }
                acc = mma_group_f16_finite(acc, as_, ae, bs, be, G, P);
            }
        }
        outv[r * 4u + n] = floatBitsToUint(f16_to_f32(acc));
    }
}
