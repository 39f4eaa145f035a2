// Body of the window attention on cooperative matrices, built twice:
// window_attention_coopmat.comp reads q', k', v' (E4M3, `Op::Normalize`'s outputs);
// window_attention_coopmat_qkv.comp (NORM_FUSED) reads the QKV GEMM's f16 output and runs
// the normalisation in its staging (the tensor route fuses the two ops: `nr::route::fusion`).
// The including shader enables the extensions and execution modes listed there.
//
// Shifted-window attention of `Op::WindowAttention` on the device's f16 cooperative matrices
// (the tensor route, H25 identified by the creation probe): the same steps and orders as
// attention.glsl, with both products as 16x16x16 MMAs, so the bytes are what the exact route
// computes in the h25 profile:
//   S[q][k] = prior[qp][k] + Q[q].K[k]    (the prior is the C operand; channels 0-15, 16-31)
//   e = exp_window(S); r[q] = f16(1/tree(e[q])); P[q][k] = E4(f16(e[q][k] * r[q]))
//   O[q][c] = E4(P[q].V[:, c])            (four 16-key groups from +0)
// The exp weights, P's publication and O's run in arithmetic on f16 pairs (exp.glsl,
// e4m3_widen.glsl), so the softmax waits on no table load.
// A workgroup of 128 invocations (4 subgroups of 32) runs one head over several windows of one
// window column, one after another (the code table and the head's prior stay in shared memory
// for all of them, and q, k, v on words load one window ahead); subgroup s owns queries
// 16 s .. +15 (natural window order t = 8y + x); keys and values are in the physical (4x4-tiled)
// order of the priors. Q, K, V (E4M3, widened exactly), S and P live in shared memory, because
// a KHR cooperative matrix's element layout is the implementation's. After the staging every
// step runs within the subgroup on its own queries (subgroup barriers only): the exp weights
// and the softmax tree on two lanes per query.
#ifndef TILE_EMULATED
#define OPENNGX_F16_NATIVE 1
#endif
#include "e4m3.glsl"
#include "e4m3_widen.glsl"
#include "recip.glsl"
#include "softmax.glsl"
#include "tile_mma.glsl"

layout(local_size_x = 128) in;

#ifdef NORM_FUSED
// The QKV GEMM's f16 output [tokens][96 * heads] as words (head h: q at 96 h, k at + 32, v at
// + 64; the recorder binds it on a word) and the heads' f32 temperatures as bytes.
layout(std430, binding = 0) readonly buffer QkvWords { uint qkv_words[]; };
layout(std430, binding = 1) readonly buffer Temps { uint8_t temps[]; };
layout(std430, binding = 2) readonly buffer Priors { uint8_t priors[]; };
layout(std430, binding = 2) readonly buffer PriorWords { uint prior_words[]; };
layout(std430, binding = 3) writeonly buffer Out { uint8_t outb[]; };
layout(std430, binding = 3) writeonly buffer OutWords { uint out_words[]; };
layout(std430, binding = 4) readonly buffer Tables { uint table_words[]; };
#else
layout(std430, binding = 0) readonly buffer QIn { uint8_t qin[]; };
layout(std430, binding = 1) readonly buffer KIn { uint8_t kin[]; };
layout(std430, binding = 2) readonly buffer VIn { uint8_t vin[]; };
// The same three bindings as words, for offsets on a word (the rows are 32 * heads bytes).
layout(std430, binding = 0) readonly buffer QWords { uint qwords[]; };
layout(std430, binding = 1) readonly buffer KWords { uint kwords[]; };
layout(std430, binding = 2) readonly buffer VWords { uint vwords[]; };
layout(std430, binding = 3) readonly buffer Priors { uint8_t priors[]; };
// The same binding as words, for a prior range that starts on a word.
layout(std430, binding = 3) readonly buffer PriorWords { uint prior_words[]; };
layout(std430, binding = 4) writeonly buffer Out { uint8_t outb[]; };
// The same binding as words, for an output range that starts on a word.
layout(std430, binding = 4) writeonly buffer OutWords { uint out_words[]; };
// numerics::tables::ATTENTION (see attention.glsl): bound by the recorder, read by no step of
// this build since its softmax and output went arithmetic (the fused build's normalisation
// still reads it).
layout(std430, binding = 5) readonly buffer Tables { uint table_words[]; };
#endif
#include "tables.glsl"

