#!/usr/bin/env bash
# openngx's NGX Core against NVIDIA's real static library: builds nvidia_sdk_client.cpp with
# NVIDIA's headers (SDK_DIR/include) and libnvsdk_ngx.a (SDK_DIR/lib/Linux_x86_64), puts the Core
# on LD_LIBRARY_PATH as libnvidia-ngx.so.1 and runs the client over the replay fixture
# (Init -> capabilities -> CreateFeature1 -> Evaluate -> Release -> Shutdown1, every frame
# bit-exact). NVIDIA's SDK is not in this repository and nothing of it is copied: its licence
# forbids redistribution. Get it from https://github.com/NVIDIA/DLSS (the 310.1 tag was used).
#
# Then the same for Ray Reconstruction (feature 13): nvidia_sdk_rr_client.cpp creates and evaluates
# it through NVIDIA's DLSSD helpers over an RR fixture (3 frames, 64x48 -> 96x72) that the
# `openngx` CLI writes (synth-model + reference --feature rr; fixture-cache.sh's rr_fixture_dir,
# the one run.sh's core_rr.c replays), every frame bit-exact.
#
# Usage: capi-tests/nvidia-sdk.sh SDK_DIR [CORE_LIB]
#   OPENNGX_NVSDK_PARTS="nr rr" (the default) picks the parts to run.
#   CORE_LIB defaults to $CARGO_TARGET_DIR/debug/libopenngx_core.so (built by ./x build); the
#   model and the fixture are run.sh's (cached beside the library), or OPENNGX_REPLAY_FIXTURE
#   with OPENNGX_MODEL_DIR. OPENNGX_LOG=verbose shows each Core function as the static library
#   calls it.
# Exit status: 0 passed, 77 skipped (no SDK_DIR, or no Vulkan device), anything else failed.
set -u

here="$(cd "$(dirname "$0")" && pwd)"
sdk="${1:-}"
if [ -z "$sdk" ]; then
    echo "nvidia-sdk: skipped (no SDK_DIR given: the NVIDIA DLSS SDK is not redistributable; pass the directory holding include/ and lib/Linux_x86_64/libnvsdk_ngx.a)"
    exit 77
fi
archive="$sdk/lib/Linux_x86_64/libnvsdk_ngx.a"
if [ ! -f "$sdk/include/nvsdk_ngx_vk.h" ] || [ ! -f "$archive" ]; then
    echo "nvidia-sdk: $sdk has no include/nvsdk_ngx_vk.h or lib/Linux_x86_64/libnvsdk_ngx.a" >&2
    exit 2
fi
target="${CARGO_TARGET_DIR:-/var/cache/openngx/target}"
core_lib="${2:-$target/debug/libopenngx_core.so}"
if [ ! -f "$core_lib" ]; then
    echo "nvidia-sdk: the Core $core_lib is missing: build it with ./x build" >&2
    exit 2
fi
if [ -z "${VK_DRIVER_FILES:-}" ] && [ -f /usr/share/vulkan/icd.d/lvp_icd.x86_64.json ] &&
    ! ls /dev/nvidia0 /dev/dri/renderD* >/dev/null 2>&1; then
    export VK_DRIVER_FILES=/usr/share/vulkan/icd.d/lvp_icd.x86_64.json
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/openngx-nvsdk.XXXXXX")"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/ngx-core"
cp "$core_lib" "$work/ngx-core/libnvidia-ngx.so.1"

if [ -n "${OPENNGX_REPLAY_FIXTURE:-}" ]; then
    fixture="$OPENNGX_REPLAY_FIXTURE"
    model="${OPENNGX_MODEL_DIR:-}"
else
    . "$here/fixture-cache.sh"
    cache="$(cache_dir "$target/debug/libopenngx.so")" || exit 2
    fixture="$(fixture_dir "$target/debug/libopenngx.so" "$cache")"
    model="$cache/model"
fi
if [ ! -f "$fixture/manifest.json" ]; then
    echo "nvidia-sdk: no fixture at $fixture" >&2
    exit 2
fi

# NVIDIA's headers are system headers here (their warnings are not ours); the archive needs
# libstdc++ and libdl.
build() { # source output [extra flags]
    c++ -std=c++17 -Wall -Wextra -Werror "${@:3}" -isystem "$sdk/include" -I "$here" "$here/$1" \
        "$archive" -o "$work/$2" -lstdc++ -ldl -lpthread -lvulkan
}
verdict() { # name status
    case "$2" in
        0) echo "nvidia-sdk: $1: PASS" ;;
        77) echo "nvidia-sdk: $1: SKIP" ;;
        *) echo "nvidia-sdk: $1: FAIL (exit $2)" ;;
    esac
}
parts="${OPENNGX_NVSDK_PARTS:-nr rr}"
status=0
if [[ " $parts " == *" nr "* ]]; then
    if ! build nvidia_sdk_client.cpp nvidia-sdk-client; then
        echo "nvidia-sdk: FAIL (build)"
        exit 1
    fi
    echo "nvidia-sdk: client built against $archive; Core $core_lib as libnvidia-ngx.so.1"
    LD_LIBRARY_PATH="$work/ngx-core${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" OPENNGX_MODEL_DIR="$model" \
        "$work/nvidia-sdk-client" "$fixture"
    nr=$?
    verdict "feature 18" "$nr"
    status=$nr
fi
if [[ " $parts " == *" rr "* ]]; then
    # RR's model and fixture, written once per `openngx` binary beside the library (run.sh's).
    . "$here/fixture-cache.sh"
    if ! rr_cache="$(cache_dir "$target/debug/libopenngx.so")" ||
        ! rr_dir="$(rr_fixture_dir "$target/debug/libopenngx.so" "$rr_cache")"; then
        echo "nvidia-sdk: FAIL (RR model or fixture; the CLI $target/debug/openngx writes them: ./x build)"
        exit 1
    fi
    if ! build nvidia_sdk_rr_client.cpp nvidia-sdk-rr-client; then
        echo "nvidia-sdk: FAIL (RR client build)"
        exit 1
    fi
    LD_LIBRARY_PATH="$work/ngx-core${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" OPENNGX_RR_MODEL_DIR="$rr_dir/model" \
        "$work/nvidia-sdk-rr-client" "$rr_dir/fixture"
    rr=$?
    verdict "feature 13" "$rr"
    if [ "$status" -eq 0 ] || [ "$status" -eq 77 ]; then status=$rr; fi
fi
case "$status" in
    0) echo "nvidia-sdk: PASS" ;;
    77) echo "nvidia-sdk: SKIP" ;;
    *) echo "nvidia-sdk: FAIL (exit $status)" ;;
esac
exit "$status"
