#version 450
// Test kernel: the Ray Reconstruction numerics of shaders/lib/rr (FUNC by specialization
// constant). Element i reads RECORD words at args[RECORD * i] and writes OUT words at
// outv[OUT * i]; halves travel two per word (low half first), E4M3 codes four per word.
// Binding 2 holds a table (the tail softmax's exp weights, two halves per word).
#extension GL_GOOGLE_include_directive : require
#include "f16.glsl"
#include "recip.glsl"
#include "rr/q8.glsl"
#include "rr/k32.glsl"
#include "rr/lanes.glsl"
#include "rr/rms.glsl"
#include "rr/cubic.glsl"
#include "rr/act.glsl"
#include "rr/gates.glsl"

layout(local_size_x = 64) in;
layout(constant_id = 0) const uint FUNC = 0u;
layout(constant_id = 1) const uint RECORD = 1u;
layout(constant_id = 2) const uint OUT = 1u;
layout(std430, binding = 0) readonly buffer Args { uint args[]; };
layout(std430, binding = 1) writeonly buffer Out { uint outv[]; };
layout(std430, binding = 2) readonly buffer Table { uint table[]; };
layout(push_constant) uniform Push { uint count; } pc;

uint base;

uint word(uint w) { return args[base + w]; }
// Half j of the record, starting at word w0.
uint half_at(uint w0, uint j) { return (word(w0 + j / 2u) >> (16u * (j & 1u))) & 0xFFFFu; }
uint code_at(uint w0, uint j) { return (word(w0 + j / 4u) >> (8u * (j & 3u))) & 0xFFu; }

// The lanes-tree sum of n halves v[] (n a multiple of 32, at most 160).
uint row_sum(uint v[160], uint n) { return rr_row_sum(v, n); }

void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i >= pc.count) {
        return;
    }
    base = RECORD * i;
    uint o = OUT * i;
    switch (FUNC) {
    case 0u: outv[o] = rr_q8(word(0u)); break;
    case 1u: outv[o] = rr_q8_relu(word(0u)); break;
    case 2u: outv[o] = rr_q8_to_f16(word(0u)); break;
    case 3u: outv[o] = rr_cubic_exp(word(0u)); break;
    case 4u: outv[o] = rr_act(word(0u)); break;
    case 5u: {
        // [acc, a codes (8 words), b codes (8 words)]
        // Both forms of the step: the kernels' (rr_step_*) is written, poisoned if the
        // reference form (rr_acc_*) disagrees.
        RrAcc acc = rr_acc_begin(word(0u));
        RrStep st = RR_STEP_ZERO;
        for (uint k = 0u; k < 32u; ++k) {
            rr_acc_mac(acc, code_at(1u, k), code_at(9u, k));
            rr_step_mac(st, rr_code(code_at(1u, k)), rr_code(code_at(9u, k)));
        }
        uint slow = rr_acc_round(acc);
        uint fast = rr_step_round(st, word(0u));
        outv[o] = fast == slow ? fast : (0xDEAD0000u | fast);
        break;
    }
    case 6u: {
        // [n, halves (80 words)]
        uint n = word(0u);
        uint v[160];
        for (uint j = 0u; j < 160u; ++j) {
            v[j] = j < n ? half_at(1u, j) : 0u;
        }
        outv[o] = row_sum(v, n);
        break;
    }
    case 7u: {
        // [n, eps, x (80 words), gain (80 words)] -> 80 words of halves
        uint n = word(0u);
        uint eps = word(1u);
        uint v[160];
        for (uint j = 0u; j < 160u; ++j) {
            v[j] = j < n ? rr_square(half_at(2u, j)) : 0u;
        }
        uint inv = rr_inv_root(row_sum(v, n), eps);
        for (uint j = 0u; j < 80u; ++j) {
            uint lo = 2u * j < n ? rr_norm_apply(half_at(2u, 2u * j), inv, half_at(82u, 2u * j)) : 0u;
            uint hi = 2u * j + 1u < n ? rr_norm_apply(half_at(2u, 2u * j + 1u), inv, half_at(82u, 2u * j + 1u)) : 0u;
            outv[o + j] = lo | (hi << 16);
        }
        break;
    }
    case 8u: {
        // 96 scores (48 words) -> 96 E4M3 codes (24 words)
        uint v[160];
        for (uint j = 0u; j < 160u; ++j) {
            v[j] = j < 96u ? rr_cubic_exp(half_at(0u, j)) : 0u;
        }
        uint r = recip(row_sum(v, 96u));
        for (uint j = 0u; j < 24u; ++j) {
            uint w = 0u;
            for (uint b = 0u; b < 4u; ++b) {
                w |= rr_q8(f16_mul(v[4u * j + b], r)) << (8u * b);
            }
            outv[o + j] = w;
        }
        break;
    }
    case 9u: {
        // [n, halves in [0, 1] (8 words)] -> RN_f16(1 / sum)
        uint n = word(0u);
        uint s = 0u;
        bool nan = false;
        for (uint j = 0u; j < n; ++j) {
            uint h = half_at(1u, j);
            nan = nan || f16_is_nan(h);
            s += rr_fixed24(h);
        }
        outv[o] = nan ? F16_QNAN : (s == 0u ? F16_POS_INF : rr_recip_fixed24(s));
        break;
    }
    case 10u: {
        // 10 logits (5 words) -> 10 probabilities (5 words); exp weights from the table.
        uint l[10];
        uint mx = half_at(0u, 0u);
        for (uint j = 0u; j < 10u; ++j) {
            l[j] = half_at(0u, j);
            mx = rr_max(mx, l[j]);
        }
        uint s = 0u;
        bool nan = false;
        for (uint j = 0u; j < 10u; ++j) {
            uint d = f16_add(l[j], f16_neg(mx));
            uint e = (table[d / 2u] >> (16u * (d & 1u))) & 0xFFFFu;
            l[j] = e;
            nan = nan || f16_is_nan(e);
            s += nan ? 0u : rr_fixed24(e);
        }
        uint r = nan ? F16_QNAN : (s == 0u ? F16_POS_INF : rr_recip_fixed24(s));
        for (uint j = 0u; j < 5u; ++j) {
            outv[o + j] = f16_mul(l[2u * j], r) | (f16_mul(l[2u * j + 1u], r) << 16);
        }
        break;
    }
    default: outv[o] = 0xDEADBEEFu; break;
    }
}
