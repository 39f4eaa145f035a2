// Attention softmax pieces (mirror of src/numerics/softmax.rs; spec nr-network.md 2.7, 8.8).
// Every + is an f16 add (RNE) and the order is part of the result. The 64-key pairing tree is
//   b[g][j] = e[g+16j] + e[g+16j+8] (g = 0..7, j = 0..3), t[g] = ((b0 + b1) + b2) + b3,
//   sum = (((t0 + t2) + t4) + t6) + (((t1 + t3) + t5) + t7).
// Kernels build t[] as they go (j is the 16-key group, so a key stream in order can feed it);
// softmax_tree_finish combines them.
#ifndef OPENNGX_SOFTMAX_GLSL
#define OPENNGX_SOFTMAX_GLSL
#include "f16.glsl"
#include "exp.glsl"

// Fold the 16-key group j (b = e[g+16j] + e[g+16j+8]) into t[g].
uint softmax_tree_step(uint t, uint b, uint j) { return j == 0u ? b : f16_add(t, b); }

uint softmax_tree_finish(uint t[8]) {
    uint even = f16_add(f16_add(f16_add(t[0], t[2]), t[4]), t[6]);
    uint odd = f16_add(f16_add(f16_add(t[1], t[3]), t[5]), t[7]);
    return f16_add(even, odd);
}

// ViT denominator correction once at the end: total - f16(exp_vit(0) * paddedRows).
uint softmax_vit_correct(uint total, uint padded_rows) {
    uint rows = f16_from_f32_rne(float(padded_rows));
    uint correction = f16_mul(EXPV_OF_ZERO, rows);
    return f16_add(total, f16_neg(correction));
}

#endif
