//! Geometry of one DLSS-NR frame: the padded field, the six pooling levels, the ViT token count,
//! the shifted-window grids and phases, the window token orders and the 75 boundary tensors.
//!
//! Everything is derived from the valid (requested) size alone, with integer arithmetic, exactly
//! as spec `nr-network.md` §1.2, §1.3 and §1.5 state it. This module owns no buffers and knows
//! nothing of weights; the graph, the CPU reference and the GPU recorder read their sizes here.
//! Which level each block runs at, and its width, come from the block table (`model::blocks`).

use std::fmt;

use crate::model::blocks::{self, BlockKind};

pub use crate::model::blocks::Level;

/// Largest accepted valid size per axis. Far above any NGX size (8192); it only keeps every
/// derived product comfortably inside `u64` and every coordinate inside `i32`.
pub const MAX_AXIS: u32 = 32_768;

/// Number of pooling levels below the field (L0..L5).
pub const LEVEL_COUNT: usize = 6;

/// Window side in tokens (8x8 windows).
pub const WINDOW: u32 = 8;

/// Tokens in one window.
pub const WINDOW_TOKENS: usize = 64;

/// Why a valid size has no geometry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GeometryError {
    /// An axis of zero pixels.
    Zero { axis: Axis },
    /// An axis above [`MAX_AXIS`].
    TooLarge { axis: Axis, size: u32 },
    /// The level-0 grid is not made of whole 8x8 windows; native DLSS-NR then runs the L0
    /// decoder on a larger grid and crops, which is not implemented (spec §1.2 rule 5, §7.1).
    NeedsLevel0Crop {
        width: u32,
        height: u32,
        axis: Axis,
        field: u32,
        level0: u32,
    },
}

/// An image axis, for error messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Axis {
    Width,
    Height,
}

impl fmt::Display for Axis {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Axis::Width => "width",
            Axis::Height => "height",
        })
    }
}

impl fmt::Display for GeometryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GeometryError::Zero { axis } => write!(f, "NR geometry: the {axis} is 0 px"),
            GeometryError::TooLarge { axis, size } => write!(
                f,
                "NR geometry: the {axis} of {size} px is above the supported maximum of {MAX_AXIS} px"
            ),
            GeometryError::NeedsLevel0Crop {
                width,
                height,
                axis,
                field,
                level0,
            } => write!(
                f,
                "NR geometry: {width}x{height} is not supported: its padded field {axis} is \
                 {field} and level 0 would be {level0} tokens wide on that axis, not a multiple \
                 of 8, which needs the level-0 crop that is not implemented; every size of at \
                 least 33 px on both axes works (widths 1-16 and 25-32 px are refused)"
            ),
        }
    }
}

impl std::error::Error for GeometryError {}

/// A width x height pair of a grid (pixels or tokens).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Size {
    pub w: u32,
    pub h: u32,
}

impl Size {
    pub const fn new(w: u32, h: u32) -> Self {
        Size { w, h }
    }

    /// Number of cells (tokens or pixels), `w * h`.
    pub const fn area(&self) -> usize {
        self.w as usize * self.h as usize
    }
}

/// `ceil(v / a) * a` for a power-of-two or any positive `a`.
const fn align_up(v: u32, a: u32) -> u32 {
    v.div_ceil(a) * a
}

/// One pooling step: `alignUp(ceil(s/2), 4)`.
const fn half_level(s: u32) -> u32 {
    align_up(s.div_ceil(2), 4)
}

/// The number of reductions of one axis (spec §1.2 rule 1): one per level that really halves the
/// axis, plus one at level 0 when the halved size is not a multiple of 8.
pub const fn reductions(v: u32) -> u32 {
    let mut s = v;
    let mut count = 0;
    let mut level = 0;
    while level < LEVEL_COUNT {
        let half = half_level(s);
        if half < s {
            count += 1;
        }
        if level == 0 && half % 8 != 0 {
            count += 1;
        }
        s = half;
        level += 1;
    }
    count
}

