// Body of a window block's FFN input pair as one kernel on cooperative matrices (the tensor
// route's `Fusion::Ffn`): `ffn1` (h = E4(SiLU(W1 x)), CIN -> 128 channels per group) and `ffn2`
// (y = W2 h, 128 -> 32 per group, from +0 or seeded by f16(skip * scale), the E4 or dual
// epilogue), with h kept in the workgroup's shared memory: it is never written. A C = 32 block
// has one group (CIN = 32, ffn2 seeded and dual); a C >= 64 block has one group per expert (CIN
// = C, every expert reads all of x; expert g's ffn2 reads its own 128 channels of h and writes
// y's channels 32 g .. + 31, unseeded, E4). Built by ffn_coopmat.comp (the device's MMAs) and
// emulated/ffn_coopmat.comp (tile_mma.glsl's integer H25 MMAs).
//
// Every output is computed as gemm_coopmat.glsl computes it, so the bytes are the unfused
// pair's: each element of h is one chain of 16x16x16 MMAs over K = CIN in order from +0, its E4
// code read from numerics::tables::GEMM_EPILOGUE and widened back exactly for the second
// product; each element of y is one chain over K = 128 in order from +0 or the seed
// f16(skip * scale), its publication gemm_store.glsl's.
//
// Work split: 128 invocations = 4 subgroups in a 2 x 2 grid over a BM-row tile of one group
// (gl_WorkGroupID.y; BM = 32 as the recorder builds it: on an H100 the frame was 2.2 ms faster
// than with 64, docs/performance.md). `ffn1` is one pass over
// K = CIN in steps of 32 (x and the whole of W1's step staged, the next step's bytes loading
// into registers meanwhile, as in gemm_coopmat); a subgroup owns BM / 2 rows x 64 columns of h
// (four accumulators for BM = 32). The accumulators go to h in shared memory as f16 and the
// epilogue replaces each element with its E4 code widened back, in place. `ffn2` then runs from
// there: a subgroup owns BM / 2 rows x 16 columns of y (one accumulator for BM = 32). W2 and
// the seed's operands are loaded into registers at the start, so their latency hides behind
// `ffn1`. Shared memory is one arena (21,504 bytes for BM = 32, 32,768 for 64) whose regions
// follow the phases (it fits lavapipe's 32 KiB, so the emulated build runs there):
//   h      [BM rows][128 halves]                     the whole kernel
//   x [BM][32] (one step), then y's seed and result [BM][32]
//   W1 [128 columns][32 K] (one step), then W2 [32 columns][128 K]
// With PERSIST (CIN = 32 only) a workgroup runs several row tiles, the next tile's x and skip
// loading during this one; W1 and W2 are widened once for all of them and keep places of their
// own (W2 after W1: 30,208 bytes for BM = 32), so each tile stages only x and the seed.
#ifndef TILE_EMULATED
#define OPENNGX_F16_NATIVE 1
#endif
#include "f16.glsl"
#include "e4m3.glsl"
#include "e4m3_widen.glsl"
#include "tile_mma.glsl"

layout(local_size_x = 128) in;
layout(constant_id = 4) const uint EPI = 3u;  // y's publication: 1 = E4, 3 = raw f16 and E4
layout(constant_id = 5) const uint SEED = 1u; // y's skip: 0 = none, 1 = E4, 2 = f16
layout(constant_id = 6) const uint CIN = 32u; // x's channels, K of ffn1: a multiple of 32
layout(constant_id = 7) const uint BM = 32u;  // rows per workgroup: a multiple of 32
// 1: the workgroup runs row tiles x, x + X, ... of a grid X wide with W1 and W2 staged once
// and kept in shared memory (CIN = 32 only: W1 is then one step); 0: one row tile.
layout(constant_id = 8) const uint PERSIST = 0u;

const uint SR = BM / 2u;       // rows per subgroup
const uint RT = SR / 16u;      // row tiles per subgroup
const uint C = 32u;            // y channels per group, K per step of ffn1
const uint KSTEPS = CIN / C;   // steps of ffn1
const uint HID = 128u;         // h channels per group
// Row strides in uints (two halves each), skewed by 16 bytes against bank conflicts.
const uint XS = C / 2u + 4u;   // x [row][k], W1 [column][k], the seed/result [row][column]
const uint HS = HID / 2u + 4u; // h [row][k], W2 [column][k]
const uint H_AT = 0u;
const uint X_AT = H_AT + BM * HS;
const uint W_AT = X_AT + BM * XS;
// W2's place: where W1 was, or after it where both stay (PERSIST).
const uint W2_AT = W_AT + PERSIST * HID * XS;
const uint SHARED = W_AT + max(HID * XS, C * HS) + PERSIST * C * HS;
shared uint s_m[SHARED];

