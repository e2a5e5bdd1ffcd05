#!/usr/bin/env bash
# `scanlab sweep` and its picture on a driver built with the reference kernels: every
# task is swept (2^10 .. 2^16 on a GPU, 2^10 .. 2^12 on the emulator), each size has a
# checked and timed row for the kernels, the baselines and the device copy, GB/s only
# on a GPU (elements/s on the emulator, said to be no GPU performance), and
# handout/tools/plot_sweep.py draws the CSVs into a PNG.
# usage: check_sweep.sh <driver> <python with matplotlib>   (exits with the driver's
#        no-GPU status, which CTest reports as skipped, when it finds no GPU)
set -u
driver=$1 python=$2
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../gpu/require_gpu.sh"
skip=$(exit_code "$driver" no-gpu) pass=$(exit_code "$driver" pass)
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $1"; failures=$((failures + 1)); }
backend=cuda max=65536 sizes=7
if "$driver" list emulator-max-n >/dev/null && "$driver" info 2>/dev/null | grep -q "\[emulator\]"; then
  backend=emulator max=4096 sizes=3
fi
csvs=()
for task in $("$driver" list tasks); do
  out=$("$driver" sweep --task "$task" --max-n $max --csv "$work/$task.csv" --json "$work/$task.json" 2>&1); rc=$?
  [ $rc -eq "$skip" ] && { echo "no GPU: skipped"; exit "$skip"; }
  echo "$out"
  [ $rc -eq "$pass" ] || { fail "sweep --task $task exited $rc"; continue; }
  csvs+=("$work/$task.csv")
  # The kernels' rows: one per size, passed and timed; GB/s on a GPU only.
  rows=$(awk -F, -v b=$backend '$2 == "kernel" && $1 == "yours" && $9 == "pass" && $10 > 0 && $12 > 0 &&
                                 (b == "cuda" ? $11 > 0 : $11 == "") && $3 == b' "$work/$task.csv" | wc -l)
  [ "$rows" -eq $sizes ] || fail "$task: $rows timed kernel rows of $sizes sizes"
  copies=$(awk -F, '$2 == "copy" && $10 > 0' "$work/$task.csv" | wc -l)
  [ "$copies" -eq $sizes ] || fail "$task: $copies copy rows of $sizes sizes"
  baselines=$(awk -F, '$2 == "baseline" && $1 == "cpu-sequential"' "$work/$task.csv" | wc -l)
  [ "$baselines" -eq $sizes ] || fail "$task: $baselines cpu-sequential rows of $sizes sizes"
  lines=$(wc -l < "$work/$task.json"); total=$(($(wc -l < "$work/$task.csv") - 1))
  [ "$lines" -eq "$total" ] || fail "$task: $lines JSON lines for $total CSV rows"
  if [ $backend = emulator ] && ! grep -q "not GPU performance" <<<"$out"; then
    fail "$task: the emulator sweep does not say it is not GPU performance"
  fi
done
if "$python" -c "import matplotlib" 2>/dev/null; then
  "$python" "$here/../../handout/tools/plot_sweep.py" "${csvs[@]}" --out "$work/sweep.png" || fail "plot_sweep exited $?"
  [ "$(head -c 8 "$work/sweep.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] || fail "no PNG drawn"
else
  echo "note: $python has no matplotlib: the picture is not drawn here (tests/grader/test_plot_sweep.py draws it)"
fi
[ $failures -eq 0 ] && echo "sweep: all checks passed ($backend)"
exit $((failures > 0))
