// The split-K partition a GEMM workgroup runs, shared by gemm.glsl and gemm_coopmat.glsl (the
// partitions of spec nr-network.md 1.4: partition 0 chains from the seed, the others from +0,
// gemm_sum.comp adds the partials). The includer declares SPLIT (1 when pc.part < pc.k) and the
// push constants `k` and `part`.
#ifndef OPENNGX_GEMM_SPLIT_GLSL
#define OPENNGX_GEMM_SPLIT_GLSL

// Workgroup layer `z` of the grid: without SPLIT group z, partition 0 over all of K; with it
// group z / parts and partition z % parts, whose chain runs over K [kbeg, kend).
void gemm_partition(uint z, out uint g, out uint kpart, out uint kbeg, out uint kend) {
    g = z;
    kpart = 0u;
    kbeg = 0u;
    kend = pc.k;
    if (SPLIT != 0u) {
        uint parts = (pc.k + pc.part - 1u) / pc.part;
        kpart = z % parts;
        g = z / parts;
        kbeg = kpart * pc.part;
        kend = min(pc.k, kbeg + pc.part);
    }
}

#endif
