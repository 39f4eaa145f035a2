//! Fragment orders of RR's prepared weight image (spec rr-network §6.1, §6.3): where each
//! element of an E4M3 matrix, of a 64x96 score-bias table and of an f16 vector sits.
//!
//! "Natural" here means the GEMM's own indices: an E4M3 matrix is `[n][k]` (output column `n`,
//! input/reduction index `k`, k contiguous), the score bias `[query][key]`, a vector by channel.
//! The hardware k order of §6.3 is the same on the A operand (the activations, §4.2) as on the
//! weights, and a D fragment becomes the next A with column `n` as index `k` (§6.3 "Repacking D"),
//! so these indices are the channel indices the network computes with; nothing else permutes
//! them.
//!
//! * **E4M3 tiles** (§6.3 [V]): 512 bytes hold 32 k x 16 n. Element (n, k) of a tile sits at
//!   `64·(n&7) + 16·((k>>1)&3) + 8·((n>>3)&1) + 4·((k>>3)&1) + 2·((k>>4)&1) + (k&1)`: lane
//!   `4·(n&7) + ((k>>1)&3)` reads its 16 bytes at `16·lane` (§6.1).
//! * **Tile order** inside a matrix, [`TileOrder`]: the QK and V projections step 1024 bytes per
//!   32-row k-slice (§6.1 [V]), i.e. k-slices outer and the two 16-column tiles inner
//!   ([`TileOrder::KMajor`]). Every other matrix is stored 16-column tile after 16-column tile,
//!   each with its k-slices in order ([`TileOrder::NMajor`]). That order is what enc2's merge
//!   (32-channel slices at `12288·z`, §4.2 [V]) and the decoders' expands (one sub-position's
//!   `C_in x C` matrix per wave, §4.4 [V]) need, and what d4r's model of the SR network uses for
//!   W1/W2/Wo [X]; for W1 it is openngx's reading, not a verified fact (for a matrix with K = 32
//!   or N = 16 the two orders coincide).
//! * **Score bias** (§6.3 [V]): element (query 16m + g + 8·row, key 8n + 2t + e) of the 64x96
//!   f16 table is at `512·(4·(n>>1) + m) + 16·(4g + t) + 8·(n&1) + 4·row + 2e`: 24 tiles of
//!   512 bytes, each the C seed of one m16 x n16 score MMA pair.
//! * **f16 vectors** (gains, biases; §6.3 "GEMM biases"): natural order, channel `c` at byte
//!   `2c` (the u32 a lane reads at `((lane·4)&12) + 16·tile` is columns 2t, 2t+1 of its n-tile).

/// Bytes of one E4M3 tile (32 k x 16 n).
pub const TILE_BYTES: usize = 512;
/// k rows of one tile.
pub const TILE_K: usize = 32;
/// n columns of one tile.
pub const TILE_N: usize = 16;
/// Query rows of a score-bias table.
pub const BIAS_QUERIES: usize = super::super::layers::WINDOW_QUERIES;
/// Key columns of a score-bias table.
pub const BIAS_KEYS: usize = super::super::layers::WINDOW_KEYS;
/// Bytes of one head's score-bias table (64 x 96 f16).
pub const BIAS_BYTES: usize = BIAS_QUERIES * BIAS_KEYS * 2;

/// How the 512-byte tiles of an E4M3 matrix follow each other.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TileOrder {
    /// k-slice after k-slice; inside a slice the 16-column tiles in order (tile stride 512, slice
    /// stride 32·N). The QK and V projections (§6.1: 1024 bytes per k-slice for N = 32).
    KMajor,
    /// 16-column tile after tile; inside one, the k-slices in order (slice stride 512, tile
    /// stride 16·K). Every other matrix.
    NMajor,
}

/// Byte of element (n, k) inside its tile (`n < 16`, `k < 32`), §6.3.
#[inline]
pub const fn in_tile(n: usize, k: usize) -> usize {
    64 * (n & 7)
        + 16 * ((k >> 1) & 3)
        + 8 * ((n >> 3) & 1)
        + 4 * ((k >> 3) & 1)
        + 2 * ((k >> 4) & 1)
        + (k & 1)
}

