// The window attention's products on cooperative matrices, shared by
// window_attention_coopmat.glsl (the attention as a kernel of its own) and
// attention_block_coopmat.glsl (a C = 32 block's QKV, normalisation, attention and projection
// as one kernel). The includer declares the shared arrays `s_q`, `s_k`, `s_v` (rows of CS
// uints), `s_s` and `s_p` (rows of SS uints) with the word offsets
// Q_AT, K_AT, V_AT, S_AT and P_AT into them (several may name one arena), and the bytes
// `priors` and words `prior_words` of the stored priors; it includes exp.glsl, softmax.glsl,
// recip.glsl and e4m3_widen.glsl.
#ifndef OPENNGX_WINDOW_CORE_GLSL
#define OPENNGX_WINDOW_CORE_GLSL

// Half index of prior[q][k] in a head's stored prior (nr-network.md §3.5's order: the MMA
// accumulator fragments of the exporting implementation).
uint prior_index(uint q, uint k) {
    uint m = q & 15u;
    uint n = k & 15u;
    uint lane = 4u * (m & 7u) + ((n & 7u) >> 1);
    uint fragment = 2u * (m >> 3) + (n & 1u);
    return (q >> 4) * 1024u + (k >> 4) * 256u + lane * 8u + 4u * (n >> 3) + fragment;
}

uint prior_half(uint head_base, uint q, uint k) {
    uint b = head_base + 2u * prior_index(q, k);
    return uint(priors[b]) | (uint(priors[b + 1u]) << 8);
}

// The head's prior at byte `head_base` into s_p, the scores' C operand of every window:
// [query][physical key], the queries in natural window order (`natural`) or in the physical
// order of the keys.
void load_prior(uint head_base, uint tid, bool natural) {
    if ((head_base & 3u) == 0u) {
        // Whole words in stored order: the word at half index i (i even) is prior[qp][k, k + 1]
        // with qp and k read off prior_index's bits (the inverse of prior_index for n even).
        [[unroll]] for (uint it = 0u; it < 16u; it++) {
            uint wi = tid + 128u * it;
            uint i = 2u * wi;
            uint qp = 16u * (i >> 10) + 8u * ((i >> 1) & 1u) + ((i >> 5) & 7u);
            uint k = 16u * ((i >> 8) & 3u) + 8u * ((i >> 2) & 1u) + 2u * ((i >> 3) & 3u);
            uint q = natural ? physical_to_natural(qp) : qp;
            s_p[P_AT + q * SS + (k >> 1)] = prior_words[(head_base >> 2) + wi];
        }
    } else {
        for (uint e = tid; e < 64u * 32u; e += 128u) {
            uint q = e >> 5;
            uint k2 = 2u * (e & 31u);
            uint qp = natural ? natural_to_physical(q) : q;
            s_p[P_AT + q * SS + (k2 >> 1)] =
                prior_half(head_base, qp, k2) | (prior_half(head_base, qp, k2 + 1u) << 16);
        }
    }
}

