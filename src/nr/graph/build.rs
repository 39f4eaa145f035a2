//! Construction of the schedule (spec nr-network §1.3-§1.7, §4.1).

//!
//! The order of the blocks, their kinds and widths come from the block table (`model::blocks`),
//! every weight's offset and shape from the record layout (`model::layout`); what is stated here
//! is the wiring between them.

use super::*;
use crate::model::blocks::{self, Block, BlockKind, BLOCK_COUNT, HEAD_CHANNELS, VIT_ENTRY_BLOCK};
use crate::model::layout::{self, Fp8Mat, WindowLayout};

use crate::nr::geometry::{self, Level};

const FIELD: Level = Level::Field;

struct Builder {
    tensors: Vec<Tensor>,
    nodes: Vec<Node>,
    boundaries: Vec<(String, TensorId)>,
}

/// What a block publishes.
struct BlockOut {
    e4: TensorId,
    raw: Option<TensorId>,
}

impl Builder {
    fn tensor(&mut self, name: String, level: Level, channels: usize, dtype: DType) -> TensorId {
        self.tensors.push(Tensor {
            name,
            level,
            channels,
            dtype,
        });
        self.tensors.len() - 1
    }

    fn push(&mut self, block: usize, label: String, op: Op, boundary: Option<String>) {
        if let Some(name) = &boundary {
            let out = *op.outputs().first().expect("every op has an output");
            self.boundaries.push((name.clone(), out));
        }
        self.nodes.push(Node {
            op,
            block,
            label,
            boundary,
        });
    }

    /// A GEMM node; returns (out, out_raw).
    #[allow(clippy::too_many_arguments)]
    fn gemm(
        &mut self,
        block: usize,
        label: &str,
        input: TensorId,
        mode: InputMode,
        mat: MatRef,
        seed: Option<Seed>,
        partition: Option<usize>,
        epilogue: Epilogue,
        boundary: Option<String>,
    ) -> (TensorId, Option<TensorId>) {
        let level = self.tensors[input].level;
        let channels = mat.n * mat.groups;
        let name = format!("block-{block}.{label}");
        let dtype = if epilogue == Epilogue::F16 {
            DType::F16
        } else {
            DType::E4
        };
        let out = self.tensor(name.clone(), level, channels, dtype);
        let out_raw = (epilogue == Epilogue::Dual)
            .then(|| self.tensor(format!("{name}.raw"), level, channels, DType::F16));
        self.push(
            block,
            name,
            Op::Gemm {
                input,
                mode,
                mat,
                seed,
                partition,
                epilogue,
                out,
                out_raw,
            },
            boundary,
        );
        (out, out_raw)
    }

    /// The graph's view of a stored matrix: `m.batches` groups of `m.batch_k() x m.n`.
    fn mat(block: usize, layer: usize, m: Fp8Mat) -> MatRef {
        MatRef {
            at: WeightRef {
                block,
                layer,
                offset: m.offset,
            },
            k: m.batch_k(),
            n: m.n,
            groups: m.batches,
        }
    }

    fn w(block: usize, layer: usize, offset: usize) -> WeightRef {
        WeightRef {
            block,
            layer,
            offset,
        }
    }

    /// QKV -> normalise -> window attention (window and split-512 blocks, weights in record
    /// `layer`); returns the E4 attention output.
    fn window_attention(
        &mut self,
        block: usize,
        layer: usize,
        y: TensorId,
        qkv: Fp8Mat,
        temps: usize,
        priors: usize,
    ) -> TensorId {
        let c = qkv.k;
        let heads = c / HEAD_CHANNELS;
        let level = self.tensors[y].level;
        let (qkv_t, _) = self.gemm(
            block,
            "qkv",
            y,
            InputMode::Shared,
            Self::mat(block, layer, qkv),
            None,
            None,
            Epilogue::F16,
            None,
        );
        let q = self.tensor(format!("block-{block}.q"), level, c, DType::E4);
        let k = self.tensor(format!("block-{block}.k"), level, c, DType::E4);
        let v = self.tensor(format!("block-{block}.v"), level, c, DType::E4);
        self.push(
            block,
            format!("block-{block}.normalize"),
            Op::Normalize {
                qkv: qkv_t,
                heads,
                temperatures: Self::w(block, layer, temps),
                vit: false,
                q,
                k,
                v,
            },
            None,
        );
        let phase = geometry::block_phase(block).map_or(0, |p| p.0 as usize);
        let out = self.tensor(format!("block-{block}.attention"), level, c, DType::E4);
        self.push(
            block,
            format!("block-{block}.attention"),
            Op::WindowAttention {
                q,
                k,
                v,
                heads,
                priors: Self::w(block, layer, priors),
                phase,
                out,
            },
            None,
        );
        out
    }

