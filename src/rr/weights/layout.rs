//! The prepared weight image of each RR layer (spec rr-network §6.2): the byte offset and size
//! of every item, computed from §6.2's formula and the layer table (`rr::layers`).
//!
//! A Swin block of width C with H heads starting at byte `pre`:
//!
//! | item | offset | bytes |
//! |---|---|---|
//! | g1 | pre | 2C |
//! | head h | pre + 2C + h·(96C + 12288) | QK 32C, V 32C, score bias 12288, Wo 32C |
//! | bo | E = pre + 2C + H·(96C + 12288) | 2C |
//! | g2 | E + 2C | 2C |
//! | chunk 0 (W1, b1, W2) | M0 = E + 4C | 32C + 64 + 32C |
//! | b2 | M0 + 64C + 64 | 2C |
//! | chunk c ≥ 1 | M0 + 66C + 64 + (c−1)(64C + 64) | 64C + 64 |
//! | end | M0 + 66C + 64 + (C/8 − 1)(64C + 64) | |
//!
//! Encoders: block at `pre` = 0, then merge W (4C x C_next), merge bias, tail W (C x 16), tail
//! bias; enc0 puts the 4096-byte unread region and the embedding (W1 32x32 at 4096, b1 at 5120,
//! W2 at 5184, b2 at 6208) first, so its block starts at 6272. Decoders: expand W (C_in x 4C),
//! expand bias (4C), the block at `pre` = 4·C_in·C + 8C, then the tail (not dec0).
//!
//! The offsets are written as the formula states them (not walked with a cursor); the tests
//! check that the items tile each image with no gap or overlap, and reproduce every cross-check
//! anchor of §6.2 and the sizes of §2.

use std::ops::Range;
use std::sync::OnceLock;

use super::super::layers::{
    LayerId, EMBED_FEATURES, HEAD_WIDTH, LAYER_COUNT, MLP_CHUNK, NOISE_TABLE_BYTES, TAIL_OUTPUTS,
};
use super::tiles::{TileOrder, BIAS_BYTES};

/// An E4M3 matrix: natural `[n][k]` (n outputs, k inputs), `n·k` bytes at `offset`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fp8Mat {
    pub offset: usize,
    pub n: usize,
    pub k: usize,
    pub order: TileOrder,
}

impl Fp8Mat {
    pub const fn len(&self) -> usize {
        self.n * self.k
    }
    pub const fn is_empty(&self) -> bool {
        self.len() == 0
    }
    pub const fn end(&self) -> usize {
        self.offset + self.len()
    }
    pub const fn range(&self) -> Range<usize> {
        self.offset..self.end()
    }
}

/// `count` f16 values in natural order at `offset`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct F16Vec {
    pub offset: usize,
    pub count: usize,
}

impl F16Vec {
    pub const fn len(&self) -> usize {
        2 * self.count
    }
    pub const fn is_empty(&self) -> bool {
        self.count == 0
    }
    pub const fn end(&self) -> usize {
        self.offset + self.len()
    }
    pub const fn range(&self) -> Range<usize> {
        self.offset..self.end()
    }
}

/// One head's 64x96 f16 score bias in the C-seed order, 12288 bytes at `offset`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BiasTable {
    pub offset: usize,
}

impl BiasTable {
    pub const fn len(&self) -> usize {
        BIAS_BYTES
    }
    pub const fn is_empty(&self) -> bool {
        false
    }
    pub const fn end(&self) -> usize {
        self.offset + BIAS_BYTES
    }
    pub const fn range(&self) -> Range<usize> {
        self.offset..self.end()
    }
}

/// A GEMM with a bias: the merge, the expand, the tail head, the embedding's two projections.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Linear {
    pub w: Fp8Mat,
    pub b: F16Vec,
}

/// enc0's input embedding (§4.1): P1 32 -> 32 + b1, ReLU requantisation, P2 32 -> 32 + b2.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Embedding {
    pub p1: Linear,
    pub p2: Linear,
}

/// One attention head (§3 steps 2-6).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeadLayout {
    /// Start of the head's slab (= `qk.offset`); slabs step 96C + 12288.
    pub offset: usize,
    /// U = h0 · Wqk (32 x C: n = 32 head columns, k = C).
    pub qk: Fp8Mat,
    /// V = h0 · Wv (32 x C).
    pub v: Fp8Mat,
    /// The 64x96 score bias, the scores' C seed.
    pub bias: BiasTable,
    /// Out-projection of this head (C x 32: n = C, k = 32).
    pub wo: Fp8Mat,
}

