#!/usr/bin/env bash
# A student unit built as a shared object (scanlab_add_unit_library) exports
# scanlab::student::unitEntry and nothing else, so that units loaded side by side by the
# unit loader share no symbol; and it leaves scanlab_kernel_launched to the program.
# usage: unit_exports.sh <unit .so>
set -u
unit=$1
defined=$(nm -D --defined-only "$unit" | awk '{ print $3 }' | sort)
[ "$defined" = _ZN7scanlab7student9unitEntryEv ] \
  || { echo "FAIL: $unit exports: $(echo "$defined" | paste -sd' ')"; exit 1; }
nm -D --undefined-only "$unit" | grep -qw scanlab_kernel_launched \
  || { echo "FAIL: $unit does not leave scanlab_kernel_launched to the program"; exit 1; }
echo "$unit exports unitEntry alone"
