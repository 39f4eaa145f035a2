// Body of a window block's FFN pair as one kernel whose subgroups each run rows of their own
// (the tensor route's `Fusion::Ffn` at C = 32 and C = 64): `ffn1` (h = E4(SiLU(W1 x)), CIN ->
// 128 channels per expert) and `ffn2` (y = W2 h, 128 -> 32 per expert). A C = 32 block has one
// expert whose `ffn2` starts from +0 or is seeded by f16(skip * scale), with the E4 or dual
// epilogue; a C = 64 block has two experts (gl_WorkGroupID.y), each reading all of x and
// writing y's channels 32 g .. + 31, unseeded, E4. Built by ffn_rows_coopmat.comp (the
// device's MMAs) and emulated/ffn_rows_coopmat.comp (tile_mma.glsl's integer H25 MMAs).
//
// The bytes are ffn_coopmat.glsl's, and so the two GEMMs': each element of h is one chain of
// 16x16x16 MMAs over K = CIN in order from +0, its E4 code read from
// numerics::tables::GEMM_EPILOGUE and widened back exactly; each element of y one chain over
// K = 128 in order from +0 or the seed, published as gemm_store.glsl publishes it.
//
// Why a second kernel beside ffn_coopmat.glsl: that one splits h's 128 columns over a 2 x 2
// grid of subgroups, so every row tile passes four workgroup barriers, and its epilogue makes a
// round trip through shared memory. Here a subgroup owns 16 rows and all of h's columns (eight
// accumulators), applies the epilogue to its accumulators in registers (TILE_C_MAP_PAIRS), and
// keeps h, x, the seed and y in a region of shared memory only it uses; so within a row tile it
// waits only for itself (subgroup barriers). The expert's W1 and W2 are staged once per
// workgroup (copied from the weights' f16 copy, WF16, or widened from E4M3), before a single
// workgroup barrier, and serve all of its row tiles (SG subgroups x 16 rows each, tiles x,
// x + X, ... of a grid X wide). Every subgroup runs the same number of tiles, rows past the end
// masked, so the loop is uniform (the emulated build's subgroup barrier is a workgroup one).
//
// Shared memory in uints (two halves each), rows skewed by 16 bytes against bank conflicts:
//   W1 [128 columns][CIN K]   128 (CIN / 2 + 4): 2,560 (C = 32), 4,608 (C = 64)
//   W2 [32 columns][128 K]    2,176
//   per subgroup: h [16 rows][128] 1,088, holding x [16][CIN] and the seed [16][32] before h
//   is written and y [16][32] after h is read (x and the seed fit beside each other for
//   CIN <= 64, the largest the recorder builds).
// C = 32: 27,648 bytes for 2 subgroups (fits lavapipe's 32 KiB), 36,352 for 4. C = 64: 31,488
// for 1 subgroup, 44,544 for 4.
#ifndef TILE_EMULATED
#define OPENNGX_F16_NATIVE 1
#endif
#include "f16.glsl"
#include "e4m3.glsl"
#include "e4m3_widen.glsl"
#include "tile_mma.glsl"

layout(constant_id = 4) const uint EPI = 3u;  // y's publication: 1 = E4, 3 = raw f16 and E4
layout(constant_id = 5) const uint SEED = 1u; // y's skip: 0 = none, 1 = E4, 2 = f16
layout(constant_id = 6) const uint CIN = 32u; // x's channels, K of ffn1: 32 or 64
layout(constant_id = 9) const uint SG = 4u;   // subgroups per workgroup
// 1: W1 and W2 are bound as f16 (the weights' widened copy) and staged as they are; 0: E4M3,
// widened here.
layout(constant_id = 10) const uint WF16 = 0u;
layout(local_size_x_id = 11, local_size_x = 128) in; // 32 SG invocations

const uint C = 32u;    // y's channels per expert
const uint HID = 128u; // h's channels per expert, K of ffn2
const uint XQ = CIN / 32u; // x quads a lane brings per row (16 channels each)
const uint XS = CIN / 2u + 4u;
const uint YS = C / 2u + 4u;
const uint HS = HID / 2u + 4u;
const uint W1_AT = 0u;
const uint W2_AT = W1_AT + HID * XS;
const uint SUB_AT = W2_AT + C * HS;
const uint SUB = 16u * HS;     // a subgroup's region
const uint SEED_AT = 16u * XS; // the seed's place in it, after x's
const uint W1_QUADS = HID * (CIN / 16u); // an expert's W1
shared uint s_m[SUB_AT + SG * SUB];

