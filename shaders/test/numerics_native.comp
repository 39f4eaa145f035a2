#version 450
// Test kernel: the shaders/lib numerics as the tensor route's cooperative-matrix kernels compile
// them (`nr/*_coopmat.comp`): f16 round-to-nearest-even with subnormals kept and native f16 adds
// and multiplies, without the RTZ f32 mode. Only devices with Capabilities::native_f16 run it.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_spirv_intrinsics : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
spirv_execution_mode(extensions = ["SPV_KHR_float_controls"], capabilities = [4467], 4462, 16);
spirv_execution_mode(extensions = ["SPV_KHR_float_controls"], capabilities = [4464], 4459, 16);
#define OPENNGX_F16_NATIVE 1
#include "numerics.glsl"
