//! Storage orders of the weights (spec nr-network §3.4, §3.5, §8.4): E4M3 fragment packing with the
//! chained activation permutation, f16 16x16 fragment tiles (adapter, head), the window prior's
//! accumulator-fragment order, and the little-endian scalar vectors.
//!
//! "Natural" always means the network's own channel order: a natural `K x N` matrix has row `c` =
//! input channel `c`, column `n` = output channel `n`, row-major. Functions here are pure layout
//! transforms; shapes come from [`super::layout`] and are checked with assertions because a wrong
//! shape is a programming error, never bad input.

use super::blocks::PRIOR_BYTES;

/// The chained activation index: A-operand position `k` holds activation channel `packed(k)`.
/// Bits 0 and 4 stay; new bit1 = old bit2, new bit2 = old bit3, new bit3 = old bit1. Only the low
/// five bits move, so the map stays inside every aligned group of 32.
#[inline]
pub const fn packed_channel(k: usize) -> usize {
    let b1 = (k >> 1) & 1;
    let b2 = (k >> 2) & 1;
    let b3 = (k >> 3) & 1;
    (k & !0b1110) | (b2 << 1) | (b3 << 2) | (b1 << 3)
}

/// Inverse of [`packed_channel`]: natural channel `c` is stored at K row `stored_row(c)`.
#[inline]
pub const fn stored_row(c: usize) -> usize {
    let b1 = (c >> 1) & 1;
    let b2 = (c >> 2) & 1;
    let b3 = (c >> 3) & 1;
    (c & !0b1110) | (b3 << 1) | (b1 << 2) | (b2 << 3)
}

/// Byte offset of stored element (row `k`, column `n`) of a fragment-packed E4M3 matrix with `n_cols`
/// columns: `kTile·32·N + (n/16)·512 + lane·16 + byteInLane` (the nTile/nHalf/nGroup strides of §3.4
/// collapse to `(n/16)·512`).
#[inline]
pub const fn fp8_offset(k: usize, n: usize, n_cols: usize) -> usize {
    let lane = 4 * (n % 8) + (k % 16) / 4;
    let byte_in_lane = 8 * ((n % 16) / 8) + 4 * ((k % 32) / 16) + (k % 4);
    (k / 32) * (32 * n_cols) + (n / 16) * 512 + lane * 16 + byte_in_lane
}

/// Stored (row, column) of packed byte `i` of a matrix with `n_cols` columns (inverse of
/// [`fp8_offset`]).
#[inline]
pub const fn fp8_position(i: usize, n_cols: usize) -> (usize, usize) {
    let k_tile = i / (32 * n_cols);
    let in_tile = i % (32 * n_cols);
    let group = in_tile / 512;
    let lane = (in_tile % 512) / 16;
    let b = in_tile % 16;
    let k = k_tile * 32 + 16 * ((b >> 2) & 1) + 4 * (lane & 3) + (b & 3);
    let n = group * 16 + 8 * (b >> 3) + (lane >> 2);
    (k, n)
}

/// Visit every stored byte of a `k x n` fragment-packed matrix in storage order as
/// `(byte index, stored row, column)`. Nested loops instead of [`fp8_position`] keep divisions out
/// of the inner loop (synthesis packs 144 M bytes).
#[inline]
fn for_each_fp8(k: usize, n: usize, mut f: impl FnMut(usize, usize, usize)) {
    let mut i = 0;
    for k_tile in 0..k / 32 {
        for group in 0..n / 16 {
            for lane in 0..32 {
                let row_base = k_tile * 32 + 4 * (lane & 3);
                let col_base = group * 16 + (lane >> 2);
                for b in 0..16 {
                    f(
                        i,
                        row_base + 16 * ((b >> 2) & 1) + (b & 3),
                        col_base + 8 * (b >> 3),
                    );
                    i += 1;
                }
            }
        }
    }
}

fn check_fp8_shape(len: usize, k: usize, n: usize) {
    assert!(
        k % 32 == 0 && n % 16 == 0,
        "E4M3 matrix {k}x{n}: K must be a multiple of 32 and N of 16"
    );
    assert_eq!(len, k * n, "E4M3 matrix {k}x{n}: buffer length");
}

/// Pack a natural `k x n` E4M3 matrix (row-major, natural input channels) into `out` in stored
/// fragment order, moving natural channel `c` to stored row `stored_row(c)`.
pub fn pack_fp8_into(natural: &[u8], k: usize, n: usize, out: &mut [u8]) {
    check_fp8_shape(natural.len(), k, n);
    check_fp8_shape(out.len(), k, n);
    for_each_fp8(k, n, |i, row, col| {
        out[i] = natural[packed_channel(row) * n + col]
    });
}