// x [rows][CIN] and the matrices W1 [experts][128][CIN], W2 [experts][32][128] (row-major by
// output): E4M3, 16 codes a quad, or with WF16 f16, 8 halves a quad (the same bindings).
layout(std430, binding = 0) readonly buffer InX { uvec4 x_quads[]; };
layout(std430, binding = 1) readonly buffer InW1 { uvec4 w1_quads[]; };
layout(std430, binding = 2) readonly buffer InW2 { uvec4 w2_quads[]; };
layout(std430, binding = 3) readonly buffer Skip { uvec4 skip_quads[]; };
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

#include "stage_quad.glsl"

// ffn1's epilogue on a pair of h's halves: E4(SiLU(.)) widened back to f16.
uint silu_e4_pair(uint w) {
    return widen_halves(epilogue_code(w & 0xFFFFu) | (epilogue_code(w >> 16) << 16));
}

// What a lane brings from memory for one row tile: row `lane / 2`'s x (quads `half_`,
// `half_` + 2, ...: 16 channels each) and its expert's 16 channels 16 (lane % 2) .. + 15 of
// the skip (rows past the end read as zero; their results are never published).
struct RowIn {
    uvec4 x[2];    // XQ of them
    uvec4 skip[2]; // E4: skip[0]; f16: both
};

RowIn load_rows(uint row, uint half_, uint yc, uint y0) {
    RowIn ri;
    [[unroll]] for (uint i = 0u; i < 2u; i++) {
        ri.x[i] = uvec4(0u);
        ri.skip[i] = uvec4(0u);
    }
    if (row < pc.rows) {
        [[unroll]] for (uint i = 0u; i < XQ; i++) {
            ri.x[i] = x_quads[row * (CIN / 16u) + half_ + 2u * i];
        }
        uint ch = row * yc + y0 + 16u * half_; // the skip's first channel for this lane
        if (SEED == 1u) {
            ri.skip[0] = skip_quads[ch / 16u];
        } else if (SEED == 2u) {
            ri.skip[0] = skip_quads[ch / 8u];
            ri.skip[1] = skip_quads[ch / 8u + 1u];
        }
    }
    return ri;
}

