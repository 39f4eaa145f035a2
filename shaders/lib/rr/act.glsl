// The MLP activation (mirror of src/numerics/rr/act.rs; spec rr-network.md 5.4): y = clamp(x,-2,2)
// signed, g = 0.5 + y*(0.412109375 - 0.0810546875*|y|), out = x*g; nine f16 ops, each rounded.
#ifndef OPENNGX_RR_ACT_GLSL
#define OPENNGX_RR_ACT_GLSL
#include "f16.glsl"
#include "rr/cubic.glsl"

uint rr_act(uint x) {
    uint y = rr_min(rr_max(x, 0xC000u), 0x4000u);
    uint a = y & 0x7FFFu;
    uint p = f16_mul(0x2D30u, a);
    uint q = f16_add(0x3698u, f16_neg(p));
    uint r = f16_mul(y, q);
    uint g = f16_add(0x3800u, r);
    return f16_mul(x, g);
}

#endif