/// [`pack_fp8_into`] into a new buffer.
pub fn pack_fp8(natural: &[u8], k: usize, n: usize) -> Vec<u8> {
    let mut out = vec![0u8; natural.len()];
    pack_fp8_into(natural, k, n, &mut out);
    out
}

/// Stored fragment order -> natural `k x n` (row = natural input channel).
pub fn unpack_fp8(packed: &[u8], k: usize, n: usize) -> Vec<u8> {
    check_fp8_shape(packed.len(), k, n);
    let mut out = vec![0u8; packed.len()];
    for_each_fp8(k, n, |i, row, col| {
        out[packed_channel(row) * n + col] = packed[i]
    });
    out
}

/// Stored fragment order -> transposed natural `[n][k]`: row = output column, `k` contiguous in
/// natural input-channel order (what a CPU dot-product GEMM reads).
pub fn unpack_fp8_transposed(packed: &[u8], k: usize, n: usize) -> Vec<u8> {
    check_fp8_shape(packed.len(), k, n);
    let mut out = vec![0u8; packed.len()];
    for_each_fp8(k, n, |i, row, col| {
        out[col * k + packed_channel(row)] = packed[i]
    });
    out
}

// ------------------------------------------------------------------------------------------------
// f16 fragment matrices (adapter 16x32, head 32x4 stored as 32x16); no activation permutation.

/// Half index of element (k, n) in an f16 fragment matrix with `n_stored` columns.
#[inline]
pub const fn f16_frag_index(k: usize, n: usize, n_stored: usize) -> usize {
    let tile = (k / 16) * (n_stored / 16) + n / 16;
    let lane = 4 * (n % 8) + (k % 8) / 2;
    let fragment = 2 * ((k % 16) / 8) + (k % 2);
    tile * 256 + lane * 8 + 4 * ((n % 16) / 8) + fragment
}

/// Pack a natural `k x n` f16 matrix (bits, row-major) into fragment tiles of `n_stored` columns
/// (`n` rounded up to 16); unused columns are zero. Returns little-endian bytes.
pub fn pack_f16(natural: &[u16], k: usize, n: usize) -> Vec<u8> {
    let n_stored = n.div_ceil(16) * 16;
    assert!(
        k % 16 == 0,
        "f16 matrix {k}x{n}: K must be a multiple of 16"
    );
    assert_eq!(natural.len(), k * n, "f16 matrix {k}x{n}: buffer length");
    let mut halves = vec![0u16; k * n_stored];
    for row in 0..k {
        for col in 0..n {
            halves[f16_frag_index(row, col, n_stored)] = natural[row * n + col];
        }
    }
    halves.iter().flat_map(|h| h.to_le_bytes()).collect()
}

/// Fragment tiles -> natural `k x n` f16 bits (the unused stored columns are skipped).
pub fn unpack_f16(bytes: &[u8], k: usize, n: usize) -> Vec<u16> {
    let n_stored = n.div_ceil(16) * 16;
    assert!(
        k % 16 == 0,
        "f16 matrix {k}x{n}: K must be a multiple of 16"
    );
    assert_eq!(
        bytes.len(),
        2 * k * n_stored,
        "f16 matrix {k}x{n}: byte length"
    );
    let mut out = vec![0u16; k * n];
    for row in 0..k {
        for col in 0..n {
            let i = 2 * f16_frag_index(row, col, n_stored);
            out[row * n + col] = u16::from_le_bytes([bytes[i], bytes[i + 1]]);
        }
    }
    out
}

// ------------------------------------------------------------------------------------------------
// Window priors (one head = 64x64 f16, 8192 bytes)

/// Natural window token `t` (x = t%8, y = t/8) -> physical (4x4-tiled) token index.
#[inline]
pub const fn window_physical(t: usize) -> usize {
    let (x, y) = (t % 8, t / 8);
    (y / 4) * 32 + (x / 4) * 16 + (y % 4) * 4 + x % 4
}

/// Physical token index -> natural window token (inverse of [`window_physical`]).
#[inline]
pub const fn window_natural(p: usize) -> usize {
    let y = (p / 32) * 4 + (p % 16) / 4;
    let x = ((p / 16) % 2) * 4 + p % 4;
    y * 8 + x
}

