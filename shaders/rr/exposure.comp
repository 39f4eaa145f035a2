#version 450
// RR's exposure stage (the graph's Exposure op, rr::frame::input::exposure; openngx's own): the
// exact sum over render pixels of floor(clamp(luma, 0, 10000) * 1024) (64-bit, two words), then
// E = RN_f16(241 N / max(S, 5N)) * scale, or X * scale * recip(pre-exposure) for a caller's
// exposure value X (pushed, or binding 3's word: the caller's exposure texture imported on the
// device); E -> 1 unless a positive finite half; out = [E, recip(E)]. PASS 0: each of
// `partials` workgroups sums a stride of the pixels into its 64-bit partial; PASS 1 (one
// workgroup, after a barrier) sums the partials and computes E. Integer sums: any order gives S.
#extension GL_GOOGLE_include_directive : require
#include "f16.glsl"
#include "recip.glsl"
#include "frame.glsl"
#include "rr_frame.glsl"

layout(local_size_x = 256) in;
layout(constant_id = 0) const uint PASS = 0u;

layout(std430, binding = 0) readonly buffer Color { uint color[]; }; // [pixel][4] f32 bits
layout(std430, binding = 1) writeonly buffer Out { uint outw[]; };   // E | recip(E) << 16
layout(std430, binding = 2) buffer Partials { uint partials[]; };    // [group] lo, hi
layout(std430, binding = 3) readonly buffer Input { uint exposure_input[]; }; // [0]: f32 bits

layout(push_constant) uniform Push {
    uint pixels;
    uint groups; // PASS 0's workgroups (partials), at most 1024
    uint has_value; // 0: automatic; 1: `value`; 2: exposure_input[0] (the caller's texture)
    uint value;    // f32 bits
    uint scale;    // f32 bits
    uint pre;      // f32 bits
} pc;

shared uint lo_s[256];
shared uint hi_s[256];

uint luma_units(uint p) {
    uint l = rr_luma(rr_sat(uintBitsToFloat(color[4u * p])),
                     rr_sat(uintBitsToFloat(color[4u * p + 1u])),
                     rr_sat(uintBitsToFloat(color[4u * p + 2u])));
    if ((l & 0x8000u) != 0u || f16_is_nan(l)) {
        return 0u;
    }
    if (f16_to_f32(l) > f16_to_f32(RR_LUMA_MAX)) {
        l = RR_LUMA_MAX;
    }
    precise float v = f16_to_f32(l) * 1024.0;
    return uint(floor(v));
}

// (hi, lo) as 64 bits: a + b.
void add64(inout uint lo, inout uint hi, uint blo, uint bhi) {
    uint carry;
    lo = uaddCarry(lo, blo, carry);
    hi = hi + bhi + carry;
}

bool ge64(uint alo, uint ahi, uint blo, uint bhi) {
    return ahi > bhi || (ahi == bhi && alo >= blo);
}

// input::auto_exposure: RN_f16(241 n / max(s, 5n)). The quotient is below 2^6 (s >= 5n), so
// Q = floor(241 n 2^25 / d) < 2^31, rounded with its remainder as a sticky bit.
uint auto_exposure(uint slo, uint shi, uint n) {
    // d = max(s, 5n, 1) (5n < 2^35 as 64 bits).
    uint dlo;
    uint dhi;
    umulExtended(5u, n, dhi, dlo);
    if (ge64(slo, shi, dlo, dhi)) {
        dlo = slo;
        dhi = shi;
    }
    if (dlo == 0u && dhi == 0u) {
        dlo = 1u;
    }
    uint nhi;
    uint nlo;
    umulExtended(241u, n, nhi, nlo); // 241 n < 2^40
    // Long division of (241 n) << 25 by d, one dividend bit at a time from the top (65 bits).
    uint rlo = 0u;
    uint rhi = 0u;
    uint q = 0u;
    for (int i = 64; i >= 0; --i) {
        // Bit i of the dividend num << 25: bit i - 25 of num.
        int b = i - 25;
        uint bit = b < 0 ? 0u : (b < 32 ? (nlo >> uint(b)) & 1u : (nhi >> uint(b - 32)) & 1u);
        rhi = (rhi << 1u) | (rlo >> 31u);
        rlo = (rlo << 1u) | bit;
        q <<= 1u;
        if (ge64(rlo, rhi, dlo, dhi)) {
            uint borrow;
            rlo = usubBorrow(rlo, dlo, borrow);
            rhi = rhi - dhi - borrow;
            q |= 1u;
        }
    }
    uint sticky = (rlo != 0u || rhi != 0u) ? 1u : 0u;
    return f16_round_fixed_rne((q << 1u) | sticky, -26, 0u);
}

void main() {
    uint t = gl_LocalInvocationID.x;
    uint lo = 0u;
    uint hi = 0u;
    if (PASS == 0u) {
        for (uint p = gl_WorkGroupID.x * 256u + t; p < pc.pixels; p += pc.groups * 256u) {
            add64(lo, hi, luma_units(p), 0u);
        }
    } else {
        for (uint g = t; g < pc.groups; g += 256u) {
            add64(lo, hi, partials[2u * g], partials[2u * g + 1u]);
        }
    }
    lo_s[t] = lo;
    hi_s[t] = hi;
    barrier();
    for (uint s = 128u; s > 0u; s >>= 1u) {
        if (t < s) {
            uint a = lo_s[t];
            uint b = hi_s[t];
            add64(a, b, lo_s[t + s], hi_s[t + s]);
            lo_s[t] = a;
            hi_s[t] = b;
        }
        barrier();
    }
    if (t != 0u) {
        return;
    }
    if (PASS == 0u) {
        partials[2u * gl_WorkGroupID.x] = lo_s[0];
        partials[2u * gl_WorkGroupID.x + 1u] = hi_s[0];
        return;
    }
    uint e;
    if (pc.has_value != 0u) {
        uint x = pc.has_value == 2u ? exposure_input[0] : pc.value;
        e = f16_mul(f16_mul(rr_sat(uintBitsToFloat(x)), rr_sat(uintBitsToFloat(pc.scale))),
                    recip(rr_sat(uintBitsToFloat(pc.pre))));
    } else {
        e = f16_mul(auto_exposure(lo_s[0], hi_s[0], pc.pixels), rr_sat(uintBitsToFloat(pc.scale)));
    }
    if ((e & 0x8000u) != 0u || f16_is_zero(e) || f16_is_nonfinite(e)) {
        e = F16_ONE;
    }
    outw[0] = e | (recip(e) << 16u);
}
