//! Parity verdicts (spec nr-network §4.2): how a produced tensor compares with a captured
//! reference, and the whole check of a fixture directory against one run of the network.
//!
//! A comparison ends in one of four verdicts: **exact** (every byte equal — the only passing
//! verdict), **sign of zero** (the only differences are +0 against -0; counted as a failure, as the
//! newer upstream README does), **within one code** (8-bit captures only: every difference is one
//! code; reported apart but still a failure) and **mismatch** (count, share, max |d|, RMSE, the
//! first differing position as x/y/c, the got/expected codes there, and a histogram of the signed
//! code difference clamped to ±9).
//!
//! A "code" is the element's encoding on an ordered integer scale, so that a delta of 1 means "the
//! next representable value": E4M3 bytes and halves use sign-magnitude order (±0 are both 0),
//! f32 values that are all halves (the head, composed outputs) are measured in half steps, other
//! f32 values in f32 steps, and 8-bit captures by the byte. This module owns the verdict logic and
//! the fixture comparison and the dump files of a run; it runs nothing (the `parity` tool and the
//! C harness feed it).

use std::fmt;
use std::path::Path;

use crate::fixture::{bytes_to_f32, f32_to_bytes, Fixture, FixtureError};
use openngx::nr::frame::{FrameConstants, FrameInputs, FrameParams, FrameSetup, LANES};
use openngx::nr::geometry::Geometry;
use openngx::numerics::{e4m3, f16};

/// Histogram bins: signed code deltas -9..=9 (the ends collect everything beyond).
pub const HISTOGRAM_BINS: usize = 19;
/// Largest |delta| with its own bin.
pub const HISTOGRAM_CLAMP: i64 = 9;

/// How the elements of a tensor are encoded (decides "code" and "sign of zero").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoding {
    /// E4M3 bytes (boundaries).
    E4m3,
    /// f32 values that are all exact halves, measured in half steps.
    F16InF32,
    /// General f32 values, measured in f32 steps.
    F32,
    /// 8-bit UNORM captures.
    U8,
}

impl Encoding {
    fn unit(self) -> &'static str {
        match self {
            Encoding::E4m3 => "E4M3 codes",
            Encoding::F16InF32 => "half steps",
            Encoding::F32 => "f32 steps",
            Encoding::U8 => "8-bit codes",
        }
    }
}

/// Element layout `[height][width][channels]` (row-major over x, channels innermost).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    pub width: usize,
    pub height: usize,
    pub channels: usize,
}

impl Shape {
    pub fn len(&self) -> usize {
        self.width * self.height * self.channels
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Position of element `i`.
    pub fn position(&self, i: usize) -> Position {
        let c = i % self.channels.max(1);
        let p = i / self.channels.max(1);
        Position {
            x: p % self.width.max(1),
            y: p / self.width.max(1),
            c,
        }
    }
}

/// An element position.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Position {
    pub x: usize,
    pub y: usize,
    pub c: usize,
}

/// One element's value as it is shown in a report.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value {
    /// A byte code (E4M3 or 8-bit).
    Byte(u8),
    /// An f32 value.
    F32(f32),
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Value::Byte(b) => write!(f, "0x{b:02x}"),
            Value::F32(v) => write!(f, "{v:e} (0x{:08x})", v.to_bits()),
        }
    }
}

/// Statistics of a failing comparison.
#[derive(Clone, Debug, PartialEq)]
pub struct Mismatch {
    /// Elements whose bytes differ (sign-of-zero pairs included).
    pub count: usize,
    /// Of those, pairs that differ only in the sign of zero.
    pub zero_sign: usize,
    /// `count` as a percentage of all elements.
    pub percent: f64,
    /// Largest |got - expected| in value (NaN pairs are left out and counted in `non_finite`).
    pub max_abs: f64,
    /// Root mean square of got - expected over all elements (same exclusion).
    pub rmse: f64,
    /// Differing pairs where either value is NaN (or infinite) so that no distance exists.
    pub non_finite: usize,
    /// First differing element that is not a sign-of-zero pair (or the first sign-of-zero pair
    /// when there is nothing else).
    pub first: Position,
    pub got: Value,
    pub expected: Value,
    /// Signed code deltas (got - expected) of the differing elements whose codes differ, clamped
    /// to ±9; bin `d + 9`.
    pub histogram: [u64; HISTOGRAM_BINS],
}

