#version 450
// Test kernel: the shaders/lib numerics as the RTZ builds (`nr/*_rtz.comp`) compile them: f32
// round-toward-zero, f16 round-to-nearest-even with subnormals kept, native f16 adds and
// multiplies, the fast fused f16 form. Only devices with Capabilities::rtz_kernels run it.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_spirv_intrinsics : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
spirv_execution_mode(extensions = ["SPV_KHR_float_controls"], capabilities = [4468], 4463, 32);
spirv_execution_mode(extensions = ["SPV_KHR_float_controls"], capabilities = [4467], 4462, 16);
spirv_execution_mode(extensions = ["SPV_KHR_float_controls"], capabilities = [4464], 4459, 16);
#define OPENNGX_F32_RTZ 1
#define OPENNGX_F16_NATIVE 1
#include "numerics.glsl"