/// Half index of prior element (physical query `q`, physical key `k`): the score MMA's
/// C-accumulator fragment order.
#[inline]
pub const fn prior_index(q: usize, k: usize) -> usize {
    let (m, n) = (q % 16, k % 16);
    let lane = 4 * (m % 8) + (n % 8) / 2;
    let fragment = 2 * (m / 8) + (n % 2);
    (q / 16) * 1024 + (k / 16) * 256 + lane * 8 + 4 * (n / 8) + fragment
}

/// One head's 8192 stored bytes -> `[q_phys][k_phys]` f16 bits (64x64).
pub fn prior_physical(bytes: &[u8]) -> Vec<u16> {
    assert_eq!(
        bytes.len(),
        PRIOR_BYTES,
        "prior: one head is {PRIOR_BYTES} bytes"
    );
    let mut out = vec![0u16; 4096];
    for q in 0..64 {
        for k in 0..64 {
            let i = 2 * prior_index(q, k);
            out[q * 64 + k] = u16::from_le_bytes([bytes[i], bytes[i + 1]]);
        }
    }
    out
}

/// `[q_phys][k_phys]` f16 bits -> one head's 8192 stored bytes (inverse of [`prior_physical`]).
pub fn pack_prior_physical(physical: &[u16]) -> Vec<u8> {
    assert_eq!(physical.len(), 4096, "prior: one head is 64x64");
    let mut out = vec![0u8; PRIOR_BYTES];
    for q in 0..64 {
        for k in 0..64 {
            let i = 2 * prior_index(q, k);
            out[i..i + 2].copy_from_slice(&physical[q * 64 + k].to_le_bytes());
        }
    }
    out
}

/// One head's stored bytes -> `[q_natural][k_natural]` f16 bits.
pub fn prior_natural(bytes: &[u8]) -> Vec<u16> {
    let phys = prior_physical(bytes);
    let mut out = vec![0u16; 4096];
    for q in 0..64 {
        for k in 0..64 {
            out[q * 64 + k] = phys[window_physical(q) * 64 + window_physical(k)];
        }
    }
    out
}

// ------------------------------------------------------------------------------------------------
// Scalars

/// Little-endian f16 bits.
pub fn read_f16s(bytes: &[u8]) -> Vec<u16> {
    bytes
        .chunks_exact(2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]))
        .collect()
}

