// The tensor route's 16x16x16 f16 MMA tiles, written once for two builds:
//
// * the device's (default): KHR cooperative matrices with an f16 accumulator at subgroup scope
//   (subgroups of 32). The route runs only where the creation probe identified the device's MMA
//   as the H25 profile, so one TILE_MULADD is one H25 group step.
// * the emulated one (TILE_EMULATED): the same tiles in integer arithmetic, each element one
//   `mma_h25_group` of mma.glsl (the CPU reference's model). A kernel built this way runs on any
//   Vulkan device (lavapipe has no cooperative matrices), 32 consecutive invocations standing in
//   for a subgroup, and computes the bytes the device's build computes in H25. The test builds
//   under shaders/emulated use it, so CI checks the tensor route's kernels (their tiling, loops,
//   seeds and epilogues) byte for byte on the CPU; only the MMA itself is the device's.
//
// Both builds load and store tiles through shared `uint` arrays of f16 pairs, with the offset
// and the row stride counted in uints, as coopMatLoad does for such arrays. A kernel uses only
// these macros for its tiles, its subgroup index, its lane and its subgroup barriers; it must
// call TILE_SUBGROUP_BARRIER in workgroup-uniform control flow (the emulated build makes it a
// workgroup barrier, since its 32 "lanes" span several of the device's subgroups).
#ifndef OPENNGX_TILE_MMA_GLSL
#define OPENNGX_TILE_MMA_GLSL

#ifdef TILE_EMULATED
#include "mma.glsl"

// Operands: only what the lane's own accumulator elements (below) read. A: its 4 rows
// l / 8 + 4 i, row i at h[16 i ..]; B: its 2 columns 2 (l % 8) + j, element (k, j) at
// h[2 k + j]; one half per uint.
struct TileA {
    uint h[64];
};
struct TileB {
    uint h[32];
};
// Accumulator: lane l owns the element pairs p = l + 32 i (i < 4), row p / 8, columns
// 2 (p % 8) and 2 (p % 8) + 1, at h[2 i] and h[2 i + 1]; a pair is one uint of a row-major
// shared tile, so no two lanes write the same uint.
struct TileC {
    uint h[8];
};

#define TILE_A TileA
#define TILE_B TileB
#define TILE_C TileC
#define TILE_ROW_MAJOR 0u
#define TILE_COL_MAJOR 1u
#define TILE_SUBGROUP (gl_LocalInvocationID.x / 32u)
#define TILE_LANE (gl_LocalInvocationID.x % 32u)
#define TILE_SUBGROUP_BARRIER() barrier()

uint tile_half(uint word, uint i) { return (word >> (16u * i)) & 0xFFFFu; }

// Element (r, c) of the 16x16 tile at uint `at` of `arr`: row-major, row r at at + r * stride;
// column-major, column c there.
#define TILE_ELEMENT(arr, at, stride, layout, r, c)                                            \
    tile_half(arr[(at) + ((layout) == TILE_ROW_MAJOR ? (r) : (c)) * (stride)                    \
                  + (((layout) == TILE_ROW_MAJOR ? (c) : (r)) >> 1)],                           \
              ((layout) == TILE_ROW_MAJOR ? (c) : (r)) & 1u)

#define TILE_LOAD_A(f, arr, at, stride, layout)                                                \
    do {                                                                                       \
        for (uint ti_ = 0u; ti_ < 4u; ti_++) {                                                 \
            for (uint tk_ = 0u; tk_ < 16u; tk_++) {                                            \
                f.h[16u * ti_ + tk_] =                                                         \
                    TILE_ELEMENT(arr, at, stride, layout, TILE_LANE / 8u + 4u * ti_, tk_);     \
            }                                                                                  \
        }                                                                                      \
    } while (false)

#define TILE_LOAD_B(f, arr, at, stride, layout)                                                \
    do {                                                                                       \
        for (uint tk_ = 0u; tk_ < 16u; tk_++) {                                                \
            for (uint tj_ = 0u; tj_ < 2u; tj_++) {                                             \
                f.h[2u * tk_ + tj_] =                                                          \
                    TILE_ELEMENT(arr, at, stride, layout, tk_, 2u * (TILE_LANE % 8u) + tj_);   \
            }                                                                                  \
        }                                                                                      \
    } while (false)

