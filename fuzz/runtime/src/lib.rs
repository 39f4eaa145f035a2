//! Builds libFuzzer (through `libfuzzer-sys`) for the fuzz targets; see `Cargo.toml` for why this
//! is a crate of its own. It exports nothing.
