#!/usr/bin/env bash
# compute-sanitizer (memcheck, racecheck, synccheck) over every task and operator the
# driver knows (`scanlab list`: data/assignment.toml) on small and multi-tile sizes.
# Exits with the driver's no-GPU status (CTest: skipped) without a GPU or without
# compute-sanitizer.
# usage: sanitize.sh <driver> [tool ...]
#        SCANLAB_LIST_CASES=1 sanitize.sh <driver>   print the runs, run nothing
set -u
driver=$1; shift
tools=("${@:-memcheck racecheck synccheck}")
cases() {
  for task in $("$driver" list tasks); do
    for op in $("$driver" list operators --task "$task"); do
      for spec in "1 32" "70001 1024" "300007 32"; do
        set -- $spec
        echo "--task $task --op $op --n $1 --block $2"
      done
    done
  done
  # The applications: their map and scatter kernels around the student's.
  for app in $("$driver" list applications | awk '{ print $1 }'); do echo "app $app --n 70001 --block 128"; done
}
if [ -n "${SCANLAB_LIST_CASES:-}" ]; then cases; exit 0; fi
. "$(dirname "$0")/require_gpu.sh"; require_gpu "$driver"
command -v compute-sanitizer >/dev/null || { echo "compute-sanitizer not found: skipped"; exit "$skip"; }
failures=0 runs=0
for tool in ${tools[@]}; do
  while read -r args; do
    [ "${args%% *}" = app ] || args="run $args"
    log=$(compute-sanitizer --tool "$tool" --error-exitcode 9 "$driver" $args 2>&1); rc=$?
    runs=$((runs + 1))
    if [ $rc -ne 0 ]; then
      echo "FAIL [$tool] $args (exit $rc)"; echo "$log" | tail -n 20
      failures=$((failures + 1))
    fi
  done < <(cases)
  echo "$tool: done"
done
echo "sanitizer runs: $runs, failures: $failures"
exit $((failures > 0 || runs == 0))