layout(push_constant) uniform Push {
    uint width;
    uint height;
    uint heads;
    uint shift_x;
    uint shift_y;
#ifdef NORM_FUSED
    uint qkv_off;  // words
    uint temp_off; // bytes
#else
    uint q_off;
    uint k_off;
    uint v_off;
#endif
    uint prior_off;
    uint out_off;
} pc;

// Row strides in uints (two halves each), skewed by 16 bytes.
const uint CS = 20u; // 32 channels
#ifdef TILE_EMULATED
// Without the skew: the emulated build must fit lavapipe's 32 KiB of shared memory (34,816
// bytes with it). Only addresses change, never a byte of the result.
const uint SS = 32u;
#else
const uint SS = 36u; // 64 keys
#endif

shared uint s_lut[256];
shared uint s_q[64 * CS];  // Q [query][channel], later O
shared uint s_k[64 * CS];  // K [key][channel]
shared uint s_v[64 * CS];  // V [key][channel]
shared uint s_s[64 * SS];  // S, then P [query][key]
shared uint s_p[64 * SS];  // the head's prior [natural query][physical key], for every window

// Each product's rows start at 0 of its own array (window_core.glsl's offsets).
const uint Q_AT = 0u;
const uint K_AT = 0u;
const uint V_AT = 0u;
const uint S_AT = 0u;
const uint P_AT = 0u;

#include "window_stage.glsl"
#include "window_core.glsl"

uint row_at(uint off, int tok) { return off + uint(tok) * pc.heads * 32u + 32u * gl_WorkGroupID.z; }

#ifndef NORM_FUSED
// Whether q, k and v start on a word: then every row half is four whole words (the rows are
// 32 * heads bytes), which the loop loads one window ahead.
bool qkv_words_aligned() { return ((pc.q_off | pc.k_off | pc.v_off) & 3u) == 0u; }

// The raw words of this invocation's staging rows (query row tid / 2, key/value row tid / 2 in
// physical order, half tid % 2) of window row `wy`: q in 0..3, k in 4..7, v in 8..11, zeros
// for a token outside the level (code 0 widens to +0, what the staging stores there).
void fetch_words(uint wy, out uint w[12]) {
    uint row = gl_LocalInvocationID.x >> 1;
    uint h = gl_LocalInvocationID.x & 1u;
    int qtok = token_in(wy, row);
    int ktok = token_in(wy, physical_to_natural(row));
    uint qi = qtok >= 0 ? (row_at(pc.q_off, qtok) + 16u * h) >> 2 : 0u;
    uint ki = ktok >= 0 ? (row_at(pc.k_off, ktok) + 16u * h) >> 2 : 0u;
    uint vi = ktok >= 0 ? (row_at(pc.v_off, ktok) + 16u * h) >> 2 : 0u;
    [[unroll]] for (uint i = 0u; i < 4u; i++) {
        w[i] = qtok >= 0 ? qwords[qi + i] : 0u;
        w[4u + i] = ktok >= 0 ? kwords[ki + i] : 0u;
        w[8u + i] = ktok >= 0 ? vwords[vi + i] : 0u;
    }
}

// 16 channels (half h of the row) of token `tok` of input `which` (0 q, 1 k, 2 v), code by
// code through s_lut into its shared rows at `at`: for q, k or v not starting on a word.
void stage_row(uint which, int tok, uint h, uint at) {
    [[unroll]] for (uint i = 0u; i < 8u; i++) {
        uint lo = 0u;
        uint hi = 0u;
        if (tok >= 0) {
            uint b = row_at(which == 0u ? pc.q_off : (which == 1u ? pc.k_off : pc.v_off), tok) + 16u * h + 2u * i;
            uint c0 = which == 0u ? uint(qin[b]) : (which == 1u ? uint(kin[b]) : uint(vin[b]));
            uint c1 = which == 0u ? uint(qin[b + 1u]) : (which == 1u ? uint(kin[b + 1u]) : uint(vin[b + 1u]));
            lo = s_lut[c0];
            hi = s_lut[c1];
        }
        uint w = lo | (hi << 16);
        if (which == 0u) {
            s_q[at + i] = w;
        } else if (which == 1u) {
            s_k[at + i] = w;
        } else {
            s_v[at + i] = w;
        }
    }
}

#endif

