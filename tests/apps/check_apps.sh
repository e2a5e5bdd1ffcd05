#!/usr/bin/env bash
# The applications (handout/apps) on a driver built with the reference kernels: each
# passes at the edge sizes (1, 2, 33, 4099 with warp-sized blocks) and at a size with
# several blocks and tiles, and `verify-app` (what the grader trusts) rejects an output
# file with one value changed, naming what is wrong.
# usage: check_apps.sh <driver>   (exits with the driver's no-GPU status, which CTest
#        reports as skipped, when it finds no GPU)
set -u
driver=$1
. "$(dirname "$0")/../gpu/require_gpu.sh"
skip=$(exit_code "$driver" no-gpu) pass=$(exit_code "$driver" pass) fail=$(exit_code "$driver" fail)
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
failures=0
note() { echo "$1"; [ "${2:-ok}" = ok ] || failures=$((failures + 1)); }
apps=$("$driver" list applications | awk '{ print $1 }')
[ -n "$apps" ] || { echo "FAIL: '$driver list applications' lists none"; exit 1; }
for app in $apps; do
  for n in 1 2 33 4099; do
    out=$("$driver" app "$app" --n $n --block 32 2>&1); rc=$?
    [ $rc -eq "$skip" ] && { echo "no GPU: skipped"; exit "$skip"; }
    if [ $rc -eq "$pass" ] && grep -qF "check   PASS" <<<"$out"; then note "ok: app $app --n $n"
    else note "FAIL: app $app --n $n exited $rc: $out" fail; fi
  done
  out=$("$driver" app "$app" --n 300007 --block 128 --output "$work/$app.bin" 2>&1); rc=$?
  [ $rc -eq "$skip" ] && { echo "no GPU: skipped"; exit "$skip"; }
  echo "$out"
  if [ $rc -ne "$pass" ] || ! grep -qF "check   PASS" <<<"$out"; then
    note "FAIL: app $app exited $rc" fail; continue
  fi
  out=$("$driver" verify-app "$app" --n 300007 --output "$work/$app.bin" 2>&1); rc=$?
  [ $rc -eq "$pass" ] && note "ok: verify-app $app accepts the output" || note "FAIL: verify-app $app: $out" fail
  # Change the last 4 bytes (a float or an int32): the check must fail and say why.
  python3 - "$work/$app.bin" <<'PY'
import sys
path = sys.argv[1]
data = bytearray(open(path, "rb").read())
data[-4:] = bytes([0x11, 0x22, 0x33, 0x44]) if data[-4:] != bytes([0x11, 0x22, 0x33, 0x44]) else bytes(4)
open(path, "wb").write(data)
PY
  out=$("$driver" verify-app "$app" --n 300007 --output "$work/$app.bin" 2>&1); rc=$?
  if [ $rc -eq "$fail" ] && grep -qF "check   FAIL" <<<"$out" && grep -qE "It (uses|runs) your" <<<"$out"; then
    note "ok: verify-app $app rejects a changed output: $(grep -F 'check   FAIL' <<<"$out")"
  else
    note "FAIL: verify-app $app accepted a changed output (exit $rc): $out" fail
  fi
done
echo "application failures: $failures"
exit $((failures > 0))
