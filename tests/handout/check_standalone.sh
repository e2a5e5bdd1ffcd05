#!/usr/bin/env bash
# handout/ is self-contained: a copy of it alone builds with its own Makefile
# (the emulator driver with g++, alone in laptop mode where no GPU is found; the CUDA
# driver too with GPU=1 where nvcc is installed), and
# its `make emu-test` runs the suite, passing tasks 1 and 2 and reporting task 3 as
# not implemented. Then, with the solution's student files dropped in (what a student
# who finished has), its `make test` passes: the suite on the emulator, and on the GPU
# where there is one (CTest skips it without).
# usage: check_standalone.sh <handout dir> <solution dir>
set -eu
src=$1 solution=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r "$src" "$work/handout"
rm -rf "$work/handout/build"
cd "$work/handout"
make CMAKE_FLAGS=-DCMAKE_CUDA_ARCHITECTURES=90 all >build.log 2>&1 || { cat build.log; exit 1; }
test -x build/scanlab-emu || { echo "FAIL: build/scanlab-emu was not built"; exit 1; }
# Laptop mode (no GPU here, or no nvcc): the emulator only, said once (issue 44).
if ! nvidia-smi -L 2>/dev/null | grep -q '^GPU' || ! { command -v nvcc || [ -x /usr/local/cuda/bin/nvcc ]; } >/dev/null 2>&1; then
  [ "$(grep -c 'laptop mode' build.log)" = 1 ] || { cat build.log; echo "FAIL: laptop mode not said once"; exit 1; }
  [ ! -e build/scanlab ] || { echo "FAIL: laptop mode built the CUDA driver"; exit 1; }
fi
if command -v nvcc >/dev/null || [ -x /usr/local/cuda/bin/nvcc ]; then
  # GPU=1: the CUDA driver builds (it only compiles where there is no GPU).
  make GPU=1 all >build-gpu.log 2>&1 || { cat build-gpu.log; exit 1; }
  test -x build/scanlab || { echo "FAIL: nvcc is installed but make GPU=1 did not build build/scanlab"; exit 1; }
fi
set +e
out=$(build/scanlab-emu test --max-n 3000 --junit build/junit.xml 2>&1); rc=$?
set -e
echo "$out" | tail -n 4
[ $rc -eq 3 ] || { echo "FAIL: make emu-test on the untouched handout exited $rc, want 3"; exit 1; }
grep -q "task 3: not implemented" <<<"$out" || { echo "FAIL: no 'task 3: not implemented'"; exit 1; }
if grep -q "^FAIL" <<<"$out"; then echo "FAIL: a placeholder case failed"; exit 1; fi
grep -q '<testsuite' build/junit.xml || { echo "FAIL: no JUnit report"; exit 1; }
# make grade-local: the grader's visible cases and points; task 3 is not implemented.
set +e
grade=$(make grade-local ESTIMATE=0 2>&1); rc=$?
set -e
[ $rc -ne 0 ] || { echo "$grade" | tail -n 12; echo "FAIL: make grade-local passed an unfinished handout"; exit 1; }
grep -qE "^  3 +scan +0/[0-9]+ +0\.0 / [0-9]+ .*not implemented" <<<"$grade" || { echo "$grade" | tail -n 12; echo "FAIL: grade-local does not show task 3 as not implemented"; exit 1; }
grep -qE "^  1 +warp-scan +([0-9]+)/\1 " <<<"$grade" || { echo "$grade" | tail -n 12; echo "FAIL: grade-local does not pass task 1's placeholder"; exit 1; }
echo "ok: the untouched handout builds and behaves as documented"

cp "$solution"/student/*.cuh student/
make test >test.log 2>&1 || { cat test.log; echo "FAIL: make test with the solution's files"; exit 1; }
grep -E "tests passed|Skipped|Passed" test.log
if [ -x build/scanlab ] && build/scanlab info >/dev/null 2>&1; then
  # A GPU is here: the GPU suite must have run and passed, not been skipped.
  grep -qE "suite\.gpu \.+ +Passed" test.log || { echo "FAIL: a GPU, but suite.gpu did not pass"; exit 1; }
fi
echo "ok: with the solution's files, the handout's make test passes"
