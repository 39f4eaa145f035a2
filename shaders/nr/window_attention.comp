#version 450
// Loops are [[dont_unroll]]: unrolled copies of the f16/E4M3 helpers multiply driver compile
// time (seconds on lavapipe) for no gain in a kernel bound by integer arithmetic.
// Shifted-window attention of one level (spec nr-network.md 1.5, 2.2, 2.6, 2.7, 3.5, 8.9).
// One workgroup per (window, head), one invocation per query (natural window order t = 8y + x).
// K and V of the window are staged in shared memory in physical (4x4-tiled) key order, the
// head's 64x64 prior as [physical query][physical key] halves. Per query:
//   S[k] = prior[qp][k] + q.K[k]   (F13/H25 group chain over channels 0-15, 16-31)
//   e[k] = exp_window(S[k]); r = f16(1/tree(e)); P[k] = E4(f16(e[k]*r))
//   O[c] = E4(P.V[:, c])           (chain of four 16-key groups from +0, physical key order)
// Tokens outside the level are zero K/V rows whose weights still enter the denominator; only
// in-level queries are written. Tensors are E4M3 [w*h][heads*32]; priors are the model's
// stored bytes (fragment order of spec 3.5), read as bytes (any 2-byte alignment).
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
layout(std430, binding = 3) readonly buffer Priors { uint8_t priors[]; };
layout(std430, binding = 4) writeonly buffer Out { uint8_t outb[]; };

layout(push_constant) uniform Push {
    uint width;
    uint height;
    uint heads;
    uint shift_x;
    uint shift_y;
    uint q_off; // bytes, also for k/v/out below
    uint k_off;
    uint v_off;
    uint prior_off;
    uint out_off;
} pc;

shared uint ks[64 * 8];   // K row of physical key p: words 8p .. 8p+7
shared uint vt[32 * 16];  // channel c, physical keys 4w .. 4w+3: word 16c + w
shared uint pr[64 * 32];  // prior[qp][kp]: word 32qp + kp/2, even kp in the low half

uint natural_to_physical(uint t) {
    uint x = t & 7u;
    uint y = t >> 3;
    return (y >> 2) * 32u + (x >> 2) * 16u + (y & 3u) * 4u + (x & 3u);
}

uint physical_to_natural(uint p) {
    uint r = p & 15u;
    uint y = (p >> 5) * 4u + (r >> 2);
    uint x = ((p >> 4) & 1u) * 4u + (r & 3u);
    return y * 8u + x;
}

// Half index of prior[q][k] (physical query and key) in one head's stored fragments.
uint prior_index(uint q, uint k) {
    uint m = q & 15u;
    uint n = k & 15u;
    uint lane = 4u * (m & 7u) + ((n & 7u) >> 1);
    uint fragment = 2u * (m >> 3) + (n & 1u);
    return (q >> 4) * 1024u + (k >> 4) * 256u + lane * 8u + 4u * (n >> 3) + fragment;
}

// Token of natural window position t, or -1 outside the level.
int token_of(uint t) {
    int x = int(gl_WorkGroupID.x * 8u + (t & 7u)) - int(pc.shift_x);
    int y = int(gl_WorkGroupID.y * 8u + (t >> 3)) - int(pc.shift_y);
    if (x < 0 || y < 0 || x >= int(pc.width) || y >= int(pc.height)) {
        return -1;
    }
    return y * int(pc.width) + x;
}

uint read_word(uint base) {
    return uint(kin[base]) | (uint(kin[base + 1u]) << 8) | (uint(kin[base + 2u]) << 16)
        | (uint(kin[base + 3u]) << 24);
}

uint prior_half(uint head_base, uint q, uint k) {
    uint b = head_base + 2u * prior_index(q, k);
    return uint(priors[b]) | (uint(priors[b + 1u]) << 8);
}

