// The per-pixel frame numerics of prepare/compose, a line-by-line twin of the CPU reference
// `src/nr/frame/{portable,noise,prepare,history,compose}.rs` (docs/frame.md). Only operations
// Vulkan fixes bit for bit are used: f32 add/sub/mul (every float temporary is `precise`, so no
// FMA contraction and no reassociation), integer and bit operations, `floor`, and f16 rounding on
// bit patterns (f16.glsl). Clamps, flushes and NaN tests are done on bits, because drivers may
// turn float compare-and-select into min/max, whose -0 and NaN results are unspecified.
// Operation order follows the Rust source exactly.
#ifndef OPENNGX_FRAME_GLSL
#define OPENNGX_FRAME_GLSL
#include "f16.glsl"

const uint FRAME_F32_QNAN = 0x7FC00000u;
const uint FRAME_F32_INF = 0x7F800000u;
const uint FRAME_LOG2E = 0x3FB8AA3Bu;
const uint FRAME_NEG_LOG2E = 0xBFB8AA3Bu;
const uint FRAME_LN2 = 0x3F317218u;
const uint FRAME_TWO_PI_OVER_2_24 = 0x34C90FDBu;
const uint FRAME_TWO_POW_M24 = 0x33800000u;

const uint FRAME_LN_P[9] = uint[9](0x3D9021BBu, 0xBDEBD1B8u, 0x3DEF251Au, 0xBDFE5D4Fu,
    0x3E11E9BFu, 0xBE2AAE50u, 0x3E4CCEACu, 0xBE7FFFFCu, 0x3EAAAAAAu);
const uint FRAME_SIN_P[3] = uint[3](0xB94CA1F9u, 0x3C08839Eu, 0xBE2AAAA3u);
const uint FRAME_COS_P[3] = uint[3](0x37CCF5CEu, 0xBAB6061Au, 0x3D2AAAA5u);
const uint FRAME_EXP2_P[6] = uint[6](0x3920FDDEu, 0x3AAF9F29u, 0x3C1D96A6u, 0x3D635774u,
    0x3E75FDEEu, 0x3F317218u);

float frame_f(uint bits) { return uintBitsToFloat(bits); }

bool frame_is_nan(float x) { return (floatBitsToUint(x) & 0x7FFFFFFFu) > FRAME_F32_INF; }

// A subnormal becomes the zero of its sign (portable::ftz).
float frame_ftz(float x) {
    uint b = floatBitsToUint(x);
    return (b & 0x7F800000u) == 0u ? uintBitsToFloat(b & 0x80000000u) : x;
}

// Load an f32 stored as bits and flush it (inputs are read as bits so that no load converts).
float frame_load(uint bits) { return frame_ftz(uintBitsToFloat(bits)); }

// portable::clamp01 on bits: negatives, both zeros and NaN give +0; >= 1 (and +inf) give 1.
float frame_clamp01(float x) {
    uint b = floatBitsToUint(x);
    if ((b & 0x80000000u) != 0u || b == 0u || b > FRAME_F32_INF) {
        return 0.0;
    }
    return b >= 0x3F800000u ? 1.0 : x;
}

float frame_horner_ln(float x) {
    precise float acc = frame_f(FRAME_LN_P[0]);
    for (int i = 1; i < 9; ++i) {
        acc = acc * x + frame_f(FRAME_LN_P[i]);
    }
    return acc;
}

float frame_horner_sin(float x) {
    precise float acc = frame_f(FRAME_SIN_P[0]);
    for (int i = 1; i < 3; ++i) {
        acc = acc * x + frame_f(FRAME_SIN_P[i]);
    }
    return acc;
}

float frame_horner_cos(float x) {
    precise float acc = frame_f(FRAME_COS_P[0]);
    for (int i = 1; i < 3; ++i) {
        acc = acc * x + frame_f(FRAME_COS_P[i]);
    }
    return acc;
}

float frame_horner_exp2(float x) {
    precise float acc = frame_f(FRAME_EXP2_P[0]);
    for (int i = 1; i < 6; ++i) {
        acc = acc * x + frame_f(FRAME_EXP2_P[i]);
    }
    return acc;
}

// portable::log2
float frame_log2(float x) {
    uint b = floatBitsToUint(x);
    uint e = (b >> 23) & 0xFFu;
    if ((b & 0x80000000u) != 0u) {
        return e == 0u ? frame_f(0xFF800000u) : frame_f(FRAME_F32_QNAN);
    }
    if (e == 0u) {
        return frame_f(0xFF800000u);
    }
    if (e == 0xFFu) {
        return x;
    }
    uint mant = b & 0x007FFFFFu;
    int k = int(e) - 127;
    float m;
    if (mant >= 0x003504F3u) {
        k += 1;
        m = uintBitsToFloat(mant | 0x3F000000u);
    } else {
        m = uintBitsToFloat(mant | 0x3F800000u);
    }
    precise float f = m - 1.0;
    precise float z = f * f;
    precise float y = frame_horner_ln(f) * f * z;
    precise float y2 = y + -0.5 * z;
    precise float ln = f + y2;
    precise float r = ln * frame_f(FRAME_LOG2E) + float(k);
    return r;
}