impl Mismatch {
    /// The count in the bin of delta `d` (clamped).
    pub fn bin(&self, d: i64) -> u64 {
        self.histogram[(d.clamp(-HISTOGRAM_CLAMP, HISTOGRAM_CLAMP) + HISTOGRAM_CLAMP) as usize]
    }
}

/// The verdict of one comparison.
#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    /// Every byte equal.
    Exact,
    /// Equal up to the sign of zero (a failure).
    SignOfZero(Mismatch),
    /// 8-bit capture within one code everywhere (reported apart; a failure).
    WithinOneCode(Mismatch),
    /// Anything else.
    Mismatch(Mismatch),
}

impl Verdict {
    pub fn is_exact(&self) -> bool {
        matches!(self, Verdict::Exact)
    }
    /// The statistics of a failing verdict.
    pub fn mismatch(&self) -> Option<&Mismatch> {
        match self {
            Verdict::Exact => None,
            Verdict::SignOfZero(m) | Verdict::WithinOneCode(m) | Verdict::Mismatch(m) => Some(m),
        }
    }
}

/// A compared tensor.
#[derive(Clone, Debug, PartialEq)]
pub struct Comparison {
    pub name: String,
    pub shape: Shape,
    pub encoding: Encoding,
    pub verdict: Verdict,
}

/// Why two tensors could not be compared at all.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CompareError {
    #[error("{name}: produced {got} elements, the reference has {expected} (shape {width}x{height}x{channels})")]
    Length {
        name: String,
        got: usize,
        expected: usize,
        width: usize,
        height: usize,
        channels: usize,
    },
}

fn check_len(name: &str, shape: Shape, got: usize, expected: usize) -> Result<(), CompareError> {
    if got != shape.len() || expected != shape.len() {
        return Err(CompareError::Length {
            name: name.to_string(),
            got,
            expected,
            width: shape.width,
            height: shape.height,
            channels: shape.channels,
        });
    }
    Ok(())
}

/// Sign-magnitude order of a byte/half code with `sign_bit`: ±0 -> 0.
#[inline]
fn ordered(code: u32, sign_bit: u32) -> i64 {
    let mag = (code & (sign_bit - 1)) as i64;
    if code & sign_bit != 0 {
        -mag
    } else {
        mag
    }
}

/// One differing element as the accumulator sees it.
struct Diff {
    index: usize,
    /// Only the sign of zero differs.
    zero_sign: bool,
    /// got - expected in codes.
    delta: i64,
    /// got - expected in value; `None` when not finite.
    value: Option<f64>,
    got: Value,
    expected: Value,
}

/// Accumulates differences in element order and forms the verdict.
struct Acc {
    total: usize,
    count: usize,
    zero_sign: usize,
    non_finite: usize,
    max_abs: f64,
    sum_sq: f64,
    first_real: Option<(usize, Value, Value)>,
    first_zero: Option<(usize, Value, Value)>,
    histogram: [u64; HISTOGRAM_BINS],
    max_code: i64,
}

impl Acc {
    fn new(total: usize) -> Self {
        Acc {
            total,
            count: 0,
            zero_sign: 0,
            non_finite: 0,
            max_abs: 0.0,
            sum_sq: 0.0,
            first_real: None,
            first_zero: None,
            histogram: [0; HISTOGRAM_BINS],
            max_code: 0,
        }
    }

