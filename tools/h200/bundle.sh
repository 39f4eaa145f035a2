#!/usr/bin/env bash
# Packs what the pending H200 proofs need into DIR (default .devcarry-h200, git-ignored through
# .git/info/exclude as docs/testing.md says): the stripped test binaries and CLI of this
# checkout's dev build, the validation layer of this machine (the device machine has none), and
# run.sh. Build first (`./x build`). Then, with the device tool, carry [".gl", DIR] and run
#   for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig; cd DIR && ./run.sh PART
# where PART is one of the parts run.sh lists (each fits one 10-minute call). docs/testing.md,
# "Pending H200 proofs", says what each part proves.
set -euo pipefail
cd "$(dirname "$0")/../.."
dir="${1:-.devcarry-h200}"
target="${CARGO_TARGET_DIR:-/var/cache/openngx/target}"
tests=(feature_soak feature_nr gpu_frame gpu_rr rr_replay)
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
layer=/usr/lib/x86_64-linux-gnu/libVkLayer_khronos_validation.so
manifest=/usr/share/vulkan/explicit_layer.d/VkLayer_khronos_validation.json
if [ -f "$layer" ] && [ -f "$manifest" ]; then
    strip -o "$dir/stage/layer/libVkLayer_khronos_validation.so" "$layer"
    # The manifest names the library relative to itself.
    sed 's#"library_path": *"[^"]*"#"library_path": "./libVkLayer_khronos_validation.so"#' "$manifest" \
        >"$dir/stage/layer/VkLayer_khronos_validation.json"
fi
git rev-parse --short HEAD >"$dir/stage/BUILT_FROM"
tar -C "$dir/stage" -cJf "$dir/bundle.tar.xz" .
rm -rf "$dir/stage"
cp tools/h200/run.sh "$dir/run.sh"
du -sh "$dir"/*
