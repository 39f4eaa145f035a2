// Body of the input adapter on cooperative matrices (adapter_coopmat.comp has what it computes
// and how the work is split), written with tile_mma.glsl's macros so that
// emulated/adapter_coopmat.comp builds it with integer MMAs too.
#include "f16.glsl"
#include "e4m3.glsl"
#include "mma.glsl"
#include "tile_mma.glsl"

layout(local_size_x = 128) in;

layout(std430, binding = 0) readonly buffer Features { uint features[]; }; // f32 bits
// [32 outputs][16 inputs] halves, two per word.
layout(std430, binding = 1) readonly buffer Weights { uint w_words[]; };
layout(std430, binding = 2) writeonly buffer Raw { uint raw_words[]; };
layout(std430, binding = 3) writeonly buffer Out { uint out_words[]; };

layout(push_constant) uniform Push { uint rows; } pc;

// Row strides in uints (two halves each), skewed by 16 bytes.
const uint AS = 12u; // 16 features
const uint BS = 20u; // 32 outputs
shared uint s_a[64 * AS];   // features as halves [row][k]
shared uint s_b[16 * BS];   // weights [k][n]
shared uint s_o[64 * BS];   // results [row][n]
shared uint s_row_special[64];
#ifdef TILE_EMULATED
// Per subgroup of the device (several make up one stand-in subgroup of 32): one of its weights
// is inf/NaN.
shared uint s_w_special[128];
#else
shared uint s_w_special[4]; // per subgroup: one of its weights is inf/NaN
#endif

// Whether any subgroup saw an inf/NaN weight.
bool weights_special() {
#ifdef TILE_EMULATED
    uint any = 0u;
    for (uint i = 0u; i < gl_NumSubgroups; i++) {
        any |= s_w_special[i];
    }
    return any != 0u;
#else
    return (s_w_special[0] | s_w_special[1] | s_w_special[2] | s_w_special[3]) != 0u;
#endif
}

uint weight(uint n, uint k) {
    uint idx = n * 16u + k;
    return (w_words[idx >> 1] >> (16u * (idx & 1u))) & 0xFFFFu;
}

void main() {
    uint tid = gl_LocalInvocationID.x;
    uint sg = TILE_SUBGROUP;
    uint row = tid >> 1;
    uint half_ = tid & 1u;
    uint r = gl_WorkGroupID.x * 64u + row;
    bool live = r < pc.rows;

    // Features 8 half_ .. + 7 of row `row`, converted once.
    bool special = false;
    [[unroll]] for (uint i = 0u; i < 4u; i++) {
        uint k = 8u * half_ + 2u * i;
        uint lo = 0u;
        uint hi = 0u;
        if (live) {
            lo = f16_from_f32_bits(features[r * 16u + k], false, 0);
            hi = f16_from_f32_bits(features[r * 16u + k + 1u], false, 0);
        }
        special = special || f16_is_nonfinite(lo) || f16_is_nonfinite(hi);
        s_a[row * AS + 4u * half_ + i] = lo | (hi << 16);
    }
    // The two lanes of a row are neighbours in one subgroup.
    bool other = subgroupShuffleXor(special, 1u);
    if (half_ == 0u) {
        s_row_special[row] = (special || other) ? 1u : 0u;
    }
    // Weights: invocation t writes B[k][2j], B[k][2j + 1] for j = t % 16, k = 2 (t / 16) + 0, 1.
    uint j = tid & 15u;
    bool wspecial = false;
    [[unroll]] for (uint d = 0u; d < 2u; d++) {
        uint k = 2u * (tid >> 4) + d;
        uint w0 = weight(2u * j, k);
        uint w1 = weight(2u * j + 1u, k);
        wspecial = wspecial || f16_is_nonfinite(w0) || f16_is_nonfinite(w1);
        s_b[k * BS + j] = w0 | (w1 << 16);
    }
    bool any_w = subgroupBallot(wspecial) != uvec4(0u);
    if (subgroupElect()) {
#ifdef TILE_EMULATED
        s_w_special[gl_SubgroupID] = any_w ? 1u : 0u;
#else
        s_w_special[sg] = any_w ? 1u : 0u;
#endif
    }
    barrier();

    // D = A B from +0, per subgroup 16 rows x 32 outputs.
    TILE_A a;
    TILE_LOAD_A(a, s_a, 16u * sg * AS, AS, TILE_ROW_MAJOR);
    [[unroll]] for (uint g = 0u; g < 2u; g++) {
        TILE_B b;
        TILE_LOAD_B(b, s_b, 8u * g, BS, TILE_ROW_MAJOR);
        TILE_C d;
        TILE_ZERO_C(d);
        d = TILE_MULADD(a, b, d);
        TILE_STORE_C(d, s_o, 16u * sg * BS + 8u * g, BS);
    }
    // Invocation tid publishes row tid / 2: a row of its own subgroup.
    TILE_SUBGROUP_BARRIER();
    if (!live) {
        return;
    }

    // Outputs 16 half_ .. + 15 of row `row`.
    uint res[16];
    [[unroll]] for (uint i = 0u; i < 8u; i++) {
        uint w = s_o[row * BS + 8u * half_ + i];
        res[2u * i] = w & 0xFFFFu;
        res[2u * i + 1u] = w >> 16;
    }
    bool emulate = s_row_special[row] != 0u || weights_special();
    if (emulate) {
        // adapter.comp's path for inf/NaN operands: the H25 group, emulated.
        uint x[16];
        [[unroll]] for (uint k = 0u; k < 16u; k += 2u) {
            uint w = s_a[row * AS + k / 2u];
            x[k] = w & 0xFFFFu;
            x[k + 1u] = w >> 16;
        }
        for (uint c = 0u; c < 16u; c++) {
            uint n = 16u * half_ + c;
            uint b[16];
            for (uint k = 0u; k < 16u; k++) {
                b[k] = weight(n, k);
            }
            res[c] = mma_group_f16(F16_POS_ZERO, x, b, 16, 25);
        }
    }
    uint at = r * 32u + 16u * half_;
    [[unroll]] for (uint i = 0u; i < 8u; i++) {
        raw_words[at / 2u + i] = res[2u * i] | (res[2u * i + 1u] << 16);
    }
    [[unroll]] for (uint i = 0u; i < 4u; i++) {
        out_words[at / 4u + i] = e4m3_from_f16(res[4u * i]) | (e4m3_from_f16(res[4u * i + 1u]) << 8)
            | (e4m3_from_f16(res[4u * i + 2u]) << 16) | (e4m3_from_f16(res[4u * i + 3u]) << 24);
    }
}
