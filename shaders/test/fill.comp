#version 450
// Test kernel for the caller-handles test: out[i] = e4m3_from_f16(in[i]) ^ (SALT << 8), with
// SALT a specialization constant and a push-constant element count.
#extension GL_GOOGLE_include_directive : require
#include "e4m3.glsl"

layout(local_size_x = 64) in;
layout(constant_id = 0) const uint SALT = 0u;
layout(std430, binding = 0) readonly buffer In { uint inv[]; };
layout(std430, binding = 1) writeonly buffer Out { uint outv[]; };
layout(push_constant) uniform Push { uint count; } pc;

void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i < pc.count) {
        outv[i] = e4m3_from_f16(inv[i]) ^ (SALT << 8);
    }
}