// portable::sqrt: correctly rounded by the integer digit-by-digit method.
float frame_sqrt(float x) {
    uint b = floatBitsToUint(x);
    if ((b & 0x7FFFFFFFu) == 0u) {
        return x;
    }
    if ((b & 0x80000000u) != 0u) {
        return frame_f(FRAME_F32_QNAN);
    }
    uint e = (b >> 23) & 0xFFu;
    if (e == 0u) {
        return 0.0;
    }
    if (e == 0xFFu) {
        return x;
    }
    uint m = (b & 0x007FFFFFu) | 0x00800000u;
    int ue = int(e) - 127;
    uint s = (ue & 1) == 0 ? 25u : 26u;
    uint hi = m >> (32u - s);
    uint lo = m << s;
    uint rem = 0u;
    uint q = 0u;
    for (int i = 24; i >= 0; --i) {
        uint pair = i >= 16 ? ((hi >> uint(2 * i - 32)) & 3u) : ((lo >> uint(2 * i)) & 3u);
        rem = (rem << 2) | pair;
        uint t = (q << 2) | 1u;
        if (rem >= t) {
            rem -= t;
            q = (q << 1) | 1u;
        } else {
            q <<= 1;
        }
    }
    uint m24 = q >> 1;
    if ((q & 1u) == 1u && (rem != 0u || (m24 & 1u) == 1u)) {
        m24 += 1u;
    }
    uint bexp = uint(127 + 24 + (ue - 23 - int(s)) / 2);
    return uintBitsToFloat((bexp << 23) + (m24 - 0x00800000u));
}

// portable::rcp: correctly rounded 1/x by integer long division.
float frame_rcp(float x) {
    uint b = floatBitsToUint(x);
    uint sign = b & 0x80000000u;
    uint e = (b >> 23) & 0xFFu;
    if (e == 0xFFu) {
        return (b & 0x007FFFFFu) != 0u ? frame_f(FRAME_F32_QNAN) : uintBitsToFloat(sign);
    }
    if (e == 0u) {
        return uintBitsToFloat(sign | FRAME_F32_INF);
    }
    uint m = (b & 0x007FFFFFu) | 0x00800000u;
    if (m == 0x00800000u) {
        return e >= 254u ? uintBitsToFloat(sign) : uintBitsToFloat(sign | ((254u - e) << 23));
    }
    uint rem = 0x00800000u;
    uint q = 0u;
    for (int i = 0; i < 25; ++i) {
        rem <<= 1;
        q <<= 1;
        if (rem >= m) {
            rem -= m;
            q |= 1u;
        }
    }
    uint m24 = q >> 1;
    if ((q & 1u) == 1u && (rem != 0u || (m24 & 1u) == 1u)) {
        m24 += 1u;
    }
    if (e >= 253u) {
        return uintBitsToFloat(sign);
    }
    return uintBitsToFloat(sign | (((253u - e) << 23) + (m24 - 0x00800000u)));
}

// portable::exp2
float frame_exp2(float x) {
    if (frame_is_nan(x)) {
        return frame_f(FRAME_F32_QNAN);
    }
    if (x >= 128.0) {
        return frame_f(FRAME_F32_INF);
    }
    if (x < -127.0) {
        return 0.0;
    }
    precise float n = floor(x + 0.5);
    precise float f = x - n;
    precise float p = f * frame_horner_exp2(f) + 1.0;
    uint pb = floatBitsToUint(p);
    int field = int((pb >> 23) & 0xFFu) + int(n);
    if (field >= 255) {
        return frame_f(FRAME_F32_INF);
    }
    if (field <= 0) {
        return 0.0;
    }
    return uintBitsToFloat((pb & 0x807FFFFFu) | (uint(field) << 23));
}

// portable::sigmoid
float frame_sigmoid(float x) {
    precise float a = x * frame_f(FRAME_NEG_LOG2E);
    precise float d = 1.0 + frame_exp2(a);
    return frame_rcp(d);
}

// portable::sincos_turn24: (sin, cos) of 2*pi*k/2^24.
vec2 frame_sincos_turn24(uint k) {
    k &= 0x00FFFFFFu;
    uint quadrant = k >> 22;
    uint r = k & 0x003FFFFFu;
    bool swap = r > 0x00200000u;
    uint t = swap ? 0x00400000u - r : r;
    precise float x = float(t) * frame_f(FRAME_TWO_PI_OVER_2_24);
    precise float z = x * x;
    precise float s = frame_horner_sin(z) * z * x + x;
    precise float c = (frame_horner_cos(z) * z * z - 0.5 * z) + 1.0;
    if (swap) {
        precise float tmp = s;
        s = c;
        c = tmp;
    }
    precise float ns = 0.0 - s;
    precise float nc = 0.0 - c;
    if (quadrant == 0u) {
        return vec2(s, c);
    }
    if (quadrant == 1u) {
        return vec2(c, ns);
    }
    if (quadrant == 2u) {
        return vec2(ns, nc);
    }
    return vec2(nc, s);
}

