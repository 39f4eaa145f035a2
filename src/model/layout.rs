//! The fixed shape of the DLSS-NR 310.8.0 model: which records exist, how long each is, which stage
//! file the reference packing puts it in, and the FusedLayout byte offsets of every field inside a
//! record (spec nr-network §1.3, §3.2, §3.3). Block kinds, widths and stage files come from
//! [`super::blocks`], the one block table.
//!
//! Nothing here reads files: offsets are computed by walking each record's fields in order with a
//! cursor, so every offset is the sum of the sizes before it, exactly as the format defines them.
//! The manifest validator, the loader, synthesis, statistics, the graph and the GPU code all take
//! their offsets from here.

use std::collections::HashMap;
use std::fmt;
use std::ops::Range;
use std::sync::OnceLock;

use super::blocks::{self, BlockKind, BLOCK_COUNT, PRIOR_BYTES, VIT_ENTRY_BLOCK};
use super::pack;

/// Tensor records in a model.
pub const RECORD_COUNT: usize = 153;
/// Sum of all record lengths (= sum of the 11 reference stage files).
pub const TOTAL_BYTES: usize = 147_683_778;
/// The f16 bits of the shipped blend scale (0.73974609375).
pub const SHIPPED_BLEND_SCALE: u16 = 0x39EB;

/// The `<parameter>` part of a record name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Param {
    /// `layer`: every record except the blend scale.
    Layer,
    /// `blend_scale`: block 70 layer 0 only, one f16.
    BlendScale,
}

impl Param {
    pub fn as_str(self) -> &'static str {
        match self {
            Param::Layer => "layer",
            Param::BlendScale => "blend_scale",
        }
    }

    pub fn parse(s: &str) -> Option<Param> {
        match s {
            "layer" => Some(Param::Layer),
            "blend_scale" => Some(Param::BlendScale),
            _ => None,
        }
    }
}

/// Identity of one tensor record: `block<B>.layer<L>.<param>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RecordId {
    pub block: usize,
    pub layer: usize,
    pub param: Param,
}

impl RecordId {
    pub const fn layer(block: usize, layer: usize) -> RecordId {
        RecordId {
            block,
            layer,
            param: Param::Layer,
        }
    }

    /// `block70.layer0.blend_scale`.
    pub const BLEND_SCALE: RecordId = RecordId {
        block: 70,
        layer: 0,
        param: Param::BlendScale,
    };

    /// The manifest name of this record.
    pub fn name(&self) -> String {
        self.to_string()
    }
}

impl fmt::Display for RecordId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "block{}.layer{}.{}",
            self.block,
            self.layer,
            self.param.as_str()
        )
    }
}

/// One record of the model as the format defines it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordSpec {
    pub id: RecordId,
    pub len: usize,
    /// Stage file of the reference packing.
    pub stage: &'static str,
}

/// Length of record `id`, or `None` if the model has no such record.
pub fn record_len(id: RecordId) -> Option<usize> {
    let kind = blocks::block_kind(id.block)?;
    match (kind, id.param, id.layer) {
        (BlockKind::Post, Param::BlendScale, 0) => Some(2),
        (_, Param::BlendScale, _) => None,
        (BlockKind::Split512, _, 0..=3) => Some(split512_layout().record_lens[id.layer]),
        (BlockKind::Split512, _, 4) if id.block == VIT_ENTRY_BLOCK => {
            Some(vit_entry_layout().record_len)
        }
        (BlockKind::Split512, _, _) => None,
        (BlockKind::Vit, _, 0..=4) => Some(vit_layout().record_lens[id.layer]),
        (BlockKind::Vit, _, _) => None,
        (BlockKind::VitExit, _, 0) => Some(vit_exit_layout().record_len),
        (_, _, 0) => window_layout(id.block).map(|w| w.record_len),
        _ => None,
    }
}

/// Layers of `block`, in order.
fn layers_of(block: usize) -> Range<usize> {
    match blocks::block_kind(block) {
        Some(BlockKind::Split512) if block == VIT_ENTRY_BLOCK => 0..5,
        Some(BlockKind::Split512) => 0..4,
        Some(BlockKind::Vit) => 0..5,
        Some(_) => 0..1,
        None => 0..0,
    }
}

struct RecordTable {
    specs: Vec<RecordSpec>,
    index: HashMap<RecordId, usize>,
}

fn table() -> &'static RecordTable {
    static TABLE: OnceLock<RecordTable> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut specs = Vec::with_capacity(RECORD_COUNT);
        for block in 0..BLOCK_COUNT {
            let Some(b) = blocks::block(block) else {
                continue;
            };
            let stage = b.stage;
            // The reference packing puts the blend scale before block 70's layer record.
            if b.kind == BlockKind::Post {
                specs.push(RecordSpec {
                    id: RecordId::BLEND_SCALE,
                    len: 2,
                    stage,
                });
            }
            for layer in layers_of(block) {
                let id = RecordId::layer(block, layer);
                let len = record_len(id).unwrap_or(0);
                specs.push(RecordSpec { id, len, stage });
            }
        }
        let index = specs.iter().enumerate().map(|(i, s)| (s.id, i)).collect();
        RecordTable { specs, index }
    })
}

/// All 153 records in reference order (block, then layer; blend scale before block 70's layer).
pub fn records() -> &'static [RecordSpec] {
    &table().specs
}

