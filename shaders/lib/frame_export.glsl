// The body of the export kernels (export.comp = RGBA16F, export_rgba32f.comp, export_rgba8.comp):
// the frame's RGBA16F output buffer written into the caller's storage image at (base_x, base_y).
// Storage images need a format qualifier unless the device enabled
// shaderStorageImageWriteWithoutFormat, which an NGX caller does not promise; so each output
// format has its own tiny kernel that defines FRAME_EXPORT_FORMAT and includes this file.
//   kind 0: float formats: the half's exact value (RGBA16F stores it back bit for bit)
//   kind 1: RGBA8 UNORM: the code floor(clamp01(v) * 255 + 1/2), written as the correctly
//           rounded code / 255 so that the store's conversion lands on that code
// Binding 0: the output buffer (RGBA f16, two words per texel); binding 1: the image.
#ifndef OPENNGX_FRAME_EXPORT_GLSL
#define OPENNGX_FRAME_EXPORT_GLSL
layout(local_size_x = 8, local_size_y = 8) in;

layout(std430, binding = 0) readonly buffer Src { uint src[]; };
layout(binding = 1, FRAME_EXPORT_FORMAT) uniform writeonly image2D dst;

layout(push_constant) uniform ExportConstants {
    uint base_x;
    uint base_y;
    uint width;
    uint height;
    uint kind;
    uint reserved0;
    uint reserved1;
    uint reserved2;
} pc;

#include "frame_formats.glsl"

void main() {
    uint x = gl_GlobalInvocationID.x;
    uint y = gl_GlobalInvocationID.y;
    if (x >= pc.width || y >= pc.height) {
        return;
    }
    uint i = y * pc.width + x;
    uint w0 = src[2u * i];
    uint w1 = src[2u * i + 1u];
    vec4 v = vec4(f16_to_f32(w0 & 0xFFFFu), f16_to_f32(w0 >> 16), f16_to_f32(w1 & 0xFFFFu),
                  f16_to_f32(w1 >> 16));
    if (pc.kind == 1u) {
        for (int c = 0; c < 4; ++c) {
            v[c] = frame_ratio(frame_unorm_code(v[c], 255u), 255u);
        }
    }
    imageStore(dst, ivec2(pc.base_x + x, pc.base_y + y), v);
}

#endif