    /// A standard window block (C = 32 dense, C >= 64 experts), blocks 0-22 and 48-70.
    fn window_block(
        &mut self,
        block: usize,
        x: TensorId,
        ffn_skip: TensorId,
        need_raw: bool,
    ) -> BlockOut {
        let lay: WindowLayout =
            layout::window_layout(block).expect("graph only asks for window blocks");
        let c = lay.c;
        let ffn_seed = Some(Seed {
            skip: ffn_skip,
            scale: Self::w(block, 0, lay.ffn_scale.offset),
        });
        let (y, attn_skip) = if c == 32 {
            let (h, _) = self.gemm(
                block,
                "ffn1",
                x,
                InputMode::Shared,
                Self::mat(block, 0, lay.expand),
                None,
                None,
                Epilogue::SiluE4,
                None,
            );
            let (y, y_raw) = self.gemm(
                block,
                "ffn2",
                h,
                InputMode::Shared,
                Self::mat(block, 0, lay.contract),
                ffn_seed,
                None,
                Epilogue::Dual,
                None,
            );
            // C = 32: the raw f16 y is the attention skip.
            (y, y_raw.expect("dual epilogue"))
        } else {
            let (h, _) = self.gemm(
                block,
                "ffn1",
                x,
                InputMode::Shared,
                Self::mat(block, 0, lay.expand),
                None,
                None,
                Epilogue::SiluE4,
                None,
            );
            let (n, _) = self.gemm(
                block,
                "ffn2",
                h,
                InputMode::Split,
                Self::mat(block, 0, lay.contract),
                None,
                None,
                Epilogue::E4,
                None,
            );
            let w3 = lay.w3.expect("expert blocks have W3");
            let (y, _) = self.gemm(
                block,
                "ffn3",
                n,
                InputMode::Shared,
                Self::mat(block, 0, w3),
                ffn_seed,
                None,
                Epilogue::E4,
                None,
            );
            // C >= 64: the E4 publication of y is the attention skip.
            (y, y)
        };
        let att = self.window_attention(
            block,
            0,
            y,
            lay.qkv,
            lay.temperatures.offset,
            lay.priors.offset,
        );
        let boundary = (block != 70).then(|| format!("block-{block}"));
        let (out, raw) = self.gemm(
            block,
            "proj",
            att,
            InputMode::Shared,
            Self::mat(block, 0, lay.projection),
            Some(Seed {
                skip: attn_skip,
                scale: Self::w(block, 0, lay.attn_scale.offset),
            }),
            None,
            if need_raw {
                Epilogue::Dual
            } else {
                Epilogue::E4
            },
            boundary,
        );
        BlockOut { e4: out, raw }
    }

