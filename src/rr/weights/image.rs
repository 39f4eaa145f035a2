//! Reading and writing prepared weight images: [`LayerImage`] decodes one layer's items into
//! natural form (E4M3 matrices `[n][k]`, f16 vectors and `[64][96]` score biases as bits),
//! [`encode_layer`] builds an image from natural values, and [`RrWeights`] holds the eleven
//! images of a model.

use super::super::layers::{LayerId, LAYER_COUNT};
use super::layout::{self, F16Vec, Fp8Mat, Item, ItemKind, LayerLayout, Linear};
use super::tiles;

/// Why a set of images was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ImageError {
    #[error("{layer}: weight image has {found} bytes, the layout needs {expected}")]
    Size {
        layer: LayerId,
        expected: usize,
        found: usize,
    },
    #[error("{found} weight images, expected 11 (enc0..enc5, dec4..dec0)")]
    Count { found: usize },
    #[error("{layer}: {found} items' values, the layout has {expected} items")]
    Items {
        layer: LayerId,
        expected: usize,
        found: usize,
    },
    #[error("{layer} {item}: {found} values, the item has {expected}")]
    Values {
        layer: LayerId,
        item: String,
        expected: usize,
        found: usize,
    },
}

/// A natural E4M3 matrix: `codes[n·k_count + k]` is output `n`, input `k`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Matrix {
    /// Output columns (rows of `codes`).
    pub n: usize,
    /// Inputs (contiguous).
    pub k: usize,
    pub codes: Vec<u8>,
}

impl Matrix {
    /// The code of output `n`, input `k`.
    pub fn at(&self, n: usize, k: usize) -> u8 {
        self.codes[n * self.k + k]
    }

    /// Output `n`'s `k` codes.
    pub fn row(&self, n: usize) -> &[u8] {
        &self.codes[n * self.k..(n + 1) * self.k]
    }
}

/// A natural GEMM with its bias.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinearWeights {
    pub w: Matrix,
    /// `w.n` f16 values (bits).
    pub b: Vec<u16>,
}

/// The natural values of one item (what [`LayerImage::item`] returns and [`encode_layer`]
/// takes).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Values {
    /// Opaque bytes (enc0's unread region).
    Bytes(Vec<u8>),
    /// E4M3 codes `[n][k]`.
    Codes(Vec<u8>),
    /// f16 bits: a vector, or a score bias `[64][96]`.
    Halves(Vec<u16>),
}