void main() {
    uint tid = gl_LocalInvocationID.x;
    uint sg = TILE_SUBGROUP;
    uint lane = TILE_LANE;
    uint lrow = lane >> 1;   // this lane's row of a subgroup's tile
    uint half_ = lane & 1u;  // and its 16 channels of y (and x's quads half_, half_ + 2)
    uint sub = SUB_AT + sg * SUB;
    uint bm = 16u * SG;
    uint tiles = (pc.rows + bm - 1u) / bm;
    // One expert per 32 channels of x (C = 32: one; C = 64: two), so y has CIN channels. Written
    // so that C = 32 folds to constants: the generic form cost 10 registers there and made the
    // first level's FFNs 0.09 ms slower at 1080p on an H100 (docs/performance.md, session 28).
    uint expert = CIN == C ? 0u : gl_WorkGroupID.y;
    uint yc = CIN;         // y's channels per row
    uint y0 = C * expert;  // this expert's first

    // The expert's W1 and W2 staged once for every tile: widened from 8 CIN and 256 quads of
    // codes, or with WF16 copied from twice as many quads of halves.
    if (WF16 != 0u) {
        for (uint q = tid; q < 2u * W1_QUADS; q += 32u * SG) {
            uint col = q / (CIN / 8u);
            uint kq = q % (CIN / 8u);
            uvec4 h = w1_quads[2u * expert * W1_QUADS + q];
            [[unroll]] for (uint i = 0u; i < 4u; i++) {
                s_m[W1_AT + col * XS + 4u * kq + i] = h[i];
            }
        }
        for (uint q = tid; q < 512u; q += 32u * SG) {
            uvec4 h = w2_quads[512u * expert + q];
            [[unroll]] for (uint i = 0u; i < 4u; i++) {
                s_m[W2_AT + (q >> 4) * HS + 4u * (q & 15u) + i] = h[i];
            }
        }
    } else {
        for (uint q = tid; q < W1_QUADS; q += 32u * SG) {
            uint col = q / (CIN / 16u);
            uint kq = q % (CIN / 16u);
            stage_quad(w1_quads[expert * W1_QUADS + q], W1_AT + col * XS + 8u * kq);
        }
        for (uint q = tid; q < 256u; q += 32u * SG) {
            stage_quad(w2_quads[expert * 256u + q], W2_AT + (q >> 3) * HS + 8u * (q & 7u));
        }
    }
    // The seed's scales for this lane's 16 channels, as f16 pairs. (Keeping them in shared
    // memory and loading y's seed after ffn1 took 100 -> 95 and 123 -> 114 registers and made
    // the 1080p frame 0.2 ms slower on an H100: docs/performance.md, session 27.)
    uint scales[8];
    [[unroll]] for (uint i = 0u; i < 8u; i++) {
        scales[i] = 0u;
        if (SEED != 0u) {
            uint sat = pc.scale_off + y0 + 16u * half_ + 2u * i;
            scales[i] = uint(scale_halves[sat]) | (uint(scale_halves[sat + 1u]) << 16);
        }
    }
    RowIn ri = load_rows(gl_WorkGroupID.x * bm + 16u * sg + lrow, half_, yc, y0);
    barrier();

    for (uint tile = gl_WorkGroupID.x; tile < tiles; tile += gl_NumWorkGroups.x) {
        uint row0 = tile * bm + 16u * sg;
        if (tile != gl_WorkGroupID.x) {
            // The previous tile's publication has read y.
            TILE_SUBGROUP_BARRIER();
        }
        // x and the seed f16(skip * scale) into the region, then the next tile's bytes.
        [[unroll]] for (uint i = 0u; i < XQ; i++) {
            stage_quad(ri.x[i], sub + lrow * XS + 8u * (half_ + 2u * i));
        }
        if (SEED != 0u) {
            [[unroll]] for (uint i = 0u; i < 8u; i++) {
                uint sk = SEED == 1u ? widen_word(ri.skip[0][i >> 1])[i & 1u]
                                     : ri.skip[i >> 2][i & 3u];
                s_m[sub + SEED_AT + lrow * YS + 8u * half_ + i] = f16_mul_pair(sk, scales[i]);
            }
        }
        ri = load_rows(row0 + bm * gl_NumWorkGroups.x + lrow, half_, yc, y0);
        TILE_SUBGROUP_BARRIER();

        // y's accumulators from the seed or +0.
        TILE_C yacc[2];
        [[unroll]] for (uint j = 0u; j < 2u; j++) {
            if (SEED != 0u) {
                TILE_LOAD_C(yacc[j], s_m, sub + SEED_AT + 8u * j, YS);
            } else {
                TILE_ZERO_C(yacc[j]);
            }
        }
        // h = W1 x: one chain per element over K = CIN from +0.
        TILE_C acc[8];
        [[unroll]] for (uint j = 0u; j < 8u; j++) {
            TILE_ZERO_C(acc[j]);
        }
        [[unroll]] for (uint s = 0u; s < CIN / 16u; s++) {
            TILE_A fa;
            TILE_LOAD_A(fa, s_m, sub + 8u * s, XS, TILE_ROW_MAJOR);
            [[unroll]] for (uint j = 0u; j < 8u; j++) {
                TILE_B fb;
                TILE_LOAD_B(fb, s_m, W1_AT + 16u * j * XS + 8u * s, XS, TILE_COL_MAJOR);
                acc[j] = TILE_MULADD(fa, fb, acc[j]);
            }
        }
        [[unroll]] for (uint j = 0u; j < 8u; j++) {
            TILE_C_MAP_PAIRS(acc[j], silu_e4_pair);
        }
        // x and the seed are read: h takes the whole region.
        TILE_SUBGROUP_BARRIER();
        [[unroll]] for (uint j = 0u; j < 8u; j++) {
            TILE_STORE_C(acc[j], s_m, sub + 8u * j, HS);
        }
        TILE_SUBGROUP_BARRIER();

        // y = W2 h: eight groups of 16 K in order.
        [[unroll]] for (uint s = 0u; s < 8u; s++) {
            TILE_A fa;
            TILE_LOAD_A(fa, s_m, sub + 8u * s, HS, TILE_ROW_MAJOR);
            [[unroll]] for (uint j = 0u; j < 2u; j++) {
                TILE_B fb;
                TILE_LOAD_B(fb, s_m, W2_AT + 16u * j * HS + 8u * s, HS, TILE_COL_MAJOR);
                yacc[j] = TILE_MULADD(fa, fb, yacc[j]);
            }
        }
        // h is read: y where x was.
        TILE_SUBGROUP_BARRIER();
        [[unroll]] for (uint j = 0u; j < 2u; j++) {
            TILE_STORE_C(yacc[j], s_m, sub + 8u * j, YS);
        }
        TILE_SUBGROUP_BARRIER();

        if (row0 + lrow < pc.rows) {
            [[unroll]] for (uint q = 0u; q < 4u; q++) {
                uint at = sub + lrow * YS + 8u * half_ + 2u * q;
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
                gemm_store_quad(EPI, (row0 + lrow) * yc + y0 + 16u * half_ + 4u * q, h);
            }
        }
    }
}