/// Position of `id` in [`records`], or `None` if the model has no such record.
pub fn record_index(id: RecordId) -> Option<usize> {
    table().index.get(&id).copied()
}

// ------------------------------------------------------------------------------------------------
// Field descriptors

/// A packed E4M3 matrix inside a record: `k` stored rows (all batches) by `n` columns, `k·n` bytes in
/// fragment order (spec §3.4). Batch `b` owns rows `b·batch_k()..`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fp8Mat {
    pub offset: usize,
    pub k: usize,
    pub n: usize,
    pub batches: usize,
}

impl Fp8Mat {
    pub const fn len(&self) -> usize {
        self.k * self.n
    }
    pub const fn is_empty(&self) -> bool {
        self.len() == 0
    }
    pub const fn end(&self) -> usize {
        self.offset + self.len()
    }
    /// Rows of one batch (the K of each batched GEMM).
    pub const fn batch_k(&self) -> usize {
        self.k / self.batches
    }
    /// The matrix bytes inside `record`; `record` must be the record this layout describes.
    pub fn bytes<'a>(&self, record: &'a [u8]) -> &'a [u8] {
        &record[self.offset..self.end()]
    }
    /// Natural `k x n` (row = natural input channel), see [`pack::unpack_fp8`].
    pub fn unpack(&self, record: &[u8]) -> Vec<u8> {
        pack::unpack_fp8(self.bytes(record), self.k, self.n)
    }
    /// Transposed natural `[n][k]`, see [`pack::unpack_fp8_transposed`].
    pub fn unpack_transposed(&self, record: &[u8]) -> Vec<u8> {
        pack::unpack_fp8_transposed(self.bytes(record), self.k, self.n)
    }
}

/// An f16 matrix in 16x16 fragment tiles (spec §3.5): `k x n` logical, stored with `n_stored`
/// columns (a multiple of 16; the head stores 16 columns for its 4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct F16Mat {
    pub offset: usize,
    pub k: usize,
    pub n: usize,
    pub n_stored: usize,
}

impl F16Mat {
    pub const fn len(&self) -> usize {
        2 * self.k * self.n_stored
    }
    pub const fn is_empty(&self) -> bool {
        self.len() == 0
    }
    pub const fn end(&self) -> usize {
        self.offset + self.len()
    }
    pub fn bytes<'a>(&self, record: &'a [u8]) -> &'a [u8] {
        &record[self.offset..self.end()]
    }
    /// Natural `k x n` f16 bits (unused stored columns skipped), see [`pack::unpack_f16`].
    pub fn unpack(&self, record: &[u8]) -> Vec<u16> {
        pack::unpack_f16(self.bytes(record), self.k, self.n)
    }
}

/// `count` little-endian f16 values (per-channel scales).
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
    pub fn bytes<'a>(&self, record: &'a [u8]) -> &'a [u8] {
        &record[self.offset..self.end()]
    }
    /// The f16 bits.
    pub fn values(&self, record: &[u8]) -> Vec<u16> {
        pack::read_f16s(self.bytes(record))
    }
}

/// `count` little-endian f32 values (per-head temperatures). Window blocks pad the storage to 16
/// bytes (`stored_len`); the padding belongs to the record's pad bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct F32Vec {
    pub offset: usize,
    pub count: usize,
    pub stored_len: usize,
}

impl F32Vec {
    pub const fn len(&self) -> usize {
        4 * self.count
    }
    pub const fn is_empty(&self) -> bool {
        self.count == 0
    }
    pub const fn end(&self) -> usize {
        self.offset + self.len()
    }
    pub fn bytes<'a>(&self, record: &'a [u8]) -> &'a [u8] {
        &record[self.offset..self.end()]
    }
    /// The f32 values.
    pub fn values(&self, record: &[u8]) -> Vec<f32> {
        pack::read_f32s(self.bytes(record))
    }
}

/// `heads` window priors of [`PRIOR_BYTES`] each (spec §3.5); head `h` at `offset + h·8192`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Priors {
    pub offset: usize,
    pub heads: usize,
}

impl Priors {
    pub const fn len(&self) -> usize {
        self.heads * PRIOR_BYTES
    }
    pub const fn is_empty(&self) -> bool {
        self.heads == 0
    }
    pub const fn end(&self) -> usize {
        self.offset + self.len()
    }
    /// The 8192 bytes of head `head` inside `record`.
    pub fn head<'a>(&self, record: &'a [u8], head: usize) -> &'a [u8] {
        let at = self.offset + head * PRIOR_BYTES;
        &record[at..at + PRIOR_BYTES]
    }
    /// Head `head` as `[q_phys][k_phys]` f16 bits, see [`pack::prior_physical`].
    pub fn physical(&self, record: &[u8], head: usize) -> Vec<u16> {
        pack::prior_physical(self.head(record, head))
    }
}

