#!/usr/bin/env bash
# Gradescope image setup (runs once, as root, when the autograder is uploaded).
# Installs the CPU emulator's build tools and a Python with tomllib (3.11+), then
# builds the reference driver into the cache so every submission finds it there.
# (AUTOGRADER_ROOT: /autograder on Gradescope; another folder to try it locally.)
set -euo pipefail
ROOT=${AUTOGRADER_ROOT:-/autograder}
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq cmake make g++ libboost-context-dev python3 bubblewrap binutils
if ! python3 -c 'import tomllib' 2>/dev/null; then
  # Ubuntu 22.04 ships Python 3.10: add 3.11.
  apt-get install -y -qq python3.11 || {
    apt-get install -y -qq software-properties-common
    add-apt-repository -y ppa:deadsnakes/ppa && apt-get update -qq
    apt-get install -y -qq python3.11
  }
fi
PY=python3
python3 -c 'import tomllib' 2>/dev/null || PY=python3.11
echo "$PY" > "$ROOT/source/.python"
cd "$ROOT/source"
SCANLAB_CACHE=${SCANLAB_CACHE:-$ROOT/scanlab-cache} "$PY" -m grader prepare --backend emulator
