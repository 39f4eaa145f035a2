// Body of a C = 32 window block's attention half as one kernel on cooperative matrices (the
// tensor route's `Fusion::Block`): the QKV GEMM, the window normalisation, the window attention
// and the projection, with the f16 QKV, q', k', v' and the attention output kept in the
// workgroup's shared memory: none of them is written. Built by attention_block_coopmat.comp
// (the device's MMAs) and emulated/attention_block_coopmat.comp (tile_mma.glsl's integer H25
// MMAs).
//
// It reads y (E4, the QKV GEMM's input), y's raw f16 (the projection's skip), the matrices, the
// attention scale, the temperature and the prior, and writes the block's output (E4, and raw
// f16 for the dual epilogue). Every byte is the unfused ops' (docs/architecture.md):
//   QKV  = W_qkv y: one chain of two 16x16x16 MMAs from +0 per element, as gemm_coopmat.glsl
//          runs a GEMM of one K step, kept as the f16 the F16 epilogue would store;
//   q', k', v' = window_stage.glsl's normalisation of those halves;
//   att  = E4 of window_core.glsl's products (scores, softmax, P V), widened back;
//   out  = W_proj att from the seed f16(skip * scale): one chain of two MMAs per element,
//          published as gemm_store.glsl publishes (the same E4 table bytes, NaN halves of the
//          raw f16 canonicalised).
//
// Work split: as window_attention_coopmat.glsl, a workgroup of 128 invocations runs the
// windows gl_WorkGroupID.y, + gl_NumWorkGroups.y, ... of one window column (one head: C = 32).
// Every token is a query of exactly one window of the block's phase, and the GEMMs are
// row-local, so each token's output is computed once, in its window. All rows of a window are
// in the physical order of the keys (the prior's query rows are loaded in that order too), so
// one staged row serves as query, key and value: subgroup s owns rows 16 s .. + 15 of x, QKV,
// the scores and the output, and invocation t stages, normalises and publishes half t % 2 of
// row t / 2, a row of its own subgroup. Only the keys and values cross subgroups: two
// workgroup barriers per window. The next window's y and skip words load into registers while
// a window computes.
//
// Shared memory is one arena (window_core.glsl's offsets into it):
//   Q, K, V [64][CS] (Q later the attention output), S [64][SS] (x first, then the scores,
//   then the projection's seed and result), the prior [64][SS];
//   the device's build keeps W_qkv [96 columns][32 K] and W_proj [32][32] resident after them
//   (45,056 bytes with the code table). The emulated build must fit lavapipe's 32 KiB, so it
//   stages W_qkv over Q and K and W_proj over V for every window instead: only where the
//   bytes come from changes, never a result.
#ifndef TILE_EMULATED
#define OPENNGX_F16_NATIVE 1
#endif
#define NORM_IN_PLACE 1
#include "f16.glsl"
#include "e4m3.glsl"
#include "e4m3_widen.glsl"
#include "recip.glsl"
#include "softmax.glsl"
#include "tile_mma.glsl"

layout(local_size_x = 128) in;
layout(constant_id = 0) const uint EPI = 3u; // the output's publication: 1 = E4, 3 = raw and E4

// y [tokens][32] (E4), the matrices W_qkv [96][32] and W_proj [32][32] (E4M3, row-major by
// output), the skip [tokens][32] (raw f16), the scale halves, the temperature, the prior.
layout(std430, binding = 0) readonly buffer InY { uvec4 y_quads[]; };
layout(std430, binding = 1) readonly buffer InWqkv { uvec4 wqkv_quads[]; };
layout(std430, binding = 2) readonly buffer InWproj { uvec4 wproj_quads[]; };
layout(std430, binding = 3) readonly buffer Skip { uvec4 skip_quads[]; };
// 16-bit elements: the scale range may start 2 bytes into a word.
layout(std430, binding = 4) readonly buffer Scale { uint16_t scale_halves[]; };
layout(std430, binding = 5) readonly buffer Temps { uint8_t temps[]; };
layout(std430, binding = 6) readonly buffer Priors { uint8_t priors[]; };
layout(std430, binding = 6) readonly buffer PriorWords { uint prior_words[]; };
layout(std430, binding = 7) writeonly buffer Out { uint out_words[]; };
layout(std430, binding = 8) writeonly buffer OutRaw { uint raw_words[]; };
// numerics::tables::ATTENTION (E4 at byte x, the normalisation's rsqrt, the exp weights).
layout(std430, binding = 9) readonly buffer Tables { uint table_words[]; };
#include "tables.glsl"

