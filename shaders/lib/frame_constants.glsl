// The per-frame constant block of prepare/compose as push constants: the 96-byte
// `nr::frame::FrameConstants` (24 little-endian words, in that order), then the launch's band
// (`nr::record::passes::PassBand`, 4 words): it computes rows [band_begin, band_end) of the
// pass's grid (field rows for prepare, valid rows for compose), and the band-relative bindings
// (prepare's features, compose's proxy and head from band_begin; prepare's proxy from band_src)
// start at those rows. One launch over every row has 0, height, 0.
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
    uint band_begin;
    uint band_end;
    uint band_src;
    uint band_reserved;
} fc;

#endif