// One staged window's scores, softmax and P V, every step within subgroup `sg` on its own 16
// query rows (16 sg .. + 15 of s_q, s_s, s_p): O (f16) replaces the subgroup's rows of Q.
void window_products(uint sg) {
    // S = prior + Q K^T, per subgroup 16 queries x 64 keys.
    TILE_A qa[2];
    [[unroll]] for (uint g = 0u; g < 2u; g++) {
        TILE_LOAD_A(qa[g], s_q, Q_AT + 16u * sg * CS + 8u * g, CS, TILE_ROW_MAJOR);
    }
    [[unroll]] for (uint kt = 0u; kt < 4u; kt++) {
        TILE_C s;
        uint at = 16u * sg * SS + 8u * kt;
        TILE_LOAD_C(s, s_p, P_AT + at, SS);
        [[unroll]] for (uint g = 0u; g < 2u; g++) {
            TILE_B kb;
            TILE_LOAD_B(kb, s_k, K_AT + 16u * kt * CS + 8u * g, CS, TILE_COL_MAJOR);
            s = TILE_MULADD(qa[g], kb, s);
        }
        TILE_STORE_C(s, s_s, S_AT + at, SS);
    }
    TILE_SUBGROUP_BARRIER();

    // The subgroup's own 16 queries from here on, two lanes per query: lane 2 i + h takes keys
    // k with (k >> 2) & 1 == h, i.e. the tree's t[4 h .. 4 h + 3] (softmax.glsl: t[g] folds
    // e[g + 16 j] + e[g + 16 j + 8] over j; keys g, g + 1, g even, share a word, so one packed
    // add serves t[g] and t[g + 1]), swapped with the other lane by one shuffle. e =
    // exp_window(S) (exp.glsl's arithmetic pair form) stays in registers until r is known. Every
    // e lies in [2^-14, 9.75] and 64 of them sum to at most 624, so no add or multiply below
    // can give NaN or overflow: the packed forms need no canonicalisation.
    uint row = 16u * sg + (TILE_LANE >> 1);
    uint half_ = TILE_LANE & 1u;
    uint e[16];
    uint t[4];
    [[unroll]] for (uint gp = 0u; gp < 2u; gp++) {
        uint g0 = 4u * half_ + 2u * gp;
        uint tp = 0u;
        [[unroll]] for (uint j = 0u; j < 4u; j++) {
            uint at_a = S_AT + row * SS + ((g0 + 16u * j) >> 1);
            uint ea = exp_window_pair(s_s[at_a]);
            uint eb = exp_window_pair(s_s[at_a + 4u]);
            // b[g0][j] and b[g0 + 1][j] folded into t[g0] and t[g0 + 1] (softmax_tree_step).
            uint b = f16_add_pair_raw(ea, eb);
            tp = j == 0u ? b : f16_add_pair_raw(tp, b);
            e[8u * gp + 2u * j] = ea;
            e[8u * gp + 2u * j + 1u] = eb;
        }
        t[2u * gp] = tp & 0xFFFFu;
        t[2u * gp + 1u] = tp >> 16;
    }
    uint tg[8];
    [[unroll]] for (uint i = 0u; i < 4u; i++) {
        // The emulated build (tile_mma.glsl) runs on subgroups of consecutive invocations
        // (lavapipe's 8), where lane TILE_LANE ^ 1 is the device's lane ^ 1 too; were it not,
        // its test would see wrong bytes, never a pass.
        uint other = subgroupShuffleXor(t[i], 1u);
        tg[i] = half_ == 0u ? t[i] : other;
        tg[4u + i] = half_ == 0u ? other : t[i];
    }
    uint r = recip(softmax_tree_finish(tg));
    uint rr = r | (r << 16);

    // P = E4(f16(e * r)), widened back for the second product (e4_round_pair: P is in [0, 1]),
    // over the same words.
    [[unroll]] for (uint gp = 0u; gp < 2u; gp++) {
        uint g0 = 4u * half_ + 2u * gp;
        [[unroll]] for (uint j = 0u; j < 4u; j++) {
            uint at_a = S_AT + row * SS + ((g0 + 16u * j) >> 1);
            [[unroll]] for (uint b = 0u; b < 2u; b++) {
                s_s[at_a + 4u * b] = e4_round_pair(f16_mul_pair_raw(e[8u * gp + 2u * j + b], rr));
            }
        }
    }
    TILE_SUBGROUP_BARRIER();

    // O = P V, per subgroup 16 queries x 32 channels, chains from +0; into s_q (Q is done).
    [[unroll]] for (uint ct = 0u; ct < 2u; ct++) {
        TILE_C o;
        TILE_ZERO_C(o);
        [[unroll]] for (uint kg = 0u; kg < 4u; kg++) {
            TILE_A pa;
            TILE_B vb;
            TILE_LOAD_A(pa, s_s, S_AT + 16u * sg * SS + 8u * kg, SS, TILE_ROW_MAJOR);
            TILE_LOAD_B(vb, s_v, V_AT + 16u * kg * CS + 8u * ct, CS, TILE_ROW_MAJOR);
            o = TILE_MULADD(pa, vb, o);
        }
        TILE_STORE_C(o, s_q, Q_AT + 16u * sg * CS + 8u * ct, CS);
    }
    // Every lane's reads of the subgroup's rows are done.
    TILE_SUBGROUP_BARRIER();
}

#endif
