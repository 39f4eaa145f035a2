//! Construction of the schedule (spec nr-network §1.3-§1.7, §4.1).

use super::*;
use crate::model::layout::{self, WindowLayout};

use crate::nr::geometry::{self, Level};

const FIELD: Level = Level::Field;
const L4: Level = Level::L(4);
const L5: Level = Level::L(5);

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

    fn mat(block: usize, layer: usize, offset: usize, k: usize, n: usize, groups: usize) -> MatRef {
        MatRef {
            at: WeightRef {
                block,
                layer,
                offset,
            },
            k,
            n,
            groups,
        }
    }

    fn w(block: usize, layer: usize, offset: usize) -> WeightRef {
        WeightRef {
            block,
            layer,
            offset,
        }
    }

    /// QKV -> normalise -> window attention; returns the E4 attention output.
    #[allow(clippy::too_many_arguments)]
    fn window_attention(
        &mut self,
        block: usize,
        layer: usize,
        y: TensorId,
        c: usize,
        qkv: usize,
        temps: usize,
        priors: usize,
    ) -> TensorId {
        let heads = c / 32;
        let level = self.tensors[y].level;
        let (qkv_t, _) = self.gemm(
            block,
            "qkv",
            y,
            InputMode::Shared,
            Self::mat(block, layer, qkv, c, 3 * c, 1),
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
                Self::mat(block, 0, lay.expand.offset, 32, 128, 1),
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
                Self::mat(block, 0, lay.contract.offset, 128, 32, 1),
                ffn_seed,
                None,
                Epilogue::Dual,
                None,
            );
            // C = 32: the raw f16 y is the attention skip.
            (y, y_raw.expect("dual epilogue"))
        } else {
            let e = c / 32;
            let (h, _) = self.gemm(
                block,
                "ffn1",
                x,
                InputMode::Shared,
                Self::mat(block, 0, lay.expand.offset, c, 128, e),
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
                Self::mat(block, 0, lay.contract.offset, 128, 32, e),
                None,
                None,
                Epilogue::E4,
                None,
            );
            let w3 = lay.w3.expect("expert blocks have W3").offset;
            let (y, _) = self.gemm(
                block,
                "ffn3",
                n,
                InputMode::Shared,
                Self::mat(block, 0, w3, c, c, 1),
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
            c,
            lay.qkv.offset,
            lay.temperatures.offset,
            lay.priors.offset,
        );
        let boundary = (block != 70).then(|| format!("block-{block}"));
        let (out, raw) = self.gemm(
            block,
            "proj",
            att,
            InputMode::Shared,
            Self::mat(block, 0, lay.projection.offset, c, c, 1),
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
            Self::mat(block, 0, l.win.offset, 512, 512, 1),
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
            Self::mat(block, 0, l.branch_up.offset, 64, 256, 8),
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
            Self::mat(block, 0, l.branch_down.offset, 256, 64, 8),
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
            Self::mat(block, 1, l.contract.offset, 512, 512, 1),
            seed,
            None,
            Epilogue::E4,
            None,
        );
        let heads = 16;
        let level = self.tensors[y].level;
        let (qkv, _) = self.gemm(
            block,
            "qkv",
            y,
            InputMode::Shared,
            Self::mat(block, 2, l.qkv.offset, 512, 1536, 1),
            None,
            None,
            Epilogue::F16,
            None,
        );
        let q = self.tensor(format!("block-{block}.q"), level, 512, DType::E4);
        let k = self.tensor(format!("block-{block}.k"), level, 512, DType::E4);
        let v = self.tensor(format!("block-{block}.v"), level, 512, DType::E4);
        self.push(
            block,
            format!("block-{block}.normalize"),
            Op::Normalize {
                qkv,
                heads,
                temperatures: Self::w(block, 2, l.temperatures.offset),
                vit: false,
                q,
                k,
                v,
            },
            None,
        );
        let phase = geometry::block_phase(block).map_or(0, |p| p.0 as usize);
        let att = self.tensor(format!("block-{block}.attention"), level, 512, DType::E4);
        self.push(
            block,
            format!("block-{block}.attention"),
            Op::WindowAttention {
                q,
                k,
                v,
                heads,
                priors: Self::w(block, 2, l.priors.offset),
                phase,
                out: att,
            },
            None,
        );
        let (out, raw) = self.gemm(
            block,
            "proj",
            att,
            InputMode::Shared,
            Self::mat(block, 3, l.projection.offset, 512, 512, 1),
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
    fn vit_block(&mut self, block: usize, x: TensorId) -> TensorId {
        let l = layout::vit_layout();
        let (h, _) = self.gemm(
            block,
            "ffn1",
            x,
            InputMode::Shared,
            Self::mat(block, 0, l.w1.offset, 1024, 4096, 1),
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
            Self::mat(block, 1, l.w2.offset, 4096, 1024, 1),
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
            Self::mat(block, 2, l.qkv.offset, 1024, 3072, 1),
            None,
            Some(512),
            Epilogue::F16,
            None,
        );
        let q = self.tensor(format!("block-{block}.q"), L5, 1024, DType::E4);
        let k = self.tensor(format!("block-{block}.k"), L5, 1024, DType::E4);
        let v = self.tensor(format!("block-{block}.v"), L5, 1024, DType::E4);
        self.push(
            block,
            format!("block-{block}.normalize"),
            Op::Normalize {
                qkv,
                heads: 32,
                temperatures: Self::w(block, 2, l.temperatures.offset),
                vit: true,
                q,
                k,
                v,
            },
            None,
        );
        let att = self.tensor(format!("block-{block}.attention"), L5, 1024, DType::E4);
        self.push(
            block,
            format!("block-{block}.attention"),
            Op::VitAttention {
                q,
                k,
                v,
                heads: 32,
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
            Self::mat(block, 4, l.projection.offset, 1024, 1024, 1),
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
        let c = lay.c;
        let pooled = self.pool(a, raw, format!("pooled-{a}-{}", a + 1), None);
        let at = lay
            .transition
            .expect("last encoder blocks carry the transition matrix")
            .offset;
        let name = format!("transition-{a}-{}", a + 1);
        let (out, _) = self.gemm(
            a,
            "transition",
            pooled,
            InputMode::Shared,
            Self::mat(a, 0, at, c, 2 * c, 1),
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
        let up_at = lay
            .upsample
            .expect("decoder-first blocks carry the up matrix")
            .offset;
        let (up, _) = self.gemm(
            b,
            "up",
            low,
            InputMode::Shared,
            Self::mat(b, 0, up_at, 2 * c, c, 1),
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

    // Encoder: C = 32 (1-4), 64 (5-8), 128 (9-14), 256 (15-22), each ending in a transition.
    let mut skips = Vec::new(); // E4 outputs of blocks 4, 8, 14, 22
    for (first, last) in [(1, 4), (5, 8), (9, 14), (15, 22)] {
        for b in first..=last {
            let out = g.window_block(b, x, x, b == last);
            x = out.e4;
            if b == last {
                skips.push(out.e4);
                x = g.encoder_transition(b, out.raw.expect("last block of a stage publishes raw"));
            }
        }
    }
    debug_assert_eq!(g.tensors[x].level, L4);

    // Split-512 encoder (23-30); block 30 also publishes raw f16 for the pool into the ViT.
    let mut b30 = None;
    for b in 23..=30 {
        let out = g.split512_block(b, x, b == 30);
        x = out.e4;
        if b == 30 {
            b30 = Some(out);
        }
    }
    let b30 = b30.expect("block 30 ran");
    let pooled = g.pool(
        30,
        b30.raw.expect("block 30 raw"),
        "pooled-30-31".into(),
        None,
    );
    let lay30 = layout::vit_entry_layout().matrix.offset;
    let (mut v, _) = g.gemm(
        30,
        "vit-entry",
        pooled,
        InputMode::Shared,
        Builder::mat(30, 4, lay30, 512, 1024, 1),
        None,
        None,
        Epilogue::E4,
        None,
    );

    // ViT (31-38).
    for b in 31..=38 {
        v = g.vit_block(b, v);
    }

    // Block 39: ViT exit 1024 -> 512 (split-K 256), nearest 2x up, + block 30 skip.
    let l39 = layout::vit_exit_layout();
    let (up, _) = g.gemm(
        39,
        "vit-exit",
        v,
        InputMode::Shared,
        Builder::mat(39, 0, l39.matrix.offset, 1024, 512, 1),
        None,
        Some(256),
        Epilogue::F16,
        None,
    );
    let merged = g.tensor("block-39".into(), L4, 512, DType::E4);
    g.push(
        39,
        "block-39.merge".into(),
        Op::UpMerge {
            low: up,
            skip: b30.e4,
            scale: Builder::w(39, 0, l39.skip_scale.offset),
            out: merged,
            out_raw: None,
        },
        Some("block-39".into()),
    );
    x = merged;

    // Split-512 decoder (40-47).
    for b in 40..=47 {
        x = g.split512_block(b, x, false).e4;
    }

    // Decoder window stages: each starts with a merge of the previous stage and an encoder skip.
    for (first, last) in [(48, 55), (56, 61), (62, 65), (66, 69)] {
        let skip = skips.pop().expect("one encoder skip per decoder stage");
        let (m, m_raw) = g.decoder_merge(first, x, skip);
        // Block 66 (C = 32) takes the raw f16 merge as its FFN skip; 48/56/62 the E4 merge.
        let ffn_skip = m_raw.unwrap_or(m);
        x = g.window_block(first, m, ffn_skip, false).e4;
        for b in first + 1..=last {
            x = g.window_block(b, x, x, false).e4;
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
