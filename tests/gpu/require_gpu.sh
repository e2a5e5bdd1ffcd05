# Sourced by the GPU-only test scripts.
#   exit_code <driver> <meaning>   the driver's exit status for a meaning of
#                                  [exit_codes] in data/assignment.toml (e.g. no-gpu)
#   require_gpu <driver>           sets $skip to the "no GPU" status (CTest's
#                                  SKIP_RETURN_CODE: skipped, never passed) and exits the
#                                  script with it when the driver finds no GPU
exit_code() { "$1" list exit-codes | awk -v want="$2" '$1 == want { print $2 }'; }
require_gpu() {
  skip=$(exit_code "$1" no-gpu)
  [ -n "$skip" ] || { echo "$1 list exit-codes: no no-gpu code"; exit 1; }
  "$1" info >/dev/null 2>&1
  [ $? -eq "$skip" ] && { echo "no GPU: skipped"; exit "$skip"; }
  return 0
}
