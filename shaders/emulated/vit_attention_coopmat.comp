#version 450
// The tensor route's ViT attention (shaders/nr/vit_attention_coopmat.glsl, as
// nr/vit_attention_coopmat.comp builds it) with its MMAs emulated in integer arithmetic
// (TILE_EMULATED, tile_mma.glsl) and its halves emulated: the device build's bytes in H25 on a
// device without cooperative matrices.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#define TILE_EMULATED 1
#include "../nr/vit_attention_coopmat.glsl"
