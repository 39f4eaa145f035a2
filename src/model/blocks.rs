//! The block table of the DLSS-NR network, stated once (spec nr-network §1.1, §1.3): for every
//! block 0..=70 what it is, which resolution it runs at, how wide its state is and which stage file
//! holds its records, plus the counts and sizes that follow from it.
//!
//! The record layout (`model::layout`), the geometry (`nr::geometry`: levels, phases, boundaries)
//! and the schedule (`nr::graph`) all read their block facts here; none keeps a table of its own.
//! Nothing here knows byte offsets (that is `layout`) or grid sizes (that is `nr::geometry`).

/// A resolution of the U-net: the full-resolution field or one of the pooling levels L0..L5.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Level {
    Field,
    /// Pooling level 0..=5 (L5 is the ViT grid).
    L(u8),
}

/// What a record's block does (spec §1.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BlockKind {
    /// Block 0: C=32 window block on the field with the f16 input adapter.
    Pre,
    /// A plain window block (C = 32, 64, 128 or 256).
    Window,
    /// Last encoder window block of a stage (4, 8, 14, 22): carries the C->2C transition matrix.
    EncoderLast,
    /// First decoder window block of a stage (48, 56, 62, 66): carries the 2C->C up matrix.
    DecoderFirst,
    /// Block 70: C=32 window block on the field with the post-blend scales and the f16 head.
    Post,
    /// Split-512 block (23-30, 40-47); [`VIT_ENTRY_BLOCK`] additionally owns the 512->1024 ViT
    /// entry (layer4).
    Split512,
    /// Global ViT block (31-38).
    Vit,
    /// Block 39: only the ViT-exit 1024->512 transition and its skip scale.
    VitExit,
}

/// One block of the network.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Block {
    pub kind: BlockKind,
    /// The grid the block runs on (block 39: the L4 merge it publishes).
    pub level: Level,
    /// Channels of the block's state (block 39: its output, 512).
    pub channels: usize,
    /// Reference stage file holding the block's records.
    pub stage: &'static str,
}

impl Block {
    /// Attention heads: `C / 32`; block 39 has none.
    pub const fn heads(&self) -> usize {
        match self.kind {
            BlockKind::VitExit => 0,
            _ => self.channels / HEAD_CHANNELS,
        }
    }

    /// True for the blocks of shifted-window attention (every block but the ViT and block 39).
    pub const fn is_window(&self) -> bool {
        !matches!(self.kind, BlockKind::Vit | BlockKind::VitExit)
    }
}

/// Consecutive blocks `first..=last` that share one [`Block`] (a row of spec §1.3).
struct Run {
    first: usize,
    last: usize,
    block: Block,
}

const fn run(
    first: usize,
    last: usize,
    stage: &'static str,
    level: Level,
    channels: usize,
    kind: BlockKind,
) -> Run {
    Run {
        first,
        last,
        block: Block {
            kind,
            level,
            channels,
            stage,
        },
    }
}

/// The table: every block once, in order (a unit test checks that the runs tile 0..BLOCK_COUNT).
#[rustfmt::skip]
const RUNS: [Run; 22] = {
    use BlockKind::*;
    use Level::{Field, L};
    [
        // blocks   stage     level  C     kind
        run(0, 0,   "enc32",  Field, 32,   Pre),
        run(1, 3,   "enc32",  L(0),  32,   Window),
        run(4, 4,   "enc32",  L(0),  32,   EncoderLast),
        run(5, 7,   "enc64",  L(1),  64,   Window),
        run(8, 8,   "enc64",  L(1),  64,   EncoderLast),
        run(9, 13,  "enc128", L(2),  128,  Window),
        run(14, 14, "enc128", L(2),  128,  EncoderLast),
        run(15, 21, "enc256", L(3),  256,  Window),
        run(22, 22, "enc256", L(3),  256,  EncoderLast),
        run(23, 30, "enc512", L(4),  512,  Split512),
        run(31, 38, "vit",    L(5),  1024, Vit),
        run(39, 39, "dec512", L(4),  512,  VitExit),
        run(40, 47, "dec512", L(4),  512,  Split512),
        run(48, 48, "dec256", L(3),  256,  DecoderFirst),
        run(49, 55, "dec256", L(3),  256,  Window),
        run(56, 56, "dec128", L(2),  128,  DecoderFirst),
        run(57, 61, "dec128", L(2),  128,  Window),
        run(62, 62, "dec64",  L(1),  64,   DecoderFirst),
        run(63, 65, "dec64",  L(1),  64,   Window),
        run(66, 66, "dec32",  L(0),  32,   DecoderFirst),
        run(67, 69, "dec32",  L(0),  32,   Window),
        run(70, 70, "dec32",  Field, 32,   Post),
    ]
};