    fn add(&mut self, d: Diff) {
        self.count += 1;
        if d.zero_sign {
            self.zero_sign += 1;
            self.first_zero.get_or_insert((d.index, d.got, d.expected));
            return;
        }
        self.first_real.get_or_insert((d.index, d.got, d.expected));
        match d.value {
            Some(v) if v.is_finite() => {
                self.max_abs = self.max_abs.max(v.abs());
                self.sum_sq += v * v;
            }
            _ => self.non_finite += 1,
        }
        if d.delta != 0 {
            let bin = d.delta.clamp(-HISTOGRAM_CLAMP, HISTOGRAM_CLAMP) + HISTOGRAM_CLAMP;
            self.histogram[bin as usize] += 1;
        }
        self.max_code = self.max_code.max(d.delta.abs());
    }

    fn finish(self, name: &str, shape: Shape, encoding: Encoding) -> Comparison {
        let verdict = match self.first_real.or(self.first_zero) {
            None => Verdict::Exact,
            Some((index, got, expected)) => {
                let m = Mismatch {
                    count: self.count,
                    zero_sign: self.zero_sign,
                    percent: 100.0 * self.count as f64 / self.total.max(1) as f64,
                    max_abs: self.max_abs,
                    rmse: (self.sum_sq / self.total.max(1) as f64).sqrt(),
                    non_finite: self.non_finite,
                    first: shape.position(index),
                    got,
                    expected,
                    histogram: self.histogram,
                };
                if self.first_real.is_none() {
                    Verdict::SignOfZero(m)
                } else if encoding == Encoding::U8 && self.max_code <= 1 {
                    Verdict::WithinOneCode(m)
                } else {
                    Verdict::Mismatch(m)
                }
            }
        };
        Comparison {
            name: name.to_string(),
            shape,
            encoding,
            verdict,
        }
    }
}

/// Compare E4M3 tensors (boundaries).
pub fn compare_e4m3(
    name: &str,
    shape: Shape,
    got: &[u8],
    expected: &[u8],
) -> Result<Comparison, CompareError> {
    check_len(name, shape, got.len(), expected.len())?;
    let mut acc = Acc::new(shape.len());
    for (i, (&g, &e)) in got.iter().zip(expected).enumerate() {
        if g == e {
            continue;
        }
        let (og, oe) = (ordered(g as u32, 0x80), ordered(e as u32, 0x80));
        let nan = |c: u8| c & 0x7F == 0x7F;
        acc.add(Diff {
            index: i,
            zero_sign: g & 0x7F == 0 && e & 0x7F == 0,
            delta: og - oe,
            value: (!nan(g) && !nan(e)).then(|| e4m3::to_f32(g) as f64 - e4m3::to_f32(e) as f64),
            got: Value::Byte(g),
            expected: Value::Byte(e),
        });
    }
    Ok(acc.finish(name, shape, Encoding::E4m3))
}

/// True when every value is exactly a half (NaN and ±inf included).
fn all_halves(v: &[f32]) -> bool {
    v.iter()
        .all(|&x| x.is_nan() || f16::to_f32(f16::from_f32_rne(x)).to_bits() == x.to_bits())
}

/// Order of an f32 bit pattern (sign-magnitude, ±0 -> 0).
#[inline]
fn ordered_f32(x: f32) -> i64 {
    ordered(x.to_bits(), 0x8000_0000)
}

/// Compare f32 tensors (head, composed output). When both sides hold only halves, code deltas are
/// half steps.
pub fn compare_f32(
    name: &str,
    shape: Shape,
    got: &[f32],
    expected: &[f32],
) -> Result<Comparison, CompareError> {
    check_len(name, shape, got.len(), expected.len())?;
    let encoding = if all_halves(got) && all_halves(expected) {
        Encoding::F16InF32
    } else {
        Encoding::F32
    };
    let code = |x: f32| match encoding {
        Encoding::F16InF32 => ordered(f16::from_f32_rne(x) as u32, 0x8000),
        _ => ordered_f32(x),
    };
    let mut acc = Acc::new(shape.len());
    for (i, (&g, &e)) in got.iter().zip(expected).enumerate() {
        if g.to_bits() == e.to_bits() {
            continue;
        }
        acc.add(Diff {
            index: i,
            zero_sign: g == 0.0 && e == 0.0,
            delta: code(g) - code(e),
            value: (g.is_finite() && e.is_finite()).then_some(g as f64 - e as f64),
            got: Value::F32(g),
            expected: Value::F32(e),
        });
    }
    Ok(acc.finish(name, shape, encoding))
}

