// Body of the shifted-window attention of one level (`window_attention.comp`,
// `window_attention_rtz.comp`; spec nr-network.md 1.5, 2.2, 2.6, 2.7, 3.5, 8.9).
// One workgroup per (window, head), one invocation per query (natural window order t = 8y + x).
// Per query:
//   S[k] = prior[qp][k] + q.K[k]   (MMA group chain over channels 0-15, 16-31; physical keys)
//   e[k] = exp_window(S[k]); r = f16(1/tree(e)); P[k] = E4(f16(e[k]*r))
//   O[c] = E4(P.V[:, c])           (chain of four 16-key groups from +0, physical key order)
// Operands are decoded once (mma_terms.glsl: exact f32 value, 2^(5e), sign masks): the query
// into registers, the window's K (then, in the same shared memory, its V) by the workgroup. E of
// a group comes from the max-plus FMA sum, each term from one RTZ FMA (ATTN_RTZ, P = 13) or an
// exact float product converted to an integer (any P).
// Tokens outside the level are zero K/V rows whose weights still enter the denominator; only
// in-level queries are written. Tensors are E4M3 [w*h][heads*32]; priors are the model's stored
// bytes (fragment order of spec 3.5), read as bytes (any 2-byte alignment).
// The including shader enables GL_GOOGLE_include_directive, GL_EXT_control_flow_attributes,
// GL_EXT_shader_8bit_storage and GL_EXT_shader_explicit_arithmetic_types_int8.
#include "e4m3.glsl"
#include "recip.glsl"
#include "softmax.glsl"
#include "mma_terms.glsl"

layout(local_size_x = 64) in;
layout(constant_id = 0) const int P = 13;
layout(constant_id = 1) const bool WIDENED = false;

layout(std430, binding = 0) readonly buffer QIn { uint8_t qin[]; };
layout(std430, binding = 1) readonly buffer KIn { uint8_t kin[]; };
layout(std430, binding = 2) readonly buffer VIn { uint8_t vin[]; };
layout(std430, binding = 3) readonly buffer Priors { uint8_t priors[]; };
layout(std430, binding = 4) writeonly buffer Out { uint8_t outb[]; };

layout(push_constant) uniform Push {
    uint width;
    uint height;
    uint heads;
    uint shift_x;
    uint shift_y;
    uint q_off; // bytes, also for k/v/out below
    uint k_off;
    uint v_off;
    uint prior_off;
    uint out_off;
} pc;

// Decoded operands, first K as [physical key][channel / 4], then V as [channel][physical key / 4]
// (512 vec4 either way), with sign masks per 16-group: K [key][channel group], V [channel][key
// group].
shared vec4 s_val[512];
shared vec4 s_pow[512];
shared uint s_kmask[128];
shared uint s_vmask[128];

uint natural_to_physical(uint t) {
    uint x = t & 7u;
    uint y = t >> 3;
    return (y >> 2) * 32u + (x >> 2) * 16u + (y & 3u) * 4u + (x & 3u);
}

uint physical_to_natural(uint p) {
    uint r = p & 15u;
    uint y = (p >> 5) * 4u + (r >> 2);
    uint x = ((p >> 4) & 1u) * 4u + (r & 3u);
    return y * 8u + x;
}

// Half index of prior[q][k] (physical query and key) in one head's stored fragments.
uint prior_index(uint q, uint k) {
    uint m = q & 15u;
    uint n = k & 15u;
    uint lane = 4u * (m & 7u) + ((n & 7u) >> 1);
    uint fragment = 2u * (m >> 3) + (n & 1u);
    return (q >> 4) * 1024u + (k >> 4) * 256u + lane * 8u + 4u * (n >> 3) + fragment;
}

// Token of natural window position t, or -1 outside the level.
int token_of(uint t) {
    int x = int(gl_WorkGroupID.x * 8u + (t & 7u)) - int(pc.shift_x);
    int y = int(gl_WorkGroupID.y * 8u + (t >> 3)) - int(pc.shift_y);
    if (x < 0 || y < 0 || x >= int(pc.width) || y >= int(pc.height)) {
        return -1;
    }
    return y * int(pc.width) + x;
}

uint prior_half(uint head_base, uint q, uint k) {
    uint b = head_base + 2u * prior_index(q, k);
    return uint(priors[b]) | (uint(priors[b + 1u]) << 8);
}

