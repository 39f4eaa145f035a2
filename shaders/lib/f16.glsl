// IEEE binary16 on bit patterns (mirror of src/numerics/f16.rs). Halves travel as the low 16
// bits of a uint; every rounding to f16 is done here on integer bits, so no compiler can fold an
// f32 -> f16 -> f32 round trip away. f16 add/mul go through f32: for +, -, * of halves the f32
// result rounded once more to f16 equals the correctly rounded f16 result (24 >= 2*11 + 2).
// Arithmetic results that are NaN are canonicalised to F16_QNAN (0x7E00), as in the Rust code.
#ifndef OPENNGX_F16_GLSL
#define OPENNGX_F16_GLSL

const uint F16_POS_ZERO = 0x0000u;
const uint F16_NEG_ZERO = 0x8000u;
const uint F16_POS_INF = 0x7C00u;
const uint F16_NEG_INF = 0xFC00u;
const uint F16_QNAN = 0x7E00u;
const uint F16_ONE = 0x3C00u;
const uint F16_MAX = 0x7BFFu;

bool f16_is_nan(uint h) { return (h & 0x7C00u) == 0x7C00u && (h & 0x03FFu) != 0u; }
bool f16_is_inf(uint h) { return (h & 0x7FFFu) == 0x7C00u; }
bool f16_is_nonfinite(uint h) { return (h & 0x7C00u) == 0x7C00u; }
bool f16_is_zero(uint h) { return (h & 0x7FFFu) == 0u; }

// Unbiased exponent of a finite nonzero half; subnormals count as -14.
int f16_exponent(uint h) {
    int e = int((h >> 10) & 0x1Fu);
    return e == 0 ? -14 : e - 15;
}

// Integer significand: value = f16_significand(h) * 2^(f16_exponent(h) - 10).
uint f16_significand(uint h) {
    uint e = (h >> 10) & 0x1Fu;
    uint m = h & 0x3FFu;
    return e == 0u ? m : (m | 0x400u);
}

// Exact decode (every half is an f32 normal or zero); built on bits, no float arithmetic.
float f16_to_f32(uint h) {
    uint sign = (h & 0x8000u) << 16;
    uint e = (h >> 10) & 0x1Fu;
    uint m = h & 0x3FFu;
    if (e == 0u) {
        if (m == 0u) {
            return uintBitsToFloat(sign);
        }
        int p = findMSB(m); // value m * 2^-24 = 1.f * 2^(p - 24)
        uint frac = (m << uint(23 - p)) & 0x7FFFFFu;
        return uintBitsToFloat(sign | (uint(p - 24 + 127) << 23) | frac);
    }
    if (e == 0x1Fu) {
        return uintBitsToFloat(sign | 0x7F800000u | (m << 13));
    }
    return uintBitsToFloat(sign | ((e + 112u) << 23) | (m << 13));
}

// f32 bits -> f16. rtz: round toward zero (finite overflow gives +-65504), else round to
// nearest with ties decided by `tie`: 0 = to even, +1 = away from zero, -1 = toward zero (the
// last two serve the fused FMA, where the true value lies just beside an f32 tie).
uint f16_from_f32_bits(uint b, bool rtz, int tie) {
    uint sign = (b >> 16) & 0x8000u;
    int e = int((b >> 23) & 0xFFu);
    uint m = b & 0x7FFFFFu;
    if (e == 255) {
        return m != 0u ? (sign | F16_QNAN) : (sign | F16_POS_INF);
    }
    if (e == 0) {
        return sign; // f32 zero or subnormal: far below half of the smallest half subnormal
    }
    int ue = e - 127;
    if (ue > 15) {
        return rtz ? (sign | F16_MAX) : (sign | F16_POS_INF);
    }
    uint sig = m | 0x800000u;
    int shift = ue >= -14 ? 13 : 13 + (-14 - ue);
    if (shift > 24) {
        return sign;
    }
    uint kept = sig >> uint(shift);
    uint rem = sig & ((1u << uint(shift)) - 1u);
    uint halfway = 1u << uint(shift - 1);
    uint q = kept;
    if (!rtz) {
        bool up = rem > halfway;
        if (rem == halfway) {
            up = tie > 0 || (tie == 0 && (kept & 1u) == 1u);
        }
        if (up) {
            q += 1u;
        }
    }
    // Normals: the exponent field minus one plus q (with its implicit bit) handles the carry.
    uint bits = ue >= -14 ? ((uint(ue + 14) << 10) + q) : q;
    if (bits >= 0x7C00u) {
        return rtz ? (sign | F16_MAX) : (sign | F16_POS_INF);
    }
    return sign | bits;
}