void main() {
    uint t = gl_LocalInvocationID.x;
    uint head = gl_WorkGroupID.z;
    uint c = pc.heads * 32u;
    uint hc = 32u * head;

    // Stage K (invocation t loads physical key t).
    int ktok = token_of(physical_to_natural(t));
    [[dont_unroll]] for (uint w = 0u; w < 8u; w++) {
        ks[8u * t + w] = ktok < 0 ? 0u : read_word(pc.k_off + uint(ktok) * c + hc + 4u * w);
    }
    // Stage V transposed: 512 words, 8 per invocation.
    [[dont_unroll]] for (uint r = 0u; r < 8u; r++) {
        uint wi = 8u * t + r;
        uint ch = wi >> 4;
        uint w = wi & 15u;
        uint word = 0u;
        [[dont_unroll]] for (uint b = 0u; b < 4u; b++) {
            int tok = token_of(physical_to_natural(4u * w + b));
            if (tok >= 0) {
                word |= uint(vin[pc.v_off + uint(tok) * c + hc + ch]) << (8u * b);
            }
        }
        vt[wi] = word;
    }
    // Stage the prior row of physical query t.
    uint head_base = pc.prior_off + 8192u * head;
    [[dont_unroll]] for (uint w = 0u; w < 32u; w++) {
        pr[32u * t + w] = prior_half(head_base, t, 2u * w) | (prior_half(head_base, t, 2u * w + 1u) << 16);
    }
    barrier();

    int tok = token_of(t);
    if (tok < 0) {
        return;
    }
    uint qbase = pc.q_off + uint(tok) * c + hc;
    uvec4 qv[2];
    [[dont_unroll]] for (uint w = 0u; w < 8u; w++) {
        uint b = qbase + 4u * w;
        qv[w >> 2][w & 3u] = uint(qin[b]) | (uint(qin[b + 1u]) << 8) | (uint(qin[b + 2u]) << 16)
            | (uint(qin[b + 3u]) << 24);
    }
    uint qp = natural_to_physical(t);

    // Scores and weights, physical key order; e packed two halves per word.
    uint e[32];
    [[dont_unroll]] for (uint k = 0u; k < 64u; k++) {
        uint prior = (pr[32u * qp + (k >> 1)] >> (16u * (k & 1u))) & 0xFFFFu;
        uint s = prior;
        [[dont_unroll]] for (uint g = 0u; g < 2u; g++) {
            uint b = 8u * k + 4u * g;
            s = mma_e4_group(s, qv[g], uvec4(ks[b], ks[b + 1u], ks[b + 2u], ks[b + 3u]), P, WIDENED);
        }
        uint x = exp_window(s);
        if ((k & 1u) == 0u) {
            e[k >> 1] = x;
        } else {
            e[k >> 1] |= x << 16;
        }
    }
    uint tg[8];
    [[dont_unroll]] for (uint g = 0u; g < 8u; g++) {
        [[dont_unroll]] for (uint j = 0u; j < 4u; j++) {
            uint a = g + 16u * j;
            uint b = f16_add((e[a >> 1] >> (16u * (a & 1u))) & 0xFFFFu,
                             (e[(a + 8u) >> 1] >> (16u * (a & 1u))) & 0xFFFFu);
            tg[g] = softmax_tree_step(tg[g], b, j);
        }
    }
    uint r = recip(softmax_tree_finish(tg));
    uint p[16];
    [[dont_unroll]] for (uint w = 0u; w < 16u; w++) {
        uint word = 0u;
        [[dont_unroll]] for (uint b = 0u; b < 4u; b++) {
            uint k = 4u * w + b;
            uint x = (e[k >> 1] >> (16u * (k & 1u))) & 0xFFFFu;
            word |= e4m3_from_f16(f16_mul(x, r)) << (8u * b);
        }
        p[w] = word;
    }
    uint obase = pc.out_off + uint(tok) * c + hc;
    [[dont_unroll]] for (uint ch = 0u; ch < 32u; ch++) {
        uint acc = F16_POS_ZERO;
        [[dont_unroll]] for (uint j = 0u; j < 4u; j++) {
            uint vb = 16u * ch + 4u * j;
            acc = mma_e4_group(acc, uvec4(p[4u * j], p[4u * j + 1u], p[4u * j + 2u], p[4u * j + 3u]),
                               uvec4(vt[vb], vt[vb + 1u], vt[vb + 2u], vt[vb + 3u]), P, WIDENED);
        }
        outb[obase + ch] = uint8_t(e4m3_from_f16(acc));
    }
}
