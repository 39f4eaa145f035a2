//! The SPIR-V of every compute shader, compiled by `build.rs` and embedded in the library.

include!(concat!(env!("OUT_DIR"), "/shaders.rs"));

/// The SPIR-V words of the shader `key` (path under `shaders/` without extension), if it exists.
pub fn spirv(key: &str) -> Option<Vec<u32>> {
    let bytes = SHADERS.iter().find(|(k, _)| *k == key)?.1;
    ash::util::read_spv(&mut std::io::Cursor::new(bytes)).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// SPIR-V's atomic instructions: `OpAtomicLoad` (227) to `OpAtomicXor` (242), the flag ones
    /// (318, 319) and the float add/min/max extensions (5614-5616, 6035).
    fn is_atomic(opcode: u32) -> bool {
        (227..=242).contains(&opcode) || matches!(opcode, 318 | 319 | 5614..=5616 | 6035)
    }

    /// The opcodes of a module's instructions, walked by their word counts.
    fn opcodes(words: &[u32]) -> Vec<u32> {
        let mut out = Vec::new();
        let mut at = 5; // after the header
        while at < words.len() {
            let count = (words[at] >> 16) as usize;
            out.push(words[at] & 0xFFFF);
            if count == 0 {
                break;
            }
            at += count;
        }
        out
    }

    /// No kernel uses an atomic (docs/architecture.md, "No atomics in the kernels"): even a
    /// shared-memory one compiles to a Device-scope atomic under the memory model, which a
    /// device with `vulkanMemoryModel` but not `vulkanMemoryModelDeviceScope` must not run.
    #[test]
    fn no_shader_uses_an_atomic() {
        assert!(!SHADERS.is_empty());
        let mut found = Vec::new();
        for (key, _) in SHADERS {
            let words = spirv(key).expect("every embedded shader is SPIR-V");
            assert_eq!(words.first(), Some(&0x0723_0203), "{key}: SPIR-V magic");
            if let Some(op) = opcodes(&words).into_iter().find(|&op| is_atomic(op)) {
                found.push(format!("{key} (opcode {op})"));
            }
        }
        assert!(found.is_empty(), "atomics in {}", found.join(", "));
    }

    /// The walk sees atomics where they are: a hand-made module with one `OpAtomicOr`.
    #[test]
    fn the_walk_finds_an_atomic() {
        // Header (5 words), OpCapability Shader (2 words), OpAtomicOr with 7 words.
        let words = [
            0x0723_0203,
            0x0001_0000,
            0,
            10,
            0,
            (2 << 16) | 17,
            1,
            (7 << 16) | 241,
            1,
            2,
            3,
            4,
            5,
            6,
        ];
        assert_eq!(opcodes(&words), vec![17, 241]);
        assert!(opcodes(&words).into_iter().any(is_atomic));
    }
}
