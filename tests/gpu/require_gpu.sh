# Sourced by the GPU-only test scripts: `require_gpu <gpu driver>` exits the script with
# 77 (CTest: skipped, never passed) when the driver finds no GPU.
require_gpu() {
  "$1" info >/dev/null 2>&1
  [ $? -eq 77 ] && { echo "no GPU: skipped"; exit 77; }
  return 0
}
