// Body of the numerics test kernels (`numerics.comp`: the portable forms; `numerics_fast.comp`:
// the forms of the RTZ builds; `numerics_native.comp`: native f16 without the RTZ mode, as the
// tensor route's cooperative-matrix kernels compile them): applies one shaders/lib function (chosen by specialization
// constant FUNC) to every element; element i reads the four words args[4i..4i+3] and writes
// out[i]. The including shader enables GL_GOOGLE_include_directive.
#include "f16.glsl"
#include "e4m3.glsl"
#include "e4m3_widen.glsl"
#include "silu.glsl"
#include "exp.glsl"
#include "recip.glsl"
#include "ops.glsl"

layout(local_size_x = 64) in;
layout(constant_id = 0) const uint FUNC = 0u;
layout(std430, binding = 0) readonly buffer Args { uint args[]; };
layout(std430, binding = 1) writeonly buffer Out { uint outv[]; };
layout(push_constant) uniform Push { uint count; } pc;

void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i >= pc.count) {
        return;
    }
    uint a = args[4u * i];
    uint b = args[4u * i + 1u];
    uint c = args[4u * i + 2u];
    uint d = args[4u * i + 3u];
    uint r = 0u;
    switch (FUNC) {
    case 0u: r = e4m3_from_f16(a); break;
    case 1u: r = e4m3_to_f16(a); break;
    case 2u: r = silu(a); break;
    case 3u: r = exp_window(a); break;
    case 4u: r = exp_vit(a); break;
    case 5u: r = rsqrt(a); break;
    case 6u: r = recip(a); break;
    case 7u: r = f16_from_f32_rtz(uintBitsToFloat(a)); break;
    case 8u: r = f16_from_f32_rne(uintBitsToFloat(a)); break;
    case 9u: r = f16_add(a, b); break;
    case 10u: r = f16_mul(a, b); break;
    case 11u: r = f16_fma(a, b, c); break;
    case 12u: r = pool2x2(a, b, c, d); break;
    case 13u: r = decoder_merge(a, b, c); break;
    case 14u: r = post_blend(a, b, c, d); break;
    case 15u: r = floatBitsToUint(f16_to_f32(a)); break;
    case 16u: r = e4m3_from_f32(uintBitsToFloat(a)); break;
    case 17u: r = f16_mul_pair(a | (c << 16), b | (d << 16)); break;
    // The tensor route's table-free pair forms: halves a (low) and b (high).
    case 18u: r = exp_window_pair(a | (b << 16)); break;
    case 19u: r = exp_vit_pair(a | (b << 16)); break;
    case 20u: r = e4_round_pair(a | (b << 16)); break;
    case 21u: r = e4_publish_pair(a | (b << 16)); break;
    default: r = 0xDEADBEEFu; break;
    }
    outv[i] = r;
}
