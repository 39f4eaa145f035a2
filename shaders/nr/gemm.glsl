// Body of the grouped E4M3 x E4M3 -> f16 GEMM of `Op::Gemm` (`gemm.comp`, `gemm_rtz.comp`): exact
// emulation of the MMA profile (F13 native, or H25 with E4M3 widened to f16), spec nr-network.md
// 1.4, 2.2; the technique is h200-gemm-limits.md 4.
//
// out[r][g*N + c] = epilogue(split-K chain of A row r (channels g*ASTRIDE .. +K) with column c of
// group g), seeded by f16(skip[r][g*N + c] * scale[g*N + c]) when SEED != 0.
//
// Work split: a workgroup owns BM = 16 * TM rows x BN columns of one group (gl_WorkGroupID = row
// tile, column tile, group) with 4 * BN invocations; an invocation owns TM (GEMM_TM: 8 or 4)
// adjacent rows x 4 adjacent columns (its E4 outputs of one row are one uint). Per K group of 16
// the tile's operands are decoded once into shared memory (the next group's raw bytes are
// already loading into registers); then per output the group exponent (pass 1), the signed
// truncated terms (pass 2, RTZ FMA or float products per MMA_RTZ), the sign correction, the
// accumulator's term and the rounding, all as in mma_terms.glsl.
// Split-K (PART < K): every partition is a chain of its own (partition 0 from the seed, the
// others from +0), run by workgroups of its own (gl_WorkGroupID.z = group * partitions +
// partition: the model's partitions make the few-row ViT GEMMs 4x wider on the GPU), which
// write the partition's f16 result to the partials binding [partition][row][channel]; then
// `gemm_sum.comp` adds the partials in partition order with f16 adds and applies the epilogue.
// The including shader enables the extensions (they must precede every other token):
// GL_GOOGLE_include_directive, GL_EXT_shader_16bit_storage,
// GL_EXT_shader_explicit_arithmetic_types_int16, GL_EXT_control_flow_attributes.
#include "f16.glsl"
#include "mma_terms.glsl"
#include "e4m3.glsl"

// Columns per workgroup (32 or 64); the workgroup has 4 * BN invocations (set by the host to
// the same value through local_size_x_id).
layout(constant_id = 0) const uint BN = 64u;
layout(local_size_x_id = 1) in;
// Fraction bits of the profile (F13: 13, H25: 25).
layout(constant_id = 2) const int P = 13;
// Exponent convention of E4M3 subnormals: 0 = their own min normal (-6), 1 = widened to f16.
layout(constant_id = 3) const uint CONV = 0u;

#ifndef GEMM_TM
#define GEMM_TM 8
#endif
const uint TM = GEMM_TM;              // rows per invocation (8 or 4)
const uint BM = 16u * TM;             // rows per workgroup
const uint QUADS = BN / 4u;           // column quads per workgroup
const uint WG = 4u * BN;              // invocations (= QUADS * BM / TM)
const bool TWO_SLOTS = BM + BN > WG;  // some invocations load two operand rows

layout(std430, binding = 0) readonly buffer InA { uint a_words[]; };
layout(std430, binding = 1) readonly buffer InB { uint b_words[]; };
layout(std430, binding = 2) readonly buffer Skip { uint skip_words[]; };
// 16-bit elements: the scale range may start 2 bytes into a word and end mid-word.
layout(std430, binding = 3) readonly buffer Scale { uint16_t scale_halves[]; };
layout(std430, binding = 4) writeonly buffer Out { uint out_words[]; };
// The raw f16 output of the dual epilogue, or the partials of a split-K GEMM.
layout(std430, binding = 5) writeonly buffer OutRaw { uint raw_words[]; };
// The E4 epilogues for every half x, one byte each (built from the Rust numerics,
// `numerics::tables::GEMM_EPILOGUE`): E4(SiLU(x)) at x, E4(x) at 65536 + x. SiLU's two fused
// steps, its product and the E4M3 encoding are one load (H200 1080p: 11 ms per frame). Bound to
// the output for the f16 epilogue, then never read.
layout(std430, binding = 6) readonly buffer EpilogueTable { uint table_words[]; };
#include "gemm_store.glsl"

