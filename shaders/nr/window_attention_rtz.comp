#version 450
// Shifted-window attention for devices with the round-toward-zero f32 mode
// (`shaderRoundingModeRTZFloat32`), F13 only (P = 13): one RTZ FMA per term. The whole shader
// runs in that mode (the exp weights come from the lookup table, the rest of the f32 work is
// mode-independent) and its f16 adds and multiplies are the device's own (OPENNGX_F16_NATIVE).
// The algorithm is in attention.glsl.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require
#extension GL_EXT_spirv_intrinsics : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
// SPIR-V RoundingModeRTZ (4463) for 32-bit floats (capability 4468); RoundingModeRTE (4462,
// capability 4467) and DenormPreserve (4459, capability 4464) for 16-bit results, so that the
// group results' f32 -> f16 conversions (mma_terms.glsl) and the f16 adds and multiplies
// (OPENNGX_F16_NATIVE, f16.glsl) round to nearest even.
spirv_execution_mode(extensions = ["SPV_KHR_float_controls"], capabilities = [4468], 4463, 32);
spirv_execution_mode(extensions = ["SPV_KHR_float_controls"], capabilities = [4467], 4462, 16);
spirv_execution_mode(extensions = ["SPV_KHR_float_controls"], capabilities = [4464], 4459, 16);
#define MMA_RTZ 1
#define ATTN_VIT 0
#define OPENNGX_F32_RTZ 1
#define OPENNGX_F16_NATIVE 1
#include "attention.glsl"
