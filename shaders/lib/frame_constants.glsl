// The per-frame constant block of prepare/compose as push constants: the 96-byte
// `nr::frame::FrameConstants` (24 little-endian words, in that order).
#ifndef OPENNGX_FRAME_CONSTANTS_GLSL
#define OPENNGX_FRAME_CONSTANTS_GLSL

layout(push_constant) uniform FrameConstantsBlock {
    uint width;
    uint height;
    uint field_width;
    uint field_height;
    uint seed;
    uint history_valid;
    uint enabled;
    uint auto_mask;
    uint style;
    uint has_motion;
    uint color_x;
    uint color_y;
    uint motion_x;
    uint motion_y;
    uint output_x;
    uint output_y;
    float intensity;
    float local_tone;
    float local_structure;
    float skin_structure;
    float mvec_scale_x;
    float mvec_scale_y;
    float blend_scale;
    uint reserved;
} fc;

#endif
