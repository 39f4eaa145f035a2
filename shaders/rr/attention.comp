#version 450
// RR's window attention (spec rr-network.md 3 steps 3-5; the graph's Attention op, the CPU's
// rr::reference::attention): per window and head, S = U_q . U_k^T seeded with the score bias (one
// k32 step), the cubic softmax of each row over the 96 keys (shaders/lib/rr/cubic.glsl, the lanes
// tree sum and recip), O = q8(P) . V in three k32 steps from +0, q8(O) written for the window's
// in-grid queries. One workgroup per (window, head), one invocation per query; the window's keys
// are mirrored into the grid (rr::geometry::mirror), keys 0..63 are the 8x8 queries, 64..95 the
// rows above and below and the columns left and right (rr::geometry::KEY_OFFSETS).
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require
#extension GL_EXT_shader_16bit_storage : require
#include "f16.glsl"
#include "recip.glsl"
#include "rr/q8.glsl"
#include "rr/k32.glsl"
#include "rr/lanes.glsl"
#include "rr/cubic.glsl"
#include "common.glsl"

layout(local_size_x = 64) in;

layout(std430, binding = 0) readonly buffer U { uint8_t u[]; };
layout(std430, binding = 1) readonly buffer V { uint8_t v[]; };
layout(std430, binding = 2) readonly buffer Bias { uint16_t bias[]; }; // [head][64][96]
layout(std430, binding = 3) writeonly buffer Out { uint8_t outb[]; };

layout(push_constant) uniform Push {
    uint w;
    uint h;
    uint heads;
    uint shift_x;
    uint shift_y;
    uint windows_x;
    uint windows;
    // A band of window rows (src/rr/record/bands.rs): its first window row, and the level's token
    // rows the key bindings (u, v) and the output binding start at (0, 0, 0 unsplit). Window
    // coordinates stay the level's: the mirror is about the level's edges.
    uint row0;
    uint in_row0;
    uint out_row0;
} pc;

// Keys' codes, four per word: [key][8 words].
shared uint uk[96 * 8];
shared uint vk[96 * 8];

// rr::geometry::mirror.
uint mirror_axis(int x, uint n) {
    if (n <= 1u) {
        return 0u;
    }
    int period = 2 * int(n) - 2;
    int m = abs(x) % period;
    return uint(m < int(n) ? m : period - m);
}

ivec2 key_offset(uint k) {
    if (k < 64u) {
        return ivec2(int(k % 8u), int(k / 8u));
    }
    int j = int(k % 8u);
    uint side = (k - 64u) / 8u;
    if (side == 0u) {
        return ivec2(j, -1);
    }
    if (side == 1u) {
        return ivec2(j, 8);
    }
    if (side == 2u) {
        return ivec2(-1, j);
    }
    return ivec2(8, j);
}

uint code(uint word_, uint c) { return (word_ >> (8u * (c & 3u))) & 0xFFu; }

void main() {
    uint job = rr_flat_group();
    if (job >= pc.windows * pc.heads) {
        return;
    }
    uint hd = job % pc.heads;
    uint win = job / pc.heads;
    int ox = int(win % pc.windows_x) * 8 - int(pc.shift_x);
    int oy = int(pc.row0 + win / pc.windows_x) * 8 - int(pc.shift_y);
    uint width = pc.heads * 32u;
    uint q = gl_LocalInvocationID.x;
    for (uint k = q; k < 96u; k += 64u) {
        ivec2 d = key_offset(k);
        uint tx = mirror_axis(ox + d.x, pc.w);
        uint ty = mirror_axis(oy + d.y, pc.h);
        uint base = ((ty - pc.in_row0) * pc.w + tx) * width + hd * 32u;
        for (uint wd = 0u; wd < 8u; ++wd) {
            uint b0 = base + 4u * wd;
            uk[k * 8u + wd] = uint(u[b0]) | (uint(u[b0 + 1u]) << 8u) | (uint(u[b0 + 2u]) << 16u)
                | (uint(u[b0 + 3u]) << 24u);
            vk[k * 8u + wd] = uint(v[b0]) | (uint(v[b0 + 1u]) << 8u) | (uint(v[b0 + 2u]) << 16u)
                | (uint(v[b0 + 3u]) << 24u);
        }
    }
    barrier();

    // Scores and the cubic weights.
    uint e[RR_MAX_ROW];
    uint brow = (hd * 64u + q) * 96u;
    RrCode uq[32];
    for (uint c = 0u; c < 32u; ++c) {
        uq[c] = rr_code(code(uk[q * 8u + c / 4u], c));
    }
    for (uint k = 0u; k < 96u; ++k) {
        RrStep st = RR_STEP_ZERO;
        for (uint wd = 0u; wd < 8u; ++wd) {
            uint w = uk[k * 8u + wd];
            for (uint t = 0u; t < 4u; ++t) {
                rr_step_mac(st, uq[4u * wd + t], rr_code((w >> (8u * t)) & 0xFFu));
            }
        }
        e[k] = rr_cubic_exp(rr_step_round(st, uint(bias[brow + k])));
    }
    for (uint k = 96u; k < RR_MAX_ROW; ++k) {
        e[k] = 0u;
    }
    uint rcp = recip(rr_row_sum(e, 96u));
    RrCode p[96];
    for (uint k = 0u; k < 96u; ++k) {
        p[k] = rr_code(rr_q8(f16_mul(e[k], rcp)));
    }

    int x = ox + int(q % 8u);
    int y = oy + int(q / 8u);
    if (x < 0 || y < 0 || x >= int(pc.w) || y >= int(pc.h)) {
        return;
    }
    uint o = ((uint(y) - pc.out_row0) * pc.w + uint(x)) * width + hd * 32u;
    // Four channels (one word of V codes) at a time.
    for (uint wd = 0u; wd < 8u; ++wd) {
        uint acc[4] = uint[4](0u, 0u, 0u, 0u);
        for (uint k0 = 0u; k0 < 96u; k0 += 32u) {
            RrStep st[4] = RrStep[4](RR_STEP_ZERO, RR_STEP_ZERO, RR_STEP_ZERO, RR_STEP_ZERO);
            for (uint k = k0; k < k0 + 32u; ++k) {
                uint w = vk[k * 8u + wd];
                for (uint t = 0u; t < 4u; ++t) {
                    rr_step_mac(st[t], p[k], rr_code((w >> (8u * t)) & 0xFFu));
                }
            }
            for (uint t = 0u; t < 4u; ++t) {
                acc[t] = rr_step_round(st[t], acc[t]);
            }
        }
        for (uint t = 0u; t < 4u; ++t) {
            outb[o + 4u * wd + t] = uint8_t(rr_q8(acc[t]));
        }
    }
}
