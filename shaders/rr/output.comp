#version 450
// RR's output stage (the graph's Output op, rr::frame::output::pixel; openngx's own): per output
// pixel the kernel-prediction upsampling of dec0's surface (16 render-grid taps, an anisotropic
// quadratic falloff shaped by dec0's +144 kernel), the previous output reprojected (Catmull-Rom)
// and clamped to a widened 3x3 box of the surface, blended with sigmoid of dec0's first code,
// de-exposed; A = 1, and the caller's alpha filtered alongside. Every float temporary is
// `precise` and in the Rust order (the portable rules of shaders/lib/frame.glsl). One invocation
// per output pixel.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require
#extension GL_EXT_shader_16bit_storage : require
#include "f16.glsl"
#include "rr/q8.glsl"
#include "common.glsl"

layout(local_size_x = 64) in;

layout(std430, binding = 0) readonly buffer Image { uint16_t img[]; };   // [L0][4] f16
layout(std430, binding = 1) readonly buffer Codes { uint8_t codes[]; };  // [L0][8] E4M3
layout(std430, binding = 2) readonly buffer Kernel { uint kern[]; };     // [L0][4] f32
layout(std430, binding = 3) readonly buffer History { uint16_t hist[]; }; // [output][4] f16
layout(std430, binding = 4) readonly buffer Guides { uint guides[]; };   // [render][16] f32
layout(std430, binding = 5) readonly buffer Color { uint color[]; };     // [render][4] f32
layout(std430, binding = 6) readonly buffer Exposure { uint16_t exposure[]; };
layout(std430, binding = 7) writeonly buffer Out { uint outw[]; }; // R | G << 16, B | A << 16
layout(std430, binding = 8) writeonly buffer Alpha { uint alpha_out[]; };
layout(std430, binding = 9) readonly buffer SigmoidTable { uint16_t sigmoid_table[]; };

layout(push_constant) uniform Push {
    uint rw;
    uint rh;
    uint ow;
    uint oh;
    uint lw;
    // A band of output rows (src/rr/record/bands.rs): its first row and rows (out and alpha are
    // bound from its first row), and the render row the level-0 and render-size inputs are bound
    // from (0, oh, 0 unsplit).
    uint row0;
    uint rows;
    uint in_row0;
    float jitter_x;
    float jitter_y;
    float mv_scale_x;
    float mv_scale_y;
    uint history_valid;
} pc;

float frame_history_texel(uint col, uint row, uint ch) {
    return f16_to_f32(uint(hist[(row * pc.ow + col) * 4u + ch]));
}

#include "frame_history.glsl"
#include "rr_frame.glsl"

const uint MOTION = 11u;
const uint LANES = 16u;

float render_coord(uint x, float r, float jitter) {
    precise float v = ((float(x) + 0.5) * r - 0.5) - jitter;
    return v;
}

int clampi(float v, uint n) { return clamp(int(v), 0, int(n) - 1); }

float surf(uint px, uint py, uint ch) {
    return f16_to_f32(uint(img[((py - pc.in_row0) * pc.lw + px) * 4u + ch]));
}

float alpha_at(uint px, uint py) {
    return frame_ftz(uintBitsToFloat(color[((py - pc.in_row0) * pc.rw + px) * 4u + 3u]));
}

