// The window and ViT cosine normalisation on an aligned group of eight lanes, each holding four
// channels of a 32-channel vector as two f16 pairs: the operations and order of norm.glsl
// (src/numerics/norm.rs) spread over lanes. Shared by the normalisation's own subgroup kernels
// (normalize_subgroup.glsl) and the QKV GEMM's normalisation epilogue (gemm_coopmat.glsl,
// GEMM_NORM), so both give the bytes of one description.
//
// Lane j of the eight forms r[c] for c = 4j + i, i < 4 (lanes j < 4 only are read): `lo` holds
// channels c and `hi` channels c + 16 of the vector being summed. Level s of the stride tree adds
// r[c + s] to r[c]: s = 8 from lane j ^ 2, s = 4 from lane j ^ 1, s = 2 and 1 inside the lane.
// Every lane must call it (shuffles); lanes whose r is not read compute a sum nobody uses.
// Shuffles stay within the aligned eight, so any subgroup size that is a multiple of 8 gives
// the same bytes. The includer enables the subgroup extensions (basic, shuffle) and includes
// tables.glsl (the E4 codes).
#ifndef OPENNGX_NORM_LANES_GLSL
#define OPENNGX_NORM_LANES_GLSL
#include "norm.glsl"

// r[0] of the vector whose channels this lane's group of eight holds in `lo` and `hi` (read at
// the first lane of the group that formed it).
uint norm_lane_sum(uvec2 lo, uvec2 hi) {
    uint r[4];
    [[unroll]] for (uint i = 0u; i < 4u; i++) {
        r[i] = sumsq_pair(f16_quad_half(lo, i), f16_quad_half(hi, i));
    }
    // s = 8 (lane j ^ 2) and s = 4 (lane j ^ 1), r[c] first as in norm.glsl.
    [[unroll]] for (uint d = 2u; d >= 1u; d >>= 1) {
        uvec2 mine = uvec2(r[0] | (r[1] << 16), r[2] | (r[3] << 16));
        uvec2 other = subgroupShuffleXor(mine, d);
        [[unroll]] for (uint i = 0u; i < 4u; i++) {
            r[i] = f16_add(r[i], f16_quad_half(other, i));
        }
    }
    r[0] = f16_add(r[0], r[2]);
    r[1] = f16_add(r[1], r[3]);
    return f16_add(r[0], r[1]);
}

// The E4M3 codes of four channels as one word (channel i in byte i): q' = E4(f16(f16(q norm)
// t)), with the ViT's E4(f16(f16(f16(q norm) 5.65625) t)) when `vit`.
uint norm_q_word(uvec2 q, uint norm, uint t, bool vit) {
    uint w = 0u;
    [[unroll]] for (uint i = 0u; i < 4u; i++) {
        uint x = f16_mul(f16_quad_half(q, i), norm);
        if (vit) {
            x = f16_mul(x, NORM_VIT_Q_SCALE);
        }
        w |= table_e4(f16_mul(x, t)) << (8u * i);
    }
    return w;
}

// k' = E4(f16(k norm)).
uint norm_k_word(uvec2 k, uint norm) {
    uint w = 0u;
    [[unroll]] for (uint i = 0u; i < 4u; i++) {
        w |= table_e4(f16_mul(f16_quad_half(k, i), norm)) << (8u * i);
    }
    return w;
}

// v' = E4(v).
uint norm_v_word(uvec2 v) {
    uint w = 0u;
    [[unroll]] for (uint i = 0u; i < 4u; i++) {
        w |= table_e4(f16_quad_half(v, i)) << (8u * i);
    }
    return w;
}

#endif
