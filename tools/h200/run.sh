#!/usr/bin/env bash
# Runs on the device machine (an H200) from the folder bundle.sh made: ./run.sh PART..., logs and
# a summary under $OUT. PACK=FILE, for a call that brings back few files (the device tool returns
# at most 8) and may be cut short: the logs go to a folder of their own (LOGS, a fresh temporary
# one by default) and are packed into FILE after every run; $OUT then gets FILE and summary.txt. Each part fits one 10-minute call; every test requires the device
# (OPENNGX_TEST_REQUIRE_DEVICE=1: a missing driver fails instead of skipping), under the carried
# validation layer with synchronization validation where the harness turns it on.
#   life    #16: the large soak, four threads at large sizes, lifetimes, feature_nr, gpu_frame
#   soak    #16: the large soak alone
#   soak_nolayer  #16: its pass without the validation layer alone
#   gemmnorm #14: the default tensor route and the normalisation in the QKV GEMM (--fusion
#           gemm): --check at 512x512 and 1080p, times of both routes and both fusions, replay
#   gemmnorm_min  the least of it: the fused GEMM's bytes at 512x512 and 1080p, times
#   fusion  #14: the window normalisation in the attention's staging (--fusion attention): --check at three
#           sizes, times with and without it and without strips, the C-ABI replay
#   fusion_min  the least of it: --check at 512x512 and 1080p, the 1080p times
#   ffn     #14: each window block's ffn1 and ffn2 as one kernel (--fusion ffn, the default):
#           --check at 512x512 and 1080p, the 1080p and 4K times against --fusion off, the
#           C-ABI replay with OPENNGX_FUSION=ffn
#   block   #14: each C = 32 block's attention half as one kernel (--fusion block): gpu_gemm
#           (the kernel against the four ops among them), --check at 512x512 and 1080p, the 1080p and 4K
#           times against --fusion ffn (the default), the C-ABI replay with OPENNGX_FUSION=block
#   block_min  the least of block (a call with little device time left): the kernel tests
#           (attention half, FFN pair), --check at 512x512 (both routes) and 1080p with
#           --fusion block and at 1080p by default, the 1080p and 4K times, both replays
#   strips  #14: window blocks in strips (strips_check: bytes; strips_time: times and replays)
#   budget  #14: the default strips' band-local bytes per field token (`--strips per-token:N`):
#           the frame times at 1080p (32, 40, 48, 64) and 4K (32, 40, 48), this build's
#           default (`auto`) among them, and its bytes at 1080p
#   tensor  #14: exact and tensor routes, --check at 512x512, 1280x720, 1920x1080; times at
#           2560x1440 and 3840x2160
#   rr      #17: gpu_rr op by op (small and 1280x720 -> 3840x2160), layer timings at 720p and
#           1080p -> 4K, the C-ABI replay, bench --feature rr --check, rr_dynamic
#   replay  #14: the C harness's replay of each carried fixture through the public C ABI (an
#           h25 fixture on the tensor route, an f13 one on the exact route)
#   profile #14: the tensor route's per-op profile and pipeline statistics at 1920x1080
#   core    #15/#17: the NGX Core as NVIDIA's static library drives it (capi-tests/core.c, frame 0
#           of a 64x64 fixture in two lives; core_rr.c, RR's 3-frame fixture), both fixtures
#           written on the device by the CPU reference
#   rr_dynamic  #17: the dynamic-resolution test alone
#   checks  #14: the tensor route's bytes after a kernel change: the numerics, GEMM (the fused
#           kernels' among them), attention and elementwise tests, --check at 512x512 (both
#           routes), 1280x720 and 1080p, both fusions at 512x512, the C-ABI replay (about 3.5
#           minutes)
#   checks_min  the least of checks after a small kernel change: the attention tests, --check at
#           512x512 and 1080p on the tensor route, the C-ABI replay (about 1.5 minutes)
#   ab      #14: times of this build against base/openngx (OPENNGX_BUNDLE_BASELINE) in one call,
#           1080p and 4K, with this build's per-op profile, and the 1080p frame times alone
#   arith   #14, branch tensor-arith (session 31): what the branch owes, most needed first, for a short
#           call: gpu_numerics and gpu_attention (the table-free attention's forms and kernels),
#           the 1080p frame times of base/openngx, this build and `--fusion ffn-gemm`, --check at
#           1080p with both fusions, the C-ABI replay, the 4K times, --check at 512x512 (both
#           routes), gpu_gemm (the C = 32 attention block); about 4 minutes
#   table   #14: the tensor route's frame times at 512x512, 720p, 1080p, 1440p and 4K, this
#           build and base/openngx alternately (OPENNGX_BUNDLE_BASELINE)
#   floor   #14: the launch floor (`bench --timing floor`: the frame's launches and barriers with
#           empty kernels) beside the frame time at the five sizes, and at 1080p without strips
#           and with --fusion block
#   floor_min  the least of floor (little device time left): 1080p and 4K, and 1080p without
#           strips, the floor first
#   issue   #14's table: both routes in one run (`--timing frame`, 20 frames) at 512x512, 720p,
#           1080p, 1440p and 4K, the tensor route at 1080p and 4K in the strips' earlier
#           budget (--strips per-token:40), the 1080p launch floor, 4K without strips, the
#           tensor route's 1080p per-op profile with pipeline statistics, and both routes'
#           `--check` at 720p and 1080p (the bytes against the CPU reference, and the tensor
#           route against the exact one: bytes per boundary, head PSNR)
#   replay_large  #14: the C harness's replay of a 3-frame h25 fixture written on the device by the
#           CPU reference (REPLAY_SIZE=WxH, 1920x1080 by default): the tensor route in the
#           feature's own strips through the public C ABI (about 4 minutes at 1080p)
#   parity  the exact route on a 3-frame h25 fixture written on the device by the CPU reference
#           (`parity --route gpu`; the carried fixtures are the C harness's, without the
#           features parity reads); PARITY_SIZE=WxH, 512x512 by default
set -u
[ $# -gt 0 ] || { echo "usage: run.sh PART... (life soak soak_nolayer gemmnorm gemmnorm_min fusion fusion_min ffn block block_min budget tensor strips strips_check strips_time rr replay profile rr_dynamic core checks checks_min ab arith table floor floor_min issue replay_large parity)" >&2; exit 2; }
OUT="${OUT:-$PWD/out}"
LOG="$OUT"
if [ -n "${PACK:-}" ]; then LOG="${LOGS:-$(mktemp -d)}"; fi
mkdir -p "$OUT" "$LOG" b && tar -C b -xJf bundle.tar.xz && cd b
export OPENNGX_TEST_REQUIRE_DEVICE=1
# Newer layers read their settings from these variables; VK_LAYER_ENABLES (the harness) is the
# older form, kept for 1.3.239. Both ask for synchronization validation.
export VK_KHRONOS_VALIDATION_VALIDATE_SYNC=true
if [ -d layer ]; then
    export VK_LAYER_PATH=$PWD/layer
    # A newer layer needs a newer libstdc++ than an older machine has: take the carried one then.
    need="$(grep -a -o 'GLIBCXX_3\.4\.[0-9]*' layer/libVkLayer_khronos_validation.so | sort -uV | tail -n 1)"
    have="$(ldconfig -p | awk '/libstdc\+\+\.so\.6 .*x86-64/ {print $NF; exit}')"
    if [ -d libstdcxx ] && [ -n "$need" ] && ! grep -a -q "$need" "${have:-/nonexistent}" 2>/dev/null; then
        export LD_LIBRARY_PATH=$PWD/libstdcxx${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    fi
fi
# The device tool's machines keep NVIDIA's manifest off the loader's search path. A driver the
# caller names stays (a dry run of a part on lavapipe).
if [ -z "${VK_DRIVER_FILES:-}" ] && ! ls /usr/share/vulkan/icd.d/nvidia_icd.json /etc/vulkan/icd.d/nvidia_icd.json >/dev/null 2>&1; then
    export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
fi
{ cat BUILT_FROM; grep -h '"api_version"' layer/*.json; echo "LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}"; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } >"$LOG/gpu.txt" 2>&1
run() { # name seconds command...
    local n=$1 t=$2 s=$SECONDS
    shift 2
    timeout "$t" "$@" >"$LOG/$n.log" 2>&1
    echo "$n rc=$? $((SECONDS - s)) s" | tee -a "$LOG/summary.txt"
    if [ -n "${PACK:-}" ]; then
        tar -C "$LOG" -czf "$PACK" .
        [ "$LOG" = "$OUT" ] || cp "$LOG/summary.txt" "$OUT/summary.txt"
    fi
}
# The C harness's replay of each carried fixture through the public C ABI (the model
# synthesised first); nothing where the bundle carries none.
replay_fixtures() {
    ls -d fixtures/*/ >/dev/null 2>&1 || return 0
    [ -f model/manifest.json ] || run synth_model 120 ./openngx synth-model --out model
    for fx in fixtures/*/; do
        run "replay_$(basename "$fx")" 120 env OPENNGX_MODEL_DIR="$PWD/model" ./replay "$fx"
    done
}
# A 3-frame h25 fixture of size WxH ($1) at fx_h25_WxH, written here by the CPU reference (the
# model synthesised first), once per call: replay_large and parity share it.
h25_fixture() {
    [ -f model/manifest.json ] || run synth_model 120 ./openngx synth-model --out model
    [ -d "fx_h25_$1" ] ||
        run "fixture_h25_$1" 300 ./openngx reference --model model --synthetic-scene --width "${1%x*}" --height "${1#*x}" --frames 3 --profile h25 --out "fx_h25_$1"
}
for part in "$@"; do
case "$part" in
life|soak)
    # soak: the large soak alone (one call of its own).
    if [ "$part" = life ]; then
    # Shortest first: a call cut short by the session's device time keeps what finished.
    run gpu_frame 60 ./gpu_frame --nocapture
    run lifetimes 60 env OPENNGX_SOAK_CYCLES=4 ./feature_soak a_ stale frames_in_flight --test-threads=1 --nocapture
    run feature_nr 120 ./feature_nr --test-threads=1 --nocapture
    run threads_large 90 env OPENNGX_SOAK=large ./feature_soak four_threads --test-threads=1 --nocapture
    fi
    # 7 warm-up cycles (one per size) and 93 timed ones: 100 in each of the soak's two passes
    # (under the layer, then without it), about 3 minutes each.
    run soak_large 450 env OPENNGX_SOAK=large OPENNGX_SOAK_CYCLES=93 ./feature_soak soak_create --test-threads=1 --nocapture
    ;;
tensor)
    for s in 512x512 1280x720 1920x1080; do
        run "bench_$s" 150 ./openngx bench --width "${s%x*}" --height "${s#*x}" --frames 20 --route exact,tensor --check
    done
    for s in 2560x1440 3840x2160; do
        run "bench_$s" 120 ./openngx bench --width "${s%x*}" --height "${s#*x}" --frames 20 --route exact,tensor
    done
    ;;
strips|strips_check|strips_time)
    # The window blocks in strips (docs/performance.md, "Memory: window blocks in strips"): the
    # bytes of both routes in the exact route's default strips and the tensor route in the same
    # budget (67.5 MiB at 1080p), then what the launches cost against no strips.
    # strips = strips_check (the bytes, about 6 minutes) then strips_time (the times and the
    # replays): two calls of the device tool's 10 minutes.
    if [ "$part" != strips_time ]; then
    for s in 512x512 1280x720 1920x1080; do
        run "strips_auto_$s" 150 ./openngx bench --width "${s%x*}" --height "${s#*x}" --frames 5 --route exact,tensor --check --strips auto
        run "strips_budget_$s" 150 ./openngx bench --width "${s%x*}" --height "${s#*x}" --frames 5 --route exact,tensor --check --strips 70778880
    done
    fi
    [ "$part" = strips_check ] && continue
    for b in off auto 70778880 134217728; do
        run "strips_time_1920x1080_$b" 90 ./openngx bench --width 1920 --height 1080 --frames 20 --route exact,tensor --strips "$b"
    done
    for b in off auto 283115520; do
        run "strips_time_3840x2160_$b" 120 ./openngx bench --width 3840 --height 2160 --frames 20 --route exact,tensor --strips "$b"
    done
    # Through the C ABI in strips of 1 MiB (each fixture on its own route: the h25 one on the
    # tensor route), outputs in place of inputs as a feature runs them.
    if ls -d fixtures/*/ >/dev/null 2>&1; then
        [ -f model/manifest.json ] || run synth_model 120 ./openngx synth-model --out model
        for fx in fixtures/*/; do
            n="$(basename "$fx")"
            run "replay_strips_$n" 120 env OPENNGX_LOG=1 OPENNGX_STRIP_BUDGET_MIB=1 OPENNGX_MODEL_DIR="$PWD/model" ./replay "$fx"
        done
    fi
    ;;
rr)
    run gpu_rr 120 ./gpu_rr --nocapture
    run gpu_rr_720p_4k 200 env OPENNGX_RR_GPU_SIZE=1280x720:3840x2160 OPENNGX_RR_GPU_FRAMES=3 ./gpu_rr --nocapture gpu_route_matches
    run timings_720p 60 env OPENNGX_RR_GPU_TIMINGS=1280x720:3840x2160 ./gpu_rr --nocapture layer_timings
    run timings_1080p 60 env OPENNGX_RR_GPU_TIMINGS=1920x1080:3840x2160 ./gpu_rr --nocapture layer_timings
    run rr_replay 60 ./rr_replay --nocapture
    run bench_rr 120 ./openngx bench --feature rr --width 1280 --height 720 --out-width 3840 --out-height 2160 --frames 20 --check
    run rr_dynamic 60 ./rr_dynamic --nocapture
    ;;
replay)
    ls -d fixtures/*/ >/dev/null 2>&1 || { echo "run.sh: no fixtures in the bundle (OPENNGX_BUNDLE_FIXTURES)" >&2; exit 2; }
    replay_fixtures
    ;;
core)
    [ -f model/manifest.json ] || run synth_model 120 ./openngx synth-model --out model
    run fixture_64 120 ./openngx reference --model model --synthetic-scene --width 64 --height 64 --frames 1 --out fx64
    run core 120 env LD_LIBRARY_PATH="$PWD/ngx-core${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" OPENNGX_MODEL_DIR="$PWD/model" ./core fx64
    run rr_model 60 ./openngx synth-model --feature rr --out rr-model
    run rr_fixture 120 ./openngx reference --feature rr --model rr-model --synthetic-scene --width 64 --height 48 \
        --out-width 96 --out-height 72 --frames 3 --out rr-fx
    run core_rr 120 env LD_LIBRARY_PATH="$PWD/ngx-core${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" OPENNGX_RR_MODEL_DIR="$PWD/rr-model" ./core_rr rr-fx
    ;;
ffn)
    # Each window block's FFN pair as one kernel (`bench --fusion ffn`, the default since
    # session 19; ffn_coopmat.glsl, exact on lavapipe in its emulated build): its bytes at
    # 512x512 and 1080p, then its 1080p and 4K times against `--fusion off` in the same call,
    # with its pipeline statistics.
    run ffn_check_512x512 120 ./openngx bench --width 512 --height 512 --frames 3 --route tensor --check --fusion ffn
    run ffn_check_1920x1080 150 ./openngx bench --width 1920 --height 1080 --frames 3 --route tensor --check --fusion ffn
    run off_time_1920x1080 60 ./openngx bench --width 1920 --height 1080 --frames 20 --route tensor --fusion off
    run ffn_time_1920x1080 60 ./openngx bench --width 1920 --height 1080 --frames 20 --route tensor --fusion ffn --pipeline-stats
    run off_time_3840x2160 60 ./openngx bench --width 3840 --height 2160 --frames 20 --route tensor --fusion off
    run ffn_time_3840x2160 60 ./openngx bench --width 3840 --height 2160 --frames 20 --route tensor --fusion ffn
    # Through the C ABI with the fusion chosen at creation (OPENNGX_FUSION).
    if ls -d fixtures/*/ >/dev/null 2>&1; then
        [ -f model/manifest.json ] || run synth_model 120 ./openngx synth-model --out model
        for fx in fixtures/*/; do
            run "ffn_replay_$(basename "$fx")" 120 env OPENNGX_LOG=1 OPENNGX_FUSION=ffn OPENNGX_MODEL_DIR="$PWD/model" ./replay "$fx"
        done
    fi
    ;;
block)
    # Each C = 32 block's attention half as one kernel (`bench --fusion block`;
    # attention_block_coopmat.glsl, exact on lavapipe in its emulated build): gpu_gemm (the
    # kernel against the CPU reference's four ops among its tests), the route's bytes at 512x512 and 1080p, then the 1080p and
    # 4K times against the default (`--fusion ffn`) in the same call, and the C-ABI replay with
    # the fusion chosen at creation.
    run gpu_gemm 240 ./gpu_gemm --nocapture
    run block_check_512x512 120 ./openngx bench --width 512 --height 512 --frames 3 --route tensor --check --fusion block
    run block_check_1920x1080 150 ./openngx bench --width 1920 --height 1080 --frames 3 --route tensor --check --fusion block
    run ffn_time_1920x1080 60 ./openngx bench --width 1920 --height 1080 --frames 20 --route tensor --fusion ffn
    run block_time_1920x1080 60 ./openngx bench --width 1920 --height 1080 --frames 20 --route tensor --fusion block --pipeline-stats
    run ffn_frame_1920x1080 60 ./openngx bench --width 1920 --height 1080 --frames 20 --route tensor --fusion ffn --timing frame
    run block_frame_1920x1080 60 ./openngx bench --width 1920 --height 1080 --frames 20 --route tensor --fusion block --timing frame
    run ffn_time_3840x2160 60 ./openngx bench --width 3840 --height 2160 --frames 20 --route tensor --fusion ffn
    run block_time_3840x2160 60 ./openngx bench --width 3840 --height 2160 --frames 20 --route tensor --fusion block
    if ls -d fixtures/*/ >/dev/null 2>&1; then
        [ -f model/manifest.json ] || run synth_model 120 ./openngx synth-model --out model
        for fx in fixtures/*/; do
            run "block_replay_$(basename "$fx")" 120 env OPENNGX_LOG=1 OPENNGX_FUSION=block OPENNGX_MODEL_DIR="$PWD/model" ./replay "$fx"
        done
    fi
    ;;