/// One MLP chunk of 32 hidden columns (§3 step 8).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChunkLayout {
    /// Start of the chunk (= `w1.offset`).
    pub offset: usize,
    /// C -> 32 (n = 32, k = C).
    pub w1: Fp8Mat,
    /// 32 f16, the per-column C seed of W1's GEMM.
    pub b1: F16Vec,
    /// 32 -> C (n = C, k = 32).
    pub w2: Fp8Mat,
}

/// The Swin block (§3), identical in all eleven layers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockLayout {
    /// Where the block starts.
    pub pre: usize,
    /// Pre-attention RMS-norm gain (C f16).
    pub g1: F16Vec,
    pub heads: Vec<HeadLayout>,
    /// Out-projection bias added with the residual (C f16; E in §6.2).
    pub bo: F16Vec,
    /// MLP RMS-norm gain (C f16).
    pub g2: F16Vec,
    /// C/8 chunks; chunk 0 starts at M0.
    pub chunks: Vec<ChunkLayout>,
    /// MLP output bias (C f16), between chunk 0 and chunk 1.
    pub b2: F16Vec,
    /// First byte after the block.
    pub end: usize,
}

/// The whole prepared image of one layer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LayerLayout {
    pub layer: LayerId,
    /// enc0: bytes [0, 4096), never read by the network (§4.1).
    pub noise_table: Option<Range<usize>>,
    /// enc0: the input embedding.
    pub embedding: Option<Embedding>,
    /// Decoders: the patch expand, `C_in -> 4C` (n = 4C: sub-position q's C outputs are
    /// n = qC..qC+C, stored one sub-position after another), bias 4C.
    pub expand: Option<Linear>,
    pub block: BlockLayout,
    /// enc0..enc4: the patch merge `4C -> C_next` (k = 4C), bias C_next.
    pub merge: Option<Linear>,
    /// Every layer but dec0: the tail head `C -> 16`, bias 16.
    pub tail: Option<Linear>,
    /// Bytes of the image.
    pub size: usize,
}

const fn fp8(offset: usize, n: usize, k: usize, order: TileOrder) -> Fp8Mat {
    Fp8Mat {
        offset,
        n,
        k,
        order,
    }
}

const fn f16s(offset: usize, count: usize) -> F16Vec {
    F16Vec { offset, count }
}

/// §6.2's block formula for width `c`, `h` heads, starting at `pre`.
fn block_layout(pre: usize, c: usize, h: usize) -> BlockLayout {
    let head_stride = 96 * c + 12288;
    let heads = (0..h)
        .map(|i| {
            let head = pre + 2 * c + i * head_stride;
            HeadLayout {
                offset: head,
                qk: fp8(head, HEAD_WIDTH, c, TileOrder::KMajor),
                v: fp8(head + 32 * c, HEAD_WIDTH, c, TileOrder::KMajor),
                bias: BiasTable {
                    offset: head + 64 * c,
                },
                wo: fp8(head + 64 * c + 12288, c, HEAD_WIDTH, TileOrder::NMajor),
            }
        })
        .collect();
    let e = pre + 2 * c + h * head_stride;
    let m0 = e + 4 * c;
    let chunk = |at: usize| ChunkLayout {
        offset: at,
        w1: fp8(at, MLP_CHUNK, c, TileOrder::NMajor),
        b1: f16s(at + 32 * c, MLP_CHUNK),
        w2: fp8(at + 32 * c + 64, c, MLP_CHUNK, TileOrder::NMajor),
    };
    let chunk_count = c / 8;
    let chunks = (0..chunk_count)
        .map(|i| match i {
            0 => chunk(m0),
            _ => chunk(m0 + 66 * c + 64 + (i - 1) * (64 * c + 64)),
        })
        .collect();
    BlockLayout {
        pre,
        g1: f16s(pre, c),
        heads,
        bo: f16s(e, c),
        g2: f16s(e + 2 * c, c),
        chunks,
        b2: f16s(m0 + 64 * c + 64, c),
        end: m0 + 66 * c + 64 + (chunk_count - 1) * (64 * c + 64),
    }
}

/// A GEMM `k -> n` at `at` followed by its `n` f16 biases.
const fn linear(at: usize, n: usize, k: usize) -> Linear {
    Linear {
        w: fp8(at, n, k, TileOrder::NMajor),
        b: f16s(at + n * k, n),
    }
}

