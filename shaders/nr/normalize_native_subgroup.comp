#version 450
// Cosine normalisation of a QKV tensor, eight invocations per (row, head) with the sums of
// squares through shuffles (normalize_subgroup.glsl), with normalize_native.comp's numerics
// (native f16 adds and multiplies, emulated fused multiply-adds). Same bytes as
// normalize_coop.comp.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_spirv_intrinsics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
// SPIR-V RoundingModeRTE (4462, capability 4467) and DenormPreserve (4459, capability 4464)
// for 16-bit floats.
spirv_execution_mode(extensions = ["SPV_KHR_float_controls"], capabilities = [4467], 4462, 16);
spirv_execution_mode(extensions = ["SPV_KHR_float_controls"], capabilities = [4464], 4459, 16);
#define OPENNGX_F16_NATIVE 1
#define NORM_SUBGROUP 1
#include "normalize_subgroup.glsl"
