// Building blocks of the fast exact F13/H25 MMA groups on decoded operands (spec nr-network.md
// 2.2; technique h200-gemm-limits.md 4), shared by the tiled GEMM (`nr/gemm.glsl`) and the
// attention kernels (`nr/attention.glsl`). Mirror of src/numerics/mma.rs; the generic form on
// integer significands is mma.glsl (`tests/gpu_numerics.rs` checks it against the Rust model).
//
// An operand code is decoded once into its exact signed f32 value and the power 2^(Be) of the
// exponent e it contributes to E (0 for zero and NaN codes). For one group of 16 products and an
// f16 accumulator:
//   E: the f32 sum of 2^(Be(acc)) and of 2^(B(ea+eb)) over the products (one FMA per term; zero
//      operands add 0) has at most 17 terms, all powers of 2^B with B >= 5 (17 < 32), so its
//      exponent divided by B (rounded down) is E exactly. B = 8 in the RTZ builds (F13 only: E
//      in -14..16, so 8E stays inside f32's exponent range with a bias, and the division is a
//      shift), B = 5 in the portable ones (H25's widened exponents need the wider range). A sum
//      of 0 means no exponent: the group gives +0.
//   terms: trunc(|a*b| * 2^(P-E)), XOR-ed with the product's sign (0 or -1, so a negative product
//      adds -t - 1) and summed in int32; the count of negative products (popcount of the sign
//      masks' XOR) undoes the -1s once per group. A term is either
//      - mma_term_rtz: the bits of fma(|a|, |b|, 2^(10+E)) in a shader running in the
//        round-toward-zero f32 mode (P = 13 only): |a*b| < 2^(E+2), so the sum stays in the
//        binade of 2^(10+E), whose ulp is 2^(E-13), and RTZ truncates exactly there; the 16
//        copies of 2^(10+E)'s bits come off with the sign correction (mma_rtz_correction);
//      - mma_term_mul: int(|a| * |b| * 2^(P-E)) (every factor exact, the conversion truncates;
//        any P <= 25, any rounding mode).
//   The accumulator adds trunc(acc * 2^(P-E)); |sum| < 2^31 for P <= 25, so int32 is exact.
//   The result is the f16 RNE of sum * 2^(E-P), +0 for any zero; an inf/NaN accumulator passes
//   through unchanged (callers test it first).
#ifndef OPENNGX_MMA_TERMS_GLSL
#define OPENNGX_MMA_TERMS_GLSL
#include "f16.glsl"

// The power base B (above) and biases: an operand gives 2^(Be + MMA_POW_BIAS), so a product
// gives 2^(B(ea+eb) + 2 MMA_POW_BIAS) and the accumulator 2^(Be + 2 MMA_POW_BIAS). RTZ builds:
// products and accumulators then lie in 2^-120..2^120 and 17 of them stay below 2^125.
#if MMA_RTZ
#define MMA_POW_BASE 8
#define MMA_POW_BIAS (-4)
#else
#define MMA_POW_BASE 5
#define MMA_POW_BIAS 0
#endif

// 2^(Be) of a decoded E4M3 value v (0 for zero): the f32 exponent of v is e except for F13's
// subnormals (value exponent -9..-7, e = -6). `widened` gives an E4M3 subnormal its true
// exponent (H25) instead of the format's -6 (F13); the RTZ builds never widen (F13 only).
float mma_value_pow(float v, bool widened) {
    uint mag = floatBitsToUint(v) & 0x7FFFFFFFu;
    int e = int(mag >> 23) - 127;
    if (!widened || MMA_RTZ != 0) {
        e = max(e, -6);
    }
    return mag == 0u ? 0.0 : uintBitsToFloat(uint(127 + MMA_POW_BASE * e + MMA_POW_BIAS) << 23);
}
vec4 mma_value_pow4(vec4 v, bool widened) {
    return vec4(mma_value_pow(v.x, widened), mma_value_pow(v.y, widened),
                mma_value_pow(v.z, widened), mma_value_pow(v.w, widened));
}

