// RR's per-pixel frame numerics (mirror of src/rr/frame/input.rs; openngx's own, docs/rr.md
// "Frame stages"): sat, comp, luma and the size ratio, with the portable f32 rules of
// shaders/lib/frame.glsl (every float temporary `precise`, flushes and NaN tests on bits).
#ifndef OPENNGX_RR_FRAME_GLSL
#define OPENNGX_RR_FRAME_GLSL
#include "f16.glsl"
#include "recip.glsl"
#include "frame.glsl"

const uint RR_QUARTER = 0x3400u;
const uint RR_HALF = 0x3800u;
const uint RR_EIGHTH = 0x3000u;
const uint RR_LUMA_MAX = 0x70E2u;

// input::sat: NaN -> +0, beyond +-65504 (and +-inf) -> +-65504, else RNE of the flushed value.
uint rr_sat(float v) {
    if (frame_is_nan(v)) {
        return 0u;
    }
    uint h = f16_from_f32_rne(frame_ftz(v));
    return f16_is_inf(h) ? h - 1u : h;
}

// input::comp: v / (1 + |v|) as f16(v * recip(f16(1 + |v|))).
uint rr_comp(uint v) { return f16_mul(v, recip(f16_add(F16_ONE, v & 0x7FFFu))); }

// input::luma: f16(f16(f16(0.25R) + f16(0.5G)) + f16(0.25B)).
uint rr_luma(uint r, uint g, uint b) {
    return f16_add(f16_add(f16_mul(r, RR_QUARTER), f16_mul(g, RR_HALF)), f16_mul(b, RR_QUARTER));
}

// input::ratio: a * rcp(b) in f32.
float rr_ratio(uint a, uint b) {
    precise float r = float(a) * frame_rcp(float(b));
    return r;
}

// rr::geometry::mirror for coordinates >= 0.
uint rr_mirror(uint v, uint n) {
    if (n <= 1u) {
        return 0u;
    }
    uint period = 2u * n - 2u;
    uint m = v % period;
    return m < n ? m : period - m;
}

#endif