/// A window-shift phase 0..=3 (spec §1.5): the window grid origin is `(8i - sx, 8j - sy)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Phase(pub u8);

impl Phase {
    /// `(shiftX, shiftY)` of the phase: 0 -> (0,0), 1 -> (4,4), 2 -> (4,0), 3 -> (0,4).
    pub const fn shift(self) -> (u32, u32) {
        match self.0 & 3 {
            0 => (0, 0),
            1 => (4, 4),
            2 => (4, 0),
            _ => (0, 4),
        }
    }

    /// Token coordinate of the top-left corner of window `(i, j)` (may be negative).
    pub const fn window_origin(self, i: u32, j: u32) -> (i32, i32) {
        let (sx, sy) = self.shift();
        (
            (WINDOW * i) as i32 - sx as i32,
            (WINDOW * j) as i32 - sy as i32,
        )
    }
}

/// What runs at a block number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BlockSite {
    /// A shifted-window transformer block at this level (blocks 0..=30 except the ViT,
    /// 40..=70).
    Window(Level),
    /// A global ViT block at L5 (31..=38): no window, no phase.
    Vit,
    /// Block 39: the ViT exit transition and L4 merge, no attention.
    Merge,
}

/// Where block `block` runs, or `None` past block 70.
pub const fn block_site(block: usize) -> Option<BlockSite> {
    let Some(b) = blocks::block(block) else {
        return None;
    };
    Some(match b.kind {
        BlockKind::Vit => BlockSite::Vit,
        BlockKind::VitExit => BlockSite::Merge,
        _ => BlockSite::Window(b.level),
    })
}

/// The window phase of a block (spec §1.3/§1.5), `None` for the ViT blocks, block 39 and numbers
/// past 70. Each level keeps its own counter that advances once per block run at that level in
/// execution order, so a decoder stage continues the count of its encoder stage; the field
/// (blocks 0 and 70) has a counter of its own.
pub fn block_phase(block: usize) -> Option<Phase> {
    let Some(BlockSite::Window(level)) = block_site(block) else {
        return None;
    };
    // Counter index 0 = field, 1..=5 = L0..L4 (L5 has no windows).
    let slot = |l: Level| match l {
        Level::Field => 0usize,
        Level::L(k) => 1 + k as usize,
    };
    let mut counters = [0u32; 7];
    for earlier in 0..block {
        if let Some(BlockSite::Window(l)) = block_site(earlier) {
            counters[slot(l)] += 1;
        }
    }
    Some(Phase((counters[slot(level)] % 4) as u8))
}

/// Physical (4x4-tiled) position of natural window token `t` (x = t%8, y = t/8), spec §1.5.
pub const fn natural_to_physical(t: usize) -> usize {
    let (x, y) = (t % 8, (t / 8) % 8);
    (y / 4) * 32 + (x / 4) * 16 + (y % 4) * 4 + x % 4
}

/// Natural (row-major) window token at physical position `p`; inverse of
/// [`natural_to_physical`].
pub const fn physical_to_natural(p: usize) -> usize {
    let p = p % 64;
    let (ty, tx, r) = (p / 32, (p / 16) % 2, p % 16);
    let (y, x) = (ty * 4 + r / 4, tx * 4 + r % 4);
    y * 8 + x
}

/// The whole natural -> physical map as a table (for GPU constants and tests).
pub fn natural_to_physical_table() -> [u8; WINDOW_TOKENS] {
    let mut t = [0u8; WINDOW_TOKENS];
    for (i, v) in t.iter_mut().enumerate() {
        *v = natural_to_physical(i) as u8;
    }
    t
}

/// The padded field and the level sizes of one valid size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Geometry {
    /// The requested image size; it sits at the top-left of the field.
    pub valid: Size,
    /// `(alignW, alignH)` = `2^reductions` per axis.
    pub align: Size,
    /// The padded full-resolution grid (blocks 0 and 70, the input lanes and the head).
    pub field: Size,
    /// L0..L5 (L5 = the ViT grid).
    pub levels: [Size; LEVEL_COUNT],
}

