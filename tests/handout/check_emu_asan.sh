#!/usr/bin/env bash
# The handout's `make emu-asan` (the emulator suite built with AddressSanitizer): with
# the solution's files it passes (no false alarm from the fibers or the guard zones),
# and with the write_past_end fixture it stops at the store, naming student/scan.cuh.
# usage: check_emu_asan.sh <repository root>
set -eu
repo=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r "$repo/handout" "$work/handout"
rm -rf "$work/handout/build" "$work/handout/build-asan"
cd "$work/handout"
cp "$repo"/solution/student/*.cuh student/
args='ARGS=--tasks scan --ops add-i32 --blocks 256 --max-n 3000'
make emu-asan "$args" >asan.log 2>&1 || { tail -n 40 asan.log; echo "FAIL: make emu-asan with the solution's files"; exit 1; }
grep -q "AddressSanitizer" asan.log && { tail -n 40 asan.log; echo "FAIL: a report on the solution"; exit 1; }
echo "ok: the solution is clean under make emu-asan"

python3 "$repo/tools/fixtures.py" class "$work/fixture" write_past_end >/dev/null
cp "$work"/fixture/write_past_end/student/scan.cuh student/
set +e
make emu-asan "$args" >asan.log 2>&1; rc=$?
set -e
[ $rc -ne 0 ] || { tail -n 20 asan.log; echo "FAIL: make emu-asan passed a scan that writes out[n]"; exit 1; }
grep -q "ERROR: AddressSanitizer: use-after-poison" asan.log || { tail -n 40 asan.log; echo "FAIL: no AddressSanitizer report"; exit 1; }
grep -q "student/scan.cuh:[0-9]" asan.log || { tail -n 40 asan.log; echo "FAIL: the report does not name student/scan.cuh"; exit 1; }
echo "ok: make emu-asan stops at the write past the end, in student/scan.cuh"
