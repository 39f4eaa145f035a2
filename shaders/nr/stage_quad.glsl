// How the fused kernels (ffn_coopmat.glsl, ffn_rows_coopmat.glsl,
// attention_block_coopmat.glsl) bring E4M3 operands into their shared memory: 16 codes
// widened exactly to f16 pairs (e4m3_widen.glsl). The includer declares its arena
// `shared uint s_m[]` first.
#ifndef OPENNGX_STAGE_QUAD_GLSL
#define OPENNGX_STAGE_QUAD_GLSL

// The 16 codes of quad `q` widened into 8 uints of the arena at `at`.
void stage_quad(uvec4 q, uint at) {
    [[unroll]] for (uint i = 0u; i < 4u; i++) {
        uvec2 p = widen_word(q[i]);
        s_m[at + 2u * i] = p.x;
        s_m[at + 2u * i + 1u] = p.y;
    }
}

#endif
