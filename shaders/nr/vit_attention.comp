#version 450
// Loops are [[dont_unroll]]: unrolled copies of the f16/E4M3 helpers multiply driver compile
// time (seconds on lavapipe) for no gain in a kernel bound by integer arithmetic.
// Global ViT attention over all tokens of L5 (spec nr-network.md 1.4, 1.5, 2.2, 2.6, 2.7, 8.8).
// One workgroup per (64 queries, head); keys are streamed in blocks of 64 (token order) through
// shared memory, padded with zero rows up to a multiple of 64. Per query:
//   S[k] = q.K[k] (group chain from +0), e[k] = exp_vit(S[k]), P[k] = E4(e[k]) (unnormalised)
//   acc[c] = P.V[:, c] as one chain of 16-key groups over all padded keys, in key order
//   blockSum = tree(e of the block); total = first blockSum, then + each next one (f16)
//   total = f16(total - f16(exp_vit(0) * paddedRows)); r = f16(1/total); out = E4(f16(acc * r))
// The key stream feeds the pairing tree directly: 16-key group j of a block holds the pairs
// (g + 16j, g + 16j + 8).
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require
#include "e4m3.glsl"
#include "recip.glsl"
#include "softmax.glsl"
#include "mma_e4.glsl"

layout(local_size_x = 64) in;
layout(constant_id = 0) const int P = 13;
layout(constant_id = 1) const bool WIDENED = false;

layout(std430, binding = 0) readonly buffer QIn { uint8_t qin[]; };
layout(std430, binding = 1) readonly buffer KIn { uint8_t kin[]; };
layout(std430, binding = 2) readonly buffer VIn { uint8_t vin[]; };
layout(std430, binding = 3) writeonly buffer Out { uint8_t outb[]; };

layout(push_constant) uniform Push {
    uint tokens;
    uint heads;
    uint q_off; // bytes
    uint k_off;
    uint v_off;
    uint out_off;
} pc;

shared uint ks[64 * 8];  // K row of block key p: words 8p .. 8p+7
shared uint vt[32 * 16]; // channel c, block keys 4w .. 4w+3: word 16c + w

uint read_q(uint b) {
    return uint(qin[b]) | (uint(qin[b + 1u]) << 8) | (uint(qin[b + 2u]) << 16) | (uint(qin[b + 3u]) << 24);
}

uint read_k(uint b) {
    return uint(kin[b]) | (uint(kin[b + 1u]) << 8) | (uint(kin[b + 2u]) << 16) | (uint(kin[b + 3u]) << 24);
}

void main() {
    uint t = gl_LocalInvocationID.x;
    uint head = gl_WorkGroupID.y;
    uint c = pc.heads * 32u;
    uint hc = 32u * head;
    uint query = gl_WorkGroupID.x * 64u + t;
    bool live = query < pc.tokens;
    uint blocks = (pc.tokens + 63u) / 64u;

    uvec4 qv[2];
    qv[0] = uvec4(0u);
    qv[1] = uvec4(0u);
    if (live) {
        uint qbase = pc.q_off + query * c + hc;
        [[dont_unroll]] for (uint w = 0u; w < 8u; w++) {
            qv[w >> 2][w & 3u] = read_q(qbase + 4u * w);
        }
    }
    uint acc[32];
    [[dont_unroll]] for (uint ch = 0u; ch < 32u; ch++) {
        acc[ch] = F16_POS_ZERO;
    }
    uint total = F16_POS_ZERO;

    [[dont_unroll]] for (uint blk = 0u; blk < blocks; blk++) {
        barrier();
        uint key = 64u * blk + t;
        [[dont_unroll]] for (uint w = 0u; w < 8u; w++) {
            ks[8u * t + w] = key < pc.tokens ? read_k(pc.k_off + key * c + hc + 4u * w) : 0u;
        }
        [[dont_unroll]] for (uint r = 0u; r < 8u; r++) {
            uint wi = 8u * t + r;
            uint ch = wi >> 4;
            uint w = wi & 15u;
            uint word = 0u;
            [[dont_unroll]] for (uint b = 0u; b < 4u; b++) {
                uint vk = 64u * blk + 4u * w + b;
                if (vk < pc.tokens) {
                    word |= uint(vin[pc.v_off + vk * c + hc + ch]) << (8u * b);
                }
            }
            vt[wi] = word;
        }
        barrier();
        if (!live) {
            continue;
        }
        uint tg[8];
        [[dont_unroll]] for (uint j = 0u; j < 4u; j++) {
            uint eh[16];
            uvec4 pw = uvec4(0u);
            [[dont_unroll]] for (uint i = 0u; i < 16u; i++) {
                uint k = 16u * j + i;
                uint s = F16_POS_ZERO;
                [[dont_unroll]] for (uint g = 0u; g < 2u; g++) {
                    uint b = 8u * k + 4u * g;
                    s = mma_e4_group(s, qv[g], uvec4(ks[b], ks[b + 1u], ks[b + 2u], ks[b + 3u]), P,
                                     WIDENED);
                }
                eh[i] = exp_vit(s);
                pw[i >> 2] |= e4m3_from_f16(eh[i]) << (8u * (i & 3u));
            }
            [[dont_unroll]] for (uint g = 0u; g < 8u; g++) {
                tg[g] = softmax_tree_step(tg[g], f16_add(eh[g], eh[g + 8u]), j);
            }
            [[dont_unroll]] for (uint ch = 0u; ch < 32u; ch++) {
                uint vb = 16u * ch + 4u * j;
                acc[ch] = mma_e4_group(acc[ch], pw, uvec4(vt[vb], vt[vb + 1u], vt[vb + 2u], vt[vb + 3u]),
                                       P, WIDENED);
            }
        }
        uint bs = softmax_tree_finish(tg);
        total = blk == 0u ? bs : f16_add(total, bs);
    }
    if (!live) {
        return;
    }
    total = softmax_vit_correct(total, blocks * 64u - pc.tokens);
    uint r = recip(total);
    uint obase = pc.out_off + query * c + hc;
    [[dont_unroll]] for (uint ch = 0u; ch < 32u; ch++) {
        outb[obase + ch] = uint8_t(e4m3_from_f16(f16_mul(acc[ch], r)));
    }
}