layout(push_constant) uniform Push {
    uint rows;     // M
    uint cin;      // channels of an input row (bytes)
    uint k;        // K per group
    uint n;        // N per group
    uint nout;     // channels of an output row (N * groups)
    uint astride;  // input channel offset per group (K for split input, 0 for shared)
    uint part;     // split-K partition (multiple of 16; >= K for one chain, else partials out)
    uint scale_off; // index of the first scale half in the scale binding (alignment skew)
    uint epi;      // 0 = E4(SiLU(x)), 1 = E4(x), 2 = f16, 3 = f16 raw + E4
    uint seed;     // 0 = no seed, 1 = E4 skip, 2 = f16 skip
} pc;
// The RTZ build (GPUs) specializes on the epilogue and the seed kind: dead code goes and the
// H200 runs the 1080p frame 20 ms (3.5 %) faster than with the uniform branches. The portable
// build (lavapipe) reads them as push constants: one pipeline per tile instead of ten, and
// lavapipe takes seconds to build each.
#if MMA_RTZ
layout(constant_id = 4) const uint EPI = 1u;
layout(constant_id = 5) const uint SEED = 0u;
layout(constant_id = 6) const uint SPLIT = 0u; // 1 when PART < K
#else
#define EPI pc.epi
#define SEED pc.seed
#define SPLIT (pc.part < pc.k ? 1u : 0u)
#endif

// [kk][row / 4] and [kk][column / 4]: one vec4 read gives 4 rows or columns of one k. The B
// arrays are sized for the tile (BN is a specialization constant). Shared memory per workgroup
// decides how many workgroups a GPU core holds: on the H200, 8 KiB more made the GEMMs 1.35x
// slower. GEMM_F16_VALUES (gemm_rtz_narrow.comp) keeps the operand values as halves (E4M3
// values are exact halves), half the shared memory of the value arrays for one conversion per
// loaded value.
#ifdef GEMM_F16_VALUES
#define VAL4 f16vec4
#define VAL1 float16_t
#else
#define VAL4 vec4
#define VAL1 float
#endif
shared VAL4 s_aval[16u * (BM / 4u)];
shared vec4 s_apow[16u * (BM / 4u)];
shared uint s_amask[BM];
shared VAL4 s_bval[16u * QUADS];
shared vec4 s_bpow[16u * QUADS];
shared uint s_bmask[64u];

uint skip_half(uint idx) {
    if (SEED == 1u) {
        uint code = (skip_words[idx >> 2] >> (8u * (idx & 3u))) & 0xFFu;
        return e4m3_to_f16(code);
    }
    return (skip_words[idx >> 1] >> (16u * (idx & 1u))) & 0xFFFFu;
}

// Raw 16 bytes of loader slot `idx` (A row idx, or B column idx - BM) at K offset kb.
uvec4 load_slot(uint idx, uint kb, uint row0, uint col0, uint abase, uint bbase) {
    uvec4 w = uvec4(0u);
    if (idx < BM) {
        uint r = row0 + idx;
        if (r < pc.rows) {
            uint at = (r * pc.cin + abase + kb) >> 2;
            w = uvec4(a_words[at], a_words[at + 1u], a_words[at + 2u], a_words[at + 3u]);
        }
    } else if (idx < BM + BN) {
        uint c = col0 + idx - BM;
        if (c < pc.n) {
            uint at = (bbase + c * pc.k + kb) >> 2;
            w = uvec4(b_words[at], b_words[at + 1u], b_words[at + 2u], b_words[at + 3u]);
        }
    }
    return w;
}

