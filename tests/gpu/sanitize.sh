#!/usr/bin/env bash
# compute-sanitizer (memcheck, racecheck, synccheck) over every task and operator of
# the reference on small and multi-tile sizes. Exit 77 (CTest: skipped) without a GPU
# or without compute-sanitizer.
# usage: sanitize.sh <driver> [tool ...]
set -u
driver=$1; shift
tools=("${@:-memcheck racecheck synccheck}")
command -v compute-sanitizer >/dev/null || { echo "compute-sanitizer not found: skipped"; exit 77; }
. "$(dirname "$0")/require_gpu.sh"; require_gpu "$driver"
failures=0
for tool in ${tools[@]}; do
  for task in warp-scan reduce scan scan-exclusive; do
    for op in add-i32 add-f32 max-i32 mssp; do
      for spec in "1 32" "70001 1024" "300007 32"; do
        set -- $spec
        log=$(compute-sanitizer --tool "$tool" --error-exitcode 9 "$driver" run --task $task \
              --op $op --n $1 --block $2 2>&1); rc=$?
        if [ $rc -ne 0 ]; then
          echo "FAIL [$tool] $task $op n=$1 block=$2 (exit $rc)"; echo "$log" | tail -n 20
          failures=$((failures + 1))
        fi
      done
    done
  done
  echo "$tool: done"
done
echo "sanitizer failures: $failures"
exit $((failures > 0))