/// One of the 75 E4M3 boundary tensors (spec §4.1): `[width*height rows][channels]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Boundary {
    pub name: String,
    pub width: u32,
    pub height: u32,
    pub channels: u32,
}

impl Boundary {
    /// Bytes of the tensor (one E4M3 byte per value).
    pub fn bytes(&self) -> u64 {
        self.width as u64 * self.height as u64 * self.channels as u64
    }
}

impl Geometry {
    /// The geometry of a `width x height` image, or why it has none.
    pub fn new(width: u32, height: u32) -> Result<Self, GeometryError> {
        for (axis, v) in [(Axis::Width, width), (Axis::Height, height)] {
            if v == 0 {
                return Err(GeometryError::Zero { axis });
            }
            if v > MAX_AXIS {
                return Err(GeometryError::TooLarge { axis, size: v });
            }
        }
        let align = Size::new(1 << reductions(width), 1 << reductions(height));
        let mut field = Size::new(
            align_up(width, align.w).max(320),
            align_up(height, align.h).max(320),
        );
        // Native rule with no known reason (spec §1.2 rule 3, §7.7): the width alone grows.
        if field.w % (4 * align.w) == 0 && field.h % (4 * align.h) == 0 {
            field.w += align.w;
        }
        let mut levels = [Size::new(0, 0); LEVEL_COUNT];
        let mut prev = field;
        for l in levels.iter_mut() {
            *l = Size::new(half_level(prev.w), half_level(prev.h));
            prev = *l;
        }
        for (axis, f, l0) in [
            (Axis::Width, field.w, levels[0].w),
            (Axis::Height, field.h, levels[0].h),
        ] {
            if l0 % 8 != 0 {
                return Err(GeometryError::NeedsLevel0Crop {
                    width,
                    height,
                    axis,
                    field: f,
                    level0: l0,
                });
            }
        }
        Ok(Geometry {
            valid: Size::new(width, height),
            align,
            field,
            levels,
        })
    }

    /// The grid of a level.
    pub fn level(&self, level: Level) -> Size {
        match level {
            Level::Field => self.field,
            Level::L(k) => self.levels[(k as usize).min(LEVEL_COUNT - 1)],
        }
    }

    /// ViT tokens: every L5 position.
    pub fn vit_tokens(&self) -> usize {
        self.levels[5].area()
    }

    /// ViT tokens padded to a multiple of 64 (attention only).
    pub fn vit_tokens_padded(&self) -> usize {
        (self.vit_tokens() + 63) & !63
    }

    /// Windows per axis of a level in a phase: `ceil((size + shift) / 8)`.
    pub fn windows(&self, level: Level, phase: Phase) -> Size {
        let s = self.level(level);
        let (sx, sy) = phase.shift();
        Size::new((s.w + sx).div_ceil(WINDOW), (s.h + sy).div_ceil(WINDOW))
    }

    /// The window grid of a block, `None` for the ViT blocks, block 39 and numbers past 70.
    pub fn block_windows(&self, block: usize) -> Option<Size> {
        match (block_site(block), block_phase(block)) {
            (Some(BlockSite::Window(level)), Some(phase)) => Some(self.windows(level, phase)),
            _ => None,
        }
    }

    /// True when the one-step mirror `2*valid - x - 2` stays inside the image for every padded
    /// pixel (field < 2*valid - 1 + 1 per axis); the NGX replacement requires it at creation.
    /// [`crate::nr::frame::mirror`] is total either way.
    pub fn single_mirror_fits(&self) -> bool {
        self.field.w < 2 * self.valid.w && self.field.h < 2 * self.valid.h
    }

