//! Where allocations with known lifetimes go in one address space: the offline placement both
//! networks' tensor memory uses (NR's `nr::record::workspace`, RR's `rr::record::slots`).
//!
//! A frame's schedule is fixed, so every allocation's lifetime, the inclusive interval of
//! schedule steps `[first, last]` during which its bytes must not be shared, is known before
//! anything is recorded. Allocations are placed largest first, each at the lowest aligned offset
//! that overlaps no placed allocation whose interval meets its own. Placing them online in
//! schedule order instead (best fit as tensors appear, freed after their last reader) leaves
//! holes the size of the big early tensors: NR's 1080p frame took 1147 MiB for a peak live set
//! of 742 MiB that way, RR's 1280x720 -> 3840x2160 frame 558 MiB for 379 MiB; largest first
//! comes within a few percent of the peak (the tests of both networks bound it).
//!
//! `piece` is the most bytes one buffer may hold: no allocation crosses a multiple of it, so the
//! address space can be cut into buffers of at most `piece` bytes. One larger than `piece`
//! cannot honour that and is placed across a cut; callers refuse such sizes first.

/// Offsets are multiples of this: the largest `minStorageBufferOffsetAlignment` Vulkan allows.
pub const ALIGN: u64 = 256;

/// One allocation: its bytes and the inclusive interval of steps it is live.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Lifetime {
    pub bytes: u64,
    pub first: usize,
    pub last: usize,
}

/// `v` rounded up to [`ALIGN`].
pub fn align(v: u64) -> u64 {
    v.div_ceil(ALIGN) * ALIGN
}

/// The placement: each allocation's offset (in the order given) and the bytes the address
/// space needs (at least [`ALIGN`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Placed {
    pub offsets: Vec<u64>,
    pub bytes: u64,
}

/// Place `lifetimes` largest first; equal sizes by `first`, then in the order given (so the
/// result is deterministic and callers choose the tie order).
pub fn place(lifetimes: &[Lifetime], piece: u64) -> Placed {
    let piece = (piece / ALIGN * ALIGN).max(ALIGN);
    let mut order: Vec<usize> = (0..lifetimes.len()).collect();
    order.sort_by(|&a, &b| {
        let (x, y) = (&lifetimes[a], &lifetimes[b]);
        y.bytes
            .cmp(&x.bytes)
            .then(x.first.cmp(&y.first))
            .then(a.cmp(&b))
    });
    let mut offsets = vec![0u64; lifetimes.len()];
    // Placed allocations as (offset, end, first, last).
    let mut placed: Vec<(u64, u64, usize, usize)> = Vec::with_capacity(lifetimes.len());
    let mut high = 0u64;
    let mut conflicts: Vec<(u64, u64)> = Vec::new();
    for i in order {
        let l = &lifetimes[i];
        let size = align(l.bytes.max(1));
        conflicts.clear();
        conflicts.extend(
            placed
                .iter()
                .filter(|p| p.2 <= l.last && l.first <= p.3)
                .map(|p| (p.0, p.1)),
        );
        conflicts.sort_unstable();
        // Moved to the next piece when [at, at + size) would cross a cut.
        let fit = |at: u64| {
            if size <= piece && at / piece != (at + size - 1) / piece {
                (at / piece + 1) * piece
            } else {
                at
            }
        };
        let mut at = fit(0);
        for &(o, e) in &conflicts {
            if at + size <= o {
                break;
            }
            at = fit(at.max(align(e)));
        }
        placed.push((at, at + size, l.first, l.last));
        high = high.max(at + size);
        offsets[i] = at;
    }
    Placed {
        offsets,
        bytes: high.max(ALIGN),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lt(bytes: u64, first: usize, last: usize) -> Lifetime {
        Lifetime { bytes, first, last }
    }

    /// Allocations whose intervals meet never share a byte; all are aligned; none crosses a cut.
    fn check(ls: &[Lifetime], p: &Placed, piece: u64) {
        for (i, a) in ls.iter().enumerate() {
            let (ao, ae) = (p.offsets[i], p.offsets[i] + align(a.bytes.max(1)));
            assert_eq!(ao % ALIGN, 0);
            assert!(ae <= p.bytes);
            if align(a.bytes) <= piece {
                assert_eq!(ao / piece, (ae - 1) / piece, "{i} crosses a cut");
            }
            for (j, b) in ls.iter().enumerate().skip(i + 1) {
                let (bo, be) = (p.offsets[j], p.offsets[j] + align(b.bytes.max(1)));
                let live_together = a.first <= b.last && b.first <= a.last;
                assert!(
                    !live_together || ae <= bo || be <= ao,
                    "{i} and {j} share bytes"
                );
            }
        }
    }

    #[test]
    fn disjoint_lifetimes_share_and_meeting_ones_do_not() {
        // 0 and 2 never live together; 1 meets both at their ends.
        let ls = [lt(1000, 0, 1), lt(300, 1, 2), lt(900, 2, 3)];
        let p = place(&ls, u64::MAX);
        check(&ls, &p, u64::MAX);
        assert_eq!(p.offsets[0], p.offsets[2], "the two big ones share");
        assert_eq!(p.bytes, align(1000) + align(300));
    }

    #[test]
    fn random_schedules_are_sound_and_near_their_peak() {
        // A deterministic LCG: many small schedules.
        let mut s = 0x2545_f491_4f6c_dd1du64;
        let mut next = |m: u64| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (s >> 33) % m
        };
        for _ in 0..200 {
            let steps = 4 + next(20) as usize;
            let ls: Vec<Lifetime> = (0..1 + next(30))
                .map(|_| {
                    let first = next(steps as u64) as usize;
                    let last = first + next(4) as usize;
                    lt(1 + next(1 << 16), first, last)
                })
                .collect();
            for piece in [u64::MAX, 1 << 17] {
                let p = place(&ls, piece);
                check(&ls, &p, piece);
                let peak = (0..steps + 4)
                    .map(|t| {
                        ls.iter()
                            .filter(|l| l.first <= t && t <= l.last)
                            .map(|l| align(l.bytes))
                            .sum::<u64>()
                    })
                    .max()
                    .unwrap_or(0);
                assert!(p.bytes >= peak);
            }
        }
    }

    #[test]
    fn ties_keep_the_given_order() {
        let ls = [lt(512, 0, 0), lt(512, 0, 0)];
        let p = place(&ls, u64::MAX);
        assert_eq!(p.offsets, [0, 512]);
    }
}
