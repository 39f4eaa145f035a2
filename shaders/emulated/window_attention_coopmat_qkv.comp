#version 450
// The tensor route's window attention with the normalisation in its staging (NORM_FUSED, as
// nr/window_attention_coopmat_qkv.comp builds it), emulated as
// emulated/window_attention_coopmat.comp.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#define TILE_EMULATED 1
#define NORM_FUSED 1
#include "../nr/window_attention_coopmat.glsl"
