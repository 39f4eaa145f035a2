//! `gpu::ScratchDevice` (the library's own short-lived device on the caller's physical device)
//! and the tensor route's profile probe that runs on it: a dispatch's bytes come back, every
//! object is destroyed (the validation layer, which watches the harness's instance, reports
//! leaks at `vkDestroyDevice`), and on a device with f16 cooperative matrices the probe's
//! answers identify the profile (h25 on the H200). Without cooperative matrices (lavapipe) the
//! probe part is skipped and says so.

mod common;

use common::Harness;
use openngx::gpu::{shaders, ScratchDevice, ScratchFeatures};
use openngx::nr::route::{tensor, TensorRoute};
use openngx::numerics::{probe, Profile};

#[test]
fn a_scratch_device_runs_a_dispatch_and_leaves_nothing() {
    let Some(h) = Harness::new() else { return };
    let spirv = shaders::spirv("test/scratch_copy").expect("built-in test shader");
    let input: Vec<u8> = (0..4096u32)
        .flat_map(|i| i.wrapping_mul(2_654_435_761).to_le_bytes())
        .collect();
    {
        // SAFETY: the harness's live instance and its physical device.
        let dev =
            unsafe { ScratchDevice::open(&h.instance, h.physical, ScratchFeatures::default()) }
                .expect("scratch device");
        for salt in [0u32, 0xA5A5_0F0F] {
            let out = dev
                .run(&spirv, &[(0, salt)], &input, input.len(), 64)
                .expect("dispatch");
            let want: Vec<u8> = input
                .chunks_exact(4)
                .flat_map(|w| (u32::from_le_bytes([w[0], w[1], w[2], w[3]]) ^ salt).to_le_bytes())
                .collect();
            assert_eq!(out, want, "salt {salt:#x}");
        }
    }
    h.assert_validation_clean();
}

#[test]
fn the_profile_probe_identifies_the_cooperative_matrix() {
    let Some(h) = Harness::new() else { return };
    if !TensorRoute::missing(h.context().capabilities()).is_empty() {
        println!(
            "SKIP (probe part): {} has no f16 16x16x16 cooperative matrix for the tensor route",
            h.device_name
        );
        return;
    }
    // SAFETY: the harness's live instance and its physical device.
    let answers =
        unsafe { tensor::probe::run_on_physical(&h.instance, h.physical) }.expect("probe runs");
    let id = probe::identify(&probe::probe_tiles(), &answers);
    println!("{}: {}", h.device_name, id.reason);
    assert_eq!(
        answers.len(),
        probe::expected(&probe::probe_tiles(), &Profile::H25).len()
    );
    if h.device_name.contains("H200") {
        assert_eq!(id.matched, Some(Profile::H25), "{}", id.reason);
    }
    h.assert_validation_clean();
}
