// Interface of the normalisation kernels (normalize.glsl, normalize_coop.glsl): the bindings,
// the push constants and the per-head temperature (f32 little-endian, read as bytes: the
// weight slice may be only 2-aligned), all set by `nr::record::attention::record_normalize`.
// The cooperative kernels add binding 5 (the lookup table).
#include "f16.glsl"

layout(std430, binding = 0) readonly buffer Qkv { uint16_t qkv[]; };
layout(std430, binding = 1) readonly buffer Temps { uint8_t temps[]; };
layout(std430, binding = 2) writeonly buffer QOut { uint8_t qout[]; };
layout(std430, binding = 3) writeonly buffer KOut { uint8_t kout[]; };
layout(std430, binding = 4) writeonly buffer VOut { uint8_t vout[]; };

layout(push_constant) uniform Push {
    uint rows;
    uint heads;
    uint qkv_off;  // elements
    uint temp_off; // bytes
    uint q_off;    // bytes
    uint k_off;
    uint v_off;
} pc;

#include "norm_temperature.glsl"
