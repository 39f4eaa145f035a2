#!/usr/bin/env bash
# Builds the C/C++ programs of capi-tests/ against include/openngx.h and the given
# libopenngx.so, runs each, runs the leak check under valgrind, and prints `N passed, N failed`.
# Usage: capi-tests/run.sh <path-to-libopenngx.so>   (e.g. /var/cache/openngx/target/debug/libopenngx.so)
# Exit status: 0 when nothing failed. A program exiting 77 counts as skipped (e.g. no Vulkan device).
set -u

if [ $# -ne 1 ] || [ ! -f "$1" ]; then
    echo "usage: $0 <path-to-libopenngx.so>" >&2
    exit 2
fi
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/openngx-capi.XXXXXX")"
trap 'rm -rf "$work"' EXIT
# A private copy of the library: the shared cargo target directory may be rewritten by another
# build while the tests run.
cp "$1" "$work/libopenngx.so"
libdir="$work"

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

build misuse cc -std=c99 misuse.c && run misuse
build params c++ -std=c++17 params.cpp && run params
build device cc -std=c99 device.c -lvulkan && run device
# Captured-frame replay (replay.c): a small fixture written by the CPU reference (64x64, three
# frames of the synthetic scene on the synthetic model), replayed through the C ABI and compared
# bit for bit. Generating it takes minutes on a small machine, so it is made once per `openngx`
# binary and kept beside the library (OPENNGX_FIXTURE_CACHE overrides the place). Set
# OPENNGX_REPLAY_FIXTURE (and OPENNGX_MODEL_DIR) to replay an existing fixture instead, or
# OPENNGX_REPLAY_FRAMES to change the number of frames (each takes lavapipe minutes).
replay_fixture() { # prints the model directory and the fixture directory, one per line
    if [ -n "${OPENNGX_REPLAY_FIXTURE:-}" ]; then
        printf '%s\n%s\n' "${OPENNGX_MODEL_DIR:-}" "$OPENNGX_REPLAY_FIXTURE"
        return 0
    fi
    local bin
    bin="$(dirname "$1")/openngx"
    if [ ! -x "$bin" ]; then
        echo "replay: no openngx binary beside the library ($bin): build it (cargo build --bins)" >&2
        return 1
    fi
    local cache="${OPENNGX_FIXTURE_CACHE:-$(dirname "$1")/openngx-capi-fixtures}"
    local key
    key="$(sha256sum "$bin" | cut -c1-16)"
    local frames="${OPENNGX_REPLAY_FRAMES:-3}"
    local dir="$cache/$key-f$frames"
    mkdir -p "$cache" || return 1
    # Only the current binary's fixture is kept.
    find "$cache" -mindepth 1 -maxdepth 1 ! -name "$key-*" -exec rm -rf {} + 2>/dev/null
    mkdir -p "$dir" || return 1
    if [ ! -f "$dir/model/manifest.json" ]; then
        "$bin" synth-model --out "$dir/model" >&2 || return 1
    fi
    if [ ! -f "$dir/fixture/manifest.json" ]; then
        echo "replay: writing the fixture with the CPU reference (takes a few minutes)..." >&2
        "$bin" reference --model "$dir/model" --synthetic-scene --width 64 --height 64 --frames "$frames" \
            --out "$dir/fixture" >&2 || return 1
    fi
    printf '%s\n%s\n' "$dir/model" "$dir/fixture"
}
if build replay cc -std=c99 replay.c -lvulkan; then
    if fx="$(replay_fixture "$1")" && [ -n "$fx" ]; then
        { read -r replay_model; read -r replay_dir; } <<<"$fx"
        OPENNGX_MODEL_DIR="$replay_model" "$work/replay" "$replay_dir"
        record replay $?
    else
        record "replay (fixture)" 1
    fi
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
