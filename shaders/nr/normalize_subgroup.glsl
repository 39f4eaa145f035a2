// Body of the subgroup builds of the cosine normalisation (normalize_rtz_subgroup.comp,
// normalize_native_subgroup.comp): the operations and order of normalize_coop.glsl and norm.glsl
// (src/numerics/norm.rs), so the same bytes, laid out for GPUs that run it many units at a time.
//
// Eight invocations own a (row, head) unit: invocation j (0..7, aligned groups of eight lanes of
// a subgroup) owns channels 4j .. 4j + 3 of its q, k and v, so a subgroup of 32 runs four units
// and a workgroup of 128 sixteen. The one-subgroup-per-unit layout it replaces kept every lane's
// chain (load, sums, rsqrt table, E4 table, store) on one value and one unit per subgroup: on an
// H100 the kernel ran at a sixth of the memory's bandwidth, waiting on those chains
// (docs/performance.md, session 20). Here each lane runs four channels of three vectors side by
// side.
//
// The sums of squares (norm_lanes.glsl): lane j < 4 forms q's r[c] for its c = 4j + i from
// q[c] and q[c + 16] (lane j + 4's), lane 4 + j k's from k[c] (lane j's) and k[c + 16]; the
// stride tree runs inside each half of the eight.
//
// With WORDS (every offset a multiple of 4 elements) a lane loads each of q, k, v as one 8-byte
// word pair and stores each output as one 32-bit word; without it, as halves and bytes.
// Bindings, push constants and temperatures: normalize_io.glsl (binding 5: the table).
// The including shader enables the extensions of normalize_coop.glsl and the subgroup ones
// (basic, shuffle), and defines NORM_SUBGROUP (the device's f16 conversion of the temperature).
#include "e4m3.glsl"
#include "norm.glsl"
#include "normalize_io.glsl"

// (row, head) units per workgroup (nr::record::attention dispatches rows * heads / 16
// workgroups, rounded up).
const uint NORM_UNITS = 16u;
layout(local_size_x = 128) in;
layout(constant_id = 0) const bool VIT = false;
layout(constant_id = 1) const bool WORDS = false;

// The same buffers as words (aliases of normalize_io.glsl's bindings, used with WORDS only).
layout(std430, binding = 0) readonly buffer QkvPairs { uvec2 qkv_pairs[]; };
layout(std430, binding = 2) writeonly buffer QWords { uint q_words[]; };
layout(std430, binding = 3) writeonly buffer KWords { uint k_words[]; };
layout(std430, binding = 4) writeonly buffer VWords { uint v_words[]; };

layout(std430, binding = 5) readonly buffer Table { uint table_words[]; };
#include "tables.glsl"
#include "norm_lanes.glsl"

// Channels 4j .. 4j + 3 of vector `part` (0 q, 1 k, 2 v) of unit `unit`, as two f16 pairs.
uvec2 load_quad(uint unit, uint part, uint j) {
    uint at = pc.qkv_off + 96u * unit + 32u * part + 4u * j;
    if (WORDS) {
        return qkv_pairs[at >> 2];
    }
    return uvec2(uint(qkv[at]) | (uint(qkv[at + 1u]) << 16),
                 uint(qkv[at + 2u]) | (uint(qkv[at + 3u]) << 16));
}

void main() {
    uint lane = gl_SubgroupInvocationID;
    uint j = lane % 8u;
    uint slot = gl_SubgroupID * (gl_SubgroupSize / 8u) + lane / 8u;
    uint unit = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * NORM_UNITS + slot;
    bool live = unit < pc.rows * pc.heads;
    uvec2 q = uvec2(0u);
    uvec2 k = uvec2(0u);
    uvec2 v = uvec2(0u);
    if (live) {
        q = load_quad(unit, 0u, j);
        k = load_quad(unit, 1u, j);
        v = load_quad(unit, 2u, j);
    }

    // Every lane reaches every shuffle (the live test above only guards memory).
    uvec2 oq = subgroupShuffleXor(q, 4u);
    uvec2 ok = subgroupShuffleXor(k, 4u);
    bool is_q = j < 4u;
    uint sum = norm_lane_sum(is_q ? q : ok, is_q ? oq : k);
    uint first = lane - j;
    uint norm_q = rsqrt_table(subgroupShuffle(sum, first));
    uint norm_k = rsqrt_table(subgroupShuffle(sum, first + 4u));

    if (!live) {
        return;
    }
    uint t = norm_temperature(unit % pc.heads);
    uint qw = norm_q_word(q, norm_q, t, VIT);
    uint kw = norm_k_word(k, norm_k);
    uint vw = norm_v_word(v);
    uint dst = 32u * unit + 4u * j;
    if (WORDS) {
        q_words[(pc.q_off + dst) >> 2] = qw;
        k_words[(pc.k_off + dst) >> 2] = kw;
        v_words[(pc.v_off + dst) >> 2] = vw;
    } else {
        [[unroll]] for (uint i = 0u; i < 4u; i++) {
            qout[pc.q_off + dst + i] = uint8_t(qw >> (8u * i));
            kout[pc.k_off + dst + i] = uint8_t(kw >> (8u * i));
            vout[pc.v_off + dst + i] = uint8_t(vw >> (8u * i));
        }
    }
}