#define TILE_LOAD_C(f, arr, at, stride)                                                        \
    do {                                                                                       \
        for (uint ti_ = 0u; ti_ < 4u; ti_++) {                                                 \
            uint tp_ = TILE_LANE + 32u * ti_;                                                  \
            uint tw_ = arr[(at) + (tp_ >> 3) * (stride) + (tp_ & 7u)];                         \
            f.h[2u * ti_] = tw_ & 0xFFFFu;                                                     \
            f.h[2u * ti_ + 1u] = tw_ >> 16;                                                    \
        }                                                                                      \
    } while (false)

#define TILE_STORE_C(f, arr, at, stride)                                                       \
    do {                                                                                       \
        for (uint ti_ = 0u; ti_ < 4u; ti_++) {                                                 \
            uint tp_ = TILE_LANE + 32u * ti_;                                                  \
            arr[(at) + (tp_ >> 3) * (stride) + (tp_ & 7u)] =                                   \
                f.h[2u * ti_] | (f.h[2u * ti_ + 1u] << 16);                                    \
        }                                                                                      \
    } while (false)

#define TILE_ZERO_C(f)                                                                         \
    do {                                                                                       \
        for (uint ti_ = 0u; ti_ < 8u; ti_++) {                                                 \
            f.h[ti_] = 0u;                                                                     \
        }                                                                                      \
    } while (false)

// Every element of the accumulator `f` replaced, two at a time, by `FN` of their f16 bits (a
// function from a pair of halves, the first in the low bits, to a pair): for element-wise
// epilogues, which do not care where an element sits. The pairs are the lane's own elements,
// so the accumulator stays in registers.
#define TILE_C_MAP_PAIRS(f, FN)                                                                \
    do {                                                                                       \
        for (uint ti_ = 0u; ti_ < 4u; ti_++) {                                                 \
            uint tw_ = FN(f.h[2u * ti_] | (f.h[2u * ti_ + 1u] << 16));                         \
            f.h[2u * ti_] = tw_ & 0xFFFFu;                                                     \
            f.h[2u * ti_ + 1u] = tw_ >> 16;                                                    \
        }                                                                                      \
    } while (false)

// c + a b, element by element one H25 group (16 products and the accumulator).
TileC tile_muladd(TileA a, TileB b, TileC c) {
    TileC d;
    for (uint i = 0u; i < 8u; i++) {
        uint ar[16];
        uint bc[16];
        for (uint k = 0u; k < 16u; k++) {
            ar[k] = a.h[16u * (i >> 1) + k];
            bc[k] = b.h[2u * k + (i & 1u)];
        }
        d.h[i] = mma_h25_group(c.h[i], ar, bc, 16);
    }
    return d;
}
#define TILE_MULADD(a, b, c) tile_muladd(a, b, c)

#else

#define TILE_A coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA>
#define TILE_B coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB>
#define TILE_C coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>
#define TILE_ROW_MAJOR gl_CooperativeMatrixLayoutRowMajor
#define TILE_COL_MAJOR gl_CooperativeMatrixLayoutColumnMajor
#define TILE_SUBGROUP gl_SubgroupID
#define TILE_LANE gl_SubgroupInvocationID
#define TILE_SUBGROUP_BARRIER() subgroupBarrier()
#define TILE_LOAD_A(f, arr, at, stride, layout) coopMatLoad(f, arr, at, stride, layout)
#define TILE_LOAD_B(f, arr, at, stride, layout) coopMatLoad(f, arr, at, stride, layout)
#define TILE_LOAD_C(f, arr, at, stride) \
    coopMatLoad(f, arr, at, stride, gl_CooperativeMatrixLayoutRowMajor)
#define TILE_STORE_C(f, arr, at, stride) \
    coopMatStore(f, arr, at, stride, gl_CooperativeMatrixLayoutRowMajor)
#define TILE_ZERO_C(f) f = TILE_C(0.0)
#define TILE_MULADD(a, b, c) coopMatMulAdd(a, b, c)
// A 16x16 accumulator's lane holds 8 elements, so they pair up; their order within the lane is
// the implementation's, which an element-wise function does not see.
#define TILE_C_MAP_PAIRS(f, FN)                                                                \
    do {                                                                                       \
        [[unroll]] for (int ti_ = 0; ti_ < f.length(); ti_ += 2) {                             \
            uint tw_ = FN(f16_bitcast_to_u32(f16vec2(f[ti_], f[ti_ + 1])));                    \
            f16vec2 tr_ = f16_bitcast_from_u32(tw_);                                           \
            f[ti_] = tr_.x;                                                                    \
            f[ti_ + 1] = tr_.y;                                                                \
        }                                                                                      \
    } while (false)

#endif
#endif
