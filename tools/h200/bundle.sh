#!/usr/bin/env bash
# Packs what the pending H200 proofs need into DIR (default .devcarry-h200, git-ignored through
# .git/info/exclude as docs/testing.md says): the stripped test binaries and CLI of this
# checkout's dev build, the C harness's replay, a validation layer (the device machine has none;
# tools/h200/fetch-layer.sh fetches one) and run.sh. Build first (`./x build`). Then, with the
# device tool, carry [".gl", DIR] and run
#   for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig; cd DIR && ./run.sh PART
# where PART is one of the parts run.sh lists (each fits one 10-minute call). docs/testing.md,
# "Pending H200 proofs", says what each part proves.
set -euo pipefail
cd "$(dirname "$0")/../.."
dir="${1:-.devcarry-h200}"
target="${CARGO_TARGET_DIR:-/var/cache/openngx/target}"
tests=(feature_soak feature_nr gpu_frame gpu_rr rr_replay rr_dynamic gpu_numerics gpu_attention gpu_elementwise gpu_gemm)
rm -rf "$dir" && mkdir -p "$dir/stage/layer"
# Each integration test's executable, as cargo reports it (the newest build of each).
json="$(CARGO_TARGET_DIR=$target cargo test --workspace --no-run --message-format=json 2>/dev/null)"
for t in "${tests[@]}"; do
    exe="$(printf '%s\n' "$json" | python3 -c '
import json, sys
name = sys.argv[1]
for line in sys.stdin:
    try: m = json.loads(line)
    except ValueError: continue
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == name and "test" in m["target"]["kind"] and m.get("executable"):
        print(m["executable"])' "$t" | tail -n 1)"
    [ -n "$exe" ] || { echo "bundle: no test executable for $t" >&2; exit 1; }
    strip -o "$dir/stage/$t" "$exe"
done
strip -o "$dir/stage/openngx" "$target/debug/openngx"
# The C harness's replay (capi-tests/replay.c) against this build's library, found beside the
# program ($ORIGIN), and the fixtures OPENNGX_BUNDLE_FIXTURES names (directories written by
# `openngx reference`; one made with `--profile h25` is replayed on the tensor route). The model
# is synthesized on the device (seed 0, the same bytes as here).
strip -o "$dir/stage/libopenngx.so" "$target/debug/libopenngx.so"
ln -s libopenngx.so "$dir/stage/libopenngx.so.0"
cc -std=c99 -Wall -Wextra -Werror -pedantic -I include -I capi-tests capi-tests/replay.c \
    -o "$dir/stage/replay" -L "$dir/stage" -lopenngx -lvulkan '-Wl,-rpath,$ORIGIN'
# The NGX Core under the name NVIDIA's static library loads, alone in its folder, and the two
# programs of the C harness that play that library against it (core.c for feature 18, core_rr.c
# for feature 13; they dlopen the Core themselves).
core="$target/debug/libopenngx_core.so"
[ -f "$core" ] || { echo "bundle: no NGX Core at $core: ./x build builds it" >&2; exit 1; }
mkdir -p "$dir/stage/ngx-core"
strip -o "$dir/stage/ngx-core/libnvidia-ngx.so.1" "$core"
for prog in core core_rr; do
    cc -std=c99 -Wall -Wextra -Werror -pedantic -I include -I capi-tests "capi-tests/$prog.c" \
        -o "$dir/stage/$prog" -ldl -lvulkan
done
for fx in ${OPENNGX_BUNDLE_FIXTURES:-}; do
    [ -f "$fx/manifest.json" ] || { echo "bundle: $fx is not a fixture (no manifest.json)" >&2; exit 1; }
    # Only what replay.c reads (the manifest, each frame's proxy, motion and reference output):
    # the features, heads and boundaries of a 512x512 fixture alone are over 100 MiB, more than
    # the device tool carries.
    to="$dir/stage/fixtures/$(basename "$fx")"
    mkdir -p "$to"
    (cd "$fx" && find . -name manifest.json -o -name proxy.f32 -o -name motion.f32 -o -name output.f32) |
        while read -r f; do
            mkdir -p "$to/$(dirname "$f")"
            cp "$fx/$f" "$to/$f"
        done
