#version 450
// Cosine normalisation of a QKV tensor, cooperative layout (normalize_coop.glsl: 32 invocations
// per (row, head)), with the device's f16 adds and multiplies (correctly rounded to nearest even
// with subnormals kept, as declared below; the fused multiply-adds stay emulated since Vulkan
// does not promise a fused f16 fma). For devices with shaderRoundingModeRTEFloat16 and
// shaderDenormPreserveFloat16; same bytes as normalize.comp and normalize_coop.comp (the same
// body with emulated halves).
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_spirv_intrinsics : require
// SPIR-V RoundingModeRTE (4462, capability 4467) and DenormPreserve (4459, capability 4464)
// for 16-bit floats.
spirv_execution_mode(extensions = ["SPV_KHR_float_controls"], capabilities = [4467], 4462, 16);
spirv_execution_mode(extensions = ["SPV_KHR_float_controls"], capabilities = [4464], 4459, 16);
#define OPENNGX_F16_NATIVE 1
#include "normalize_coop.glsl"
