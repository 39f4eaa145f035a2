# Sourced by run.sh and nvidia-sdk.sh: the synthetic model and the captured-frame fixture the
# device programs compare against, made once per `openngx` binary and kept beside the library
# (OPENNGX_FIXTURE_CACHE overrides the place). Writing the fixture runs the CPU reference:
# minutes on a small machine, once.

cache_dir() { # prints the cache directory of the current openngx binary
    local bin
    bin="$(dirname "$1")/openngx"
    if [ ! -x "$bin" ]; then
        echo "capi: no openngx binary beside the library ($bin): build it (cargo build --bins)" >&2
        return 1
    fi
    local cache="${OPENNGX_FIXTURE_CACHE:-$(dirname "$1")/openngx-capi-fixtures}"
    local key
    key="$(sha256sum "$bin" | cut -c1-16)"
    mkdir -p "$cache" || return 1
    # Only the current binary's files are kept.
    find "$cache" -mindepth 1 -maxdepth 1 ! -name "$key" -exec rm -rf {} + 2>/dev/null
    mkdir -p "$cache/$key" || return 1
    if [ ! -f "$cache/$key/model/manifest.json" ]; then
        "$bin" synth-model --out "$cache/$key/model" >&2 || return 1
    fi
    printf '%s\n' "$cache/$key"
}

# Prints the fixture directory of OPENNGX_REPLAY_FRAMES (default 3) frames of the synthetic
# scene at 64x64 under the cache directory, writing it first when missing.
fixture_dir() { # library cache_dir
    local frames="${OPENNGX_REPLAY_FRAMES:-3}"
    local dir="$2/fixture-f$frames"
    if [ ! -f "$dir/manifest.json" ]; then
        echo "replay: writing the fixture with the CPU reference (takes a few minutes)..." >&2
        "$(dirname "$1")/openngx" reference --model "$2/model" --synthetic-scene --width 64 --height 64 \
            --frames "$frames" --out "$dir" >&2 || rm -rf "$dir"
    fi
    printf '%s\n' "$dir"
}

# Prints the directory of Ray Reconstruction's synthetic model (model/) and a fixture of 3 frames
# of the synthetic scene at 64x48 -> 96x72 written by RR's CPU reference (fixture/) under the
# cache directory, writing them first when missing (core_rr.c and the NVIDIA SDK's RR client
# replay it).
rr_fixture_dir() { # library cache_dir
    local bin dir="$2/rr-64x48-96x72-f3"
    bin="$(dirname "$1")/openngx"
    if [ ! -f "$dir/fixture/manifest.json" ]; then
        rm -rf "$dir"
        mkdir -p "$dir" || return 1
        echo "core-rr: writing the RR model and fixture with the CPU reference..." >&2
        if ! "$bin" synth-model --feature rr --out "$dir/model" >&2 ||
            ! "$bin" reference --feature rr --model "$dir/model" --synthetic-scene --width 64 --height 48 \
                --out-width 96 --out-height 72 --frames 3 --out "$dir/fixture" >&2; then
            rm -rf "$dir"
            return 1
        fi
    fi
    printf '%s\n' "$dir"
}
