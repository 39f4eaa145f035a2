// Body of the RTZ GEMM builds (`gemm_rtz.comp`, `gemm_rtz_narrow.comp`): extensions, float
// controls and defines; the algorithm is in gemm.glsl. The including shader enables
// GL_GOOGLE_include_directive (and may define GEMM_F16_VALUES first).
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_EXT_spirv_intrinsics : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require
// SPIR-V RoundingModeRTZ (4463) for 32-bit floats (capability 4468); RoundingModeRTE (4462,
// capability 4467) and DenormPreserve (4459, capability 4464) for 16-bit results, so that the
// group results' f32 -> f16 conversions (mma_terms.glsl) and the f16 adds and multiplies
// (OPENNGX_F16_NATIVE, f16.glsl) round to nearest even.
spirv_execution_mode(extensions = ["SPV_KHR_float_controls"], capabilities = [4468], 4463, 32);
spirv_execution_mode(extensions = ["SPV_KHR_float_controls"], capabilities = [4467], 4462, 16);
spirv_execution_mode(extensions = ["SPV_KHR_float_controls"], capabilities = [4464], 4459, 16);
#define MMA_RTZ 1
#define GEMM_TM 4
#define OPENNGX_F32_RTZ 1
#define OPENNGX_F16_NATIVE 1
#include "gemm.glsl"
