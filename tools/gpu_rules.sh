#!/usr/bin/env bash
# Issue 45 (items 2, 4, 5, 7) on a GPU machine: the code rules decided on the compiled
# program give every honest fixture its correctness points and refuse every attack, on the
# GPU as on the emulator.
#
# usage: tools/gpu_rules.sh OUTDIR
#   OUTDIR/e2e_gpu.log      the fixtures' verdicts graded on the GPU (test_e2e_gpu.py):
#                           honest_* full marks, attack_* / hidden calls refused or wrong
#   OUTDIR/build_cuda.log   nvcc's objects and PTX: host code only where it runs,
#                           forbidden calls by symbol, placeholders from the PTX, and one
#                           rule verdict on both backends (test_build_cuda.py)
#   OUTDIR/summary.txt      one line per log: passed/failed/skipped counts
# Builds for the GPU it finds (sm_90 on an H100); about 6 minutes with 16 cores. Needs tools/install_deps.sh's
# .venv and nvcc. The printf and const-table fixtures pass on the GPU once item 3
# (restoring device globals instead of refusing them) is merged.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: tools/gpu_rules.sh OUTDIR}
mkdir -p "$out"
# The fixtures issue 45 added or whose rule changed (the whole corpus: make test on a GPU).
fixtures=$(ls tests/fixtures/submissions | grep -E '^honest_(printf_kernel|device_const_table|static_const_local|host_device_helper|libc_|disabled_debug|dead_placeholder|baseline_variable|device_assert|dynamic_shared|mul24|warp_masks)|^attack_(fnptr_launch|stream|placeholder_token|placeholder_table|placeholder_virtual|placeholder_volatile|placeholder_template|wrapped_bonus)$|^(macro_fopen|paren_getenv|fnptr_system|reference|handout)$')
selection=$(echo $fixtures | sed 's/ / or /g')
.venv/bin/pytest -q -p no:cacheprovider tests/grader/test_e2e_gpu.py -k "test_fixture_verdicts_on_gpu and ($selection)" \
  > "$out/e2e_gpu.log" 2>&1
.venv/bin/pytest -q -p no:cacheprovider tests/grader/test_build_cuda.py \
  -k "compiled_checks or placeholder_call or (both_backends and ($selection))" > "$out/build_cuda.log" 2>&1
for log in e2e_gpu build_cuda; do
  echo "$log: $(tail -n 1 "$out/$log.log")"
done | tee "$out/summary.txt"
