#!/usr/bin/env bash
# The CPU emulator's conformance with CUDA on a GPU (issue 42): builds the conformance
# test (tests/conformance/device_functions.cu) for the GPU (sm_90) and for the emulator,
# runs every emulated device function of handout/emulator/device_functions.def on both,
# and compares them function by function. Prints the agreement and the coverage figure;
# the logs and both result files go to OUTDIR.
# usage: tools/gpu_conformance.sh OUTDIR        (about 3 minutes on 16 cores)
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: tools/gpu_conformance.sh OUTDIR}
mkdir -p "$out" && out=$(cd "$out" && pwd)
build=${SCANLAB_CONFORMANCE_BUILD:-build/gpu-conformance}
{ nvidia-smi -L; nvcc --version | tail -1; } >"$out/info.txt" 2>&1
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 >"$out/configure.log" 2>&1 ||
  { echo "configure failed: $out/configure.log"; exit 1; }
cmake --build "$build" -j "$(nproc)" --target conformance_gpu conformance_emu >"$out/build.log" 2>&1 ||
  { echo "build failed: $out/build.log"; tail -20 "$out/build.log"; exit 1; }
gpu=$build/tests/conformance/conformance_gpu emu=$build/tests/conformance/conformance_emu
"$gpu" run "$out/gpu.txt" >"$out/gpu_run.log" 2>&1; gpu_status=$?
"$emu" run "$out/emu.txt" >"$out/emu_run.log" 2>&1; emu_status=$?
echo "GPU run (exit $gpu_status): $(tail -1 "$out/gpu_run.log")"
echo "emulator run (exit $emu_status): $(tail -1 "$out/emu_run.log")"
grep FAIL "$out/gpu_run.log" "$out/emu_run.log"
if [ $gpu_status -eq 77 ]; then "$emu" coverage | head -1; echo "no GPU: nothing to compare"; exit 77; fi
"$emu" compare "$out/gpu.txt" "$out/emu.txt" >"$out/compare.log" 2>&1; compare_status=$?
grep DIFFER "$out/compare.log"
tail -1 "$out/compare.log"
"$emu" coverage | tee "$out/coverage.txt" | head -1
exit $((gpu_status != 0 || emu_status != 0 || compare_status != 0))
