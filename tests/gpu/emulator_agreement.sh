#!/usr/bin/env bash
# The CPU emulator and the GPU give the same output, byte for byte, on the suite's
# cases (float sums included: both run the same additions in the same order).
# usage: emulator_agreement.sh <gpu driver> <emulator driver> [max n]
# Exit 77 (CTest: skipped) without a GPU.
set -u
gpu=$1 emu=$2 maxn=${3:-262145}
"$gpu" info >/dev/null 2>&1; [ $? -eq 77 ] && { echo "no GPU: skipped"; exit 77; }
sizes=$(python3 -c "import tomllib,sys; print(*[n for n in tomllib.load(open(sys.argv[1],'rb'))['suite']['sizes'] if n <= $maxn])" \
        "$(dirname "$0")/../../data/cases.toml")
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
cases=0 differ=0
for task in warp-scan reduce scan scan-exclusive; do
  for op in add-i32 add-f32 max-i32 mssp; do
    for block in 32 256 1024; do
      for n in $sizes; do
        args=(run --task $task --op $op --n $n --block $block --seed $((n + block)))
        "$gpu" "${args[@]}" --output "$work/gpu" >/dev/null 2>&1 || { echo "GPU failed: ${args[*]}"; differ=$((differ+1)); continue; }
        "$emu" "${args[@]}" --output "$work/emu" >/dev/null 2>&1 || { echo "emulator failed: ${args[*]}"; differ=$((differ+1)); continue; }
        cmp -s "$work/gpu" "$work/emu" || { echo "outputs differ: ${args[*]}"; differ=$((differ+1)); }
        cases=$((cases+1))
      done
    done
  done
done
echo "$cases cases compared, $differ disagreements"
exit $((differ > 0))