/// (n, k) of byte `b` of a tile (inverse of [`in_tile`]).
#[inline]
pub const fn tile_position(b: usize) -> (usize, usize) {
    let n = ((b >> 6) & 7) | (((b >> 3) & 1) << 3);
    let k = (b & 1) | (((b >> 4) & 3) << 1) | (((b >> 2) & 1) << 3) | (((b >> 1) & 1) << 4);
    (n, k)
}

/// Byte offset of element (n, k) of an `n_cols x k_rows` matrix (`[n][k]`) in `order`.
#[inline]
pub const fn fp8_offset(
    n: usize,
    k: usize,
    n_cols: usize,
    k_rows: usize,
    order: TileOrder,
) -> usize {
    let (nt, ks) = (n / TILE_N, k / TILE_K);
    let tile = match order {
        TileOrder::KMajor => ks * (n_cols / TILE_N) + nt,
        TileOrder::NMajor => nt * (k_rows / TILE_K) + ks,
    };
    tile * TILE_BYTES + in_tile(n % TILE_N, k % TILE_K)
}

/// Bytes of an E4M3 matrix (one per element).
pub const fn fp8_bytes(n: usize, k: usize) -> usize {
    n * k
}

fn check_shape(n: usize, k: usize) {
    // Shapes come from the layout (a fixed table), never from input: a wrong one is a bug.
    assert!(
        n % TILE_N == 0 && k % TILE_K == 0 && n > 0 && k > 0,
        "E4M3 matrix {n}x{k} is not made of 16x32 tiles"
    );
}

/// Visit every tile of an `n x k` matrix as (byte offset of the tile, first n, first k).
fn for_each_tile(n: usize, k: usize, order: TileOrder, mut f: impl FnMut(usize, usize, usize)) {
    let (nts, kss) = (n / TILE_N, k / TILE_K);
    for nt in 0..nts {
        for ks in 0..kss {
            let tile = match order {
                TileOrder::KMajor => ks * nts + nt,
                TileOrder::NMajor => nt * kss + ks,
            };
            f(tile * TILE_BYTES, nt * TILE_N, ks * TILE_K);
        }
    }
}

/// Store the natural `[n][k]` E4M3 codes `natural` into `out` (exactly `n·k` bytes) in `order`.
///
/// # Panics
/// If the lengths or the shape disagree (a programming error: shapes come from the layout).
pub fn pack_fp8(natural: &[u8], n: usize, k: usize, order: TileOrder, out: &mut [u8]) {
    check_shape(n, k);
    assert_eq!(natural.len(), n * k, "natural matrix length");
    assert_eq!(out.len(), n * k, "packed matrix length");
    for_each_tile(n, k, order, |base, n0, k0| {
        let tile = &mut out[base..base + TILE_BYTES];
        for (b, slot) in tile.iter_mut().enumerate() {
            let (dn, dk) = tile_position(b);
            *slot = natural[(n0 + dn) * k + k0 + dk];
        }
    });
}

/// The natural `[n][k]` codes of a packed `n x k` matrix (inverse of [`pack_fp8`]).
///
/// # Panics
/// If `packed` is not `n·k` bytes or the shape is not made of tiles (a programming error).
pub fn unpack_fp8(packed: &[u8], n: usize, k: usize, order: TileOrder) -> Vec<u8> {
    check_shape(n, k);
    assert_eq!(packed.len(), n * k, "packed matrix length");
    let mut natural = vec![0u8; n * k];
    for_each_tile(n, k, order, |base, n0, k0| {
        for (b, &code) in packed[base..base + TILE_BYTES].iter().enumerate() {
            let (dn, dk) = tile_position(b);
            natural[(n0 + dn) * k + k0 + dk] = code;
        }
    });
    natural
}

/// Byte offset of element (query `q`, key `key`) of a packed score-bias table (§6.3).
#[inline]
pub const fn score_bias_offset(q: usize, key: usize) -> usize {
    let (m, g, row) = (q >> 4, q & 7, (q >> 3) & 1);
    let (n, t, e) = (key >> 3, (key >> 1) & 3, key & 1);
    512 * (4 * (n >> 1) + m) + 16 * (4 * g + t) + 8 * (n & 1) + 4 * row + 2 * e
}

