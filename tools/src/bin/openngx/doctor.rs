//! `openngx doctor [--no-verify]`: what this machine offers openngx. It creates its own Vulkan
//! instance (the library never does; this tool plays the application), lists every physical
//! device with its Vulkan version and the features the exact route needs, says which routes each
//! device can run, and shows where an unmodified game's Core looks for the model and whether it
//! validates (`doctor_model`), then Ray Reconstruction's route and model (`doctor_rr`).
//!
//! Exit status: 0 when at least one device can run the exact route and no model that was found
//! is invalid (a missing model is only a warning: the GPU check is still useful without one);
//! 1 otherwise.

use std::ffi::CStr;
use std::path::PathBuf;
use std::process::ExitCode;

use ash::vk;
use openngx::gpu::context::Capabilities;
use openngx::nr::geometry::Geometry;
use openngx::nr::record::network::NetworkOptions;
use openngx::nr::route::exact::PUSH_CONSTANT_BYTES as EXACT_ROUTE_PUSH_CONSTANT_BYTES;
use openngx::nr::route::{tensor, ExactRoute, TensorRoute};
use openngx::nr::{gpu_frame, graph};
use openngx::numerics::probe;
use openngx::numerics::Profile;

/// The tensor route's extension.
const COOPERATIVE_MATRIX: &CStr = c"VK_KHR_cooperative_matrix";

#[derive(clap::Args)]
pub struct Args {
    /// Skip the SHA-256 check of the model's stage files (faster).
    #[arg(long)]
    no_verify: bool,
    /// Write the raw answers of the tensor route's profile probe (little-endian halves) of the
    /// first device that runs it to this file (for `tests/data/probe/`).
    #[arg(long)]
    probe_answers: Option<PathBuf>,
    /// The NGX Core whose model search is shown (default: the installed
    /// `<prefix>/lib/openngx/libnvidia-ngx.so.1` beside this tool's `<prefix>/bin/`).
    #[arg(long)]
    core: Option<PathBuf>,
}

fn version(v: u32) -> String {
    format!(
        "{}.{}.{}",
        vk::api_version_major(v),
        vk::api_version_minor(v),
        vk::api_version_patch(v)
    )
}

fn yes_no(ok: bool) -> &'static str {
    if ok {
        "yes"
    } else {
        "NO"
    }
}

fn device_type(t: vk::PhysicalDeviceType) -> &'static str {
    match t {
        vk::PhysicalDeviceType::DISCRETE_GPU => "discrete GPU",
        vk::PhysicalDeviceType::INTEGRATED_GPU => "integrated GPU",
        vk::PhysicalDeviceType::VIRTUAL_GPU => "virtual GPU",
        vk::PhysicalDeviceType::CPU => "CPU",
        _ => "other",
    }
}

pub fn run(args: Args) -> ExitCode {
    println!("openngx {} doctor", env!("CARGO_PKG_VERSION"));
    println!(
        "routes: cpu reference (always available); exact (Vulkan 1.2 integer emulation); tensor \
         (f16 cooperative matrices, where the profile probe identifies h25)"
    );
    let devices_ok = vulkan_report(args.probe_answers.as_deref());
    let model_ok = crate::doctor_model::report(!args.no_verify, args.core.as_deref());
    let rr_ok = crate::doctor_rr::report(!args.no_verify, args.core.as_deref());
    if devices_ok && model_ok && rr_ok {
        println!("doctor: OK");
        ExitCode::SUCCESS
    } else {
        println!("doctor: PROBLEMS FOUND");
        ExitCode::FAILURE
    }
}

/// Print the Vulkan section; true when some device can run the exact route.
fn vulkan_report(probe_answers: Option<&std::path::Path>) -> bool {
    // SAFETY: loads the system Vulkan loader; a failure is reported, not assumed.
    let entry = match unsafe { ash::Entry::load() } {
        Ok(e) => e,
        Err(e) => {
            println!("vulkan: no loader ({e})");
            return false;
        }
    };
    // SAFETY: a global query on a valid entry.
    let instance_version = match unsafe { entry.try_enumerate_instance_version() } {
        Ok(Some(v)) => v,
        Ok(None) => vk::API_VERSION_1_0,
        Err(e) => {
            println!("vulkan: vkEnumerateInstanceVersion failed: {e}");
            return false;
        }
    };
    println!(
        "vulkan: loader instance version {}",
        version(instance_version)
    );
    if instance_version < vk::API_VERSION_1_2 {
        println!("vulkan: the loader is older than 1.2; no route can run");
        return false;
    }
    let app = vk::ApplicationInfo::default()
        .application_name(c"openngx doctor")
        .api_version(vk::API_VERSION_1_2);
    let info = vk::InstanceCreateInfo::default().application_info(&app);
    // SAFETY: valid create info; the instance is destroyed below.
    let instance = match unsafe { entry.create_instance(&info, None) } {
        Ok(i) => i,
        Err(e) => {
            println!("vulkan: vkCreateInstance failed: {e}");
            return false;
        }
    };
    // SAFETY: a valid instance.
    let physicals = unsafe { instance.enumerate_physical_devices() }.unwrap_or_default();
    println!("vulkan: {} device(s)", physicals.len());
    let mut any_exact = false;
    for (i, &pd) in physicals.iter().enumerate() {
        // SAFETY: `pd` is a physical device of `instance`.
        let caps =
            unsafe { Capabilities::query(entry.static_fn().get_instance_proc_addr, &instance, pd) };
        // SAFETY: as above.
        let exts =
            unsafe { instance.enumerate_device_extension_properties(pd) }.unwrap_or_default();
        let has_coop = exts
            .iter()
            .any(|e| e.extension_name_as_c_str().ok() == Some(COOPERATIVE_MATRIX));
        any_exact |= device_report(i, &caps, has_coop);
        tensor_report(&instance, pd, &caps, probe_answers);
    }
    // SAFETY: every object created from the instance is gone (physical devices are not objects).
    unsafe { instance.destroy_instance(None) };
    if !any_exact {
        println!("vulkan: no device can run the exact route");
    }
    any_exact
}

