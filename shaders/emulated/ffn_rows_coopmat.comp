#version 450
// A window block's FFN with a region per subgroup (shaders/nr/ffn_rows_coopmat.glsl, as
// nr/ffn_rows_coopmat.comp builds it) with its MMAs emulated in integer arithmetic (TILE_EMULATED,
// tile_mma.glsl) and its halves emulated: the device build's bytes in H25 on a device without
// cooperative matrices.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require
#define TILE_EMULATED 1
#include "../nr/ffn_rows_coopmat.glsl"
