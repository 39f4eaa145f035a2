// Body of the attention kernels (spec nr-network.md 1.5, 2.2, 2.6, 2.7, 3.5, 8.8, 8.9):
// `window_attention{,_rtz}.comp` (shifted 8x8 windows of one level) and, with ATTN_VIT,
// `vit_attention{,_rtz}.comp` (global attention over all L5 tokens).
// Window: one workgroup of 256 invocations per (window, head); queries in natural window order
// (t = 8y + x), keys and values in physical (4x4-tiled) order:
//   S[q][k] = prior[qp][k] + q.K[k]   (MMA group chain over channels 0-15, 16-31)
//   e = exp_window(S); r[q] = f16(1/tree(e[q])); P[q][k] = E4(f16(e[q][k] * r[q]))
//   (exp_window and E4 read from the lookup table, see `Tables` below)
//   O[q][c] = E4(P[q].V[:, c])        (chain of four 16-key groups from +0)
// ViT: one workgroup per (64 queries, head); keys in token order in blocks of 64, padded with
// zero rows to a multiple of 64. Per block: S = q.K (chain from +0), e = exp_vit(S),
// P = E4(e) (unnormalised), the block's tree added to the running total (the first block's
// tree is the total), O continues one chain of 16-key groups over all blocks. At the end
// total = f16(total - f16(exp_vit(0) * padded rows)), out = E4(f16(O * f16(1/total))).
// Both products are small GEMMs done like the tiled GEMM (nr/gemm.glsl, mma_terms.glsl): the
// operands of a 16-group are decoded once into shared memory (exact f32 value, 2^(Be), 16-bit
// sign masks), each invocation owns a register tile (S: 4 queries x 4 keys, O: 4 queries x 2
// channels), E of a group comes from the max-plus FMA sum and each term from one RTZ FMA
// (MMA_RTZ, P = 13) or an exact float product converted to an integer (any P). The softmax
// tree runs on four invocations per query. 18 KiB of shared memory (lavapipe allows 32).
// Tokens outside the level are zero K/V rows whose weights still enter the denominator; only
// in-level queries are written. Tensors are E4M3 [w*h][heads*32]; priors are the model's stored
// bytes (fragment order of spec 3.5), read as bytes (any 2-byte alignment).
// The including shader enables GL_GOOGLE_include_directive, GL_EXT_control_flow_attributes,
// GL_EXT_shader_8bit_storage and GL_EXT_shader_explicit_arithmetic_types_int8.
#include "e4m3.glsl"
#include "recip.glsl"
#include "softmax.glsl"
#include "mma_terms.glsl"

layout(local_size_x = 256) in;
layout(constant_id = 0) const int P = 13;
layout(constant_id = 1) const bool WIDENED = false;

layout(std430, binding = 0) readonly buffer QIn { uint8_t qin[]; };
layout(std430, binding = 1) readonly buffer KIn { uint8_t kin[]; };
layout(std430, binding = 2) readonly buffer VIn { uint8_t vin[]; };
#if ATTN_VIT
layout(std430, binding = 3) writeonly buffer Out { uint8_t outb[]; };
#define TABLE_BINDING 4
#else
layout(std430, binding = 3) readonly buffer Priors { uint8_t priors[]; };
layout(std430, binding = 4) writeonly buffer Out { uint8_t outb[]; };
#define TABLE_BINDING 5
#endif
// `numerics::tables::ATTENTION`, built from the Rust numerics: E4(x) at byte x, the window exp
// weight of score x as the half at byte 196608 + 2x, the ViT's at 327680 + 2x. One load each
// instead of exp_window's ~40 integer operations and the E4M3 encoding's ~20, per score.
layout(std430, binding = TABLE_BINDING) readonly buffer Tables { uint table_words[]; };
#include "tables.glsl"

#if ATTN_VIT
layout(push_constant) uniform Push {
    uint tokens;
    uint heads;
    uint q_off; // bytes, also for k/v/out below
    uint k_off;
    uint v_off;
    uint out_off;
} pc;
#define HEAD gl_WorkGroupID.y
#else
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
#define HEAD gl_WorkGroupID.z
#endif

