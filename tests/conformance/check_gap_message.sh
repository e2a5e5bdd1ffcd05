#!/bin/sh
# A listed device function the emulator does not provide (device_functions.def: no) stops
# the build with a message that names it, says it is the emulator's gap, and points at the
# line that calls it.
# usage: check_gap_message.sh <c++ compiler> <handout dir>
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
cat >"$work/uses_gap.cpp" <<'CPP'
#include "emulator/cuda_emu.h"
__global__ void k(unsigned* out) {
    out[0] = __fns(0xffu, 2u, 1);
}
CPP
std=$(sed -n 's/^set(SCANLAB_CXX_STANDARD \([0-9]*\))$/\1/p' "$2/cmake/assignment.cmake")
if "$1" -std=c++"$std" -fsyntax-only -I "$2" "$work/uses_gap.cpp" >"$work/log" 2>&1; then
  echo "a kernel using __fns built on the emulator, which does not provide it"; exit 1
fi
grep -q "emulator gap: __fns is a CUDA device function the scanlab CPU emulator does not provide" "$work/log" ||
  { echo "the error does not name __fns as the emulator's gap:"; cat "$work/log"; exit 1; }
grep -q "uses_gap.cpp:3" "$work/log" || { echo "the error does not name the calling line:"; cat "$work/log"; exit 1; }
echo "gap message names __fns and uses_gap.cpp:3"