/// Store a natural `[64][96]` f16 table (bits) into `out` (12288 bytes) in the C-seed order.
///
/// # Panics
/// On wrong lengths (a programming error).
pub fn pack_score_bias(natural: &[u16], out: &mut [u8]) {
    assert_eq!(natural.len(), BIAS_QUERIES * BIAS_KEYS, "score bias length");
    assert_eq!(out.len(), BIAS_BYTES, "packed score bias length");
    for q in 0..BIAS_QUERIES {
        for key in 0..BIAS_KEYS {
            let at = score_bias_offset(q, key);
            out[at..at + 2].copy_from_slice(&natural[q * BIAS_KEYS + key].to_le_bytes());
        }
    }
}

/// The natural `[64][96]` f16 bits of a packed score-bias table (inverse of [`pack_score_bias`]).
///
/// # Panics
/// If `packed` is not 12288 bytes (a programming error).
pub fn unpack_score_bias(packed: &[u8]) -> Vec<u16> {
    assert_eq!(packed.len(), BIAS_BYTES, "packed score bias length");
    let mut natural = vec![0u16; BIAS_QUERIES * BIAS_KEYS];
    for q in 0..BIAS_QUERIES {
        for key in 0..BIAS_KEYS {
            let at = score_bias_offset(q, key);
            natural[q * BIAS_KEYS + key] = u16::from_le_bytes([packed[at], packed[at + 1]]);
        }
    }
    natural
}

/// Write f16 bits little-endian, natural order (`out` is exactly `2·values.len()` bytes).
///
/// # Panics
/// On wrong lengths (a programming error).
pub fn write_f16s(values: &[u16], out: &mut [u8]) {
    assert_eq!(out.len(), 2 * values.len(), "f16 vector length");
    for (chunk, v) in out.chunks_exact_mut(2).zip(values) {
        chunk.copy_from_slice(&v.to_le_bytes());
    }
}

