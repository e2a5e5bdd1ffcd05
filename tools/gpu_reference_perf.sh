#!/usr/bin/env bash
# Issue 61 in one GPU call: the reference's reduce and look-back scan against the copy and
# both CUBs, and the candidate settings' correctness. Builds on the GPU machine with nvcc
# (all builds at once, about 40 s on 16 cores), then:
#   1. bench/tune_kernels.cu (scanlab-tune): the reduce variants (16-byte loads, warp steps
#      in flight, interleaved warps, grid) and the look-back variants (window, first sleep,
#      poll, tile shape, prefetch, streaming stores) at 2^24, 2^28, 2^20, int32 add, plus
#      add-f32 and mssp at 2^24: LOG_DIR/tune.log and tune.csv;
#   2. make bench's two binaries (bench/bench_cub.cu: the toolkit's CUB, and the newest
#      CCCL's from the wheel, --cub-only) for each configuration below, the plans as the
#      reference runs them with that configuration's macros: LOG_DIR/bench.log;
#   3. bench/check_kernels.cu (scanlab-check): thousands of launches of the reduce and the
#      look-back (inclusive, exclusive; add-i32, add-f32, mssp; n = 1 .. 2^24+3), each
#      checked, for the candidate configurations, and compute-sanitizer's memcheck,
#      racecheck and synccheck at small sizes: LOG_DIR/check.log, sanitize.log.
# About 2 minutes of device time in all; each step has a time limit.
#
#   tools/gpu_reference_perf.sh LOG_DIR [CCCL_WHEEL]
#
# The configurations (the macros of solution/student/reduce.cuh and lookback_scan.cuh;
# "main" is the reference as committed):
#   main  the defaults
#   R2    reduce: 16-byte loads, 2 warp steps in flight; look-back: window 128, no first sleep
#   R4    reduce: 4 steps in flight; look-back: window 128, first sleep 1000 ns
#   R1    reduce: 1 step in flight; look-back: window 64, first sleep 1000 ns
set -uo pipefail
cd "$(dirname "$0")/.." || exit
out=${1:?usage: tools/gpu_reference_perf.sh LOG_DIR [CCCL_WHEEL]}
mkdir -p "$out"
wheel=${2:-}
log=$out/log
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv | tee "$log"
cccl=$(CCCL_WHEEL=$wheel bash bench/cccl_setup.sh /tmp/scanlab-cccl)
echo "newest CCCL: ${cccl:-none}" | tee -a "$log"
flags=(-std=c++17 -O3 -DNDEBUG -arch=sm_90 -Isolution -Ihandout)
declare -A cfg=(
    [main]=""
    [R2]="-DSCANLAB_REDUCE_STEPS_IN_FLIGHT=2 -DSCANLAB_LOOKBACK_TILES_PER_LANE=4 -DSCANLAB_LOOKBACK_FIRST_NS=0"
    [R4]="-DSCANLAB_REDUCE_STEPS_IN_FLIGHT=4 -DSCANLAB_LOOKBACK_TILES_PER_LANE=4 -DSCANLAB_LOOKBACK_FIRST_NS=1000"
    [R1]="-DSCANLAB_REDUCE_STEPS_IN_FLIGHT=1 -DSCANLAB_LOOKBACK_TILES_PER_LANE=2 -DSCANLAB_LOOKBACK_FIRST_NS=1000"
)
configs=(main R2 R4 R1)
bin=/tmp/scanlab-perf
mkdir -p "$bin"
nvcc "${flags[@]}" bench/tune_kernels.cu -o "$bin/tune" > "$bin/build-tune.log" 2>&1 &
[ -n "$cccl" ] && nvcc "${flags[@]}" -I"$cccl" bench/bench_cub.cu -o "$bin/bench-cccl" > "$bin/build-cccl.log" 2>&1 &
for c in "${configs[@]}"; do
    read -r -a macros <<< "${cfg[$c]}"  # the macros split on spaces
    nvcc "${flags[@]}" "${macros[@]}" bench/bench_cub.cu -o "$bin/bench-$c" > "$bin/build-bench-$c.log" 2>&1 &
    nvcc "${flags[@]}" "${macros[@]}" bench/check_kernels.cu -o "$bin/check-$c" > "$bin/build-check-$c.log" 2>&1 &
done
wait
for f in "$bin"/build-*.log; do
    grep -q " error" "$f" && { echo "BUILD FAILED: $f" | tee -a "$log"; tail -5 "$f" | tee -a "$log"; }
done
echo "built at $SECONDS s" | tee -a "$log"

timeout 150 "$bin/tune" "$out/tune.csv" > "$out/tune.log" 2>&1
echo "tune: exit $? at $SECONDS s" | tee -a "$log"

newest=()
if [ -x "$bin/bench-cccl" ] && timeout 40 "$bin/bench-cccl" --cub-only "$bin/newest.csv" > "$out/bench-cub-only.log" 2>&1; then
    newest=(--newest-cub "$bin/newest.csv")
fi
for c in "${configs[@]}"; do
    echo "== configuration $c: ${cfg[$c]:-the defaults}"
    timeout 40 "$bin/bench-$c" "${newest[@]}"
    echo "exit $?"
done > "$out/bench.log" 2>&1
echo "bench: at $SECONDS s" | tee -a "$log"

{
    for c in R2 R4 main; do
        timeout 30 "$bin/check-$c" repeat 20
        echo "check-$c: exit $?"
    done
} > "$out/check.log" 2>&1
grep -E "^scanlab-check|exit" "$out/check.log" | tee -a "$log"
{
    for tool in memcheck racecheck synccheck; do
        timeout 60 compute-sanitizer --tool "$tool" "$bin/check-R2" sanitize
        echo "$tool R2: exit $?"
    done
} > "$out/sanitize.log" 2>&1
grep -E "SUMMARY|exit" "$out/sanitize.log" | tee -a "$log"
echo "done at $SECONDS s" | tee -a "$log"
# The table: copy, reduce and look-back rows of each configuration.
grep -E "^== |^n = |copy  |reference reduce|reference look-back|the newest CUB \(|cub::|InclusiveScan|x the newest" "$out/bench.log"
