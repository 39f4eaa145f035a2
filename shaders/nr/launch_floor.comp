#version 450
// An empty kernel for `bench --timing floor`: recorded with each launch's own pipeline layout,
// descriptor set, push constants and grid, behind the same barriers, it times what the frame's
// launches and barriers cost with no work in them (docs/performance.md). 128 invocations, the
// size of most of the network's kernels. Never part of a frame that publishes bytes.
layout(local_size_x = 128) in;
void main() {}
