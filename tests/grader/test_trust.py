"""The trust model: a submission's program cannot decide its own verdict. Fake
"student drivers" (shell scripts) lie in every way a program can; the trusted
reference's verify decides."""
from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import pytest

from conftest import TEST_RUBRIC
from grader.config.cases import Case
from grader.grading.correctness.check import TimeoutTracker, read_json, run_case
from grader.config.rubric import load_rubric
from grader.grading.timing import (Repetitions, TimingReportError, parse_baselines, parse_timing,
                                   read_repetitions, reference_repetitions)

CASE = Case("scan", "add-i32", 1000, 256, "random")


def fake_driver(session, name: str, body: str) -> Path:
    """An executable script the sandboxed user can run, acting as a student's driver."""
    folder = session.workdir / "fakes"
    folder.mkdir(exist_ok=True)
    folder.chmod(0o755)
    path = folder / name
    path.write_text("#!/bin/sh\n"
                    "# args: run --task T --op O --n N --block B --seed S --dist D --output F --json J\n"
                    'OUT=""; JSON=""; prev=""\n'
                    'for a in "$@"; do case "$prev" in --output) OUT=$a;; --json) JSON=$a;; esac; prev=$a; done\n'
                    + body + "\n")
    path.chmod(0o755)
    return path


def grade_with(session, driver: Path, case: Case = CASE):
    """The verdict on the fake driver's case. Without bubblewrap's jail: some fakes run a
    copy of the reference kept in the workspace, which the jail hides (what the jail does
    is tested in test_sandbox.py)."""
    setup = session.prepare()
    setup = dataclasses.replace(setup, identity=dataclasses.replace(setup.identity, jail=None))
    return run_case(setup, driver, f"fake-{driver.name}", case, 7, TimeoutTracker())


def test_lying_program_fails(emu_session):
    # Exit 0, a JSON report claiming a pass, "PASS" on stdout, and a wrong output file.
    driver = fake_driver(emu_session, "liar", """
head -c 4000 /dev/zero > "$OUT"
echo '{"scanlab": 1, "status": "pass", "mismatches": 0}' > "$JSON"
echo "  check   PASS (1000 elements match the CPU reference)"
echo "TOTAL 100 / 100"
exit 0""")
    r = grade_with(emu_session, driver)
    assert r.status == "fail"
    assert "differ" in r.summary
    assert "reported success" in r.details


def test_honest_wrapper_of_the_reference_passes(emu_session):
    # The same script shape, running the real reference: passes. (The test can fail.)
    ref = emu_session.prepare().reference
    copy = emu_session.workdir / "fakes" / "ref-copy"
    copy.parent.mkdir(exist_ok=True)
    copy.parent.chmod(0o755)
    copy.write_bytes(ref.read_bytes())
    copy.chmod(0o755)
    driver = fake_driver(emu_session, "honest", f'exec {copy} "$@"')
    r = grade_with(emu_session, driver)
    assert r.status == "pass", (r.summary, r.details)


def test_no_output_file(emu_session):
    driver = fake_driver(emu_session, "silent", 'echo \'{"status": "pass"}\' > "$JSON"; exit 0')
    r = grade_with(emu_session, driver)
    assert r.status == "fail" and "no output file" in r.summary
    assert "exit status 0" in r.summary and "_Exit" not in r.summary   # it did write its report


def test_a_program_that_ends_before_writing_anything_is_told_how_it_ended(emu_session):
    driver = fake_driver(emu_session, "quitter", "exit 0")
    r = grade_with(emu_session, driver)
    assert r.status == "fail"
    assert "no output file, and ended with exit status 0 before writing its report" in r.summary
    assert "_Exit()" in r.summary


def test_a_flood_of_output_is_mentioned(emu_session):
    driver = fake_driver(emu_session, "flooder", "yes 'printf from a kernel' | head -c 2000000; exit 1")
    r = grade_with(emu_session, driver)
    assert r.status != "pass"
    assert "it printed 2.0 MB (a printf in a kernel?)" in r.details


def test_output_symlink_is_not_followed(emu_session):
    driver = fake_driver(emu_session, "linker", 'ln -s /etc/passwd "$OUT"; exit 0')
    r = grade_with(emu_session, driver)
    assert r.status == "fail"


def test_wrong_size_output(emu_session):
    driver = fake_driver(emu_session, "short", 'head -c 12 /dev/zero > "$OUT"; exit 0')
    r = grade_with(emu_session, driver)
    assert r.status == "fail" and "unusable" in r.summary


def test_crash_after_writing_a_right_answer_still_fails(emu_session):
    ref = emu_session.prepare().reference
    copy = emu_session.workdir / "fakes" / "ref-copy2"
    copy.parent.mkdir(exist_ok=True)
    copy.parent.chmod(0o755)
    copy.write_bytes(ref.read_bytes())
    copy.chmod(0o755)
    driver = fake_driver(emu_session, "crasher", f'{copy} "$@" > /dev/null; kill -SEGV $$')
    r = grade_with(emu_session, driver)
    assert r.status == "crash" and "SIGSEGV" in r.summary


@pytest.mark.parametrize("code, status", [(3, "not_implemented"), (4, "error"), (2, "error"), (77, "error"),
                                          (5, "not_implemented")])