/// Blocks 0..=70.
pub const BLOCK_COUNT: usize = RUNS[RUNS.len() - 1].last + 1;

/// Channels of one attention head.
pub const HEAD_CHANNELS: usize = 32;

/// Bytes of one window head's 64x64 f16 prior (spec §3.5).
pub const PRIOR_BYTES: usize = 64 * 64 * 2;

/// The split-512 block right before the ViT: its record `layer4` is the 512->1024 ViT entry.
pub const VIT_ENTRY_BLOCK: usize = first_of(BlockKind::Vit) - 1;

/// The reference stage files, in model order: the runs' stage names without repeats.
pub const STAGES: [&str; stage_count()] = stages();

/// Block `block`, or `None` outside 0..=70.
pub const fn block(b: usize) -> Option<Block> {
    let mut i = 0;
    while i < RUNS.len() {
        if b >= RUNS[i].first && b <= RUNS[i].last {
            return Some(RUNS[i].block);
        }
        i += 1;
    }
    None
}

/// Kind of block `block`, or `None` outside 0..=70.
pub const fn block_kind(b: usize) -> Option<BlockKind> {
    match block(b) {
        Some(b) => Some(b.kind),
        None => None,
    }
}

/// The first block of kind `kind` (a compile-time error if there is none).
const fn first_of(kind: BlockKind) -> usize {
    let mut i = 0;
    while i < RUNS.len() {
        if RUNS[i].block.kind as u8 == kind as u8 {
            return RUNS[i].first;
        }
        i += 1;
    }
    panic!("no block of that kind")
}

const fn same(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

const fn stage_count() -> usize {
    let mut count = 1;
    let mut i = 1;
    while i < RUNS.len() {
        if !same(RUNS[i].block.stage, RUNS[i - 1].block.stage) {
            count += 1;
        }
        i += 1;
    }
    count
}

const fn stages() -> [&'static str; stage_count()] {
    let mut out = [""; stage_count()];
    out[0] = RUNS[0].block.stage;
    let mut n = 1;
    let mut i = 1;
    while i < RUNS.len() {
        if !same(RUNS[i].block.stage, RUNS[i - 1].block.stage) {
            out[n] = RUNS[i].block.stage;
            n += 1;
        }
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_tile_the_blocks() {
        let mut next = 0;
        for r in &RUNS {
            assert_eq!(r.first, next, "runs are contiguous");
            assert!(r.last >= r.first);
            next = r.last + 1;
        }
        assert_eq!(BLOCK_COUNT, 71);
        assert_eq!(block(71), None);
        assert_eq!(block_kind(70), Some(BlockKind::Post));
    }

    #[test]
    fn stages_and_counts_match_spec() {
        assert_eq!(
            STAGES,
            [
                "enc32", "enc64", "enc128", "enc256", "enc512", "vit", "dec512", "dec256",
                "dec128", "dec64", "dec32",
            ]
        );
        // No stage file appears in two separate runs.
        let mut seen = std::collections::BTreeSet::new();
        assert!(STAGES.iter().all(|s| seen.insert(*s)));
        assert_eq!(PRIOR_BYTES, 8192);
        assert_eq!(VIT_ENTRY_BLOCK, 30);
        assert_eq!(block_kind(VIT_ENTRY_BLOCK), Some(BlockKind::Split512));
        // §1.3: 458 window heads with priors, 256 ViT heads.
        let heads = |vit: bool| -> usize {
            (0..BLOCK_COUNT)
                .filter_map(block)
                .filter(|b| (b.kind == BlockKind::Vit) == vit)
                .map(|b| b.heads())
                .sum()
        };
        assert_eq!((heads(false), heads(true)), (458, 256));
    }
}
