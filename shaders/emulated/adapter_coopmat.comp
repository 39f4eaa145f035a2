#version 450
// The tensor route's input adapter (shaders/nr/adapter_coopmat.glsl, as nr/adapter_coopmat.comp
// builds it) with its MMA emulated in integer arithmetic (TILE_EMULATED, tile_mma.glsl): the
// device build's bytes in H25 on a device without cooperative matrices.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#extension GL_KHR_shader_subgroup_ballot : require
#define TILE_EMULATED 1
#include "../nr/adapter_coopmat.glsl"