block_min)
    run gpu_gemm_block 60 ./gpu_gemm attention_block --nocapture
    run gpu_gemm_ffn 60 ./gpu_gemm ffn_kernel --nocapture
    run block_check_512x512 60 ./openngx bench --width 512 --height 512 --frames 3 --route exact,tensor --check --fusion block
    run block_check_1920x1080 120 ./openngx bench --width 1920 --height 1080 --frames 3 --route tensor --check --fusion block
    run ffn_time_1920x1080 40 ./openngx bench --width 1920 --height 1080 --frames 20 --route tensor --fusion ffn
    run block_time_1920x1080 40 ./openngx bench --width 1920 --height 1080 --frames 20 --route tensor --fusion block --pipeline-stats
    run ffn_frame_1920x1080 40 ./openngx bench --width 1920 --height 1080 --frames 20 --route tensor --fusion ffn --timing frame
    run block_frame_1920x1080 40 ./openngx bench --width 1920 --height 1080 --frames 20 --route tensor --fusion block --timing frame
    run ffn_time_3840x2160 40 ./openngx bench --width 3840 --height 2160 --frames 20 --route tensor --fusion ffn --timing frame
    run block_time_3840x2160 40 ./openngx bench --width 3840 --height 2160 --frames 20 --route tensor --fusion block --timing frame
    run check_1920x1080 120 ./openngx bench --width 1920 --height 1080 --frames 3 --route tensor --check
    if ls -d fixtures/*/ >/dev/null 2>&1; then
        [ -f model/manifest.json ] || run synth_model 120 ./openngx synth-model --out model
        for fx in fixtures/*/; do
            run "block_replay_$(basename "$fx")" 60 env OPENNGX_LOG=1 OPENNGX_FUSION=block OPENNGX_MODEL_DIR="$PWD/model" ./replay "$fx"
        done
    fi
    replay_fixtures
    ;;
