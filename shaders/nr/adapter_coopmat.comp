#version 450
// Input adapter on the device's f16 cooperative matrices (the tensor route, H25 identified by
// the creation probe): f32 features [rows][16] -> f16 (RNE) -> one 16x16x16 MMA per 16 rows and
// 16 output columns from a +0 accumulator, published as raw f16 [rows][32] and E4 [rows][32].
// K is 16, so the product is one H25 group (G 16, P 25): the bytes adapter.comp computes in
// h25. The probe measured finite operands only, so a row with an inf/NaN feature (or any
// inf/NaN weight) takes adapter.comp's emulated group (mma_group_f16) instead.
//
// One workgroup of 128 invocations (4 subgroups of 32) per 64 rows; subgroup s owns rows
// 16 s .. +15. Features, weights and results pass through shared memory, because a KHR
// cooperative matrix's element layout is the implementation's.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#extension GL_KHR_shader_subgroup_ballot : require
#include "adapter_coopmat.glsl"