/// Compare 8-bit captures (composed output stored as UNORM bytes).
pub fn compare_u8(
    name: &str,
    shape: Shape,
    got: &[u8],
    expected: &[u8],
) -> Result<Comparison, CompareError> {
    check_len(name, shape, got.len(), expected.len())?;
    let mut acc = Acc::new(shape.len());
    for (i, (&g, &e)) in got.iter().zip(expected).enumerate() {
        if g == e {
            continue;
        }
        acc.add(Diff {
            index: i,
            zero_sign: false,
            delta: g as i64 - e as i64,
            value: Some((g as f64 - e as f64) / 255.0),
            got: Value::Byte(g),
            expected: Value::Byte(e),
        });
    }
    Ok(acc.finish(name, shape, Encoding::U8))
}

/// A half as an 8-bit UNORM code: clamp to [0, 1], scale by 255, round to nearest (the Vulkan
/// float -> UNORM conversion; NaN -> 0).
pub fn unorm8(h: f16::F16) -> u8 {
    let v = f16::to_f32(h);
    if v.is_nan() {
        return 0;
    }
    (v.clamp(0.0, 1.0) * 255.0 + 0.5).floor() as u8
}

fn histogram_text(m: &Mismatch) -> String {
    let mut parts = Vec::new();
    for (bin, &n) in m.histogram.iter().enumerate() {
        if n == 0 {
            continue;
        }
        let d = bin as i64 - HISTOGRAM_CLAMP;
        let label = match d {
            d if d == -HISTOGRAM_CLAMP => format!("<={d}"),
            d if d == HISTOGRAM_CLAMP => format!(">=+{d}"),
            d if d > 0 => format!("+{d}"),
            d => format!("{d}"),
        };
        parts.push(format!("{label}:{n}"));
    }
    if parts.is_empty() {
        "none".into()
    } else {
        parts.join(" ")
    }
}

impl fmt::Display for Comparison {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.shape.len();
        let what = |m: &Mismatch| {
            format!(
                "{} of {n} ({:.4}%), max|d| {}, RMSE {:.3e}, first x={} y={} c={}: got {} expected {}",
                m.count,
                m.percent,
                m.max_abs,
                m.rmse,
                m.first.x,
                m.first.y,
                m.first.c,
                m.got,
                m.expected
            )
        };
        match &self.verdict {
            Verdict::Exact => write!(f, "{}: exact ({n} values)", self.name),
            Verdict::SignOfZero(m) => write!(
                f,
                "{}: FAIL equal up to the sign of zero: {} of {n} values, first x={} y={} c={}: got {} expected {}",
                self.name, m.zero_sign, m.first.x, m.first.y, m.first.c, m.got, m.expected
            ),
            Verdict::WithinOneCode(m) => write!(
                f,
                "{}: FAIL within one code (8-bit capture): {}; deltas: {}",
                self.name,
                what(m),
                histogram_text(m)
            ),
            Verdict::Mismatch(m) => {
                write!(f, "{}: FAIL mismatch {}", self.name, what(m))?;
                if m.zero_sign > 0 {
                    write!(f, ", {} of them only the sign of zero", m.zero_sign)?;
                }
                if m.non_finite > 0 {
                    write!(f, ", {} non-finite", m.non_finite)?;
                }
                write!(
                    f,
                    "; delta histogram ({}): {}",
                    self.encoding.unit(),
                    histogram_text(m)
                )
            }
        }
    }
}

// ------------------------------------------------------------------------------------------------
// Fixtures

