#!/usr/bin/env bash
# Sets up a bare GPU machine of the device tool (no package registry there) for
# tools/gpu_rules.sh and the GPU tests: Debian's bubblewrap, Boost.Context and Catch2 under
# /usr/local, and a .venv that is the system python3 (its pytest and matplotlib).
#   here:  mkdir -p .gpukit && (cd .gpukit && apt-get download bubblewrap catch2 \
#            libboost-context1.74-dev libboost-context1.74.0 libboost1.74-dev)
#          (.gpukit ignored in .git/info/exclude; name it in the call's carry)
#   there: bash tools/gpu_bare_setup.sh .gpukit && tools/gpu_rules.sh "$OUT/rules"
set -uo pipefail
kit=${1:?usage: tools/gpu_bare_setup.sh DEB_FOLDER}
mkdir -p /tmp/kit && for f in "$kit"/*.deb; do dpkg -x "$f" /tmp/kit; done
cp -a /tmp/kit/usr/include/. /usr/local/include/
cp -a /tmp/kit/usr/lib/. /usr/local/lib/
cp -a /tmp/kit/usr/bin/bwrap /usr/local/bin/
ldconfig
py=$(command -v python3)
mkdir -p .venv/bin && ln -sf "$py" .venv/bin/python && ln -sf "$py" .venv/bin/python3
printf '#!/bin/sh\nexec %s -m pytest "$@"\n' "$py" > .venv/bin/pytest && chmod +x .venv/bin/pytest
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
echo "bwrap: $(command -v bwrap); $(g++ --version | head -1); $(cmake --version | head -1)"