/// What an E4M3 matrix does; synthesis picks its gain from this, statistics group by it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MatRole {
    /// Window W1 (C->128, per expert) and ViT W1 (1024->4096).
    Expand,
    /// Expert W2 (128->32) whose output is published without a residual seed.
    ExpertContract,
    /// The matrix whose output is seeded by the FFN skip: C=32 W2, W3, split-512 Wc, ViT W2.
    SeededContract,
    Qkv,
    /// Attention output projection (seeded by the attention skip).
    Projection,
    /// Encoder C->2C transitions and the 512->1024 ViT entry.
    EncoderTransition,
    /// Decoder-first 2C->C up matrix.
    DecoderUpsample,
    /// ViT exit 1024->512 (block 39).
    VitExit,
    /// Split-512 input matrix Win (512x512).
    SplitIn,
    /// Split-512 branch fc1 (64->256 per branch, SiLU after).
    BranchUp,
    /// Split-512 branch fc2 (256->64 per branch).
    BranchDown,
}

/// What an f16 fragment matrix does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum F16Role {
    /// Block 0 input adapter 16->32.
    Adapter,
    /// Block 70 head 32->4.
    Head,
}

/// What an f16 scale vector multiplies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ScaleRole {
    /// FFN or attention skip scale (seed = skip · scale).
    Skip,
    /// Merge scales: decoder transition scale, ViT-exit skip scale, block 70 input/adapter scales.
    Merge,
}

/// The type of one field of a record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldKind {
    Fp8(Fp8Mat, MatRole),
    F16Mat(F16Mat, F16Role),
    Scale(F16Vec, ScaleRole),
    /// Temperatures; `vit` tells ViT (global) from window heads.
    Temperatures {
        temps: F32Vec,
        vit: bool,
    },
    Priors(Priors),
    /// ViT layer3: 2 bytes, never read by the network.
    Unread {
        offset: usize,
        len: usize,
    },
    /// `block70.layer0.blend_scale`: one f16.
    BlendScale,
}

/// One named field of a record. Bytes of a record not covered by any field are padding (zero).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Field {
    pub name: &'static str,
    pub kind: FieldKind,
}

impl Field {
    fn new(name: &'static str, kind: FieldKind) -> Field {
        Field { name, kind }
    }

    /// Byte range of the field inside its record. Temperature padding is outside it (it counts as
    /// record padding); the head's unused columns are inside it.
    pub fn range(&self) -> Range<usize> {
        match self.kind {
            FieldKind::Fp8(m, _) => m.offset..m.end(),
            FieldKind::F16Mat(m, _) => m.offset..m.end(),
            FieldKind::Scale(v, _) => v.offset..v.end(),
            FieldKind::Temperatures { temps, .. } => temps.offset..temps.end(),
            FieldKind::Priors(p) => p.offset..p.end(),
            FieldKind::Unread { offset, len } => offset..offset + len,
            FieldKind::BlendScale => 0..2,
        }
    }
}

/// Walks a record's fields in storage order; offsets are running sums.
struct Cursor {
    at: usize,
}

impl Cursor {
    fn new() -> Cursor {
        Cursor { at: 0 }
    }
    fn fp8(&mut self, k: usize, n: usize, batches: usize) -> Fp8Mat {
        let m = Fp8Mat {
            offset: self.at,
            k,
            n,
            batches,
        };
        self.at += m.len();
        m
    }
    fn f16mat(&mut self, k: usize, n: usize, n_stored: usize) -> F16Mat {
        let m = F16Mat {
            offset: self.at,
            k,
            n,
            n_stored,
        };
        self.at += m.len();
        m
    }
    fn scale(&mut self, count: usize) -> F16Vec {
        let v = F16Vec {
            offset: self.at,
            count,
        };
        self.at += v.len();
        v
    }
    /// Temperatures padded to 16 bytes (window records and the split-512 layer2).
    fn temps_padded(&mut self, count: usize) -> F32Vec {
        let stored_len = (4 * count).div_ceil(16) * 16;
        let v = F32Vec {
            offset: self.at,
            count,
            stored_len,
        };
        self.at += stored_len;
        v
    }
    fn priors(&mut self, heads: usize) -> Priors {
        let p = Priors {
            offset: self.at,
            heads,
        };
        self.at += p.len();
        p
    }
    fn pad16(&mut self) {
        self.at += 16;
    }
}

// ------------------------------------------------------------------------------------------------
// Window blocks (0-22, 48-70)

/// FusedLayout of a window block's single record (`layer0`); all offsets are inside that record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WindowLayout {
    pub block: usize,
    pub kind: BlockKind,
    pub c: usize,
    pub heads: usize,
    /// FFN paths: 1 (dense) for C=32, C/32 otherwise.
    pub experts: usize,
    /// W1: C=32 `32x128`; else `K = E·C` (expert e = rows e·C..), `N = 128`.
    pub expand: Fp8Mat,
    /// W2: C=32 `128x32`; else `K = E·128` (expert e = rows e·128..), `N = 32`.
    pub contract: Fp8Mat,
    /// W3 `CxC` (C >= 64).
    pub w3: Option<Fp8Mat>,
    /// Decoder-first 2C->C up matrix (`K = 2C`, `N = C`).
    pub upsample: Option<Fp8Mat>,
    /// Block 0 f16 input adapter 16x32.
    pub adapter: Option<F16Mat>,
    pub ffn_scale: F16Vec,
    /// Decoder-first: scale of the encoder skip in the merge.
    pub transition_scale: Option<F16Vec>,
    /// Block 70: scale of the upsampled block-69 path in the post blend.
    pub input_scale: Option<F16Vec>,
    /// Block 70: scale of the block-0 path in the post blend.
    pub adapter_scale: Option<F16Vec>,
    /// `K = C`, `N = 3C`, head-major columns.
    pub qkv: Fp8Mat,
    pub priors: Priors,
    pub temperatures: F32Vec,
    pub projection: Fp8Mat,
    pub attn_scale: F16Vec,
    /// Encoder-last C->2C transition matrix (blocks 4, 8, 14, 22).
    pub transition: Option<Fp8Mat>,
    /// Block 70 f16 head 32x4 (stored 32x16).
    pub post_weights: Option<F16Mat>,
    pub end_without_padding: usize,
    pub record_len: usize,
}