// Operand A (rows = queries, four per vec4) of one 16-group: Q as [channel][query / 4], then
// P as [key][query / 4]. Sign masks per row / column of the group (P: four 4-key parts per query
// in s_t), V's for all groups [channel][key group].
shared vec4 s_av[256];
shared vec4 s_ap[256];
shared uint s_amask[64];
shared uint s_bmask[64];
shared uint s_vmask[128];
// Partial softmax trees [query][g / 2].
shared uint s_t[256];
// One 8 KiB region holds, in turn (the phases are separated by barriers):
// - scores: operand B of K as [channel][key / 2] pairs, values at pairs 0..511 (S_BV), 2^(Be)
//   at 512..1023 (S_BP);
// - softmax: the exp weights [query][key / 2] as words (two halves each, word w at pair w / 2);
// - output: the P codes [query][key / 4] as words 0..1023 (pairs 0..511), and operand B of V as
//   [key][channel / 2] pairs, values at 512..767 (O_BV), 2^(Be) at 768..1023 (O_BP).
// The shared memory per workgroup (18 KiB instead of 26) decides how many workgroups an SM
// holds: on the H200 the window attention ran 1.5x faster with 20 KiB than with 26.
shared uvec2 s_u[1024];
const uint S_BV = 0u;
const uint S_BP = 512u;
const uint O_BV = 512u;
const uint O_BP = 768u;
uint u_word(uint w) { return s_u[w >> 1][w & 1u]; }
void u_set_word(uint w, uint x) { s_u[w >> 1][w & 1u] = x; }
vec2 u_pair(uint at) { return uintBitsToFloat(s_u[at]); }
void u_set(uint at, uint c, float x) { s_u[at][c] = floatBitsToUint(x); }

#if !ATTN_VIT
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

uint prior_half(uint head_base, uint q, uint k) {
    uint b = head_base + 2u * prior_index(q, k);
    return uint(priors[b]) | (uint(priors[b + 1u]) << 8);
}
#endif

// 16 bytes at `at` of one of the E4M3 inputs (0 = q, 1 = k, 2 = v).
uvec4 load16(uint which, uint at) {
    uvec4 w = uvec4(0u);
    [[unroll]] for (uint i = 0u; i < 16u; i++) {
        uint x;
        if (which == 0u) {
            x = uint(qin[at + i]);
        } else if (which == 1u) {
            x = uint(kin[at + i]);
        } else {
            x = uint(vin[at + i]);
        }
        w[i >> 2] |= x << (8u * (i & 3u));
    }
    return w;
}

// Byte offset of channel 0 of this head in token `tok`'s row of a tensor at `off`.
uint row_at(uint off, int tok) { return off + uint(tok) * pc.heads * 32u + 32u * HEAD; }

