//! Building the RR schedule (the wiring of spec rr-network §1.1, §3, §4, with openngx's own
//! choices where it is silent; `docs/rr.md`, "The graph").

use crate::numerics::rr::rms;
use crate::rr::geometry::Geometry;
use crate::rr::layers::{LayerId, EMBED_FEATURES, TAIL_OUTPUTS};
use crate::rr::preset::Preset;

use super::{
    guide, DType, Epilogue, Graph, Grid, Mat, MatRef, Node, Op, Seed, Tensor, TensorId, VecRef,
    Vector,
};

/// Channels of an RGBA surface (the fourth is 0).
const RGBA: usize = 4;
/// dec0's +48: E4M3 codes per pixel.
pub const DEC0_CODES: usize = 8;
/// dec0's +144: f32 values per pixel.
pub const DEC0_KERNEL: usize = 4;

struct Builder {
    tensors: Vec<Tensor>,
    nodes: Vec<Node>,
    published: Vec<(String, TensorId)>,
}

impl Builder {
    fn tensor(&mut self, name: &str, grid: Grid, channels: usize, dtype: DType) -> TensorId {
        self.tensors.push(Tensor {
            name: name.to_string(),
            grid,
            channels,
            dtype,
        });
        self.tensors.len() - 1
    }

    fn node(&mut self, layer: Option<LayerId>, label: &str, op: Op) {
        self.nodes.push(Node {
            op,
            layer,
            label: label.to_string(),
        });
    }

    fn publish(&mut self, name: &str, t: TensorId) {
        self.published.push((name.to_string(), t));
    }

    fn mat(layer: LayerId, mat: Mat, n: usize, k: usize) -> MatRef {
        MatRef { layer, mat, n, k }
    }

    fn vec(layer: LayerId, vec: Vector, len: usize) -> VecRef {
        VecRef { layer, vec, len }
    }

    /// A GEMM node and its output tensor.
    #[allow(clippy::too_many_arguments)]
    fn gemm(
        &mut self,
        id: LayerId,
        what: &str,
        input: TensorId,
        mat: MatRef,
        seed: Seed,
        epilogue: Epilogue,
        grid: Grid,
    ) -> TensorId {
        let dtype = match epilogue {
            Epilogue::F16 => DType::F16,
            _ => DType::E4,
        };
        let label = format!("{id}.{what}");
        let out = self.tensor(&label, grid, mat.n, dtype);
        self.node(
            Some(id),
            &label,
            Op::Gemm {
                input,
                mat,
                seed,
                epilogue,
                out,
            },
        );
        out
    }

    /// The Swin block of §3 on `x0` (F16, or the E4 input tokens); returns the block output:
    /// E4 `q8(x2)`, or for dec0 the f16 x2 its outputs are computed from.
    fn block(&mut self, id: LayerId, x0: TensorId) -> TensorId {
        let l = id.layer();
        let (c, heads, grid) = (l.channels, l.heads, Grid::Level(l.level));
        let hw = l.attention_width();
        let eps1 = if id == LayerId::Enc0 {
            rms::EPS_ENC0_ATTENTION
        } else {
            rms::EPS
        };
        let h0 = self.tensor(&format!("{id}.h0"), grid, c, DType::E4);
        self.node(
            Some(id),
            &format!("{id}.norm1"),
            Op::Norm {
                input: x0,
                gain: Self::vec(id, Vector::G1, c),
                eps: eps1,
                out: h0,
            },
        );
        let u = self.gemm(
            id,
            "qk",
            h0,
            Self::mat(id, Mat::Qk, hw, c),
            Seed::Zero,
            Epilogue::Q8,
            grid,
        );
        let v = self.gemm(
            id,
            "v",
            h0,
            Self::mat(id, Mat::V, hw, c),
            Seed::Zero,
            Epilogue::Q8,
            grid,
        );
        let att = self.tensor(&format!("{id}.attention"), grid, hw, DType::E4);
        self.node(
            Some(id),
            &format!("{id}.attention"),
            Op::Attention {
                u,
                v,
                layer: id,
                heads,
                level: l.level,
                side: l.side,
                out: att,
            },
        );
        let x1 = self.gemm(
            id,
            "wo",
            att,
            Self::mat(id, Mat::Wo, c, hw),
            Seed::Residual {
                x: x0,
                bias: Self::vec(id, Vector::Bo, c),
            },
            Epilogue::F16,
            grid,
        );
        let n = self.tensor(&format!("{id}.h1"), grid, c, DType::E4);
        self.node(
            Some(id),
            &format!("{id}.norm2"),
            Op::Norm {
                input: x1,
                gain: Self::vec(id, Vector::G2, c),
                eps: rms::EPS,
                out: n,
            },
        );
        let hidden = l.mlp_hidden();
        let hid = self.gemm(
            id,
            "w1",
            n,
            Self::mat(id, Mat::W1, hidden, c),
            Seed::Bias(Self::vec(id, Vector::B1, hidden)),
            Epilogue::Q8Act,
            grid,
        );
        let epilogue = if id == LayerId::Dec0 {
            Epilogue::F16
        } else {
            Epilogue::Q8
        };
        let x2 = self.gemm(
            id,
            "w2",
            hid,
            Self::mat(id, Mat::W2, c, hidden),
            Seed::Residual {
                x: x1,
                bias: Self::vec(id, Vector::B2, c),
            },
            epilogue,
            grid,
        );
        if id != LayerId::Dec0 {
            self.publish(id.name(), x2);
        }
        x2
    }

