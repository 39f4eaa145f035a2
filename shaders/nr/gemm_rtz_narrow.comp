#version 450
// gemm_rtz.comp for 32-column tiles, with the operand values kept as halves in shared memory
// (GEMM_F16_VALUES: E4M3 values are exact halves). Less shared memory lets the H200 hold more
// of these workgroups: N = 32 GEMMs 1.2-1.3x faster, while the 64-column tiles, which convert
// twice as many values per output, ran 2-3 % slower that way.
#extension GL_GOOGLE_include_directive : require
#define GEMM_F16_VALUES 1
#include "gemm_rtz.glsl"
