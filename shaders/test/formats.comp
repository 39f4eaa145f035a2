#version 450
// Test kernel: the image-format decodes of shaders/lib/frame_formats.glsl (the twins of
// numerics::normalized), one chosen by specialization constant FUNC; element i reads the four
// words args[4i..4i+3] and writes out[i] (f32 bits).
//   0: frame_unorm(a, b)                       (code a of maximum b)
//   1: frame_snorm(int(a), b)
//   2: frame_invert_depth(f32 a)
//   3: frame_unorm(frame_unorm_code(f32 a, b), b)  (a sampled texel's code recovered, decoded)
//   4: frame_snorm(frame_snorm_code(f32 a, b), b)
#extension GL_GOOGLE_include_directive : require
#include "frame_formats.glsl"

layout(local_size_x = 64) in;
layout(constant_id = 0) const uint FUNC = 0u;
layout(std430, binding = 0) readonly buffer Args { uint args[]; };
layout(std430, binding = 1) writeonly buffer Out { uint outv[]; };
layout(push_constant) uniform Push { uint count; } pc;

void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i >= pc.count) {
        return;
    }
    uint a = args[4u * i];
    uint b = args[4u * i + 1u];
    float r = 0.0;
    switch (FUNC) {
    case 0u: r = frame_unorm(a, b); break;
    case 1u: r = frame_snorm(int(a), b); break;
    case 2u: r = frame_invert_depth(uintBitsToFloat(a)); break;
    case 3u: r = frame_unorm(frame_unorm_code(uintBitsToFloat(a), b), b); break;
    case 4u: r = frame_snorm(frame_snorm_code(uintBitsToFloat(a), b), b); break;
    default: r = uintBitsToFloat(0xDEADBEEFu); break;
    }
    outv[i] = floatBitsToUint(r);
}
