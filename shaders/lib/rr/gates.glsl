// The tail softmax's reciprocal of an exact sum (mirror of src/numerics/rr/gates.rs; spec
// rr-network.md 4.3). Sigmoid, exp and tanh are correctly rounded functions of one half, which the
// kernels read from tables built by the Rust numerics (numerics::rr::gates).
#ifndef OPENNGX_RR_GATES_GLSL
#define OPENNGX_RR_GATES_GLSL
#include "f16.glsl"

// A finite non-negative half in [0, 1] as an integer multiple of 2^-24 (at most 2^24).
uint rr_fixed24(uint h) {
    uint e = (h >> 10) & 0x1Fu;
    uint m = h & 0x3FFu;
    return e == 0u ? m : ((m | 0x400u) << (e - 1u));
}

// RN_f16(2^24 / s) for an integer 0 < s < 2^29 (the exact sum of at most 16 such halves):
// long division gives 12 quotient bits past the leading one and a sticky remainder.
uint rr_recip_fixed24(uint s) {
    int k = findMSB(s); // s in [2^k, 2^(k+1))
    // 2^24 / s = 2^(24 - k) / (s / 2^k), the second factor's inverse in (1/2, 1].
    // q = floor(2^(k + 13) / s) has 13 or 14 bits; r = 2^(24 - k - 13 - ...) scaling below.
    uint num_hi = 1u; // the dividend 2^(k + 13), built bit by bit
    uint rem = 0u;
    uint q = 0u;
    // Long division of 2^(k+13) by s: feed k + 14 dividend bits (a one, then zeros).
    for (int i = 0; i <= k + 13; ++i) {
        rem = (rem << 1) | (i == 0 ? num_hi : 0u);
        q <<= 1;
        if (rem >= s) {
            rem -= s;
            q |= 1u;
        }
    }
    // value = q * 2^(24 - k - 13) + sticky; q in [2^12, 2^13]: round to 11 significant bits (or
    // to the subnormal grid) with RNE.
    int lsb = 24 - k - 13; // exponent of q's last bit
    uint sticky = rem != 0u ? 1u : 0u;
    int top = findMSB(q);
    int ue = top + lsb;
    int lsb_exp = ue >= -14 ? ue - 10 : -24;
    int drop = lsb_exp - lsb;
    uint r;
    if (drop <= 0) {
        r = q << uint(-drop);
    } else {
        uint kept = q >> uint(drop);
        uint low = q & ((1u << uint(drop)) - 1u);
        uint halfway = 1u << uint(drop - 1);
        bool up = low > halfway || (low == halfway && (sticky != 0u || (kept & 1u) == 1u));
        r = kept + (up ? 1u : 0u);
    }
    uint bits = lsb_exp == -24 ? r : ((uint(lsb_exp + 24) << 10) + r);
    return min(bits, F16_POS_INF);
}

#endif
