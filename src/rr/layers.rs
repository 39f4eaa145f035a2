//! The layer table of DLSS Ray Reconstruction's denoiser, stated once (spec rr-network §2, §4):
//! the eleven Swin layers enc0..enc5, dec4..dec0 in pipeline order, with their width C, head
//! count, MLP chunks, patch merge (encoders) or patch expand (decoders), tail head and the enc0
//! embedding, plus the constants every layer shares (head width 32, 64 query and 96 key tokens per
//! window, 16 tail outputs).
//!
//! The weight image layout (`rr::weights::layout`), the geometry and the graph read their layer
//! facts here; none keeps a table of its own. Nothing here knows byte offsets except through
//! [`Layer::image_bytes`], which asks the layout (the sizes are what follows from this table).

/// Layers in a pass: six encoders and five decoders.
pub const LAYER_COUNT: usize = 11;
/// Channels of one attention head (every layer, §2): attention width = 32 · heads.
pub const HEAD_WIDTH: usize = 32;
/// Hidden columns per MLP chunk (§3 step 8): hidden = 4C in C/8 chunks of 32.
pub const MLP_CHUNK: usize = 32;
/// Query tokens of a window (8x8).
pub const WINDOW_QUERIES: usize = 64;
/// Key/value tokens of a window: the 64 queries plus a 32-token halo (§3).
pub const WINDOW_KEYS: usize = 96;
/// Outputs of the per-pixel tail head (§4.1 P22, §4.4).
pub const TAIL_OUTPUTS: usize = 16;
/// Input features per pixel of enc0 and the width of its embedding (§4.1).
pub const EMBED_FEATURES: usize = 32;
/// The region at the start of enc0's weight image that the enc0 phases never read (§4.1).
pub const NOISE_TABLE_BYTES: usize = 4096;
/// Resolutions of the U-net: level 0 is the token grid at render resolution (padded to a
/// multiple of 32), each further level halves it.
pub const LEVELS: usize = 6;

/// One of the eleven layers, in pipeline order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum LayerId {
    Enc0,
    Enc1,
    Enc2,
    Enc3,
    Enc4,
    Enc5,
    Dec4,
    Dec3,
    Dec2,
    Dec1,
    Dec0,
}

impl LayerId {
    /// Every layer in pipeline order (enc0..enc5, dec4..dec0).
    pub const ALL: [LayerId; LAYER_COUNT] = [
        LayerId::Enc0,
        LayerId::Enc1,
        LayerId::Enc2,
        LayerId::Enc3,
        LayerId::Enc4,
        LayerId::Enc5,
        LayerId::Dec4,
        LayerId::Dec3,
        LayerId::Dec2,
        LayerId::Dec1,
        LayerId::Dec0,
    ];

    /// Position in pipeline order (0..11).
    pub const fn index(self) -> usize {
        self as usize
    }

    /// The layer at pipeline position `i`.
    pub const fn from_index(i: usize) -> Option<LayerId> {
        if i < LAYER_COUNT {
            Some(LayerId::ALL[i])
        } else {
            None
        }
    }

    /// `enc0` .. `dec0` (the names NVIDIA's kernels carry, `cuda_dldn_engine_swin_<name>_kernel`).
    pub const fn name(self) -> &'static str {
        LAYERS[self as usize].name
    }

    /// The layer named `name` (`enc0` .. `dec0`).
    pub fn from_name(name: &str) -> Option<LayerId> {
        LayerId::ALL.into_iter().find(|l| l.name() == name)
    }

    /// This layer's row of the table.
    pub const fn layer(self) -> &'static Layer {
        &LAYERS[self as usize]
    }
}

impl std::fmt::Display for LayerId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Which half of the U-net a layer belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Side {
    Encoder,
    Decoder,
}

