#version 450
// Grouped E4M3 x E4M3 -> f16 GEMM of `Op::Gemm`, exact emulation of the MMA profile (F13 native,
// or H25 with E4M3 widened to f16) with integer arithmetic (spec nr-network.md 1.4, 2.2).
//
// out[r][g*N + c] = epilogue(split-K chain of A row r (channels g*ASTRIDE .. +K) with column c of
// group g), seeded by f16(skip[r][g*N + c] * scale[g*N + c]) when SEED != 0.
//
// Work split: a workgroup owns BM rows x BN columns of one group (gl_WorkGroupID = row tile,
// column tile, group); an invocation owns TM rows (strided by BM/TM) x 4 adjacent columns, so its
// E4 outputs of one row are one uint. Per K group of 16 the tile's operands are decoded once into
// shared memory as (signed significand, exponent) pairs with value = sig * 2^(exp - 3); zero and
// NaN codes get significand 0 and exponent -64. Then, per output:
//   pass 1: E = max(exp(acc) if acc != 0, max(ea + eb)) (a zero operand's sum stays below every
//           real exponent, and its term is 0 whatever E is);
//   pass 2: sum = trunc(acc * 2^(P-E)) + sum of (|sa*sb| << (P-6)) >> (E - ea - eb), signed.
// |sum| < 2^31 for P <= 25 (16 * 225 * 2^19 + 2^26), so int32 is exact. The group result is the
// f16 RNE of sum * 2^(E-P), +0 for any zero; an inf/NaN accumulator passes through unchanged.
// Split-K: at every multiple of PART the chain restarts from +0 and partial results are summed
// with f16 adds in partition order (partition 0 carries the seed).
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require
#extension GL_EXT_control_flow_attributes : require
#include "f16.glsl"
#include "e4m3.glsl"
#include "silu.glsl"

layout(local_size_x = 256) in;

// Columns per workgroup (32 or 64); rows per invocation TM is a compile-time constant so the
// per-output state stays in registers (BM = TM * 256 / (BN / 4)).
layout(constant_id = 0) const uint BN = 64u;
const uint TM = 4u;
// Fraction bits of the profile (F13: 13, H25: 25).
layout(constant_id = 2) const int P = 13;
// Exponent convention of E4M3 subnormals: 0 = their own min normal (-6), 1 = widened to f16.
layout(constant_id = 3) const uint CONV = 0u;
// 0 = E4(SiLU(x)), 1 = E4(x), 2 = f16, 3 = f16 raw + E4.
layout(constant_id = 4) const uint EPI = 1u;
// 0 = no seed, 1 = E4 skip, 2 = f16 skip.
layout(constant_id = 5) const uint SEED = 0u;

const uint QUADS = BN / 4u;            // column quads per workgroup
const uint RGROUPS = 256u / QUADS;     // row groups per workgroup
const uint BM = TM * RGROUPS;          // rows per workgroup
const uint LDS = 17u;                  // padded row stride of the shared tiles (bank spread)
const int ZERO_EXP = -64;

layout(std430, binding = 0) readonly buffer InA { uint a_words[]; };
layout(std430, binding = 1) readonly buffer InB { uint b_words[]; };
layout(std430, binding = 2) readonly buffer Skip { uint skip_words[]; };
// 16-bit elements: the scale range may start 2 bytes into a word and end mid-word.
layout(std430, binding = 3) readonly buffer Scale { uint16_t scale_halves[]; };
layout(std430, binding = 4) writeonly buffer Out { uint out_words[]; };
layout(std430, binding = 5) writeonly buffer OutRaw { uint raw_words[]; };

layout(push_constant) uniform Push {
    uint rows;     // M
    uint cin;      // channels of an input row (bytes)
    uint k;        // K per group
    uint n;        // N per group
    uint nout;     // channels of an output row (N * groups)
    uint astride;  // input channel offset per group (K for split input, 0 for shared)
    uint part;     // split-K partition (multiple of 16; >= K for one chain)
    uint scale_off; // index of the first scale half in the scale binding (alignment skew)
} pc;

// BM is at most 128 (BN = 32, TM = 4); the host never asks for more.
shared int s_a_sig[128u * LDS];
shared int s_a_exp[128u * LDS];
shared int s_b_sig[64u * LDS];
shared int s_b_exp[64u * LDS];