fn build(id: LayerId) -> LayerLayout {
    let l = id.layer();
    let c = l.channels;
    let (noise_table, embedding, expand, pre) = if l.embedding {
        let e = EMBED_FEATURES;
        let p1 = linear(NOISE_TABLE_BYTES, e, e);
        let p2 = linear(p1.b.end(), e, e);
        (
            Some(0..NOISE_TABLE_BYTES),
            Some(Embedding { p1, p2 }),
            None,
            p2.b.end(),
        )
    } else if let Some(c_in) = l.expand_in {
        let ex = linear(0, 4 * c, c_in);
        (None, None, Some(ex), 4 * c_in * c + 8 * c)
    } else {
        (None, None, None, 0)
    };
    let block = block_layout(pre, c, l.heads);
    let merge = l.merge_out.map(|c_next| linear(block.end, c_next, 4 * c));
    let tail_at = merge.map_or(block.end, |m| m.b.end());
    let tail = l.tail.then(|| linear(tail_at, TAIL_OUTPUTS, c));
    let size = tail.map_or(tail_at, |t| t.b.end());
    LayerLayout {
        layer: id,
        noise_table,
        embedding,
        expand,
        block,
        merge,
        tail,
        size,
    }
}

/// The layout of layer `id` (computed once).
pub fn layout(id: LayerId) -> &'static LayerLayout {
    static ALL: OnceLock<Vec<LayerLayout>> = OnceLock::new();
    &ALL.get_or_init(|| LayerId::ALL.into_iter().map(build).collect())[id.index()]
}

/// Bytes of all eleven images together.
pub fn total_bytes() -> usize {
    LayerId::ALL.into_iter().map(|l| layout(l).size).sum()
}

/// What an item holds (for generic walks: synthesis, statistics, extraction).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Role {
    NoiseTable,
    EmbedW1,
    EmbedB1,
    EmbedW2,
    EmbedB2,
    ExpandW,
    ExpandB,
    G1,
    Qk,
    V,
    ScoreBias,
    Wo,
    Bo,
    G2,
    W1,
    B1,
    W2,
    B2,
    MergeW,
    MergeB,
    TailW,
    TailB,
}

impl Role {
    /// Short name used in item names and messages.
    pub const fn as_str(self) -> &'static str {
        match self {
            Role::NoiseTable => "noise_table",
            Role::EmbedW1 => "embed.w1",
            Role::EmbedB1 => "embed.b1",
            Role::EmbedW2 => "embed.w2",
            Role::EmbedB2 => "embed.b2",
            Role::ExpandW => "expand.w",
            Role::ExpandB => "expand.b",
            Role::G1 => "g1",
            Role::Qk => "qk",
            Role::V => "v",
            Role::ScoreBias => "score_bias",
            Role::Wo => "wo",
            Role::Bo => "bo",
            Role::G2 => "g2",
            Role::W1 => "w1",
            Role::B1 => "b1",
            Role::W2 => "w2",
            Role::B2 => "b2",
            Role::MergeW => "merge.w",
            Role::MergeB => "merge.b",
            Role::TailW => "tail.w",
            Role::TailB => "tail.b",
        }
    }
}

/// How an item is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ItemKind {
    /// Opaque bytes (enc0's unread region).
    Bytes { len: usize },
    /// An E4M3 matrix.
    Fp8(Fp8Mat),
    /// An f16 vector.
    F16(F16Vec),
    /// A 64x96 f16 score bias.
    ScoreBias(BiasTable),
}

/// One item of an image.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Item {
    pub role: Role,
    /// Head index (QK, V, score bias, Wo) or MLP chunk (W1, b1, W2); 0 otherwise.
    pub index: usize,
    pub offset: usize,
    pub kind: ItemKind,
}

impl Item {
    /// Bytes of the item in the image.
    pub const fn len(&self) -> usize {
        match self.kind {
            ItemKind::Bytes { len } => len,
            ItemKind::Fp8(m) => m.len(),
            ItemKind::F16(v) => v.len(),
            ItemKind::ScoreBias(b) => b.len(),
        }
    }
    pub const fn is_empty(&self) -> bool {
        self.len() == 0
    }
    pub const fn end(&self) -> usize {
        self.offset + self.len()
    }
    /// Elements of the item (bytes, matrix entries, halves).
    pub const fn elements(&self) -> usize {
        match self.kind {
            ItemKind::Bytes { len } => len,
            ItemKind::Fp8(m) => m.len(),
            ItemKind::F16(v) => v.count,
            ItemKind::ScoreBias(_) => BIAS_BYTES / 2,
        }
    }
    /// `qk[3]`, `w2[0]`, `g1`, `merge.w`...
    pub fn name(&self) -> String {
        match self.role {
            Role::Qk | Role::V | Role::ScoreBias | Role::Wo | Role::W1 | Role::B1 | Role::W2 => {
                format!("{}[{}]", self.role.as_str(), self.index)
            }
            _ => self.role.as_str().to_string(),
        }
    }
}

