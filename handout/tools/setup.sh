#!/bin/sh
# scanlab set-up (Debian or Ubuntu): sh tools/setup.sh
#   1. the build's packages (g++, cmake, make, Boost.Context) through apt-get: as root
#      directly, else through sudo; without either it prints the line to ask for.
#   2. matplotlib (make plot) into the Python the Makefile runs: $PYTHON, else the python3
#      first on PATH. A virtual environment or conda gets it by pip; the system Python by
#      apt-get (python3-matplotlib); another Python by pip --user.
# Safe to run again: it installs only what is missing. DRY_RUN=1: print the commands only.
PACKAGES="g++ cmake make libboost-context-dev"
PYTHON=${PYTHON:-python3}

run() {
  echo "+ $*"
  [ "${DRY_RUN:-0}" = 1 ] || "$@"
}

# How this user runs apt-get: "" (root), "sudo", or "none".
as_root() {
  if [ "$(id -u)" = 0 ]; then echo ""
  elif command -v sudo >/dev/null 2>&1; then echo sudo
  else echo none
  fi
}

ROOT=$(as_root)
apt_install() {
  if [ "$ROOT" = none ]; then
    echo "setup: not root and no sudo here: ask whoever administers this machine to run" >&2
    echo "  apt-get install $*" >&2
    return 1
  fi
  run $ROOT apt-get install -y "$@"
}

status=0
missing=
for p in $PACKAGES; do
  dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
done
if [ -n "$missing" ]; then
  apt_install $missing || status=1
else
  echo "setup: the build's packages are there ($PACKAGES)"
fi

if ! command -v "$PYTHON" >/dev/null 2>&1; then
  echo "setup: no $PYTHON on PATH: make plot needs a Python 3 (PYTHON=/path/to/python3)" >&2
  exit 1
fi
if "$PYTHON" -c 'import matplotlib' >/dev/null 2>&1; then
  echo "setup: $PYTHON ($(command -v "$PYTHON")) has matplotlib"
  exit $status
fi
# sys.prefix differs from sys.base_prefix in a virtual environment; conda has conda-meta.
where=$("$PYTHON" -c 'import os, sys
print("env" if sys.prefix != sys.base_prefix or os.path.isdir(os.path.join(sys.prefix, "conda-meta"))
      else "system" if sys.prefix == "/usr" else "other")')
case "$where" in
  env) run "$PYTHON" -m pip install matplotlib || status=1 ;;
  system) apt_install python3-matplotlib || status=1 ;;
  *) run "$PYTHON" -m pip install --user matplotlib || status=1 ;;
esac
exit $status