// x [rows][CIN] and the matrices W1 [groups][128][CIN], W2 [groups][32][128] (E4M3, row-major
// by output).
layout(std430, binding = 0) readonly buffer InX { uvec4 x_quads[]; };
layout(std430, binding = 1) readonly buffer InW1 { uvec4 w1_quads[]; };
layout(std430, binding = 2) readonly buffer InW2 { uvec4 w2_quads[]; };
layout(std430, binding = 3) readonly buffer Skip { uint skip_words[]; };
// 16-bit elements: the scale range may start 2 bytes into a word.
layout(std430, binding = 4) readonly buffer Scale { uint16_t scale_halves[]; };
layout(std430, binding = 5) writeonly buffer Out { uint out_words[]; };
layout(std430, binding = 6) writeonly buffer OutRaw { uint raw_words[]; };
// numerics::tables::GEMM_EPILOGUE (E4(SiLU(x)) at byte x, E4(x) at 65536 + x).
layout(std430, binding = 7) readonly buffer EpilogueTable { uint table_words[]; };
#include "gemm_store.glsl"

layout(push_constant) uniform Push {
    uint rows;
    uint scale_off; // halves
} pc;

// This workgroup's group (expert) and y's channels per row (32 per group).
uint group_id() { return gl_WorkGroupID.y; }
uint y_channels() { return C * gl_NumWorkGroups.y; }

#include "stage_quad.glsl"

// One step's operands: invocation `tid` brings half `tid & 1` (16 K) of x's row `tid >> 1`
// and of W1's columns `tid >> 1` and 64 + `tid >> 1` (rows past the end read as zero; their
// results are never published).
struct Step {
    uvec4 x;
    uvec4 w[2];
};

Step load_step(uint tid, uint row0, uint ks, bool with_w) {
    uint r = tid >> 1;
    uint k = (32u * ks) / 16u + (tid & 1u);
    Step st;
    st.x = r < BM && row0 + r < pc.rows ? x_quads[(row0 + r) * (CIN / 16u) + k] : uvec4(0u);
    [[unroll]] for (uint j = 0u; j < 2u; j++) {
        st.w[j] = with_w ? w1_quads[(HID * group_id() + 64u * j + r) * (CIN / 16u) + k]
                         : uvec4(0u);
    }
    return st;
}

void stage_step(uint tid, Step st, bool with_w) {
    uint r = tid >> 1;
    uint at = 8u * (tid & 1u);
    if (r < BM) {
        stage_quad(st.x, X_AT + r * XS + at);
    }
    if (with_w) {
        [[unroll]] for (uint j = 0u; j < 2u; j++) {
            stage_quad(st.w[j], W_AT + (64u * j + r) * XS + at);
        }
    }
}

// Rows of this invocation's quads of y: r(i) = tid / 8 + 16 i, columns 4 (tid % 8) .. + 3.
const uint QUADS = BM * C / 512u;
uint quad_row(uint tid, uint i) { return tid / 8u + 16u * i; }
// Quads of h per invocation in the epilogue: quad q = tid + 128 i is row q / 32, columns
// 4 (q % 32) .. + 3.
const uint H_QUADS = BM * HID / 512u;

// The seed's raw skip words of this invocation's quads of the row tile at row0 (rows past the
// end give zeros).
void load_skip(uint tid, uint row0, uint yc, out uvec2 skip_raw[QUADS]) {
    [[unroll]] for (uint i = 0u; i < QUADS; i++) {
        skip_raw[i] = uvec2(0u);
        uint r = quad_row(tid, i);
        if (SEED != 0u && row0 + r < pc.rows) {
            uint idx = (row0 + r) * y_channels() + yc;
            skip_raw[i] = SEED == 1u ? uvec2(skip_words[idx >> 2], 0u)
                                     : uvec2(skip_words[idx >> 1], skip_words[(idx >> 1) + 1u]);
        }
    }
}

