#!/usr/bin/env bash
# The untouched handout behaves as its README says: the task 1, task 2 and task 4
# (bonus) placeholders are slow but correct, task 3 reports "not implemented", and bad
# arguments give a clear message (exit statuses: data/assignment.toml).
# usage: check_placeholders.sh <driver>   (exits with the driver's no-GPU status, which
#        CTest reports as skipped, when it finds no GPU)
set -u
driver=$1
. "$(dirname "$0")/../gpu/require_gpu.sh"
skip=$(exit_code "$driver" no-gpu) usage=$(exit_code "$driver" usage)
not_implemented=$(exit_code "$driver" not-implemented) pass=$(exit_code "$driver" pass)
failures=0
expect() {  # expect <exit code> <text in output> <driver args...>
  local code=$1 text=$2; shift 2
  local out rc
  out=$("$driver" "$@" 2>&1); rc=$?
  if [ $rc -eq "$skip" ]; then echo "no GPU: skipped"; exit "$skip"; fi
  if [ $rc -ne "$code" ] || ! grep -qF -- "$text" <<<"$out"; then
    echo "FAIL: '$driver $*' exited $rc (want $code), output must contain '$text':"
    echo "$out" | sed 's/^/    /'
    failures=$((failures + 1))
  else
    echo "ok: $* -> exit $rc"
  fi
}
expect "$pass" "check   PASS" run --task warp-scan --op mssp --n 5000 --block 64
expect "$pass" "check   PASS" run --task reduce --op mssp --n 70001 --block 128
expect "$pass" "check   PASS" run --task lookback-scan --op mssp --n 70001 --block 96
expect "$pass" "check   PASS" run --task lookback-scan-exclusive --op seg-add-i32 --n 5000 --block 32
expect "$not_implemented" "task 3: not implemented" run --task scan --n 1000
expect "$not_implemented" "task 3: not implemented" run --task scan-exclusive --n 1000
expect "$usage" "must be a multiple of 32" run --task scan --block 48
# The applications (handout/apps): pi runs on the reduce placeholder; the two that
# scan say which task they need instead of failing.
expect "$pass" "check   PASS" app pi --n 100000
expect "$not_implemented" "needs task 3 (scan)" app normal-cdf --n 1000
expect "$not_implemented" "needs task 3 (scan-exclusive)" app compaction --n 1000
expect "$not_implemented" "needs the exercise split (student/split.cuh)" app radix-sort --n 1000
expect "$usage" "unknown operator" run --task scan --op mul-i32
expect "$usage" "is not a non-negative whole number" run --task reduce --n -5
expect "$usage" "--task is required" run --n 10
exit $((failures > 0))
