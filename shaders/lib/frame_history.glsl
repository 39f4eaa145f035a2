// The portable 5-tap Catmull-Rom reprojection of the previous output (twin of
// `src/nr/frame/history.rs`). The including shader defines, before the include,
//   float frame_history_texel(uint col, uint row, uint ch)   // exact f32 of the stored half
// and this file adds frame_reproject(). Operation order is that of the Rust source.
#ifndef OPENNGX_FRAME_HISTORY_GLSL
#define OPENNGX_FRAME_HISTORY_GLSL
#include "frame.glsl"

// history::axis: texel index of the first middle tap and the clamped fraction.
void frame_axis(float p, out int i, out float f) {
    precise float t = p - 0.5;
    precise float fl = floor(t);
    precise float fr = t - fl;
    i = int(fl);
    f = frame_clamp01(fr);
}

// history::catmull_rom: the normalised sample at `pos` (pixels) of the width x height history.
vec3 frame_catmull_rom(uint width, uint height, vec2 pos) {
    int ix;
    int iy;
    float fx;
    float fy;
    frame_axis(pos.x, ix, fx);
    frame_axis(pos.y, iy, fy);
    vec4 wx = frame_catmull_rom_weights(fx);
    vec4 wy = frame_catmull_rom_weights(fy);
    int wmax = int(width) - 1;
    int hmax = int(height) - 1;
    uint c0 = uint(clamp(ix - 1, 0, wmax));
    uint c1 = uint(clamp(ix, 0, wmax));
    uint c2 = uint(clamp(ix + 1, 0, wmax));
    uint c3 = uint(clamp(ix + 2, 0, wmax));
    uint r0 = uint(clamp(iy - 1, 0, hmax));
    uint r1 = uint(clamp(iy, 0, hmax));
    uint r2 = uint(clamp(iy + 1, 0, hmax));
    uint r3 = uint(clamp(iy + 2, 0, hmax));

    precise float mx = wx.y + wx.z;
    precise float my = wy.y + wy.z;
    precise float a = wx.x * my;
    precise float b = wy.x * mx;
    precise float c = mx * my;
    precise float d = wy.w * mx;
    precise float e = wx.w * my;
    precise float sum = (((b + a) + c) + d) + e;
    float inv = frame_rcp(sum);

    vec3 outv;
    for (uint ch = 0u; ch < 3u; ++ch) {
        float centre = frame_history_texel(c1, r1, ch);
        // Differences to the centre texel (exact f32 subtractions of halves, rounded once).
        precise float d_c0r1 = frame_history_texel(c0, r1, ch) - centre;
        precise float d_c0r2 = frame_history_texel(c0, r2, ch) - centre;
        precise float d_c3r1 = frame_history_texel(c3, r1, ch) - centre;
        precise float d_c3r2 = frame_history_texel(c3, r2, ch) - centre;
        precise float d_c1r0 = frame_history_texel(c1, r0, ch) - centre;
        precise float d_c2r0 = frame_history_texel(c2, r0, ch) - centre;
        precise float d_c1r1 = frame_history_texel(c1, r1, ch) - centre;
        precise float d_c2r1 = frame_history_texel(c2, r1, ch) - centre;
        precise float d_c1r2 = frame_history_texel(c1, r2, ch) - centre;
        precise float d_c2r2 = frame_history_texel(c2, r2, ch) - centre;
        precise float d_c1r3 = frame_history_texel(c1, r3, ch) - centre;
        precise float d_c2r3 = frame_history_texel(c2, r3, ch) - centre;
        // pair_y(cc) = w1y*D(cc, r1) + w2y*D(cc, r2); pair_x(rr) = w1x*D(c1, rr) + w2x*D(c2, rr)
        precise float pair_y_c0 = wy.y * d_c0r1 + wy.z * d_c0r2;
        precise float pair_y_c3 = wy.y * d_c3r1 + wy.z * d_c3r2;
        precise float pair_x_r0 = wx.y * d_c1r0 + wx.z * d_c2r0;
        precise float pair_x_r1 = wx.y * d_c1r1 + wx.z * d_c2r1;
        precise float pair_x_r2 = wx.y * d_c1r2 + wx.z * d_c2r2;
        precise float pair_x_r3 = wx.y * d_c1r3 + wx.z * d_c2r3;
        precise float top = wy.x * pair_x_r0;
        precise float left = wx.x * pair_y_c0;
        precise float mid = wy.y * pair_x_r1 + wy.z * pair_x_r2;
        precise float bottom = wy.w * pair_x_r3;
        precise float right = wx.w * pair_y_c3;
        precise float delta = (((top + left) + mid) + bottom) + right;
        precise float v = centre + delta * inv;
        outv[ch] = v;
    }
    return outv;
}

// history::reproject for valid pixel (x, y); false when the position is off screen.
bool frame_reproject(uint width, uint height, uint x, uint y, vec2 mv, vec2 scale,
                     out vec3 value) {
    vec2 pos = frame_history_position(x, y, mv, scale);
    value = vec3(0.0);
    if (!frame_on_screen(pos, width, height)) {
        return false;
    }
    value = frame_catmull_rom(width, height, pos);
    return true;
}

#endif
