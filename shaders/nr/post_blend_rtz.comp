#version 450
// post_blend (post_blend.glsl) as the RTZ builds compile the numerics: native f16 adds and
// multiplies, fused multiply-adds by the fast finite form of f16.glsl. For devices with
// Capabilities::rtz_kernels; the same bytes as post_blend.comp.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_spirv_intrinsics : require
// SPIR-V RoundingModeRTZ (4463) for 32-bit floats; RoundingModeRTE (4462) and DenormPreserve
// (4459) for 16-bit floats (capabilities 4468, 4467, 4464).
spirv_execution_mode(extensions = ["SPV_KHR_float_controls"], capabilities = [4468], 4463, 32);
spirv_execution_mode(extensions = ["SPV_KHR_float_controls"], capabilities = [4467], 4462, 16);
spirv_execution_mode(extensions = ["SPV_KHR_float_controls"], capabilities = [4464], 4459, 16);
#define OPENNGX_F32_RTZ 1
#define OPENNGX_F16_NATIVE 1
#include "post_blend.glsl"