impl Values {
    /// Number of elements.
    pub fn len(&self) -> usize {
        match self {
            Values::Bytes(v) | Values::Codes(v) => v.len(),
            Values::Halves(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// One layer's image, checked for size, read in natural form. Every accessor allocates its
/// result (decoding a whole model takes a few milliseconds).
#[derive(Debug, Clone, Copy)]
pub struct LayerImage<'a> {
    id: LayerId,
    layout: &'static LayerLayout,
    bytes: &'a [u8],
}

impl<'a> LayerImage<'a> {
    /// `bytes` as layer `id`'s image; it must be exactly the layout's size.
    pub fn new(id: LayerId, bytes: &'a [u8]) -> Result<LayerImage<'a>, ImageError> {
        let layout = layout::layout(id);
        if bytes.len() != layout.size {
            return Err(ImageError::Size {
                layer: id,
                expected: layout.size,
                found: bytes.len(),
            });
        }
        Ok(LayerImage { id, layout, bytes })
    }

    pub fn id(&self) -> LayerId {
        self.id
    }

    pub fn layout(&self) -> &'static LayerLayout {
        self.layout
    }

    /// The prepared bytes as stored (what a GPU kernel binds).
    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// Any matrix of the layout, natural `[n][k]`.
    pub fn matrix(&self, m: &Fp8Mat) -> Matrix {
        Matrix {
            n: m.n,
            k: m.k,
            codes: tiles::unpack_fp8(&self.bytes[m.range()], m.n, m.k, m.order),
        }
    }

    /// Any f16 vector of the layout, as bits.
    pub fn vector(&self, v: &F16Vec) -> Vec<u16> {
        tiles::read_f16s(&self.bytes[v.range()])
    }

    fn linear(&self, l: &Linear) -> LinearWeights {
        LinearWeights {
            w: self.matrix(&l.w),
            b: self.vector(&l.b),
        }
    }

    /// Any item, natural.
    pub fn item(&self, item: &Item) -> Values {
        match item.kind {
            ItemKind::Bytes { len } => {
                Values::Bytes(self.bytes[item.offset..item.offset + len].to_vec())
            }
            ItemKind::Fp8(m) => Values::Codes(self.matrix(&m).codes),
            ItemKind::F16(v) => Values::Halves(self.vector(&v)),
            ItemKind::ScoreBias(b) => {
                Values::Halves(tiles::unpack_score_bias(&self.bytes[b.range()]))
            }
        }
    }

    /// enc0's 4096-byte region (never read by the network), as stored.
    pub fn noise_table(&self) -> Option<&'a [u8]> {
        self.layout.noise_table.clone().map(|r| &self.bytes[r])
    }

    /// enc0's embedding P1 (32 -> 32) with b1.
    pub fn embed_p1(&self) -> Option<LinearWeights> {
        self.layout.embedding.map(|e| self.linear(&e.p1))
    }

    /// enc0's embedding P2 (32 -> 32) with b2.
    pub fn embed_p2(&self) -> Option<LinearWeights> {
        self.layout.embedding.map(|e| self.linear(&e.p2))
    }

    /// Decoders: the patch expand, `n = 4C` (sub-position q's outputs at `q·C..q·C+C`),
    /// `k = C_in`, with its 4C biases.
    pub fn expand(&self) -> Option<LinearWeights> {
        self.layout.expand.map(|x| self.linear(&x))
    }

    /// Pre-attention RMS-norm gain (C).
    pub fn g1(&self) -> Vec<u16> {
        self.vector(&self.layout.block.g1)
    }

    /// Head `h`'s QK projection: `[32][C]` (U = h0 · Wqkᵀ; scores use U against itself).
    ///
    /// # Panics
    /// If `h` is not a head of the layer.
    pub fn qk(&self, h: usize) -> Matrix {
        self.matrix(&self.layout.block.heads[h].qk)
    }

    /// Head `h`'s V projection: `[32][C]`.
    ///
    /// # Panics
    /// If `h` is not a head of the layer.
    pub fn v(&self, h: usize) -> Matrix {
        self.matrix(&self.layout.block.heads[h].v)
    }

    /// Head `h`'s score bias, `[64 queries][96 keys]` f16 bits.
    ///
    /// # Panics
    /// If `h` is not a head of the layer.
    pub fn score_bias(&self, h: usize) -> Vec<u16> {
        let b = self.layout.block.heads[h].bias;
        tiles::unpack_score_bias(&self.bytes[b.range()])
    }

    /// Head `h`'s out-projection: `[C][32]`.
    ///
    /// # Panics
    /// If `h` is not a head of the layer.
    pub fn wo(&self, h: usize) -> Matrix {
        self.matrix(&self.layout.block.heads[h].wo)
    }

    /// Out-projection bias, added with the residual (C).
    pub fn bo(&self) -> Vec<u16> {
        self.vector(&self.layout.block.bo)
    }

    /// MLP RMS-norm gain (C).
    pub fn g2(&self) -> Vec<u16> {
        self.vector(&self.layout.block.g2)
    }

    /// MLP chunk `c`'s W1: `[32][C]`.
    ///
    /// # Panics
    /// If `c` is not a chunk of the layer (0..C/8).
    pub fn w1(&self, c: usize) -> Matrix {
        self.matrix(&self.layout.block.chunks[c].w1)
    }

    /// MLP chunk `c`'s b1 (32), W1's per-column C seed.
    ///
    /// # Panics
    /// If `c` is not a chunk of the layer.
    pub fn b1(&self, c: usize) -> Vec<u16> {
        self.vector(&self.layout.block.chunks[c].b1)
    }

    /// MLP chunk `c`'s W2: `[C][32]`.
    ///
    /// # Panics
    /// If `c` is not a chunk of the layer.
    pub fn w2(&self, c: usize) -> Matrix {
        self.matrix(&self.layout.block.chunks[c].w2)
    }

    /// MLP output bias (C), added once.
    pub fn b2(&self) -> Vec<u16> {
        self.vector(&self.layout.block.b2)
    }

    /// Encoders but enc5: the patch merge, `[C_next][4C]`, with its C_next biases.
    pub fn merge(&self) -> Option<LinearWeights> {
        self.layout.merge.map(|m| self.linear(&m))
    }

    /// Every layer but dec0: the tail head, `[16][C]`, with its 16 biases.
    pub fn tail(&self) -> Option<LinearWeights> {
        self.layout.tail.map(|t| self.linear(&t))
    }
}

/// Build layer `id`'s image from the natural values of its items, one per item in
/// [`LayerLayout::items`] order.
pub fn encode_layer(id: LayerId, values: &[Values]) -> Result<Vec<u8>, ImageError> {
    let lay = layout::layout(id);
    let items = lay.items();
    if values.len() != items.len() {
        return Err(ImageError::Items {
            layer: id,
            expected: items.len(),
            found: values.len(),
        });
    }
    let mut out = vec![0u8; lay.size];
    for (item, v) in items.iter().zip(values) {
        encode_item(id, item, v, &mut out)?;
    }
    Ok(out)
}

/// Write one item's natural values into `image` (the whole layer image).
pub fn encode_item(
    id: LayerId,
    item: &Item,
    values: &Values,
    image: &mut [u8],
) -> Result<(), ImageError> {
    let mismatch = |found| ImageError::Values {
        layer: id,
        item: item.name(),
        expected: item.elements(),
        found,
    };
    if values.len() != item.elements() {
        return Err(mismatch(values.len()));
    }
    let out = &mut image[item.offset..item.end()];
    match (item.kind, values) {
        (ItemKind::Bytes { .. }, Values::Bytes(b)) => out.copy_from_slice(b),
        (ItemKind::Fp8(m), Values::Codes(c)) => tiles::pack_fp8(c, m.n, m.k, m.order, out),
        (ItemKind::F16(_), Values::Halves(h)) => tiles::write_f16s(h, out),
        (ItemKind::ScoreBias(_), Values::Halves(h)) => tiles::pack_score_bias(h, out),
        // The right count of the wrong kind: reported as a mismatch of nothing usable.
        _ => return Err(mismatch(0)),
    }
    Ok(())
}

/// The eleven prepared images of a model, in pipeline order, each checked for size.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RrWeights {
    images: Vec<Vec<u8>>,
}

impl RrWeights {
    /// Eleven images in pipeline order (enc0..enc5, dec4..dec0).
    pub fn from_images(images: Vec<Vec<u8>>) -> Result<RrWeights, ImageError> {
        if images.len() != LAYER_COUNT {
            return Err(ImageError::Count {
                found: images.len(),
            });
        }
        for (id, img) in LayerId::ALL.into_iter().zip(&images) {
            LayerImage::new(id, img)?;
        }
        Ok(RrWeights { images })
    }

