// Body of the ViT attention on cooperative matrices (vit_attention_coopmat.comp has what it
// computes and how the work is split), written with tile_mma.glsl's macros so that
// emulated/vit_attention_coopmat.comp builds it with integer MMAs too.
#ifndef TILE_EMULATED
#define OPENNGX_F16_NATIVE 1
#endif
#include "e4m3.glsl"
#include "e4m3_widen.glsl"
#include "recip.glsl"
#include "softmax.glsl"
#include "tile_mma.glsl"

layout(local_size_x = 128) in;

layout(std430, binding = 0) readonly buffer QIn { uint8_t qin[]; };
layout(std430, binding = 1) readonly buffer KIn { uint8_t kin[]; };
layout(std430, binding = 2) readonly buffer VIn { uint8_t vin[]; };
// The same three bindings as words, for offsets on a word (the rows are 32 * heads bytes).
layout(std430, binding = 0) readonly buffer QWords { uint qwords[]; };
layout(std430, binding = 1) readonly buffer KWords { uint kwords[]; };
layout(std430, binding = 2) readonly buffer VWords { uint vwords[]; };
layout(std430, binding = 3) writeonly buffer Out { uint8_t outb[]; };
// The same binding as words, for an output range that starts on a word.
layout(std430, binding = 3) writeonly buffer OutWords { uint out_words[]; };
// numerics::tables::ATTENTION (see attention.glsl): bound by the recorder, read by no step
// since the softmax and the output went arithmetic (exp.glsl, e4m3_widen.glsl).
layout(std430, binding = 4) readonly buffer Tables { uint table_words[]; };
#include "tables.glsl"

layout(push_constant) uniform Push {
    uint tokens;
    uint heads;
    uint q_off; // bytes, also for k/v/out below
    uint k_off;
    uint v_off;
    uint out_off;
} pc;

// Row strides in uints (two halves each), skewed by 16 bytes.
const uint CS = 20u; // 32 channels
const uint SS = 36u; // 64 keys

shared uint s_lut[256];
shared uint s_q[64 * CS];  // Q [query][channel], later O
shared uint s_k[64 * CS];  // K [key][channel] of the block
shared uint s_v[64 * CS];  // V [key][channel] of the block
shared uint s_s[64 * SS];  // S, then P [query][key]

uint row_at(uint off, uint tok) { return off + tok * pc.heads * 32u + 32u * gl_WorkGroupID.y; }