/// What one run of the network produced for a fixture.
#[derive(Clone, Debug, Default)]
pub struct Produced {
    /// Boundaries by name (`block-N`, `transition-a-b`), E4M3 bytes `[level rows][C]`.
    pub boundaries: Vec<(String, Vec<u8>)>,
    /// The head, f32 `[field rows][4]`.
    pub head: Vec<f32>,
    /// The composed output (RGBA16F bits, valid size), when the fixture has a proxy.
    pub output: Option<Vec<[f16::F16; 4]>>,
}

/// The network input of a fixture.
#[derive(Clone, Debug)]
pub struct FixtureInput {
    /// f32 `[field rows][16]`.
    pub features: Vec<f32>,
    /// Where the features came from (`inputFeatures` or `proxy`).
    pub source: &'static str,
    /// The proxy pixels (valid size), when given.
    pub proxy: Option<Vec<[f32; 4]>>,
    /// The proxy's motion vectors (pixels, valid size), when given.
    pub motion: Option<Vec<[f32; 2]>>,
    /// The frame constants used for prepare/compose (when there is a proxy).
    pub constants: Option<FrameConstants>,
}

fn invalid(fx: &Fixture, what: String) -> FixtureError {
    FixtureError::Invalid {
        path: fx.dir.join("manifest.json"),
        what,
    }
}

fn proxy_params(p: &crate::fixture::ProxyRef) -> FrameParams {
    FrameParams {
        use_auto_mask: p.auto_mask,
        local_tone_strength: p.conditioning.local_tone,
        local_structure_strength: p.conditioning.local_structure,
        skin_structure_strength: p.conditioning.skin_structure,
        style: p.conditioning.style,
        ..FrameParams::default()
    }
}

/// The frame constants of a proxy fixture: its first frame (no history), the seed and
/// conditioning of the manifest, the model's blend scale. `None` without a proxy.
pub fn fixture_constants(fx: &Fixture, blend_scale: f32) -> Option<FrameConstants> {
    let p = fx.manifest.proxy.as_ref()?;
    let setup = FrameSetup {
        enabled: true,
        seed: p.seed,
        history_valid: false,
        read_slot: 0,
        write_slot: 1,
    };
    Some(FrameConstants::new(
        &fx.geometry,
        &proxy_params(p),
        &setup,
        blend_scale,
        p.motion.is_some(),
    ))
}

fn pixels4(v: &[f32]) -> Vec<[f32; 4]> {
    v.chunks_exact(4)
        .map(|c| [c[0], c[1], c[2], c[3]])
        .collect()
}

/// The network input of a validated fixture: `inputFeatures` when given, otherwise
/// `nr::frame::prepare` of the proxy (first frame, no history).
pub fn fixture_input(fx: &Fixture, blend_scale: f32) -> Result<FixtureInput, FixtureError> {
    let proxy = match &fx.manifest.proxy {
        Some(p) => {
            // Conditioning the frame cannot honour (non-finite, style != 0) is refused here,
            // before anything runs.
            proxy_params(p)
                .validate(fx.geometry.valid.w, fx.geometry.valid.h)
                .map_err(|e| invalid(fx, format!("proxy.conditioning: {e}")))?;
            Some(pixels4(&fx.read_f32(&p.file)?))
        }
        None => None,
    };
    let motion = match fx.manifest.proxy.as_ref().and_then(|p| p.motion.as_ref()) {
        Some(m) => Some(
            fx.read_f32(m)?
                .chunks_exact(2)
                .map(|c| [c[0], c[1]])
                .collect(),
        ),
        None => None,
    };
    let constants = fixture_constants(fx, blend_scale);
    if let Some(f) = &fx.manifest.input_features {
        return Ok(FixtureInput {
            features: fx.read_f32(&f.file)?,
            source: "inputFeatures",
            proxy,
            motion,
            constants,
        });
    }
    let (Some(px), Some(c)) = (&proxy, &constants) else {
        return Err(invalid(
            fx,
            "neither `proxy` nor `inputFeatures` is given".into(),
        ));
    };
    let inputs = FrameInputs {
        proxy: px,
        motion: motion.as_deref(),
        history: None,
    };
    let lanes =
        openngx::nr::frame::prepare(c, &inputs).map_err(|e| invalid(fx, format!("proxy: {e}")))?;
    let features = openngx::nr::frame::prepare::features_f32(&lanes);
    Ok(FixtureInput {
        features,
        source: "proxy",
        proxy,
        motion,
        constants,
    })
}