    /// Layer `id`'s image, read in natural form.
    pub fn layer(&self, id: LayerId) -> LayerImage<'_> {
        LayerImage {
            id,
            layout: layout::layout(id),
            // Sizes were checked when the set was made.
            bytes: &self.images[id.index()],
        }
    }

    /// Layer `id`'s prepared bytes.
    pub fn image(&self, id: LayerId) -> &[u8] {
        &self.images[id.index()]
    }

    /// The images, in pipeline order.
    pub fn images(&self) -> &[Vec<u8>] {
        &self.images
    }

    /// Bytes of all images.
    pub fn total_bytes(&self) -> usize {
        self.images.iter().map(Vec::len).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A deterministic pseudo-random byte stream (the test needs every byte different from its
    /// neighbours, not quality randomness).
    fn bytes(seed: u64, len: usize) -> Vec<u8> {
        let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        (0..len)
            .map(|_| {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                (s >> 24) as u8
            })
            .collect()
    }

    /// Every byte of every image belongs to exactly one item, so decoding an arbitrary image
    /// into items and encoding them again gives the same bytes; and encoding arbitrary natural
    /// values and decoding them gives the same values.
    #[test]
    fn images_round_trip_through_natural_values() {
        for id in LayerId::ALL {
            let lay = layout::layout(id);
            let raw = bytes(id.index() as u64 + 1, lay.size);
            let img = LayerImage::new(id, &raw).expect("size");
            let values: Vec<Values> = lay.items().iter().map(|it| img.item(it)).collect();
            assert_eq!(encode_layer(id, &values).expect("encode"), raw, "{id}");

            let again = encode_layer(id, &values).expect("encode");
            let img2 = LayerImage::new(id, &again).expect("size");
            for (it, v) in lay.items().iter().zip(&values) {
                assert_eq!(&img2.item(it), v, "{id} {}", it.name());
            }
        }
    }

    /// The named accessors return what the generic item walk returns.
    #[test]
    fn accessors_agree_with_items() {
        for id in LayerId::ALL {
            let lay = layout::layout(id);
            let raw = bytes(100 + id.index() as u64, lay.size);
            let img = LayerImage::new(id, &raw).expect("size");
            for it in lay.items() {
                let v = img.item(&it);
                let named = match it.role {
                    layout::Role::NoiseTable => {
                        Values::Bytes(img.noise_table().expect("enc0").to_vec())
                    }
                    layout::Role::EmbedW1 => Values::Codes(img.embed_p1().expect("p1").w.codes),
                    layout::Role::EmbedB1 => Values::Halves(img.embed_p1().expect("p1").b),
                    layout::Role::EmbedW2 => Values::Codes(img.embed_p2().expect("p2").w.codes),
                    layout::Role::EmbedB2 => Values::Halves(img.embed_p2().expect("p2").b),
                    layout::Role::ExpandW => Values::Codes(img.expand().expect("x").w.codes),
                    layout::Role::ExpandB => Values::Halves(img.expand().expect("x").b),
                    layout::Role::G1 => Values::Halves(img.g1()),
                    layout::Role::Qk => Values::Codes(img.qk(it.index).codes),
                    layout::Role::V => Values::Codes(img.v(it.index).codes),
                    layout::Role::ScoreBias => Values::Halves(img.score_bias(it.index)),
                    layout::Role::Wo => Values::Codes(img.wo(it.index).codes),
                    layout::Role::Bo => Values::Halves(img.bo()),
                    layout::Role::G2 => Values::Halves(img.g2()),
                    layout::Role::W1 => Values::Codes(img.w1(it.index).codes),
                    layout::Role::B1 => Values::Halves(img.b1(it.index)),
                    layout::Role::W2 => Values::Codes(img.w2(it.index).codes),
                    layout::Role::B2 => Values::Halves(img.b2()),
                    layout::Role::MergeW => Values::Codes(img.merge().expect("m").w.codes),
                    layout::Role::MergeB => Values::Halves(img.merge().expect("m").b),
                    layout::Role::TailW => Values::Codes(img.tail().expect("t").w.codes),
                    layout::Role::TailB => Values::Halves(img.tail().expect("t").b),
                };
                assert_eq!(named, v, "{id} {}", it.name());
            }
        }
    }

    /// The accessors read the matrices in the §6.3 order: a single nonzero natural element
    /// lands where the tile formula says and is read back at its (n, k).
    #[test]
    fn a_single_element_lands_where_the_formula_says() {
        let id = LayerId::Enc0;
        let lay = layout::layout(id);
        let qk1 = lay.block.heads[1].qk;
        let (n, k) = (17, 9);
        let mut codes = vec![0u8; qk1.len()];
        codes[n * qk1.k + k] = 0x38;
        let mut image = vec![0u8; lay.size];
        let item = lay
            .items()
            .into_iter()
            .find(|i| i.role == layout::Role::Qk && i.index == 1)
            .expect("qk[1]");
        encode_item(id, &item, &Values::Codes(codes), &mut image).expect("encode");
        let at = qk1.offset + tiles::fp8_offset(n, k, qk1.n, qk1.k, qk1.order);
        // 21696 + 512·(17>>4) + 64·(17&7) + 16·((9>>1)&3) + 8·((17>>3)&1) + 4·((9>>3)&1) + 1,
        // with (9>>1)&3 = 0 and (17>>3)&1 = 0.
        assert_eq!(at, 21696 + 512 + 64 + 4 + 1);
        assert_eq!(image.iter().position(|&b| b != 0), Some(at));
        let img = LayerImage::new(id, &image).expect("size");
        assert_eq!(img.qk(1).at(n, k), 0x38);
        assert_eq!(img.qk(0).codes.iter().filter(|&&c| c != 0).count(), 0);
    }

    #[test]
    fn wrong_sizes_and_values_are_refused() {
        assert_eq!(
            LayerImage::new(LayerId::Enc3, &[0u8; 315_732]).err(),
            Some(ImageError::Size {
                layer: LayerId::Enc3,
                expected: 315_744,
                found: 315_732
            })
        );
        assert!(matches!(
            RrWeights::from_images(vec![Vec::new(); 10]),
            Err(ImageError::Count { found: 10 })
        ));
        let lay = layout::layout(LayerId::Dec0);
        let g1 = lay.items()[2];
        assert_eq!(g1.role, layout::Role::G1);
        let mut image = vec![0u8; lay.size];
        assert!(encode_item(LayerId::Dec0, &g1, &Values::Halves(vec![0; 31]), &mut image).is_err());
        assert!(encode_item(LayerId::Dec0, &g1, &Values::Codes(vec![0; 32]), &mut image).is_err());
        assert_eq!(
            encode_layer(LayerId::Dec0, &[]).err(),
            Some(ImageError::Items {
                layer: LayerId::Dec0,
                expected: lay.items().len(),
                found: 0
            })
        );
    }

    #[test]
    fn a_model_of_eleven_images() {
        let images: Vec<Vec<u8>> = LayerId::ALL
            .into_iter()
            .map(|id| bytes(7, layout::layout(id).size))
            .collect();
        let w = RrWeights::from_images(images.clone()).expect("eleven images");
        assert_eq!(w.total_bytes(), layout::total_bytes());
        for id in LayerId::ALL {
            assert_eq!(w.image(id), images[id.index()].as_slice());
            assert_eq!(w.layer(id).bytes(), w.image(id));
        }
        let mut short = images;
        short[4].pop();
        assert!(matches!(
            RrWeights::from_images(short),
            Err(ImageError::Size {
                layer: LayerId::Enc4,
                ..
            })
        ));
    }
}