/// Print one device; true when it can run the exact route.
fn device_report(i: usize, caps: &Capabilities, has_coop: bool) -> bool {
    println!(
        "device {i}: {} ({}, vendor {:#06x}, device {:#06x}), Vulkan {}",
        caps.device_name,
        device_type(caps.device_type),
        caps.vendor_id,
        caps.device_id,
        version(caps.api_version)
    );
    let checks = [
        ("Vulkan 1.2+", caps.api_version >= vk::API_VERSION_1_2),
        ("shaderFloat16", caps.shader_float16),
        ("shaderInt8", caps.shader_int8),
        ("storageBuffer8BitAccess", caps.storage_buffer_8bit),
        ("storageBuffer16BitAccess", caps.storage_buffer_16bit),
    ];
    for (name, ok) in checks {
        println!("  {name}: {}", yes_no(ok));
    }
    println!(
        "  maxPushConstantsSize >= {EXACT_ROUTE_PUSH_CONSTANT_BYTES}: {} ({})",
        yes_no(caps.max_push_constants_size >= EXACT_ROUTE_PUSH_CONSTANT_BYTES),
        caps.max_push_constants_size
    );
    if caps.timestamps {
        println!(
            "  timestamps: yes ({} ns per tick)",
            caps.timestamp_period_ns
        );
    } else {
        println!("  timestamps: no (GPU timing unavailable; not required)");
    }
    println!("  subgroup size: {}", caps.subgroup_size);
    // Not required: they select the faster builds of the exact kernels.
    println!(
        "  native f16 (RTE f16, denormPreserve f16): {} ({}, {})",
        yes_no(caps.native_f16()),
        yes_no(caps.rounding_mode_rte_f16),
        yes_no(caps.denorm_preserve_f16)
    );
    println!(
        "  fast exact kernels (native f16 + RTZ f32, independent modes): {} ({}, {})",
        yes_no(caps.rtz_kernels()),
        yes_no(caps.rounding_mode_rtz_f32),
        yes_no(caps.rounding_mode_independent)
    );
    println!(
        "  {}: {}",
        COOPERATIVE_MATRIX.to_string_lossy(),
        if has_coop { "yes" } else { "no" }
    );
    let missing = ExactRoute::missing(caps);
    let exact = missing.is_empty();
    if exact {
        println!("  route exact: available");
        limits_report(caps);
    } else {
        println!(
            "  route exact: unavailable (missing {})",
            missing.join(", ")
        );
    }
    exact
}

/// The device's launch limits and what they mean for a feature's frame at a few sizes: how
/// many ops run in row bands (none on a device with a large binding range), or why a size is
/// refused.
fn limits_report(caps: &Capabilities) {
    println!(
        "  limits: maxStorageBufferRange {}, maxComputeWorkGroupCount {:?}, \
         maxMemoryAllocationSize {}, maxBufferSize {}",
        caps.max_storage_buffer_range,
        caps.max_compute_work_group_count,
        caps.max_memory_allocation_size,
        caps.max_buffer_size
    );
    // What a feature builds (it rewrites its input every frame and keeps only the head).
    let opts = NetworkOptions {
        input_per_frame: true,
        ..NetworkOptions::default()
    };
    for (w, h) in [(1920, 1080), (3840, 2160), (8192, 2048)] {
        let Ok(geometry) = Geometry::new(w, h) else {
            continue;
        };
        let g = graph::build(&geometry);
        match gpu_frame::check_limits(caps, &g, &opts) {
            Ok(l) => println!(
                "  size {w}x{h}: fits, exact route workspace {:.1} MiB ({} window blocks in \
                 strips of {} bands), {} of {} ops in row bands",
                l.workspace_bytes() as f64 / (1u64 << 20) as f64,
                l.strips.strips.len(),
                l.strips.band_count(),
                l.split_nodes(),
                g.nodes.len()
            ),
            Err(e) => println!("  size {w}x{h}: refused ({e})"),
        }
    }
}

/// The tensor route on one device: what it lacks, or the profile probe's verdict.
fn tensor_report(
    instance: &ash::Instance,
    pd: vk::PhysicalDevice,
    caps: &Capabilities,
    probe_answers: Option<&std::path::Path>,
) {
    let missing = TensorRoute::missing(caps);
    if !missing.is_empty() {
        println!(
            "  route tensor: unavailable (missing {})",
            missing.join(", ")
        );
        return;
    }
    // SAFETY: `pd` is a physical device of the live `instance`.
    match unsafe { tensor::probe::run_on_physical(instance, pd) } {
        Ok(answers) => {
            let id = probe::identify(&probe::probe_tiles(), &answers);
            println!(
                "  profile probe: {} answers, digest {}",
                answers.len(),
                probe::digest(&answers)
            );
            println!("  profile probe: {}", id.reason);
            if id.matched == Some(Profile::H25) {
                println!("  route tensor: available (profile h25)");
            } else {
                println!("  route tensor: unavailable (the device's MMA is not h25)");
            }
            if let Some(path) = probe_answers {
                match std::fs::write(path, probe::answers_to_bytes(&answers)) {
                    Ok(()) => println!("  profile probe: answers written to {}", path.display()),
                    Err(e) => println!("  profile probe: cannot write {}: {e}", path.display()),
                }
            }
        }
        Err(e) => println!("  route tensor: unavailable (the profile probe failed: {e})"),
    }
}
