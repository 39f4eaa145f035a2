// Body of the cosine normalisation of a QKV tensor for the portable route (`normalize.comp`) into
// E4M3 q', k', v' (spec nr-network.md 1.5, 2.5, 8.9). qkv: f16 [rows][3C] head-major (head h: q
// at 96h+0..31, k at +32, v at +64); q/k/v: E4M3 [rows][C], channel 32h + c. One invocation per
// (row, head, part), which suits lavapipe (CI's device); devices with native f16 run the
// cooperative layout of normalize_coop.glsl (same operations, same bytes) instead:
//   window q' = E4(f16(f16(q*norm) * f16(temperature)))
//   ViT    q' = E4(f16(f16(f16(q*norm) * 5.65625) * f16(temperature)))
//   k'        = E4(f16(k*norm_k)),  v' = E4(v)
// Bindings, push constants and temperatures: normalize_io.glsl.
// Loops are [[dont_unroll]]: unrolled copies of the f16/E4M3 helpers multiply driver compile
// time (seconds on lavapipe) for no gain in a kernel bound by integer arithmetic.
// The including shader enables GL_GOOGLE_include_directive, GL_EXT_control_flow_attributes,
// GL_EXT_shader_8bit_storage, GL_EXT_shader_explicit_arithmetic_types_int8 and
// GL_EXT_shader_16bit_storage.
#include "e4m3.glsl"
#include "norm.glsl"
#include "normalize_io.glsl"

layout(local_size_x = 64) in;
layout(constant_id = 0) const bool VIT = false;

void main() {
    uint idx = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * 64u
        + gl_LocalInvocationID.x;
    uint part = idx % 3u;
    uint rh = idx / 3u;
    uint head = rh % pc.heads;
    uint row = rh / pc.heads;
    if (row >= pc.rows) {
        return;
    }
    uint c = pc.heads * 32u;
    uint src = pc.qkv_off + row * 3u * c + 96u * head + 32u * part;
    uint dst = row * c + 32u * head;
    uint v[32];
    [[dont_unroll]] for (uint i = 0u; i < 32u; i++) {
        v[i] = uint(qkv[src + i]);
    }
    if (part == 2u) {
        [[dont_unroll]] for (uint i = 0u; i < 32u; i++) {
            vout[pc.v_off + dst + i] = uint8_t(e4m3_from_f16(v[i]));
        }
        return;
    }
    uint norm = norm_cosine(v);
    if (part == 1u) {
        [[dont_unroll]] for (uint i = 0u; i < 32u; i++) {
            kout[pc.k_off + dst + i] = uint8_t(e4m3_from_f16(f16_mul(v[i], norm)));
        }
        return;
    }
    uint t = norm_temperature(head);
    [[dont_unroll]] for (uint i = 0u; i < 32u; i++) {
        uint x = f16_mul(v[i], norm);
        if (VIT) {
            x = f16_mul(x, NORM_VIT_Q_SCALE);
        }
        qout[pc.q_off + dst + i] = uint8_t(e4m3_from_f16(f16_mul(x, t)));
    }
}
