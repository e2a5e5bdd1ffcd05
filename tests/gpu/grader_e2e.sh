#!/usr/bin/env bash
# The grader's end-to-end tests on a real GPU (tests/grader/test_e2e_gpu.py), as their
# own CTest test so that without a GPU CTest reports them as skipped rather
# than as part of a passing pytest run (the no-GPU status of data/assignment.toml). A run in which pytest skipped some of them
# (e.g. no Boost.Context for the race check) is reported as skipped too, not passed.
# usage: grader_e2e.sh <gpu driver> <pytest> [pytest options]
set -u
driver=$1 pytest=$2; shift 2
. "$(dirname "$0")/require_gpu.sh"; require_gpu "$driver"
cd "$(dirname "$0")/../.."
out=$("$pytest" -q -rs "$@" tests/grader/test_e2e_gpu.py 2>&1); rc=$?
echo "$out"
[ $rc -eq 0 ] && tail -n 1 <<<"$out" | grep -q "skipped" && { echo "some GPU tests skipped: not a pass"; exit "$skip"; }
exit $rc