// One MMA group: acc plus the 16 products of a (decoded in registers: values, powers, sign mask)
// with the shared operand b at s_val/s_pow[base .. base + 3] (sign mask bm).
uint group(uint acc, vec4 av[4], vec4 ap[4], uint am, uint base, uint bm) {
    if (f16_is_nonfinite(acc)) {
        return acc;
    }
    // Two chains each for E and the terms (any order is exact; this halves the latency).
    float es = mma_acc_pow(acc);
    float es2 = 0.0;
    [[unroll]] for (uint j = 0u; j < 4u; j += 2u) {
        vec4 bp = s_pow[base + j];
        vec4 bp2 = s_pow[base + j + 1u];
        [[unroll]] for (uint i = 0u; i < 4u; i++) {
            es = fma(ap[j][i], bp[i], es);
            es2 = fma(ap[j + 1u][i], bp2[i], es2);
        }
    }
    es += es2;
    if (es == 0.0) {
        return F16_POS_ZERO; // zero accumulator, no nonzero product
    }
    int E = mma_pow_exponent(es);
#if ATTN_RTZ
    float c = mma_rtz_base(E);
#else
    float c = mma_mul_scale(E, P);
#endif
    int sum = 0;
    int sum2 = 0;
    [[unroll]] for (uint j = 0u; j < 4u; j += 2u) {
        vec4 bv = s_val[base + j];
        vec4 bv2 = s_val[base + j + 1u];
        [[unroll]] for (uint i = 0u; i < 4u; i++) {
            int sab = (floatBitsToInt(av[j][i]) ^ floatBitsToInt(bv[i])) >> 31;
            int sab2 = (floatBitsToInt(av[j + 1u][i]) ^ floatBitsToInt(bv2[i])) >> 31;
#if ATTN_RTZ
            sum += mma_term_rtz(av[j][i], bv[i], c) ^ sab;
            sum2 += mma_term_rtz(av[j + 1u][i], bv2[i], c) ^ sab2;
#else
            sum += mma_term_mul(av[j][i], bv[i], c) ^ sab;
            sum2 += mma_term_mul(av[j + 1u][i], bv2[i], c) ^ sab2;
#endif
        }
    }
    sum += sum2;
    int neg = bitCount(am ^ bm);
#if ATTN_RTZ
    sum += mma_rtz_correction(neg, c);
#else
    sum += neg;
#endif
    return mma_round_group(sum + mma_acc_fixed(acc, E, P), E, P);
}

// Decode 16 packed codes (4 words) into values, powers and a sign mask.
void decode16(uvec4 w, out vec4 v[4], out vec4 pw[4], out uint mask) {
    mask = 0u;
    [[unroll]] for (uint i = 0u; i < 16u; i++) {
        float x;
        float p;
        mma_decode_e4((w[i >> 2] >> (8u * (i & 3u))) & 0xFFu, WIDENED, x, p);
        v[i >> 2][i & 3u] = x;
        pw[i >> 2][i & 3u] = p;
        mask |= (floatBitsToUint(x) >> 31) << i;
    }
}

uint read_word(uint base) {
    return uint(kin[base]) | (uint(kin[base + 1u]) << 8) | (uint(kin[base + 2u]) << 16)
        | (uint(kin[base + 3u]) << 24);
}

