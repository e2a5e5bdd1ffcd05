#!/usr/bin/env bash
# The CPU emulator and the GPU give the same output, byte for byte, on the suite's
# cases (float sums included: both run the same additions in the same order).
# usage: emulator_agreement.sh <gpu driver> <emulator driver> [max n, default the suite's emulator_max_n]
#        SCANLAB_LIST_CASES=1 emulator_agreement.sh ...   print the runs, run nothing
# Every task x operator x suite size (up to max n) x suite block size, as the driver
# lists them (`scanlab list`: data/assignment.toml and data/cases.toml [suite]), but
# the float operators of the single-pass look-back scan: a tile adds its predecessors'
# aggregates or takes one's inclusive prefix, whichever is published when it looks, so
# its float sums depend on timing (as CUB's do) and agree within the check's tolerance,
# not byte for byte (the suites check them against the CPU).
# Exits with the driver's no-GPU status (CTest: skipped) without a GPU.
set -u
gpu=$1 emu=$2
maxn=${3:-$("$emu" list emulator-max-n)}
cases() {
  local i=0
  for task in $("$emu" list tasks); do
    for op in $("$emu" list operators --task "$task"); do
      case "$task:$op" in lookback-*:*-f32 | lookback-*:*-f64) continue ;; esac
      for block in $("$emu" list blocks); do
        for n in $("$emu" list sizes); do
          [ "$n" -le "$maxn" ] || continue
          echo "$i run --task $task --op $op --n $n --block $block --seed $((n + block))"
          i=$((i + 1))
        done
      done
    done
  done
}
if [ -n "${SCANLAB_LIST_CASES:-}" ]; then cases; exit 0; fi
. "$(dirname "$0")/require_gpu.sh"; require_gpu "$gpu"
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
cases >"$work/cases"
i=$(wc -l <"$work/cases")
# The GPU in one batch process (one CUDA context, not thousands); the emulator on every core.
while read -r id run args; do echo "$args --output $work/gpu.$id"; done <"$work/cases" >"$work/gpu.cases"
"$gpu" batch --cases "$work/gpu.cases" --json "$work/gpu.json" >/dev/null 2>&1 ||
  echo "GPU batch failed (exit $?): $(wc -l <"$work/gpu.json") of $i cases ran"
SCANLAB_EMU_THREADS=1 xargs -P "$(nproc)" -L 1 sh -c \
  'id=$0; "$@" --output "'"$work"'/emu.$id" >/dev/null 2>&1 || echo "emulator run failed: $*"' \
  < <(sed "s|^\([0-9]*\) |\1 $emu |" "$work/cases")
differ=0
while read -r id args; do
  cmp -s "$work/gpu.$id" "$work/emu.$id" || { echo "outputs differ: $args"; differ=$((differ + 1)); }
done <"$work/cases"
echo "$i cases compared, $differ disagreements"
exit $((differ > 0 || i == 0))
