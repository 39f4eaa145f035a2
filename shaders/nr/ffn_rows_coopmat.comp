#version 450
// A window block's FFN with a region per subgroup (ffn_rows_coopmat.glsl, C = 32 and 64) on the
// device's cooperative matrices.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_EXT_spirv_intrinsics : require
// RoundingModeRTE (4462, capability 4467) and DenormPreserve (4459, capability 4464) for 16-bit
// results, as gemm_coopmat.comp: the device's own f16 multiplies (the seed, the widening) then
// round to nearest even with subnormals kept, the model's bytes.
spirv_execution_mode(extensions = ["SPV_KHR_float_controls"], capabilities = [4467], 4462, 16);
spirv_execution_mode(extensions = ["SPV_KHR_float_controls"], capabilities = [4464], 4459, 16);
#include "ffn_rows_coopmat.glsl"
