// The window attention's staging helpers, shared by window_attention_coopmat.glsl,
// attention_block_coopmat.glsl and the test build of the fused staging
// (shaders/test/window_stage_qkv.comp, which proves it on devices without cooperative
// matrices). The includer declares the push constants (`pc.width`, `height`, `shift_x`,
// `shift_y`; with NORM_FUSED also `heads`, `qkv_off` in words; with NORM_FUSED or
// NORM_IN_PLACE `temp_off` in bytes), e4m3_widen.glsl's functions, `rsqrt_table`,
// with NORM_FUSED the bindings `qkv_words` and `temps`, with NORM_IN_PLACE `temps`, and with
// either the shared rows `s_q`, `s_k`, `s_v`. gl_WorkGroupID = (window column, first window
// row, head); the kernels run the window rows gl_WorkGroupID.y, + gl_NumWorkGroups.y, ... of
// their column.
#ifndef OPENNGX_WINDOW_STAGE_GLSL
#define OPENNGX_WINDOW_STAGE_GLSL

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

// Token of window position `t` (natural order) in the window at column gl_WorkGroupID.x and
// row `wy` of the level's window grid, -1 outside the level.
int token_in(uint wy, uint t) {
    int x = int(gl_WorkGroupID.x * 8u + (t & 7u)) - int(pc.shift_x);
    int y = int(wy * 8u + (t >> 3)) - int(pc.shift_y);
    if (x < 0 || y < 0 || x >= int(pc.width) || y >= int(pc.height)) {
        return -1;
    }
    return y * int(pc.width) + x;
}

// Token of window position `t` in the workgroup's own window (one window per workgroup).
int token_of(uint t) { return token_in(gl_WorkGroupID.y, t); }

#if defined(NORM_FUSED) || defined(NORM_IN_PLACE)
// By its path from shaders/nr and shaders/test alike (includes resolve from the shader).
#include "../nr/norm_temperature.glsl"
#include "ops.glsl"

uint half_of(uint w[8], uint c) { return (w[c >> 1] >> (16u * (c & 1u))) & 0xFFFFu; }

// The cosine normalisation of `Op::Normalize` (normalize_coop.glsl, norm.glsl) of one lane
// pair's rows: the pair (2 row, 2 row + 1) holds half `h` (channels 16 h .. 16 h + 15, as 8
// words) of a query's f16 q (`wq`) and of a key's k and v (`wk`, `wv`) and stores q', k', v'
// (E4M3, widened back in arithmetic) at `qat`, `kat`, `vat` of s_q, s_k, s_v, zeros where `qin` or
// `kin` says the token is outside the level. Lane h = 0 sums q's squares, lane 1 k's:
// r[c] = f16(x[c]^2 + f16(x[c + 16]^2)) for c < 16 (one fused half FMA), then the stride tree
// 8/4/2/1 of f16 adds, norm = rsqrt(r[0]) from the table, each lane holding one half of each
// vector and swapping the other half in with one shuffle per word. Both lanes of every pair
// reach every shuffle.
void normalize_into(uint wq[8], uint wk[8], uint wv[8], bool qin, bool kin, uint h, uint qat,
                    uint kat, uint vat) {
    // Lane 0 gets lane 1's q channels 16..31, lane 1 lane 0's k channels 0..15.
    uint lo[8];
    uint hi[8];
    [[unroll]] for (uint i = 0u; i < 8u; i++) {
        uint got = subgroupShuffleXor(h == 0u ? wk[i] : wq[i], 1u);
        lo[i] = h == 0u ? wq[i] : got;
        hi[i] = h == 0u ? got : wk[i];
    }
    uint r[16];
    [[unroll]] for (uint c = 0u; c < 16u; c++) {
        uint a = half_of(lo, c);
        uint b = half_of(hi, c);
        r[c] = sumsq_pair(a, b);
    }
    [[unroll]] for (uint s = 8u; s >= 1u; s >>= 1) {
        [[unroll]] for (uint c = 0u; c < s; c++) {
            r[c] = f16_add(r[c], r[c + s]);
        }
    }
    uint mine = rsqrt_table(r[0]);
    uint other = subgroupShuffleXor(mine, 1u);
    uint norm_q = h == 0u ? mine : other;
    uint norm_k = h == 0u ? other : mine;
    uint t = norm_temperature(gl_WorkGroupID.z);
    // Two channels at a time: packed multiplies (a NaN publishes as +0 whatever its bits), then
    // E4 and back to f16 in arithmetic (e4m3_widen.glsl), no table.
    uint nq = norm_q | (norm_q << 16);
    uint nk = norm_k | (norm_k << 16);
    uint tt = t | (t << 16);
    [[unroll]] for (uint i = 0u; i < 8u; i++) {
        uint qw = widen_halves(e4_publish_pair(f16_mul_pair_raw(f16_mul_pair_raw(wq[i], nq), tt)));
        uint kw = widen_halves(e4_publish_pair(f16_mul_pair_raw(wk[i], nk)));
        uint vw = widen_halves(e4_publish_pair(wv[i]));
        s_q[qat + i] = qin ? qw : 0u;
        s_k[kat + i] = kin ? kw : 0u;
        s_v[vat + i] = kin ? vw : 0u;
    }
}
#endif

#ifdef NORM_FUSED
// Half `h` (channels 16 h .. 16 h + 15, as 8 words) of part `p` (0 q, 1 k, 2 v) of token `tok`'s
// QKV row of this workgroup's head; zeros for a token outside the level.
void load_part(int tok, uint p, uint h, out uint w[8]) {
    uint base = pc.qkv_off + (uint(max(tok, 0)) * pc.heads + gl_WorkGroupID.z) * 48u + 16u * p + 8u * h;
    [[unroll]] for (uint i = 0u; i < 8u; i++) {
        w[i] = 0u;
        if (tok >= 0) {
            w[i] = qkv_words[base + i];
        }
    }
}

// The normalisation in the staging: the lane pair (2 row, 2 row + 1) of row `row` normalises
// query token `qtok` and key/value token `ktok` from the QKV GEMM's output (normalize_into) and
// stores q', k', v' where stage_row would.
void stage_normalized(int qtok, int ktok, uint h, uint at) {
    uint wq[8];
    uint wk[8];
    uint wv[8];
    load_part(qtok, 0u, h, wq);
    load_part(ktok, 1u, h, wk);
    load_part(ktok, 2u, h, wv);
    normalize_into(wq, wk, wv, qtok >= 0, ktok >= 0, h, at, at, at);
}
#endif

#endif