impl LayerLayout {
    /// Every item of the image in offset order; together they cover `0..size` exactly.
    pub fn items(&self) -> Vec<Item> {
        let mut out = Vec::new();
        let fp8 = |out: &mut Vec<Item>, role, index, m: Fp8Mat| {
            out.push(Item {
                role,
                index,
                offset: m.offset,
                kind: ItemKind::Fp8(m),
            })
        };
        let vec = |out: &mut Vec<Item>, role, index, v: F16Vec| {
            out.push(Item {
                role,
                index,
                offset: v.offset,
                kind: ItemKind::F16(v),
            })
        };
        if let Some(r) = &self.noise_table {
            out.push(Item {
                role: Role::NoiseTable,
                index: 0,
                offset: r.start,
                kind: ItemKind::Bytes { len: r.len() },
            });
        }
        if let Some(e) = &self.embedding {
            fp8(&mut out, Role::EmbedW1, 0, e.p1.w);
            vec(&mut out, Role::EmbedB1, 0, e.p1.b);
            fp8(&mut out, Role::EmbedW2, 0, e.p2.w);
            vec(&mut out, Role::EmbedB2, 0, e.p2.b);
        }
        if let Some(x) = &self.expand {
            fp8(&mut out, Role::ExpandW, 0, x.w);
            vec(&mut out, Role::ExpandB, 0, x.b);
        }
        let b = &self.block;
        vec(&mut out, Role::G1, 0, b.g1);
        for (h, head) in b.heads.iter().enumerate() {
            fp8(&mut out, Role::Qk, h, head.qk);
            fp8(&mut out, Role::V, h, head.v);
            out.push(Item {
                role: Role::ScoreBias,
                index: h,
                offset: head.bias.offset,
                kind: ItemKind::ScoreBias(head.bias),
            });
            fp8(&mut out, Role::Wo, h, head.wo);
        }
        vec(&mut out, Role::Bo, 0, b.bo);
        vec(&mut out, Role::G2, 0, b.g2);
        for (i, ch) in b.chunks.iter().enumerate() {
            fp8(&mut out, Role::W1, i, ch.w1);
            vec(&mut out, Role::B1, i, ch.b1);
            fp8(&mut out, Role::W2, i, ch.w2);
            if i == 0 {
                vec(&mut out, Role::B2, 0, b.b2);
            }
        }
        if let Some(m) = &self.merge {
            fp8(&mut out, Role::MergeW, 0, m.w);
            vec(&mut out, Role::MergeB, 0, m.b);
        }
        if let Some(t) = &self.tail {
            fp8(&mut out, Role::TailW, 0, t.w);
            vec(&mut out, Role::TailB, 0, t.b);
        }
        out
    }
}

