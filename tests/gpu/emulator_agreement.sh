#!/usr/bin/env bash
# The CPU emulator and the GPU give the same output, byte for byte, on the suite's
# cases (float sums included: both run the same additions in the same order).
# usage: emulator_agreement.sh <gpu driver> <emulator driver> [max n, default [suite] emulator_max_n]
# Every task x operator x suite size (up to max n) x suite block size.
# Exit 77 (CTest: skipped) without a GPU.
set -u
gpu=$1 emu=$2
. "$(dirname "$0")/require_gpu.sh"; require_gpu "$gpu"
suite() {  # a value of [suite] in data/cases.toml
  python3 -c "import tomllib,sys; v=tomllib.load(open(sys.argv[1],'rb'))['suite'][sys.argv[2]]; print(*(v if isinstance(v, list) else [v]))" \
          "$(dirname "$0")/../../data/cases.toml" "$1"
}
maxn=${3:-$(suite emulator_max_n)}
sizes=$(for n in $(suite sizes); do [ "$n" -le "$maxn" ] && echo "$n"; done) blocks=$(suite blocks)
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
i=0
for task in warp-scan reduce scan scan-exclusive; do
  for op in add-i32 add-f32 max-i32 mssp; do
    for block in $blocks; do
      for n in $sizes; do
        echo "$i run --task $task --op $op --n $n --block $block --seed $((n + block))" >>"$work/cases"
        i=$((i + 1))
      done
    done
  done
done
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
exit $((differ > 0))