uint f16_from_f32_rne(float x) { return f16_from_f32_bits(floatBitsToUint(x), false, 0); }
uint f16_from_f32_rtz(float x) { return f16_from_f32_bits(floatBitsToUint(x), true, 0); }

uint f16_canon(uint h) { return f16_is_nan(h) ? F16_QNAN : h; }

// f16_canon of both halves of a word: a half is NaN when its magnitude exceeds 0x7C00, i.e.
// when adding 0x03FF sets its bit 15 (no carry crosses into the other half). The tensor cores
// return a NaN accumulator (a NaN seed) as their own NaN where the model keeps 0x7E00;
// attention_block_coopmat.glsl and ffn_coopmat.glsl canonicalise their raw f16 outputs with
// this (docs/numerics.md).
uint f16_canon_pair(uint w) {
    uint nan = ((((w & 0x7FFF7FFFu) + 0x03FF03FFu) & 0x80008000u) >> 15) * 0xFFFFu;
    return (w & ~nan) | ((F16_QNAN | (F16_QNAN << 16)) & nan);
}

// Half i (0..3) of four halves packed as two words (low half first), as the kernels that move
// four channels in one 8-byte load unpack them.
uint f16_quad_half(uvec2 p, uint i) { return (p[i >> 1] >> (16u * (i & 1u))) & 0xFFFFu; }

uint f16_neg(uint h) { return h ^ 0x8000u; }

#ifdef OPENNGX_F32_RTZ
// Shaders that set the round-toward-zero f32 mode (OPENNGX_F32_RTZ) get s = RZ(x + y). The
// exact sum is then larger in magnitude than s exactly when s is inexact, and inexactness shows
// as s - big != small: that subtraction is exact (Sterbenz: with equal signs big <= s <= 2 big;
// with opposite signs either |s| >= |big| / 2 or x + y itself was exact). f16 rounding points
// are f32 values, so an inexact s can only round differently when it sits on a tie, which the
// larger true value breaks away from zero. Operands are halves or exact products of halves, so
// nothing here is an f32 subnormal or overflows.
uint f16_from_f32_sum_rtz(float x, float y) {
    bool xbig = abs(x) >= abs(y);
    float big = xbig ? x : y;
    float small = xbig ? y : x;
    precise float s = x + y;
    precise float back = s - big;
    return f16_from_f32_bits(floatBitsToUint(s), false, back != small ? 1 : 0);
}
#endif

#ifdef OPENNGX_F16_NATIVE
// Kernels that declare RoundingModeRTE and DenormPreserve for 16-bit floats (the `*_rtz` builds
// and normalize_native.comp, on devices with Capabilities::native_f16) add and multiply halves
// with the device's own f16 arithmetic: Vulkan rounds those correctly, so the bytes are the
// model's; a NaN is canonicalised as in the emulated forms. (Fused multiply-adds stay emulated:
// Vulkan does not promise a single rounding for an f16 fma.)
//
// Bits <-> float16_t through OpBitcast between uint and f16vec2: no 16-bit integer type appears
// (glslang lowers unpackFloat2x16 through one), so the only device feature these builds use
// beyond the portable ones is shaderFloat16, which the exact route requires anyway. The
// including shader enables GL_EXT_spirv_intrinsics.
spirv_instruction(id = 124) f16vec2 f16_bitcast_from_u32(uint x);  // OpBitcast
spirv_instruction(id = 124) uint f16_bitcast_to_u32(f16vec2 x);    // OpBitcast
float16_t f16_native(uint h) { return f16_bitcast_from_u32(h).x; }
uint f16_bits(float16_t x) { return f16_bitcast_to_u32(f16vec2(x, float16_t(0.0))) & 0xFFFFu; }

uint f16_add(uint a, uint b) {
    precise float16_t s = f16_native(a) + f16_native(b);
    return f16_canon(f16_bits(s));
}

uint f16_mul(uint a, uint b) {
    precise float16_t p = f16_native(a) * f16_native(b);
    return f16_canon(f16_bits(p));
}

// f16_mul of both halves of a and b at once (one packed multiply; each half rounds on its own),
// NaN halves canonicalised.
uint f16_mul_pair(uint a, uint b) {
    precise f16vec2 p = f16_bitcast_from_u32(a) * f16_bitcast_from_u32(b);
    return f16_canon_pair(f16_bitcast_to_u32(p));
}