    /// The 75 boundary tensors in graph order (spec §4.1): `block-0`, `transition-0-1`,
    /// `block-1`..`block-4`, `transition-4-5`, ..., `transition-22-23`, `block-23`..`block-69`.
    /// Every block but the post block publishes its output (block 39: the L4 merge); block 0 and
    /// the last block of each encoder window stage also publish their transition.
    pub fn boundaries(&self) -> Vec<Boundary> {
        let mut out = Vec::with_capacity(75);
        let publish = |out: &mut Vec<Boundary>, name: String, block: &blocks::Block| {
            let s = self.level(block.level);
            out.push(Boundary {
                name,
                width: s.w,
                height: s.h,
                channels: block.channels as u32,
            });
        };
        for (n, b) in (0..blocks::BLOCK_COUNT).filter_map(|n| Some((n, blocks::block(n)?))) {
            if b.kind == BlockKind::Post {
                continue;
            }
            publish(&mut out, format!("block-{n}"), &b);
            // Encoder transitions: after block 0 (pool only) and after the last block of
            // each encoder window stage below the ViT (pool + C -> 2C GEMM).
            if matches!(b.kind, BlockKind::Pre | BlockKind::EncoderLast) {
                if let Some(next) = blocks::block(n + 1) {
                    publish(&mut out, format!("transition-{n}-{}", n + 1), &next);
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn levels(g: &Geometry) -> Vec<(u32, u32)> {
        g.levels.iter().map(|s| (s.w, s.h)).collect()
    }

    #[test]
    fn verified_examples_table() {
        // Spec §1.2 "verified examples": valid -> field; L0..L5.
        type Row = ((u32, u32), (u32, u32), [(u32, u32); 6]);
        let rows: [Row; 8] = [
            (
                (512, 512),
                (576, 512),
                [
                    (288, 256),
                    (144, 128),
                    (72, 64),
                    (36, 32),
                    (20, 16),
                    (12, 8),
                ],
            ),
            (
                (768, 768),
                (832, 768),
                [
                    (416, 384),
                    (208, 192),
                    (104, 96),
                    (52, 48),
                    (28, 24),
                    (16, 12),
                ],
            ),
            (
                (644, 768),
                (768, 768),
                [
                    (384, 384),
                    (192, 192),
                    (96, 96),
                    (48, 48),
                    (24, 24),
                    (12, 12),
                ],
            ),
            (
                (1280, 720),
                (1344, 768),
                [
                    (672, 384),
                    (336, 192),
                    (168, 96),
                    (84, 48),
                    (44, 24),
                    (24, 12),
                ],
            ),
            (
                (1920, 1080),
                (1920, 1152),
                [
                    (960, 576),
                    (480, 288),
                    (240, 144),
                    (120, 72),
                    (60, 36),
                    (32, 20),
                ],
            ),
            (
                (2048, 1152),
                (2048, 1152),
                [
                    (1024, 576),
                    (512, 288),
                    (256, 144),
                    (128, 72),
                    (64, 36),
                    (32, 20),
                ],
            ),
            (
                (2560, 1440),
                (2560, 1472),
                [
                    (1280, 736),
                    (640, 368),
                    (320, 184),
                    (160, 92),
                    (80, 48),
                    (40, 24),
                ],
            ),
            (
                (3840, 2160),
                (3840, 2176),
                [
                    (1920, 1088),
                    (960, 544),
                    (480, 272),
                    (240, 136),
                    (120, 68),
                    (60, 36),
                ],
            ),
        ];
        for ((w, h), (fw, fh), lv) in rows {
            let g = Geometry::new(w, h).unwrap_or_else(|e| panic!("{w}x{h}: {e}"));
            assert_eq!((g.field.w, g.field.h), (fw, fh), "{w}x{h} field");
            assert_eq!(levels(&g), lv.to_vec(), "{w}x{h} levels");
        }
        let g768 = Geometry::new(768, 768).unwrap();
        assert_eq!(g768.vit_tokens(), 192);
        assert_eq!(g768.vit_tokens_padded(), 192);
        let g1080 = Geometry::new(1920, 1080).unwrap();
        assert_eq!(g1080.vit_tokens(), 640);
        assert_eq!(g1080.vit_tokens_padded(), 640);
        let g512 = Geometry::new(512, 512).unwrap();
        assert_eq!(g512.vit_tokens(), 96);
        assert_eq!(g512.vit_tokens_padded(), 128);
    }

    #[test]
    fn small_64_reading_8_1() {
        let g = Geometry::new(64, 64).unwrap();
        assert_eq!(reductions(64), 4);
        assert_eq!(g.align, Size::new(16, 16));
        assert_eq!(g.field, Size::new(336, 320));
        assert_eq!(
            levels(&g),
            vec![(168, 160), (84, 80), (44, 40), (24, 20), (12, 12), (8, 8)]
        );
        assert_eq!(g.vit_tokens(), 64);
        assert_eq!(g.vit_tokens_padded(), 64);
        assert!(!g.single_mirror_fits());
    }

    #[test]
    fn refused_sizes_need_the_level0_crop() {
        // §8.11: 16x64 and 30x64 are refused; the error names the axis and the L0 size.
        for w in [16u32, 30] {
            match Geometry::new(w, 64) {
                Err(GeometryError::NeedsLevel0Crop { axis, level0, .. }) => {
                    assert_eq!(axis, Axis::Width);
                    assert_ne!(level0 % 8, 0);
                }
                other => panic!("{w}x64 gave {other:?}"),
            }
        }
        let msg = Geometry::new(16, 64).unwrap_err().to_string();
        assert!(msg.contains("16x64") && msg.contains("33 px"), "{msg}");
        assert_eq!(
            Geometry::new(0, 64),
            Err(GeometryError::Zero { axis: Axis::Width })
        );
        assert_eq!(
            Geometry::new(64, MAX_AXIS + 1),
            Err(GeometryError::TooLarge {
                axis: Axis::Height,
                size: MAX_AXIS + 1
            })
        );
        // Every size of at least 33 px per axis works (sampled densely up to 1100 and along
        // the axes up to 8192); refusals only ever come from widths 1-16 and 25-32.
        for w in 33..1100u32 {
            for h in (33..1100u32).step_by(7) {
                assert!(Geometry::new(w, h).is_ok(), "{w}x{h}");
                assert!(Geometry::new(h, w).is_ok(), "{h}x{w}");
            }
        }
        for v in 33..=8192u32 {
            assert!(Geometry::new(v, 720).is_ok() && Geometry::new(1280, v).is_ok());
        }
        for w in 1..=40u32 {
            for h in 1..=400u32 {
                if let Err(e) = Geometry::new(w, h) {
                    assert!(
                        (1..=16).contains(&w) || (25..=32).contains(&w),
                        "{w}x{h}: {e}"
                    );
                }
            }
        }
        // Width 17-24 is fine at 64 px of height.
        assert!(Geometry::new(20, 64).is_ok());
    }

    #[test]
    fn every_level_is_a_multiple_of_4_and_l0_of_8() {
        for (w, h) in [(33, 33), (64, 64), (100, 37), (1280, 720), (4097, 2049)] {
            let g = Geometry::new(w, h).unwrap();
            assert!(g.field.w >= w && g.field.h >= h);
            assert_eq!(g.levels[0].w % 8, 0);
            assert_eq!(g.levels[0].h % 8, 0);
            for l in g.levels {
                assert_eq!((l.w % 4, l.h % 4), (0, 0), "{w}x{h}");
            }
        }
        assert_eq!(Geometry::new(33, 33).unwrap().field, Size::new(320, 320));
    }

    #[test]
    fn block_phase_table() {
        // Spec §1.3 phase column, block by block (None = ViT / block 39).
        #[rustfmt::skip]
        let expected: [Option<u8>; 71] = {
            let n = None;
            let p = Some;
            [
                p(0), // 0
                p(0), p(1), p(2), p(3), // 1-4
                p(0), p(1), p(2), p(3), // 5-8
                p(0), p(1), p(2), p(3), p(0), p(1), // 9-14
                p(0), p(1), p(2), p(3), p(0), p(1), p(2), p(3), // 15-22
                p(0), p(1), p(2), p(3), p(0), p(1), p(2), p(3), // 23-30
                n, n, n, n, n, n, n, n, // 31-38
                n, // 39
                p(0), p(1), p(2), p(3), p(0), p(1), p(2), p(3), // 40-47
                p(0), p(1), p(2), p(3), p(0), p(1), p(2), p(3), // 48-55
                p(2), p(3), p(0), p(1), p(2), p(3), // 56-61
                p(0), p(1), p(2), p(3), // 62-65
                p(0), p(1), p(2), p(3), // 66-69
                p(1), // 70
            ]
        };
        for (b, e) in expected.iter().enumerate() {
            assert_eq!(block_phase(b).map(|p| p.0), *e, "block {b}");
        }
        assert_eq!(block_phase(71), None);
        assert_eq!(block_site(39), Some(BlockSite::Merge));
        assert_eq!(block_site(35), Some(BlockSite::Vit));
        assert_eq!(block_site(70), Some(BlockSite::Window(Level::Field)));
    }

    #[test]
    fn window_counts() {
        let g = Geometry::new(64, 64).unwrap();
        // Field 336x320: phase 0 -> 42x40, phase 1 -> ceil(340/8)=43 x ceil(324/8)=41.
        assert_eq!(g.windows(Level::Field, Phase(0)), Size::new(42, 40));
        assert_eq!(g.windows(Level::Field, Phase(1)), Size::new(43, 41));
        assert_eq!(g.windows(Level::Field, Phase(2)), Size::new(43, 40));
        assert_eq!(g.windows(Level::Field, Phase(3)), Size::new(42, 41));
        // L4 = 12x12: phase 1 -> 2x2 windows.
        assert_eq!(g.windows(Level::L(4), Phase(1)), Size::new(2, 2));
        assert_eq!(g.block_windows(70), Some(Size::new(43, 41)));
        assert_eq!(g.block_windows(35), None);
        assert_eq!(Phase(1).window_origin(0, 0), (-4, -4));
        assert_eq!(Phase(3).window_origin(2, 1), (16, 4));
    }

    #[test]
    fn window_token_maps() {
        let t = natural_to_physical_table();
        let mut seen = [false; 64];
        for (n, &p) in t.iter().enumerate() {
            assert!(!seen[p as usize]);
            seen[p as usize] = true;
            assert_eq!(physical_to_natural(p as usize), n);
        }
        // Row 0 of the window: x 0..3 -> 0..3, x 4..7 -> 16..19; row 4 starts the second tile row.
        assert_eq!(&t[0..8], &[0, 1, 2, 3, 16, 17, 18, 19]);
        assert_eq!(t[8], 4);
        assert_eq!(t[32], 32);
        assert_eq!(t[63], 63);
        assert_eq!(natural_to_physical(8 * 5 + 6), 32 + 16 + 4 + 2);
    }

    #[test]
    fn boundaries_at_512() {
        let g = Geometry::new(512, 512).unwrap();
        let b = g.boundaries();
        assert_eq!(b.len(), 75);
        let total: u64 = b.iter().map(Boundary::bytes).sum();
        assert_eq!(total, 57_704_448);
        let find = |n: &str| b.iter().find(|x| x.name == n).cloned().unwrap();
        assert_eq!(
            (
                find("block-0").width,
                find("block-0").height,
                find("block-0").channels
            ),
            (576, 512, 32)
        );
        let t = find("transition-4-5");
        assert_eq!((t.width, t.height, t.channels), (144, 128, 64));
        let v = find("block-35");
        assert_eq!((v.width, v.height, v.channels), (12, 8, 1024));
        let m = find("block-39");
        assert_eq!((m.width, m.height, m.channels), (20, 16, 512));
        assert_eq!(b[1].name, "transition-0-1");
        assert_eq!((b[1].width, b[1].channels), (288, 32));
        assert_eq!(b[74].name, "block-69");
        assert!(b.iter().all(|x| x.name != "block-70"));
    }
}
