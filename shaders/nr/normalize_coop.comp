#version 450
// Cosine normalisation of a QKV tensor, cooperative layout (normalize_coop.glsl) with emulated
// halves: the portable twin of normalize_native.comp, for the tests that prove the cooperative
// indexing and reduction on devices without native f16 (lavapipe). The recorder runs
// normalize.comp on such devices (cheaper to compile and run on lavapipe).
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require
#extension GL_EXT_shader_16bit_storage : require
#include "normalize_coop.glsl"
