//! Build script: compiles every compute shader under `shaders/` to SPIR-V (shaderc built from
//! source, so the glslang is new enough for cooperative matrices and E4M3 types) and embeds the
//! result; generates the C header with cbindgen; gives `libopenngx.so` its soname.
//!
//! It serves two packages compiled from the same `src/`: this one (`libopenngx.so`, the public
//! ABI) and `core/` (`openngx-core`, the NGX Core `libnvidia-ngx.so.1`). For the latter it sets
//! `--cfg openngx_core` (which turns the public `#[no_mangle]`s off and the Core's on, see
//! `docs/architecture.md`), gives the library the Core's soname and writes no header.
//!
//! Outputs in `OUT_DIR`:
//! * `shaders.rs` — `pub static SHADERS: &[(&str, &[u8])]`, one entry per `shaders/**/*.comp`,
//!   keyed by the path relative to `shaders/` without extension (e.g. `nr/pool`).
//! * `openngx.h` — the header cbindgen produces from `src/ngx/{abi,exports,param_exports}.rs`. The committed `include/openngx.h`
//!   must equal it (a test checks); set `OPENNGX_UPDATE_HEADER=1` to rewrite the committed copy.

use std::fs;
use std::path::{Path, PathBuf};

/// The package name of the NGX Core build (`core/Cargo.toml`).
const CORE_PACKAGE: &str = "openngx-core";
/// The file name (and soname) NVIDIA's static library `dlopen`s.
const CORE_SONAME: &str = "libnvidia-ngx.so.1";

fn main() {
    let manifest =
        PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    let core = std::env::var("CARGO_PKG_NAME").as_deref() == Ok(CORE_PACKAGE);
    // The Core package lives in `core/` and compiles the sources one level up.
    let root = if core {
        manifest.parent().map(Path::to_path_buf).unwrap_or(manifest)
    } else {
        manifest
    };
    compile_shaders(&root.join("shaders"), &out);
    if core {
        println!("cargo:rustc-cfg=openngx_core");
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,{CORE_SONAME}");
    } else {
        generate_header(&root, &out);
        set_soname();
    }
}

/// `libopenngx.so.<major>`, as a C library's: a program linked with `-lopenngx` records that
/// name, so a compatible update (same major) replaces the file under it and an incompatible one
/// installs beside it (`./x install` lays out the file and its two links).
fn set_soname() {
    // Only for this package: another package built with this script (the NGX Core's `core/`)
    // has a soname of its own.
    if std::env::var("CARGO_PKG_NAME").as_deref() != Ok("openngx") {
        return;
    }
    let major = std::env::var("CARGO_PKG_VERSION_MAJOR").expect("cargo sets the version");
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libopenngx.so.{major}");
}

fn collect(dir: &Path, ext: &str, acc: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.filter_map(Result::ok).map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            collect(&p, ext, acc);
        } else if p.extension().and_then(|e| e.to_str()) == Some(ext) {
            acc.push(p);
        }
    }
}

fn compile_shaders(shader_dir: &Path, out: &Path) {
    println!("cargo:rerun-if-changed={}", shader_dir.display());
    let mut sources = Vec::new();
    collect(shader_dir, "comp", &mut sources);
    let mut includes = Vec::new();
    collect(shader_dir, "glsl", &mut includes);
    for p in sources.iter().chain(includes.iter()) {
        println!("cargo:rerun-if-changed={}", p.display());
    }

    let compiler = shaderc::Compiler::new().expect("shaderc compiler");
    let lib_dir = shader_dir.join("lib");
    let mut table =
        String::from("/// Every compute shader of `shaders/`, compiled to SPIR-V at build time.\n");
    table.push_str("pub static SHADERS: &[(&str, &[u8])] = &[\n");
    let mut failures = Vec::new();
    for src in &sources {
        let rel = src.strip_prefix(shader_dir).expect("under shaders/");
        let key = rel.with_extension("").to_string_lossy().replace('\\', "/");
        let text = fs::read_to_string(src).expect("read shader");
        let mut opts = shaderc::CompileOptions::new().expect("shaderc options");
        opts.set_target_env(
            shaderc::TargetEnv::Vulkan,
            shaderc::EnvVersion::Vulkan1_2 as u32,
        );
        opts.set_target_spirv(shaderc::SpirvVersion::V1_5);
        opts.set_optimization_level(shaderc::OptimizationLevel::Performance);
        opts.set_generate_debug_info();
        let lib = lib_dir.clone();
        let src_dir = src.parent().map(Path::to_path_buf).unwrap_or_default();
        // Sources are named relative to the repository (`shaders/nr/x.comp`) in the SPIR-V's
        // debug information, so the bytes do not depend on where the clone is and lavapipe's
        // shader cache serves a CI run in a fresh clone.
        let root = shader_dir
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default();
        let relative = {
            let root = root.clone();
            move |p: &Path| -> String {
                p.strip_prefix(&root)
                    .unwrap_or(p)
                    .to_string_lossy()
                    .replace('\\', "/")
            }
        };
        let input_name = relative(src);
        opts.set_include_callback(move |name, _ty, from, _depth| {
            // The including file's folder first, so that a body under shaders/nr keeps its own
            // includes when a build in another folder (shaders/emulated) includes it.
            let from_dir = root.join(from).parent().map(Path::to_path_buf);
            for base in from_dir.iter().chain([&src_dir, &lib]) {
                let p = base.join(name);
                if let Ok(content) = fs::read_to_string(&p) {
                    return Ok(shaderc::ResolvedInclude {
                        resolved_name: relative(&p),
                        content,
                    });
                }
            }
            Err(format!(
                "include `{name}` not found (includer's folder, shader's folder, shaders/lib)"
            ))
        });
        match compiler.compile_into_spirv(
            &text,
            shaderc::ShaderKind::Compute,
            &input_name,
            "main",
            Some(&opts),
        ) {
            Ok(art) => {
                let spv_name = format!("{}.spv", key.replace('/', "__"));
                let words = drop_unused_small_int_constants(art.as_binary());
                let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
                fs::write(out.join(&spv_name), bytes).expect("write spv");
                table.push_str(&format!(
                    "    ({key:?}, include_bytes!(concat!(env!(\"OUT_DIR\"), \"/{spv_name}\"))),\n"
                ));
            }
            Err(e) => failures.push(format!("{}: {e}", src.display())),
        }
    }
    if !failures.is_empty() {
        panic!("shader compilation failed:\n{}", failures.join("\n"));
    }
    table.push_str("];\n");
    fs::write(out.join("shaders.rs"), table).expect("write shaders.rs");
}

