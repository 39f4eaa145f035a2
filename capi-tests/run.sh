#!/usr/bin/env bash
# Builds the C/C++ programs of capi-tests/ against include/openngx.h and the given
# libopenngx.so, runs each, runs the leak check under valgrind, checks the NGX Core (its exported
# symbols and soname; core.c, which plays NVIDIA's static library against it, and core_rr.c,
# the same for Ray Reconstruction), and prints
# `N passed, N failed`.
# Usage: capi-tests/run.sh <path-to-libopenngx.so> [<path-to-the-Core>]
#   (e.g. /var/cache/openngx/target/debug/libopenngx.so; the Core, built by ./x from core/,
#   defaults to libopenngx_core.so beside it and is a failure when missing)
# Exit status: 0 when nothing failed. A program exiting 77 counts as skipped (e.g. no Vulkan device).
set -u

if [ $# -lt 1 ] || [ $# -gt 2 ] || [ ! -f "$1" ]; then
    echo "usage: $0 <path-to-libopenngx.so> [<path-to-libopenngx_core.so>]" >&2
    exit 2
fi
core_lib="${2:-$(dirname "$1")/libopenngx_core.so}"
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/openngx-capi.XXXXXX")"
trap 'rm -rf "$work"' EXIT
# A private copy of the library: the shared cargo target directory may be rewritten by another
# build while the tests run.
cp "$1" "$work/libopenngx.so"
# The programs record the library's soname (libopenngx.so.0) and look for that name at run time.
soname="$(readelf -d "$work/libopenngx.so" | sed -n 's/.*(SONAME).*\[\(.*\)\].*/\1/p')"
if [ -n "$soname" ] && [ "$soname" != libopenngx.so ]; then
    ln -s libopenngx.so "$work/$soname"
fi
libdir="$work"
# The Core under the name NVIDIA's static library dlopens, alone in its directory (what
# LD_LIBRARY_PATH points at).
mkdir -p "$work/ngx-core"
[ -f "$core_lib" ] && cp "$core_lib" "$work/ngx-core/libnvidia-ngx.so.1"

cflags=(-Wall -Wextra -Werror -pedantic -I "$root/include" -I "$here")
link=(-L "$libdir" -lopenngx "-Wl,-rpath,$libdir")
passed=0
failed=0
skipped=0

record() { # name status
    case "$2" in
        0) echo "PASS $1"; passed=$((passed + 1)) ;;
        77) echo "SKIP $1"; skipped=$((skipped + 1)) ;;
        *) echo "FAIL $1 (exit $2)"; failed=$((failed + 1)) ;;
    esac
}

build() { # name compiler std source [extra link flags...]
    local name="$1" compiler="$2" std="$3" src="$4"
    shift 4
    if "$compiler" "$std" "${cflags[@]}" "$here/$src" -o "$work/$name" "${link[@]}" "$@" 2>"$work/$name.build.log"; then
        return 0
    fi
    cat "$work/$name.build.log"
    record "$name (build)" 1
    return 1
}

# A program that loads the Core itself: not linked with libopenngx.so (whose public functions
# carry the Core's names).
build_core_program() { # name compiler std source [extra link flags...]
    local name="$1" compiler="$2" std="$3" src="$4"
    shift 4
    if "$compiler" "$std" "${cflags[@]}" "$here/$src" -o "$work/$name" "$@" 2>"$work/$name.build.log"; then
        return 0
    fi
    cat "$work/$name.build.log"
    record "$name (build)" 1
    return 1
}

run() { # name [runner...]
    local name="$1"
    shift
    "$@" "$work/$name"
    record "$name" $?
}

# The header alone, as C99 and C++17 (layout and signature checks).
if cc -std=c99 "${cflags[@]}" -c "$here/layout.c" -o "$work/layout_c.o" && \
   c++ -std=c++17 "${cflags[@]}" -x c++ -c "$here/layout.c" -o "$work/layout_cxx.o"; then
    record "layout (C99 + C++17)" 0
else
    record "layout (C99 + C++17)" 1
fi

