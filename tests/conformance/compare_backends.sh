#!/bin/sh
# The conformance cases on the GPU and on the emulator, compared function by function.
# usage: compare_backends.sh <conformance_gpu> <conformance_emu> <outdir>
# Exits 77 (skipped) without a GPU.
"$1" run "$3/gpu.txt"; status=$?
[ $status -eq 77 ] && exit 77
"$2" run "$3/emu.txt" || status=1
"$2" compare "$3/gpu.txt" "$3/emu.txt" || status=1
"$2" coverage | head -1
exit $status
