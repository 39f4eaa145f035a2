#version 450
// Global ViT attention for any device and MMA profile: the terms come from exact float products
// converted to integers. The algorithm is in attention.glsl (ATTN_VIT).
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require
#define MMA_RTZ 0
#define ATTN_VIT 1
#include "attention.glsl"
