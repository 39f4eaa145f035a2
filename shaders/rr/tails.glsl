// The tails' kernel prediction (mirror of src/rr/frame/tails.rs; spec rr-network.md 4.3, 4.4):
// the tail softmax with a real row maximum over logits 0..9 and the gate sigmoid(logit 10), the
// 3x3 filter of fused multiply-adds (tap 4 counted twice, with the tenth weight). The including
// kernel declares `exp_table` and `sigmoid_table` (uint16_t, built by numerics::rr::gates) and
// `img_half(pixel, channel)` for the image the taps read.
#ifndef OPENNGX_RR_TAILS_GLSL
#define OPENNGX_RR_TAILS_GLSL
#include "f16.glsl"
#include "rr/cubic.glsl"
#include "rr/gates.glsl"

const uint RR_TAIL_TAPS = 10u;

// tails::weights: w[0..10] the softmax of l[0..10], the return value sigmoid(l[10]).
uint rr_tail_weights(uint l[11], out uint w[10]) {
    uint mx = l[0];
    for (uint j = 1u; j < RR_TAIL_TAPS; ++j) {
        mx = rr_max(mx, l[j]);
    }
    uint s = 0u;
    bool nan = false;
    for (uint j = 0u; j < RR_TAIL_TAPS; ++j) {
        uint e = uint(exp_table[f16_add(l[j], f16_neg(mx))]);
        w[j] = e;
        nan = nan || f16_is_nan(e);
        s += nan ? 0u : rr_fixed24(e);
    }
    uint r = nan ? F16_QNAN : (s == 0u ? F16_POS_INF : rr_recip_fixed24(s));
    for (uint j = 0u; j < RR_TAIL_TAPS; ++j) {
        w[j] = f16_mul(w[j], r);
    }
    return uint(sigmoid_table[l[10]]);
}

// tails::filter of one channel: taps t[0..9].
uint rr_tail_filter(uint w[10], uint t[9]) {
    uint acc = F16_POS_ZERO;
    for (uint k = 0u; k < 9u; ++k) {
        acc = f16_fma(w[k], t[k], acc);
    }
    return f16_fma(w[9], t[4], acc);
}

#endif