budget)
    # Fewer, larger bands: fewer launches for more workspace (the bench prints both).
    for n in 32 40 48 64; do
        run "budget_${n}_1920x1080" 40 ./openngx bench --width 1920 --height 1080 --frames 20 --route tensor --timing frame --strips "per-token:$n"
    done
    run budget_auto_1920x1080 40 ./openngx bench --width 1920 --height 1080 --frames 20 --route tensor --timing frame
    for n in 32 40 48; do
        run "budget_${n}_3840x2160" 50 ./openngx bench --width 3840 --height 2160 --frames 20 --route tensor --timing frame --strips "per-token:$n"
    done
    run budget_check_1920x1080 120 ./openngx bench --width 1920 --height 1080 --frames 3 --route tensor --check
    ;;
fusion_min)
    # The least of `fusion` (a call with little device time left): the bytes at 512x512 and
    # 1080p, the 1080p time of both routes and of the tensor route without its fusion and strips.
    run fusion_check_512x512 120 ./openngx bench --width 512 --height 512 --frames 3 --route exact,tensor --check --fusion attention
    run fusion_check_1920x1080 150 ./openngx bench --width 1920 --height 1080 --frames 3 --route tensor --check --fusion attention
    run fusion_time_1920x1080 90 ./openngx bench --width 1920 --height 1080 --frames 20 --route exact,tensor --fusion attention
    run fusion_time_1920x1080_nofusion 60 ./openngx bench --width 1920 --height 1080 --frames 20 --route tensor --strips off --fusion off
    ;;
