//! Lookup tables the GPU kernels read instead of recomputing a function of one half per output:
//! built here from the Rust numerics (the single source of truth, so a table gives the same
//! bytes as the function by construction) and uploaded once per device with the weights
//! (`nr::record::GpuWeights`).
//!
//! One table, [`gpu`], indexed by a half's bits: E4(SiLU(x)) at byte `x`, E4(x) at `65536 + x`,
//! then as little-endian halves rsqrt(x) from byte 131072, the window attention's exp weight
//! from byte 262144 and the ViT's from byte 393216. The GEMM's E4 epilogues bind
//! [`GEMM_EPILOGUE`] of it, the cooperative normalisation [`NORMALIZE`] (E4 first, then rsqrt),
//! the attention [`ATTENTION`] (E4, rsqrt unused, both exp weights), so the E4 part serves all
//! three.

use std::ops::Range;

use super::{e4m3, exp, recip, silu};

/// The GEMM's part of [`gpu`]: E4(SiLU(x)) at `x`, E4(x) at `65536 + x`.
pub const GEMM_EPILOGUE: Range<usize> = 0..131072;
/// The cooperative normalisation's part of [`gpu`]: E4(x) at `x`, rsqrt(x) from byte 65536.
pub const NORMALIZE: Range<usize> = 65536..262144;

/// The attention's part of [`gpu`]: E4(x) at `x`, `exp::exp_window(x)` as the half at byte
/// `ATTENTION_EXP_WINDOW + 2x`, `exp::exp_vit(x)` at `ATTENTION_EXP_VIT + 2x`.
pub const ATTENTION: Range<usize> = 65536..524288;
/// Byte offset of the window exp weights in [`ATTENTION`].
pub const ATTENTION_EXP_WINDOW: usize = 196608;
/// Byte offset of the ViT exp weights in [`ATTENTION`].
pub const ATTENTION_EXP_VIT: usize = 327680;

/// The whole table (524288 bytes).
pub fn gpu() -> Vec<u8> {
    let mut t: Vec<u8> = silu::silu_table()
        .iter()
        .map(|&y| e4m3::from_f16(y))
        .collect();
    t.extend((0..=u16::MAX).map(e4m3::from_f16));
    t.extend((0..=u16::MAX).flat_map(|h| recip::rsqrt(h).to_le_bytes()));
    t.extend((0..=u16::MAX).flat_map(|h| exp::exp_window(h).to_le_bytes()));
    t.extend((0..=u16::MAX).flat_map(|h| exp::exp_vit(h).to_le_bytes()));
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_hold_the_functions() {
        let t = gpu();
        let g = &t[GEMM_EPILOGUE];
        let n = &t[NORMALIZE];
        let a = &t[ATTENTION];
        assert_eq!(t.len(), ATTENTION.end);
        let half = |at: usize| u16::from_le_bytes([a[at], a[at + 1]]);
        for x in [
            0u16, 0x8000, 0x3C00, 0xC400, 0x7C00, 0x7E00, 0x0001, 0x5BFF, 0xABCD,
        ] {
            let i = x as usize;
            assert_eq!(g[i], e4m3::from_f16(silu::silu(x)), "silu {x:#x}");
            assert_eq!(g[65536 + i], e4m3::from_f16(x), "e4 {x:#x}");
            assert_eq!(n[i], e4m3::from_f16(x), "norm e4 {x:#x}");
            let r = u16::from_le_bytes([n[65536 + 2 * i], n[65536 + 2 * i + 1]]);
            assert_eq!(r, recip::rsqrt(x), "rsqrt {x:#x}");
            assert_eq!(a[i], e4m3::from_f16(x), "attention e4 {x:#x}");
            assert_eq!(
                half(ATTENTION_EXP_WINDOW + 2 * i),
                exp::exp_window(x),
                "expw {x:#x}"
            );
            assert_eq!(
                half(ATTENTION_EXP_VIT + 2 * i),
                exp::exp_vit(x),
                "expv {x:#x}"
            );
        }
    }
}
