//! Geometry of one Ray Reconstruction frame (spec rr-network §2, §3): the render and output
//! sizes, the six token grids, the 8x8 windows with their 96 keys, mirrored borders and the
//! per-frame window-shift schedule.
//!
//! * **Grids.** Level 0 is the render size padded up to a multiple of 32 on each axis (1280x720
//!   -> 1280x736); each further level halves it (640x368, ..., 40x23) [spec, derived]. Pixels of
//!   the padding hold mirrored render pixels ([`mirror`] about the render size).
//! * **Windows.** 64 query tokens (an 8x8 window, row-major) and 96 key tokens: the same 64, then
//!   the 32 tokens of the one-token ring without its corners (10x10 minus 4), in the order of
//!   [`KEY_OFFSETS`]: the row above (x = 0..7), the row below, the column to the left (y = 0..7),
//!   the column to the right. That the halo is this ring is the spec's interpretation [I]; its
//!   order is openngx's own (it only has to agree with the score-bias tables' key index).
//!   Window `(i, j)` of a grid starts at `(8i - sx, 8j - sy)`; there are `ceil((size + s) / 8)`
//!   windows per axis, so every token is a query of exactly one window. Gathers outside the
//!   grid mirror the coordinate about the grid's edge ([`mirror`], the spec's
//!   `v -> |v|, min(v, 2n - 2 - v)`, continued periodically where a tiny grid needs it).
//! * **Shift schedule** (not documented by the spec; openngx's own): frame `f` runs every encoder
//!   at shift `PHASES[f mod 4]` = (0,0), (4,4), (0,4), (4,0) and every decoder at that shift with
//!   both axes flipped by 4 ([`shift`]). So within a frame the decoder's windows straddle the
//!   seams of the encoder's at the same level (the skip path crosses window borders), and over
//!   four frames every seam moves on both axes, which the temporal blend averages. Shifts are
//!   even, so a window's 2x2 token quads are the merged grid's tokens.
//!
//! Owns no buffers and knows no weights; the layer table (`rr::layers`) says which level each
//! layer runs at.

use std::fmt;

use crate::rr::layers::{Side, LEVELS};

/// Largest accepted size per axis (NGX's textures stop at 16384).
pub const MAX_AXIS: u32 = 16_384;
/// Alignment of the level-0 grid (render size padded up to it).
pub const GRID_ALIGN: u32 = 32;
/// Window side in tokens.
pub const WINDOW: u32 = 8;
/// Query tokens of a window.
pub const QUERIES: usize = 64;
/// Key tokens of a window.
pub const KEYS: usize = 96;

/// A width x height pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Size {
    pub w: u32,
    pub h: u32,
}

impl Size {
    pub const fn new(w: u32, h: u32) -> Self {
        Size { w, h }
    }

    /// `w * h`.
    pub const fn area(&self) -> usize {
        self.w as usize * self.h as usize
    }
}

impl fmt::Display for Size {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}x{}", self.w, self.h)
    }
}

/// Why a pair of sizes has no RR geometry.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GeometryError {
    #[error("RR geometry: the {what} size {size} has a zero axis")]
    Zero { what: &'static str, size: Size },
    #[error("RR geometry: the {what} size {size} is above the maximum of {MAX_AXIS} per axis")]
    TooLarge { what: &'static str, size: Size },
    #[error("RR geometry: the output {output} is smaller than the render size {render} on an axis (RR upscales or keeps the size)")]
    Downscale { render: Size, output: Size },
}

/// A window shift `(sx, sy)`, each 0 or 4.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Shift {
    pub x: u32,
    pub y: u32,
}

/// The per-frame encoder shifts, cycled by frame index.
pub const PHASES: [Shift; 4] = [
    Shift { x: 0, y: 0 },
    Shift { x: 4, y: 4 },
    Shift { x: 0, y: 4 },
    Shift { x: 4, y: 0 },
];

/// The window shift of a layer on `side` in frame `frame` (openngx's schedule, see the module).
pub fn shift(frame: u64, side: Side) -> Shift {
    let p = PHASES[(frame % 4) as usize];
    match side {
        Side::Encoder => p,
        Side::Decoder => Shift {
            x: p.x ^ 4,
            y: p.y ^ 4,
        },
    }
}

/// Key `k`'s position relative to the window origin (keys 0..63 are the queries, row-major).
pub const KEY_OFFSETS: [(i32, i32); KEYS] = {
    let mut t = [(0i32, 0i32); KEYS];
    let mut i = 0;
    while i < 64 {
        t[i] = ((i % 8) as i32, (i / 8) as i32);
        i += 1;
    }
    let mut j = 0;
    while j < 8 {
        t[64 + j] = (j as i32, -1);
        t[72 + j] = (j as i32, 8);
        t[80 + j] = (-1, j as i32);
        t[88 + j] = (8, j as i32);
        j += 1;
    }
    t
};

/// Mirror a coordinate into `0..n` (the spec's `v -> |v|`, then `min(v, 2n - 2 - v)`), continued
/// periodically (period `2n - 2`) for coordinates that formula leaves outside; `n = 1` gives 0.
pub fn mirror(v: i64, n: u32) -> u32 {
    let n = n as i64;
    if n <= 1 {
        return 0;
    }
    let period = 2 * n - 2;
    let m = v.abs() % period;
    (if m < n { m } else { period - m }) as u32
}

/// The sizes of one frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Geometry {
    /// The render (input) size.
    pub render: Size,
    /// The output size.
    pub output: Size,
    /// Token grids, level 0 (render padded to [`GRID_ALIGN`]) to level 5.
    pub levels: [Size; LEVELS],
}

