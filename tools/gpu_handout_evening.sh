#!/usr/bin/env bash
# Issue 44 on a GPU: the handout's Makefile outside laptop mode, and make grade-local's
# total there (correctness measured, performance timed against the reference scaled by
# the copy bandwidths, never one sum out of 100). Writes its logs into OUTDIR.
# usage: tools/gpu_handout_evening.sh OUTDIR        (about 5 minutes on an H100, 16 cores)
set -eu
out=$(mkdir -p "$1" && cd "$1" && pwd)
repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r "$repo/handout" "$work/handout"
rm -rf "$work/handout/build"
cp "$repo"/solution/student/*.cuh "$work/handout/student/"
cd "$work/handout"
make CMAKE_FLAGS=-DCMAKE_CUDA_ARCHITECTURES=90 all >"$out/build.log" 2>&1
if grep -q "laptop mode" "$out/build.log"; then echo "FAIL: laptop mode on a GPU machine"; exit 1; fi
test -x build/scanlab || { echo "FAIL: no build/scanlab"; exit 1; }
set +e
make grade-local >"$out/grade-local.log" 2>&1; rc=$?
set -e
grep "total:" "$out/grade-local.log" | tee "$out/total.txt"
grep -q "total: correctness 60.0/60, bonus 5.0/5; performance: about [0-9.]*/40, bonus about [0-9.]*/10 (estimated: timed on this GPU" \
  "$out/grade-local.log" || { tail -n 30 "$out/grade-local.log"; echo "FAIL: the total's wording"; exit 1; }
! grep -q "/ 100" "$out/grade-local.log" || { echo "FAIL: a sum out of 100"; exit 1; }
echo "ok: make grade-local on the GPU exited $rc; its total is above ($out)"
