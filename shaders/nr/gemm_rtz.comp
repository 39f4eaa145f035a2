#version 450
// Grouped E4M3 x E4M3 -> f16 GEMM of `Op::Gemm` for devices with the round-toward-zero f32 mode
// (`shaderRoundingModeRTZFloat32`), F13 only (P = 13): one RTZ FMA per term, 4 x 4 outputs per
// invocation (64-row tiles: on the H200 1.6-2x faster than 8 x 4, which runs short of
// registers). The whole shader runs in that mode, so its f16 fused multiply-adds use the
// RTZ-safe form of f16.glsl; its f16 adds and multiplies are the device's own
// (OPENNGX_F16_NATIVE). The algorithm is in gemm.glsl.
#extension GL_GOOGLE_include_directive : require
#include "gemm_rtz.glsl"