/// Read little-endian f16 bits (an odd trailing byte is ignored; lengths come from the layout).
pub fn read_f16s(bytes: &[u8]) -> Vec<u16> {
    bytes
        .chunks_exact(2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// §6.3's tile formula is a bijection of the 1024 (n, k) pairs of two tiles onto 1024 bytes,
    /// and `tile_position` inverts it on every byte.
    #[test]
    fn tile_formula_is_a_bijection_and_inverted() {
        let mut seen = [false; 2 * TILE_BYTES];
        for n in 0..32 {
            for k in 0..32 {
                // The spec's formula for the two tiles of a 32x32 block (enc0, hardware k order).
                let spec = 512 * (n >> 4)
                    + 64 * (n & 7)
                    + 16 * ((k >> 1) & 3)
                    + 8 * ((n >> 3) & 1)
                    + 4 * ((k >> 3) & 1)
                    + 2 * ((k >> 4) & 1)
                    + (k & 1);
                let ours = fp8_offset(n, k, 32, 32, TileOrder::KMajor);
                assert_eq!(ours, spec, "(n {n}, k {k})");
                assert_eq!(ours, fp8_offset(n, k, 32, 32, TileOrder::NMajor));
                assert!(!seen[ours], "byte {ours} twice");
                seen[ours] = true;
            }
        }
        for b in 0..TILE_BYTES {
            let (n, k) = tile_position(b);
            assert!(n < TILE_N && k < TILE_K);
            assert_eq!(in_tile(n, k), b);
        }
    }

    /// Lane view (§6.1, §6.3): lane `4·(n&7) + t` holds columns n and n+8 at k = 2t + (j&1) +
    /// 16·(j>>1) (+8 in its second register) — the B-fragment twin of the A fragment.
    #[test]
    fn lanes_hold_the_b_fragments() {
        for lane in 0..32 {
            let (g, t) = (lane >> 2, lane & 3);
            for byte in 0..16 {
                let (reg, j) = (byte / 4, byte % 4);
                let n = g + 8 * (reg >> 1);
                let k = 2 * t + (j & 1) + 16 * (j >> 1) + 8 * (reg & 1);
                assert_eq!(in_tile(n, k), 16 * lane + byte, "lane {lane} byte {byte}");
            }
        }
    }

    #[test]
    fn projection_slices_step_1024_and_merge_slices_are_contiguous() {
        // A C x 32 projection (n = 32): k-slice s starts at 1024·s (§6.1).
        for s in 0..5 {
            let first = (0..32)
                .flat_map(|n| (0..32).map(move |k| (n, k)))
                .map(|(n, k)| fp8_offset(n, 32 * s + k, 32, 160, TileOrder::KMajor))
                .min();
            assert_eq!(first, Some(1024 * s));
        }
        // enc2's merge (k = 384, n = 128): output channels 32z..32z+31 occupy 12288 bytes from
        // 12288·z (§4.2).
        for z in 0..4 {
            let (lo, hi) = (0..32)
                .flat_map(|dn| (0..384).map(move |k| (32 * z + dn, k)))
                .map(|(n, k)| fp8_offset(n, k, 128, 384, TileOrder::NMajor))
                .fold((usize::MAX, 0), |(lo, hi), o| (lo.min(o), hi.max(o)));
            assert_eq!((lo, hi), (12288 * z, 12288 * z + 12287), "slice {z}");
        }
    }

    /// Pack/unpack round trips over every tile position of matrices of every shape the layout
    /// uses, both orders, and every byte of the packed form is written exactly once.
    #[test]
    fn fp8_round_trips_in_both_orders() {
        for (n, k) in [
            (32, 32),
            (32, 160),
            (160, 32),
            (16, 96),
            (64, 128),
            (640, 160),
            (96, 384),
        ] {
            for order in [TileOrder::KMajor, TileOrder::NMajor] {
                // Distinct-ish codes: position-dependent, so a misplaced byte shows.
                let natural: Vec<u8> = (0..n * k).map(|i| (i * 131 + i / 251) as u8).collect();
                let mut packed = vec![0u8; n * k];
                pack_fp8(&natural, n, k, order, &mut packed);
                assert_eq!(
                    unpack_fp8(&packed, n, k, order),
                    natural,
                    "{n}x{k} {order:?}"
                );
                let mut hits = vec![0u8; n * k];
                for nn in 0..n {
                    for kk in 0..k {
                        let at = fp8_offset(nn, kk, n, k, order);
                        hits[at] += 1;
                        assert_eq!(packed[at], natural[nn * k + kk]);
                    }
                }
                assert!(
                    hits.iter().all(|&h| h == 1),
                    "{n}x{k} {order:?} not a bijection"
                );
            }
        }
    }

    #[test]
    fn score_bias_round_trips_and_matches_the_c_seed_fragments() {
        let natural: Vec<u16> = (0..BIAS_QUERIES * BIAS_KEYS)
            .map(|i| (i * 7 + 3) as u16)
            .collect();
        let mut packed = vec![0u8; BIAS_BYTES];
        pack_score_bias(&natural, &mut packed);
        assert_eq!(unpack_score_bias(&packed), natural);
        // Every byte pair written once.
        let mut hits = vec![0u8; BIAS_BYTES / 2];
        for q in 0..BIAS_QUERIES {
            for key in 0..BIAS_KEYS {
                hits[score_bias_offset(q, key) / 2] += 1;
            }
        }
        assert!(hits.iter().all(|&h| h == 1));
        // The C fragment of tile (m, n-pair): lane 4g+t holds, in u32 (n&1)·2 + row, the pair of
        // columns 2t, 2t+1 of rows g + 8·row (§6.3 "C/D").
        for m in 0..4 {
            for np in 0..6 {
                for lane in 0..32 {
                    let (g, t) = (lane >> 2, lane & 3);
                    for word in 0..4 {
                        let (nn, row) = (2 * np + (word >> 1), word & 1);
                        for e in 0..2 {
                            let q = 16 * m + g + 8 * row;
                            let key = 8 * nn + 2 * t + e;
                            let at = 512 * (4 * np + m) + 16 * lane + 4 * word + 2 * e;
                            assert_eq!(score_bias_offset(q, key), at);
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn f16_vectors_are_natural_little_endian() {
        let v = [0x3C00u16, 0xBC00, 0x0001, 0x7E00];
        let mut out = [0u8; 8];
        write_f16s(&v, &mut out);
        assert_eq!(out, [0x00, 0x3C, 0x00, 0xBC, 0x01, 0x00, 0x00, 0x7E]);
        assert_eq!(read_f16s(&out), v);
    }
}
