#version 450
// Global ViT attention of `Op::VitAttention` on the device's f16 cooperative matrices (the
// tensor route, H25 identified by the creation probe): the steps and orders of attention.glsl
// (ATTN_VIT), with both products as 16x16x16 MMAs, so the bytes are what the exact route
// computes in the h25 profile. Keys in token order in blocks of 64, padded with zero rows:
//   per block: S = Q.K (two channel groups from +0), e = exp_vit(S) (table), P = E4(e)
//   (unnormalised), the block's fixed-order tree added to the running total (the first block's
//   tree is the total), O continues one chain of 16-key groups over all blocks (from +0);
//   at the end total = f16(total - f16(exp_vit(0) * padded rows)), out = E4(f16(O * f16(1/total))).
// One workgroup of 128 invocations (4 subgroups of 32) per (64 queries, head); subgroup s owns
// queries 16 s .. +15 for the whole kernel, so after the shared K/V staging of a block every
// step runs within the subgroup (subgroup barriers only): its S rows, the exp weights, P and the
// tree of each query on two lanes (keys with bit 2 clear / set, the tree's halves t[0..3] and
// t[4..7], swapped with one shuffle). Where k and v start on a word, the next block's K and V
// words load into registers while a block computes. Q, K, V (E4M3 widened exactly through a
// code table), S and P live in shared memory, because a KHR cooperative matrix's element layout
// is the implementation's.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#extension GL_EXT_spirv_intrinsics : require
// RoundingModeRTE (4462, capability 4467) and DenormPreserve (4459, capability 4464) for 16-bit
// results: the device's own f16 adds and multiplies (OPENNGX_F16_NATIVE, f16.glsl) then round to
// nearest even with subnormals kept, the model's bytes (the tensor route requires
// `Capabilities::native_f16`).
spirv_execution_mode(extensions = ["SPV_KHR_float_controls"], capabilities = [4467], 4462, 16);
spirv_execution_mode(extensions = ["SPV_KHR_float_controls"], capabilities = [4464], 4459, 16);
#include "vit_attention_coopmat.glsl"