void main() {
    uint i = rr_flat_index(64u);
    if (i >= pc.ow * pc.rows) {
        return;
    }
    uint x = i % pc.ow;
    uint y = i / pc.ow + pc.row0;
    float tx = render_coord(x, rr_ratio(pc.rw, pc.ow), pc.jitter_x);
    float ty = render_coord(y, rr_ratio(pc.rh, pc.oh), pc.jitter_y);
    precise float ix = floor(tx);
    precise float iy = floor(ty);
    precise float txh = tx + 0.5;
    precise float tyh = ty + 0.5;
    uint nx = uint(clampi(floor(txh), pc.rw));
    uint ny = uint(clampi(floor(tyh), pc.rh));
    uint n = (ny - pc.in_row0) * pc.lw + nx;

    float k0 = frame_ftz(uintBitsToFloat(kern[4u * n]));
    float k1 = frame_ftz(uintBitsToFloat(kern[4u * n + 1u]));
    float k2 = frame_ftz(uintBitsToFloat(kern[4u * n + 2u]));
    precise float a = 0.75 + 0.5 * k0;
    precise float b = 0.75 + 0.5 * k1;
    float mab = a < b ? a : b;
    precise float cxy = (0.9 * k2) * mab;
    precise float sum0 = 0.0;
    precise float sum1 = 0.0;
    precise float sum2 = 0.0;
    precise float asum = 0.0;
    precise float wsum = 0.0;
    for (uint j = 0u; j < 16u; ++j) {
        precise float ox = float(j % 4u) - 1.0;
        precise float oy = float(j / 4u) - 1.0;
        precise float sx = ix + ox;
        precise float sy = iy + oy;
        uint px = uint(clampi(sx, pc.rw));
        uint py = uint(clampi(sy, pc.rh));
        precise float dx = sx - tx;
        precise float dy = sy - ty;
        precise float q = (a * (dx * dx) + b * (dy * dy)) + cxy * (dx * dy);
        precise float one_minus = 1.0 - q;
        precise float w = one_minus > 0.0 ? one_minus * one_minus : 0.0;
        sum0 += w * surf(px, py, 0u);
        sum1 += w * surf(px, py, 1u);
        sum2 += w * surf(px, py, 2u);
        asum += w * alpha_at(px, py);
        wsum += w;
    }
    float spatial[3];
    float alpha;
    if (wsum > 0.0) {
        float inv = frame_rcp(wsum);
        precise float s0 = sum0 * inv;
        precise float s1 = sum1 * inv;
        precise float s2 = sum2 * inv;
        precise float am = asum * inv;
        spatial = float[3](s0, s1, s2);
        alpha = frame_clamp01(am);
    } else {
        spatial = float[3](surf(nx, ny, 0u), surf(nx, ny, 1u), surf(nx, ny, 2u));
        alpha = frame_clamp01(alpha_at(nx, ny));
    }

    float o[3] = spatial;
    if (pc.history_valid != 0u) {
        uint g = ((ny - pc.in_row0) * pc.rw + nx) * LANES + MOTION;
        float mvx = frame_ftz(uintBitsToFloat(guides[g]));
        float mvy = frame_ftz(uintBitsToFloat(guides[g + 1u]));
        precise float px = (float(x) + 0.5) + (mvx * pc.mv_scale_x) * rr_ratio(pc.ow, pc.rw);
        precise float py = (float(y) + 0.5) + (mvy * pc.mv_scale_y) * rr_ratio(pc.oh, pc.rh);
        vec2 p = vec2(px, py);
        if (frame_on_screen(p, pc.ow, pc.oh)) {
            vec3 h = frame_catmull_rom(pc.ow, pc.oh, p);
            float e = f16_to_f32(uint(exposure[0]));
            float alpha_t = f16_to_f32(uint(sigmoid_table[rr_q8_to_f16(uint(codes[8u * n]))]));
            float sg1 = f16_to_f32(uint(sigmoid_table[rr_q8_to_f16(uint(codes[8u * n + 1u]))]));
            precise float widen = 1.0 + 2.0 * sg1;
            for (uint ch = 0u; ch < 3u; ++ch) {
                float lo = uintBitsToFloat(0x7F800000u);
                float hi = uintBitsToFloat(0xFF800000u);
                for (uint j = 0u; j < 9u; ++j) {
                    uint qx = uint(clamp(int(nx) + int(j % 3u) - 1, 0, int(pc.rw) - 1));
                    uint qy = uint(clamp(int(ny) + int(j / 3u) - 1, 0, int(pc.rh) - 1));
                    float v = surf(qx, qy, ch);
                    lo = v < lo ? v : lo;
                    hi = v > hi ? v : hi;
                }
                precise float centre = (lo + hi) * 0.5;
                precise float half_ = ((hi - lo) * 0.5) * widen;
                precise float lo2 = centre - half_;
                precise float hi2 = centre + half_;
                precise float hv = h[ch] * e;
                float hc = hv < lo2 ? lo2 : (hv > hi2 ? hi2 : hv);
                precise float blended = spatial[ch] + alpha_t * (hc - spatial[ch]);
                o[ch] = blended;
            }
        }
    }
    float inv_e = f16_to_f32(uint(exposure[1]));
    uint r[3];
    for (uint ch = 0u; ch < 3u; ++ch) {
        precise float v = o[ch] * inv_e;
        r[ch] = rr_sat(v);
    }
    outw[2u * i] = r[0] | (r[1] << 16u);
    outw[2u * i + 1u] = r[2] | (F16_ONE << 16u);
    alpha_out[i] = floatBitsToUint(alpha);
}