/// Little-endian f32 values.
pub fn read_f32s(bytes: &[u8]) -> Vec<f32> {
    bytes
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// Write f16 bits little-endian into `out` (`out.len() == 2·values.len()`).
pub fn write_f16s(values: &[u16], out: &mut [u8]) {
    assert_eq!(out.len(), 2 * values.len(), "f16 vector length");
    for (dst, v) in out.chunks_exact_mut(2).zip(values) {
        dst.copy_from_slice(&v.to_le_bytes());
    }
}

/// Write f32 values little-endian into `out` (`out.len() == 4·values.len()`).
pub fn write_f32s(values: &[f32], out: &mut [u8]) {
    assert_eq!(out.len(), 4 * values.len(), "f32 vector length");
    for (dst, v) in out.chunks_exact_mut(4).zip(values) {
        dst.copy_from_slice(&v.to_le_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Deterministic test bytes that differ at every position of small matrices.
    fn pattern(len: usize) -> Vec<u8> {
        (0..len)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 7) as u8)
            .collect()
    }

    #[test]
    fn permutation_listing_and_inverse() {
        let first: Vec<usize> = (0..16).map(packed_channel).collect();
        assert_eq!(
            first,
            [0, 1, 8, 9, 2, 3, 10, 11, 4, 5, 12, 13, 6, 7, 14, 15]
        );
        for k in 0..4096 {
            assert_eq!(stored_row(packed_channel(k)), k);
            assert_eq!(packed_channel(stored_row(k)), k);
            assert_eq!(packed_channel(k) / 16, k / 16, "bit 4 and above are kept");
        }
    }

    #[test]
    fn fp8_offset_matches_spec_terms() {
        // The full §3.4 formula with the nTile/nHalf/nGroup terms, for N = 384.
        let n_cols = 384;
        let mut seen = vec![false; 64 * n_cols];
        for k in 0..64 {
            for n in 0..n_cols {
                let spec = (k / 32) * (32 * n_cols)
                    + (n / 128) * 4096
                    + ((n % 128) / 64) * 2048
                    + ((n % 64) / 16) * 512
                    + (4 * (n % 8) + (k % 16) / 4) * 16
                    + 8 * ((n % 16) / 8)
                    + 4 * ((k % 32) / 16)
                    + k % 4;
                let off = fp8_offset(k, n, n_cols);
                assert_eq!(off, spec);
                assert_eq!(fp8_position(off, n_cols), (k, n));
                assert!(!seen[off]);
                seen[off] = true;
            }
        }
    }

    #[test]
    fn storage_walk_matches_position() {
        for (k, n) in [(32, 16), (64, 48), (96, 384)] {
            let mut count = 0;
            for_each_fp8(k, n, |i, row, col| {
                assert_eq!(fp8_position(i, n), (row, col));
                assert_eq!(fp8_offset(row, col, n), i);
                count += 1;
            });
            assert_eq!(count, k * n);
        }
    }

    #[test]
    fn fp8_round_trip_and_placement() {
        for (k, n) in [(32, 16), (64, 32), (128, 96), (96, 384)] {
            let natural = pattern(k * n);
            let packed = pack_fp8(&natural, k, n);
            // Natural channel c is stored at row stored_row(c).
            for c in 0..k {
                for col in 0..n {
                    assert_eq!(
                        packed[fp8_offset(stored_row(c), col, n)],
                        natural[c * n + col]
                    );
                }
            }
            assert_eq!(unpack_fp8(&packed, k, n), natural);
            let t = unpack_fp8_transposed(&packed, k, n);
            for c in 0..k {
                for col in 0..n {
                    assert_eq!(t[col * k + c], natural[c * n + col]);
                }
            }
        }
    }

    #[test]
    fn fp8_known_bytes() {
        // 32x16: natural channel 2 lives at stored row 4 -> lane 1, byte 0.
        let mut natural = vec![0u8; 32 * 16];
        natural[2 * 16] = 0xAB;
        natural[8 * 16 + 9] = 0xCD; // channel 8 -> stored row 2; col 9 -> lane 4, byte 8+2
        let packed = pack_fp8(&natural, 32, 16);
        assert_eq!(packed[16], 0xAB);
        assert_eq!(packed[4 * 16 + 10], 0xCD);
        assert_eq!(packed.iter().filter(|&&b| b != 0).count(), 2);
    }

    #[test]
    fn f16_fragments() {
        for (k, n) in [(16, 32), (32, 4)] {
            let natural: Vec<u16> = (0..k * n).map(|i| 0x3C00 + i as u16).collect();
            let bytes = pack_f16(&natural, k, n);
            assert_eq!(bytes.len(), 1024);
            assert_eq!(unpack_f16(&bytes, k, n), natural);
        }
        // Head: 32x4 leaves 12 of every 16 stored columns unused: 384 zero halves.
        let natural = vec![0x3C00u16; 128];
        let bytes = pack_f16(&natural, 32, 4);
        let zeros = read_f16s(&bytes).iter().filter(|&&h| h == 0).count();
        assert_eq!(zeros, 384);
        // Element (k=9, n=3): tile 0, lane 12+0=12, 4·0, fragment 2+1 = 3 -> half 99.
        assert_eq!(f16_frag_index(9, 3, 16), 99);
        // Adapter element (k=0, n=17): tile 1, lane 4 -> half 256 + 4·8.
        assert_eq!(f16_frag_index(0, 17, 32), 288);
    }

    #[test]
    fn priors_round_trip() {
        for t in 0..64 {
            assert_eq!(window_natural(window_physical(t)), t);
        }
        assert_eq!(window_physical(4), 16);
        assert_eq!(window_physical(8), 4);
        assert_eq!(window_physical(32), 32);
        let phys: Vec<u16> = (0..4096).map(|i| i as u16 ^ 0x5555).collect();
        let bytes = pack_prior_physical(&phys);
        assert_eq!(prior_physical(&bytes), phys);
        // (q=9, k=3): lane 4·1 + 1 = 5, fragment 2·1 + 1 -> half 43.
        assert_eq!(prior_index(9, 3), 43);
        let nat = prior_natural(&bytes);
        assert_eq!(nat[4 * 64 + 8], phys[16 * 64 + 4]);
    }

    #[test]
    fn scalars_round_trip() {
        let mut buf = [0u8; 6];
        write_f16s(&[0x39EB, 0x8001, 0x7C00], &mut buf);
        assert_eq!(buf, [0xEB, 0x39, 0x01, 0x80, 0x00, 0x7C]);
        assert_eq!(read_f16s(&buf), [0x39EB, 0x8001, 0x7C00]);
        let mut buf = [0u8; 8];
        write_f32s(&[1.5, -0.25], &mut buf);
        assert_eq!(read_f32s(&buf), [1.5, -0.25]);
    }
}