void store_slot(uint idx, uvec4 w) {
    if (idx >= BM + BN) {
        return;
    }
    bool is_a = idx < BM;
    uint lane = is_a ? idx : idx - BM;
    uint mask = 0u;
    [[unroll]] for (uint kk = 0u; kk < 16u; kk++) {
        float v;
        float pw;
        mma_decode_e4((w[kk >> 2] >> (8u * (kk & 3u))) & 0xFFu, CONV != 0u, v, pw);
        mask |= (floatBitsToUint(v) >> 31) << kk;
        if (is_a) {
            s_aval[kk * (BM / 4u) + (lane >> 2)][lane & 3u] = VAL1(v);
        } else {
            s_bval[kk * QUADS + (lane >> 2)][lane & 3u] = VAL1(v);
        }
        if (MMA_KEEP_OPERANDS == 0) {
            if (is_a) {
                s_apow[kk * (BM / 4u) + (lane >> 2)][lane & 3u] = pw;
            } else {
                s_bpow[kk * QUADS + (lane >> 2)][lane & 3u] = pw;
            }
        }
    }
    if (is_a) {
        s_amask[lane] = mask;
    } else {
        s_bmask[lane] = mask;
    }
}

#include "gemm_split.glsl"

void main() {
    uint tid = gl_LocalInvocationID.x;
    uint tq = tid % QUADS;
    uint tr = tid / QUADS;
    uint row0 = gl_WorkGroupID.x * BM;
    uint col0 = gl_WorkGroupID.y * BN;
    // This workgroup's group g and partition kpart: its chain runs over K [kbeg, kend).
    uint g;
    uint kpart;
    uint kbeg;
    uint kend;
    gemm_partition(gl_WorkGroupID.z, g, kpart, kbeg, kend);
    uint abase = g * pc.astride;              // input channel of this group's K = 0
    uint bbase = g * pc.n * pc.k;             // this group's matrix in [groups][n][k] bytes

    // The f16 accumulator of every output.
    uint acc[TM][4];
    [[unroll]] for (uint i = 0u; i < TM; i++) {
        uint r = row0 + tr * TM + i;
        [[unroll]] for (uint j = 0u; j < 4u; j++) {
            uint col = g * pc.n + col0 + 4u * tq + j;
            uint seed = F16_POS_ZERO;
            if (SEED != 0u && kpart == 0u && r < pc.rows) {
                uint sc = uint(scale_halves[pc.scale_off + col]);
                seed = f16_mul(skip_half(r * pc.nout + col), sc);
            }
            acc[i][j] = seed;
        }
    }

    // Loader slots: BM + BN of them, at most two per invocation.
    uint slot0 = tid;
    uint slot1 = tid + WG;
    uvec4 pre0 = load_slot(slot0, kbeg, row0, col0, abase, bbase);
    uvec4 pre1 = uvec4(0u);
    if (TWO_SLOTS) {
        pre1 = load_slot(slot1, kbeg, row0, col0, abase, bbase);
    }

    for (uint kb = kbeg; kb < kend; kb += 16u) {
        barrier();
        store_slot(slot0, pre0);
        if (TWO_SLOTS) {
            store_slot(slot1, pre1);
        }
        barrier();
        if (kb + 16u < kend) {
            pre0 = load_slot(slot0, kb + 16u, row0, col0, abase, bbase);
            if (TWO_SLOTS) {
                pre1 = load_slot(slot1, kb + 16u, row0, col0, abase, bbase);
            }
        }

        // Pass 1: the group exponent of every output (as 2^(BE) and more below 2^(BE+B); an
        // inf/NaN accumulator passes through below, whatever its E).
        float es[TM][4];
        [[unroll]] for (uint i = 0u; i < TM; i++) {
            [[unroll]] for (uint j = 0u; j < 4u; j++) {
                es[i][j] = mma_acc_pow(acc[i][j]);
            }
        }
#if MMA_KEEP_OPERANDS
        vec4 keep_a0[16];
        vec4 keep_a1[16];
        vec4 keep_b[16];
#endif
        [[unroll]] for (uint kk = 0u; kk < 16u; kk++) {
#if MMA_KEEP_OPERANDS
            keep_a0[kk] = vec4(s_aval[kk * (BM / 4u) + (TM / 4u) * tr]);
            keep_a1[kk] = TM == 8u ? vec4(s_aval[kk * (BM / 4u) + 2u * tr + 1u]) : keep_a0[kk];
            keep_b[kk] = vec4(s_bval[kk * QUADS + tq]);
            vec4 pa0 = mma_value_pow4(keep_a0[kk], CONV != 0u);
            vec4 pa1 = TM == 8u ? mma_value_pow4(keep_a1[kk], CONV != 0u) : pa0;
            vec4 pb = mma_value_pow4(keep_b[kk], CONV != 0u);
#else
            vec4 pa0 = s_apow[kk * (BM / 4u) + (TM / 4u) * tr];
            vec4 pa1 = TM == 8u ? s_apow[kk * (BM / 4u) + 2u * tr + 1u] : pa0;
            vec4 pb = s_bpow[kk * QUADS + tq];
#endif
            [[unroll]] for (uint i = 0u; i < TM; i++) {
                float pa = i < 4u ? pa0[i] : pa1[i - 4u];
                [[unroll]] for (uint j = 0u; j < 4u; j++) {
                    es[i][j] = fma(pa, pb[j], es[i][j]);
                }
            }
        }
        // `es` becomes the per-term constant (E is read back from it: fewer live registers).
        [[unroll]] for (uint i = 0u; i < TM; i++) {
            [[unroll]] for (uint j = 0u; j < 4u; j++) {
                es[i][j] = mma_term_constant(mma_pow_exponent(es[i][j]), P);
            }
        }

        // Pass 2: the truncated terms with their signs, summed in int32.
        int sum[TM][4];
        [[unroll]] for (uint i = 0u; i < TM; i++) {
            [[unroll]] for (uint j = 0u; j < 4u; j++) {
                sum[i][j] = 0;
            }
        }
        [[unroll]] for (uint kk = 0u; kk < 16u; kk++) {
#if MMA_KEEP_OPERANDS
            vec4 a0 = keep_a0[kk];
            vec4 a1 = keep_a1[kk];
            vec4 b = keep_b[kk];
#else
            vec4 a0 = vec4(s_aval[kk * (BM / 4u) + (TM / 4u) * tr]);
            vec4 a1 = TM == 8u ? vec4(s_aval[kk * (BM / 4u) + 2u * tr + 1u]) : a0;
            vec4 b = vec4(s_bval[kk * QUADS + tq]);
#endif
            ivec4 sb = floatBitsToInt(b) >> 31;
            [[unroll]] for (uint i = 0u; i < TM; i++) {
                float a = i < 4u ? a0[i] : a1[i - 4u];
                int sa = floatBitsToInt(a) >> 31;
                [[unroll]] for (uint j = 0u; j < 4u; j++) {
                    sum[i][j] += mma_term(a, b[j], es[i][j]) ^ sa ^ sb[j];
                }
            }
        }

        // Undo the signs, add the accumulator, round.
        uint bm[4];
        [[unroll]] for (uint j = 0u; j < 4u; j++) {
            bm[j] = s_bmask[4u * tq + j];
        }
        [[unroll]] for (uint i = 0u; i < TM; i++) {
            uint am = s_amask[tr * TM + i];
            [[unroll]] for (uint j = 0u; j < 4u; j++) {
                int s = sum[i][j] + mma_sign_correction(bitCount(am ^ bm[j]), es[i][j]);
                uint h = acc[i][j];
                if (!f16_is_nonfinite(h)) {
                    acc[i][j] = mma_finish_group(s, es[i][j], h, P);
                }
            }
        }
    }

    [[unroll]] for (uint i = 0u; i < TM; i++) {
        uint r = row0 + tr * TM + i;
        if (r >= pc.rows) {
            continue;
        }
        uint h[4] = uint[4](acc[i][0], acc[i][1], acc[i][2], acc[i][3]);
        uint col = g * pc.n + col0 + 4u * tq;
        uint at = r * pc.nout + col; // element index, a multiple of 4
        if (SPLIT != 0u) {
            uint pat = (kpart * pc.rows + r) * pc.nout + col;
            raw_words[pat / 2u] = h[0] | (h[1] << 16);
            raw_words[pat / 2u + 1u] = h[2] | (h[3] << 16);
            continue;
        }
        gemm_store_quad(EPI, at, h);
    }
}