layout(push_constant) uniform Push {
    uint width;
    uint height;
    uint shift_x;
    uint shift_y;
    uint y_off;     // quads
    uint skip_off;  // quads
    uint scale_off; // halves
    uint temp_off;  // bytes
    uint prior_off; // bytes
    uint out_off;   // words
    uint raw_off;   // words
} pc;

// Row strides in uints (two halves each), skewed by 16 bytes against bank conflicts.
const uint CS = 20u; // 32 channels
#ifdef TILE_EMULATED
const uint SS = 32u; // 64 keys, unskewed to fit lavapipe's 32 KiB
const bool RESIDENT = false;
#else
const uint SS = 36u;
const bool RESIDENT = true;
#endif
const uint Q_AT = 0u;
const uint K_AT = Q_AT + 64u * CS;
const uint V_AT = K_AT + 64u * CS;
const uint S_AT = V_AT + 64u * CS;
const uint P_AT = S_AT + 64u * SS;
const uint WQ_AT = RESIDENT ? P_AT + 64u * SS : Q_AT;
const uint WP_AT = RESIDENT ? WQ_AT + 96u * CS : V_AT;
const uint SHARED = RESIDENT ? WP_AT + 32u * CS : P_AT + 64u * SS;
shared uint s_lut[256];
shared uint s_m[SHARED];
#define s_q s_m
#define s_k s_m
#define s_v s_m
#define s_s s_m
#define s_p s_m

#include "window_stage.glsl"
#include "window_core.glsl"

#include "stage_quad.glsl"

// W_qkv's 96 columns (two quads each) as B tiles: column n's 32 K at WQ_AT + n * CS.
void stage_qkv_matrix(uint tid) {
    [[unroll]] for (uint p = 0u; p < 2u; p++) {
        uint slot = tid + 128u * p;
        if (slot < 192u) {
            stage_quad(wqkv_quads[slot], WQ_AT + (slot >> 1) * CS + 8u * (slot & 1u));
        }
    }
}

// W_proj's 32 columns likewise at WP_AT.
void stage_proj_matrix(uint tid) {
    if (tid < 64u) {
        stage_quad(wproj_quads[tid], WP_AT + (tid >> 1) * CS + 8u * (tid & 1u));
    }
}

// One invocation's share of a window from memory: half `h` of y's and the skip's row of the
// token at physical position `row` (zeros outside the level).
struct Rows {
    uvec4 x;
    uvec4 skip[2];
};

Rows fetch_rows(uint wy, uint row, uint h) {
    Rows r;
    r.x = uvec4(0u);
    r.skip[0] = uvec4(0u);
    r.skip[1] = uvec4(0u);
    int tok = token_in(wy, physical_to_natural(row));
    if (tok >= 0) {
        uint t = uint(tok);
        r.x = y_quads[pc.y_off + 2u * t + h];
        r.skip[0] = skip_quads[pc.skip_off + 4u * t + 2u * h];
        r.skip[1] = skip_quads[pc.skip_off + 4u * t + 2u * h + 1u];
    }
    return r;
}