// One E4M3 code: its exact signed value (the NaN code decodes to 0) and 2^(Be) (0 for the zero
// and NaN codes). Kernels that would rather recompute 2^(Be) than reload it use mma_value_pow.
void mma_decode_e4(uint c, bool widened, out float v, out float pw) {
    uint mag = c & 0x7Fu;
    uint sign = (c & 0x80u) << 24;
    uint bits = 0u;
    if (mag != 0u && mag != 0x7Fu) {
        uint ef = mag >> 3;
        uint m = mag & 7u;
        if (ef == 0u) {
            // m * 2^-9 with m in 1..7: f32 exponent of its top bit p, mantissa the bits below.
            int p = findMSB(m);
            bits = (uint(p - 9 + 127) << 23) | ((m << uint(23 - p)) & 0x7FFFFFu);
        } else {
            bits = (uint(int(ef) - 7 + 127) << 23) | (m << 20);
        }
    }
    v = uintBitsToFloat(sign | bits);
    pw = mma_value_pow(v, widened);
}

// 2^(Be) of a finite f16 accumulator, 0 for a zero.
float mma_acc_pow(uint h) {
    return f16_is_zero(h)
        ? 0.0
        : uintBitsToFloat(uint(127 + MMA_POW_BASE * f16_exponent(h) + 2 * MMA_POW_BIAS) << 23);
}

// E from the max-plus sum (floor division of the unbiased, unbiased-by-MMA_POW_BIAS exponent by
// B). A zero sum (zero accumulator, no nonzero product) gives E = -15 (B = 8) or -26 (B = 5):
// every term and the sum are then 0, and the group's result +0, as the model says.
int mma_pow_exponent(float es) {
    int x = int(floatBitsToUint(es) >> 23) - 127 - 2 * MMA_POW_BIAS;
#if MMA_POW_BASE == 8
    return x >> 3;
#else
    return (x + 500) / 5 - 100;
#endif
}

// Per-term constants of a group with exponent E.
float mma_rtz_base(int E) { return uintBitsToFloat(uint(137 + E) << 23); }          // 2^(10+E)
float mma_mul_scale(int E, int P) { return uintBitsToFloat(uint(127 + P - E) << 23); } // 2^(P-E)

// E back from those constants (kernels keep the constant, not both, in registers).
int mma_rtz_base_exponent(float base) { return int(floatBitsToUint(base) >> 23) - 137; }
int mma_mul_scale_exponent(float scale, int P) { return 127 + P - int(floatBitsToUint(scale) >> 23); }

int mma_term_rtz(float a, float b, float base) { return floatBitsToInt(fma(abs(a), abs(b), base)); }
int mma_term_mul(float a, float b, float scale) { return int(abs(a) * abs(b) * scale); }

// What the 16 RTZ terms' copies of the base and the sign trick leave in the sum, given the
// count of negative products.
int mma_rtz_correction(int neg, float base) { return neg - (16 - 2 * neg) * floatBitsToInt(base); }

// MMA_KEEP_OPERANDS 1 (the default of the portable builds): the tiled kernels load each operand
// value of a 16-group from shared memory once, keep it in registers for the second pass and
// recompute 2^(Be) from it (mma_value_pow) instead of loading it. lavapipe, the main user of the
// portable builds, runs every shared-memory load as a loop over its SIMD lanes: this halves
// them (GEMMs 1.6x faster there). GPUs reload cheaply and would spill the 16 k of operands,
// so the RTZ builds reload.
#ifndef MMA_KEEP_OPERANDS
#if MMA_RTZ
#define MMA_KEEP_OPERANDS 0
#else
#define MMA_KEEP_OPERANDS 1
#endif
#endif

