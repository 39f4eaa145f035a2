#!/usr/bin/env bash
# `./x install` into a temporary prefix, checked as a user of the installed C library sees it:
# the file layout (library, soname links, header, pkg-config file, CLI, the NGX Core in its
# private directory when this tree builds one), the soname, the exported symbols of the installed
# file against capi-tests/exported-symbols.txt, a C program (installed.c) built with nothing but
# `pkg-config --cflags --libs openngx` and run (it reaches the installed model data directory),
# the installed `openngx doctor`'s view of the Core's search, and a DESTDIR staging install.
# Usage: capi-tests/install.sh   (run by ./x test; uses ./x install, which builds what is missing)
# Prints `N passed, N failed`; exit status 0 when nothing failed.
set -u

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
# Physical path: the library reports its own location with symlinks resolved.
work="$(cd "$(mktemp -d "${TMPDIR:-/tmp}/openngx-install.XXXXXX")" && pwd -P)"
trap 'rm -rf "$work"' EXIT
prefix="$work/prefix"
passed=0
failed=0

check() { # description command...
    local what="$1"
    shift
    if "$@" >"$work/check.log" 2>&1; then
        echo "PASS install: $what"
        passed=$((passed + 1))
    else
        echo "FAIL install: $what"
        sed 's/^/    /' "$work/check.log"
        failed=$((failed + 1))
    fi
}

link_is() { # link target
    [ -L "$1" ] && [ "$(readlink "$1")" = "$2" ]
}

soname_is() { # file soname
    readelf -d "$1" | grep -F "(SONAME)" | grep -qF "[$2]"
}

same_symbols() { # library list
    diff <(nm -D --defined-only --format=posix "$1" | awk '{print $1}' | sort) \
        <(grep -v '^[[:space:]]*$' "$2" | sort)
}

version="$(sed -n '/^\[package\]/,/^\[/s/^version *= *"\(.*\)"/\1/p' "$root/Cargo.toml" | head -n 1)"
major="${version%%.*}"

if ! "$root/x" install "$prefix" >"$work/install.log" 2>&1; then
    cat "$work/install.log"
    echo "FAIL install: ./x install $prefix"
    echo "0 passed, 1 failed"
    exit 1
fi
sed 's/^/    /' "$work/install.log" | grep -v '^    *\(Compiling\|Finished\|Blocking\)' || true
lib="$prefix/lib"

check "lib/libopenngx.so.$version is a file" \
    bash -c "[ -f '$lib/libopenngx.so.$version' ] && [ ! -L '$lib/libopenngx.so.$version' ]"
check "readelf: its SONAME is libopenngx.so.$major" soname_is "$lib/libopenngx.so.$version" "libopenngx.so.$major"
check "lib/libopenngx.so.$major -> libopenngx.so.$version" link_is "$lib/libopenngx.so.$major" "libopenngx.so.$version"
check "lib/libopenngx.so -> libopenngx.so.$major" link_is "$lib/libopenngx.so" "libopenngx.so.$major"
check "the installed library exports exactly capi-tests/exported-symbols.txt" \
    same_symbols "$lib/libopenngx.so.$version" "$here/exported-symbols.txt"
check "include/openngx/openngx.h is include/openngx.h" cmp "$root/include/openngx.h" "$prefix/include/openngx/openngx.h"
check "bin/openngx runs (version $version)" bash -c "'$prefix/bin/openngx' --version | grep -qx 'openngx $version'"

# The NGX Core: in lib/openngx/ only, never on the default search path.
check "no libnvidia-ngx.so* directly in lib/" bash -c "! ls '$lib'/libnvidia-ngx.so* >/dev/null 2>&1"
if [ -f "$root/core/Cargo.toml" ]; then
    check "lib/openngx/libnvidia-ngx.so.1 with soname libnvidia-ngx.so.1" \
        soname_is "$lib/openngx/libnvidia-ngx.so.1" libnvidia-ngx.so.1
    if [ -f "$here/core-exported-symbols.txt" ]; then
        check "the installed Core exports exactly capi-tests/core-exported-symbols.txt" \
            same_symbols "$lib/openngx/libnvidia-ngx.so.1" "$here/core-exported-symbols.txt"
    fi
