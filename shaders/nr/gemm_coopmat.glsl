// Body of the cooperative-matrix GEMM, built twice: gemm_coopmat.comp (the epilogues of
// gemm_store.glsl) and gemm_coopmat_norm.comp (GEMM_NORM: the QKV GEMM with the window
// normalisation of `Op::Normalize` as its epilogue, so the f16 QKV is never written). The
// including shader enables the extensions and execution modes listed there.
//
// Grouped E4M3 x E4M3 -> f16 GEMM of `Op::Gemm` on the device's f16 cooperative matrices
// (VK_KHR_cooperative_matrix, 16x16x16, f16 accumulator): the tensor route. The hardware's own
// arithmetic is the H25 profile (h200-tensor-numerics.md §4-5; the route runs only where the
// creation probe matched it), so one coopMatMulAdd per K group of 16 is one H25 group step and
// the result is byte for byte what gemm.glsl emulates in that profile.
//
// out[r][g*N + c] = epilogue(split-K chain of A row r (channels g*ASTRIDE .. +K) with column c of
// group g), seeded by f16(skip[r][g*N + c] * scale[g*N + c]) when SEED != 0; split-K as in
// gemm.glsl (partition 0 from the seed, the others from +0, partials out, gemm_sum.comp adds).
//
// Work split: SGR x SGC subgroups of 32 (2 x 2 by default; NT = 32 SGR SGC invocations); a
// workgroup owns BM = 32 SGR rows x BN columns of one group, a subgroup 32 rows x BN / SGC
// columns (2 x BN / (16 SGC) accumulators). Per step of BK = 32 K the tile's E4M3 bytes are
// widened to f16 (exactly, in arithmetic: widen_halves) into shared memory while the next
// step's bytes (with AHEAD 2 the step after it) load into registers. Every tile and result
// goes through shared memory because the element layout of a KHR cooperative matrix is the
// implementation's: the seed is built there and loaded as the C operand, and the result is
// stored there for the epilogue (gemm_store.glsl), which needs each element's row and column.
#ifndef TILE_EMULATED
#define OPENNGX_F16_NATIVE 1
#endif
#include "f16.glsl"
#include "e4m3.glsl"
#include "e4m3_widen.glsl"
#include "ops.glsl"
#include "tile_mma.glsl"

// Columns per workgroup: 32 or 64 (128 with SGC = 4).
layout(constant_id = 0) const uint BN = 64u;
// Subgroup rows and columns of the workgroup (2 or 4 each), and so its invocations NT. A larger
// workgroup widens each B (SGR) or A (SGC) byte once for more rows or columns; every output's
// chain of MMAs is the same.
layout(constant_id = 9) const uint SGR = 2u;
layout(constant_id = 10) const uint SGC = 2u;
// Invocations: 32 SGR SGC (the recorder sets constant 11 with 9 and 10; 128 by default).
layout(local_size_x_id = 11, local_size_x = 128) in;
const uint NT = gl_WorkGroupSize.x;
layout(constant_id = 4) const uint EPI = 1u;   // 0 = E4(SiLU(x)), 1 = E4(x), 2 = f16, 3 = dual
layout(constant_id = 5) const uint SEED = 0u;  // 0 = none, 1 = E4 skip, 2 = f16 skip
layout(constant_id = 6) const uint SPLIT = 0u; // 1 when PART < K
// 1: the workgroup runs several row tiles (see main); 0: one.
layout(constant_id = 7) const uint PERSIST = 0u;
// 2: a workgroup of one row tile (PERSIST 0) loads its A and B bytes two K steps ahead instead
// of one (8 more registers; `nr::record::gemm` sets it for chains of several steps). The MMAs
// and so the bytes are the same.
layout(constant_id = 8) const uint AHEAD = 1u;

