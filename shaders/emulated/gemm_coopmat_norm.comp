#version 450
// The tensor route's QKV GEMM with the window normalisation as its epilogue
// (shaders/nr/gemm_coopmat.glsl with GEMM_NORM, as nr/gemm_coopmat_norm.comp builds it), its
// MMAs and halves emulated as in emulated/gemm_coopmat.comp.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require
#define TILE_EMULATED 1
#define GEMM_NORM 1
#include "../nr/gemm_coopmat.glsl"