// The term form of the including kernel: MMA_RTZ 1 (the `*_rtz.comp` builds, which also set the
// RTZ execution mode and OPENNGX_F32_RTZ) uses the RTZ FMA, MMA_RTZ 0 the exact float products.
// The per-term constant of a group (2^(10+E) or 2^(P-E)) is what the kernels keep in registers;
// E is read back from it.
#if MMA_RTZ
float mma_term_constant(int E, int P) { return mma_rtz_base(E); }
int mma_term_constant_exponent(float c, int P) { return mma_rtz_base_exponent(c); }
int mma_term(float a, float b, float c) { return mma_term_rtz(a, b, c); }
int mma_sign_correction(int neg, float c) { return mma_rtz_correction(neg, c); }
#else
float mma_term_constant(int E, int P) { return mma_mul_scale(E, P); }
int mma_term_constant_exponent(float c, int P) { return mma_mul_scale_exponent(c, P); }
int mma_term(float a, float b, float c) { return mma_term_mul(a, b, c); }
int mma_sign_correction(int neg, float c) { return neg; }
#endif

// trunc(acc * 2^(P-E)) with the accumulator's sign (acc finite, E >= its exponent).
int mma_acc_fixed(uint h, int E, int P) {
    if (f16_is_zero(h)) {
        return 0;
    }
    int d = min(E - f16_exponent(h), 31);
    int t = int((f16_significand(h) << uint(P - 10)) >> uint(d));
    return (h & 0x8000u) != 0u ? -t : t;
}

// The group result: f16 RNE of sum * 2^(E-P), +0 for zero.
uint mma_round_group(int sum, int E, int P) {
    if (sum == 0) {
        return F16_POS_ZERO;
    }
    uint r = f16_round_fixed_rne(uint(abs(sum)), E - P, sum < 0 ? 0x8000u : 0u);
    return f16_is_zero(r) ? F16_POS_ZERO : r;
}

// The group result from the signed sum of its terms (sign correction included), the group's
// term constant `c` and the finite accumulator h: f16 RNE of (sum + trunc(acc * 2^(P-E))) *
// 2^(E-P), +0 for zero.
#if MMA_RTZ
// RTZ builds (P = 13) let the float hardware do it (the integer form below cost the H200 a
// third of its GEMM time), in f32 adds, since the integer pipe is the GEMM's busiest:
// - the accumulator's truncated magnitude is (|acc| + c) - c: |acc| < 2^(E+1) keeps the RTZ sum
//   in the binade of c = 2^(10+E), whose ulp is 2^(E-13); it takes the accumulator's sign;
// - with k = 1.5c (same binade), the bits of k plus s are exactly k + s ulps (|s| < 2^21, and
//   there are 2^22 ulps of room each way), so subtracting k leaves s * 2^(E-13) exactly;
// - the sum of those two multiples of the ulp (below 2^(E+9)) is exact;
// - the conversion to f16 rounds to nearest even because these builds declare RoundingModeRTE
//   and DenormPreserve for 16-bit results (the device must support both beside RTZ for 32
//   bits, see `use_rtz_kernels`).
#ifndef OPENNGX_F16_NATIVE
#error "MMA_RTZ builds declare the 16-bit float controls and define OPENNGX_F16_NATIVE"
#endif
uint mma_finish_group(int s, float c, uint h, int P) {
    float av = float(f16_native(h));
    precise float ta = (abs(av) + c) - c;
    float tsigned = uintBitsToFloat(floatBitsToUint(ta) | (floatBitsToUint(av) & 0x80000000u));
    uint kb = floatBitsToUint(c) | 0x400000u;
    precise float m = (uintBitsToFloat(kb + uint(s)) - uintBitsToFloat(kb)) + tsigned;
    uint r = f16_bits(float16_t(m));
    return (r & 0x7FFFu) == 0u ? F16_POS_ZERO : r;
}
#else
uint mma_finish_group(int s, float c, uint h, int P) {
    int E = mma_term_constant_exponent(c, P);
    return mma_round_group(s + mma_acc_fixed(h, E, P), E, P);
}
#endif

#endif