# The Core exports exactly the committed list (ngx-abi.md §3.3) and has the soname NVIDIA's
# static library loads.
if [ -f "$work/ngx-core/libnvidia-ngx.so.1" ]; then
    nm -D --defined-only --format=posix "$work/ngx-core/libnvidia-ngx.so.1" | awk '{print $1}' | LC_ALL=C sort >"$work/core-symbols.txt"
    LC_ALL=C sort "$here/core-exported-symbols.txt" >"$work/core-symbols-listed.txt"
    if diff -u "$work/core-symbols-listed.txt" "$work/core-symbols.txt" &&
        readelf -d "$work/ngx-core/libnvidia-ngx.so.1" | grep -q 'SONAME.*\[libnvidia-ngx\.so\.1\]'; then
        record "core symbols + soname" 0
    else
        echo "core: exported symbols (+ above) or soname differ from capi-tests/core-exported-symbols.txt / libnvidia-ngx.so.1"
        record "core symbols + soname" 1
    fi
else
    echo "core: $core_lib not found: build the Core with ./x build (cargo build --manifest-path core/Cargo.toml)"
    record "core (not built)" 1
fi

build misuse cc -std=c99 misuse.c && run misuse
build params c++ -std=c++17 params.cpp && run params
# Feature 13 (DLSS-RR) driven the way NVIDIA's helper functions do (capabilities, optimal
# settings, stats, create refusals and FAIL_NotImplemented until its GPU route is registered).
build rr c++ -std=c++17 rr.cpp && run rr

# The synthetic model and the replay fixture, cached beside the library (fixture-cache.sh).
. "$here/fixture-cache.sh"

# Two broken copies of the model (hard links except the damaged stage file): one stage file cut
# short, and the same file with one byte changed (size right, SHA-256 wrong).
broken_models() { # model_dir
    local file
    file="$(ls -S "$1/model" | tail -n 1)"
    local d
    for d in model-truncated model-badsha; do
        # Hard links where the temporary directory shares the model's file system, else a copy.
        cp -al "$1" "$work/$d" 2>/dev/null || { rm -rf "${work:?}/$d" && cp -a "$1" "$work/$d"; } || return 1
    done
    rm -f "$work/model-truncated/model/$file" "$work/model-badsha/model/$file"
    head -c 1000 "$1/model/$file" >"$work/model-truncated/model/$file" || return 1
    cp "$1/model/$file" "$work/model-badsha/model/$file" || return 1
    local byte
    byte="$(od -An -tu1 -j 100 -N 1 "$1/model/$file" | tr -d ' ')"
    printf "\\$(printf '%03o' $((255 - byte)))" |
        dd of="$work/model-badsha/model/$file" bs=1 seek=100 conv=notrunc status=none || return 1
    printf '%s\n' "$file"
}

# The device programs run with the validation layer's synchronization validation: within each
# command buffer (vk_app.h asks for it through VK_EXT_validation_features) and between
# submissions (this setting; the layer reads it at vkCreateInstance). OPENNGX_CAPI_NO_SYNC=1 turns
# both off.
if [ -z "${OPENNGX_CAPI_NO_SYNC:-}" ]; then
    export VK_LAYER_ENABLES="${VK_LAYER_ENABLES:-VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT:VALIDATION_CHECK_ENABLE_SYNCHRONIZATION_VALIDATION_QUEUE_SUBMIT}"
fi