void main() {
    uint tid = gl_LocalInvocationID.x;
    uint sg = TILE_SUBGROUP;
    uint sr = sg >> 1; // rows SR sr .. + SR - 1
    uint sc = sg & 1u; // columns 64 sc .. + 63 of h, 16 sc .. + 15 of y
    uint c4 = 4u * (tid % 8u);
    uint yc = C * group_id() + c4; // y's first channel of this invocation's quads
    uint tiles = (pc.rows + BM - 1u) / BM;
    uint tile = gl_WorkGroupID.x;
    // Without PERSIST the loop below runs once.
    uint stride = PERSIST != 0u ? gl_NumWorkGroups.x : tiles;
    uint first = tile;

    // Everything ffn2 reads from memory, in flight while ffn1 runs: this group's W2 (32
    // columns x 128 K, eight quads each, two per invocation) and the seed's skip and scales.
    uvec4 w2q[2];
    [[unroll]] for (uint p = 0u; p < 2u; p++) {
        uint slot = tid + 128u * p;
        w2q[p] = w2_quads[(C * group_id() + (slot >> 3)) * 8u + (slot & 7u)];
    }
    uvec2 scales = uvec2(0u);
    if (SEED != 0u) {
        uint sat = pc.scale_off + yc;
        scales = uvec2(uint(scale_halves[sat]) | (uint(scale_halves[sat + 1u]) << 16),
                       uint(scale_halves[sat + 2u]) | (uint(scale_halves[sat + 3u]) << 16));
    }
    uvec2 skip_raw[QUADS];
    load_skip(tid, tile * BM, yc, skip_raw);
    Step st = load_step(tid, tile * BM, 0u, true);
    if (PERSIST != 0u) {
        // W1 (one step) and W2 stay for every tile; the first barrier below covers them.
        [[unroll]] for (uint j = 0u; j < 2u; j++) {
            stage_quad(st.w[j], W_AT + (64u * j + (tid >> 1)) * XS + 8u * (tid & 1u));
        }
        [[unroll]] for (uint p = 0u; p < 2u; p++) {
            uint slot = tid + 128u * p;
            stage_quad(w2q[p], W2_AT + (slot >> 3) * HS + 8u * (slot & 7u));
        }
    }

    for (; tile < tiles; tile += stride) {
        uint row0 = tile * BM;
        uint next0 = (tile + stride) * BM;
        bool more = PERSIST != 0u && tile + stride < tiles;
        if (tile != first) {
            // The previous tile's publication has read its results.
            barrier();
        }

        // h = W1 x: one chain per element over K = CIN in order from +0, 16 K per MMA.
        TILE_C acc[4u * RT]; // [row tile i][column tile j] at 4 i + j
        [[unroll]] for (uint a = 0u; a < 4u * RT; a++) {
            TILE_ZERO_C(acc[a]);
        }
        for (uint ks = 0u; ks < KSTEPS; ks++) {
            if (ks > 0u) {
                // Every subgroup is done with the previous step's tiles.
                barrier();
            }
            stage_step(tid, st, PERSIST == 0u);
            barrier();
            if (ks + 1u < KSTEPS) {
                st = load_step(tid, row0, ks + 1u, true);
            } else if (more) {
                st = load_step(tid, next0, 0u, false);
            }
            [[unroll]] for (uint s = 0u; s < C / 16u; s++) {
                TILE_A fa[RT];
                [[unroll]] for (uint i = 0u; i < RT; i++) {
                    TILE_LOAD_A(fa[i], s_m, X_AT + (SR * sr + 16u * i) * XS + 8u * s, XS,
                                TILE_ROW_MAJOR);
                }
                [[unroll]] for (uint j = 0u; j < 4u; j++) {
                    TILE_B fb;
                    TILE_LOAD_B(fb, s_m, W_AT + (64u * sc + 16u * j) * XS + 8u * s, XS,
                                TILE_COL_MAJOR);
                    [[unroll]] for (uint i = 0u; i < RT; i++) {
                        acc[4u * i + j] = TILE_MULADD(fa[i], fb, acc[4u * i + j]);
                    }
                }
            }
        }
        [[unroll]] for (uint i = 0u; i < RT; i++) {
            [[unroll]] for (uint j = 0u; j < 4u; j++) {
                TILE_STORE_C(acc[4u * i + j], s_m,
                             H_AT + (SR * sr + 16u * i) * HS + (64u * sc + 16u * j) / 2u, HS);
            }
        }
        // h's f16 results are complete, and nobody reads x (or, without PERSIST, W1) any more.
        barrier();

        // h = E4(SiLU(.)) widened back, in place; W2 where W1 was (without PERSIST), y's seed
        // f16(skip * scale) as the C operand where x was, built as gemm_coopmat.glsl builds it.
        [[unroll]] for (uint i = 0u; i < H_QUADS; i++) {
            uint q = tid + 128u * i;
            uint at = H_AT + (q / 32u) * HS + 2u * (q % 32u);
            uint w0 = s_m[at];
            uint w1 = s_m[at + 1u];
            uint codes = epilogue_code(w0 & 0xFFFFu) | (epilogue_code(w0 >> 16) << 8)
                | (epilogue_code(w1 & 0xFFFFu) << 16) | (epilogue_code(w1 >> 16) << 24);
            uvec2 hw = widen_word(codes);
            s_m[at] = hw.x;
            s_m[at + 1u] = hw.y;
        }
        if (PERSIST == 0u) {
            [[unroll]] for (uint p = 0u; p < 2u; p++) {
                uint slot = tid + 128u * p;
                stage_quad(w2q[p], W2_AT + (slot >> 3) * HS + 8u * (slot & 7u));
            }
        }
        if (SEED != 0u) {
            [[unroll]] for (uint i = 0u; i < QUADS; i++) {
                uint r = quad_row(tid, i);
                uvec2 sk = SEED == 1u ? widen_word(skip_raw[i].x) : skip_raw[i];
                s_m[X_AT + r * XS + c4 / 2u] = f16_mul_pair(sk.x, scales.x);
                s_m[X_AT + r * XS + c4 / 2u + 1u] = f16_mul_pair(sk.y, scales.y);
            }
            if (more) {
                load_skip(tid, next0, yc, skip_raw);
            }
        }
        barrier();

        // y = W2 h from +0 or the seed: eight groups of 16 K in order.
        TILE_C yacc[RT];
        [[unroll]] for (uint i = 0u; i < RT; i++) {
            if (SEED != 0u) {
                TILE_LOAD_C(yacc[i], s_m, X_AT + (SR * sr + 16u * i) * XS + 8u * sc, XS);
            } else {
                TILE_ZERO_C(yacc[i]);
            }
        }
        for (uint s = 0u; s < HID / 16u; s++) {
            TILE_A fa[RT];
            [[unroll]] for (uint i = 0u; i < RT; i++) {
                TILE_LOAD_A(fa[i], s_m, H_AT + (SR * sr + 16u * i) * HS + 8u * s, HS,
                            TILE_ROW_MAJOR);
            }
            TILE_B fb;
            TILE_LOAD_B(fb, s_m, W2_AT + 16u * sc * HS + 8u * s, HS, TILE_COL_MAJOR);
            [[unroll]] for (uint i = 0u; i < RT; i++) {
                yacc[i] = TILE_MULADD(fa[i], fb, yacc[i]);
            }
        }
        // Each subgroup's results replace its own seed tile, which it alone has loaded; the
        // epilogue below reads other subgroups' tiles.
        [[unroll]] for (uint i = 0u; i < RT; i++) {
            TILE_STORE_C(yacc[i], s_m, X_AT + (SR * sr + 16u * i) * XS + 8u * sc, XS);
        }
        barrier();
        [[unroll]] for (uint i = 0u; i < QUADS; i++) {
            uint r = quad_row(tid, i);
            if (row0 + r < pc.rows) {
                uint at = X_AT + r * XS + c4 / 2u;
                uint w0 = s_m[at];
                uint w1 = s_m[at + 1u];
                if (EPI == 3u) {
                    // The raw f16 y: a NaN seed comes back from the tensor cores as their own
                    // NaN, where the model keeps 0x7E00 (docs/numerics.md); E4 codes every NaN
                    // alike.
                    w0 = f16_canon_pair(w0);
                    w1 = f16_canon_pair(w1);
                }
                uint h[4] = uint[4](w0 & 0xFFFFu, w0 >> 16, w1 & 0xFFFFu, w1 >> 16);
                gemm_store_quad(EPI, (row0 + r) * y_channels() + yc, h);
            }
        }
    }
}