else
    echo "SKIP install: lib/openngx/libnvidia-ngx.so.1 (this tree has no Core build, core/)"
fi

# pkg-config, as a user's build would call it.
export PKG_CONFIG_PATH="$lib/pkgconfig"
check "pkg-config --modversion openngx = $version" bash -c "[ \"\$(pkg-config --modversion openngx)\" = '$version' ]"
check "pkg-config --libs openngx = -L$lib -lopenngx" bash -c "[ \"\$(pkg-config --libs openngx | xargs)\" = '-L$lib -lopenngx' ]"
check "pkg-config --cflags openngx has -I$prefix/include/openngx" \
    bash -c "pkg-config --cflags openngx | tr ' ' '\n' | grep -qx -- '-I$prefix/include/openngx'"
check "pkg-config --variable=coredir openngx = $lib/openngx" \
    bash -c "[ \"\$(pkg-config --variable=coredir openngx)\" = '$lib/openngx' ]"

build_program() {
    # shellcheck disable=SC2046 # pkg-config's output is a list of words
    cc -std=c99 -Wall -Wextra -Werror "$here/installed.c" -o "$work/installed" \
        $(pkg-config --cflags --libs openngx) "-Wl,-rpath,$(pkg-config --variable=libdir openngx)"
}
needs_soname() {
    readelf -d "$work/installed" | grep -F "(NEEDED)" | grep -qF "[libopenngx.so.$major]"
}
data="$work/data"
app="$work/app"
mkdir -p "$app"
if check "cc installed.c \$(pkg-config --cflags --libs openngx)" build_program; then
    check "the program records NEEDED libopenngx.so.$major" needs_soname
    # No model anywhere: the refusal lists the whole search, ending with the installed data
    # directory the library derived from its own (symlinked) path.
    check "run: loads the installed file, answers, and searches the prefix's model directory" \
        env -u OPENNGX_MODEL_DIR XDG_DATA_HOME="$data" "$work/installed" "$lib/libopenngx.so.$major" "$app" \
        "tried: $lib/openngx-model" "$app/openngx-model" "$data/openngx/model" \
        "$prefix/share/openngx/model"
    # An empty installed model directory is found, and refused (the check runs before any Vulkan).
    mkdir -p "$prefix/share/openngx/model"
    check "run: the installed data directory is the one found when it is the only one" \
        env -u OPENNGX_MODEL_DIR XDG_DATA_HOME="$data" "$work/installed" "$lib/libopenngx.so.$major" "$app" \
        "model directory $prefix/share/openngx/model is invalid"
    rmdir "$prefix/share/openngx/model" "$prefix/share/openngx" "$prefix/share"
fi

# The installed doctor describes the installed Core's search (whatever the Vulkan verdict).
doctor_lists() {
    local out
    out="$(env -u OPENNGX_MODEL_DIR XDG_DATA_HOME="$data" "$prefix/bin/openngx" doctor --no-verify 2>&1)"
    local present="not there"
    [ -f "$root/core/Cargo.toml" ] && present="present"
    printf '%s\n' "$out" | grep -F "model search of an unmodified game's Core, $lib/openngx/libnvidia-ngx.so.1 ($present" &&
        printf '%s\n' "$out" | grep -F "1. next to the library: $lib/openngx/openngx-model (not found)" &&
        printf '%s\n' "$out" | grep -F "4. user data directory: $data/openngx/model (not found)" &&
        printf '%s\n' "$out" | grep -F "5. installed data directory: $prefix/share/openngx/model (not found)"
}
check "installed openngx doctor shows the Core's search under the prefix" doctor_lists

# Staged install (packagers): files under DESTDIR, the .pc file naming the final prefix.
staged() {
    DESTDIR="$work/stage" "$root/x" install /opt/openngx-test >/dev/null 2>&1 &&
        grep -qx 'prefix=/opt/openngx-test' "$work/stage/opt/openngx-test/lib/pkgconfig/openngx.pc" &&
        link_is "$work/stage/opt/openngx-test/lib/libopenngx.so.$major" "libopenngx.so.$version" &&
        [ ! -e /opt/openngx-test ]
}
check "DESTDIR=STAGE ./x install /opt/openngx-test stages under STAGE" staged

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
