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
// Work split: 128 invocations = 4 subgroups in a 2 x 2 grid over a 64-row tile of one group
// (gl_WorkGroupID.y); a subgroup owns 32 rows x 16 columns (two accumulators) of each 32-column
// result tile. `ffn1` runs four 32-column tiles of h, each over CIN / 32 steps of 32 K (x and
// W1 staged per step; for CIN = 32 x is staged once), `ffn2` one tile of y. Shared memory is
// one arena whose regions follow the phases (31,232 bytes for every CIN: it fits lavapipe's
// 32 KiB, so the emulated build runs there):
//   h      [64 rows][128 halves]       the whole kernel
//   result [64 rows][32 halves]        each tile's result, and y's seed
//   x [64][32] and W1 [32 columns][32 K] (one step)  while h is computed
//   W2 [32 columns][128 K]                           after that, in their place
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
layout(constant_id = 6) const uint CIN = 32u;  // x's channels, K of ffn1: a multiple of 32

const uint BM = 64u;
const uint C = 32u;            // y channels per group, K per step of ffn1
const uint KSTEPS = CIN / C;   // steps of ffn1
const uint HID = 128u;         // h channels
// Row strides in uints (two halves each), skewed by 16 bytes against bank conflicts.
const uint XS = C / 2u + 4u;   // x [row][k], W1 [column][k], the result tile [row][column]
const uint HS = HID / 2u + 4u; // h [row][k], W2 [column][k]
const uint H_AT = 0u;
const uint C_AT = H_AT + BM * HS;
const uint X_AT = C_AT + BM * XS;
const uint W1_AT = X_AT + BM * XS;
const uint W2_AT = X_AT;
const uint SHARED = X_AT + max(BM * XS + C * XS, C * HS);
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

// The 16 codes of quad `q` widened into 8 uints of the arena at `at`.
void stage_quad(uvec4 q, uint at) {
    [[unroll]] for (uint i = 0u; i < 4u; i++) {
        uvec2 p = widen_word(q[i]);
        s_m[at + 2u * i] = p.x;
        s_m[at + 2u * i + 1u] = p.y;
    }
}

// K 32 s .. +31 of W1's columns 32 t .. +31 in this group (two quads each), by invocations
// 0..63.
void stage_w1(uint tid, uint t, uint s) {
    if (tid < 64u) {
        uint col = 128u * group_id() + 32u * t + (tid >> 1);
        uint half_ = tid & 1u;
        stage_quad(w1_quads[(col * CIN + 32u * s) / 16u + half_],
                   W1_AT + (tid >> 1) * XS + 8u * half_);
    }
}

// K 32 s .. +31 of x's rows (rows past the end stay zero; their results are never published).
void stage_x(uint tid, uint row0, uint s) {
    uint r = tid >> 1;
    uint half_ = tid & 1u;
    uvec4 q = row0 + r < pc.rows ? x_quads[((row0 + r) * CIN + 32u * s) / 16u + half_] : uvec4(0u);
    stage_quad(q, X_AT + r * XS + 8u * half_);
}

// Rows of this invocation's result quads: r(i) = tid / 8 + 16 i, columns 4 (tid % 8) .. + 3.
const uint QUADS = BM * C / 512u;
uint quad_row(uint tid, uint i) { return tid / 8u + 16u * i; }

