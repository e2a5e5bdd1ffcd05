#!/usr/bin/env bash
# Installs what scanlab needs. Two parts, so a grader needs no root:
#   tools/install_deps.sh --grader   the grader alone, into .venv (`make grader`): Python
#                                    >= 3.11 and pip, no sudo, no apt, any Linux; with
#                                    matplotlib and copydetect (the grader's extras)
#   tools/install_deps.sh            the whole test suite's needs (`make deps`, run by
#                                    `make test`): the Debian packages (apt-get, as root or
#                                    through sudo: the compilers, Catch2, and the test
#                                    suite's Slurm daemons and Chromium), then .venv with
#                                    the test extras
# Safe to run again: it installs only what is missing.
# The CUDA toolkit is not a Debian package here: without nvcc, only the CPU emulator
# builds are made (and said so by CMake).
set -euo pipefail
cd "$(dirname "$0")/.."

only_grader=0
[ "${1:-}" = "--grader" ] && only_grader=1

python=${PYTHON:-python3}
if ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
  echo "install_deps: the grader needs Python >= 3.11 ($python is $("$python" --version 2>&1 || echo missing));" \
       "set PYTHON=/path/to/python3.11" >&2
  exit 1
fi

if ((only_grader)); then
  [ -x .venv/bin/python ] || "$python" -m venv .venv
  .venv/bin/pip install -q --disable-pip-version-check ".[plots,similarity]"
  rm -rf build/lib build/bdist.* ./*.egg-info   # setuptools' leftovers
  echo "install_deps: the grader is installed: .venv/bin/scanlab-grade (or .venv/bin/python -m grader);" \
       "check the machine with: .venv/bin/scanlab-grade doctor"
  exit 0
fi

packages=(cmake make g++ catch2 libboost-context-dev python3 python3-venv zip bubblewrap binutils
          chromium-headless-shell   # the browser test of the HTML reports
          slurmctld slurmd slurm-client munge)  # the Slurm test (tests/slurm)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "install_deps: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  if ! command -v apt-get >/dev/null || { [ -n "$sudo" ] && ! sudo -n true 2>/dev/null; }; then
    echo "install_deps: cannot install ${missing[*]} (no apt-get, or no root/sudo here)." >&2
    echo "install_deps: the grader alone needs none of them: tools/install_deps.sh --grader (make grader)" >&2
    exit 1
  fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}"
fi

# The grader installed into .venv the ecosystem's way (pyproject.toml: the
# `scanlab-grade` command) with its test extras (pytest, mypy, xmlschema, matplotlib,
# copydetect); again when pyproject.toml, the grader's sources or the course it carries
# (data/, handout/, solution/student/: scanlab_grader.course) change.
stamp=$(find pyproject.toml grader data handout solution/student -path '*/build*' -prune -o -type f \
        ! -path '*/__pycache__/*' -print | sort | xargs cat | sha256sum | cut -d' ' -f1)
if [ ! -x .venv/bin/scanlab-grade ] || [ "$(cat .venv/grader.installed 2>/dev/null)" != "$stamp" ]; then
  [ -x .venv/bin/python ] || "$python" -m venv .venv
  .venv/bin/pip install -q --disable-pip-version-check ".[test]"
  rm -rf build/lib build/bdist.* ./*.egg-info   # setuptools' leftovers
  echo "$stamp" > .venv/grader.installed
fi

# The common JUnit schema (Jenkins' junit-10.xsd, MIT), which the grader's JUnit files
# are validated against. pytest's source distribution on PyPI ships it (its own JUnit
# tests use it); a test that cannot find it is reported skipped.
xsd=.venv/share/junit-10.xsd
if [ ! -s "$xsd" ]; then
  tmp=$(mktemp -d)
  version=$(.venv/bin/python -c 'import pytest; print(pytest.__version__)')
  if .venv/bin/pip download -q --disable-pip-version-check --no-deps --no-binary :all: \
       -d "$tmp" "pytest==$version" 2>/dev/null; then
    mkdir -p "$(dirname "$xsd")"
    tar -xzf "$tmp"/pytest-*.tar.gz -O --wildcards '*/testing/example_scripts/junit-10.xsd' > "$xsd" \
      || rm -f "$xsd"
  fi
  rm -rf "$tmp"
  [ -s "$xsd" ] || echo "install_deps: could not fetch junit-10.xsd (the JUnit schema test will be skipped)"
fi
