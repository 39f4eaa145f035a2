#version 450
// The tensor route's GEMM (shaders/nr/gemm_coopmat.glsl, as nr/gemm_coopmat.comp builds it)
// with its MMAs emulated in integer arithmetic (TILE_EMULATED, tile_mma.glsl) and its halves
// emulated (no OPENNGX_F16_NATIVE): the device build's bytes in H25 on a device without
// cooperative matrices. KernelPolicy::with_emulated_tiles records it in place of the device's.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require
#define TILE_EMULATED 1
#include "../nr/gemm_coopmat.glsl"
