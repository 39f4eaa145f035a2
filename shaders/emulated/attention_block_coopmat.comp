#version 450
// A C = 32 window block's attention half as one kernel (shaders/nr/attention_block_coopmat.glsl,
// as nr/attention_block_coopmat.comp builds it) with its MMAs emulated in integer arithmetic
// (TILE_EMULATED, tile_mma.glsl) and its halves emulated: the device build's bytes in H25 on a
// device without cooperative matrices.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#define TILE_EMULATED 1
#include "../nr/attention_block_coopmat.glsl"
