// Exact conversions between the caller's image formats and the frame buffers (import/export):
// the integer code of a normalised texel, the correctly rounded f32 of code / max, and the sRGB
// code of a texel that the sampler decoded to linear.
#ifndef OPENNGX_FRAME_FORMATS_GLSL
#define OPENNGX_FRAME_FORMATS_GLSL
#include "frame.glsl"

// Correctly rounded (nearest even) f32 of n / d for 0 <= n <= d < 2^24, d > 0, by integer long
// division: the same value Rust's `n as f32 / d as f32` gives (IEEE division).
float frame_ratio(uint n, uint d) {
    if (n == 0u) {
        return 0.0;
    }
    if (n >= d) {
        return 1.0;
    }
    uint rem = n;
    // Skip to the leading one: n/d lies in [2^-lead, 2^-(lead-1)).
    int lead = 0;
    for (int i = 0; i < 26; ++i) {
        if (rem >= d) {
            break;
        }
        rem <<= 1;
        lead += 1;
    }
    // rem >= d now: 25 quotient bits (24 kept + 1 rounding bit), the first of them the one.
    uint q = 0u;
    for (int i = 0; i < 25; ++i) {
        q <<= 1;
        if (rem >= d) {
            rem -= d;
            q |= 1u;
        }
        rem <<= 1;
    }
    uint m24 = q >> 1;
    if ((q & 1u) == 1u && (rem != 0u || (m24 & 1u) == 1u)) {
        m24 += 1u;
    }
    // value = m24 * 2^-23 * 2^-lead; a carry to 2^24 moves into the exponent by itself.
    return uintBitsToFloat((uint(127 - lead) << 23) + (m24 - 0x00800000u));
}

// The integer code of a UNORM texel the sampler returned as c / max (within a few ulp):
// floor(v * max + 0.5), clamped to 0..max.
uint frame_unorm_code(float v, uint max_code) {
    precise float s = frame_clamp01(v) * float(max_code) + 0.5;
    uint code = uint(floor(s));
    return code > max_code ? max_code : code;
}

// The SNORM code of a texel the sampler returned as max(c / max, -1) (within a few ulp):
// floor(v * max + 0.5), clamped to -max..max (the code -max - 1 decodes as -max does).
int frame_snorm_code(float v, uint max_code) {
    precise float s = clamp(v, -1.0, 1.0) * float(max_code) + 0.5;
    int code = int(floor(s));
    return clamp(code, -int(max_code), int(max_code));
}

// numerics::normalized::unorm: RN_f32(c / max) (codes above max are 1).
float frame_unorm(uint code, uint max_code) {
    return frame_ratio(min(code, max_code), max_code);
}

// numerics::normalized::snorm: max(RN_f32(c / max), -1), the sign applied to the correctly
// rounded magnitude (round-to-nearest-even is symmetric).
float frame_snorm(int code, uint max_code) {
    int c = clamp(code, -int(max_code), int(max_code));
    float m = frame_ratio(uint(abs(c)), max_code);
    return c < 0 ? -m : m;
}

// numerics::normalized::invert_depth: RN_f32(1 - d).
float frame_invert_depth(float d) {
    precise float r = 1.0 - d;
    return r;
}