// 16 channels (half h of the row) of token `tok` (-1: a zero row) of input `which` (0 = q,
// 1 = k, 2 = v) widened into the shared tile of that input at `at`.
void stage_row(uint which, int tok, uint h, uint at) {
    uint off = which == 0u ? pc.q_off : (which == 1u ? pc.k_off : pc.v_off);
    if ((off & 3u) == 0u) {
        // Four words, widened in arithmetic (e4m3_widen.glsl).
        [[unroll]] for (uint i = 0u; i < 4u; i++) {
            uvec2 p = uvec2(0u);
            if (tok >= 0) {
                uint wi = ((row_at(off, uint(tok)) + 16u * h) >> 2) + i;
                p = widen_word(which == 0u ? qwords[wi] : (which == 1u ? kwords[wi] : vwords[wi]));
            }
            [[unroll]] for (uint j = 0u; j < 2u; j++) {
                if (which == 0u) {
                    s_q[at + 2u * i + j] = p[j];
                } else if (which == 1u) {
                    s_k[at + 2u * i + j] = p[j];
                } else {
                    s_v[at + 2u * i + j] = p[j];
                }
            }
        }
        return;
    }
    [[unroll]] for (uint i = 0u; i < 8u; i++) {
        uint lo = 0u;
        uint hi = 0u;
        if (tok >= 0) {
            uint b = row_at(which == 0u ? pc.q_off : (which == 1u ? pc.k_off : pc.v_off), uint(tok)) + 16u * h + 2u * i;
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

// The raw words of this invocation's staging row of key block `kb` (key row tid / 2, half
// tid % 2): k in 0..3, v in 4..7, zeros past the last token (code 0 widens to +0, what
// stage_row stores there). For k and v on words, loaded one block ahead. A padded key's index
// is 0, so no address past the tensors is ever formed, even for a load the compiler hoists.
void fetch_kv(uint kb, out uint w[8]) {
    uint key = 64u * kb + (gl_LocalInvocationID.x >> 1);
    uint h = gl_LocalInvocationID.x & 1u;
    bool in_range = key < pc.tokens;
    uint ki = in_range ? (row_at(pc.k_off, key) + 16u * h) >> 2 : 0u;
    uint vi = in_range ? (row_at(pc.v_off, key) + 16u * h) >> 2 : 0u;
    [[unroll]] for (uint i = 0u; i < 4u; i++) {
        w[i] = in_range ? kwords[ki + i] : 0u;
        w[4u + i] = in_range ? vwords[vi + i] : 0u;
    }
}

void main() {
    uint tid = gl_LocalInvocationID.x;
    uint sg = TILE_SUBGROUP;
    uint lane = TILE_LANE;
    uint qb = 64u * gl_WorkGroupID.x;
    uint blocks = (pc.tokens + 63u) / 64u;
    s_lut[tid] = e4m3_to_f16(tid);
    s_lut[tid + 128u] = e4m3_to_f16(tid + 128u);
    barrier();
    {
        uint row = tid >> 1;
        int qtok = qb + row < pc.tokens ? int(qb + row) : -1;
        stage_row(0u, qtok, tid & 1u, row * CS + 8u * (tid & 1u));
    }
    barrier();
    TILE_A qa[2];
    [[unroll]] for (uint g = 0u; g < 2u; g++) {
        TILE_LOAD_A(qa[g], s_q, 16u * sg * CS + 8u * g, CS, TILE_ROW_MAJOR);
    }
    TILE_C o[2];
    [[unroll]] for (uint ct = 0u; ct < 2u; ct++) {
        TILE_ZERO_C(o[ct]);
    }
    // This lane's query (row of s_s / s_q) and its half of the keys: keys k with
    // (k >> 2) & 1 == half, i.e. the tree's t[4 half .. 4 half + 3].
    uint row = 16u * sg + (lane >> 1);
    uint half_ = lane & 1u;
    uint total = F16_POS_ZERO;

    // With k and v on words, the next block's words load while this one computes (the chain
    // over the key blocks is the kernel's latency); each block is staged exactly as stage_row
    // stages it.
    bool ahead = ((pc.k_off | pc.v_off) & 3u) == 0u;
    uint next[8];
    if (ahead) {
        fetch_kv(0u, next);
    }
    [[dont_unroll]] for (uint kb = 0u; kb < blocks; kb++) {
        // Every subgroup is done with the previous block's K and V.
        barrier();
        {
            uint r = tid >> 1;
            uint key = 64u * kb + r;
            int ktok = key < pc.tokens ? int(key) : -1;
            uint at = r * CS + 8u * (tid & 1u);
            if (ahead) {
                [[unroll]] for (uint i = 0u; i < 4u; i++) {
                    uvec2 pk = widen_word(next[i]);
                    uvec2 pv = widen_word(next[4u + i]);
                    s_k[at + 2u * i] = pk.x;
                    s_k[at + 2u * i + 1u] = pk.y;
                    s_v[at + 2u * i] = pv.x;
                    s_v[at + 2u * i + 1u] = pv.y;
                }
            } else {
                stage_row(1u, ktok, tid & 1u, at);
                stage_row(2u, ktok, tid & 1u, at);
            }
        }
        barrier();
        if (ahead && kb + 1u < blocks) {
            fetch_kv(kb + 1u, next);
        }

        // S = Q K^T for the subgroup's 16 queries x 64 keys, chains from +0.
        [[unroll]] for (uint kt = 0u; kt < 4u; kt++) {
            TILE_C s;
            TILE_ZERO_C(s);
            [[unroll]] for (uint g = 0u; g < 2u; g++) {
                TILE_B kmat;
                TILE_LOAD_B(kmat, s_k, 16u * kt * CS + 8u * g, CS, TILE_COL_MAJOR);
                s = TILE_MULADD(qa[g], kmat, s);
            }
            TILE_STORE_C(s, s_s, 16u * sg * SS + 8u * kt, SS);
        }
        TILE_SUBGROUP_BARRIER();

        // e = exp_vit(S) (exp.glsl's arithmetic pair form); the tree's t[g] (g = 4 half + i)
        // folds b = e[g + 16 j] + e[g + 16 j + 8] over j; P = E4(e) widened back in place
        // (e4_round_pair). Keys g, g + 1 (g even) share a word, so one packed add serves t[g]
        // and t[g + 1]. Every e lies in [0.0040283203125, 1.640625] and a block's 64 sum to at
        // most 105: no add here can give NaN, so the packed forms need no canonicalisation.
        uint t[4];
        [[unroll]] for (uint gp = 0u; gp < 2u; gp++) {
            uint g0 = 4u * half_ + 2u * gp;
            uint tp = 0u;
            [[unroll]] for (uint j = 0u; j < 4u; j++) {
                uint at_a = row * SS + ((g0 + 16u * j) >> 1);
                uint at_b = at_a + 4u;
                uint ea = exp_vit_pair(s_s[at_a]);
                uint eb = exp_vit_pair(s_s[at_b]);
                uint b = f16_add_pair_raw(ea, eb);
                tp = j == 0u ? b : f16_add_pair_raw(tp, b);
                s_s[at_a] = e4_round_pair(ea);
                s_s[at_b] = e4_round_pair(eb);
            }
            t[2u * gp] = tp & 0xFFFFu;
            t[2u * gp + 1u] = tp >> 16;
        }
        uint tg[8];
        [[unroll]] for (uint i = 0u; i < 4u; i++) {
            // The emulated build's stand-in lanes: see window_attention_coopmat.glsl.
            uint other = subgroupShuffleXor(t[i], 1u);
            tg[i] = half_ == 0u ? t[i] : other;
            tg[4u + i] = half_ == 0u ? other : t[i];
        }
        uint bs = softmax_tree_finish(tg);
        total = kb == 0u ? bs : f16_add(total, bs);
        TILE_SUBGROUP_BARRIER();

        // O += P V: four 16-key groups in key order, continuing the chain.
        [[unroll]] for (uint kg = 0u; kg < 4u; kg++) {
            TILE_A pa;
            TILE_LOAD_A(pa, s_s, 16u * sg * SS + 8u * kg, SS, TILE_ROW_MAJOR);
            [[unroll]] for (uint ct = 0u; ct < 2u; ct++) {
                TILE_B vb;
                TILE_LOAD_B(vb, s_v, 16u * kg * CS + 8u * ct, CS, TILE_ROW_MAJOR);
                o[ct] = TILE_MULADD(pa, vb, o[ct]);
            }
        }
        // S of the next block overwrites P only after every lane's loads.
        TILE_SUBGROUP_BARRIER();
    }

    // out = E4(f16(O * f16(1 / corrected total))): O through the subgroup's rows of s_q (its
    // Q is in registers), lane = (query, 16 channels).
    uint r = recip(softmax_vit_correct(total, blocks * 64u - pc.tokens));
    [[unroll]] for (uint ct = 0u; ct < 2u; ct++) {
        TILE_STORE_C(o[ct], s_q, 16u * sg * CS + 8u * ct, CS);
    }
    TILE_SUBGROUP_BARRIER();
    uint query = qb + row;
    if (query < pc.tokens) {
        uint ob = row_at(pc.out_off, query) + 16u * half_;
        uint codes[8];
        uint rr = r | (r << 16);
        [[unroll]] for (uint i = 0u; i < 8u; i++) {
            // A NaN product publishes as 0 whatever its bits: no canonicalisation.
            uint p = e4_publish_pair(f16_mul_pair_raw(s_q[row * CS + 8u * half_ + i], rr));
            codes[i] = (p & 0xFFu) | ((p >> 8) & 0xFF00u);
        }
        if ((pc.out_off & 3u) == 0u) {
            // Four codes per word store.
            [[unroll]] for (uint i = 0u; i < 4u; i++) {
                out_words[(ob >> 2) + i] = codes[2u * i] | (codes[2u * i + 1u] << 16);
            }
        } else {
            [[unroll]] for (uint i = 0u; i < 8u; i++) {
                outb[ob + 2u * i] = uint8_t(codes[i]);
                outb[ob + 2u * i + 1u] = uint8_t(codes[i] >> 8);
            }
        }
    }
}
