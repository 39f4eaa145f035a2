// prepare: the 16 input lanes of every padded field pixel, written as f32 [field rows][16]
// (the f16 lanes of `nr::frame::prepare` widened exactly, as `features_f32` does).
// Bindings: 0 proxy RGBA f32 (valid size), 1 motion RG f32 (valid size; read only when
// fc.has_motion), 2 history RGBA f16 (valid size; read only when fc.history_valid), 3 features.
// The recorder clears has_motion/history_valid when the buffer is absent and binds a stand-in.
// A launch computes field rows [band_begin, band_end); its features binding starts at field row
// band_begin and its proxy binding at valid row band_src (both whole for one launch), the motion
// and history bindings are whole (history texels are fetched anywhere).
#version 450
#extension GL_GOOGLE_include_directive : require
layout(local_size_x = 8, local_size_y = 8) in;

layout(std430, binding = 0) readonly buffer Proxy { uint proxy[]; };
layout(std430, binding = 1) readonly buffer Motion { uint motion[]; };
layout(std430, binding = 2) readonly buffer History { uint history[]; };
layout(std430, binding = 3) writeonly buffer Features { uint features[]; };

#include "frame_constants.glsl"
#include "frame.glsl"

float frame_history_texel(uint col, uint row, uint ch) {
    uint i = row * fc.width + col;
    uint word = history[2u * i + (ch >> 1)];
    return f16_to_f32((ch & 1u) == 0u ? (word & 0xFFFFu) : (word >> 16));
}

#include "frame_history.glsl"

void main() {
    uint x = gl_GlobalInvocationID.x;
    uint y = gl_GlobalInvocationID.y + fc.band_begin;
    if (x >= fc.field_width || y >= fc.band_end || y >= fc.field_height) {
        return;
    }
    uint sx = frame_mirror(x, fc.width);
    uint sy = frame_mirror(y, fc.height);
    uint si = sy * fc.width + sx;
    uint pi = (sy - fc.band_src) * fc.width + sx;
    vec3 rgb = vec3(frame_load(proxy[4u * pi]), frame_load(proxy[4u * pi + 1u]),
                    frame_load(proxy[4u * pi + 2u]));
    vec3 previous = rgb;
    if (fc.history_valid != 0u) {
        vec2 mv = vec2(0.0);
        if (fc.has_motion != 0u) {
            mv = vec2(frame_load(motion[2u * si]), frame_load(motion[2u * si + 1u]));
        }
        vec3 h;
        if (frame_reproject(fc.width, fc.height, sx, sy, mv,
                            vec2(fc.mvec_scale_x, fc.mvec_scale_y), h)) {
            previous = h;
        }
    }

    uint lanes[16];
    uvec3 n = frame_noise_lanes(x, y, fc.seed);
    lanes[0] = n.x;
    lanes[1] = n.y;
    lanes[2] = n.z;
    lanes[3] = F16_ONE;
    lanes[4] = frame_center_lane(rgb.x);
    lanes[5] = frame_center_lane(rgb.y);
    lanes[6] = frame_center_lane(rgb.z);
    lanes[7] = frame_center_lane(previous.x);
    lanes[8] = frame_center_lane(previous.y);
    lanes[9] = frame_center_lane(previous.z);
    // prepare::conditioning_lanes
    float local = fc.local_structure;
    float l12;
    float l13;
    float l14;
    if (fc.auto_mask != 0u) {
        l12 = 1.0;
        l13 = fc.skin_structure < 0.0 ? local : fc.skin_structure;
        l14 = local;
    } else {
        l12 = local;
        l13 = -1.0;
        l14 = -1.0;
    }
    precise float style = float(fc.style) * 0.0078125;
    lanes[10] = f16_from_f32_rne(style);
    lanes[11] = f16_from_f32_rne(fc.local_tone);
    lanes[12] = f16_from_f32_rne(l12);
    lanes[13] = f16_from_f32_rne(l13);
    lanes[14] = f16_from_f32_rne(l14);
    lanes[15] = F16_POS_ZERO;

    uint row = (y - fc.band_begin) * fc.field_width + x;
    for (uint l = 0u; l < 16u; ++l) {
        features[16u * row + l] = floatBitsToUint(f16_to_f32(lanes[l]));
    }
}
