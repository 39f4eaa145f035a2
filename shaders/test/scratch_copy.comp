#version 450
// Test kernel of `gpu::ScratchDevice`: out[i] = in[i] ^ SALT for every word of the input.
layout(local_size_x = 64) in;
layout(constant_id = 0) const uint SALT = 0u;
layout(std430, binding = 0) readonly buffer In { uint inv[]; };
layout(std430, binding = 1) writeonly buffer Out { uint outv[]; };

void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i < inv.length()) {
        outv[i] = inv[i] ^ SALT;
    }
}
