// compose: the output RGBA16F and the next history RGBA16F of every valid pixel, exactly as
// `nr::frame::compose`. Bindings: 0 proxy RGBA f32, 1 motion RG f32, 2 history RGBA f16 (all
// valid size), 3 head f32 [field rows][4], 4 output RGBA f16, 5 next history RGBA f16.
// A disabled frame (fc.enabled == 0) copies the truncated proxy and reads/writes nothing else.
// A launch computes valid rows [band_begin, band_end); its proxy, head, output and next-history
// bindings start at row band_begin (whole for one launch), motion and history are bound whole
// (history texels are fetched anywhere).
#version 450
#extension GL_GOOGLE_include_directive : require
layout(local_size_x = 8, local_size_y = 8) in;

layout(std430, binding = 0) readonly buffer Proxy { uint proxy[]; };
layout(std430, binding = 1) readonly buffer Motion { uint motion[]; };
layout(std430, binding = 2) readonly buffer History { uint history[]; };
layout(std430, binding = 3) readonly buffer Head { uint head[]; };
layout(std430, binding = 4) writeonly buffer Output { uint outputs[]; };
layout(std430, binding = 5) writeonly buffer NextHistory { uint next_history[]; };

#include "frame_constants.glsl"
#include "frame.glsl"

float frame_history_texel(uint col, uint row, uint ch) {
    uint i = row * fc.width + col;
    uint word = history[2u * i + (ch >> 1)];
    return f16_to_f32((ch & 1u) == 0u ? (word & 0xFFFFu) : (word >> 16));
}

#include "frame_history.glsl"

uvec2 pack_rgba(uint r, uint g, uint b, uint a) { return uvec2(r | (g << 16), b | (a << 16)); }

void main() {
    uint x = gl_GlobalInvocationID.x;
    uint y = gl_GlobalInvocationID.y + fc.band_begin;
    if (x >= fc.width || y >= fc.band_end || y >= fc.height) {
        return;
    }
    uint i = y * fc.width + x;
    uint pi = (y - fc.band_begin) * fc.width + x;
    if (fc.enabled == 0u) {
        // compose: the proxy truncated, alpha included (no flush: rtz maps subnormals to zero).
        uvec2 o = pack_rgba(f16_from_f32_rtz(uintBitsToFloat(proxy[4u * pi])),
                            f16_from_f32_rtz(uintBitsToFloat(proxy[4u * pi + 1u])),
                            f16_from_f32_rtz(uintBitsToFloat(proxy[4u * pi + 2u])),
                            f16_from_f32_rtz(uintBitsToFloat(proxy[4u * pi + 3u])));
        outputs[2u * pi] = o.x;
        outputs[2u * pi + 1u] = o.y;
        return;
    }
    vec3 p = vec3(frame_load(proxy[4u * pi]), frame_load(proxy[4u * pi + 1u]),
                  frame_load(proxy[4u * pi + 2u]));
    uint hi = (y - fc.band_begin) * fc.field_width + x;
    vec4 h = vec4(frame_load(head[4u * hi]), frame_load(head[4u * hi + 1u]),
                  frame_load(head[4u * hi + 2u]), frame_load(head[4u * hi + 3u]));
    vec3 n = vec3(frame_neural_channel(p.x, h.x), frame_neural_channel(p.y, h.y),
                  frame_neural_channel(p.z, h.z));
    if (fc.history_valid != 0u) {
        vec2 mv = vec2(0.0);
        if (fc.has_motion != 0u) {
            mv = vec2(frame_load(motion[2u * i]), frame_load(motion[2u * i + 1u]));
        }
        vec3 hist;
        if (frame_reproject(fc.width, fc.height, x, y, mv,
                            vec2(fc.mvec_scale_x, fc.mvec_scale_y), hist)) {
            float w = frame_blend_weight(h.w, fc.blend_scale);
            for (uint c = 0u; c < 3u; ++c) {
                precise float d = hist[c] - n[c];
                precise float v = n[c] + w * d;
                n[c] = v;
            }
        }
    }
    uvec2 nh = pack_rgba(f16_from_f32_rtz(n.x), f16_from_f32_rtz(n.y), f16_from_f32_rtz(n.z),
                         F16_ONE);
    next_history[2u * pi] = nh.x;
    next_history[2u * pi + 1u] = nh.y;
    if (fc.intensity != 1.0) {
        for (uint c = 0u; c < 3u; ++c) {
            precise float d = n[c] - p[c];
            precise float v = p[c] + fc.intensity * d;
            n[c] = frame_clamp01(v);
        }
    }
    uvec2 o = pack_rgba(f16_from_f32_rtz(n.x), f16_from_f32_rtz(n.y), f16_from_f32_rtz(n.z),
                        F16_ONE);
    outputs[2u * pi] = o.x;
    outputs[2u * pi + 1u] = o.y;
}