// Rows per workgroup: 32 per subgroup row (128 rows from 4 subgroups of 8 accumulators each
// were measured slower at 1080p: fewer workgroups per SM).
const uint BM = 32u * SGR;
const uint BK = 32u;
const uint RF = 2u;               // accumulator rows per subgroup (16 high each)
const uint SW = BN / SGC;         // columns per subgroup
const uint FC = SW / 16u;         // accumulator columns per subgroup (16 wide each)
// 16-byte loads per K step (A rows and B columns, two halves each) and per invocation.
const uint SLOTS = 2u * (BM + BN);
const uint PER = (SLOTS + NT - 1u) / NT;
// Row strides of the shared tiles in uints (2 halves each): a 16-byte skew against bank
// conflicts.
const uint TS = BK / 2u + 4u;     // A and B tiles: [row or column][BK halves]
const uint CS = BN / 2u + 4u;     // the seed/result tile: [row][BN halves]

layout(std430, binding = 0) readonly buffer InA { uvec4 a_quads[]; };
layout(std430, binding = 1) readonly buffer InB { uvec4 b_quads[]; };
layout(std430, binding = 2) readonly buffer Skip { uint skip_words[]; };
// 16-bit elements: the scale range may start 2 bytes into a word and end mid-word.
layout(std430, binding = 3) readonly buffer Scale { uint16_t scale_halves[]; };
#ifdef GEMM_NORM
// q', k', v' (E4M3 [rows][32 heads], as words: their offsets are on a word), the NORMALIZE
// table (E4(x) at byte x, rsqrt halves from byte 65536) and the heads' f32 temperatures.
layout(std430, binding = 4) writeonly buffer QOut { uint q_words[]; };
layout(std430, binding = 5) writeonly buffer KOut { uint k_words[]; };
layout(std430, binding = 6) readonly buffer NormTable { uint table_words[]; };
layout(std430, binding = 7) writeonly buffer VOut { uint v_words[]; };
layout(std430, binding = 8) readonly buffer Temps { uint8_t temps[]; };
#else
layout(std430, binding = 4) writeonly buffer Out { uint out_words[]; };
// The raw f16 output of the dual epilogue, or the partials of a split-K GEMM.
layout(std430, binding = 5) writeonly buffer OutRaw { uint raw_words[]; };
// numerics::tables::GEMM_EPILOGUE (see gemm.glsl).
layout(std430, binding = 6) readonly buffer EpilogueTable { uint table_words[]; };
#include "gemm_store.glsl"
#endif

layout(push_constant) uniform Push {
    uint rows;
    uint cin;
    uint k;
    uint n;
    uint nout;
    uint astride;
    uint part;
    uint scale_off;
    uint epi;  // unused (EPI)
    uint seed; // unused (SEED)
#ifdef GEMM_NORM
    uint heads;
    uint q_off;    // words, of q', k', v'
    uint k_off;
    uint v_off;
    uint temp_off; // bytes
#endif
} pc;

// One shared array: the B tile at 0, then the A tile and the seed/result tile at SA, the same
// place. They are never live together: the seed is loaded into the accumulators and the last
// step's fragments are read before a barrier, and only then is A staged or the result stored.
// B has a place of its own because a chain of one step keeps its B tile over the row tiles.
// (BM x CS is at least BM x TS: CS >= TS for BN >= 32.)
const uint SA = BN * TS;
shared uint s_mem[BN * TS + BM * CS];

// The 16 bytes (16 K of one row or column) loader slot `slot` brings for the step at K `kb`:
// slots 0 .. 2 BM - 1 are A rows x two 16-byte halves, the next 2 BN B columns likewise.
uvec4 load_slot(uint slot, uint kb, uint kend, uint row0, uint col0, uint abase, uint bbase) {
    uint kk = kb + 16u * (slot & 1u);
    if (kk >= kend || slot >= SLOTS) {
        return uvec4(0u);
    }
    if (slot < 2u * BM) {
        uint r = row0 + (slot >> 1);
        if (r < pc.rows) {
            return a_quads[(r * pc.cin + abase + kk) >> 4];
        }
    } else {
        uint c = col0 + ((slot - 2u * BM) >> 1);
        if (c < pc.n) {
            return b_quads[(bbase + c * pc.k + kk) >> 4];
        }
    }
    return uvec4(0u);
}