/// One row of the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layer {
    pub id: LayerId,
    pub name: &'static str,
    pub side: Side,
    /// The grid the layer runs on: 0 = render resolution (padded), each level halves.
    pub level: usize,
    /// Channels C of the layer's tokens.
    pub channels: usize,
    /// Attention heads (each [`HEAD_WIDTH`] wide).
    pub heads: usize,
    /// Encoders but enc5: the patch merge 4C -> this width (the next encoder's C).
    pub merge_out: Option<usize>,
    /// Decoders: the input width of the patch expand C_in -> 4 x C (the coarser layer's C).
    pub expand_in: Option<usize>,
    /// The per-pixel tail head C -> 16 (every layer but dec0).
    pub tail: bool,
    /// enc0 only: the 32 -> 32 -> 32 input embedding and the 4096-byte region before it.
    pub embedding: bool,
}

impl Layer {
    /// MLP hidden width 4C.
    pub const fn mlp_hidden(&self) -> usize {
        4 * self.channels
    }

    /// MLP chunks of [`MLP_CHUNK`] hidden columns: C/8.
    pub const fn mlp_chunks(&self) -> usize {
        self.mlp_hidden() / MLP_CHUNK
    }

    /// Width of the concatenated heads, 32 · heads (independent of C).
    pub const fn attention_width(&self) -> usize {
        HEAD_WIDTH * self.heads
    }

    /// Input width of the patch merge (4C: 2x2 tokens of C), for layers that merge.
    pub const fn merge_in(&self) -> Option<usize> {
        match self.merge_out {
            Some(_) => Some(4 * self.channels),
            None => None,
        }
    }

    /// Output width of the patch expand (4C: one C-vector per 2x2 sub-position), for decoders.
    pub const fn expand_out(&self) -> Option<usize> {
        match self.expand_in {
            Some(_) => Some(4 * self.channels),
            None => None,
        }
    }

    /// Bytes of the layer's prepared weight image (spec §6.2; what §2's table lists).
    pub fn image_bytes(&self) -> usize {
        super::weights::layout::layout(self.id).size
    }
}

const fn row(
    id: LayerId,
    name: &'static str,
    level: usize,
    channels: usize,
    heads: usize,
    merge_out: Option<usize>,
    expand_in: Option<usize>,
) -> Layer {
    Layer {
        id,
        name,
        // Pipeline order: the six encoders come first.
        side: if (id as usize) < 6 {
            Side::Encoder
        } else {
            Side::Decoder
        },
        level,
        channels,
        heads,
        merge_out,
        expand_in,
        // dec0 has no head GEMM: it uses its block output directly (§4.4).
        tail: !matches!(id, LayerId::Dec0),
        embedding: matches!(id, LayerId::Enc0),
    }
}