fusion)
    # The tensor route's fused window normalisation (`bench --fusion attention`; docs/architecture.md,
    # "A node inside the next node's kernel") in the route's default strips: bytes at three
    # sizes, then the time against the exact route, without strips and without the fusion, and
    # the C-ABI replay (the library's default), all in one call.
    run fusion_check_512x512 120 ./openngx bench --width 512 --height 512 --frames 3 --route exact,tensor --check --fusion attention
    run fusion_check_1280x720 120 ./openngx bench --width 1280 --height 720 --frames 3 --route tensor --check --fusion attention
    run fusion_check_1920x1080 150 ./openngx bench --width 1920 --height 1080 --frames 3 --route tensor --check --fusion attention
    run fusion_time_1920x1080 90 ./openngx bench --width 1920 --height 1080 --frames 20 --route exact,tensor --fusion attention
    run fusion_time_1920x1080_nostrips 60 ./openngx bench --width 1920 --height 1080 --frames 20 --route tensor --strips off --fusion attention
    run fusion_time_1920x1080_nofusion 60 ./openngx bench --width 1920 --height 1080 --frames 20 --route tensor --strips off --fusion off
    run fusion_time_3840x2160 120 ./openngx bench --width 3840 --height 2160 --frames 20 --route exact,tensor --fusion attention
    if ls -d fixtures/*/ >/dev/null 2>&1; then
        [ -f model/manifest.json ] || run synth_model 120 ./openngx synth-model --out model
        for fx in fixtures/*/; do
            run "fusion_replay_$(basename "$fx")" 120 env OPENNGX_LOG=1 OPENNGX_MODEL_DIR="$PWD/model" ./replay "$fx"
        done
    fi
    ;;
