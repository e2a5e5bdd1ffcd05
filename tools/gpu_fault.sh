#!/usr/bin/env bash
# The task at fault on a GPU (issue 42, item 5): tests/grader/test_fault_search.py's GPU
# cases, the variant builds made for CUDA and their cases run on the GPU (the emulator's run
# in CI). Exit 77 (skipped) without a GPU.
# usage: tools/gpu_fault.sh OUTDIR   (after tools/install_deps.sh; writes OUTDIR/pytest.log)
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: tools/gpu_fault.sh OUTDIR}
mkdir -p "$out"
command -v nvidia-smi >/dev/null && nvidia-smi -L | grep -q GPU || { echo "no GPU: skipped"; exit 77; }
.venv/bin/python -m pytest -q -rs tests/grader/test_fault_search.py -k gpu 2>&1 | tee "$out/pytest.log"
rc=${PIPESTATUS[0]}
grep -q " skipped" "$out/pytest.log" && { echo "a GPU test was skipped: not verified"; exit 1; }
exit "$rc"