// Midpoints between the linear values of adjacent 8-bit sRGB codes (c and c + 1, the Vulkan
// sRGB EOTF evaluated in f64, midpoint rounded to f32). A decoded texel lies far closer to its
// own code's value than half the gap (the narrowest gap, between codes 0 and 1, is 3.0e-4), so
// counting the midpoints below it recovers the code whatever decoder precision the driver has.
const uint FRAME_SRGB_MID[255] = uint[255](
    0x391F22B4u, 0x39EEB40Eu, 0x3A46EB61u, 0x3A8B3E5Du, 0x3AB3070Au, 0x3ADACFB7u,
    0x3B014C32u, 0x3B153089u, 0x3B2914DFu, 0x3B3CF935u, 0x3B511E77u, 0x3B66218Eu,
    0x3B7C5A8Du, 0x3B89E3EEu, 0x3B96370Au, 0x3BA328DAu, 0x3BB0BB93u, 0x3BBEF15Cu,
    0x3BCDCC55u, 0x3BDD4E91u, 0x3BED7A19u, 0x3BFE50EEu, 0x3C07EA84u, 0x3C11042Cu,
    0x3C1A7661u, 0x3C244214u, 0x3C2E6831u, 0x3C38E9A0u, 0x3C43C747u, 0x3C4F0207u,
    0x3C5A9ABEu, 0x3C669249u, 0x3C72E980u, 0x3C7FA13Au, 0x3C865D24u, 0x3C8D1ABEu,
    0x3C9409D1u, 0x3C9B2AC4u, 0x3CA27DFBu, 0x3CAA03D8u, 0x3CB1BCC0u, 0x3CB9A911u,
    0x3CC1C92Du, 0x3CCA1D73u, 0x3CD2A641u, 0x3CDB63F2u, 0x3CE456E5u, 0x3CED7F73u,
    0x3CF6DDF8u, 0x3D003966u, 0x3D051F24u, 0x3D0A2061u, 0x3D0F3D4Au, 0x3D14760Au,
    0x3D19CACAu, 0x3D1F3BB6u, 0x3D24C8F7u, 0x3D2A72B6u, 0x3D30391Eu, 0x3D361C56u,
    0x3D3C1C88u, 0x3D4239DBu, 0x3D487477u, 0x3D4ECC85u, 0x3D55422Au, 0x3D5BD58Fu,
    0x3D6286D9u, 0x3D695630u, 0x3D7043B9u, 0x3D774F99u, 0x3D7E79F8u, 0x3D82E17Cu,
    0x3D869561u, 0x3D8A58BBu, 0x3D8E2B9Eu, 0x3D920E1Cu, 0x3D960046u, 0x3D9A022Fu,
    0x3D9E13E7u, 0x3DA23582u, 0x3DA66710u, 0x3DAAA8A3u, 0x3DAEFA4Bu, 0x3DB35C1Bu,
    0x3DB7CE24u, 0x3DBC5075u, 0x3DC0E321u, 0x3DC58638u, 0x3DCA39CAu, 0x3DCEFDE9u,
    0x3DD3D2A4u, 0x3DD8B80Cu, 0x3DDDAE32u, 0x3DE2B525u, 0x3DE7CCF6u, 0x3DECF5B5u,
    0x3DF22F71u, 0x3DF77A3Au, 0x3DFCD621u, 0x3E01219Au, 0x3E03E0C3u, 0x3E06A891u,
    0x3E09790Cu, 0x3E0C523Eu, 0x3E0F342Cu, 0x3E121EDEu, 0x3E15125Du, 0x3E180EB0u,
    0x3E1B13DEu, 0x3E1E21EEu, 0x3E2138E8u, 0x3E2458D4u, 0x3E2781B9u, 0x3E2AB39Du,
    0x3E2DEE89u, 0x3E313283u, 0x3E347F93u, 0x3E37D5C0u, 0x3E3B3511u, 0x3E3E9D8Du,
    0x3E420F3Bu, 0x3E458A23u, 0x3E490E4Au, 0x3E4C9BB9u, 0x3E503276u, 0x3E53D288u,
    0x3E577BF6u, 0x3E5B2EC7u, 0x3E5EEB01u, 0x3E62B0ACu, 0x3E667FCEu, 0x3E6A586Eu,
    0x3E6E3A93u, 0x3E722643u, 0x3E761B85u, 0x3E7A1A5Fu, 0x3E7E22D9u, 0x3E811A7Cu,
    0x3E832862u, 0x3E853B21u, 0x3E8752BDu, 0x3E896F39u, 0x3E8B9098u, 0x3E8DB6DEu,
    0x3E8FE20Du, 0x3E921229u, 0x3E944734u, 0x3E968133u, 0x3E98C028u, 0x3E9B0416u,
    0x3E9D4D01u, 0x3E9F9AEBu, 0x3EA1EDD9u, 0x3EA445CCu, 0x3EA6A2C7u, 0x3EA904CFu,
    0x3EAB6BE6u, 0x3EADD80Fu, 0x3EB0494Du, 0x3EB2BFA3u, 0x3EB53B15u, 0x3EB7BBA4u,
    0x3EBA4155u, 0x3EBCCC2Au, 0x3EBF5C26u, 0x3EC1F14Cu, 0x3EC48B9Fu, 0x3EC72B22u,
    0x3EC9CFD8u, 0x3ECC79C4u, 0x3ECF28E9u, 0x3ED1DD4Au, 0x3ED496E9u, 0x3ED755C9u,
    0x3EDA19EEu, 0x3EDCE35Au, 0x3EDFB211u, 0x3EE28614u, 0x3EE55F67u, 0x3EE83E0Du,
    0x3EEB2208u, 0x3EEE0B5Bu, 0x3EF0FA0Au, 0x3EF3EE16u, 0x3EF6E784u, 0x3EF9E654u,
    0x3EFCEA8Bu, 0x3EFFF42Bu, 0x3F01819Bu, 0x3F030BD8u, 0x3F0498CEu, 0x3F06287Eu,
    0x3F07BAE9u, 0x3F095011u, 0x3F0AE7F7u, 0x3F0C829Cu, 0x3F0E2002u, 0x3F0FC02Au,
    0x3F116316u, 0x3F1308C6u, 0x3F14B13Du, 0x3F165C7Bu, 0x3F180A82u, 0x3F19BB53u,
    0x3F1B6EEFu, 0x3F1D2558u, 0x3F1EDE8Fu, 0x3F209A95u, 0x3F22596Du, 0x3F241B16u,
    0x3F25DF92u, 0x3F27A6E3u, 0x3F297109u, 0x3F2B3E07u, 0x3F2D0DDDu, 0x3F2EE08Du,
    0x3F30B618u, 0x3F328E7Fu, 0x3F3469C4u, 0x3F3647E7u, 0x3F3828EAu, 0x3F3A0CCFu,
    0x3F3BF396u, 0x3F3DDD41u, 0x3F3FC9D1u, 0x3F41B947u, 0x3F43ABA5u, 0x3F45A0EBu,
    0x3F47991Cu, 0x3F499438u, 0x3F4B9240u, 0x3F4D9336u, 0x3F4F971Bu, 0x3F519DF0u,
    0x3F53A7B6u, 0x3F55B46Fu, 0x3F57C41Cu, 0x3F59D6BDu, 0x3F5BEC55u, 0x3F5E04E5u,
    0x3F60206Du, 0x3F623EEEu, 0x3F64606Bu, 0x3F6684E4u, 0x3F68AC5Bu, 0x3F6AD6D0u,
    0x3F6D0444u, 0x3F6F34BAu, 0x3F716832u, 0x3F739EADu, 0x3F75D82Cu, 0x3F7814B2u,
    0x3F7A543Eu, 0x3F7C96D2u, 0x3F7EDC6Fu
);

// The 8-bit sRGB code of a linear value decoded from an _SRGB view (binary search).
uint frame_srgb_code(float linear) {
    uint lo = 0u;
    uint hi = 255u;
    // Invariant: the code is in [lo, hi]; code = number of midpoints below `linear`.
    while (lo < hi) {
        uint mid = (lo + hi) >> 1;
        if (linear > uintBitsToFloat(FRAME_SRGB_MID[mid])) {
            lo = mid + 1u;
        } else {
            hi = mid;
        }
    }
    return lo;
}

#endif