/// FusedLayout of window block `block` (0-22, 48-70), `None` for other blocks.
pub fn window_layout(block: usize) -> Option<WindowLayout> {
    let b = blocks::block(block)?;
    let kind = b.kind;
    if !matches!(
        kind,
        BlockKind::Pre
            | BlockKind::Window
            | BlockKind::EncoderLast
            | BlockKind::DecoderFirst
            | BlockKind::Post
    ) {
        return None;
    }
    let c = b.channels;
    let heads = b.heads();
    let experts = if c == 32 { 1 } else { c / 32 };
    let mut cur = Cursor::new();
    let (expand, contract, w3) = if c == 32 {
        (cur.fp8(32, 128, 1), cur.fp8(128, 32, 1), None)
    } else {
        (
            cur.fp8(experts * c, 128, experts),
            cur.fp8(experts * 128, 32, experts),
            Some(cur.fp8(c, c, 1)),
        )
    };
    let mut upsample = None;
    let mut adapter = None;
    let mut transition_scale = None;
    let mut input_scale = None;
    let mut adapter_scale = None;
    let ffn_scale;
    match kind {
        BlockKind::Pre => {
            cur.pad16();
            adapter = Some(cur.f16mat(16, 32, 32));
            ffn_scale = cur.scale(c);
            cur.pad16();
        }
        BlockKind::DecoderFirst => {
            upsample = Some(cur.fp8(2 * c, c, 1));
            if c == 32 {
                cur.pad16();
            }
            ffn_scale = cur.scale(c);
            if c == 32 {
                cur.pad16();
            }
            transition_scale = Some(cur.scale(c));
        }
        BlockKind::Post => {
            cur.pad16();
            ffn_scale = cur.scale(c);
            input_scale = Some(cur.scale(c));
            adapter_scale = Some(cur.scale(c));
        }
        _ => {
            cur.pad16();
            ffn_scale = cur.scale(c);
            cur.pad16();
        }
    }
    let qkv = cur.fp8(c, 3 * c, 1);
    let priors = cur.priors(heads);
    let temperatures = cur.temps_padded(heads);
    let projection = cur.fp8(c, c, 1);
    let attn_scale = cur.scale(c);
    let end_without_padding = cur.at;
    let mut transition = None;
    let mut post_weights = None;
    match kind {
        BlockKind::EncoderLast => {
            transition = Some(cur.fp8(c, 2 * c, 1));
            // Only the C=32 transition is followed by a pad (block 4); 8, 14, 22 end on the matrix.
            if c == 32 {
                cur.pad16();
            }
        }
        BlockKind::Post => {
            cur.pad16();
            post_weights = Some(cur.f16mat(32, 4, 16));
        }
        _ => cur.pad16(),
    }
    Some(WindowLayout {
        block,
        kind,
        c,
        heads,
        experts,
        expand,
        contract,
        w3,
        upsample,
        adapter,
        ffn_scale,
        transition_scale,
        input_scale,
        adapter_scale,
        qkv,
        priors,
        temperatures,
        projection,
        attn_scale,
        transition,
        post_weights,
        end_without_padding,
        record_len: cur.at,
    })
}

impl WindowLayout {
    /// Every field in storage order.
    pub fn fields(&self) -> Vec<Field> {
        let mut f = Vec::with_capacity(16);
        f.push(Field::new(
            "expand",
            FieldKind::Fp8(self.expand, MatRole::Expand),
        ));
        let w2_role = if self.c == 32 {
            MatRole::SeededContract
        } else {
            MatRole::ExpertContract
        };
        f.push(Field::new(
            "contract",
            FieldKind::Fp8(self.contract, w2_role),
        ));
        if let Some(m) = self.w3 {
            f.push(Field::new("w3", FieldKind::Fp8(m, MatRole::SeededContract)));
        }
        if let Some(m) = self.upsample {
            f.push(Field::new(
                "upsample",
                FieldKind::Fp8(m, MatRole::DecoderUpsample),
            ));
        }
        if let Some(m) = self.adapter {
            f.push(Field::new(
                "adapter",
                FieldKind::F16Mat(m, F16Role::Adapter),
            ));
        }
        f.push(Field::new(
            "ffn_scale",
            FieldKind::Scale(self.ffn_scale, ScaleRole::Skip),
        ));
        if let Some(v) = self.transition_scale {
            f.push(Field::new(
                "transition_scale",
                FieldKind::Scale(v, ScaleRole::Merge),
            ));
        }
        if let Some(v) = self.input_scale {
            f.push(Field::new(
                "input_scale",
                FieldKind::Scale(v, ScaleRole::Merge),
            ));
        }
        if let Some(v) = self.adapter_scale {
            f.push(Field::new(
                "adapter_scale",
                FieldKind::Scale(v, ScaleRole::Merge),
            ));
        }
        f.push(Field::new("qkv", FieldKind::Fp8(self.qkv, MatRole::Qkv)));
        f.push(Field::new("priors", FieldKind::Priors(self.priors)));
        f.push(Field::new(
            "temperatures",
            FieldKind::Temperatures {
                temps: self.temperatures,
                vit: false,
            },
        ));
        f.push(Field::new(
            "projection",
            FieldKind::Fp8(self.projection, MatRole::Projection),
        ));
        f.push(Field::new(
            "attn_scale",
            FieldKind::Scale(self.attn_scale, ScaleRole::Skip),
        ));
        if let Some(m) = self.transition {
            f.push(Field::new(
                "transition",
                FieldKind::Fp8(m, MatRole::EncoderTransition),
            ));
        }
        if let Some(m) = self.post_weights {
            f.push(Field::new(
                "post_weights",
                FieldKind::F16Mat(m, F16Role::Head),
            ));
        }
        f
    }
}

