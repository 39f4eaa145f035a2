#version 450
// The QKV GEMM of a window block with the window normalisation as its epilogue (GEMM_NORM):
// gemm_coopmat.glsl. Same bytes as gemm_coopmat.comp (f16 epilogue) followed by
// normalize_native_subgroup.comp; the f16 QKV never leaves the chip.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#extension GL_EXT_spirv_intrinsics : require
// RoundingModeRTE (4462, capability 4467) and DenormPreserve (4459, capability 4464) for 16-bit
// results: the device's own f16 adds and multiplies (OPENNGX_F16_NATIVE, f16.glsl) then round to
// nearest even with subnormals kept, the model's bytes (the tensor route requires
// `Capabilities::native_f16`).
spirv_execution_mode(extensions = ["SPV_KHR_float_controls"], capabilities = [4467], 4462, 16);
spirv_execution_mode(extensions = ["SPV_KHR_float_controls"], capabilities = [4464], 4459, 16);
#define GEMM_NORM 1
#include "gemm_coopmat.glsl"
