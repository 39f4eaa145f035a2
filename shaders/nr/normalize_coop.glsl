// Body of the cooperative cosine normalisation of a QKV tensor into E4M3 q', k', v' (spec
// nr-network.md 1.5, 2.5, 8.9): `normalize_native.comp` (the device's f16 adds and multiplies,
// see f16.glsl) and `normalize_coop.comp` (the same body with emulated halves, which the tests
// prove on lavapipe). The operations and their order are those of normalize.glsl and norm.glsl
// (src/numerics/norm.rs), so the bytes are the same; only the work is laid out differently.
// Layouts as in normalize.glsl: qkv f16 [rows][3C] head-major (head h: q at 96h+0..31, k at +32,
// v at +64); q/k/v: E4M3 [rows][C], channel 32h + c.
//
// Unit u = row * heads + head is the 96 contiguous halves at 96u of qkv and the 32 contiguous
// bytes at 32u of each output. 32 invocations own a unit, invocation c its channel c of q, k and
// v: every load and store of the unit is contiguous and no invocation branches on q/k/v.
// (normalize.glsl, one invocation per (row, head, part), suits lavapipe's per-lane loops but on
// a GPU its adjacent lanes branch apart, its 32-half array lives in local memory and its accesses
// are strided.) The sum of squares of norm.glsl runs across the unit through shared memory:
// invocation c < 16 forms r[c] of q, invocation 16 + c r[c] of k (one fused half FMA each),
// then the stride levels 8/4/2/1 of f16 adds; the two level-1 invocations look the rsqrt up, so
// a unit takes one rsqrt per vector. Only workgroup barriers synchronise (no subgroup
// operations: subgroup sizes differ between devices); invocations of units past the last row
// load nothing and store nothing but reach every barrier.
//   window q' = E4(f16(f16(q*norm) * f16(temperature)))
//   ViT    q' = E4(f16(f16(f16(q*norm) * 5.65625) * f16(temperature)))
//   k'        = E4(f16(k*norm_k)),  v' = E4(v)
// Bindings, push constants and temperatures: normalize_io.glsl.
// The including shader enables GL_GOOGLE_include_directive, GL_EXT_control_flow_attributes,
// GL_EXT_shader_8bit_storage, GL_EXT_shader_explicit_arithmetic_types_int8 and
// GL_EXT_shader_16bit_storage.
#include "e4m3.glsl"
#include "norm.glsl"
#include "normalize_io.glsl"

// (row, head) units per workgroup of 32 * NORM_UNITS invocations (nr::record::attention
// dispatches rows * heads / NORM_UNITS workgroups, rounded up).
const uint NORM_UNITS = 4u;
layout(local_size_x = 128) in;
layout(constant_id = 0) const bool VIT = false;

// Built from the Rust numerics (`numerics::tables::NORMALIZE`): E4(x) for every half x at byte
// x, then rsqrt(x) (recip.glsl's correctly rounded one) as halves from byte 65536. One load
// instead of the estimate-and-correct sequence, which two lanes of each unit ran while the
// others waited, and one per E4M3 encoding.
layout(std430, binding = 5) readonly buffer Table { uint table_words[]; };
#include "tables.glsl"

shared uint s_qk[NORM_UNITS * 64u];  // per unit: q halves at [0, 32), k halves at [32, 64)
shared uint s_sum[NORM_UNITS * 32u]; // per unit: q's r[0..16) at [0, 16), k's at [16, 32)
shared uint s_norm[NORM_UNITS * 2u]; // per unit: norm of q, norm of k

void main() {
    uint w = gl_LocalInvocationID.x / 32u;
    uint c = gl_LocalInvocationID.x % 32u;
    uint unit = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * NORM_UNITS + w;
    bool live = unit < pc.rows * pc.heads;
    uint q = 0u;
    uint k = 0u;
    uint v = 0u;
    if (live) {
        uint src = pc.qkv_off + 96u * unit + c;
        q = uint(qkv[src]);
        k = uint(qkv[src + 32u]);
        v = uint(qkv[src + 64u]);
    }
    s_qk[64u * w + c] = q;
    s_qk[64u * w + 32u + c] = k;
    barrier();

    // r[i] = sumsq_pair(x[i], x[i + 16]) of vector `part` (0 q, 1 k).
    uint part = c / 16u;
    uint i = c % 16u;
    uint lo = s_qk[64u * w + 32u * part + i];
    uint hi = s_qk[64u * w + 32u * part + i + 16u];
    uint r = sumsq_pair(lo, hi);
    uint base = 32u * w + 16u * part;
    s_sum[base + i] = r;
    barrier();
    // Levels 8, 4, 2: r[i] = r[i] + r[i + s]. A level reads [s, 2s) and writes [0, s), which the
    // next level does not read, so one barrier per level suffices.
    [[dont_unroll]] for (uint s = 8u; s >= 2u; s >>= 1) {
        if (i < s) {
            r = f16_add(r, s_sum[base + i + s]);
            s_sum[base + i] = r;
        }
        barrier();
    }
    if (i == 0u) {
        uint sum = f16_add(r, s_sum[base + 1u]);
        s_norm[2u * w + part] = rsqrt_table(sum);
    }
    barrier();
    uint norm_q = s_norm[2u * w];
    uint norm_k = s_norm[2u * w + 1u];

    if (!live) {
        return;
    }
    uint dst = 32u * unit + c;
    vout[pc.v_off + dst] = uint8_t(table_e4(v));
    kout[pc.k_off + dst] = uint8_t(table_e4(f16_mul(k, norm_k)));
    uint t = norm_temperature(unit % pc.heads);
    uint x = f16_mul(q, norm_q);
    if (VIT) {
        x = f16_mul(x, NORM_VIT_Q_SCALE);
    }
    qout[pc.q_off + dst] = uint8_t(table_e4(f16_mul(x, t)));
}
