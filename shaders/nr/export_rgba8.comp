// export into an RGBA8 UNORM storage image (see lib/frame_export.glsl).
#version 450
#extension GL_GOOGLE_include_directive : require
#define FRAME_EXPORT_FORMAT rgba8
#include "frame_export.glsl"