// ------------------------------------------------------------------------------------------------
// Split-512 blocks (23-30, 40-47)

/// FusedLayout of a split-512 block. Offsets are inside the record named in each field's comment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Split512Layout {
    /// layer0: Win 512x512 (output columns 64j.. feed branch j).
    pub win: Fp8Mat,
    /// layer0: branch fc1, 8 batches of 64x256.
    pub branch_up: Fp8Mat,
    /// layer0: branch fc2, 8 batches of 256x64.
    pub branch_down: Fp8Mat,
    /// layer1: Wc 512x512.
    pub contract: Fp8Mat,
    /// layer1.
    pub ffn_scale: F16Vec,
    /// layer2: 512x1536.
    pub qkv: Fp8Mat,
    /// layer2: 16 heads.
    pub priors: Priors,
    /// layer2: 16 f32.
    pub temperatures: F32Vec,
    /// layer3: 512x512.
    pub projection: Fp8Mat,
    /// layer3.
    pub attn_scale: F16Vec,
    /// Lengths of layer0..3.
    pub record_lens: [usize; 4],
}

/// FusedLayout shared by all split-512 blocks.
pub fn split512_layout() -> Split512Layout {
    let mut l0 = Cursor::new();
    let win = l0.fp8(512, 512, 1);
    let branch_up = l0.fp8(8 * 64, 256, 8);
    let branch_down = l0.fp8(8 * 256, 64, 8);
    let mut l1 = Cursor::new();
    let contract = l1.fp8(512, 512, 1);
    let ffn_scale = l1.scale(512);
    let mut l2 = Cursor::new();
    let qkv = l2.fp8(512, 1536, 1);
    let priors = l2.priors(16);
    let temperatures = l2.temps_padded(16);
    let mut l3 = Cursor::new();
    let projection = l3.fp8(512, 512, 1);
    let attn_scale = l3.scale(512);
    Split512Layout {
        win,
        branch_up,
        branch_down,
        contract,
        ffn_scale,
        qkv,
        priors,
        temperatures,
        projection,
        attn_scale,
        record_lens: [l0.at, l1.at, l2.at, l3.at],
    }
}

impl Split512Layout {
    /// Fields of record `layer` (0..=3) in storage order; empty for other layers.
    pub fn fields(&self, layer: usize) -> Vec<Field> {
        match layer {
            0 => vec![
                Field::new("win", FieldKind::Fp8(self.win, MatRole::SplitIn)),
                Field::new(
                    "branch_up",
                    FieldKind::Fp8(self.branch_up, MatRole::BranchUp),
                ),
                Field::new(
                    "branch_down",
                    FieldKind::Fp8(self.branch_down, MatRole::BranchDown),
                ),
            ],
            1 => vec![
                Field::new(
                    "contract",
                    FieldKind::Fp8(self.contract, MatRole::SeededContract),
                ),
                Field::new(
                    "ffn_scale",
                    FieldKind::Scale(self.ffn_scale, ScaleRole::Skip),
                ),
            ],
            2 => vec![
                Field::new("qkv", FieldKind::Fp8(self.qkv, MatRole::Qkv)),
                Field::new("priors", FieldKind::Priors(self.priors)),
                Field::new(
                    "temperatures",
                    FieldKind::Temperatures {
                        temps: self.temperatures,
                        vit: false,
                    },
                ),
            ],
            3 => vec![
                Field::new(
                    "projection",
                    FieldKind::Fp8(self.projection, MatRole::Projection),
                ),
                Field::new(
                    "attn_scale",
                    FieldKind::Scale(self.attn_scale, ScaleRole::Skip),
                ),
            ],
            _ => Vec::new(),
        }
    }
}

// ------------------------------------------------------------------------------------------------
// ViT blocks (31-38) and the two ViT transitions

/// FusedLayout of a ViT block. Offsets are inside the record named in each field's comment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VitLayout {
    /// layer0: 1024x4096 (then pad16).
    pub w1: Fp8Mat,
    /// layer1: 4096x1024.
    pub w2: Fp8Mat,
    /// layer1.
    pub ffn_scale: F16Vec,
    /// layer2: 32 f32, first in the record.
    pub temperatures: F32Vec,
    /// layer2: 1024x3072 at 128.
    pub qkv: Fp8Mat,
    /// layer3: 2 bytes, never read.
    pub unread_len: usize,
    /// layer4: 1024x1024.
    pub projection: Fp8Mat,
    /// layer4.
    pub attn_scale: F16Vec,
    /// Lengths of layer0..4.
    pub record_lens: [usize; 5],
}

