//! The SPIR-V of every compute shader, compiled by `build.rs` and embedded in the library.

include!(concat!(env!("OUT_DIR"), "/shaders.rs"));

/// The SPIR-V words of the shader `key` (path under `shaders/` without extension), if it exists.
pub fn spirv(key: &str) -> Option<Vec<u32>> {
    let bytes = SHADERS.iter().find(|(k, _)| *k == key)?.1;
    ash::util::read_spv(&mut std::io::Cursor::new(bytes)).ok()
}