// noise::mix / pixel_hash / uniform24
uint frame_mix(uint v) { return (v >> ((v >> 28) + 4u)) ^ v; }

uint frame_pixel_hash(uint x, uint y, uint seed) {
    uint base = (x * 0x8da6b343u) ^ (seed * 0x9e3779b9u) ^ (y * 0xd8163841u) ^ 0x243f6a88u;
    base = frame_mix(base) * 0x108ef2d9u;
    return base ^ (base >> 22);
}

uint frame_uniform24(uint v) {
    uint w = frame_mix(v) * 0x108ef2d9u;
    return ((w >> 30) ^ (w >> 8)) + 1u;
}

// noise::radius: sqrt((log2(u) * ln2) * -2) for u = k * 2^-24.
float frame_radius(uint k) {
    precise float u = float(k) * frame_f(FRAME_TWO_POW_M24);
    precise float l = (frame_log2(u) * frame_f(FRAME_LN2)) * -2.0;
    return frame_sqrt(l);
}

// noise::noise_lanes: lanes 0-2 of padded pixel (x, y), f16 bits.
uvec3 frame_noise_lanes(uint x, uint y, uint seed) {
    uint base = frame_pixel_hash(x, y, seed);
    uint k0 = frame_uniform24(base * 0x2c9277b5u + 0xac564b05u);
    uint k1 = frame_uniform24(base * 0xfa6dc5f9u + 0x4712a88eu);
    uint k2 = frame_uniform24(base * 0xcaa5b80du + 0x21dd796bu);
    uint k3 = frame_uniform24(base * 0x83232c31u + 0x3463e0acu);
    float r0 = frame_radius(k0);
    float r1 = frame_radius(k2);
    vec2 sc0 = frame_sincos_turn24(k1);
    vec2 sc1 = frame_sincos_turn24(k3);
    precise float a = r0 * sc0.y;
    precise float b = r0 * sc0.x;
    precise float c = r1 * sc1.y;
    return uvec3(f16_from_f32_rne(a), f16_from_f32_rne(b), f16_from_f32_rne(c));
}

// prepare::mirror
uint frame_mirror(uint x, uint valid) {
    if (x < valid) {
        return x;
    }
    if (valid <= 1u) {
        return 0u;
    }
    uint period = 2u * (valid - 1u);
    uint m = x % period;
    return m < valid ? m : period - m;
}

// prepare::center_lane: f16(f16(f16(c) - 0.5) * 0.125)
uint frame_center_lane(float c) {
    float h = f16_to_f32(f16_from_f32_rne(c));
    precise float d = h - 0.5;
    float h2 = f16_to_f32(f16_from_f32_rne(d));
    precise float p = h2 * 0.125;
    return f16_from_f32_rne(p);
}

// history::catmull_rom_weights
vec4 frame_catmull_rom_weights(float f) {
    precise float sq = f * f;
    precise float cu = f * sq;
    precise float w0 = (f + cu) * -0.5 + sq;
    precise float w1 = (cu * 1.5 - sq * 2.5) + 1.0;
    precise float w3 = (cu - sq) * 0.5;
    precise float w2 = ((1.0 - w0) - w1) - w3;
    return vec4(w0, w1, w2, w3);
}

// history::history_position: (x + 0.5) + mv * scale, in pixels.
vec2 frame_history_position(uint x, uint y, vec2 mv, vec2 scale) {
    precise float px = (float(x) + 0.5) + mv.x * scale.x;
    precise float py = (float(y) + 0.5) + mv.y * scale.y;
    return vec2(px, py);
}

// history::on_screen: 0 <= p <= size per axis; NaN is off screen (tested on bits).
bool frame_on_screen(vec2 p, uint width, uint height) {
    if (frame_is_nan(p.x) || frame_is_nan(p.y)) {
        return false;
    }
    return p.x >= 0.0 && p.x <= float(width) && p.y >= 0.0 && p.y <= float(height);
}

// compose::neural_channel: clamp((h/32 + (p/8 - 1/16)) * 8 + 1/2, 0, 1).
float frame_neural_channel(float proxy, float head) {
    precise float centred = proxy * 0.125 + -0.0625;
    precise float v = head * 0.03125 + centred;
    precise float o = v * 8.0 + 0.5;
    return frame_clamp01(o);
}

// compose::blend_weight
float frame_blend_weight(float logit, float blend_scale) {
    precise float w = frame_sigmoid(logit) * blend_scale;
    return frame_clamp01(frame_ftz(w));
}

#endif
