#!/usr/bin/env bash
# Issue 41 on a GPU: the reference and the fixtures of the legal space graded with the GPU
# backend, each with its drawn hidden cases (one n >= 2^31 a task, every block size, drawn
# race-check and compute-sanitizer configurations). Prints, per submission, each task's
# verdict against the fixture's [expect.cuda] (else [expect]), its cases, the n >= 2^31
# cases with their seconds, each grade's seconds and the GPU's peak memory over the batch;
# logs and reports go to OUTDIR.
#
# usage: [GRADER_ARGS="--rubric R --no-perf"] tools/gpu_space.sh OUTDIR [FIXTURE ...]
#   FIXTURE  default: reference reduce_index_overflow reduce_block_512 scan_racy_many_tiles
#            warp_scan_racy_off_sanitizer
# Needs nvcc, compute-sanitizer, g++ and Boost.Context (the race check); the grader's core
# needs Python's standard library only. Every grade uses --seed 41 --draw-seed 41.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: tools/gpu_space.sh OUTDIR [FIXTURE ...]}
shift
fixtures=("$@")
[ ${#fixtures[@]} -gt 0 ] || fixtures=(reference reduce_index_overflow reduce_block_512
                                      scan_racy_many_tiles warp_scan_racy_off_sanitizer)
mkdir -p "$out"
out=$(cd "$out" && pwd)

{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; echo "cores $(nproc)"
  free -g | head -2; df -h "$out" /tmp | tail -2; } > "$out/machine.txt" 2>&1
cat "$out/machine.txt"

subs=$out/submissions
rm -rf "$subs" "$out/parts"
python3 tools/fixtures.py class "$subs" "${fixtures[@]}" --parts "$out/parts" > "$out/compose.log" 2>&1 ||
  { echo "composing the fixtures failed:"; tail -20 "$out/compose.log"; exit 1; }

# One batch: one session (the reference built once, the GPU runs of the submissions
# overlapping as in a class's grading); each submission's own seconds are in its results.
mem=$out/gpu-memory.csv
nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -lms 200 > "$mem" 2>/dev/null &
sampler=$!
start=$SECONDS
python3 -m grader batch "$subs" --backend cuda --cuda-arch 90 --seed 41 --draw-seed 41 \
    ${GRADER_ARGS:-} --out "$out/batch" > "$out/batch.log" 2>&1
rc=$?
kill "$sampler" 2>/dev/null; wait "$sampler" 2>/dev/null
echo "batch of ${#fixtures[@]}: exit $rc, $((SECONDS - start)) s, peak GPU memory $(sort -n "$mem" | tail -1) MiB" \
     "(log: $out/batch.log)"
status=0
for name in "${fixtures[@]}"; do
  echo "== $name"
  python3 tools/gpu_space_verdicts.py "$name" "$out/batch/submissions/$name" || status=1
done
exit $status
