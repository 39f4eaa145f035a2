// export into an RGBA16F storage image (see lib/frame_export.glsl).
#version 450
#extension GL_GOOGLE_include_directive : require
#define FRAME_EXPORT_FORMAT rgba16f
#include "frame_export.glsl"