/// The attribute of every public entry point (src/ngx/exports.rs, param_exports.rs).
const PUBLIC_EXPORT_ATTR: &str = "#[cfg_attr(not(openngx_core), no_mangle)]";

fn generate_header(root: &Path, out: &Path) {
    println!("cargo:rerun-if-changed={}", root.join("src/ngx").display());
    println!(
        "cargo:rerun-if-changed={}",
        root.join("cbindgen.toml").display()
    );
    println!("cargo:rerun-if-env-changed=OPENNGX_UPDATE_HEADER");
    let config = cbindgen::Config::from_file(root.join("cbindgen.toml")).expect("cbindgen.toml");
    // The C-visible items live in these three files (types/constants, entry points, parameter
    // accessors); the rest of src/ngx is Rust-only.
    let mut builder = cbindgen::Builder::new().with_config(config);
    // Files that do not exist are skipped: the target directory is shared between checkouts whose
    // hashes coincide, so this script may run for a tree that has only some of them.
    for f in ["abi.rs", "exports.rs", "param_exports.rs"] {
        let p = root.join("src/ngx").join(f);
        if let Ok(text) = fs::read_to_string(&p) {
            // cbindgen only sees a plain `#[no_mangle]`; the exports carry it behind
            // `cfg_attr(not(openngx_core), ...)` (the Core build turns them off), so it reads a
            // copy with the attribute spelled out.
            let copy = out.join(format!("cbindgen-{f}"));
            fs::write(&copy, text.replace(PUBLIC_EXPORT_ATTR, "#[no_mangle]"))
                .expect("write the copy cbindgen reads");
            builder = builder.with_src(copy);
        }
    }
    let header = match builder.generate() {
        Ok(b) => b,
        Err(e) => panic!("cbindgen failed: {e}"),
    };
    let path = out.join("openngx.h");
    header.write_to_file(&path);
    if std::env::var("OPENNGX_UPDATE_HEADER").as_deref() == Ok("1") {
        fs::copy(&path, root.join("include/openngx.h")).expect("update include/openngx.h");
    }
}

/// glslang leaves an unused 8-bit integer constant in the kernels that use f16 arithmetic
/// (`*_rtz`, `normalize_native`); declaring an 8-bit constant needs the Int8 capability, which
/// those modules neither declare nor need, so spirv-val and the validation layer would reject
/// them. Drop every OpConstant of an 8- or 16-bit integer type whose result id appears nowhere
/// else in the module (conservative: any word equal to the id keeps it).
fn drop_unused_small_int_constants(words: &[u32]) -> Vec<u32> {
    const OP_TYPE_INT: u32 = 21;
    const OP_CONSTANT: u32 = 43;
    if words.len() < 5 {
        return words.to_vec();
    }
    let mut small_types = std::collections::HashSet::new();
    let mut uses = std::collections::HashMap::<u32, usize>::new();
    let mut i = 5;
    while i < words.len() {
        let count = (words[i] >> 16) as usize;
        if count == 0 || i + count > words.len() {
            return words.to_vec(); // not a module we understand: leave it alone
        }
        if words[i] & 0xFFFF == OP_TYPE_INT && count >= 4 && matches!(words[i + 2], 8 | 16) {
            small_types.insert(words[i + 1]);
        }
        for w in &words[i + 1..i + count] {
            *uses.entry(*w).or_default() += 1;
        }
        i += count;
    }
    let mut out = words[..5].to_vec();
    let mut i = 5;
    while i < words.len() {
        let count = (words[i] >> 16) as usize;
        let unused_small = words[i] & 0xFFFF == OP_CONSTANT
            && count >= 4
            && small_types.contains(&words[i + 1])
            && uses.get(&words[i + 2]) == Some(&1);
        if !unused_small {
            out.extend_from_slice(&words[i..i + count]);
        }
        i += count;
    }
    out
}
