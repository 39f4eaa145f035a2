// Shared declarations of the RR kernels (shaders/rr): the flat launch index of a 2D grid (a
// launch whose workgroups exceed maxComputeWorkGroupCount.x continues along y), byte and half
// access to E4M3 / f16 tensors held in 8- and 16-bit storage buffers.
#ifndef OPENNGX_RR_COMMON_GLSL
#define OPENNGX_RR_COMMON_GLSL

// The invocation's flat index for workgroups of `size` invocations (x fastest, then y).
uint rr_flat_index(uint size) {
    return (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * size
        + gl_LocalInvocationID.x;
}

// The workgroup's flat index.
uint rr_flat_group() { return gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x; }

#endif
