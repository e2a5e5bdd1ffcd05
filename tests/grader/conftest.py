"""Shared fixtures of the grader's tests.

End-to-end tests grade the submissions of tests/fixtures/submissions/ with one grading
session per backend (so the reference is built once, and identical builds and cases
are shared): on the CPU emulator when it builds here, on the GPU when there is one.
Neither is ever reported as passed when it cannot run: the tests are skipped.
"""
from __future__ import annotations

import dataclasses
import os
import shutil
import subprocess
import sys
import tempfile
from contextlib import contextmanager
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Iterator

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from grader.machine import detect as machines  # noqa: E402
from grader.grading import sandbox  # noqa: E402
from grader.grading.build import Builder, Layout, Toolchain  # noqa: E402
from grader.grading.pipeline import grade  # noqa: E402
from grader.grading.session import GraderError, Options, Session  # noqa: E402
from grader.results import SubmissionResult  # noqa: E402
from grader.config.rubric import ForbiddenRubric, Rubric, load_rubric  # noqa: E402
from grader.config.assignment import default_assignment  # noqa: E402

sys.path.insert(0, str(REPO / "tools"))
from fixtures import compose, fixture_names, load_fixture  # noqa: E402  (tools/fixtures.py)

TEST_RUBRIC = Path(__file__).resolve().parent / "rubric-test.toml"
TEST_SEED = 4242
# The assignment's one C++ standard (data/assignment.toml [language]): every compile a test
# runs itself states it from here, never its own (test_assignment.py checks).
CXX_STANDARD = default_assignment().cxx_standard
CXX_STD = f"-std=c++{CXX_STANDARD}"
CUDA_CXX_STD = CXX_STD   # nvcc's: the same one


# ---- expectations that follow data/ (a task or an operator added edits no test) --------------

def reference_score(rubric: Rubric) -> float:
    """The reference's score without a GPU: the maximum's correctness points, and each
    bonus task's correctness points on top."""
    return rubric.max_correctness + sum(t.correctness_points for t in rubric.tasks if t.bonus)


def task_numbers(rubric: Rubric, sep: str = ", ", bonus: bool = True) -> str:
    """The rubric's task numbers ("1, 2, 3, 4"), without the bonus tasks where `bonus` is
    False (a bonus task left as the handout has it is not attempted, so not "untouched")."""
    return sep.join(str(t.number) for t in rubric.tasks if bonus or not t.bonus)


def assert_expected_verdicts(name: str, result: SubmissionResult, backend: str) -> None:
    """The verdicts of fixture `name`'s fixture.toml [expect] (on `backend`) are the ones got."""
    fx = load_fixture(name)
    expect = fx.expected(backend)
    got = {tr.name: tr.verdict for tr in result.tasks}
    got["integration"] = result.integration.verdict
    for key, want in expect.items():
        if key == "error" or want == "any":
            continue
        assert got[key] == want, f"{name}: {key} is {got[key]}, expected {want} ({fx.description})"
    for tr in result.tasks:
        if tr.verdict == "not_attempted":
            # A bonus left alone costs nothing: not built, no case run, no point (one that
            # wraps the placeholder is built, to see that it does, and not run).
            assert (tr.build is None or tr.placeholder) and not tr.cases and tr.points == 0, \
                (name, tr.name)
    assert bool(result.error) == bool(expect.get("error", False)), result.error


def fixture_driver(session: Session, name: str, tmp: Path, file: str = "reduce.cuh",
                   past_static_checks: bool = False) -> Path:
    """The fixture's `file` built among the reference's files (as its task is graded):
    the driver binary, for tests that run it directly. `past_static_checks`: built even
    where the code rules before the build would refuse it (a build of its own: a
    comment added, so that no grade of the same files reuses it), to show what the
    runtime defences alone do with it."""
    dest = tmp / name
    folder = dest / name if (dest / name).exists() else compose(name, dest)
    files = dict(session.builder.reference_files)
    files[file] = next(folder.rglob(file)).read_bytes()
    builder = session.builder
    if not past_static_checks:
        b = builder.build(f"{name} ({file})", files, {}, {})
    else:
        files[file] += b"\n// built past the static checks (a test)\n"
        setattr(builder, "_gate", lambda *args, **kwargs: [])   # this instance, this build
        try:
            b = builder.build(f"{name} ({file}, past the static checks)", files, {}, {})
        finally:
            delattr(builder, "_gate")
    assert b.ok and b.binary is not None, b.errors
    return b.binary


