"""The grader installed the ecosystem's way: `pip install .` (pyproject.toml) gives the
`scanlab-grade` command, whose version is the one written in grader/__init__.py, and
which finds its checkout from where it runs or from $SCANLAB_ROOT."""
from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from conftest import REPO
import grader

COMMAND = Path(sys.executable).parent / "scanlab-grade"


def installed() -> Path:
    if not COMMAND.is_file():
        pytest.skip(f"{COMMAND} is not installed (make test installs it: pip install '.[test]')")
    return COMMAND


def test_the_version_is_written_once():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert "version" not in project and "version" in project["dynamic"]
    setuptools = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert setuptools["dynamic"]["version"] == {"attr": "scanlab_grader.__version__"}
    r = subprocess.run([sys.executable, "-m", "grader", "--version"], cwd=REPO, capture_output=True,
                       text=True, timeout=60)
    assert r.stdout.strip() == f"scanlab grader {grader.__version__}"


def test_scanlab_grade_runs_in_a_checkout_and_says_where_it_is_not(tmp_path: Path):
    command = installed()
    env = {k: v for k, v in os.environ.items() if k != "SCANLAB_ROOT"}
    r = subprocess.run([str(command), "--version"], cwd=REPO, capture_output=True, text=True, timeout=60,
                       env=env)
    assert r.returncode == 0 and r.stdout.strip() == f"scanlab grader {grader.__version__}"
    # In the handout folder of a checkout: the checkout above it.
    r = subprocess.run([str(command), "rubric-keys"], cwd=REPO / "handout", capture_output=True, text=True,
                       timeout=60, env=env)
    assert r.returncode == 0 and "zero_for_placeholders" in r.stdout
    # Elsewhere: a message, exit 2; with SCANLAB_ROOT: the checkout it names.
    r = subprocess.run([str(command), "rubric-keys"], cwd=tmp_path, capture_output=True, text=True,
                       timeout=60, env=env)
    assert r.returncode == 2 and "no scanlab checkout here" in r.stderr and "SCANLAB_ROOT" in r.stderr
    r = subprocess.run([str(command), "rubric-keys"], cwd=tmp_path, capture_output=True, text=True,
                       timeout=60, env={**env, "SCANLAB_ROOT": str(REPO)})
    assert r.returncode == 0 and "zero_for_placeholders" in r.stdout


def test_the_package_says_its_license_and_authors_and_names_no_made_up_address():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert project["license"] == "MIT" and project["license-files"] == ["LICENSE"]
    assert (REPO / "LICENSE").read_text().startswith("MIT License")
    assert project["authors"] and all(a.get("name") for a in project["authors"])
    assert "urls" not in project          # no public address is known: none is invented
    ignored = (REPO / ".gitignore").read_text().splitlines()
    assert "*.egg-info/" in ignored       # what `pip install .` leaves behind


def test_the_installed_package_is_scanlab_grader_with_every_subpackage(tmp_path: Path):
    """The folder grader/ installs as `scanlab_grader` (a name no other package takes),
    with every subpackage of the folder; no top-level `grader` is installed."""
    setuptools = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert setuptools["package-dir"] == {"scanlab_grader": "grader"}
    folders = sorted(".".join(("scanlab_grader", *p.parent.relative_to(REPO / "grader").parts))
                     for p in (REPO / "grader").rglob("__init__.py"))
    assert sorted(setuptools["packages"]) == folders
    scripts = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["scanlab-grade"] == "scanlab_grader.entry:main"
    installed()
    # Outside the checkout, the installed package alone: scanlab_grader imports, grader does not.
    probe = ("import importlib.util, scanlab_grader; "
             "print(scanlab_grader.__version__, importlib.util.find_spec('grader') is None)")
    r = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True,
                       timeout=60, env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"})
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == [grader.__version__, "True"]
