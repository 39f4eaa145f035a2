//! Lookup tables the GPU kernels read instead of recomputing a function of one half per output:
//! built here from the Rust numerics (the single source of truth, so a table gives the same
//! bytes as the function by construction) and uploaded once per device with the weights
//! (`nr::record::GpuWeights`).

use super::{e4m3, recip, silu};

/// Bytes of [`gemm_epilogue`].
pub const GEMM_EPILOGUE_BYTES: u64 = 131072;
/// Bytes of [`normalize`].
pub const NORMALIZE_BYTES: u64 = 196608;

/// The GEMM's E4 epilogues, one byte per half `x` (index = its bits): E4(SiLU(x)) at `x`, then
/// E4(x) at `65536 + x`.
pub fn gemm_epilogue() -> Vec<u8> {
    let mut t: Vec<u8> = silu::silu_table()
        .iter()
        .map(|&y| e4m3::from_f16(y))
        .collect();
    t.extend((0..=u16::MAX).map(e4m3::from_f16));
    t
}

/// The cooperative normalisation's table: E4(x) at byte `x`, then rsqrt(x) as little-endian
/// halves from byte 65536 (the correctly rounded [`recip::rsqrt`]).
pub fn normalize() -> Vec<u8> {
    let mut t: Vec<u8> = (0..=u16::MAX).map(e4m3::from_f16).collect();
    t.extend((0..=u16::MAX).flat_map(|h| recip::rsqrt(h).to_le_bytes()));
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_hold_the_functions() {
        let g = gemm_epilogue();
        let n = normalize();
        assert_eq!(g.len() as u64, GEMM_EPILOGUE_BYTES);
        assert_eq!(n.len() as u64, NORMALIZE_BYTES);
        for x in [
            0u16, 0x8000, 0x3C00, 0xC400, 0x7C00, 0x7E00, 0x0001, 0x5BFF, 0xABCD,
        ] {
            let i = x as usize;
            assert_eq!(g[i], e4m3::from_f16(silu::silu(x)), "silu {x:#x}");
            assert_eq!(g[65536 + i], e4m3::from_f16(x), "e4 {x:#x}");
            assert_eq!(n[i], e4m3::from_f16(x), "norm e4 {x:#x}");
            let r = u16::from_le_bytes([n[65536 + 2 * i], n[65536 + 2 * i + 1]]);
            assert_eq!(r, recip::rsqrt(x), "rsqrt {x:#x}");
        }
    }
}
