#!/usr/bin/env bash
# The grader's end-to-end tests on a real GPU (tests/grader/test_e2e_gpu.py), as their
# own CTest test so that without a GPU CTest reports them as skipped (exit 77) rather
# than as part of a passing pytest run.
# usage: grader_e2e.sh <gpu driver> <pytest> [pytest options]
set -u
driver=$1 pytest=$2; shift 2
"$driver" info >/dev/null 2>&1; [ $? -eq 77 ] && { echo "no GPU: skipped"; exit 77; }
cd "$(dirname "$0")/../.."
exec "$pytest" -q -rs "$@" tests/grader/test_e2e_gpu.py