/// Compose the output of a proxy fixture from the head (`None` without a proxy).
pub fn compose_output(
    input: &FixtureInput,
    head: &[f32],
) -> Result<Option<Vec<[f16::F16; 4]>>, openngx::nr::frame::FrameError> {
    let (Some(proxy), Some(c)) = (&input.proxy, &input.constants) else {
        return Ok(None);
    };
    let inputs = FrameInputs {
        proxy,
        motion: input.motion.as_deref(),
        history: None,
    };
    let head = pixels4(head);
    Ok(Some(openngx::nr::frame::compose(c, &inputs, &head)?.output))
}

/// The result of checking a fixture.
#[derive(Clone, Debug, Default)]
pub struct Report {
    pub comparisons: Vec<Comparison>,
    /// Boundaries the fixture omits, with its reason.
    pub omitted: Vec<(String, String)>,
    /// Problems that made a check impossible (a produced tensor missing or of the wrong size).
    pub errors: Vec<String>,
}

impl Report {
    /// True only when every comparison is exact and nothing went wrong.
    pub fn all_exact(&self) -> bool {
        self.errors.is_empty() && self.comparisons.iter().all(|c| c.verdict.is_exact())
    }
    /// Comparisons with a given verdict kind.
    pub fn count(&self, pred: impl Fn(&Verdict) -> bool) -> usize {
        self.comparisons.iter().filter(|c| pred(&c.verdict)).count()
    }
    /// A one-line summary.
    pub fn summary(&self) -> String {
        let exact = self.count(|v| matches!(v, Verdict::Exact));
        let zero = self.count(|v| matches!(v, Verdict::SignOfZero(_)));
        let one = self.count(|v| matches!(v, Verdict::WithinOneCode(_)));
        let bad = self.count(|v| matches!(v, Verdict::Mismatch(_)));
        format!(
            "{} checks: {exact} exact, {zero} sign-of-zero only, {one} within one code, {bad} mismatched, {} errors, {} omitted -> {}",
            self.comparisons.len(),
            self.errors.len(),
            self.omitted.len(),
            if self.all_exact() { "PASS" } else { "FAIL" }
        )
    }
}

/// Compare a run's results with every reference the fixture's checks ask for.
pub fn compare_fixture(fx: &Fixture, produced: &Produced) -> Result<Report, FixtureError> {
    let mut report = Report::default();
    let g: &Geometry = &fx.geometry;
    if fx.wants("boundaries") {
        let mut files = std::collections::BTreeMap::new();
        for b in &fx.manifest.blocks {
            files.insert(format!("block-{}", b.block), b.file.as_str());
        }
        for t in &fx.manifest.transitions {
            files.insert(format!("transition-{}", t.id), t.file.as_str());
        }
        for b in g.boundaries() {
            let Some(file) = files.get(&b.name) else {
                let why = fx
                    .manifest
                    .omitted_boundaries
                    .get(&b.name)
                    .cloned()
                    .unwrap_or_default();
                report.omitted.push((b.name.clone(), why));
                continue;
            };
            let shape = Shape {
                width: b.width as usize,
                height: b.height as usize,
                channels: b.channels as usize,
            };
            let Some((_, got)) = produced.boundaries.iter().find(|(n, _)| *n == b.name) else {
                report
                    .errors
                    .push(format!("{}: the run produced no such boundary", b.name));
                continue;
            };
            let expected = fx.read(file)?;
            match compare_e4m3(&b.name, shape, got, &expected) {
                Ok(c) => report.comparisons.push(c),
                Err(e) => report.errors.push(e.to_string()),
            }
        }
    }
    if fx.wants("head") {
        if let Some(f) = &fx.manifest.reference_head {
            let shape = Shape {
                width: g.field.w as usize,
                height: g.field.h as usize,
                channels: 4,
            };
            let expected = fx.read_f32(&f.file)?;
            match compare_f32("head", shape, &produced.head, &expected) {
                Ok(c) => report.comparisons.push(c),
                Err(e) => report.errors.push(e.to_string()),
            }
        }
    }
    if fx.wants("output") {
        if let Some(o) = &fx.manifest.native_output {
            let shape = Shape {
                width: g.valid.w as usize,
                height: g.valid.h as usize,
                channels: 4,
            };
            match &produced.output {
                None => report
                    .errors
                    .push("output: the run composed no output".to_string()),
                Some(out) => {
                    let bytes = fx.read(&o.file)?;
                    let result = if o.dtype == "u8" {
                        let got: Vec<u8> = out.iter().flatten().map(|&h| unorm8(h)).collect();
                        compare_u8("output", shape, &got, &bytes)
                    } else {
                        let got: Vec<f32> = out.iter().flatten().map(|&h| f16::to_f32(h)).collect();
                        compare_f32("output", shape, &got, &bytes_to_f32(&bytes))
                    };
                    match result {
                        Ok(c) => report.comparisons.push(c),
                        Err(e) => report.errors.push(e.to_string()),
                    }
                }
            }
        }
    }
    Ok(report)
}

