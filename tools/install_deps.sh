#!/usr/bin/env bash
# Installs what the build and tests need on Debian/Ubuntu: the Debian packages
# (apt-get, as root or through sudo) and pytest in a local virtual environment
# (.venv). Safe to run again: it installs only what is missing.
# The CUDA toolkit is not a Debian package here: without nvcc, only the CPU emulator
# builds are made (and said so by CMake).
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(cmake make g++ catch2 libboost-context-dev python3 python3-venv zip bubblewrap binutils)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "install_deps: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}"
fi

if [ ! -x .venv/bin/pytest ]; then
  python3 -m venv .venv
  .venv/bin/pip install -q --disable-pip-version-check -r tests/grader/requirements.txt
fi
