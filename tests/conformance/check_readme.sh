#!/bin/sh
# The emulator README states the coverage that device_functions.def gives.
# usage: check_readme.sh <conformance_emu> <handout/emulator/README.md>
figure=$("$1" coverage | sed -n 's/^coverage: \([0-9]* of [0-9]* listed functions\)$/\1/p')
[ -n "$figure" ] || { echo "no coverage figure from $1"; exit 1; }
grep -q "$figure" "$2" || { echo "$2 does not state the coverage \"$figure\""; exit 1; }
echo "README states: $figure"
