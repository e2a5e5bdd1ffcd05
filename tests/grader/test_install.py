"""The grader installed the ecosystem's way: `pip install .` (pyproject.toml) gives the
`scanlab-grade` command, whose version is the one written in grader/__init__.py, and
which finds its checkout from where it runs or from $SCANLAB_ROOT."""
from __future__ import annotations

import os
import shutil
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
    # Elsewhere: the course the package carries (issue 59), or where an installed package
    # predates it, a message and exit 2; with SCANLAB_ROOT: the checkout it names.
    r = subprocess.run([str(command), "rubric-keys"], cwd=tmp_path, capture_output=True, text=True,
                       timeout=60, env=env)
    carried = subprocess.run([str(COMMAND.parent / "python"), "-c",
                              "import scanlab_grader as g; print(g.is_course(g.CARRIED))"
                              " if hasattr(g, 'CARRIED') else print(False)"],
                             cwd=tmp_path, capture_output=True, text=True, timeout=60, env=env).stdout.strip()
    if carried == "True":
        assert r.returncode == 0 and "zero_for_placeholders" in r.stdout, r.stderr
    else:
        assert r.returncode == 2 and "no scanlab" in r.stderr and "SCANLAB_ROOT" in r.stderr
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
    assert setuptools["package-dir"] == {"scanlab_grader": "grader", "scanlab_grader.course": "."}
    folders = sorted(".".join(("scanlab_grader", *p.parent.relative_to(REPO / "grader").parts))
                     for p in (REPO / "grader").rglob("__init__.py"))
    assert sorted(p for p in setuptools["packages"] if p != "scanlab_grader.course") == folders
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


# ---- outside a checkout (issue 59): the package as pip installs it, without pip -------------

def site_like_pip(site: Path) -> Path:
    """grader/ as the package scanlab_grader, with the course its package data carries
    (pyproject.toml's patterns, less the excluded ones), as a wheel lays them out."""
    setuptools = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    package = site / "scanlab_grader"
    shutil.copytree(REPO / "grader", package, ignore=shutil.ignore_patterns("__pycache__"))
    source = REPO / setuptools["package-dir"]["scanlab_grader.course"]
    excluded = setuptools["exclude-package-data"]["scanlab_grader.course"]
    for pattern in setuptools["package-data"]["scanlab_grader.course"]:
        for f in source.glob(pattern):
            rel = f.relative_to(source)
            if f.is_file() and not any(rel.match(x) or rel.full_match(x) if hasattr(rel, "full_match")
                                       else rel.match(x) for x in excluded):
                (package / "course" / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(f, package / "course" / rel)
    return site


def run_installed(site: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("SCANLAB_ROOT", "PYTHONPATH")}
    return subprocess.run([sys.executable, *args], cwd=cwd, capture_output=True, text=True, timeout=120,
                          env={**env, "PYTHONPATH": str(site)})


def test_installed_it_grades_outside_a_checkout_and_prints_its_own_commands(tmp_path: Path):
    """Issue 59: outside a checkout `scanlab-grade --help` said "no scanlab checkout here",
    and the commands it printed (`python3 -m grader ...`) failed where it is installed."""
    site = site_like_pip(tmp_path / "site")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    probe = ("import scanlab_grader as g, importlib.util; from scanlab_grader.classroom import slurm; "
             "print(g.COMMAND, g.MODULE, g.REPO_ROOT == g.CARRIED.resolve(), slurm.grader_command())")
    r = run_installed(site, elsewhere, "-c", probe)
    assert r.returncode == 0, r.stderr
    command, module, carried, job = r.stdout.split(" ", 3)
    assert (command, module, carried) == ("scanlab-grade", "scanlab_grader", "True")
    assert job.strip().endswith("-m scanlab_grader")          # job scripts run the installed module
    r = run_installed(site, elsewhere, "-m", "scanlab_grader", "rubric-keys")
    assert r.returncode == 0 and "zero_for_placeholders" in r.stdout, r.stderr
    r = run_installed(site, elsewhere, "-m", "scanlab_grader", "--help")
    assert r.returncode == 0 and r.stdout.startswith("usage: scanlab-grade ") and "init DIR" in r.stdout
    # `init DIR`: a course folder, which the command then grades with (cwd before the carried one).
    r = run_installed(site, elsewhere, "-m", "scanlab_grader", "init", "course")
    assert r.returncode == 0 and "scanlab-grade doctor" in r.stdout, r.stderr
    course = elsewhere / "course"
    assert (course / "data" / "rubric.toml").is_file() and (course / "solution" / "student").is_dir()
    assert (course / "handout" / "harness").is_dir() and not (course / "grader").exists()
    r = run_installed(site, course, "-c", "import scanlab_grader as g; print(g.REPO_ROOT)")
    assert Path(r.stdout.strip()) == course.resolve()
    assert run_installed(site, elsewhere, "-m", "scanlab_grader", "init", "course").returncode == 2
    # The Gradescope zip from the installed package: the grader as grader/, the course beside it.
    r = run_installed(site, elsewhere, "-m", "scanlab_grader", "gradescope-zip", "--out", "ag.zip")
    assert r.returncode == 0, r.stderr
    import zipfile
    names = zipfile.ZipFile(elsewhere / "ag.zip").namelist()
    assert "grader/__main__.py" in names and "data/rubric.toml" in names and "handout/Makefile" in names
    assert not any(n.startswith(("grader/course/", "scanlab_grader/")) for n in names)
    # In a checkout, as a module: the module's command.
    r = subprocess.run([sys.executable, "-m", "grader", "--help"], cwd=REPO, capture_output=True, text=True,
                       timeout=60)
    assert r.stdout.startswith("usage: python3 -m grader ")


def test_no_printed_command_names_the_checkouts_module():
    """Every command the grader prints to copy comes from COMMAND (or MODULE for job
    scripts): no string of its code but a docstring says `-m grader`."""
    import ast
    for path in (REPO / "grader").rglob("*.py"):
        tree = ast.parse(path.read_text())
        docstrings = {id(n.body[0].value) for n in ast.walk(tree)
                      if isinstance(n, (ast.Module, ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef))
                      and n.body and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings \
                    and "-m grader" in node.value and path.name != "__init__.py":
                pytest.fail(f"{path.relative_to(REPO)}:{node.lineno}: {node.value!r}")
