// The fixed f16 addition tree of a row held in MMA fragments (mirror of
// src/numerics/rr/lanes.rs; spec rr-network.md 5.2, 5.3). Lane t of a quad holds, per 8-column
// n-tile i, the pair of columns 8i + 2t and 8i + 2t + 1. Per lane and pair half: the even tiles
// as pairs (e_4j + e_4j+2) folded from the left, the odd tiles likewise, then their sum; then the
// quad butterflies (S0 + S1) + (S2 + S3); then the two halves (even columns + odd columns).
#ifndef OPENNGX_RR_LANES_GLSL
#define OPENNGX_RR_LANES_GLSL
#include "f16.glsl"

// Most n-tiles of a row: C = 160 (20 tiles); the softmax row has 12.
const uint RR_MAX_TILES = 20u;

// One lane's value for one pair half: e[i] is the lane's value of n-tile i (tiles a multiple of 4).
uint rr_lane_sum(uint e[RR_MAX_TILES], uint tiles) {
    uint a = f16_add(e[0], e[2]);
    uint b = f16_add(e[1], e[3]);
    for (uint j = 1u; j < tiles / 4u; ++j) {
        a = f16_add(a, f16_add(e[4u * j], e[4u * j + 2u]));
        b = f16_add(b, f16_add(e[4u * j + 1u], e[4u * j + 3u]));
    }
    return f16_add(a, b);
}

// The quad's butterflies for one half (lane xor 1, then xor 2): s_t is lane t's value.
uint rr_quad_sum(uint s0, uint s1, uint s2, uint s3) {
    return f16_add(f16_add(s0, s1), f16_add(s2, s3));
}

// The last step: the even-column half plus the odd-column half.
uint rr_halves(uint even, uint odd) { return f16_add(even, odd); }

// The whole tree of a row of n halves (n a multiple of 32, at most RR_MAX_ROW): per pair half
// and lane the tile sums, the quad butterflies, then the two halves.
const uint RR_MAX_ROW = 160u;
uint rr_row_sum(uint v[RR_MAX_ROW], uint n) {
    uint tiles = n / 8u;
    uint w[2];
    for (uint h = 0u; h < 2u; ++h) {
        uint s[4];
        for (uint t = 0u; t < 4u; ++t) {
            uint e[RR_MAX_TILES];
            for (uint i = 0u; i < RR_MAX_TILES; ++i) {
                e[i] = i < tiles ? v[8u * i + 2u * t + h] : 0u;
            }
            s[t] = rr_lane_sum(e, tiles);
        }
        w[h] = rr_quad_sum(s[0], s[1], s[2], s[3]);
    }
    return rr_halves(w[0], w[1]);
}

#endif