// Decode one E4M3 code to (signed significand, exponent): value = sig * 2^(exp - 3).
void decode(uint c, out int sig, out int e) {
    uint mag = c & 0x7Fu;
    if (mag == 0u || mag == 0x7Fu) {
        sig = 0;
        e = ZERO_EXP;
        return;
    }
    uint ef = mag >> 3;
    uint m = mag & 7u;
    if (ef == 0u) {
        if (CONV == 0u) {
            sig = int(m);
            e = -6;
        } else {
            // m * 2^-9 as an f16 normal: implicit bit at the top set bit of m.
            int p = findMSB(m);
            sig = int(m << uint(3 - p));
            e = p - 9;
        }
    } else {
        sig = int(m | 8u);
        e = int(ef) - 7;
    }
    if ((c & 0x80u) != 0u) {
        sig = -sig;
    }
}

uint skip_half(uint idx) {
    if (SEED == 1u) {
        uint code = (skip_words[idx >> 2] >> (8u * (idx & 3u))) & 0xFFu;
        return e4m3_to_f16(code);
    }
    return (skip_words[idx >> 1] >> (16u * (idx & 1u))) & 0xFFFFu;
}

uint round_group(int sum, int E) {
    if (sum == 0) {
        return F16_POS_ZERO;
    }
    uint r = f16_round_fixed_rne(uint(abs(sum)), E - P, sum < 0 ? 0x8000u : 0u);
    return f16_is_zero(r) ? F16_POS_ZERO : r;
}