// Both halves of `w` as f32 (exact), and two f32 values that are halves (no rounding) as a
// pair: the conversions of the pair forms (exp.glsl, e4m3_widen.glsl).
vec2 f16_pair_to_vec2(uint w) { return vec2(f16_bitcast_from_u32(w)); }
uint f16_pair_from_vec2_exact(vec2 x) { return f16_bitcast_to_u32(f16vec2(x)); }

// f16_add and f16_mul of both halves at once with nothing canonicalised: one packed add or
// multiply, for results that cannot be NaN or whose NaN the caller discards (it says which).
// An add after such a multiply may be fused by the driver (docs/numerics.md): callers keep
// exactness without relying on `precise`.
uint f16_add_pair_raw(uint a, uint b) {
    precise f16vec2 s = f16_bitcast_from_u32(a) + f16_bitcast_from_u32(b);
    return f16_bitcast_to_u32(s);
}

uint f16_mul_pair_raw(uint a, uint b) {
    precise f16vec2 p = f16_bitcast_from_u32(a) * f16_bitcast_from_u32(b);
    return f16_bitcast_to_u32(p);
}
#else
// f16(a + b), one rounding.
uint f16_add(uint a, uint b) {
#ifdef OPENNGX_F32_RTZ
    if (!f16_is_nonfinite(a) && !f16_is_nonfinite(b)) {
        return f16_from_f32_sum_rtz(f16_to_f32(a), f16_to_f32(b));
    }
#endif
    precise float s = f16_to_f32(a) + f16_to_f32(b);
    return f16_canon(f16_from_f32_rne(s));
}

// f16(a * b), one rounding (the product of two halves is exact in f32).
uint f16_mul(uint a, uint b) {
    precise float p = f16_to_f32(a) * f16_to_f32(b);
    return f16_canon(f16_from_f32_rne(p));
}

// f16_mul of both halves of a and b.
uint f16_mul_pair(uint a, uint b) {
    return f16_mul(a & 0xFFFFu, b & 0xFFFFu) | (f16_mul(a >> 16, b >> 16) << 16);
}

uint f16_add_pair_raw(uint a, uint b) {
    return f16_add(a & 0xFFFFu, b & 0xFFFFu) | (f16_add(a >> 16, b >> 16) << 16);
}

vec2 f16_pair_to_vec2(uint w) { return vec2(f16_to_f32(w & 0xFFFFu), f16_to_f32(w >> 16)); }
uint f16_pair_from_vec2_exact(vec2 x) { return f16_from_f32_rne(x.x) | (f16_from_f32_rne(x.y) << 16); }

uint f16_mul_pair_raw(uint a, uint b) { return f16_mul_pair(a, b); }
#endif

#if defined(OPENNGX_F32_RTZ) && defined(OPENNGX_F16_NATIVE)
// f16(a*b + c), one rounding, for finite halves, in builds with both the RTZ f32 mode and the
// native RNE f16 conversions: the product is exact in f32 and s = RZ(p + c) (inexactness shows
// as in f16_from_f32_sum_rtz). Setting the last bit of an inexact s rounds the exact sum to odd
// at f32 precision, and rounding that to f16 (11 or fewer significant bits, 13 or more below
// f32's 24) to nearest even gives the exact sum's f16 RNE: round-to-odd keeps every f16 tie and
// midpoint decision. About a quarter of the integer form's instructions. An exact zero keeps the
// sign of the f32 add (RZ and RNE agree on it).
uint f16_fma_finite(uint a, uint b, uint c) {
    precise float x = float(f16_native(a)) * float(f16_native(b));
    float y = float(f16_native(c));
    bool xbig = abs(x) >= abs(y);
    float big = xbig ? x : y;
    float small = xbig ? y : x;
    precise float s = x + y;
    precise float back = s - big;
    uint odd = floatBitsToUint(s) | (back != small ? 1u : 0u);
    return f16_bits(float16_t(uintBitsToFloat(odd)));
}
#endif