// One 16-group step of a register tile: 4 rows (A vec4 at s_av/s_ap[abase + 16 kk]) x NB
// columns (B vec2 pairs at pairs bv0/bp0 + bbase + bstride kk + 0 .. NB/2 - 1 of s_u), sign
// masks per row (am) and column (bm). acc holds f16 accumulators.
void tile_group(inout uint acc[4][4], uint NB, uint abase, uint bv0, uint bp0, uint bbase, uint bstride, uint am[4], uint bm[4]) {
    float es[4][4];
    [[unroll]] for (uint i = 0u; i < 4u; i++) {
        [[unroll]] for (uint j = 0u; j < NB; j++) {
            es[i][j] = mma_acc_pow(acc[i][j]);
        }
    }
#if MMA_KEEP_OPERANDS
    vec4 keep_a[16];
    vec4 keep_b[16];
#endif
    [[unroll]] for (uint kk = 0u; kk < 16u; kk++) {
#if MMA_KEEP_OPERANDS
        keep_a[kk] = s_av[abase + 16u * kk];
        keep_b[kk] = vec4(u_pair(bv0 + bbase + bstride * kk), NB > 2u ? u_pair(bv0 + bbase + bstride * kk + 1u) : vec2(0.0));
        vec4 pa = mma_value_pow4(keep_a[kk], WIDENED);
        vec4 pb = mma_value_pow4(keep_b[kk], WIDENED);
#else
        vec4 pa = s_ap[abase + 16u * kk];
        vec4 pb = vec4(u_pair(bp0 + bbase + bstride * kk), NB > 2u ? u_pair(bp0 + bbase + bstride * kk + 1u) : vec2(0.0));
#endif
        [[unroll]] for (uint i = 0u; i < 4u; i++) {
            [[unroll]] for (uint j = 0u; j < NB; j++) {
                es[i][j] = fma(pa[i], pb[j], es[i][j]);
            }
        }
    }
    // es becomes the per-term constant (E is read back from it: fewer live registers).
    int sum[4][4];
    [[unroll]] for (uint i = 0u; i < 4u; i++) {
        [[unroll]] for (uint j = 0u; j < NB; j++) {
            es[i][j] = mma_term_constant(mma_pow_exponent(es[i][j]), P);
            sum[i][j] = 0;
        }
    }
    [[unroll]] for (uint kk = 0u; kk < 16u; kk++) {
#if MMA_KEEP_OPERANDS
        vec4 a = keep_a[kk];
        vec4 b = keep_b[kk];
#else
        vec4 a = s_av[abase + 16u * kk];
        vec4 b = vec4(u_pair(bv0 + bbase + bstride * kk), NB > 2u ? u_pair(bv0 + bbase + bstride * kk + 1u) : vec2(0.0));
#endif
        ivec4 sa = floatBitsToInt(a) >> 31;
        ivec4 sb = floatBitsToInt(b) >> 31;
        [[unroll]] for (uint i = 0u; i < 4u; i++) {
            [[unroll]] for (uint j = 0u; j < NB; j++) {
                sum[i][j] += mma_term(a[i], b[j], es[i][j]) ^ sa[i] ^ sb[j];
            }
        }
    }
    [[unroll]] for (uint i = 0u; i < 4u; i++) {
        [[unroll]] for (uint j = 0u; j < NB; j++) {
            uint h = acc[i][j];
            if (f16_is_nonfinite(h)) {
                continue;
            }
            int s = sum[i][j] + mma_sign_correction(bitCount(am[i] ^ bm[j]), es[i][j]);
            acc[i][j] = mma_finish_group(s, es[i][j], h, P);
        }
    }
}

// Decode 16 packed codes into values, powers and a sign mask.
void decode16(uvec4 w, out float v[16], out float pw[16], out uint mask) {
    mask = 0u;
    [[unroll]] for (uint i = 0u; i < 16u; i++) {
        mma_decode_e4((w[i >> 2] >> (8u * (i & 3u))) & 0xFFu, WIDENED, v[i], pw[i]);
        mask |= (floatBitsToUint(v[i]) >> 31) << i;
    }
}

// V sign masks [channel][key group] of 64 keys from the raw codes (invocations 128-255; `tok`
// gives the token of key k, -1 for a zero row).
#define STAGE_VMASK(TOKEN_OF_KEY)                                                              \
    if (tid >= 128u) {                                                                         \
        uint ch = (tid - 128u) >> 2;                                                           \
        uint kg = tid & 3u;                                                                    \
        uint mask = 0u;                                                                        \
        [[unroll]] for (uint i = 0u; i < 16u; i++) {                                           \
            int tok = TOKEN_OF_KEY(16u * kg + i);                                              \
            uint code = tok < 0 ? 0u : uint(vin[row_at(pc.v_off, tok) + ch]);                  \
            mask |= (code >> 7) << i;                                                          \
        }                                                                                      \
        s_vmask[4u * ch + kg] = mask;                                                          \
    }