/// Image sizes of all layers in pipeline order.
pub fn sizes() -> [usize; LAYER_COUNT] {
    LayerId::ALL.map(|l| layout(l).size)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn l(id: LayerId) -> &'static LayerLayout {
        layout(id)
    }

    /// The items of every image follow each other with no gap and no overlap, from 0 to the
    /// size: the formula's offsets equal a running sum of the sizes (a cursor walk).
    #[test]
    fn items_tile_every_image() {
        for id in LayerId::ALL {
            let lay = l(id);
            let mut at = 0;
            for item in lay.items() {
                assert_eq!(item.offset, at, "{id} {}: gap or overlap", item.name());
                at = item.end();
            }
            assert_eq!(at, lay.size, "{id}: items end before the image does");
            assert_eq!(lay.block.heads.len(), id.layer().heads);
            assert_eq!(lay.block.chunks.len(), id.layer().mlp_chunks());
        }
    }

    /// Per-head slab strides = 96C + 12288 (§6.2): 18432 (C 64), 21504 (C 96), 24576 (C 128),
    /// 27648 (C 160), and 15360 for C 32.
    #[test]
    fn head_strides() {
        for id in LayerId::ALL {
            let heads = &l(id).block.heads;
            let want = match id.layer().channels {
                32 => 15360,
                64 => 18432,
                96 => 21504,
                128 => 24576,
                160 => 27648,
                c => panic!("unexpected C {c}"),
            };
            for w in heads.windows(2) {
                assert_eq!(w[1].offset - w[0].offset, want, "{id}");
            }
        }
    }

    /// Decoders split the expand across waves (§4.4): dec1 12288 per wave (two sub-positions),
    /// dec2 12288, dec3 20480, dec4 25600 per sub-position; bias stride 2C per sub-position.
    #[test]
    fn expand_sub_positions_are_contiguous() {
        for (id, per_sub) in [
            (LayerId::Dec1, 6144),
            (LayerId::Dec2, 12288),
            (LayerId::Dec3, 20480),
            (LayerId::Dec4, 25600),
            (LayerId::Dec0, 2048),
        ] {
            let ex = l(id).expand.expect("decoder has an expand");
            let c = id.layer().channels;
            assert_eq!(ex.w.len(), 4 * per_sub, "{id}");
            for q in 0..4 {
                // Sub-position q's outputs n = qC..qC+C occupy one contiguous run.
                let offs: Vec<usize> = (q * c..(q + 1) * c)
                    .flat_map(|n| (0..ex.w.k).map(move |k| (n, k)))
                    .map(|(n, k)| super::super::tiles::fp8_offset(n, k, ex.w.n, ex.w.k, ex.w.order))
                    .collect();
                let lo = offs.iter().min().copied();
                let hi = offs.iter().max().copied();
                assert_eq!(lo, Some(q * per_sub), "{id} q {q}");
                assert_eq!(hi, Some((q + 1) * per_sub - 1), "{id} q {q}");
            }
            assert_eq!(ex.b.count, 4 * c);
        }
    }

    macro_rules! anchor {
        ($name:literal, $value:expr, $want:expr) => {
            assert_eq!($value, $want, concat!("anchor ", $name))
        };
    }

    /// §6.2 cross-check anchors, enc0.
    #[test]
    fn anchors_enc0() {
        let a = l(LayerId::Enc0);
        let b = &a.block;
        let e = a.embedding.expect("enc0 embedding");
        anchor!("enc0 noise table", a.noise_table.clone(), Some(0..4096));
        anchor!("enc0 embed W1", e.p1.w.offset, 4096);
        anchor!("enc0 embed b1", e.p1.b.offset, 5120);
        anchor!("enc0 embed W2", e.p2.w.offset, 5184);
        anchor!("enc0 embed b2", e.p2.b.offset, 6208);
        anchor!("enc0 pre", b.pre, 6272);
        anchor!("enc0 QK0", b.heads[0].qk.offset, 6336);
        anchor!("enc0 V0", b.heads[0].v.offset, 7360);
        anchor!("enc0 bias0", b.heads[0].bias.offset, 8384);
        anchor!("enc0 Wo0", b.heads[0].wo.offset, 20672);
        anchor!("enc0 QK1", b.heads[1].qk.offset, 21696);
        anchor!("enc0 bias1", b.heads[1].bias.offset, 23744);
        anchor!("enc0 Wo1", b.heads[1].wo.offset, 36032);
        anchor!("enc0 bo", b.bo.offset, 37056);
        anchor!("enc0 g2", b.g2.offset, 37120);
        anchor!("enc0 W1_0", b.chunks[0].w1.offset, 37184);
        anchor!("enc0 b1_0", b.chunks[0].b1.offset, 38208);
        anchor!("enc0 W2_0", b.chunks[0].w2.offset, 38272);
        anchor!("enc0 b2", b.b2.offset, 39296);
        anchor!("enc0 chunk1", b.chunks[1].offset, 39360);
        anchor!("enc0 chunk2", b.chunks[2].offset, 41472);
        anchor!("enc0 chunk3", b.chunks[3].offset, 43584);
        let m = a.merge.expect("enc0 merge");
        anchor!("enc0 merge", m.w.offset, 45696);
        anchor!("enc0 merge bias", m.b.offset, 53888);
        let t = a.tail.expect("enc0 tail");
        anchor!("enc0 head", t.w.offset, 54016);
        anchor!("enc0 head bias", t.b.offset, 54528);
        anchor!("enc0 end", a.size, 54560);
    }

    #[test]
    fn anchors_enc1() {
        let a = l(LayerId::Enc1);
        let b = &a.block;
        anchor!("enc1 QK0", b.heads[0].qk.offset, 128);
        anchor!("enc1 V0", b.heads[0].v.offset, 2176);
        anchor!("enc1 bias0", b.heads[0].bias.offset, 4224);
        anchor!("enc1 Wo0", b.heads[0].wo.offset, 16512);
        anchor!("enc1 QK1", b.heads[1].qk.offset, 18560);
        anchor!("enc1 bias1", b.heads[1].bias.offset, 22656);
        anchor!("enc1 Wo1", b.heads[1].wo.offset, 34944);
        anchor!("enc1 bo", b.bo.offset, 36992);
        anchor!("enc1 g2", b.g2.offset, 37120);
        anchor!("enc1 M0", b.chunks[0].offset, 37248);
        anchor!("enc1 b1_0", b.chunks[0].b1.offset, 39296);
        anchor!("enc1 b2", b.b2.offset, 41408);
        anchor!("enc1 chunk1", b.chunks[1].offset, 41536);
        let m = a.merge.expect("enc1 merge");
        anchor!("enc1 merge", m.w.offset, 70656);
        anchor!("enc1 merge bias", m.b.offset, 95232);
        let t = a.tail.expect("enc1 tail");
        anchor!("enc1 head", t.w.offset, 95424);
        anchor!("enc1 head bias", t.b.offset, 96448);
        anchor!("enc1 end", a.size, 96480);
    }

    #[test]
    fn anchors_enc2() {
        let a = l(LayerId::Enc2);
        let b = &a.block;
        anchor!("enc2 QK0", b.heads[0].qk.offset, 192);
        anchor!("enc2 V0", b.heads[0].v.offset, 3264);
        anchor!("enc2 bias0", b.heads[0].bias.offset, 6336);
        anchor!("enc2 Wo0", b.heads[0].wo.offset, 18624);
        for h in 1..4 {
            anchor!(
                "enc2 Wo_h (+21504 per head)",
                b.heads[h].wo.offset,
                18624 + 21504 * h
            );
        }
        anchor!("enc2 bo", b.bo.offset, 86208);
        anchor!("enc2 g2", b.g2.offset, 86400);
        anchor!("enc2 M0", b.chunks[0].offset, 86592);
        let m = a.merge.expect("enc2 merge");
        anchor!("enc2 merge", m.w.offset, 161280);
        anchor!("enc2 merge bias", m.b.offset, 210432);
        let t = a.tail.expect("enc2 tail");
        anchor!("enc2 head", t.w.offset, 210688);
        anchor!("enc2 head bias", t.b.offset, 212224);
    }

    #[test]
    fn anchors_enc3() {
        let a = l(LayerId::Enc3);
        let b = &a.block;
        anchor!("enc3 QK0", b.heads[0].qk.offset, 256);
        anchor!("enc3 V0", b.heads[0].v.offset, 4352);
        anchor!("enc3 bias0", b.heads[0].bias.offset, 8448);
        anchor!("enc3 Wo0", b.heads[0].wo.offset, 20736);
        for h in 1..4 {
            anchor!(
                "enc3 Wo_h (+24576 per head)",
                b.heads[h].wo.offset,
                20736 + 24576 * h
            );
        }
        anchor!("enc3 bo", b.bo.offset, 98560);
        anchor!("enc3 g2", b.g2.offset, 98816);
        anchor!("enc3 M0", b.chunks[0].offset, 99072);
        let m = a.merge.expect("enc3 merge");
        anchor!("enc3 merge", m.w.offset, 231424);
        anchor!("enc3 merge bias", m.b.offset, 313344);
        let t = a.tail.expect("enc3 tail");
        anchor!("enc3 head", t.w.offset, 313664);
        anchor!("enc3 head bias", t.b.offset, 315712);
    }

    #[test]
    fn anchors_enc4_enc5() {
        for id in [LayerId::Enc4, LayerId::Enc5] {
            let b = &l(id).block;
            anchor!("enc4/enc5 QK0", b.heads[0].qk.offset, 320);
            anchor!("enc4/enc5 V0", b.heads[0].v.offset, 5440);
            anchor!("enc4/enc5 bias0", b.heads[0].bias.offset, 10560);
            anchor!("enc4/enc5 Wo0", b.heads[0].wo.offset, 22848);
            for h in 1..8 {
                anchor!(
                    "enc4/enc5 Wo_h (+27648 per head)",
                    b.heads[h].wo.offset,
                    22848 + 27648 * h
                );
            }
            anchor!("enc4/enc5 bo", b.bo.offset, 221504);
            anchor!("enc4/enc5 g2", b.g2.offset, 221824);
            anchor!("enc4/enc5 M0", b.chunks[0].offset, 222144);
        }
        let enc4 = l(LayerId::Enc4);
        let m = enc4.merge.expect("enc4 merge");
        anchor!("enc4 merge", m.w.offset, 428544);
        anchor!("enc4 merge bias", m.b.offset, 530944);
        let t = enc4.tail.expect("enc4 tail");
        anchor!("enc4 head", t.w.offset, 531264);
        anchor!("enc4 head bias", t.b.offset, 533824);
        let enc5 = l(LayerId::Enc5);
        anchor!("enc5 no merge", enc5.merge, None);
        let t = enc5.tail.expect("enc5 tail");
        anchor!("enc5 head", t.w.offset, 428544);
        anchor!("enc5 head bias", t.b.offset, 431104);
    }

    #[test]
    fn anchors_dec0() {
        let a = l(LayerId::Dec0);
        let b = &a.block;
        let x = a.expand.expect("dec0 expand");
        anchor!("dec0 expand", x.w.offset, 0);
        anchor!("dec0 expand bias", x.b.offset, 8192);
        anchor!("dec0 g1", b.g1.offset, 8448);
        anchor!("dec0 QK0", b.heads[0].qk.offset, 8512);
        anchor!("dec0 V0", b.heads[0].v.offset, 9536);
        anchor!("dec0 bias0", b.heads[0].bias.offset, 10560);
        anchor!("dec0 Wo0", b.heads[0].wo.offset, 22848);
        anchor!("dec0 QK1", b.heads[1].qk.offset, 23872);
        anchor!("dec0 bias1", b.heads[1].bias.offset, 25920);
        anchor!("dec0 Wo1", b.heads[1].wo.offset, 38208);
        anchor!("dec0 bo", b.bo.offset, 39232);
        anchor!("dec0 g2", b.g2.offset, 39296);
        anchor!("dec0 M0", b.chunks[0].offset, 39360);
        anchor!("dec0 b2", b.b2.offset, 41472);
        anchor!("dec0 no tail", a.tail, None);
        anchor!("dec0 end", a.size, 47872);
    }

    #[test]
    fn anchors_dec1() {
        let a = l(LayerId::Dec1);
        let b = &a.block;
        let x = a.expand.expect("dec1 expand");
        anchor!("dec1 expand", x.w.offset, 0);
        anchor!("dec1 expand bias", x.b.offset, 24576);
        anchor!("dec1 QK0", b.heads[0].qk.offset, 25216);
        anchor!("dec1 bias0", b.heads[0].bias.offset, 29312);
        anchor!("dec1 Wo0", b.heads[0].wo.offset, 41600);
        anchor!("dec1 Wo1", b.heads[1].wo.offset, 60032);
        anchor!("dec1 bo", b.bo.offset, 62080);
        anchor!("dec1 M0", b.chunks[0].offset, 62336);
        anchor!("dec1 chunk1", b.chunks[1].offset, 66624);
        let t = a.tail.expect("dec1 tail");
        anchor!("dec1 head", t.w.offset, 95744);
        anchor!("dec1 head bias", t.b.offset, 96768);
        anchor!("dec1 end", a.size, 96800);
    }

    #[test]
    fn anchors_dec2() {
        let a = l(LayerId::Dec2);
        let b = &a.block;
        let x = a.expand.expect("dec2 expand");
        anchor!("dec2 expand", x.w.offset, 0);
        anchor!("dec2 expand per wave", x.w.len() / 4, 12288);
        anchor!("dec2 expand bias", x.b.offset, 49152);
        anchor!("dec2 g1", b.g1.offset, 49920);
        anchor!("dec2 QK0", b.heads[0].qk.offset, 50112);
        anchor!("dec2 bias0", b.heads[0].bias.offset, 56256);
    }

    #[test]
    fn anchors_dec3() {
        let a = l(LayerId::Dec3);
        let b = &a.block;
        let x = a.expand.expect("dec3 expand");
        anchor!("dec3 expand", x.w.offset, 0);
        anchor!("dec3 expand per wave", x.w.len() / 4, 20480);
        anchor!("dec3 expand bias", x.b.offset, 81920);
        anchor!("dec3 g1", b.g1.offset, 82944);
        anchor!("dec3 QK0", b.heads[0].qk.offset, 83200);
        anchor!("dec3 V0", b.heads[0].v.offset, 87296);
        anchor!("dec3 Wo0", b.heads[0].wo.offset, 103680);
        anchor!("dec3 bo", b.bo.offset, 181504);
        anchor!("dec3 M0", b.chunks[0].offset, 182016);
        anchor!("dec3 b1_0", b.chunks[0].b1.offset, 186112);
        anchor!("dec3 W2_0", b.chunks[0].w2.offset, 186176);
        anchor!("dec3 chunk1", b.chunks[1].offset, 190528);
        let t = a.tail.expect("dec3 tail");
        anchor!("dec3 head", t.w.offset, 314368);
        anchor!("dec3 head bias", t.b.offset, 316416);
    }

    #[test]
    fn anchors_dec4() {
        let a = l(LayerId::Dec4);
        let b = &a.block;
        let x = a.expand.expect("dec4 expand");
        anchor!("dec4 expand", x.w.offset, 0);
        anchor!("dec4 expand per wave", x.w.len() / 4, 25600);
        anchor!("dec4 expand bias", x.b.offset, 102400);
        anchor!("dec4 g1", b.g1.offset, 103680);
        anchor!("dec4 QK0", b.heads[0].qk.offset, 104000);
        anchor!("dec4 Wo0", b.heads[0].wo.offset, 126528);
        anchor!("dec4 Wo7", b.heads[7].wo.offset, 320064);
        anchor!("dec4 bo", b.bo.offset, 325184);
        anchor!("dec4 g2", b.g2.offset, 325504);
        anchor!("dec4 M0", b.chunks[0].offset, 325824);
        anchor!("dec4 b1_0", b.chunks[0].b1.offset, 330944);
        anchor!("dec4 W2_0", b.chunks[0].w2.offset, 331008);
        anchor!("dec4 chunk1", b.chunks[1].offset, 336448);
        let t = a.tail.expect("dec4 tail");
        anchor!("dec4 head", t.w.offset, 532224);
        anchor!("dec4 head bias", t.b.offset, 534784);
    }

    /// §2's "Weight image (B)" column against the formula's image ends.
    ///
    /// enc0 (54,560) and dec0 (47,872) agree exactly, and where §2 gives a range (enc1
    /// 96,468-96,480, enc2 212,244-212,256, dec1 96,788-96,800) its upper end is the formula's.
    /// The other six single figures (enc3, enc4, enc5, dec2, dec3, dec4) are each **12 bytes
    /// short** of the formula's end, which is the tail-head bias's end (its offset is an anchor
    /// that the formula reproduces, plus 16 f16): they equal the lower ends of the ranges'
    /// pattern. This test states that finding as it is rather than hiding it.
    #[test]
    fn image_sizes_against_section_2() {
        let size = |id| l(id).size;
        // Exact.
        assert_eq!(size(LayerId::Enc0), 54_560);
        assert_eq!(size(LayerId::Dec0), 47_872);
        // Ranges: the formula is the upper end, the lower end is 12 below it.
        for (id, lo, hi) in [
            (LayerId::Enc1, 96_468, 96_480),
            (LayerId::Enc2, 212_244, 212_256),
            (LayerId::Dec1, 96_788, 96_800),
        ] {
            assert_eq!(size(id), hi, "{id}");
            assert_eq!(hi - lo, 12, "{id}");
        }
        // Single figures 12 bytes below the formula.
        for (id, table) in [
            (LayerId::Enc3, 315_732),
            (LayerId::Enc4, 533_844),
            (LayerId::Enc5, 431_124),
            (LayerId::Dec4, 534_804),
            (LayerId::Dec3, 316_436),
            (LayerId::Dec2, 212_756),
        ] {
            assert_eq!(size(id), table + 12, "{id}: §2 says {table}");
            let tail = l(id).tail.expect("tail head");
            assert_eq!(
                size(id),
                tail.b.end(),
                "{id}: image ends with the tail bias"
            );
        }
        assert_eq!(
            sizes(),
            [
                54_560, 96_480, 212_256, 315_744, 533_856, 431_136, 534_816, 316_448, 212_768,
                96_800, 47_872
            ]
        );
        assert_eq!(total_bytes(), 2_852_736);
    }
}
