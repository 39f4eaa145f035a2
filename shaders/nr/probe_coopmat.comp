#version 450
// The tensor route's profile probe (`nr::route::tensor::probe`, tiles from
// `numerics::probe`): per workgroup (one subgroup) one 16x16 tile D = C, then for every K group
// of 16, D = A[:, group] x B[group, :] + D with the f16 cooperative matrix the route's GEMMs use
// (16x16x16, f16 accumulator). The answers are matched against the known MMA profiles on the
// host.
//
// Input, per tile of TILE_WORDS uints: [0] = K (16, 32, 48 or 64), then at A_AT the 16 x K A
// (row-major halves, row stride K/2 uints), at B_AT the K x 16 B (row-major, 8 uints per row),
// at C_AT the 16 x 16 C (row-major). Output: 128 uints (the 16 x 16 D, row-major) per tile.
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_cooperative_matrix : require

layout(local_size_x = 32) in;

const uint TILE_WORDS = 1160u;
const uint A_AT = 8u;
const uint B_AT = 8u + 512u;
const uint C_AT = 8u + 1024u;

layout(std430, binding = 0) readonly buffer Tiles { uint tiles[]; };
layout(std430, binding = 1) writeonly buffer Answers { uint answers[]; };

void main() {
    uint base = gl_WorkGroupID.x * TILE_WORDS;
    uint k = tiles[base];
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> d;
    coopMatLoad(d, tiles, base + C_AT, 8u, gl_CooperativeMatrixLayoutRowMajor);
    for (uint s = 0u; s < k / 16u; s++) {
        coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> a;
        coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> b;
        coopMatLoad(a, tiles, base + A_AT + 8u * s, k / 2u, gl_CooperativeMatrixLayoutRowMajor);
        coopMatLoad(b, tiles, base + B_AT + 128u * s, 8u, gl_CooperativeMatrixLayoutRowMajor);
        d = coopMatMulAdd(a, b, d);
    }
    coopMatStore(d, answers, gl_WorkGroupID.x * 128u, 8u, gl_CooperativeMatrixLayoutRowMajor);
}