gemmnorm_min)
    # The least of `gemmnorm` (a call with little device time left): the fused GEMM's bytes at
    # 512x512 and 1080p, the 1080p times of both routes and of the fused GEMM, 4K tensor times.
    run gemm_check_512x512 120 ./openngx bench --width 512 --height 512 --frames 3 --route tensor --check --fusion gemm
    run gemm_check_1920x1080 150 ./openngx bench --width 1920 --height 1080 --frames 3 --route tensor --check --fusion gemm
    run default_time_1920x1080 90 ./openngx bench --width 1920 --height 1080 --frames 20 --route exact,tensor
    run gemm_time_1920x1080 60 ./openngx bench --width 1920 --height 1080 --frames 20 --route tensor --fusion gemm
    run default_time_3840x2160_tensor 60 ./openngx bench --width 3840 --height 2160 --frames 20 --route tensor
    run gemm_time_3840x2160 60 ./openngx bench --width 3840 --height 2160 --frames 20 --route tensor --fusion gemm
    ;;
gemmnorm)
    # #14, session 14: the default tensor route (coopmat adapter, strips) and the window
    # normalisation as the QKV GEMM's epilogue (`--fusion gemm`): bytes, then the times of the
    # exact route, the default, both fusions at 1080p and 4K, and the C-ABI replay.
    run default_check_1920x1080 150 ./openngx bench --width 1920 --height 1080 --frames 3 --route tensor --check
    run gemm_check_512x512 120 ./openngx bench --width 512 --height 512 --frames 3 --route tensor --check --fusion gemm
    run gemm_check_1920x1080 150 ./openngx bench --width 1920 --height 1080 --frames 3 --route tensor --check --fusion gemm
    run default_time_1920x1080 90 ./openngx bench --width 1920 --height 1080 --frames 20 --route exact,tensor
    run gemm_time_1920x1080 60 ./openngx bench --width 1920 --height 1080 --frames 20 --route tensor --fusion gemm --pipeline-stats
    run attention_time_1920x1080 60 ./openngx bench --width 1920 --height 1080 --frames 20 --route tensor --fusion attention
    run default_time_3840x2160 150 ./openngx bench --width 3840 --height 2160 --frames 20 --route exact,tensor
    run gemm_time_3840x2160 60 ./openngx bench --width 3840 --height 2160 --frames 20 --route tensor --fusion gemm
    if ls -d fixtures/*/ >/dev/null 2>&1; then
        [ -f model/manifest.json ] || run synth_model 120 ./openngx synth-model --out model
        for fx in fixtures/*/; do
            run "default_replay_$(basename "$fx")" 120 env OPENNGX_LOG=1 OPENNGX_MODEL_DIR="$PWD/model" ./replay "$fx"
        done
    fi
    ;;