/// Lanes per feature row (re-exported for tools that size feature files).
pub const FEATURE_LANES: usize = LANES;

// ------------------------------------------------------------------------------------------------
// Dumps: what a run produced, as files (`parity --dump` writes them, `--from-dump` reads them)

/// Write `produced` (and the features it ran on) to `dir`: `<boundary>.u8`, `features.f32`,
/// `head.f32` and, when there is one, `output.f32` (RGBA halves as f32, valid size).
pub fn write_dump(dir: &Path, features: &[f32], produced: &Produced) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    for (name, bytes) in &produced.boundaries {
        std::fs::write(dir.join(format!("{name}.u8")), bytes)?;
    }
    std::fs::write(dir.join("features.f32"), f32_to_bytes(features))?;
    std::fs::write(dir.join("head.f32"), f32_to_bytes(&produced.head))?;
    if let Some(out) = &produced.output {
        let v: Vec<f32> = out.iter().flatten().map(|&h| f16::to_f32(h)).collect();
        std::fs::write(dir.join("output.f32"), f32_to_bytes(&v))?;
    }
    Ok(())
}

/// Read a dump written by [`write_dump`] for a frame of geometry `g`. Every boundary file that
/// exists is read (its size is checked by the comparison); `output.f32` is optional. The files
/// are untrusted (`openngx::model::file`): regular files inside `dir`, each read up to the size
/// the geometry gives it (a larger one is refused).
pub fn read_dump(dir: &Path, g: &Geometry) -> Result<Produced, FixtureError> {
    let read = |name: &str, limit: u64| {
        let path = dir.join(name);
        openngx::model::file::read_beneath(dir, Path::new(name), limit).map_err(|e| match e {
            openngx::model::file::UntrustedRead::Io(source) => FixtureError::Io { path, source },
            other => FixtureError::Invalid {
                path,
                what: other.to_string(),
            },
        })
    };
    let mut boundaries = Vec::new();
    for b in g.boundaries() {
        let file = format!("{}.u8", b.name);
        if dir.join(&file).exists() {
            boundaries.push((b.name.clone(), read(&file, b.bytes())?));
        }
    }
    let rows = g.field.w as u64 * g.field.h as u64;
    let head = bytes_to_f32(&read("head.f32", rows * 16)?);
    let output = if dir.join("output.f32").exists() {
        let pixels = g.valid.w as u64 * g.valid.h as u64;
        let v = bytes_to_f32(&read("output.f32", pixels * 16)?);
        // The values are halves (compose truncates to RGBA16F), so the conversion is exact.
        Some(
            v.chunks_exact(4)
                .map(|c| [c[0], c[1], c[2], c[3]].map(f16::from_f32_rne))
                .collect(),
        )
    } else {
        None
    };
    Ok(Produced {
        boundaries,
        head,
        output,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(w: usize, h: usize, c: usize) -> Shape {
        Shape {
            width: w,
            height: h,
            channels: c,
        }
    }

    #[test]
    fn e4m3_verdicts() {
        let s = shape(4, 2, 3);
        let e: Vec<u8> = (0..24u8).map(|i| i * 3).collect();
        assert!(compare_e4m3("t", s, &e, &e).unwrap().verdict.is_exact());

        let mut g = e.clone();
        g[0] = 0x80; // e[0] == 0x00: only the sign of zero
        let c = compare_e4m3("t", s, &g, &e).unwrap();
        let Verdict::SignOfZero(m) = &c.verdict else {
            panic!("{c}")
        };
        assert_eq!((m.count, m.zero_sign), (1, 1));

        g[13] = e[13] + 2; // element 13 = x 0, y 1, c 1
        g[20] = 0x80 | e[20]; // a sign flip of a nonzero code
        let c = compare_e4m3("t", s, &g, &e).unwrap();
        let Verdict::Mismatch(m) = &c.verdict else {
            panic!("{c}")
        };
        assert_eq!((m.count, m.zero_sign), (3, 1));
        assert_eq!(m.first, Position { x: 0, y: 1, c: 1 });
        assert_eq!(
            (m.got, m.expected),
            (Value::Byte(e[13] + 2), Value::Byte(e[13]))
        );
        assert_eq!(m.bin(2), 1);
        assert_eq!(m.bin(-9), 1); // -60 - 60 clamps
        assert_eq!(m.histogram.iter().sum::<u64>(), 2);
        let d = (e4m3::to_f32(e[20]) * 2.0) as f64;
        assert_eq!(m.max_abs, d);
    }

    #[test]
    fn u8_within_one_and_lengths() {
        let s = shape(2, 2, 1);
        let c = compare_u8("o", s, &[1, 2, 3, 4], &[1, 3, 3, 3]).unwrap();
        let Verdict::WithinOneCode(m) = &c.verdict else {
            panic!("{c}")
        };
        assert_eq!((m.bin(-1), m.bin(1), m.count), (1, 1, 2));
        assert!(!c.verdict.is_exact());
        let c = compare_u8("o", s, &[1, 2, 3, 9], &[1, 3, 3, 3]).unwrap();
        assert!(matches!(c.verdict, Verdict::Mismatch(_)));
        assert!(compare_u8("o", s, &[1, 2, 3], &[1, 2, 3, 4]).is_err());
    }

    #[test]
    fn f32_codes() {
        let s = shape(3, 1, 1);
        // Halves: one half step apart at 1.0 is 2^-10.
        let e = [1.0f32, 0.0, -2.0];
        let g = [1.0 + 1.0 / 1024.0, -0.0, -2.0];
        let c = compare_f32("h", s, &g, &e).unwrap();
        assert_eq!(c.encoding, Encoding::F16InF32);
        let Verdict::Mismatch(m) = &c.verdict else {
            panic!("{c}")
        };
        assert_eq!(m.bin(1), 1);
        assert_eq!((m.count, m.zero_sign), (2, 1));
        // Not halves: f32 steps.
        let g2 = [f32::from_bits(1.0f32.to_bits() - 1), 0.0, -2.0];
        let c = compare_f32("h", s, &g2, &e).unwrap();
        assert_eq!(c.encoding, Encoding::F32);
        assert_eq!(c.verdict.mismatch().map(|m| m.bin(-1)), Some(1));
    }

    #[test]
    fn unorm() {
        assert_eq!(unorm8(f16::ONE), 255);
        assert_eq!(unorm8(f16::NEG_ZERO), 0);
        assert_eq!(unorm8(f16::from_f32_rne(0.5)), 128);
        assert_eq!(unorm8(f16::QNAN), 0);
    }
}
