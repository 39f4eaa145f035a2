//! The tensor route's profile probe on a device: the fixed tiles of [`numerics::probe`] run
//! through `shaders/nr/probe_coopmat.comp` on a [`ScratchDevice`] of the library's own (the
//! caller's device offers no queue to wait on at creation), the answers matched against the
//! known profiles. Run once per physical device and remembered: the arithmetic belongs to the
//! hardware and driver.
//!
//! [`numerics::probe`]: crate::numerics::probe

use std::collections::HashMap;

use ash::vk;
use once_cell::sync::Lazy;
use parking_lot::Mutex;

use crate::gpu::{shaders, GpuContext, GpuError, ScratchDevice, ScratchFeatures};
use crate::numerics::probe::{self, Identification, ProbeTile};

/// uints per tile in the probe's input (see `probe_coopmat.comp`).
const TILE_WORDS: usize = 1160;
const A_AT: usize = 8;
const B_AT: usize = 8 + 512;
const C_AT: usize = 8 + 1024;

/// The probe's input bytes for `tiles` (K up to 64).
pub fn encode(tiles: &[ProbeTile]) -> Result<Vec<u8>, GpuError> {
    let mut words = vec![0u32; TILE_WORDS * tiles.len()];
    for (t, tile) in tiles.iter().enumerate() {
        let k = tile.k;
        if k == 0 || k % 16 != 0 || k > 64 || tile.a.len() != 16 * k || tile.b.len() != 16 * k {
            return Err(GpuError::invalid(
                "probe tile",
                format!(
                    "tile {t}: K {k} with {} / {} halves",
                    tile.a.len(),
                    tile.b.len()
                ),
            ));
        }
        let w = &mut words[t * TILE_WORDS..(t + 1) * TILE_WORDS];
        w[0] = k as u32;
        let mut put = |at: usize, halves: &[u16]| {
            for (i, pair) in halves.chunks(2).enumerate() {
                w[at + i] = pair[0] as u32 | (pair.get(1).copied().unwrap_or(0) as u32) << 16;
            }
        };
        put(A_AT, &tile.a);
        put(B_AT, &tile.b);
        put(C_AT, &tile.c);
    }
    Ok(words.iter().flat_map(|w| w.to_le_bytes()).collect())
}

/// Run the probe tiles on `ctx`'s physical device and return its raw answers (256 halves per
/// tile). The device must offer the cooperative-matrix shape (the caller checks).
pub fn run_on(ctx: &GpuContext) -> Result<Vec<u16>, GpuError> {
    // SAFETY: the context's physical device belongs to its instance, which outlives the call.
    unsafe { run_on_physical(ctx.instance(), ctx.physical_device()) }
}

/// As [`run_on`] for a physical device of `instance` (the tools' `doctor`).
///
/// # Safety
/// `physical` must be a physical device of `instance`, alive for the call.
pub unsafe fn run_on_physical(
    instance: &ash::Instance,
    physical: vk::PhysicalDevice,
) -> Result<Vec<u16>, GpuError> {
    let tiles = probe::probe_tiles();
    let input = encode(&tiles)?;
    let spirv = shaders::spirv("nr/probe_coopmat")
        .ok_or_else(|| GpuError::invalid("probe", "shader nr/probe_coopmat is not built in"))?;
    // SAFETY: the caller's promise.
    let dev =
        unsafe { ScratchDevice::open(instance, physical, ScratchFeatures { coop_matrix: true }) }?;
    let out = dev.run(&spirv, &[], &input, tiles.len() * 512, tiles.len() as u32)?;
    Ok(out
        .chunks_exact(2)
        .map(|b| u16::from_le_bytes([b[0], b[1]]))
        .collect())
}

/// Identification per physical device (instance and physical-device handles).
static SEEN: Lazy<Mutex<HashMap<(u64, u64), Identification>>> =
    Lazy::new(|| Mutex::new(HashMap::new()));

/// The profile of `ctx`'s f16 cooperative matrix, probed once per physical device. A probe
/// that cannot run is an identification with no match (and the error as its reason).
pub fn identify(ctx: &GpuContext) -> Identification {
    use vk::Handle;
    let key = (
        ctx.instance().handle().as_raw(),
        ctx.physical_device().as_raw(),
    );
    if let Some(id) = SEEN.lock().get(&key) {
        return id.clone();
    }
    let id = match run_on(ctx) {
        Ok(answers) => probe::identify(&probe::probe_tiles(), &answers),
        Err(e) => Identification::failed(format!("the probe could not run: {e}")),
    };
    SEEN.lock().insert(key, id.clone());
    id
}