/// The table (§2): C, heads, merges (enc0..enc4: 4C -> C_next), expands (dec4..dec0: C_in ->
/// 4C). Tests check it against every figure of §2.
#[rustfmt::skip]
pub const LAYERS: [Layer; LAYER_COUNT] = {
    use LayerId::*;
    [
        //  id    name    level C    heads merge       expand
        row(Enc0, "enc0", 0,    32,  2,    Some(64),   None),
        row(Enc1, "enc1", 1,    64,  2,    Some(96),   None),
        row(Enc2, "enc2", 2,    96,  4,    Some(128),  None),
        row(Enc3, "enc3", 3,    128, 4,    Some(160),  None),
        row(Enc4, "enc4", 4,    160, 8,    Some(160),  None),
        row(Enc5, "enc5", 5,    160, 8,    None,       None),
        row(Dec4, "dec4", 4,    160, 8,    None,       Some(160)),
        row(Dec3, "dec3", 3,    128, 4,    None,       Some(160)),
        row(Dec2, "dec2", 2,    96,  4,    None,       Some(128)),
        row(Dec1, "dec1", 1,    64,  2,    None,       Some(96)),
        row(Dec0, "dec0", 0,    32,  2,    None,       Some(64)),
    ]
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_order_and_names() {
        for (i, l) in LAYERS.iter().enumerate() {
            assert_eq!(l.id.index(), i, "{}", l.name);
            assert_eq!(LayerId::from_index(i), Some(l.id));
            assert_eq!(LayerId::from_name(l.name), Some(l.id));
            assert_eq!(l.id.to_string(), l.name);
        }
        assert_eq!(LayerId::from_index(LAYER_COUNT), None);
        assert_eq!(LayerId::from_name("enc6"), None);
    }

    #[test]
    fn heads_widths_and_chunks_are_section_2s() {
        let heads: Vec<usize> = LAYERS.iter().map(|l| l.heads).collect();
        assert_eq!(heads, [2, 2, 4, 4, 8, 8, 8, 4, 4, 2, 2]);
        let c: Vec<usize> = LAYERS.iter().map(|l| l.channels).collect();
        assert_eq!(c, [32, 64, 96, 128, 160, 160, 160, 128, 96, 64, 32]);
        let chunks: Vec<usize> = LAYERS.iter().map(|l| l.mlp_chunks()).collect();
        assert_eq!(chunks, [4, 8, 12, 16, 20, 20, 20, 16, 12, 8, 4]);
        let hidden: Vec<usize> = LAYERS.iter().map(|l| l.mlp_hidden()).collect();
        assert_eq!(
            hidden,
            [128, 256, 384, 512, 640, 640, 640, 512, 384, 256, 128]
        );
        let levels: Vec<usize> = LAYERS.iter().map(|l| l.level).collect();
        assert_eq!(levels, [0, 1, 2, 3, 4, 5, 4, 3, 2, 1, 0]);
        assert!(LAYERS.iter().all(|l| l.level < LEVELS));
    }

    #[test]
    fn merges_and_expands_are_section_2s() {
        // Patch merge: enc0 128->64, enc1 256->96, enc2 384->128, enc3 512->160, enc4 640->160.
        let merges: Vec<Option<(usize, usize)>> = LAYERS
            .iter()
            .map(|l| l.merge_in().zip(l.merge_out))
            .collect();
        assert_eq!(
            &merges[..6],
            &[
                Some((128, 64)),
                Some((256, 96)),
                Some((384, 128)),
                Some((512, 160)),
                Some((640, 160)),
                None
            ]
        );
        assert!(merges[6..].iter().all(Option::is_none));
        // Each merge feeds the next encoder at its width.
        for w in LAYERS[..6].windows(2) {
            assert_eq!(w[0].merge_out, Some(w[1].channels), "{}", w[0].name);
        }
        // Patch expand: dec4 160->4x160, dec3 160->4x128, dec2 128->4x96, dec1 96->4x64,
        // dec0 64->4x32; the input is the coarser layer's C.
        let expands: Vec<Option<(usize, usize)>> = LAYERS
            .iter()
            .map(|l| l.expand_in.zip(l.expand_out()))
            .collect();
        assert!(expands[..6].iter().all(Option::is_none));
        assert_eq!(
            &expands[6..],
            &[
                Some((160, 640)),
                Some((160, 512)),
                Some((128, 384)),
                Some((96, 256)),
                Some((64, 128)),
            ]
        );
        for w in LAYERS[5..].windows(2) {
            assert_eq!(w[1].expand_in, Some(w[0].channels), "{}", w[1].name);
        }
    }

    #[test]
    fn tails_embedding_and_sides() {
        let tails: Vec<bool> = LAYERS.iter().map(|l| l.tail).collect();
        assert_eq!(
            tails,
            [true, true, true, true, true, true, true, true, true, true, false]
        );
        let embed: Vec<&str> = LAYERS
            .iter()
            .filter(|l| l.embedding)
            .map(|l| l.name)
            .collect();
        assert_eq!(embed, ["enc0"]);
        assert!(LAYERS[..6].iter().all(|l| l.side == Side::Encoder));
        assert!(LAYERS[6..].iter().all(|l| l.side == Side::Decoder));
        // Decoders mirror the encoders at their level.
        for d in &LAYERS[6..] {
            let e = LAYERS[d.level];
            assert_eq!(
                (e.side, e.level, e.channels, e.heads),
                (Side::Encoder, d.level, d.channels, d.heads)
            );
        }
    }
}