/// FusedLayout shared by all ViT blocks.
pub fn vit_layout() -> VitLayout {
    let mut l0 = Cursor::new();
    let w1 = l0.fp8(1024, 4096, 1);
    l0.pad16();
    let mut l1 = Cursor::new();
    let w2 = l1.fp8(4096, 1024, 1);
    let ffn_scale = l1.scale(1024);
    let mut l2 = Cursor::new();
    // 32 heads x 4 bytes is already a multiple of 16: no padding.
    let temperatures = l2.temps_padded(32);
    let qkv = l2.fp8(1024, 3072, 1);
    let unread_len = 2;
    let mut l4 = Cursor::new();
    let projection = l4.fp8(1024, 1024, 1);
    let attn_scale = l4.scale(1024);
    VitLayout {
        w1,
        w2,
        ffn_scale,
        temperatures,
        qkv,
        unread_len,
        projection,
        attn_scale,
        record_lens: [l0.at, l1.at, l2.at, unread_len, l4.at],
    }
}

impl VitLayout {
    /// Fields of record `layer` (0..=4) in storage order; empty for other layers.
    pub fn fields(&self, layer: usize) -> Vec<Field> {
        match layer {
            0 => vec![Field::new("w1", FieldKind::Fp8(self.w1, MatRole::Expand))],
            1 => vec![
                Field::new("w2", FieldKind::Fp8(self.w2, MatRole::SeededContract)),
                Field::new(
                    "ffn_scale",
                    FieldKind::Scale(self.ffn_scale, ScaleRole::Skip),
                ),
            ],
            2 => vec![
                Field::new(
                    "temperatures",
                    FieldKind::Temperatures {
                        temps: self.temperatures,
                        vit: true,
                    },
                ),
                Field::new("qkv", FieldKind::Fp8(self.qkv, MatRole::Qkv)),
            ],
            3 => vec![Field::new(
                "unread",
                FieldKind::Unread {
                    offset: 0,
                    len: self.unread_len,
                },
            )],
            4 => vec![
                Field::new(
                    "projection",
                    FieldKind::Fp8(self.projection, MatRole::Projection),
                ),
                Field::new(
                    "attn_scale",
                    FieldKind::Scale(self.attn_scale, ScaleRole::Skip),
                ),
            ],
            _ => Vec::new(),
        }
    }
}

/// `block30.layer4`: the 512->1024 ViT entry matrix, then pad16.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VitEntryLayout {
    pub matrix: Fp8Mat,
    pub record_len: usize,
}

pub fn vit_entry_layout() -> VitEntryLayout {
    let mut cur = Cursor::new();
    let matrix = cur.fp8(512, 1024, 1);
    cur.pad16();
    VitEntryLayout {
        matrix,
        record_len: cur.at,
    }
}

/// `block39.layer0`: the 1024->512 ViT exit matrix, then the 512 f16 scales of the block-30 skip.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VitExitLayout {
    pub matrix: Fp8Mat,
    pub skip_scale: F16Vec,
    pub record_len: usize,
}

pub fn vit_exit_layout() -> VitExitLayout {
    let mut cur = Cursor::new();
    let matrix = cur.fp8(1024, 512, 1);
    let skip_scale = cur.scale(512);
    VitExitLayout {
        matrix,
        skip_scale,
        record_len: cur.at,
    }
}