void main() {
    uint tid = gl_LocalInvocationID.x;
    uint tq = tid % QUADS;
    uint tr = tid / QUADS;
    uint row0 = gl_WorkGroupID.x * BM;
    uint col0 = gl_WorkGroupID.y * BN;
    uint g = gl_WorkGroupID.z;
    uint abase = g * pc.astride;              // input channel of this group's K = 0
    uint bbase = g * pc.n * pc.k;             // this group's matrix in [groups][n][k] bytes

    uint acc[TM][4];
    uint total[TM][4];
    [[unroll]] for (uint i = 0u; i < TM; i++) {
        uint r = row0 + tr + i * RGROUPS;
        [[unroll]] for (uint j = 0u; j < 4u; j++) {
            uint col = g * pc.n + col0 + 4u * tq + j;
            uint seed = F16_POS_ZERO;
            if (SEED != 0u && r < pc.rows) {
                uint sc = uint(scale_halves[pc.scale_off + col]);
                seed = f16_mul(skip_half(r * pc.nout + col), sc);
            }
            acc[i][j] = seed;
            total[i][j] = F16_POS_ZERO;
        }
    }

    for (uint kb = 0u; kb < pc.k; kb += 16u) {
        if (kb != 0u && kb % pc.part == 0u) {
            // Partition boundary: fold the finished partition into the f16 total.
            [[unroll]] for (uint i = 0u; i < TM; i++) {
                [[unroll]] for (uint j = 0u; j < 4u; j++) {
                    total[i][j] = kb == pc.part ? acc[i][j] : f16_add(total[i][j], acc[i][j]);
                    acc[i][j] = F16_POS_ZERO;
                }
            }
        }
        barrier();
        for (uint idx = tid; idx < BM * 4u; idx += 256u) {
            uint lr = idx >> 2;
            uint w = idx & 3u;
            uint r = row0 + lr;
            uint word = 0u;
            if (r < pc.rows) {
                word = a_words[(r * pc.cin + abase + kb) / 4u + w];
            }
            [[unroll]] for (uint b = 0u; b < 4u; b++) {
                int s;
                int e;
                decode((word >> (8u * b)) & 0xFFu, s, e);
                s_a_sig[lr * LDS + 4u * w + b] = s;
                s_a_exp[lr * LDS + 4u * w + b] = e;
            }
        }
        for (uint idx = tid; idx < BN * 4u; idx += 256u) {
            uint lc = idx >> 2;
            uint w = idx & 3u;
            uint c = col0 + lc;
            uint word = 0u;
            if (c < pc.n) {
                word = b_words[(bbase + c * pc.k + kb) / 4u + w];
            }
            [[unroll]] for (uint b = 0u; b < 4u; b++) {
                int s;
                int e;
                decode((word >> (8u * b)) & 0xFFu, s, e);
                s_b_sig[lc * LDS + 4u * w + b] = s;
                s_b_exp[lc * LDS + 4u * w + b] = e;
            }
        }
        barrier();

        // Pass 1: the group exponent of every output.
        int E[TM][4];
        [[unroll]] for (uint i = 0u; i < TM; i++) {
            [[unroll]] for (uint j = 0u; j < 4u; j++) {
                uint h = acc[i][j];
                E[i][j] = f16_is_zero(h) ? ZERO_EXP : f16_exponent(h);
            }
        }
        [[unroll]] for (uint kk = 0u; kk < 16u; kk++) {
            int be[4];
            [[unroll]] for (uint j = 0u; j < 4u; j++) {
                be[j] = s_b_exp[(4u * tq + j) * LDS + kk];
            }
            [[unroll]] for (uint i = 0u; i < TM; i++) {
                int ae = s_a_exp[(tr + i * RGROUPS) * LDS + kk];
                [[unroll]] for (uint j = 0u; j < 4u; j++) {
                    E[i][j] = max(E[i][j], ae + be[j]);
                }
            }
        }

        // Pass 2: the truncated terms, summed exactly.
        int sum[TM][4];
        [[unroll]] for (uint i = 0u; i < TM; i++) {
            [[unroll]] for (uint j = 0u; j < 4u; j++) {
                uint h = acc[i][j];
                int t = 0;
                if (!f16_is_zero(h) && !f16_is_nonfinite(h)) {
                    int d = min(E[i][j] - f16_exponent(h), 31);
                    t = int((f16_significand(h) << uint(P - 10)) >> uint(d));
                    if ((h & 0x8000u) != 0u) {
                        t = -t;
                    }
                }
                sum[i][j] = t;
            }
        }
        [[unroll]] for (uint kk = 0u; kk < 16u; kk++) {
            int bs[4];
            int be[4];
            [[unroll]] for (uint j = 0u; j < 4u; j++) {
                bs[j] = s_b_sig[(4u * tq + j) * LDS + kk];
                be[j] = s_b_exp[(4u * tq + j) * LDS + kk];
            }
            [[unroll]] for (uint i = 0u; i < TM; i++) {
                int as_ = s_a_sig[(tr + i * RGROUPS) * LDS + kk];
                int ae = s_a_exp[(tr + i * RGROUPS) * LDS + kk];
                [[unroll]] for (uint j = 0u; j < 4u; j++) {
                    int prod = as_ * bs[j];
                    uint d = uint(min(E[i][j] - ae - be[j], 31));
                    int t = int((uint(abs(prod)) << uint(P - 6)) >> d);
                    sum[i][j] += prod < 0 ? -t : t;
                }
            }
        }
        [[unroll]] for (uint i = 0u; i < TM; i++) {
            [[unroll]] for (uint j = 0u; j < 4u; j++) {
                if (!f16_is_nonfinite(acc[i][j])) {
                    acc[i][j] = round_group(sum[i][j], E[i][j]);
                }
            }
        }
    }

    [[unroll]] for (uint i = 0u; i < TM; i++) {
        uint r = row0 + tr + i * RGROUPS;
        if (r >= pc.rows) {
            continue;
        }
        uint h[4];
        [[unroll]] for (uint j = 0u; j < 4u; j++) {
            h[j] = pc.k > pc.part ? f16_add(total[i][j], acc[i][j]) : acc[i][j];
        }
        uint col = g * pc.n + col0 + 4u * tq;
        uint at = r * pc.nout + col; // element index, a multiple of 4
        if (EPI == 2u || EPI == 3u) {
            uint w0 = h[0] | (h[1] << 16);
            uint w1 = h[2] | (h[3] << 16);
            if (EPI == 2u) {
                out_words[at / 2u] = w0;
                out_words[at / 2u + 1u] = w1;
            } else {
                raw_words[at / 2u] = w0;
                raw_words[at / 2u + 1u] = w1;
            }
        }
        if (EPI != 2u) {
            uint word = 0u;
            [[unroll]] for (uint j = 0u; j < 4u; j++) {
                uint v = EPI == 0u ? silu(h[j]) : h[j];
                word |= e4m3_from_f16(v) << (8u * j);
            }
            out_words[at / 4u] = word;
        }
    }
}