@contextmanager
def scratch_builder(tools: Toolchain) -> Iterator[Builder]:
    """A Builder for `tools` over this checkout, with the tests' cache and a workspace
    of its own (removed after)."""
    work = Path(tempfile.mkdtemp(prefix=f"scanlab-{tools.backend.name}-build-test-"))
    work.chmod(0o711)
    try:
        yield Builder(Layout(REPO), tools, cache_dir(), work, sandbox.sandbox_identity(), 900, 16384,
                      ForbiddenRubric())
    finally:
        shutil.rmtree(work, ignore_errors=True)


def gpu_present() -> bool:
    """A GPU the CUDA driver can use: nvidia-smi lists one."""
    smi = shutil.which("nvidia-smi")
    if not smi:
        return False
    try:
        p = subprocess.run([smi, "-L"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return p.returncode == 0 and "GPU" in p.stdout


@contextmanager
def students_own_builds(builder: Builder) -> Iterator[Builder]:
    """`builder` building as a student's own `make` does (no SCANLAB_GRADING_BUILD: the
    handout's placeholders run), for the tests of make grade-local and scanlab app."""
    before = builder.placeholders_do_nothing
    builder.placeholders_do_nothing = False
    try:
        yield builder
    finally:
        builder.placeholders_do_nothing = before


def cache_dir() -> Path:
    return Path(os.environ.get("SCANLAB_TEST_CACHE", str(REPO / "build" / "grader-test-cache")))


class Graded:
    """Grades each fixture once per backend session, on first use."""

    def __init__(self, session: Session, tmp: Path):
        self.session = session
        self.tmp = tmp
        self.results: dict[str, SubmissionResult] = {}

    def __call__(self, name: str) -> SubmissionResult:
        if name not in self.results:
            self.results[name] = grade(self.session, compose(name, self.tmp / "submissions"))
        return self.results[name]

    def prefetch(self, names: list[str]) -> None:
        """Grades these fixtures concurrently (their builds share the CPU cores)."""
        todo = [n for n in names if n not in self.results]
        with ThreadPoolExecutor(max_workers=3 * self.session.jobs) as pool:
            for name, result in zip(todo, pool.map(
                    lambda n: grade(self.session, compose(n, self.tmp / "submissions")), todo)):
                self.results[name] = result


# CTest runs this suite as two tests that share CI's two cores (tests/CMakeLists.txt):
# `--part graded-fixtures` the tests of the fixtures graded on the emulator (the
# `emulator` fixture: every fixture graded at once, then checked), `--part rest` every
# other test. Together they are the whole suite: each test is in exactly one part.
PARTS = ("graded-fixtures", "rest")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--part", choices=PARTS, default=None,
                     help="run one part of the suite: the tests of the emulator's graded fixtures, "
                          "or the rest (default: both)")


def in_part(item: pytest.Item, part: str) -> bool:
    """Whether `item` is in `part` (PARTS): by whether it uses the emulator's graded fixtures."""
    return ("emulator" in getattr(item, "fixturenames", ())) == (part == "graded-fixtures")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    part = config.getoption("--part")
    if part is None:
        return
    other = [item for item in items if not in_part(item, part)]
    if other:
        config.hook.pytest_deselected(items=other)
        items[:] = [item for item in items if in_part(item, part)]


@pytest.fixture(scope="session")
def test_rubric() -> Rubric:
    return load_rubric(TEST_RUBRIC)


def _session(backend: str, rubric: Rubric, tmp: Path) -> Session:
    options = Options(backend=backend, cache_dir=cache_dir(), seed=TEST_SEED, draw_seed=TEST_SEED)
    session = Session(rubric, Layout(REPO), options, log=lambda line: None)
    try:
        session.prepare()
    except GraderError as e:
        session.close()
        pytest.fail(f"the {backend} reference does not build: {e}")
    return session


@pytest.fixture(scope="session")
def emu_session(test_rubric: Rubric, tmp_path_factory: pytest.TempPathFactory):
    """A grading session on the CPU emulator, its reference built."""
    m = machines.detect(check_boost=True)
    if not m.can_build_emulator:
        pytest.skip("the CPU emulator cannot be built here: "
                    + "; ".join(t.problem for t in (m.cmake, m.gxx, m.boost_context) if not t.ok))
    session = _session("emulator", test_rubric, tmp_path_factory.mktemp("emulator"))
    yield session
    session.close()


def selected_fixtures(request: pytest.FixtureRequest) -> list[str]:
    """The fixtures the selected tests grade (their `name` parameter), or every one when
    no selected test names one: `pytest -k NAME` grades one fixture, not the whole set."""
    known = set(fixture_names())
    names = {item.callspec.params["name"] for item in request.session.items
             if hasattr(item, "callspec") and item.callspec.params.get("name") in known}
    return sorted(names) or sorted(known)


@pytest.fixture(scope="session")
def emulator(emu_session: Session, tmp_path_factory: pytest.TempPathFactory,
             request: pytest.FixtureRequest):
    """The fixture submissions the selected tests name (else every one), graded on the
    emulator all at once, in parallel; any other is graded when first asked for."""
    graded = Graded(emu_session, tmp_path_factory.mktemp("emulator-submissions"))
    graded.prefetch(selected_fixtures(request))
    return graded


@pytest.fixture(scope="session")
def gpu_session(test_rubric: Rubric, tmp_path_factory: pytest.TempPathFactory):
    """A grading session on the GPU, its reference built (no fixture graded yet)."""
    if not gpu_present():
        pytest.skip("no GPU (nvidia-smi lists none): GPU end-to-end tests not run")
    m = machines.detect(check_boost=False)
    if not m.can_build_cuda:
        pytest.skip("a GPU, but no CUDA toolchain (nvcc/cmake/g++) to build for it")
    session = _session("cuda", test_rubric, tmp_path_factory.mktemp("gpu-session"))
    yield session
    session.close()


@pytest.fixture(scope="session")
def gpu_huge_session(test_rubric: Rubric, tmp_path_factory: pytest.TempPathFactory):
    """A GPU grading session whose draws have their n >= 2^31 cases (the tests' rubric
    leaves them out), for the fixtures marked `huge = true`."""
    if not gpu_present():
        pytest.skip("no GPU (nvidia-smi lists none): GPU end-to-end tests not run")
    rubric = dataclasses.replace(test_rubric, drawn=dataclasses.replace(test_rubric.drawn, huge=True))
    session = _session("cuda", rubric, tmp_path_factory.mktemp("gpu-huge-session"))
    yield session
    session.close()


@pytest.fixture(scope="session")
def gpu(gpu_session: Session, tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest):
    """The fixture submissions the selected tests name (else every one), graded on the
    GPU all at once; any other is graded when first asked for."""
    graded = Graded(gpu_session, tmp_path_factory.mktemp("gpu"))
    graded.prefetch(selected_fixtures(request))
    return graded


# A builder with nvcc, for the tests that compile for the GPU (test_build_cuda.py,
# test_contract.py): skipped, not passed, without a CUDA toolchain.
@pytest.fixture(scope="module")
def cuda_builder():
    from grader.machine.backend import CUDA
    m = machines.detect(check_boost=False)
    if not m.can_build_cuda:
        pytest.skip("no CUDA toolchain (nvcc, cmake, g++) here")
    with scratch_builder(Toolchain(CUDA, m.cmake.path, m.nvcc.path, "90", f"nvcc {m.nvcc.version}",
                                   2, "Release")) as builder:
        yield builder