soak_nolayer)
    # The large soak's pass without the validation layer alone (the layer's pass ran before).
    run soak_nolayer 400 env -u VK_LAYER_PATH OPENNGX_SOAK=large OPENNGX_SOAK_CYCLES=93 ./feature_soak soak_create --test-threads=1 --nocapture
    ;;
profile)
    run profile_1920x1080 90 ./openngx bench --width 1920 --height 1080 --frames 20 --route tensor --pipeline-stats
    ;;
rr_dynamic)
    run rr_dynamic 60 ./rr_dynamic --nocapture
    ;;
checks)
    run gpu_numerics 120 ./gpu_numerics --nocapture
    run gpu_gemm 150 ./gpu_gemm --nocapture
    run gpu_attention 120 ./gpu_attention --nocapture
    run gpu_elementwise 120 ./gpu_elementwise --nocapture
    run check_512x512 120 ./openngx bench --width 512 --height 512 --frames 3 --route exact,tensor --check
    run check_1280x720 120 ./openngx bench --width 1280 --height 720 --frames 3 --route tensor --check
    run check_1920x1080 150 ./openngx bench --width 1920 --height 1080 --frames 3 --route tensor --check
    run check_gemm_512x512 90 ./openngx bench --width 512 --height 512 --frames 3 --route tensor --check --fusion gemm
    run check_attention_512x512 90 ./openngx bench --width 512 --height 512 --frames 3 --route tensor --check --fusion attention
    replay_fixtures
    ;;