void store_slot(uint slot, uvec4 w) {
    if (slot >= SLOTS) {
        return;
    }
    bool is_a = slot < 2u * BM;
    uint at = ((is_a ? slot : slot - 2u * BM) >> 1) * TS + 8u * (slot & 1u);
    [[unroll]] for (uint i = 0u; i < 4u; i++) {
        uvec2 p = widen_word(w[i]);
        uint to = (is_a ? SA : 0u) + at + 2u * i;
        s_mem[to] = p.x;
        s_mem[to + 1u] = p.y;
    }
}

uint scale_half(uint idx) { return uint(scale_halves[idx]); }

#ifdef GEMM_NORM
#include "tables.glsl"

#include "norm_temperature.glsl"

#include "norm_lanes.glsl"

// The window normalisation (norm_lanes.glsl, as normalize_subgroup.glsl runs it) of the tile's
// f16 results at SA: unit u = (row u / (BN / 32), 32-column part u % (BN / 32)) is one of q, k,
// v of one head of one row (the QKV's columns are head-major [q 32, k 32, v 32] groups; a tile
// starts on a multiple of 32). An aligned group of eight lanes owns a unit, lane j its channels
// 4j .. 4j + 3, so the workgroup runs NT / 8 units per pass: one invocation per unit (a chain of
// 16 FMAs, the tree and 32 multiplies and table reads) made this fusion slower than the
// separate kernel on the H100 (docs/performance.md, session 14). Every lane runs every pass
// (the shuffles); rows past the end only skip their stores.
void norm_epilogue(uint row0, uint col0) {
    const uint PARTS = BN / 32u;
    const uint UNITS = NT / 8u;
    uint lane = gl_SubgroupInvocationID;
    uint j = lane % 8u;
    uint first = lane - j;
    uint slot = gl_SubgroupID * (gl_SubgroupSize / 8u) + lane / 8u;
    for (uint u0 = 0u; u0 < BM * PARTS; u0 += UNITS) {
        uint u = u0 + slot;
        uint r = u / PARTS;
        uint jp = u % PARTS;
        uint row = row0 + r;
        uint col = col0 + 32u * jp;
        uint at = SA + r * CS + 16u * jp + 2u * j;
        uvec2 x = uvec2(s_mem[at], s_mem[at + 1u]);
        // Lanes j < 4 sum x[c] and x[c + 16] (lane j + 4's).
        uint sum = norm_lane_sum(x, subgroupShuffleXor(x, 4u));
        uint s0 = subgroupShuffle(sum, first);
        if (row >= pc.rows || col >= pc.n) {
            continue;
        }
        uint head = col / 96u;
        uint part = (col % 96u) / 32u;
        uint dst = (row * pc.heads + head) * 8u + j;
        if (part == 0u) {
            q_words[pc.q_off + dst] = norm_q_word(x, rsqrt_table(s0), norm_temperature(head), false);
        } else if (part == 1u) {
            k_words[pc.k_off + dst] = norm_k_word(x, rsqrt_table(s0));
        } else {
            v_words[pc.v_off + dst] = norm_v_word(x);
        }
    }
}
#endif

// The raw skip words of the seed quads of invocation tid in the row tile at row0 (one E4 word
// or two f16 words per quad; rows past the end give zeros), loaded ahead of the tile.
const uint QUADS = BM * BN / (4u * NT);
const uint QROWS = 4u * NT / BN;  // rows between an invocation's quads
void load_seed(uint tid, uint row0, uint col, out uvec2 raw[QUADS]) {
    [[unroll]] for (uint i = 0u; i < QUADS; i++) {
        uint r = tid / (BN / 4u) + QROWS * i;
        raw[i] = uvec2(0u);
        if (row0 + r < pc.rows) {
            uint idx = (row0 + r) * pc.nout + col;
            raw[i] = SEED == 1u ? uvec2(skip_words[idx >> 2], 0u)
                                : uvec2(skip_words[idx >> 1], skip_words[(idx >> 1) + 1u]);
        }
    }
}

#include "gemm_split.glsl"