void main() {
    uint t = gl_LocalInvocationID.x;
    uint head = gl_WorkGroupID.z;
    uint c = pc.heads * 32u;
    uint hc = 32u * head;

    // Stage K: invocation t decodes physical key t (zero outside the level).
    int ktok = token_of(physical_to_natural(t));
    [[unroll]] for (uint g = 0u; g < 2u; g++) {
        uvec4 w = uvec4(0u);
        if (ktok >= 0) {
            uint b = pc.k_off + uint(ktok) * c + hc + 16u * g;
            w = uvec4(read_word(b), read_word(b + 4u), read_word(b + 8u), read_word(b + 12u));
        }
        vec4 v[4];
        vec4 pw[4];
        uint mask;
        decode16(w, v, pw, mask);
        [[unroll]] for (uint j = 0u; j < 4u; j++) {
            s_val[8u * t + 4u * g + j] = v[j];
            s_pow[8u * t + 4u * g + j] = pw[j];
        }
        s_kmask[2u * t + g] = mask;
    }

    // The query, decoded into registers.
    int tok = token_of(t);
    uint qp = natural_to_physical(t);
    vec4 qv[2][4];
    vec4 qpw[2][4];
    uint qmask[2];
    [[unroll]] for (uint g = 0u; g < 2u; g++) {
        uvec4 w = uvec4(0u);
        if (tok >= 0) {
            uint b = pc.q_off + uint(tok) * c + hc + 16u * g;
            [[unroll]] for (uint i = 0u; i < 16u; i++) {
                w[i >> 2] |= uint(qin[b + i]) << (8u * (i & 3u));
            }
        }
        decode16(w, qv[g], qpw[g], qmask[g]);
    }
    barrier();

    // Scores and weights, physical key order; e packed two halves per word. (Out-of-level
    // queries run along: every invocation reaches the barriers below.)
    uint head_base = pc.prior_off + 8192u * head;
    // Four keys at a time: independent chains for the scheduler.
    uint e[32];
    [[dont_unroll]] for (uint k4 = 0u; k4 < 64u; k4 += 4u) {
        uint s[4];
        [[unroll]] for (uint u = 0u; u < 4u; u++) {
            s[u] = prior_half(head_base, qp, k4 + u);
        }
        [[unroll]] for (uint g = 0u; g < 2u; g++) {
            [[unroll]] for (uint u = 0u; u < 4u; u++) {
                uint k = k4 + u;
                s[u] = group(s[u], qv[g], qpw[g], qmask[g], 8u * k + 4u * g, s_kmask[2u * k + g]);
            }
        }
        e[k4 >> 1] = exp_window(s[0]) | (exp_window(s[1]) << 16);
        e[(k4 >> 1) + 1u] = exp_window(s[2]) | (exp_window(s[3]) << 16);
    }
    uint tg[8];
    [[unroll]] for (uint g = 0u; g < 8u; g++) {
        [[unroll]] for (uint j = 0u; j < 4u; j++) {
            uint a = g + 16u * j;
            uint b = f16_add((e[a >> 1] >> (16u * (a & 1u))) & 0xFFFFu,
                             (e[(a + 8u) >> 1] >> (16u * (a & 1u))) & 0xFFFFu);
            tg[g] = softmax_tree_step(tg[g], b, j);
        }
    }
    uint r = recip(softmax_tree_finish(tg));
    uvec4 p[4];
    [[unroll]] for (uint w = 0u; w < 16u; w++) {
        uint word = 0u;
        [[unroll]] for (uint b = 0u; b < 4u; b++) {
            uint k = 4u * w + b;
            uint x = (e[k >> 1] >> (16u * (k & 1u))) & 0xFFFFu;
            word |= e4m3_from_f16(f16_mul(x, r)) << (8u * b);
        }
        p[w >> 2][w & 3u] = word;
    }

    // Stage V transposed over K's shared memory: invocation t decodes physical key t's 32
    // channels; after that, 128 (channel, key group) sign masks, two per invocation.
    barrier();
    [[unroll]] for (uint g = 0u; g < 2u; g++) {
        uvec4 w = uvec4(0u);
        if (ktok >= 0) {
            uint b = pc.v_off + uint(ktok) * c + hc + 16u * g;
            [[unroll]] for (uint i = 0u; i < 16u; i++) {
                w[i >> 2] |= uint(vin[b + i]) << (8u * (i & 3u));
            }
        }
        [[unroll]] for (uint i = 0u; i < 16u; i++) {
            uint ch = 16u * g + i;
            float x;
            float pw;
            mma_decode_e4((w[i >> 2] >> (8u * (i & 3u))) & 0xFFu, WIDENED, x, pw);
            s_val[16u * ch + (t >> 2)][t & 3u] = x;
            s_pow[16u * ch + (t >> 2)][t & 3u] = pw;
        }
    }
    barrier();
    [[unroll]] for (uint h = 0u; h < 2u; h++) {
        uint m = 2u * t + h; // channel m / 4, key group m % 4
        uint mask = 0u;
        [[unroll]] for (uint j = 0u; j < 4u; j++) {
            uvec4 sb = floatBitsToUint(s_val[4u * m + j]) >> 31;
            mask |= (sb.x | (sb.y << 1) | (sb.z << 2) | (sb.w << 3)) << (4u * j);
        }
        s_vmask[m] = mask;
    }
    barrier();
    if (tok < 0) {
        return;
    }

    uint acc[32];
    [[unroll]] for (uint ch = 0u; ch < 32u; ch++) {
        acc[ch] = F16_POS_ZERO;
    }
    [[dont_unroll]] for (uint j = 0u; j < 4u; j++) {
        vec4 pv[4];
        vec4 ppw[4];
        uint pmask;
        decode16(p[j], pv, ppw, pmask);
        [[unroll]] for (uint ch = 0u; ch < 32u; ch++) {
            acc[ch] = group(acc[ch], pv, ppw, pmask, 16u * ch + 4u * j, s_vmask[4u * ch + j]);
        }
    }
    uint obase = pc.out_off + uint(tok) * c + hc;
    [[unroll]] for (uint ch = 0u; ch < 32u; ch++) {
        outb[obase + ch] = uint8_t(e4m3_from_f16(acc[ch]));
    }
}
