#!/usr/bin/env bash
# make bench's set-up step: the newest CCCL headers from PyPI (the nvidia-cuda-cccl wheel,
# headers only) unpacked into DEST (the build folder's cccl/). Prints their include folder
# (the one holding cub/version.cuh) on stdout; prints nothing, and why on stderr, when
# there are none (make bench then measures the toolkit's CUB only).
#
#   bench/cccl_setup.sh DEST
#
# Where the wheel comes from, the first that is set or works:
#   CCCL_DIR=path     an include folder already unpacked (holding cub/version.cuh)
#   CCCL_WHEEL=path   a nvidia_cuda_cccl-*.whl, or a folder holding one (a machine without
#                     network: `pip download nvidia-cuda-cccl --no-deps -d FOLDER` elsewhere)
#   DEST/wheel/       a wheel fetched before
#   pip download nvidia-cuda-cccl --no-deps (the network)
set -u
dest=${1:?usage: bench/cccl_setup.sh DEST}
python=${PYTHON:-python3}

include_of() {  # the folder under $1 holding cub/version.cuh
    local found
    found=$(find "$1" -path '*/cub/version.cuh' -print -quit 2>/dev/null)
    [ -n "$found" ] && dirname "$(dirname "$found")"
}

if [ -n "${CCCL_DIR:-}" ]; then
    if [ -f "$CCCL_DIR/cub/version.cuh" ]; then echo "$CCCL_DIR"; exit 0; fi
    echo "cccl_setup: CCCL_DIR=$CCCL_DIR holds no cub/version.cuh" >&2
    exit 0
fi
mkdir -p "$dest/wheel"
wheel=""
if [ -n "${CCCL_WHEEL:-}" ]; then
    if [ -d "$CCCL_WHEEL" ]; then
        wheel=$(ls -1 "$CCCL_WHEEL"/nvidia_cuda_cccl-*.whl 2>/dev/null | sort -V | tail -n 1)
    elif [ -f "$CCCL_WHEEL" ]; then
        wheel=$CCCL_WHEEL
    fi
    [ -n "$wheel" ] || echo "cccl_setup: CCCL_WHEEL=$CCCL_WHEEL is no nvidia_cuda_cccl wheel" >&2
fi
if [ -z "$wheel" ]; then
    wheel=$(ls -1 "$dest"/wheel/nvidia_cuda_cccl-*.whl 2>/dev/null | sort -V | tail -n 1)
fi
if [ -z "$wheel" ]; then
    pip=()
    if [ -x .venv/bin/pip ]; then pip=(.venv/bin/pip); else pip=("$python" -m pip); fi
    if ! timeout 120 "${pip[@]}" download --quiet --retries 0 --timeout 15 nvidia-cuda-cccl --no-deps -d "$dest/wheel" >&2; then
        echo "cccl_setup: the nvidia-cuda-cccl wheel could not be fetched from PyPI (no network?); set CCCL_WHEEL" >&2
        exit 0
    fi
    wheel=$(ls -1 "$dest"/wheel/nvidia_cuda_cccl-*.whl 2>/dev/null | sort -V | tail -n 1)
fi
[ -n "$wheel" ] || exit 0
unpacked="$dest/$(basename "$wheel" .whl)"
if [ ! -d "$unpacked" ]; then
    # Headers only: the wheel's include folder, nothing else of it.
    "$python" - "$wheel" "$unpacked" <<'PY' || { echo "cccl_setup: cannot unpack $wheel" >&2; exit 0; }
import sys, zipfile
from pathlib import Path
wheel, out = sys.argv[1], Path(sys.argv[2])
with zipfile.ZipFile(wheel) as z:
    members = [m for m in z.namelist() if "/include/" in m and not m.endswith("/")]
    for m in members:
        target = out / m
        if not target.resolve().is_relative_to(out.resolve()):
            raise SystemExit(f"unsafe path in the wheel: {m}")
    z.extractall(out, members)
PY
fi
include=$(include_of "$unpacked")
if [ -z "$include" ]; then
    echo "cccl_setup: $wheel holds no cub/version.cuh" >&2
    exit 0
fi
echo "$include"