def test_exit_codes(emu_session, code, status):
    driver = fake_driver(emu_session, f"exit{code}", f"echo 'ERROR something broke'; exit {code}")
    r = grade_with(emu_session, driver)
    assert r.status == status
    # 5: a grading build reached the handout's placeholder (harness/baselines.cuh)
    assert r.placeholder == (code == 5) and ("handout's placeholder" in r.summary) == (code == 5)


def test_read_json_is_defensive(tmp_path):
    p = tmp_path / "r.json"
    for text in ("[1, 2]", "{{{", "", "\"pass\"", "{" * 100000):
        p.write_text(text)
        assert read_json(p) is None
    p.write_text('{"status": "pass"}')
    assert read_json(p) == {"status": "pass"}
    p.write_text('{"x": "' + "a" * 300000 + '"}')
    assert read_json(p) is None                         # too large
    link = tmp_path / "link.json"
    link.symlink_to(p)
    assert read_json(link) is None


TIMED = Case("scan", "add-i32", 1 << 26, 256, "random")


def timing_report(**overrides):
    data = {"status": "pass", "task": "scan", "op": "add-i32", "n": 1 << 26, "block": 256, "seed": 5,
            "timing": {"median_ms": 0.3, "min_ms": 0.29, "max_ms": 0.35, "reps": 30}}
    for key, value in overrides.items():
        if key in ("median_ms", "min_ms", "max_ms", "reps"):
            data["timing"][key] = value
        else:
            data[key] = value
    return data


def test_parse_timing_accepts_a_sane_report():
    assert parse_timing(timing_report(), TIMED, 5, 30) == (0.3, "")


@pytest.mark.parametrize("overrides", [
    {"median_ms": -1.0}, {"median_ms": 0.0}, {"median_ms": math.nan}, {"median_ms": math.inf},
    {"median_ms": "0.1"}, {"median_ms": True}, {"min_ms": 0.5}, {"max_ms": 0.1}, {"reps": 1},
    {"status": "fail"}, {"n": 1000}, {"task": "reduce"}, {"seed": 6}, {"block": 1024},
    {"timing": None},
])
def test_parse_timing_rejects_forgeries(overrides):
    ms, why = parse_timing(timing_report(**overrides), TIMED, 5, 30)
    assert ms is None and why


def test_parse_timing_without_report():
    assert parse_timing(None, TIMED, 5, 30)[0] is None


def test_the_repetitions_are_read_from_the_report_not_counted_again():
    said = timing_report()
    said["timing"]["repetitions"] = {"first": 35, "last": 69, "warmup": 5, "timed": 30}
    assert read_repetitions(said) == Repetitions(35, 69, 5, 30)
    performance = load_rubric(TEST_RUBRIC).performance
    said["timing"]["repetitions"].update(warmup=performance.warmup, timed=performance.reps,
                                         last=35 + performance.warmup + performance.reps - 1)
    assert reference_repetitions(said, performance).last == 35 + performance.warmup + performance.reps - 1


@pytest.mark.parametrize("repetitions", [
    None, "35-69", {"first": 35, "last": 69, "warmup": 5}, {"first": 35, "last": 70, "warmup": 5, "timed": 30},
    {"first": -1, "last": 33, "warmup": 5, "timed": 30}, {"first": 35, "last": 69, "warmup": True, "timed": 30},
    {"first": 35.0, "last": 69, "warmup": 5, "timed": 30},
])
def test_repetitions_that_do_not_hold_together_are_none(repetitions):
    said = timing_report()
    if repetitions is not None:
        said["timing"]["repetitions"] = repetitions
    assert read_repetitions(said) is None


def test_a_reference_report_without_repetitions_is_an_internal_error():
    # A reference driver built before the driver reported them: the grader's own fault,
    # said so, never a counter rebuilt in its place.
    performance = load_rubric(TEST_RUBRIC).performance
    with pytest.raises(TimingReportError, match="no timing.repetitions"):
        reference_repetitions(timing_report(), performance)
    other = timing_report()
    other["timing"]["repetitions"] = {"first": 0, "last": performance.warmup + performance.reps,
                                      "warmup": performance.warmup + 1, "timed": performance.reps}
    with pytest.raises(TimingReportError):
        reference_repetitions(other, performance)


def test_parse_baselines_skips_junk():
    data = {"baselines": [{"name": "cpu-sequential", "median_ms": 50.0}, {"name": 3, "median_ms": 1},
                          {"name": "x", "median_ms": -1}, "junk"]}
    assert parse_baselines(data) == {"cpu-sequential": 50.0}
    assert parse_baselines({"baselines": "no"}) == {}


def test_probe_drops_a_memory_limit_that_stops_the_reference(test_rubric, emu_session):
    # A limit so low that even the reference cannot start: grading goes on without it,
    # and says so, instead of failing every student.
    import dataclasses

    from conftest import REPO, cache_dir
    from grader.grading.build import Layout
    from grader.grading.session import Options, Session

    rubric = dataclasses.replace(test_rubric, limits=dataclasses.replace(test_rubric.limits, memory_mb=8))
    with Session(rubric, Layout(REPO), Options(backend="emulator", cache_dir=cache_dir(), seed=1),
                 log=lambda line: None) as session:
        setup = session.prepare()
        assert setup.memory_mb is None
        assert "memory limit" in session.machine_info().sandbox_user
