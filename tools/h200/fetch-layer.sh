#!/usr/bin/env bash
# Fetches a validation layer new enough for the H200's driver, for bundle.sh: Debian trixie's
# vulkan-validationlayers (1.4.309) and the libstdc++ it needs (14), downloaded through apt from
# Debian's registry with a private sources list (nothing on this machine is installed or
# changed), and unpacked under DIR (default /var/cache/openngx/h200-layer):
#   DIR/layer  the package's files (usr/lib/.../libVkLayer_khronos_validation.so, its manifest)
#   DIR/cxx    libstdc++6's files
# bundle.sh takes them from there by default. Debian 12's own layer (1.3.239) predates
# VK_KHR_cooperative_matrix and reports its own errors on the H200 (docs/testing.md, "Pending H200
# proofs").
set -euo pipefail
dir="${1:-/var/cache/openngx/h200-layer}"
suite="${OPENNGX_LAYER_SUITE:-trixie}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/lists/partial" "$work/debs"
echo "deb http://deb.debian.org/debian $suite main" >"$work/sources.list"
apt=(-o "Dir::Etc::SourceList=$work/sources.list" -o Dir::Etc::SourceParts=/dev/null
    -o "Dir::State::Lists=$work/lists" -o APT::Architecture=amd64 -o APT::Architectures=amd64)
apt-get "${apt[@]}" update -qq
(cd "$work/debs" && apt-get "${apt[@]}" download vulkan-validationlayers libstdc++6 2>&1 | grep -v '^W: Download is performed unsandboxed' || true)
layer_deb="$(ls "$work"/debs/vulkan-validationlayers_*.deb)"
cxx_deb="$(ls "$work"/debs/libstdc++6_*.deb)"
rm -rf "$dir.tmp" && mkdir -p "$dir.tmp/layer" "$dir.tmp/cxx"
dpkg -x "$layer_deb" "$dir.tmp/layer"
dpkg -x "$cxx_deb" "$dir.tmp/cxx"
test -f "$dir.tmp/layer/usr/lib/x86_64-linux-gnu/libVkLayer_khronos_validation.so"
test -f "$dir.tmp/cxx/usr/lib/x86_64-linux-gnu/libstdc++.so.6"
rm -rf "$dir" && mv "$dir.tmp" "$dir"
echo "fetch-layer: $(basename "$layer_deb") and $(basename "$cxx_deb") unpacked under $dir"