    /// A split-512 block (23-30, 40-47).
    fn split512_block(&mut self, block: usize, x: TensorId, need_raw: bool) -> BlockOut {
        let l = layout::split512_layout();
        let (b, _) = self.gemm(
            block,
            "win",
            x,
            InputMode::Shared,
            Self::mat(block, 0, l.win),
            None,
            None,
            Epilogue::E4,
            None,
        );
        let (m, _) = self.gemm(
            block,
            "branch1",
            b,
            InputMode::Split,
            Self::mat(block, 0, l.branch_up),
            None,
            None,
            Epilogue::SiluE4,
            None,
        );
        let (o, _) = self.gemm(
            block,
            "branch2",
            m,
            InputMode::Split,
            Self::mat(block, 0, l.branch_down),
            None,
            None,
            Epilogue::E4,
            None,
        );
        let seed = Some(Seed {
            skip: x,
            scale: Self::w(block, 1, l.ffn_scale.offset),
        });
        let (y, _) = self.gemm(
            block,
            "contract",
            o,
            InputMode::Shared,
            Self::mat(block, 1, l.contract),
            seed,
            None,
            Epilogue::E4,
            None,
        );
        let att = self.window_attention(block, 2, y, l.qkv, l.temperatures.offset, l.priors.offset);
        let (out, raw) = self.gemm(
            block,
            "proj",
            att,
            InputMode::Shared,
            Self::mat(block, 3, l.projection),
            Some(Seed {
                skip: y,
                scale: Self::w(block, 3, l.attn_scale.offset),
            }),
            None,
            if need_raw {
                Epilogue::Dual
            } else {
                Epilogue::E4
            },
            Some(format!("block-{block}")),
        );
        BlockOut { e4: out, raw }
    }

    /// A ViT block (31-38) over all L5 tokens.
    fn vit_block(&mut self, block: usize, b: Block, x: TensorId) -> TensorId {
        let l = layout::vit_layout();
        let (c, heads, level) = (b.channels, b.heads(), b.level);
        let (h, _) = self.gemm(
            block,
            "ffn1",
            x,
            InputMode::Shared,
            Self::mat(block, 0, l.w1),
            None,
            None,
            Epilogue::SiluE4,
            None,
        );
        let seed = Some(Seed {
            skip: x,
            scale: Self::w(block, 1, l.ffn_scale.offset),
        });
        let (y, _) = self.gemm(
            block,
            "ffn2",
            h,
            InputMode::Shared,
            Self::mat(block, 1, l.w2),
            seed,
            Some(1024),
            Epilogue::E4,
            None,
        );
        let (qkv, _) = self.gemm(
            block,
            "qkv",
            y,
            InputMode::Shared,
            Self::mat(block, 2, l.qkv),
            None,
            Some(512),
            Epilogue::F16,
            None,
        );
        let q = self.tensor(format!("block-{block}.q"), level, c, DType::E4);
        let k = self.tensor(format!("block-{block}.k"), level, c, DType::E4);
        let v = self.tensor(format!("block-{block}.v"), level, c, DType::E4);
        self.push(
            block,
            format!("block-{block}.normalize"),
            Op::Normalize {
                qkv,
                heads,
                temperatures: Self::w(block, 2, l.temperatures.offset),
                vit: true,
                q,
                k,
                v,
            },
            None,
        );
        let att = self.tensor(format!("block-{block}.attention"), level, c, DType::E4);
        self.push(
            block,
            format!("block-{block}.attention"),
            Op::VitAttention {
                q,
                k,
                v,
                heads,
                out: att,
            },
            None,
        );
        let seed = Some(Seed {
            skip: y,
            scale: Self::w(block, 4, l.attn_scale.offset),
        });
        let (out, _) = self.gemm(
            block,
            "proj",
            att,
            InputMode::Shared,
            Self::mat(block, 4, l.projection),
            seed,
            Some(256),
            Epilogue::E4,
            Some(format!("block-{block}")),
        );
        out
    }

    /// 2x2 pool of a raw f16 tensor into the next level (E4).
    fn pool(
        &mut self,
        block: usize,
        input: TensorId,
        name: String,
        boundary: Option<String>,
    ) -> TensorId {
        let level = next_level(self.tensors[input].level);
        let c = self.tensors[input].channels;
        let out = self.tensor(name.clone(), level, c, DType::E4);
        self.push(block, name, Op::Pool { input, out }, boundary);
        out
    }