void main() {
    uint tid = gl_LocalInvocationID.x;
    uint sg = TILE_SUBGROUP;
    uint sr = sg >> 1;            // rows 32 sr .. + 31
    uint sc = sg & 1u;            // columns 16 sc .. + 15 of a 32-column tile
    uint row0 = gl_WorkGroupID.x * BM;
    uint c4 = 4u * (tid % 8u);

    // h = E4(SiLU(W1 x)), one 32-column tile at a time, kept widened in the arena.
    for (uint t = 0u; t < HID / 32u; t++) {
        TILE_C acc[2];
        [[unroll]] for (uint i = 0u; i < 2u; i++) {
            TILE_ZERO_C(acc[i]);
        }
        for (uint ks = 0u; ks < KSTEPS; ks++) {
            // Every subgroup is done with the previous step's x and W1 (and the previous
            // tile's epilogue with the result) before they are replaced.
            barrier();
            if (KSTEPS > 1u || t == 0u) {
                stage_x(tid, row0, ks);
            }
            stage_w1(tid, t, ks);
            barrier();
            [[unroll]] for (uint s = 0u; s < C / 16u; s++) {
                TILE_A fa[2];
                [[unroll]] for (uint i = 0u; i < 2u; i++) {
                    TILE_LOAD_A(fa[i], s_m, X_AT + (32u * sr + 16u * i) * XS + 8u * s, XS,
                                TILE_ROW_MAJOR);
                }
                TILE_B fb;
                TILE_LOAD_B(fb, s_m, W1_AT + 16u * sc * XS + 8u * s, XS, TILE_COL_MAJOR);
                [[unroll]] for (uint i = 0u; i < 2u; i++) {
                    acc[i] = TILE_MULADD(fa[i], fb, acc[i]);
                }
            }
        }
        [[unroll]] for (uint i = 0u; i < 2u; i++) {
            TILE_STORE_C(acc[i], s_m, C_AT + (32u * sr + 16u * i) * XS + 8u * sc, XS);
        }
        barrier();
        [[unroll]] for (uint i = 0u; i < QUADS; i++) {
            uint r = quad_row(tid, i);
            uint at = C_AT + r * XS + c4 / 2u;
            uint w0 = s_m[at];
            uint w1 = s_m[at + 1u];
            uint codes = epilogue_code(w0 & 0xFFFFu) | (epilogue_code(w0 >> 16) << 8)
                | (epilogue_code(w1 & 0xFFFFu) << 16) | (epilogue_code(w1 >> 16) << 24);
            uvec2 hw = widen_word(codes);
            uint hat = H_AT + r * HS + (32u * t + c4) / 2u;
            s_m[hat] = hw.x;
            s_m[hat + 1u] = hw.y;
        }
    }
    // h is complete and nobody reads x or W1 any more.
    barrier();

    // This group's W2 (32 columns x 128 K: eight quads each, two per invocation) where x and
    // W1 were, and y's seed f16(skip * scale) as the C operand, built as gemm_coopmat.glsl
    // builds it.
    [[unroll]] for (uint p = 0u; p < 2u; p++) {
        uint slot = tid + 128u * p;
        uint col = slot >> 3;
        uint part = slot & 7u;
        stage_quad(w2_quads[(C * group_id() + col) * 8u + part], W2_AT + col * HS + 8u * part);
    }
    uint yc = C * group_id() + c4; // y's first channel of this invocation's quads
    if (SEED != 0u) {
        uint sat = pc.scale_off + yc;
        uvec2 scales = uvec2(uint(scale_halves[sat]) | (uint(scale_halves[sat + 1u]) << 16),
                             uint(scale_halves[sat + 2u]) | (uint(scale_halves[sat + 3u]) << 16));
        [[unroll]] for (uint i = 0u; i < QUADS; i++) {
            uint r = quad_row(tid, i);
            uvec2 raw = uvec2(0u);
            if (row0 + r < pc.rows) {
                uint idx = (row0 + r) * y_channels() + yc;
                raw = SEED == 1u ? uvec2(skip_words[idx >> 2], 0u)
                                 : uvec2(skip_words[idx >> 1], skip_words[(idx >> 1) + 1u]);
            }
            uvec2 sk = SEED == 1u ? widen_word(raw.x) : raw;
            s_m[C_AT + r * XS + c4 / 2u] = f16_mul_pair(sk.x, scales.x);
            s_m[C_AT + r * XS + c4 / 2u + 1u] = f16_mul_pair(sk.y, scales.y);
        }
    }
    barrier();

    // y = W2 h from +0 or the seed: eight groups of 16 K in order.
    TILE_C acc[2];
    [[unroll]] for (uint i = 0u; i < 2u; i++) {
        if (SEED != 0u) {
            TILE_LOAD_C(acc[i], s_m, C_AT + (32u * sr + 16u * i) * XS + 8u * sc, XS);
        } else {
            TILE_ZERO_C(acc[i]);
        }
    }
    for (uint s = 0u; s < HID / 16u; s++) {
        TILE_A fa[2];
        [[unroll]] for (uint i = 0u; i < 2u; i++) {
            TILE_LOAD_A(fa[i], s_m, H_AT + (32u * sr + 16u * i) * HS + 8u * s, HS, TILE_ROW_MAJOR);
        }
        TILE_B fb;
        TILE_LOAD_B(fb, s_m, W2_AT + 16u * sc * HS + 8u * s, HS, TILE_COL_MAJOR);
        [[unroll]] for (uint i = 0u; i < 2u; i++) {
            acc[i] = TILE_MULADD(fa[i], fb, acc[i]);
        }
    }
    // Every subgroup has loaded its seed before any result overwrites it.
    barrier();
    [[unroll]] for (uint i = 0u; i < 2u; i++) {
        TILE_STORE_C(acc[i], s_m, C_AT + (32u * sr + 16u * i) * XS + 8u * sc, XS);
    }
    barrier();
    [[unroll]] for (uint i = 0u; i < QUADS; i++) {
        uint r = quad_row(tid, i);
        if (row0 + r < pc.rows) {
            uint at = C_AT + r * XS + c4 / 2u;
            uint w0 = s_m[at];
            uint w1 = s_m[at + 1u];
            uint h[4] = uint[4](w0 & 0xFFFFu, w0 >> 16, w1 & 0xFFFFu, w1 >> 16);
            gemm_store_quad(EPI, (row0 + r) * y_channels() + yc, h);
        }
    }
}
