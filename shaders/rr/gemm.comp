#version 450
// RR's GEMM (spec rr-network.md 5.1; the ops Gemm, Merge and Expand of src/rr/graph): out[r][j] =
// the k32 chain (shaders/lib/rr/k32.glsl, its rr_step form) of A row r with weight row j (natural [n][k] E4M3
// codes) from the seed, one f16 rounding per 32-wide K step, then the epilogue. One invocation
// per four adjacent output columns of a row (n is a multiple of 4).
//
// GATHER 0: A row r is input row r; 1 (patch merge): A row r is the 2x2 fine tokens of coarse
// token r, sub-position q = 2(y&1) + (x&1) at k = q*CH + c.
// SEED 0: +0; 1: bias[j]; 2: f16(q8 decode of x[r][j] + bias[j]); 3: f16(x[r][j] + bias[j]) (x
// f16).
// EPI 0: f16; 1: q8; 2: q8(act(h)) (act from the table built by numerics::rr::act); 3: q8 relu;
// 4 (patch expand and skip add): column j = q*CH + c goes to fine token (2X + (q&1),
// 2Y + (q>>1)) as f16(deq(q8(h)) + deq(skip)).
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require
#extension GL_EXT_shader_16bit_storage : require
#include "f16.glsl"
#include "rr/q8.glsl"
#include "rr/k32.glsl"
#include "common.glsl"

layout(local_size_x = 64) in;
layout(constant_id = 0) const uint GATHER = 0u;
layout(constant_id = 1) const uint SEED = 0u;
layout(constant_id = 2) const uint EPI = 0u;

// A and B as words of four codes: k, the channels and every row start are multiples of 4.
layout(std430, binding = 0) readonly buffer A { uint aw[]; };
layout(std430, binding = 1) readonly buffer B { uint bw[]; };
layout(std430, binding = 2) readonly buffer Bias { uint16_t bias[]; };
layout(std430, binding = 3) readonly buffer X { uint8_t xb[]; };
layout(std430, binding = 4) writeonly buffer Out { uint8_t outb[]; };
layout(std430, binding = 5) readonly buffer Table { uint16_t table[]; };
layout(std430, binding = 6) readonly buffer Skip { uint8_t skip[]; };

layout(push_constant) uniform Push {
    uint rows;
    uint n;
    uint k;
    uint ch;     // GATHER 1 / EPI 4: the fine level's channels
    uint fine_w; // GATHER 1 / EPI 4: the fine level's width
    uint coarse_w;
} pc;

// The word of A row r holding codes kk..kk+3 (kk a multiple of 4).
uint a_word(uint r, uint kk) {
    if (GATHER == 1u) {
        uint q = kk / pc.ch;
        uint c = kk - q * pc.ch;
        uint cx = r % pc.coarse_w;
        uint cy = r / pc.coarse_w;
        uint f = (2u * cy + (q >> 1u)) * pc.fine_w + 2u * cx + (q & 1u);
        return aw[(f * pc.ch + c) >> 2u];
    }
    return aw[(r * pc.k + kk) >> 2u];
}

uint x_half(uint i) { return uint(xb[2u * i]) | (uint(xb[2u * i + 1u]) << 8u); }

void put_half(uint i, uint h) {
    outb[2u * i] = uint8_t(h & 0xFFu);
    outb[2u * i + 1u] = uint8_t(h >> 8u);
}

void main() {
    uint idx = rr_flat_index(64u);
    uint quads = pc.n / 4u;
    uint r = idx / quads;
    if (r >= pc.rows) {
        return;
    }
    uint j0 = 4u * (idx - r * quads);
    uint acc[4];
    for (uint i = 0u; i < 4u; ++i) {
        uint j = j0 + i;
        uint s = 0u;
        if (SEED == 1u) {
            s = uint(bias[j]);
        } else if (SEED == 2u) {
            s = f16_add(rr_q8_to_f16(uint(xb[r * pc.n + j])), uint(bias[j]));
        } else if (SEED == 3u) {
            s = f16_add(x_half(r * pc.n + j), uint(bias[j]));
        }
        acc[i] = s;
    }
    for (uint k0 = 0u; k0 < pc.k; k0 += 32u) {
        uint kend = min(k0 + 32u, pc.k); // k is a multiple of 32 in every RR GEMM
        RrStep st[4] = RrStep[4](RR_STEP_ZERO, RR_STEP_ZERO, RR_STEP_ZERO, RR_STEP_ZERO);
        for (uint kk = k0; kk < kend; kk += 4u) {
            uint wa = a_word(r, kk);
            uint wb[4];
            for (uint i = 0u; i < 4u; ++i) {
                wb[i] = bw[((j0 + i) * pc.k + kk) >> 2u];
            }
            for (uint t = 0u; t < 4u; ++t) {
                RrCode ca = rr_code((wa >> (8u * t)) & 0xFFu);
                for (uint i = 0u; i < 4u; ++i) {
                    rr_step_mac(st[i], ca, rr_code((wb[i] >> (8u * t)) & 0xFFu));
                }
            }
        }
        for (uint i = 0u; i < 4u; ++i) {
            acc[i] = rr_step_round(st[i], acc[i]);
        }
    }
    for (uint i = 0u; i < 4u; ++i) {
        uint j = j0 + i;
        uint h = acc[i];
        uint o = r * pc.n + j;
        if (EPI == 0u) {
            put_half(o, h);
        } else if (EPI == 1u) {
            outb[o] = uint8_t(rr_q8(h));
        } else if (EPI == 2u) {
            outb[o] = uint8_t(rr_q8(uint(table[h])));
        } else if (EPI == 3u) {
            outb[o] = uint8_t(rr_q8_relu(h));
        } else {
            uint q = j / pc.ch;
            uint c = j - q * pc.ch;
            uint cx = r % pc.coarse_w;
            uint cy = r / pc.coarse_w;
            uint t = (2u * cy + (q >> 1u)) * pc.fine_w + 2u * cx + (q & 1u);
            uint e = rr_q8_to_f16(rr_q8(h));
            put_half(t * pc.ch + c, f16_add(e, rr_q8_to_f16(uint(skip[t * pc.ch + c]))));
        }
    }
}
