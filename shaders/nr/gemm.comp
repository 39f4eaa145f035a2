#version 450
// Grouped E4M3 x E4M3 -> f16 GEMM of `Op::Gemm` for any device: the terms come from exact float
// products converted to integers (any fraction bits P <= 25); 8 x 4 outputs per invocation
// (128-row tiles: lavapipe runs its GEMMs 1.26x faster than with 4 x 4). The algorithm is in
// gemm.glsl.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require
#extension GL_EXT_control_flow_attributes : require
#define MMA_RTZ 0
#define GEMM_TM 8
#include "gemm.glsl"