    /// A layer's tail head: `[L][16]` f16 logits.
    fn tail_head(&mut self, id: LayerId, x2: TensorId) -> TensorId {
        let l = id.layer();
        self.gemm(
            id,
            "head",
            x2,
            Self::mat(id, Mat::Tail, TAIL_OUTPUTS, l.channels),
            Seed::Bias(Self::vec(id, Vector::TailBias, TAIL_OUTPUTS)),
            Epilogue::F16,
            Grid::Level(l.level),
        )
    }

    fn surface(&mut self, name: &str, level: usize) -> TensorId {
        let t = self.tensor(name, Grid::Level(level), RGBA, DType::F16);
        self.publish(name, t);
        t
    }
}

/// The schedule of one frame at `geometry` for `preset`.
pub fn build(geometry: &Geometry, preset: Preset) -> Graph {
    let mut b = Builder {
        tensors: Vec::new(),
        nodes: Vec::new(),
        published: Vec::new(),
    };
    // Inputs and the input stage.
    let color = b.tensor("color", Grid::Render, RGBA, DType::F32);
    let guides = b.tensor("guides", Grid::Render, guide::LANES, DType::F32);
    let history = b.tensor("history", Grid::Output, RGBA, DType::F16);
    let exposure = b.tensor("exposure", Grid::One, 2, DType::F16);
    b.node(
        None,
        "exposure",
        Op::Exposure {
            color,
            out: exposure,
        },
    );
    b.publish("exposure", exposure);
    let hist = b.tensor("history.render", Grid::Render, RGBA, DType::F16);
    b.node(
        None,
        "reproject",
        Op::Reproject {
            history,
            guides,
            exposure,
            out: hist,
        },
    );
    b.publish("history.render", hist);
    let features = b.tensor("features", Grid::Level(0), EMBED_FEATURES, DType::E4);
    let colour = b.tensor("colour", Grid::Level(0), RGBA, DType::F16);
    b.node(
        None,
        "features",
        Op::Features {
            color,
            guides,
            history: hist,
            exposure,
            depth_of_field: preset.reads_depth_of_field(),
            features,
            colour,
        },
    );
    b.publish("features", features);
    b.publish("colour", colour);

    // Encoders.
    let mut tokens = features;
    let mut image = colour;
    let mut skips = [0usize; 6];
    let mut low_surfaces = [0usize; 6];
    let mut detail_surfaces = [0usize; 6];
    let mut enc5 = (0, 0);
    for id in [
        LayerId::Enc0,
        LayerId::Enc1,
        LayerId::Enc2,
        LayerId::Enc3,
        LayerId::Enc4,
        LayerId::Enc5,
    ] {
        let l = id.layer();
        let grid = Grid::Level(l.level);
        let x0 = if l.embedding {
            let e1 = b.gemm(
                id,
                "embed1",
                tokens,
                Builder::mat(id, Mat::EmbedP1, EMBED_FEATURES, EMBED_FEATURES),
                Seed::Bias(Builder::vec(id, Vector::EmbedB1, EMBED_FEATURES)),
                Epilogue::Q8Relu,
                grid,
            );
            b.gemm(
                id,
                "embed2",
                e1,
                Builder::mat(id, Mat::EmbedP2, l.channels, EMBED_FEATURES),
                Seed::Bias(Builder::vec(id, Vector::EmbedB2, l.channels)),
                Epilogue::F16,
                grid,
            )
        } else {
            tokens
        };
        let x2 = b.block(id, x0);
        let logits = b.tail_head(id, x2);
        skips[l.level] = x2;
        let merged = l.merge_out.map(|cn| {
            let out = b.tensor(
                &format!("{id}.merge"),
                Grid::Level(l.level + 1),
                cn,
                DType::E4,
            );
            b.node(
                Some(id),
                &format!("{id}.merge"),
                Op::Merge {
                    input: x2,
                    mat: Builder::mat(id, Mat::Merge, cn, 4 * l.channels),
                    bias: Builder::vec(id, Vector::MergeBias, cn),
                    out,
                },
            );
            out
        });
        let out112 = b.surface(&format!("{id}.112"), l.level);
        let (out120, out128) = if merged.is_some() {
            (
                Some(b.surface(&format!("{id}.120"), l.level)),
                Some(b.surface(&format!("{id}.128"), l.level + 1)),
            )
        } else {
            (None, None)
        };
        b.node(
            Some(id),
            &format!("{id}.tail"),
            Op::EncoderTail {
                logits,
                image,
                out112,
                out120,
                out128,
            },
        );
        low_surfaces[l.level] = out112;
        if let (Some(t), Some(d), Some(i)) = (merged, out120, out128) {
            detail_surfaces[l.level] = d;
            tokens = t;
            image = i;
        } else {
            enc5 = (x2, out112);
        }
    }

    // Decoders.
    let (mut low, mut coarse) = enc5;
    let mut dec0 = (0, 0, 0);
    for id in [
        LayerId::Dec4,
        LayerId::Dec3,
        LayerId::Dec2,
        LayerId::Dec1,
        LayerId::Dec0,
    ] {
        let l = id.layer();
        let cin = l.expand_in.unwrap_or(l.channels);
        let x0 = b.tensor(
            &format!("{id}.x0"),
            Grid::Level(l.level),
            l.channels,
            DType::F16,
        );
        b.node(
            Some(id),
            &format!("{id}.expand"),
            Op::Expand {
                low,
                mat: Builder::mat(id, Mat::Expand, 4 * l.channels, cin),
                bias: Builder::vec(id, Vector::ExpandBias, 4 * l.channels),
                skip: skips[l.level],
                out: x0,
            },
        );
        let x2 = b.block(id, x0);
        let logits = if l.tail { b.tail_head(id, x2) } else { x2 };
        let out = b.surface(&format!("{id}.112"), l.level);
        b.node(
            Some(id),
            &format!("{id}.tail"),
            Op::DecoderTail {
                logits,
                coarse,
                low: low_surfaces[l.level],
                detail: detail_surfaces[l.level],
                out,
            },
        );
        if !l.tail {
            let out48 = b.tensor("dec0", Grid::Level(0), DEC0_CODES, DType::E4);
            let out144 = b.tensor("dec0.144", Grid::Level(0), DEC0_KERNEL, DType::F32);
            b.node(
                Some(id),
                "dec0.outputs",
                Op::Dec0Outputs { x2, out48, out144 },
            );
            b.publish("dec0", out48);
            b.publish("dec0.144", out144);
            dec0 = (out, out48, out144);
        }
        low = x2;
        coarse = out;
    }

    // The output stage.
    let output = b.tensor("output", Grid::Output, RGBA, DType::F16);
    let alpha = b.tensor("alpha", Grid::Output, 1, DType::F32);
    b.node(
        None,
        "output",
        Op::Output {
            image: dec0.0,
            codes: dec0.1,
            kernel: dec0.2,
            history,
            guides,
            color,
            exposure,
            out: output,
            alpha,
        },
    );
    b.publish("output", output);
    b.publish("alpha", alpha);
    Graph {
        geometry: *geometry,
        preset,
        tensors: b.tensors,
        nodes: b.nodes,
        color,
        guides,
        history,
        output,
        alpha,
        published: b.published,
    }
}
