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

// A or B operand: all 256 elements in every lane, element (r, c) at h[16 r + c] (one half per
// uint), as loaded; the multiply reads a row of A and a column of B.
struct TileAB {
    uint h[256];
};
// Accumulator: lane l owns the element pairs p = l + 32 i (i < 4), row p / 8, columns
// 2 (p % 8) and 2 (p % 8) + 1, at h[2 i] and h[2 i + 1]; a pair is one uint of a row-major
// shared tile, so no two lanes write the same uint.
struct TileC {
    uint h[8];
};

#define TILE_A TileAB
#define TILE_B TileAB
#define TILE_C TileC
#define TILE_ROW_MAJOR 0u
#define TILE_COL_MAJOR 1u
#define TILE_SUBGROUP (gl_LocalInvocationID.x / 32u)
#define TILE_LANE (gl_LocalInvocationID.x % 32u)
#define TILE_SUBGROUP_BARRIER() barrier()

uint tile_half(uint word, uint i) { return (word >> (16u * i)) & 0xFFFFu; }

// f = the 16x16 tile at uint `at` of `arr`: row-major, row r at at + r * stride; column-major,
// column c there.
#define TILE_LOAD_AB(f, arr, at, stride, layout)                                               \
    do {                                                                                       \
        for (uint tr_ = 0u; tr_ < 16u; tr_++) {                                                \
            for (uint tc_ = 0u; tc_ < 16u; tc_++) {                                            \
                bool rm_ = (layout) == TILE_ROW_MAJOR;                                         \
                uint line_ = rm_ ? tr_ : tc_;                                                  \
                uint pos_ = rm_ ? tc_ : tr_;                                                   \
                f.h[16u * tr_ + tc_] =                                                         \
                    tile_half(arr[(at) + line_ * (stride) + (pos_ >> 1)], pos_ & 1u);          \
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

// c + a b, element by element one H25 group (16 products and the accumulator).
TileC tile_muladd(TileAB a, TileAB b, TileC c) {
    TileC d;
    for (uint i = 0u; i < 8u; i++) {
        uint p = TILE_LANE + 32u * (i >> 1);
        uint r = p >> 3;
        uint col = 2u * (p & 7u) + (i & 1u);
        uint ar[16];
        uint bc[16];
        for (uint k = 0u; k < 16u; k++) {
            ar[k] = a.h[16u * r + k];
            bc[k] = b.h[16u * k + col];
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
#define TILE_LOAD_AB(f, arr, at, stride, layout) coopMatLoad(f, arr, at, stride, layout)
#define TILE_LOAD_C(f, arr, at, stride) \
    coopMatLoad(f, arr, at, stride, gl_CooperativeMatrixLayoutRowMajor)
#define TILE_STORE_C(f, arr, at, stride) \
    coopMatStore(f, arr, at, stride, gl_CooperativeMatrixLayoutRowMajor)
#define TILE_ZERO_C(f) f = TILE_C(0.0)
#define TILE_MULADD(a, b, c) coopMatMulAdd(a, b, c)

#endif
#endif