// Channel group g of Q (invocations 0-63: query t, token qtok) and K (64-127: key t, ktok)
// into operands A and B with their sign masks.
void stage_qk(uint tid, uint g, int qtok, int ktok) {
    if (tid >= 128u) {
        return;
    }
    uint t = tid & 63u;
    bool is_q = tid < 64u;
    int tok = is_q ? qtok : ktok;
    uvec4 w = uvec4(0u);
    if (tok >= 0) {
        w = load16(is_q ? 0u : 1u, row_at(is_q ? pc.q_off : pc.k_off, tok) + 16u * g);
    }
    float v[16];
    float pw[16];
    uint mask;
    decode16(w, v, pw, mask);
    [[unroll]] for (uint i = 0u; i < 16u; i++) {
        if (is_q) {
            s_av[16u * i + (t >> 2)][t & 3u] = v[i];
            if (MMA_KEEP_OPERANDS == 0) {
                s_ap[16u * i + (t >> 2)][t & 3u] = pw[i];
            }
        } else {
            u_set(S_BV + 32u * i + (t >> 1), t & 1u, v[i]);
            if (MMA_KEEP_OPERANDS == 0) {
                u_set(S_BP + 32u * i + (t >> 1), t & 1u, pw[i]);
            }
        }
    }
    if (is_q) {
        s_amask[t] = mask;
    } else {
        s_bmask[t] = mask;
    }
}

// Scores of queries 4 tq .. +3 x keys 4 tk .. +3 from their seeds in acc, one 16-channel group
// at a time; then the exp weights (EXP) into the shared region. Starts and ends with a barrier.
#define SCORES(EXP, QTOK, KTOK)                                                               \
    [[dont_unroll]] for (uint g = 0u; g < 2u; g++) {                                           \
        barrier();                                                                             \
        stage_qk(tid, g, QTOK, KTOK);                                                          \
        barrier();                                                                             \
        uint am[4];                                                                            \
        uint bm[4];                                                                            \
        [[unroll]] for (uint i = 0u; i < 4u; i++) {                                            \
            am[i] = s_amask[4u * tq + i];                                                      \
            bm[i] = s_bmask[4u * tk + i];                                                      \
        }                                                                                      \
        tile_group(acc, 4u, tq, S_BV, S_BP, 2u * tk, 32u, am, bm);                            \
    }                                                                                          \
    [[unroll]] for (uint i = 0u; i < 4u; i++) {                                                \
        uint q = 4u * tq + i;                                                                  \
        s_u[16u * q + tk] = uvec2(EXP(acc[i][0]) | (EXP(acc[i][1]) << 16),                    \
                                  EXP(acc[i][2]) | (EXP(acc[i][3]) << 16));                    \
    }                                                                                          \
    barrier();

// Softmax tree of query q's 64 weights on four invocations (sub = 0..3): partial trees
// t[2 sub], t[2 sub + 1] through s_t, then every one of the four gets the whole tree. Contains
// a barrier.
uint softmax_tree(uint q, uint sub) {
    uint t2[2];
    [[unroll]] for (uint h = 0u; h < 2u; h++) {
        uint g = 2u * sub + h;
        uint tg = 0u;
        [[unroll]] for (uint j = 0u; j < 4u; j++) {
            uint a = g + 16u * j;
            uint b = a + 8u;
            uint x = f16_add((u_word(32u * q + (a >> 1)) >> (16u * (a & 1u))) & 0xFFFFu,
                             (u_word(32u * q + (b >> 1)) >> (16u * (b & 1u))) & 0xFFFFu);
            tg = softmax_tree_step(tg, x, j);
        }
        t2[h] = tg;
    }
    s_t[4u * q + sub] = t2[0] | (t2[1] << 16);
    barrier();
    uint tg[8];
    [[unroll]] for (uint s = 0u; s < 4u; s++) {
        uint w = s_t[4u * q + s];
        tg[2u * s] = w & 0xFFFFu;
        tg[2u * s + 1u] = w >> 16;
    }
    return softmax_tree_finish(tg);
}

