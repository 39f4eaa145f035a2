#version 450
// Cosine normalisation of a QKV tensor, eight invocations per (row, head) with the sums of
// squares through shuffles (normalize_subgroup.glsl), with emulated halves: the portable twin of
// normalize_native_subgroup.comp, for the tests that prove the subgroup layout (its lanes,
// shuffles, tree order and word path) on devices without native f16 (lavapipe, subgroups of 8).
// The recorder never picks it for a network.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#define NORM_SUBGROUP 1
#include "normalize_subgroup.glsl"