#if defined(OPENNGX_F16_NATIVE) && !defined(OPENNGX_F32_RTZ)
// f16(a*b + c), one rounding, for finite halves, in native-f16 builds without the RTZ f32 mode
// (the tensor route's cooperative-matrix kernels): the f32 sum s = RN(p + c) and its exact
// error (TwoSum, as in f16_fma below) give the exact sum rounded to odd at f32 precision (an
// inexact s with an even last bit moves one ulp toward the true value; the true value lies
// strictly between the two), and the device's RNE conversion of that to f16 is the exact sum's
// f16 RNE, as in f16_fma_finite. An exact zero keeps the sign of the f32 add. Mirror: the
// numerics test `kernels_round_to_odd_fma_equals_fma`; on the device, test/numerics_native.
uint f16_fma_finite_rn(uint a, uint b, uint c) {
    precise float p = float(f16_native(a)) * float(f16_native(b));
    float cf = float(f16_native(c));
    precise float s = p + cf;
    precise float bv = s - p;
    precise float err = (p - (s - bv)) + (cf - bv);
    uint sb = floatBitsToUint(s);
    if (err != 0.0 && (sb & 1u) == 0u) {
        sb = ((err > 0.0) == (s > 0.0)) ? sb + 1u : sb - 1u;
    }
    return f16_bits(float16_t(uintBitsToFloat(sb)));
}
#endif

// The fused half FMA f16(a*b + c) with a single rounding. The product is exact in f32; the sum
// s = fl32(p + c) and its exact error (TwoSum) decide ties: the true value can only round
// differently from s when s is exactly halfway between two halves.
uint f16_fma(uint a, uint b, uint c) {
    if (f16_is_nonfinite(a) || f16_is_nonfinite(b) || f16_is_nonfinite(c)) {
        precise float r = f16_to_f32(a) * f16_to_f32(b);
        precise float rs = r + f16_to_f32(c);
        return f16_canon(f16_from_f32_rne(rs));
    }
#if defined(OPENNGX_F32_RTZ) && defined(OPENNGX_F16_NATIVE)
    return f16_fma_finite(a, b, c);
#endif
#if defined(OPENNGX_F16_NATIVE) && !defined(OPENNGX_F32_RTZ)
    return f16_fma_finite_rn(a, b, c);
#endif
    precise float p = f16_to_f32(a) * f16_to_f32(b);
    float cf = f16_to_f32(c);
#ifdef OPENNGX_F32_RTZ
    return f16_from_f32_sum_rtz(p, cf);
#endif
    precise float s = p + cf;
    precise float bv = s - p;
    precise float err = (p - (s - bv)) + (cf - bv);
    uint sb = floatBitsToUint(s);
    if ((sb & 0x7FFFFFFFu) == 0u) {
        return (sb >> 16) & 0x8000u; // exact zero: IEEE sign rules of the f32 add
    }
    int tie = 0;
    if (err != 0.0) {
        tie = ((err > 0.0) == (s > 0.0)) ? 1 : -1;
    }
    return f16_from_f32_bits(sb, false, tie);
}

// Round the exact value (sign ? -1 : 1) * mag * 2^scale to f16 (RNE). Overflow gives +-inf; a
// value that rounds to zero returns the signed zero (callers apply their zero rule).
uint f16_round_fixed_rne(uint mag, int scale, uint sign) {
    if (mag == 0u) {
        return sign;
    }
    int nbits = findMSB(mag) + 1;
    int ue = nbits - 1 + scale;
    int lsb_exp = ue >= -14 ? ue - 10 : -24;
    int drop = lsb_exp - scale;
    uint q;
    if (drop <= 0) {
        q = mag << uint(-drop);
    } else if (drop > 32) {
        q = 0u; // below a quarter of the smallest subnormal
    } else {
        uint kept = drop == 32 ? 0u : (mag >> uint(drop));
        uint rem = drop == 32 ? mag : (mag & ((1u << uint(drop)) - 1u));
        uint halfway = 1u << uint(drop - 1);
        q = kept;
        if (rem > halfway || (rem == halfway && (kept & 1u) == 1u)) {
            q += 1u;
        }
    }
    if (q == 0u) {
        return sign;
    }
    uint bits = lsb_exp == -24 ? q : ((uint(lsb_exp + 24) << 10) + q);
    if (bits >= 0x7C00u) {
        return sign | F16_POS_INF;
    }
    return sign | bits;
}

// Clamp a half to [lo, hi] (both finite halves, lo <= hi) with min/max semantics: NaN takes lo.
uint f16_clamp(uint x, uint lo, uint hi) {
    if (f16_is_nan(x)) {
        return lo;
    }
    float v = f16_to_f32(x);
    if (v < f16_to_f32(lo)) {
        return lo;
    }
    if (v > f16_to_f32(hi)) {
        return hi;
    }
    return x;
}

#endif