void main() {
    uint tid = gl_LocalInvocationID.x;
    uint sg = TILE_SUBGROUP;          // 0 .. SGR SGC - 1
    uint sr = sg / SGC;               // subgroup row (32 rows each)
    uint sc = sg % SGC;               // subgroup column (SW columns each)
    uint col0 = gl_WorkGroupID.y * BN;
    uint g;
    uint kpart;
    uint kbeg;
    uint kend;
    gemm_partition(gl_WorkGroupID.z, g, kpart, kbeg, kend);
    uint abase = g * pc.astride;
    uint bbase = g * pc.n * pc.k;
    bool seeded = SEED != 0u && kpart == 0u;

    // With PERSIST the workgroup runs row tiles x, x + X, x + 2X, ... (X = the grid's width; the
    // recorder sets it for the seeded GEMMs and those of one K step with many tiles). Each tile
    // is computed exactly as alone; what the loop buys is the next tile's first step of A and B
    // and its skip words loading while this tile multiplies and runs its epilogue (and, for one
    // K step, B staged once). Without PERSIST the loop body runs once and the prefetch branches
    // compile away.
    uint tiles = (pc.rows + BM - 1u) / BM;
    uint tile = gl_WorkGroupID.x;
    uint stride = gl_NumWorkGroups.x;
    uint first = tile;
    // A chain of one K step (K <= BK) uses the same B tile for every row tile: it stays in
    // shared memory, and only A is loaded and staged again (slots from 2 BM on are B's).
    bool b_resident = PERSIST != 0u && kend - kbeg <= BK;

    // NT is a multiple of BN / 4, so all of an invocation's seed (and epilogue) quads hold the
    // same 4 columns: their scales load once, as two f16 pairs, and each pair of products is
    // one packed multiply.
    uint c4 = 4u * (tid % (BN / 4u));
    uint col = g * pc.n + col0 + c4;
    uvec2 scales = uvec2(0u);
    if (seeded) {
        uint sat = pc.scale_off + col;
        scales = uvec2(scale_half(sat) | (scale_half(sat + 1u) << 16),
                       scale_half(sat + 2u) | (scale_half(sat + 3u) << 16));
    }

    // The first tile's first step (and with AHEAD 2 its second) and skip words.
    bool ahead2 = PERSIST == 0u && AHEAD == 2u;
    uvec4 pre[PER];
    uvec4 pre2[PER];
    [[unroll]] for (uint p = 0u; p < PER; p++) {
        pre[p] = load_slot(tid + NT * p, kbeg, kend, tile * BM, col0, abase, bbase);
        pre2[p] = uvec4(0u);
        if (ahead2) {
            pre2[p] = load_slot(tid + NT * p, kbeg + BK, kend, tile * BM, col0, abase, bbase);
        }
    }
    uvec2 raw[QUADS];
    if (seeded) {
        load_seed(tid, tile * BM, col, raw);
    }

    for (;;) {
        uint row0 = tile * BM;
        uint next0 = (tile + stride) * BM;
        bool more = PERSIST != 0u && tile + stride < tiles;
        if (PERSIST != 0u && tile != first) {
            // The previous tile's epilogue has read its results.
            barrier();
        }

        // The C operand: the seed (partition 0 of a seeded GEMM) or +0. Invocation tid builds
        // quads tid + NT i (4 adjacent columns of one row).
        TILE_C acc[RF][FC];
        if (seeded) {
            [[unroll]] for (uint i = 0u; i < QUADS; i++) {
                uint r = tid / (BN / 4u) + QROWS * i;
                uvec2 sk = SEED == 1u ? widen_word(raw[i].x) : raw[i];
                s_mem[SA + r * CS + c4 / 2u] = f16_mul_pair(sk.x, scales.x);
                s_mem[SA + r * CS + c4 / 2u + 1u] = f16_mul_pair(sk.y, scales.y);
            }
            if (more) {
                load_seed(tid, next0, col, raw);
            }
            barrier();
            [[unroll]] for (uint i = 0u; i < RF; i++) {
                [[unroll]] for (uint j = 0u; j < FC; j++) {
                    uint at = (32u * sr + 16u * i) * CS + (sc * SW + 16u * j) / 2u;
                    TILE_LOAD_C(acc[i][j], s_mem, SA + at, CS);
                }
            }
        } else {
            [[unroll]] for (uint i = 0u; i < RF; i++) {
                [[unroll]] for (uint j = 0u; j < FC; j++) {
                    TILE_ZERO_C(acc[i][j]);
                }
            }
        }

        for (uint kb = kbeg; kb < kend; kb += BK) {
            barrier();
            [[unroll]] for (uint p = 0u; p < PER; p++) {
                if (!b_resident || tile == first || tid + NT * p < 2u * BM) {
                    store_slot(tid + NT * p, pre[p]);
                }
            }
            barrier();
            // The next step's bytes, or after the last step the next tile's first; with AHEAD 2
            // the next step's are already here and the one after it loads.
            if (ahead2) {
                [[unroll]] for (uint p = 0u; p < PER; p++) {
                    pre[p] = pre2[p];
                    if (kb + 2u * BK < kend) {
                        pre2[p] = load_slot(tid + NT * p, kb + 2u * BK, kend, row0, col0, abase, bbase);
                    }
                }
            } else if (kb + BK < kend) {
                [[unroll]] for (uint p = 0u; p < PER; p++) {
                    pre[p] = load_slot(tid + NT * p, kb + BK, kend, row0, col0, abase, bbase);
                }
            } else if (more) {
                [[unroll]] for (uint p = 0u; p < PER; p++) {
                    if (!b_resident || tid + NT * p < 2u * BM) {
                        pre[p] = load_slot(tid + NT * p, kbeg, kend, next0, col0, abase, bbase);
                    }
                }
            }
            [[unroll]] for (uint s = 0u; s < BK / 16u; s++) {
                // One group of 16 K per MMA: a step past the chain's end would be a no-op in
                // H25 (the accumulator is exact at 25 fraction bits), but it is skipped anyway.
                if (kb + 16u * s < kend) {
                    TILE_A fa[RF];
                    [[unroll]] for (uint i = 0u; i < RF; i++) {
                        TILE_LOAD_A(fa[i], s_mem, SA + (32u * sr + 16u * i) * TS + 8u * s, TS,
                                     TILE_ROW_MAJOR);
                    }
                    [[unroll]] for (uint j = 0u; j < FC; j++) {
                        TILE_B fb;
                        TILE_LOAD_B(fb, s_mem, (sc * SW + 16u * j) * TS + 8u * s, TS,
                                     TILE_COL_MAJOR);
                        [[unroll]] for (uint i = 0u; i < RF; i++) {
                            acc[i][j] = TILE_MULADD(fa[i], fb, acc[i][j]);
                        }
                    }
                }
            }
        }

        // Results through shared memory to the epilogue.
        barrier();
        [[unroll]] for (uint i = 0u; i < RF; i++) {
            [[unroll]] for (uint j = 0u; j < FC; j++) {
                uint at = (32u * sr + 16u * i) * CS + (sc * SW + 16u * j) / 2u;
                TILE_STORE_C(acc[i][j], s_mem, SA + at, CS);
            }
        }
        barrier();
#ifdef GEMM_NORM
        norm_epilogue(row0, col0);
#else
        // Unrolled like the seed: the epilogue's table reads of all quads in flight at once.
        [[unroll]] for (uint i = 0u; i < QUADS; i++) {
            uint r = tid / (BN / 4u) + QROWS * i;
            if (row0 + r < pc.rows && col0 + c4 < pc.n) {
                uint w0 = s_mem[SA + r * CS + c4 / 2u];
                uint w1 = s_mem[SA + r * CS + c4 / 2u + 1u];
                if (SPLIT != 0u) {
                    uint pat = (kpart * pc.rows + row0 + r) * pc.nout + col;
                    raw_words[pat / 2u] = w0;
                    raw_words[pat / 2u + 1u] = w1;
                } else {
                    uint h[4] = uint[4](w0 & 0xFFFFu, w0 >> 16, w1 & 0xFFFFu, w1 >> 16);
                    gemm_store_quad(EPI, (row0 + r) * pc.nout + col, h);
                }
            }
        }
#endif
        tile += stride;
        if (PERSIST == 0u || tile >= tiles) {
            break;
        }
    }
}