/// Every field of record `id` in storage order, or `None` if the model has no such record.
pub fn record_fields(id: RecordId) -> Option<Vec<Field>> {
    record_len(id)?;
    let kind = blocks::block_kind(id.block)?;
    Some(match (kind, id.param) {
        (_, Param::BlendScale) => vec![Field::new("blend_scale", FieldKind::BlendScale)],
        (BlockKind::Split512, _) if id.layer == 4 => vec![Field::new(
            "vit_entry",
            FieldKind::Fp8(vit_entry_layout().matrix, MatRole::EncoderTransition),
        )],
        (BlockKind::Split512, _) => split512_layout().fields(id.layer),
        (BlockKind::Vit, _) => vit_layout().fields(id.layer),
        (BlockKind::VitExit, _) => {
            let l = vit_exit_layout();
            vec![
                Field::new("vit_exit", FieldKind::Fp8(l.matrix, MatRole::VitExit)),
                Field::new(
                    "skip_scale",
                    FieldKind::Scale(l.skip_scale, ScaleRole::Merge),
                ),
            ]
        }
        _ => window_layout(id.block)?.fields(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::blocks::{block_kind, STAGES};

    /// Record sizes of spec §3.2, by block.
    fn spec_len(block: usize, layer: usize) -> usize {
        match (block, layer) {
            (0, 0) => 21_696,
            (1..=3 | 67..=69, 0) => 20_672,
            (4, 0) => 22_720,
            (5..=7 | 63..=65, 0) => 61_760,
            (8, 0) => 69_936,
            (9..=13 | 57..=61, 0) => 197_184,
            (14, 0) => 229_936,
            (15..=21 | 49..=55, 0) => 689_232,
            (22, 0) => 820_288,
            (23..=30 | 40..=47, 0) => 524_288,
            (23..=30 | 40..=47, 1) => 263_168,
            (23..=30 | 40..=47, 2) => 917_568,
            (23..=30 | 40..=47, 3) => 263_168,
            (30, 4) => 524_304,
            (31..=38, 0) => 4_194_320,
            (31..=38, 1) => 4_196_352,
            (31..=38, 2) => 3_145_856,
            (31..=38, 3) => 2,
            (31..=38, 4) => 1_050_624,
            (39, 0) => 525_312,
            (48, 0) => 820_784,
            (56, 0) => 230_176,
            (62, 0) => 70_048,
            (66, 0) => 22_784,
            (70, 0) => 21_808,
            _ => panic!("no record block{block}.layer{layer}"),
        }
    }

    #[test]
    fn record_sizes_match_spec() {
        let recs = records();
        assert_eq!(recs.len(), RECORD_COUNT);
        for r in recs {
            let want = match r.id.param {
                Param::BlendScale => 2,
                Param::Layer => spec_len(r.id.block, r.id.layer),
            };
            assert_eq!(r.len, want, "{}", r.id);
        }
        let total: usize = recs.iter().map(|r| r.len).sum();
        assert_eq!(total, TOTAL_BYTES);
        let blocks: std::collections::BTreeSet<_> = recs.iter().map(|r| r.id.block).collect();
        assert_eq!(blocks.len(), BLOCK_COUNT);
    }

    #[test]
    fn stage_totals_match_spec() {
        let want: [(&str, usize); 11] = [
            ("enc32", 106_432),
            ("enc64", 255_216),
            ("enc128", 1_215_856),
            ("enc256", 5_644_912),
            ("enc512", 16_269_840),
            ("vit", 100_697_232),
            ("dec512", 16_270_848),
            ("dec256", 5_645_408),
            ("dec128", 1_216_096),
            ("dec64", 255_328),
            ("dec32", 106_610),
        ];
        for (stage, bytes) in want {
            let sum: usize = records()
                .iter()
                .filter(|r| r.stage == stage)
                .map(|r| r.len)
                .sum();
            assert_eq!(sum, bytes, "{stage}");
        }
        // Reference order: stages appear as contiguous runs in STAGES order.
        let mut order: Vec<&str> = records().iter().map(|r| r.stage).collect();
        order.dedup();
        assert_eq!(order, STAGES);
        assert_eq!(records()[151].id, RecordId::BLEND_SCALE);
    }

    #[test]
    #[rustfmt::skip]
    fn window_offsets_match_spec() {
        // (block, contract, w3, ffn_scale, qkv, priors, temps, projection, attn_scale, end)
        let std = [
            (1, 4096, None, 8208, 8288, 11360, 19552, 19568, 20592, 20656),
            (
                5,
                16384,
                Some(24576),
                28688,
                28832,
                41120,
                57504,
                57520,
                61616,
                61744,
            ),
            (
                9,
                65536,
                Some(81920),
                98320,
                98592,
                147744,
                180512,
                180528,
                196912,
                197168,
            ),
            (
                15,
                262144,
                Some(294912),
                360464,
                360992,
                557600,
                623136,
                623168,
                688704,
                689216,
            ),
        ];
        for (b, contract, w3, ffn, qkv, pri, temps, proj, attn, end) in std {
            let l = window_layout(b).unwrap();
            assert_eq!(l.expand.offset, 0);
            assert_eq!(l.contract.offset, contract, "block {b}");
            assert_eq!(l.w3.map(|m| m.offset), w3, "block {b}");
            assert_eq!(l.ffn_scale.offset, ffn, "block {b}");
            assert_eq!(l.qkv.offset, qkv, "block {b}");
            assert_eq!(l.priors.offset, pri, "block {b}");
            assert_eq!(l.temperatures.offset, temps, "block {b}");
            assert_eq!(l.projection.offset, proj, "block {b}");
            assert_eq!(l.attn_scale.offset, attn, "block {b}");
            assert_eq!(l.end_without_padding, end, "block {b}");
        }
        // Encoder-last transitions sit at endWithoutPadding.
        for b in [4, 8, 14, 22] {
            let l = window_layout(b).unwrap();
            let t = l.transition.unwrap();
            assert_eq!(t.offset, l.end_without_padding);
            assert_eq!((t.k, t.n), (l.c, 2 * l.c));
        }
        // Decoder-first: (block, upsample, ffn, transition_scale, qkv, priors, temps, proj, attn, end)
        let dec = [
            (66, 8192, 10256, 10336, 10400, 13472, 21664, 21680, 22704, 22768),
            (62, 28672, 36864, 36992, 37120, 49408, 65792, 65808, 69904, 70032),
            (56, 98304, 131072, 131328, 131584, 180736, 213504, 213520, 229904, 230160),
            (48, 360448, 491520, 492032, 492544, 689152, 754688, 754720, 820256, 820768),
        ];
        for (b, up, ffn, ts, qkv, pri, temps, proj, attn, end) in dec {
            let l = window_layout(b).unwrap();
            let u = l.upsample.unwrap();
            assert_eq!((u.offset, u.k, u.n), (up, 2 * l.c, l.c), "block {b}");
            assert_eq!(l.ffn_scale.offset, ffn, "block {b}");
            assert_eq!(l.transition_scale.unwrap().offset, ts, "block {b}");
            assert_eq!(l.qkv.offset, qkv, "block {b}");
            assert_eq!(l.priors.offset, pri, "block {b}");
            assert_eq!(l.temperatures.offset, temps, "block {b}");
            assert_eq!(l.projection.offset, proj, "block {b}");
            assert_eq!(l.attn_scale.offset, attn, "block {b}");
            assert_eq!(l.end_without_padding, end, "block {b}");
        }
        let pre = window_layout(0).unwrap();
        assert_eq!(pre.adapter.unwrap().offset, 8208);
        assert_eq!(
            (pre.ffn_scale.offset, pre.qkv.offset, pre.priors.offset),
            (9232, 9312, 12384)
        );
        assert_eq!(
            (
                pre.temperatures.offset,
                pre.projection.offset,
                pre.attn_scale.offset
            ),
            (20576, 20592, 21616)
        );
        assert_eq!(pre.end_without_padding, 21680);
        let post = window_layout(70).unwrap();
        assert_eq!(
            (post.ffn_scale.offset, post.input_scale.unwrap().offset),
            (8208, 8272)
        );
        assert_eq!(
            (
                post.adapter_scale.unwrap().offset,
                post.qkv.offset,
                post.priors.offset
            ),
            (8336, 8400, 11472)
        );
        assert_eq!(
            (
                post.temperatures.offset,
                post.projection.offset,
                post.attn_scale.offset
            ),
            (19664, 19680, 20704)
        );
        assert_eq!(post.post_weights.unwrap().offset, 20784);
        assert_eq!(post.record_len, 21808);
    }

    #[test]
    fn other_layouts_match_spec() {
        let s = split512_layout();
        assert_eq!(
            (s.win.offset, s.branch_up.offset, s.branch_down.offset),
            (0, 262_144, 393_216)
        );
        assert_eq!(s.ffn_scale.offset, 262_144);
        assert_eq!((s.priors.offset, s.temperatures.offset), (786_432, 917_504));
        assert_eq!(s.attn_scale.offset, 262_144);
        assert_eq!((s.branch_up.batch_k(), s.branch_down.batch_k()), (64, 256));
        let v = vit_layout();
        assert_eq!((v.temperatures.offset, v.qkv.offset), (0, 128));
        assert_eq!(v.ffn_scale.offset, 4_194_304);
        assert_eq!(v.attn_scale.offset, 1_048_576);
        assert_eq!(vit_exit_layout().skip_scale.offset, 524_288);
        assert_eq!(vit_entry_layout().record_len, 524_304);
        assert_eq!(window_layout(31), None);
        assert_eq!(window_layout(71), None);
        assert_eq!(block_kind(71), None);
    }

    /// Fields never overlap, stay inside their record, and the gaps (padding) add up to the
    /// 2,376 pad bytes of the shipped model; element counts reproduce the §3.6 statistics.
    #[test]
    fn fields_tile_records() {
        let mut pad = 0usize;
        let mut fp8 = 0usize;
        let mut prior_heads = 0usize;
        let mut temps = 0usize;
        let mut logical = 0usize;
        for r in records() {
            let fields = record_fields(r.id).unwrap();
            let mut at = 0;
            for f in &fields {
                let range = f.range();
                assert!(range.start >= at, "{} {} overlaps", r.id, f.name);
                assert!(range.end <= r.len, "{} {} past end", r.id, f.name);
                pad += range.start - at;
                at = range.end;
                match f.kind {
                    FieldKind::Fp8(m, _) => {
                        assert_eq!(m.k % 32, 0);
                        assert_eq!(m.n % 16, 0);
                        assert_eq!(m.batch_k() % 32, 0);
                        fp8 += m.len();
                        logical += m.len();
                    }
                    FieldKind::Priors(p) => {
                        prior_heads += p.heads;
                        logical += p.heads * 4096;
                    }
                    FieldKind::Temperatures { temps: t, .. } => {
                        temps += t.count;
                        logical += t.count;
                    }
                    FieldKind::Scale(v, _) => logical += v.count,
                    FieldKind::F16Mat(m, _) => logical += m.k * m.n,
                    FieldKind::Unread { .. } | FieldKind::BlendScale => {}
                }
            }
            pad += r.len - at;
        }
        assert_eq!(pad, 2_376);
        assert_eq!(fp8, 143_831_040);
        assert_eq!(prior_heads, 458);
        assert_eq!(prior_heads + 256, temps);
        assert_eq!(temps, 714);
        assert_eq!(logical, 145_755_114);
    }

    #[test]
    fn names_and_index() {
        assert_eq!(RecordId::layer(30, 4).name(), "block30.layer4.layer");
        assert_eq!(
            RecordId::BLEND_SCALE.to_string(),
            "block70.layer0.blend_scale"
        );
        for (i, r) in records().iter().enumerate() {
            assert_eq!(record_index(r.id), Some(i));
        }
        assert_eq!(record_index(RecordId::layer(29, 4)), None);
        assert_eq!(record_len(RecordId::layer(39, 1)), None);
        assert_eq!(
            record_len(RecordId {
                block: 69,
                layer: 0,
                param: Param::BlendScale
            }),
            None
        );
    }
}
