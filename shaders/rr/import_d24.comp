#version 450
// The exact read of 24-bit depth (rr::feature::depth24; numerics::normalized::unorm(c, 24)): the
// depth aspect of a D24_UNORM_S8_UINT / X8_D24_UNORM_PACK32 image, copied to 32-bit words (the
// D24 value in the low 24 bits, the top 8 undefined and masked), each decoded as
// RN_f32(c / (2^24 - 1)), then RN_f32(1 - d) with `invert` (DepthInverted), into one lane of a
// buffer of `lanes & 0xFFFF` words per texel (the first word written: `lanes >> 16`).
#extension GL_GOOGLE_include_directive : require
#include "frame_formats.glsl"

layout(local_size_x = 8, local_size_y = 8) in;

layout(std430, binding = 0) readonly buffer Src { uint src[]; };
layout(std430, binding = 1) writeonly buffer Dst { uint dst[]; };

layout(push_constant) uniform Push {
    uint width;
    uint height;
    uint lanes;
    uint invert;
} pc;

void main() {
    uint x = gl_GlobalInvocationID.x;
    uint y = gl_GlobalInvocationID.y;
    if (x >= pc.width || y >= pc.height) {
        return;
    }
    uint p = y * pc.width + x;
    float v = frame_unorm(src[p] & 0x00FFFFFFu, 0x00FFFFFFu);
    if (pc.invert != 0u) {
        v = frame_invert_depth(v);
    }
    dst[p * (pc.lanes & 0xFFFFu) + (pc.lanes >> 16)] = floatBitsToUint(v);
}
