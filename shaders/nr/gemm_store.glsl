// The GEMM's output step, shared by gemm.glsl (one chain per output) and gemm_sum.comp (split-K
// partials added up): 4 adjacent f16 results h[0..3] of one row, stored at element `at` (a
// multiple of 4) by epilogue `epi`: 0 = E4(SiLU(x)), 1 = E4(x), 2 = f16, 3 = f16 raw + E4.
// The E4 codes are read from `numerics::tables::GEMM_EPILOGUE` (E4(SiLU(x)) at byte x, E4(x) at
// 65536 + x). The including shader declares `out_words` (E4 words, or f16 pairs for epi 2),
// `raw_words` (f16 pairs of epi 3) and `table_words`, and enables
// GL_EXT_control_flow_attributes.
#ifndef OPENNGX_GEMM_STORE_GLSL
#define OPENNGX_GEMM_STORE_GLSL

uint epilogue_code(uint at) { return (table_words[at >> 2] >> (8u * (at & 3u))) & 0xFFu; }

void gemm_store_quad(uint epi, uint at, uint h[4]) {
    if (epi == 2u || epi == 3u) {
        uint w0 = h[0] | (h[1] << 16);
        uint w1 = h[2] | (h[3] << 16);
        if (epi == 2u) {
            out_words[at / 2u] = w0;
            out_words[at / 2u + 1u] = w1;
        } else {
            raw_words[at / 2u] = w0;
            raw_words[at / 2u + 1u] = w1;
        }
    }
    if (epi != 2u) {
        uint base = epi == 0u ? 0u : 65536u;
        uint word = 0u;
        [[unroll]] for (uint j = 0u; j < 4u; j++) {
            word |= epilogue_code(base + h[j]) << (8u * j);
        }
        out_words[at / 4u] = word;
    }
}

#endif