    /// Encoder transition a -> a+1 (C -> 2C): pool, E4, GEMM (matrix at the end of block a's record).
    fn encoder_transition(&mut self, a: usize, raw: TensorId) -> TensorId {
        let lay = layout::window_layout(a).expect("transition blocks are window blocks");
        let pooled = self.pool(a, raw, format!("pooled-{a}-{}", a + 1), None);
        let m = lay
            .transition
            .expect("last encoder blocks carry the transition matrix");
        let name = format!("transition-{a}-{}", a + 1);
        let (out, _) = self.gemm(
            a,
            "transition",
            pooled,
            InputMode::Shared,
            Self::mat(a, 0, m),
            None,
            None,
            Epilogue::E4,
            Some(name),
        );
        out
    }

    /// Decoder-first merge of block `b` (48, 56, 62, 66): 2C -> C GEMM at the low level, nearest
    /// 2x upsample, `f16(up + skip * transitionScale)`.
    fn decoder_merge(
        &mut self,
        b: usize,
        low: TensorId,
        skip: TensorId,
    ) -> (TensorId, Option<TensorId>) {
        let lay = layout::window_layout(b).expect("decoder-first blocks are window blocks");
        let c = lay.c;
        let m = lay
            .upsample
            .expect("decoder-first blocks carry the up matrix");
        let (up, _) = self.gemm(
            b,
            "up",
            low,
            InputMode::Shared,
            Self::mat(b, 0, m),
            None,
            None,
            Epilogue::F16,
            None,
        );
        let level = self.tensors[skip].level;
        let out = self.tensor(format!("block-{b}.merge"), level, c, DType::E4);
        let out_raw =
            (c == 32).then(|| self.tensor(format!("block-{b}.merge.raw"), level, c, DType::F16));
        let scale = Self::w(
            b,
            0,
            lay.transition_scale
                .expect("decoder-first blocks carry the transition scale")
                .offset,
        );
        self.push(
            b,
            format!("block-{b}.merge"),
            Op::UpMerge {
                low: up,
                skip,
                scale,
                out,
                out_raw,
            },
            None,
        );
        (out, out_raw)
    }

    /// Transition `block -> block + 1` into the ViT: pool the raw f16 output, then the 512->1024
    /// GEMM stored in the block's record `layer4`.
    fn vit_entry(&mut self, block: usize, raw: TensorId) -> TensorId {
        let pooled = self.pool(block, raw, format!("pooled-{block}-{}", block + 1), None);
        let (v, _) = self.gemm(
            block,
            "vit-entry",
            pooled,
            InputMode::Shared,
            Self::mat(block, 4, layout::vit_entry_layout().matrix),
            None,
            None,
            Epilogue::E4,
            None,
        );
        v
    }

    /// Block 39: ViT exit 1024 -> 512 (split-K 256), nearest 2x up, + the skip of the block before
    /// the ViT.
    fn vit_exit(&mut self, block: usize, b: Block, v: TensorId, skip: TensorId) -> TensorId {
        let l = layout::vit_exit_layout();
        let (up, _) = self.gemm(
            block,
            "vit-exit",
            v,
            InputMode::Shared,
            Self::mat(block, 0, l.matrix),
            None,
            Some(256),
            Epilogue::F16,
            None,
        );
        let name = format!("block-{block}");
        let merged = self.tensor(name.clone(), b.level, b.channels, DType::E4);
        self.push(
            block,
            format!("{name}.merge"),
            Op::UpMerge {
                low: up,
                skip,
                scale: Self::w(block, 0, l.skip_scale.offset),
                out: merged,
                out_raw: None,
            },
            Some(name),
        );
        merged
    }
}

