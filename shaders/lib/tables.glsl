// Accessors of the views of `numerics::tables::gpu` that start at its E4 part (`NORMALIZE`,
// `ATTENTION`), built on the host from the Rust numerics, so a lookup gives the bytes of the
// function it replaces. The including shader declares the view as `uint table_words[]`.
//   E4(x)                 byte x              (x: the bits of a half)
//   rsqrt(x)              half 32768 + x      (the cosine normalisation's, recip.glsl)
//   exp_window(x)         half 98304 + x      (the window attention's exp weight, exp.glsl)
//   exp_vit(x)            half 163840 + x     (the ViT attention's)
// One load each instead of the function's integer sequence (docs/performance.md: computing
// them was measured much slower).
#ifndef OPENNGX_TABLES_GLSL
#define OPENNGX_TABLES_GLSL

uint table_e4(uint h) { return (table_words[h >> 2] >> (8u * (h & 3u))) & 0xFFu; }
uint table_half(uint at) { return (table_words[at >> 1] >> (16u * (at & 1u))) & 0xFFFFu; }
uint rsqrt_table(uint x) { return table_half(32768u + x); }
uint exp_window_table(uint s) { return table_half(98304u + s); }
uint exp_vit_table(uint s) { return table_half(163840u + s); }

#endif