// P codes of query q, keys 16 sub .. +15, E4(f16(e * r)) (r = 0x3C00: E4(e)): word
// 16 q + 4 sub + w = keys 16 sub + 4w .. +3. Every invocation reads its weights before any
// writes codes over the region (a barrier: all of them call this).
void publish_p(uint q, uint sub, uint r) {
    uint e[8];
    [[unroll]] for (uint w = 0u; w < 8u; w++) {
        e[w] = u_word(32u * q + 8u * sub + w);
    }
    barrier();
    [[unroll]] for (uint w = 0u; w < 4u; w++) {
        uint word = 0u;
        [[unroll]] for (uint b = 0u; b < 4u; b++) {
            uint k = 4u * w + b;
            uint x = (e[k >> 1] >> (16u * (k & 1u))) & 0xFFFFu;
            word |= table_e4(r == 0x3C00u ? x : f16_mul(x, r)) << (8u * b);
        }
        u_set_word(16u * q + 4u * sub + w, word);
    }
}

// One 16-key group kg of O += P.V for queries 4 tq .. +3 x channels 2 tc, +1: P of the group
// (invocation tid: query tid / 4, keys 4 (tid % 4) ..) and V of key 16 kg + tid / 16 (token
// vtok; channels 2 (tid % 16), +1) decoded first. Starts with a barrier.
void output_group(uint tid, uint kg, int vtok, inout uint acc[4][4]) {
    uint tq = tid >> 4;
    uint tc = tid & 15u;
    barrier();
    {
        uint q = tid >> 2;
        uint part = tid & 3u;
        uint word = u_word(16u * q + 4u * kg + part);
        uint mask = 0u;
        [[unroll]] for (uint i = 0u; i < 4u; i++) {
            float v;
            float pw;
            mma_decode_e4((word >> (8u * i)) & 0xFFu, WIDENED, v, pw);
            uint kk = 4u * part + i;
            s_av[16u * kk + (q >> 2)][q & 3u] = v;
            if (MMA_KEEP_OPERANDS == 0) {
                s_ap[16u * kk + (q >> 2)][q & 3u] = pw;
            }
            mask |= (floatBitsToUint(v) >> 31) << kk;
        }
        s_t[4u * q + part] = mask;

        uint kk = tid >> 4;
        uint c0 = 2u * tc;
        vec2 v2 = vec2(0.0);
        vec2 p2 = vec2(0.0);
        [[unroll]] for (uint i = 0u; i < 2u; i++) {
            uint code = vtok < 0 ? 0u : uint(vin[row_at(pc.v_off, vtok) + c0 + i]);
            float v;
            float pw;
            mma_decode_e4(code, WIDENED, v, pw);
            v2[i] = v;
            p2[i] = pw;
        }
        s_u[O_BV + 16u * kk + tc] = floatBitsToUint(v2);
        if (MMA_KEEP_OPERANDS == 0) {
            s_u[O_BP + 16u * kk + tc] = floatBitsToUint(p2);
        }
    }
    barrier();
    uint am[4];
    uint bm[4];
    [[unroll]] for (uint i = 0u; i < 4u; i++) {
        uint q = 4u * tq + i;
        am[i] = s_t[4u * q] | s_t[4u * q + 1u] | s_t[4u * q + 2u] | s_t[4u * q + 3u];
    }
    bm[0] = s_vmask[4u * (2u * tc) + kg];
    bm[1] = s_vmask[4u * (2u * tc + 1u) + kg];
    bm[2] = 0u;
    bm[3] = 0u;
    tile_group(acc, 2u, tq, O_BV, O_BP, tc, 16u, am, bm);
}

#if ATTN_VIT

int vit_key_token(uint kb, uint k) {
    uint key = 64u * kb + k;
    return key < pc.tokens ? int(key) : -1;
}