// One window (row `wy` of the workgroup's column) after its staging: window_core.glsl's
// products, then the E4 output.
void window(uint wy, uint tid, uint sg) {
    // Invocation tid writes query tid / 2: a row of its own subgroup.
    window_products(sg);

    // E4 output of the in-level queries: row tid / 2, channels 16 (tid % 2) .. +15.
    {
        uint q = tid >> 1;
        uint h = tid & 1u;
        int tok = token_in(wy, q);
        if (tok >= 0) {
            uint ob = row_at(pc.out_off, tok) + 16u * h;
            if ((pc.out_off & 3u) == 0u) {
                // Four codes per word store: channels 0, 2 published together, then 1, 3
                // (e4_publish_pair puts its codes at bytes 0 and 2).
                [[unroll]] for (uint i = 0u; i < 4u; i++) {
                    uint w0 = s_q[q * CS + 8u * h + 2u * i];
                    uint w1 = s_q[q * CS + 8u * h + 2u * i + 1u];
                    uint even = (w0 & 0xFFFFu) | (w1 << 16);
                    uint odd = (w0 >> 16) | (w1 & 0xFFFF0000u);
                    out_words[(ob >> 2) + i] = e4_publish_pair(even) | (e4_publish_pair(odd) << 8);
                }
            } else {
                [[unroll]] for (uint i = 0u; i < 8u; i++) {
                    uint p = e4_publish_pair(s_q[q * CS + 8u * h + i]);
                    outb[ob + 2u * i] = uint8_t(p & 0xFFu);
                    outb[ob + 2u * i + 1u] = uint8_t(p >> 16);
                }
            }
        }
    }
}

void main() {
    uint tid = gl_LocalInvocationID.x;
    uint sg = TILE_SUBGROUP;
    s_lut[tid] = e4m3_to_f16(tid);
    s_lut[tid + 128u] = e4m3_to_f16(tid + 128u);

    // The prior, the scores' C operand of every window: [natural query][physical key].
    load_prior(pc.prior_off + 8192u * gl_WorkGroupID.z, tid, true);

    // The window rows gl_WorkGroupID.y, + gl_NumWorkGroups.y, ... of this window column (the
    // recorder's `window_rows_per_group`); each is computed exactly as a workgroup of its own
    // would. With q, k, v on words the next window's words load while this one computes.
    uint rows = (pc.height + pc.shift_y + 7u) >> 3;
    uint stride = gl_NumWorkGroups.y;
#ifndef NORM_FUSED
    bool ahead = qkv_words_aligned();
    uint next[12];
    if (ahead) {
        fetch_words(gl_WorkGroupID.y, next);
    }
#endif
    for (uint wy = gl_WorkGroupID.y; wy < rows; wy += stride) {
        // The previous window's readers of s_q, s_k, s_v are done (and, first, s_lut and s_p
        // are written).
        barrier();
        // Operands: row tid / 2 (query in natural order, key/value in physical order), half
        // tid % 2.
        {
            uint row = tid >> 1;
            uint h = tid & 1u;
            uint at = row * CS + 8u * h;
            int ktok = token_in(wy, physical_to_natural(row));
#ifdef NORM_FUSED
            stage_normalized(token_in(wy, row), ktok, h, at);
#else
            if (ahead) {
                // Widened in arithmetic (e4m3_widen.glsl); zeros stay +0.
                [[unroll]] for (uint i = 0u; i < 4u; i++) {
                    uvec2 pq = widen_word(next[i]);
                    uvec2 pk = widen_word(next[4u + i]);
                    uvec2 pv = widen_word(next[8u + i]);
                    s_q[at + 2u * i] = pq.x;
                    s_q[at + 2u * i + 1u] = pq.y;
                    s_k[at + 2u * i] = pk.x;
                    s_k[at + 2u * i + 1u] = pk.y;
                    s_v[at + 2u * i] = pv.x;
                    s_v[at + 2u * i + 1u] = pv.y;
                }
            } else {
                stage_row(0u, token_in(wy, row), h, at);
                stage_row(1u, ktok, h, at);
                stage_row(2u, ktok, h, at);
            }
#endif
        }
        barrier();
#ifndef NORM_FUSED
        if (ahead && wy + stride < rows) {
            fetch_words(wy + stride, next);
        }
#endif
        window(wy, tid, sg);
    }
}
