//! What the fuzz targets (`fuzz/fuzz_targets/`) share: the libFuzzer entry points
//! ([`fuzz_target!`], [`harness`]) and the directories a target builds from its input
//! ([`tree`]: a model or fixture directory with regular files, sparse files, links, FIFOs).
//!
//! How the targets are built and run, and what each checks: `docs/testing.md`, "Fuzzing".

pub mod harness;
#[cfg(test)]
mod seeds;
pub mod tree;