checks_min)
    run gpu_attention 120 ./gpu_attention --nocapture
    run check_512x512 120 ./openngx bench --width 512 --height 512 --frames 3 --route tensor --check
    run check_1920x1080 150 ./openngx bench --width 1920 --height 1080 --frames 3 --route tensor --check
    replay_fixtures
    ;;
issue)
    for s in 1920x1080 3840x2160 512x512 1280x720 2560x1440; do
        run "issue_$s" 120 ./openngx bench --width "${s%x*}" --height "${s#*x}" --frames 20 --route exact,tensor --timing frame
    done
    # The strips' earlier default budget (40 bytes per field token) in the same call.
    for s in 1920x1080 3840x2160; do
        run "issue_${s}_per-token-40" 60 ./openngx bench --width "${s%x*}" --height "${s#*x}" --frames 20 --route tensor --timing frame --strips per-token:40
    done
    # What the strips cost: the launch floor in the default strips, and 4K without strips.
    run issue_floor_1920x1080 40 ./openngx bench --width 1920 --height 1080 --frames 20 --route tensor --timing floor
    run issue_3840x2160_strips-off 60 ./openngx bench --width 3840 --height 2160 --frames 20 --route tensor --timing frame --strips off
    run profile_1920x1080 90 ./openngx bench --width 1920 --height 1080 --frames 20 --route tensor --pipeline-stats
    for s in 1280x720 1920x1080; do
        run "issue_check_$s" 200 ./openngx bench --width "${s%x*}" --height "${s#*x}" --frames 3 --route exact,tensor --check
    done
    ;;
replay_large)
    # The feature's own strips through the C ABI at a large size: a 3-frame h25 fixture written
    # here by the CPU reference (too large to carry), replayed by the C harness under the
    # validation layer; REPLAY_SIZE=WxH, 1920x1080 by default.
    size="${REPLAY_SIZE:-1920x1080}"
    h25_fixture "$size"
    run "replay_h25_$size" 240 env OPENNGX_LOG=1 OPENNGX_MODEL_DIR="$PWD/model" ./replay "fx_h25_$size"
    ;;
parity)
    size="${PARITY_SIZE:-512x512}"
    h25_fixture "$size"
    run "parity_gpu_h25_$size" 300 ./openngx parity --route gpu --model model --fixture "fx_h25_$size"
    ;;
ab)
    [ -x base/openngx ] || { echo "run.sh: no base/openngx in the bundle (OPENNGX_BUNDLE_BASELINE)" >&2; exit 2; }
    cat BUILT_FROM >"$LOG/ab_builds.txt"
    run ab_new_1920x1080 90 ./openngx bench --width 1920 --height 1080 --frames 20 --route exact,tensor --pipeline-stats
    run ab_base_1920x1080 90 ./base/openngx bench --width 1920 --height 1080 --frames 20 --route exact,tensor
    run ab_new_3840x2160 90 ./openngx bench --width 3840 --height 2160 --frames 20 --route tensor
    run ab_base_3840x2160 90 ./base/openngx bench --width 3840 --height 2160 --frames 20 --route tensor
    # The frame times without the per-op timestamps (a base without --timing fails here only).
    run ab_new_frame_1920x1080 60 ./openngx bench --width 1920 --height 1080 --frames 20 --route tensor --timing frame
    run ab_base_frame_1920x1080 60 ./base/openngx bench --width 1920 --height 1080 --frames 20 --route tensor --timing frame
    ;;
