#version 450
// Test kernel: the shaders/lib numerics in their portable forms (body in numerics.glsl).
#extension GL_GOOGLE_include_directive : require
#include "numerics.glsl"