/// Build the schedule of one frame for `geometry`.
pub fn build(geometry: &Geometry) -> Graph {
    let mut g = Builder {
        tensors: Vec::new(),
        nodes: Vec::new(),
        boundaries: Vec::new(),
    };
    let features = g.tensor("features".into(), FIELD, 16, DType::F32);

    // Block 0: adapter, then a C=32 window block on the field.
    let l0 = layout::window_layout(0).expect("block 0");
    let a = g.tensor("block-0.adapter".into(), FIELD, 32, DType::E4);
    let a_raw = g.tensor("block-0.adapter.raw".into(), FIELD, 32, DType::F16);
    let adapter = WeightRef {
        block: 0,
        layer: 0,
        offset: l0.adapter.expect("block 0 has the adapter").offset,
    };
    g.push(
        0,
        "block-0.adapter".into(),
        Op::Adapter {
            input: features,
            weights: adapter,
            out_raw: a_raw,
            out: a,
        },
        None,
    );
    let b0 = g.window_block(0, a, a_raw, true);
    let mut x = g.pool(
        0,
        b0.raw.expect("block 0 raw"),
        "transition-0-1".into(),
        Some("transition-0-1".into()),
    );

    // Blocks 1..=69 in table order: the encoder window stages (each ending in a transition), the
    // split-512 encoder, the ViT, block 39, the split-512 decoder and the decoder window stages
    // (each starting with a merge of the previous stage and an encoder skip).
    let mut skips = Vec::new(); // E4 outputs of the last encoder window blocks (4, 8, 14, 22)
    let mut vit_skip = None; // E4 output of the block before the ViT (30)
    for block in 1..BLOCK_COUNT {
        let b = blocks::block(block).expect("every block below BLOCK_COUNT is in the table");
        match b.kind {
            BlockKind::Window => x = g.window_block(block, x, x, false).e4,
            BlockKind::EncoderLast => {
                let out = g.window_block(block, x, x, true);
                skips.push(out.e4);
                let raw = out.raw.expect("last block of a stage publishes raw");
                x = g.encoder_transition(block, raw);
            }
            // The split-512 block before the ViT also publishes raw f16 for the pool into it.
            BlockKind::Split512 if block == VIT_ENTRY_BLOCK => {
                let out = g.split512_block(block, x, true);
                vit_skip = Some(out.e4);
                x = g.vit_entry(block, out.raw.expect("the ViT entry block publishes raw"));
            }
            BlockKind::Split512 => x = g.split512_block(block, x, false).e4,
            BlockKind::Vit => x = g.vit_block(block, b, x),
            BlockKind::VitExit => {
                let skip = vit_skip.expect("the ViT entry block runs before the ViT exit");
                x = g.vit_exit(block, b, x, skip);
            }
            BlockKind::DecoderFirst => {
                let skip = skips.pop().expect("one encoder skip per decoder stage");
                let (m, m_raw) = g.decoder_merge(block, x, skip);
                // Block 66 (C = 32) takes the raw f16 merge as its FFN skip; 48/56/62 the E4 merge.
                let ffn_skip = m_raw.unwrap_or(m);
                x = g.window_block(block, m, ffn_skip, false).e4;
            }
            // Blocks 0 and 70 are built around the loop (adapter, post blend, head).
            BlockKind::Pre | BlockKind::Post => {}
        }
    }

    // Block 70: post blend, a C = 32 window block on the field, then the head.
    let l70 = layout::window_layout(70).expect("block 70");
    let m = g.tensor("block-70.blend".into(), FIELD, 32, DType::E4);
    let m_raw = g.tensor("block-70.blend.raw".into(), FIELD, 32, DType::F16);
    g.push(
        70,
        "block-70.blend".into(),
        Op::PostBlend {
            low: x,
            skip: b0.e4,
            input_scale: Builder::w(70, 0, l70.input_scale.expect("block 70 input scale").offset),
            adapter_scale: Builder::w(
                70,
                0,
                l70.adapter_scale.expect("block 70 adapter scale").offset,
            ),
            out_raw: m_raw,
            out: m,
        },
        None,
    );
    let b70 = g.window_block(70, m, m_raw, true);
    let head = g.tensor("head".into(), FIELD, 4, DType::F32);
    let post = Builder::w(
        70,
        0,
        l70.post_weights.expect("block 70 head weights").offset,
    );
    g.push(
        70,
        "head".into(),
        Op::Head {
            input: b70.raw.expect("block 70 raw"),
            weights: post,
            out: head,
        },
        None,
    );

    Graph {
        geometry: *geometry,
        tensors: g.tensors,
        nodes: g.nodes,
        features,
        head,
        boundaries: g.boundaries,
    }
}
