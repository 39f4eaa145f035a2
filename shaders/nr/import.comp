// import: one of the caller's images (a sampled image, read with texelFetch, no sampler) into a
// frame buffer of f32 texels: the proxy colour (RGBA) or the motion vectors (RG), for the
// width x height rectangle at (base_x, base_y).
// Normalised formats are turned back into their integer codes and then into the correctly
// rounded code / max, so the result does not depend on the driver's UNORM or sRGB decoder:
//   kind 0: float formats (RGBA16F, RGBA32F, RG16F, RG32F): the value as sampled
//   kind 1: RGBA8 UNORM: c / 255
//   kind 2: RGBA8 SRGB through an _SRGB view (decoded to linear by the sampler): RGB become
//           the sRGB code c / 255 again (the proxy is display-space code values), A is linear
//   kind 3: A2B10G10R10 UNORM: RGB c / 1023, A c / 3
//   kind 4: 16-bit UNORM (R16, D16 through its depth aspect): c / 65535
//   kind 5: 8-bit SNORM: max(c / 127, -1)
//   kind 6: 16-bit SNORM: max(c / 32767, -1)
//   + KIND_INVERT (bit 8): channel 0 becomes 1 - v afterwards (depth given 1 near, 0 far)
// (numerics::normalized is the CPU twin of every decode; a code is recovered exactly from any
// decoder within half a code of c / max, which every f32 decoder of 16 bits or fewer is.)
// Binding 0: the image; binding 1: the destination buffer (channels f32 words per texel, or
// the `lanes` layout).
#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_samplerless_texture_functions : require
layout(local_size_x = 8, local_size_y = 8) in;

layout(binding = 0) uniform texture2D src;
layout(std430, binding = 1) writeonly buffer Dst { uint dst[]; };

layout(push_constant) uniform ImportConstants {
    uint base_x;
    uint base_y;
    uint width;
    uint height;
    uint kind;
    uint channels;
    uint mip;
    // 0: texels of `channels` words; else the texel's words (low 16 bits) and the first one
    // written (high 16 bits), for a buffer interleaving several images (RR's guides).
    uint lanes;
} pc;

#include "frame_formats.glsl"

const uint KIND_INVERT = 0x100u;

void main() {
    uint x = gl_GlobalInvocationID.x;
    uint y = gl_GlobalInvocationID.y;
    if (x >= pc.width || y >= pc.height) {
        return;
    }
    vec4 t = texelFetch(src, ivec2(pc.base_x + x, pc.base_y + y), int(pc.mip));
    vec4 v = t;
    uint kind = pc.kind & 0xFFu;
    if (kind == 1u) {
        for (int c = 0; c < 4; ++c) {
            v[c] = frame_ratio(frame_unorm_code(t[c], 255u), 255u);
        }
    } else if (kind == 2u) {
        for (int c = 0; c < 3; ++c) {
            v[c] = frame_ratio(frame_srgb_code(t[c]), 255u);
        }
        v.w = frame_ratio(frame_unorm_code(t.w, 255u), 255u);
    } else if (kind == 3u) {
        for (int c = 0; c < 3; ++c) {
            v[c] = frame_ratio(frame_unorm_code(t[c], 1023u), 1023u);
        }
        v.w = frame_ratio(frame_unorm_code(t.w, 3u), 3u);
    } else if (kind == 4u) {
        for (int c = 0; c < 4; ++c) {
            v[c] = frame_unorm(frame_unorm_code(t[c], 65535u), 65535u);
        }
    } else if (kind == 5u || kind == 6u) {
        uint m = kind == 5u ? 127u : 32767u;
        for (int c = 0; c < 4; ++c) {
            v[c] = frame_snorm(frame_snorm_code(t[c], m), m);
        }
    }
    if ((pc.kind & KIND_INVERT) != 0u) {
        v.x = frame_invert_depth(v.x);
    }
    uint stride = pc.lanes == 0u ? pc.channels : (pc.lanes & 0xFFFFu);
    uint i = (y * pc.width + x) * stride + (pc.lanes >> 16);
    for (uint c = 0u; c < pc.channels; ++c) {
        dst[i + c] = floatBitsToUint(v[c]);
    }
}
