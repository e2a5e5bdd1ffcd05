#!/usr/bin/env bash
# The task at fault on a GPU (issue 42, item 5): tests/grader/test_fault_search.py's GPU
# cases, the variant builds made for CUDA and their cases run on the GPU (the emulator's run
# in CI). Exit 77 (skipped) without a GPU.
# usage: tools/gpu_fault.sh OUTDIR   (needs tools/install_deps.sh's .venv and nvcc; writes
#        OUTDIR/pytest.log). Builds the reference for the GPU it finds (cached after), then
#        five variant builds; a few minutes on an H100 machine with 16 cores. Expect
#        "2 passed, 5 deselected" (a wrong reduce named, a wrong scan named).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: tools/gpu_fault.sh OUTDIR}
mkdir -p "$out"
command -v nvidia-smi >/dev/null && nvidia-smi -L | grep -q GPU || { echo "no GPU: skipped"; exit 77; }
.venv/bin/python -m pytest -q -rs -p no:cacheprovider tests/grader/test_fault_search.py -k gpu 2>&1 | tee "$out/pytest.log"
rc=${PIPESTATUS[0]}
grep -q " skipped" "$out/pytest.log" && { echo "a GPU test was skipped: not verified"; exit 1; }
exit "$rc"