arith)
    [ -x base/openngx ] || { echo "run.sh: no base/openngx in the bundle (OPENNGX_BUNDLE_BASELINE)" >&2; exit 2; }
    run gpu_numerics 120 ./gpu_numerics --nocapture
    run gpu_attention 120 ./gpu_attention --nocapture
    t=(--frames 20 --route tensor --timing frame)
    run arith_base_1920x1080 60 ./base/openngx bench --width 1920 --height 1080 "${t[@]}"
    run arith_new_1920x1080 60 ./openngx bench --width 1920 --height 1080 "${t[@]}"
    run arith_ffn-gemm_1920x1080 60 ./openngx bench --width 1920 --height 1080 "${t[@]}" --fusion ffn-gemm
    run check_1920x1080 150 ./openngx bench --width 1920 --height 1080 --frames 3 --route tensor --check
    run check_ffn-gemm_1920x1080 150 ./openngx bench --width 1920 --height 1080 --frames 3 --route tensor --check --fusion ffn-gemm
    replay_fixtures
    run arith_base_3840x2160 60 ./base/openngx bench --width 3840 --height 2160 "${t[@]}"
    run arith_new_3840x2160 60 ./openngx bench --width 3840 --height 2160 "${t[@]}"
    run arith_ffn-gemm_3840x2160 60 ./openngx bench --width 3840 --height 2160 "${t[@]}" --fusion ffn-gemm
    run check_512x512 120 ./openngx bench --width 512 --height 512 --frames 3 --route exact,tensor --check
    run gpu_gemm 150 ./gpu_gemm --nocapture
    ;;
table)
    # The five sizes of #14's table, this build and base/openngx alternately, --timing frame.
    [ -x base/openngx ] || { echo "run.sh: no base/openngx in the bundle (OPENNGX_BUNDLE_BASELINE)" >&2; exit 2; }
    for size in 1920x1080 3840x2160 512x512 1280x720 2560x1440; do
        for b in new base; do
            bin=./openngx; [ "$b" = base ] && bin=./base/openngx
            run "table_${b}_$size" 60 "$bin" bench --width "${size%x*}" --height "${size#*x}" --frames 20 --route tensor --timing frame
        done
    done
    ;;
floor)
    # What the launches and barriers cost without their work, beside the frame they come from.
    for size in 1920x1080 3840x2160 512x512 1280x720 2560x1440; do
        for timing in floor frame; do
            run "${timing}_$size" 60 ./openngx bench --width "${size%x*}" --height "${size#*x}" --frames 20 --route tensor --timing "$timing"
        done
    done
    for extra in "--strips off" "--fusion block"; do
        name="${extra#--}"
        for timing in floor frame; do
            # shellcheck disable=SC2086 # two words each
            run "${timing}_1920x1080_${name// /-}" 60 ./openngx bench --width 1920 --height 1080 --frames 20 --route tensor --timing "$timing" $extra
        done
    done
    ;;
floor_min)
    t=(--frames 20 --route tensor)
    run floor_1920x1080 40 ./openngx bench --width 1920 --height 1080 "${t[@]}" --timing floor
    run floor_3840x2160 40 ./openngx bench --width 3840 --height 2160 "${t[@]}" --timing floor
    run floor_1920x1080_strips-off 40 ./openngx bench --width 1920 --height 1080 "${t[@]}" --timing floor --strips off
    run frame_1920x1080 40 ./openngx bench --width 1920 --height 1080 "${t[@]}" --timing frame
    run frame_1920x1080_strips-off 40 ./openngx bench --width 1920 --height 1080 "${t[@]}" --timing frame --strips off
    run frame_3840x2160 40 ./openngx bench --width 3840 --height 2160 "${t[@]}" --timing frame
    ;;
*)
    echo "run.sh: unknown part $part (life, soak, soak_nolayer, gemmnorm, gemmnorm_min, fusion, fusion_min, ffn, block, block_min, budget, tensor, strips, strips_check, strips_time, rr, replay, profile, rr_dynamic, core, checks, checks_min, ab, arith, table, floor, floor_min, issue, parity)" >&2
    exit 2
    ;;
esac
done
grep -h -E "cycle|test result|panicked|SKIP|VUID|SYNC-HAZARD|median|exact|mismatch|ms|replay:|frame" "$LOG"/*.log | cut -c1-300 | head -120