if cache="$(cache_dir "$1")" && broken="$(broken_models "$cache/model")"; then
    export OPENNGX_CAPI_MODEL="$cache/model"
    export OPENNGX_CAPI_MODEL_TRUNCATED="$work/model-truncated"
    export OPENNGX_CAPI_MODEL_BADSHA="$work/model-badsha"
    export OPENNGX_CAPI_BROKEN_FILE="$broken"
    build device cc -std=c99 device.c -lvulkan && run device
    # The full lifecycle three times under LeakSanitizer (native speed; valgrind would spend
    # minutes in lavapipe's shader compiler). The driver is preloaded so that it stays mapped
    # after vkDestroyInstance: LeakSanitizer then sees what the driver still references from its
    # globals as reachable and can name it; leaks inside the driver, its compiler and the loader
    # are not ours and are suppressed by module. Everything else must be freed. The validation
    # layer (unloaded at vkDestroyInstance, not preloadable) is off here; the other programs run
    # with it.
    printf 'leak:libvulkan_lvp.so\nleak:libLLVM\nleak:libvulkan.so\n' >"$work/lsan.supp"
    driver=""
    if [ -n "${VK_DRIVER_FILES:-}" ] && [ -f "${VK_DRIVER_FILES%%:*}" ]; then
        driver="$(sed -n 's/.*"library_path" *: *"\([^"]*\)".*/\1/p' "${VK_DRIVER_FILES%%:*}" | head -n 1)"
        case "$driver" in
            /*) [ -f "$driver" ] || driver="" ;;
            *) driver="" ;;
        esac
    fi
    if build cycle cc -std=c99 cycle.c -lvulkan -fsanitize=leak; then
        OPENNGX_CAPI_NO_VALIDATION=1 LD_PRELOAD="$driver" \
            LSAN_OPTIONS="suppressions=$work/lsan.supp:print_suppressions=0" run cycle
    fi
    # Captured-frame replay (replay.c): 64x64, OPENNGX_REPLAY_FRAMES (default 3) frames of the
    # synthetic scene written by the CPU reference, replayed through the C ABI and compared bit
    # for bit. Set OPENNGX_REPLAY_FIXTURE (and OPENNGX_MODEL_DIR) to replay another fixture.
    if [ -n "${OPENNGX_REPLAY_FIXTURE:-}" ]; then
        replay_model="${OPENNGX_MODEL_DIR:-}"
        replay_dir="$OPENNGX_REPLAY_FIXTURE"
    else
        replay_model="$cache/model"
        replay_dir="$(fixture_dir "$1" "$cache")"
    fi
    if [ -f "$replay_dir/manifest.json" ] && build replay cc -std=c99 replay.c -lvulkan; then
        OPENNGX_MODEL_DIR="$replay_model" "$work/replay" "$replay_dir"
        record replay $?
    elif [ ! -f "$replay_dir/manifest.json" ]; then
        record "replay (fixture)" 1
    fi
    # The same replay with the window blocks run as strips of 1 MiB per band
    # (OPENNGX_STRIP_BUDGET_MIB; at 64x64 the default budget makes none): 46 blocks band by band,
    # block outputs written in place of their inputs, the field block's over the features. The
    # creation's log line must name the strips.
    if [ -f "$replay_dir/manifest.json" ] && [ -x "$work/replay" ]; then
        OPENNGX_LOG=1 OPENNGX_STRIP_BUDGET_MIB=1 OPENNGX_MODEL_DIR="$replay_model" \
            "$work/replay" "$replay_dir" 2>"$work/replay-strips.log"
        status=$?
        if ! grep -Eq ' [1-9][0-9]* window blocks in strips of [1-9]' "$work/replay-strips.log"; then
            echo "replay (strips): no window blocks in strips in the creation log:"
            tail -n 20 "$work/replay-strips.log"
            status=1
        fi
        record "replay (strips)" $status
    fi
    # The NGX Core as NVIDIA's static library uses it (core.c): loaded by name through
    # LD_LIBRARY_PATH, unloaded and loaded again, frame 0 of the same fixture bit-exact.
    if [ -f "$work/ngx-core/libnvidia-ngx.so.1" ] && [ -f "$replay_dir/manifest.json" ] &&
        build_core_program core cc -std=c99 core.c -ldl -lvulkan; then
        LD_LIBRARY_PATH="$work/ngx-core${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" OPENNGX_MODEL_DIR="$replay_model" \
            "$work/core" "$replay_dir"
        record core $?
    fi
    # Feature 13 (Ray Reconstruction) through the Core (core_rr.c): the calls NVIDIA's static
    # library makes for a game's DLSSD helpers, over RR's fixture (3 frames 64x48 -> 96x72 of
    # RR's CPU reference, cached beside the NR one), each Output byte for byte, the depth in
    # D32_SFLOAT, a missing required input refused.
    if [ -f "$work/ngx-core/libnvidia-ngx.so.1" ]; then
        if ! rr_dir="$(rr_fixture_dir "$1" "$cache")"; then
            record "core-rr (RR model and fixture)" 1
        elif build_core_program core-rr cc -std=c99 core_rr.c -ldl -lvulkan; then
            LD_LIBRARY_PATH="$work/ngx-core${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" OPENNGX_RR_MODEL_DIR="$rr_dir/model" \
                "$work/core-rr" "$rr_dir/fixture"
            record core-rr $?
        fi
    fi
else
    record "device programs (model)" 1
fi
if build leak cc -std=c99 leak.c; then
    if command -v valgrind >/dev/null 2>&1; then
        run leak valgrind -q --leak-check=full --error-exitcode=1
    else
        echo "valgrind not found: running the leak program without it"
        run leak
    fi
fi

echo "$skipped skipped"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