done
# The validation layer. Debian 12's (1.3.239) predates the cooperative-matrix extensions the
# NVIDIA driver offers: it rejects every coopmat shader and every feature struct it does not know,
# so on the H200 it reports errors that are its own. OPENNGX_BUNDLE_LAYER_ROOT names the root of an
# unpacked newer package (`dpkg -x vulkan-validationlayers_1.4.*.deb ROOT`, Debian trixie's needs
# glibc 2.38 and libstdc++ 14); OPENNGX_BUNDLE_LIBSTDCXX a libstdc++.so.6 to carry beside it in
# case the device machine's is older (run.sh uses it only then).
# tools/h200/fetch-layer.sh fetches both to /var/cache/openngx/h200-layer, the default here.
fetched=/var/cache/openngx/h200-layer
root="${OPENNGX_BUNDLE_LAYER_ROOT:-$fetched/layer}"
if [ -z "${OPENNGX_BUNDLE_LIBSTDCXX:-}" ] && [ -z "${OPENNGX_BUNDLE_LAYER_ROOT:-}" ] &&
    [ -f "$fetched/cxx/usr/lib/x86_64-linux-gnu/libstdc++.so.6" ]; then
    OPENNGX_BUNDLE_LIBSTDCXX=$fetched/cxx/usr/lib/x86_64-linux-gnu/libstdc++.so.6
fi
layer=$root/usr/lib/x86_64-linux-gnu/libVkLayer_khronos_validation.so
manifest=$root/usr/share/vulkan/explicit_layer.d/VkLayer_khronos_validation.json
if [ -n "${OPENNGX_BUNDLE_LIBSTDCXX:-}" ]; then
    mkdir -p "$dir/stage/libstdcxx"
    cp -L "$OPENNGX_BUNDLE_LIBSTDCXX" "$dir/stage/libstdcxx/libstdc++.so.6"
fi
if [ ! -f "$layer" ] || [ ! -f "$manifest" ]; then
    # The proofs include a clean validation log: a bundle without a usable layer cannot give one.
    echo "bundle: no validation layer under $root: run tools/h200/fetch-layer.sh (or set OPENNGX_BUNDLE_LAYER_ROOT)" >&2
    exit 1
fi
if [ -f "$layer" ] && [ -f "$manifest" ]; then
    strip -o "$dir/stage/layer/libVkLayer_khronos_validation.so" "$layer"
    # The manifest names the library relative to itself.
    sed 's#"library_path": *"[^"]*"#"library_path": "./libVkLayer_khronos_validation.so"#' "$manifest" \
        >"$dir/stage/layer/VkLayer_khronos_validation.json"
fi
# A baseline CLI to time against in the same call (run.sh part `ab`): OPENNGX_BUNDLE_BASELINE names
# an `openngx` binary of an earlier build (its shaders are inside it), carried as base/openngx.
if [ -n "${OPENNGX_BUNDLE_BASELINE:-}" ]; then
    mkdir -p "$dir/stage/base"
    strip -o "$dir/stage/base/openngx" "$OPENNGX_BUNDLE_BASELINE"
fi
git rev-parse --short HEAD >"$dir/stage/BUILT_FROM"
if [ -n "$(git status --porcelain --untracked-files=no)" ]; then
    echo "+ uncommitted changes" >>"$dir/stage/BUILT_FROM"
fi
tar -C "$dir/stage" -cJf "$dir/bundle.tar.xz" .
rm -rf "$dir/stage"
cp tools/h200/run.sh "$dir/run.sh"
du -sh "$dir"/*