void main() {
    uint tid = gl_LocalInvocationID.x;
    uint tq = tid >> 4;
    uint tk = tid & 15u;
    uint tc = tid & 15u;
    uint qb = 64u * gl_WorkGroupID.x;
    uint blocks = (pc.tokens + 63u) / 64u;
    int qtok = qb + (tid & 63u) < pc.tokens ? int(qb + (tid & 63u)) : -1;

    uint out_acc[4][4];
    [[unroll]] for (uint i = 0u; i < 4u; i++) {
        [[unroll]] for (uint j = 0u; j < 4u; j++) {
            out_acc[i][j] = F16_POS_ZERO;
        }
    }
    uint total = F16_POS_ZERO;
    [[dont_unroll]] for (uint kb = 0u; kb < blocks; kb++) {
        barrier();
#define VIT_KEY(k) vit_key_token(kb, k)
        STAGE_VMASK(VIT_KEY)
        uint acc[4][4];
        [[unroll]] for (uint i = 0u; i < 4u; i++) {
            [[unroll]] for (uint j = 0u; j < 4u; j++) {
                acc[i][j] = F16_POS_ZERO;
            }
        }
        SCORES(exp_vit_table, qtok, vit_key_token(kb, tid & 63u))
        uint q = tid >> 2;
        uint sub = tid & 3u;
        uint bs = softmax_tree(q, sub);
        total = kb == 0u ? bs : f16_add(total, bs);
        publish_p(q, sub, 0x3C00u);
        [[dont_unroll]] for (uint kg = 0u; kg < 4u; kg++) {
            output_group(tid, kg, vit_key_token(kb, 16u * kg + (tid >> 4)), out_acc);
        }
    }
    // 1 / corrected total per query (computed by all four of its invocations; one stores it).
    barrier();
    if ((tid & 3u) == 0u) {
        s_amask[tid >> 2] = recip(softmax_vit_correct(total, blocks * 64u - pc.tokens));
    }
    barrier();
    [[unroll]] for (uint i = 0u; i < 4u; i++) {
        uint query = qb + 4u * tq + i;
        if (query >= pc.tokens) {
            continue;
        }
        uint r = s_amask[4u * tq + i];
        uint ob = row_at(pc.out_off, int(query)) + 2u * tc;
        outb[ob] = uint8_t(table_e4(f16_mul(out_acc[i][0], r)));
        outb[ob + 1u] = uint8_t(table_e4(f16_mul(out_acc[i][1], r)));
    }
}

#else

int window_key_token(uint k) { return token_of(physical_to_natural(k)); }

void main() {
    uint tid = gl_LocalInvocationID.x;
    uint tq = tid >> 4;
    uint tk = tid & 15u;
    uint tc = tid & 15u;

    STAGE_VMASK(window_key_token)

    // Scores: queries 4 tq .. +3 (natural order) x physical keys 4 tk .. +3, seeded by the prior.
    uint head_base = pc.prior_off + 8192u * HEAD;
    uint acc[4][4];
    [[unroll]] for (uint i = 0u; i < 4u; i++) {
        uint qp = natural_to_physical(4u * tq + i);
        [[unroll]] for (uint j = 0u; j < 4u; j++) {
            acc[i][j] = prior_half(head_base, qp, 4u * tk + j);
        }
    }
    SCORES(exp_window_table, token_of(tid & 63u), window_key_token(tid & 63u))

    uint q = tid >> 2;
    uint sub = tid & 3u;
    publish_p(q, sub, recip(softmax_tree(q, sub)));

    [[unroll]] for (uint i = 0u; i < 4u; i++) {
        [[unroll]] for (uint j = 0u; j < 4u; j++) {
            acc[i][j] = F16_POS_ZERO;
        }
    }
    [[dont_unroll]] for (uint kg = 0u; kg < 4u; kg++) {
        output_group(tid, kg, window_key_token(16u * kg + (tid >> 4)), acc);
    }
    [[unroll]] for (uint i = 0u; i < 4u; i++) {
        int tok = token_of(4u * tq + i);
        if (tok < 0) {
            continue;
        }
        uint ob = row_at(pc.out_off, tok) + 2u * tc;
        outb[ob] = uint8_t(table_e4(acc[i][0]));
        outb[ob + 1u] = uint8_t(table_e4(acc[i][1]));
    }
}

#endif