void main() {
    uint tid = gl_LocalInvocationID.x;
    uint sg = TILE_SUBGROUP;
    uint row = tid >> 1; // physical window position, a row of subgroup sg
    uint h = tid & 1u;   // channels 16 h .. + 15
    uint at = row * CS + 8u * h;
    s_lut[tid] = e4m3_to_f16(tid);
    s_lut[tid + 128u] = e4m3_to_f16(tid + 128u);
    load_prior(pc.prior_off, tid, false);
    if (RESIDENT) {
        stage_qkv_matrix(tid);
        stage_proj_matrix(tid);
    }
    // The scale halves of this invocation's 16 channels, as pairs.
    uint scales[8];
    [[unroll]] for (uint i = 0u; i < 8u; i++) {
        uint c = pc.scale_off + 16u * h + 2u * i;
        scales[i] = uint(scale_halves[c]) | (uint(scale_halves[c + 1u]) << 16);
    }

    uint rows = (pc.height + pc.shift_y + 7u) >> 3;
    uint stride = gl_NumWorkGroups.y;
    Rows next = fetch_rows(gl_WorkGroupID.y, row, h);
    for (uint wy = gl_WorkGroupID.y; wy < rows; wy += stride) {
        Rows cur = next;
        int tok = token_in(wy, physical_to_natural(row));
        // Every subgroup is done with the previous window's keys and values (and, first, the
        // table, the prior and the resident matrices are written).
        barrier();
        stage_quad(cur.x, S_AT + row * SS + 8u * h);
        if (RESIDENT) {
            TILE_SUBGROUP_BARRIER();
        } else {
            stage_qkv_matrix(tid);
            barrier();
        }

        // QKV = W_qkv x: the subgroup's 16 rows x 96 columns, K = 32 in two MMAs from +0.
        TILE_A xa[2];
        [[unroll]] for (uint s = 0u; s < 2u; s++) {
            TILE_LOAD_A(xa[s], s_m, S_AT + 16u * sg * SS + 8u * s, SS, TILE_ROW_MAJOR);
        }
        TILE_C acc[6];
        [[unroll]] for (uint j = 0u; j < 6u; j++) {
            TILE_ZERO_C(acc[j]);
            [[unroll]] for (uint s = 0u; s < 2u; s++) {
                TILE_B wb;
                TILE_LOAD_B(wb, s_m, WQ_AT + 16u * j * CS + 8u * s, CS, TILE_COL_MAJOR);
                acc[j] = TILE_MULADD(xa[s], wb, acc[j]);
            }
        }
        if (!RESIDENT) {
            // The staged W_qkv lies where Q and K go.
            barrier();
        }
        [[unroll]] for (uint j = 0u; j < 6u; j++) {
            uint part = j < 2u ? Q_AT : (j < 4u ? K_AT : V_AT);
            TILE_STORE_C(acc[j], s_m, part + 16u * sg * CS + 8u * (j & 1u), CS);
        }
        TILE_SUBGROUP_BARRIER();

        // q', k', v' of this invocation's row half, in place.
        {
            uint wq[8];
            uint wk[8];
            uint wv[8];
            [[unroll]] for (uint i = 0u; i < 8u; i++) {
                wq[i] = s_m[Q_AT + at + i];
                wk[i] = s_m[K_AT + at + i];
                wv[i] = s_m[V_AT + at + i];
            }
            normalize_into(wq, wk, wv, tok >= 0, tok >= 0, h, Q_AT + at, K_AT + at, V_AT + at);
        }
        // Every key and value row is staged.
        barrier();
        if (wy + stride < rows) {
            next = fetch_rows(wy + stride, row, h);
        }

        window_products(sg);

        // att = E4(O) widened back, in place; the seed f16(skip * scale) in the row's scores.
        [[unroll]] for (uint i = 0u; i < 8u; i++) {
            uint w = s_m[Q_AT + at + i];
            s_m[Q_AT + at + i] = widen_halves(e4_publish_pair(w));
            s_m[S_AT + row * SS + 8u * h + i] = f16_mul_pair(cur.skip[i >> 2][i & 3u], scales[i]);
        }
        if (RESIDENT) {
            TILE_SUBGROUP_BARRIER();
        } else {
            // Every subgroup is done with V, where W_proj is staged.
            barrier();
            stage_proj_matrix(tid);
            barrier();
        }

        // out = W_proj att from the seed: the subgroup's 16 rows x 32 columns, two MMAs each.
        TILE_A aa[2];
        [[unroll]] for (uint s = 0u; s < 2u; s++) {
            TILE_LOAD_A(aa[s], s_m, Q_AT + 16u * sg * CS + 8u * s, CS, TILE_ROW_MAJOR);
        }
        [[unroll]] for (uint j = 0u; j < 2u; j++) {
            TILE_C o;
            TILE_LOAD_C(o, s_m, S_AT + 16u * sg * SS + 8u * j, SS);
            [[unroll]] for (uint s = 0u; s < 2u; s++) {
                TILE_B wb;
                TILE_LOAD_B(wb, s_m, WP_AT + 16u * j * CS + 8u * s, CS, TILE_COL_MAJOR);
                o = TILE_MULADD(aa[s], wb, o);
            }
            TILE_STORE_C(o, s_m, S_AT + 16u * sg * SS + 8u * j, SS);
        }
        TILE_SUBGROUP_BARRIER();

        // The in-level tokens' output: raw f16 (dual) and four E4 codes per word.
        if (tok >= 0) {
            uint t = uint(tok);
            uint base = S_AT + row * SS + 8u * h;
            [[unroll]] for (uint i = 0u; i < 4u; i++) {
                uint w0 = s_m[base + 2u * i];
                uint w1 = s_m[base + 2u * i + 1u];
                if (EPI == 3u) {
                    raw_words[pc.raw_off + 16u * t + 8u * h + 2u * i] = f16_canon_pair(w0);
                    raw_words[pc.raw_off + 16u * t + 8u * h + 2u * i + 1u] = f16_canon_pair(w1);
                }
                // Channels 0, 2 then 1, 3 (e4_publish_pair's codes land at bytes 0 and 2).
                out_words[pc.out_off + 8u * t + 4u * h + i] =
                    e4_publish_pair((w0 & 0xFFFFu) | (w1 << 16))
                    | (e4_publish_pair((w0 >> 16) | (w1 & 0xFFFF0000u)) << 8);
            }
        }
    }
}