impl Geometry {
    /// Geometry for a render and an output size (each axis 1..=MAX_AXIS, output >= render).
    pub fn new(render: Size, output: Size) -> Result<Self, GeometryError> {
        for (what, s) in [("render", render), ("output", output)] {
            if s.w == 0 || s.h == 0 {
                return Err(GeometryError::Zero { what, size: s });
            }
            if s.w > MAX_AXIS || s.h > MAX_AXIS {
                return Err(GeometryError::TooLarge { what, size: s });
            }
        }
        if output.w < render.w || output.h < render.h {
            return Err(GeometryError::Downscale { render, output });
        }
        let base = Size::new(
            render.w.div_ceil(GRID_ALIGN) * GRID_ALIGN,
            render.h.div_ceil(GRID_ALIGN) * GRID_ALIGN,
        );
        let mut levels = [base; LEVELS];
        for (l, s) in levels.iter_mut().enumerate() {
            *s = Size::new(base.w >> l, base.h >> l);
        }
        Ok(Geometry {
            render,
            output,
            levels,
        })
    }

    /// The token grid of level `l`.
    pub fn level(&self, l: usize) -> Size {
        self.levels[l]
    }

    /// Windows per axis of level `l` at shift `s`.
    pub fn windows(&self, l: usize, s: Shift) -> (u32, u32) {
        let g = self.levels[l];
        ((g.w + s.x).div_ceil(WINDOW), (g.h + s.y).div_ceil(WINDOW))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grids_of_the_spec() {
        let g = Geometry::new(Size::new(1280, 720), Size::new(3840, 2160)).unwrap();
        let want = [
            (1280, 736),
            (640, 368),
            (320, 184),
            (160, 92),
            (80, 46),
            (40, 23),
        ];
        for (l, (w, h)) in want.into_iter().enumerate() {
            assert_eq!(g.level(l), Size::new(w, h), "level {l}");
        }
        // 1920x1080: 1920x1088 .. 60x34.
        let g = Geometry::new(Size::new(1920, 1080), Size::new(3840, 2160)).unwrap();
        assert_eq!(g.level(0), Size::new(1920, 1088));
        assert_eq!(g.level(5), Size::new(60, 34));
        // Tiny sizes still have every level.
        let g = Geometry::new(Size::new(1, 1), Size::new(1, 1)).unwrap();
        assert_eq!(g.level(5), Size::new(1, 1));
    }

    #[test]
    fn refused_sizes() {
        let r = Size::new(64, 64);
        assert!(matches!(
            Geometry::new(Size::new(0, 4), r),
            Err(GeometryError::Zero { .. })
        ));
        assert!(matches!(
            Geometry::new(r, Size::new(MAX_AXIS + 1, 64)),
            Err(GeometryError::TooLarge { .. })
        ));
        assert!(matches!(
            Geometry::new(r, Size::new(63, 128)),
            Err(GeometryError::Downscale { .. })
        ));
    }

    #[test]
    fn every_token_is_a_query_of_one_window() {
        let g = Geometry::new(Size::new(1280, 720), Size::new(1280, 720)).unwrap();
        for l in 0..LEVELS {
            for s in PHASES {
                let (wx, wy) = g.windows(l, s);
                let grid = g.level(l);
                // Coverage per axis: [-s, 8·n - s) contains [0, size), and the first and last
                // windows hold at least one token.
                assert!(8 * wx >= grid.w + s.x && 8 * (wx - 1) < grid.w + s.x);
                assert!(8 * wy >= grid.h + s.y && 8 * (wy - 1) < grid.h + s.y);
            }
        }
        assert_eq!(g.windows(0, PHASES[0]), (160, 92));
        assert_eq!(g.windows(0, PHASES[1]), (161, 93));
    }

    #[test]
    fn keys_are_the_ring_without_corners() {
        let mut seen = std::collections::HashSet::new();
        for (x, y) in KEY_OFFSETS {
            assert!((-1..=8).contains(&x) && (-1..=8).contains(&y));
            assert!(
                !((x == -1 || x == 8) && (y == -1 || y == 8)),
                "corner ({x},{y})"
            );
            assert!(seen.insert((x, y)));
        }
        assert_eq!(seen.len(), 96);
        for (t, &k) in KEY_OFFSETS.iter().enumerate().take(64) {
            assert_eq!(k, ((t % 8) as i32, (t / 8) as i32));
        }
    }

    #[test]
    fn mirror_matches_the_spec_formula_where_it_applies() {
        for n in 2..40u32 {
            for v in -(2 * n as i64 - 2)..(2 * n as i64 - 1) {
                let a = v.abs();
                let spec = a.min(2 * n as i64 - 2 - a);
                if (0..n as i64).contains(&spec) {
                    assert_eq!(mirror(v, n) as i64, spec, "v {v} n {n}");
                }
                assert!(mirror(v, n) < n);
            }
        }
        assert_eq!(mirror(-1, 10), 1);
        assert_eq!(mirror(10, 10), 8);
        assert_eq!(mirror(-9, 1), 0);
        assert_eq!(mirror(25, 3), 1); // period 4: 25 -> 1
    }

    #[test]
    fn shift_schedule() {
        for f in 0..8u64 {
            let e = shift(f, Side::Encoder);
            let d = shift(f, Side::Decoder);
            assert!(e.x != d.x && e.y != d.y, "frame {f}");
            assert_eq!(e, PHASES[(f % 4) as usize]);
        }
    }
}
