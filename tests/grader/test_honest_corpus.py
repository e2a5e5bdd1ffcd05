"""The honest corpus and the attacks of issue 32 on the CPU emulator (graded once, with the
other fixtures, by conftest's `emulator`): every honest_* fixture, a correct solution in a
style real students use, earns every correctness point of every task; every attack_*
fixture is refused or earns nothing for its task, with a message that says why, and no
report quotes a file outside the submission."""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from conftest import fixture_names

HONEST = [n for n in fixture_names() if n.startswith("honest_")]
ATTACKS = [n for n in fixture_names() if n.startswith("attack_")]
# Every honest fixture builds on the emulator (extern __shared__ and __umul24 are emulated,
# issue 42). A device function it lacks fails the build with "emulator gap: <name>" and
# costs nothing on the GPU: emu.conformance.gap (tests/conformance) and test_sanitizer.py check that path.


def test_the_corpus_is_there():
    assert len(HONEST) >= 27 and len(ATTACKS) >= 8


@pytest.mark.parametrize("name", HONEST)
def test_an_honest_solution_earns_full_correctness(emulator, name):
    result = emulator(name)
    for tr in result.tasks:
        if tr.verdict == "not_attempted":
            continue
        assert not tr.violations, (name, [str(v) for v in tr.violations])
        assert not tr.placeholder, (name, tr.message)
        assert tr.correctness_points == pytest.approx(tr.correctness_max), (name, tr.name, tr.message)
    assert result.score == pytest.approx(result.max_score + result.bonus_score)


REFUSED = {  # attack -> (task, rules that must be among its findings)
    "attack_cr_comment_cub": ("scan", {"include"}),
    "attack_include_passwd": ("reduce", {"include"}),
    "attack_fnptr_launch": ("scan", {"symbol-call"}),     # a pointer to cudaLaunchKernel, kept
    "attack_stream": ("scan", {"symbol-call"}),           # cudaStreamCreateWithFlags
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_an_attack_is_refused_with_the_reason(emulator, name):
    task, rules = REFUSED[name]
    tr = next(t for t in emulator(name).tasks if t.name == task)
    assert tr.status == "forbidden" and tr.points == 0 and not tr.cases, tr.message
    assert rules <= {v.rule for v in tr.violations}, [str(v) for v in tr.violations]


def test_a_placeholder_with_a_token_added_is_still_the_placeholder(emulator):
    t1 = next(t for t in emulator("attack_placeholder_token").tasks if t.name == "warp-scan")
    # In a grade the placeholder does no work: every case that reaches it says so.
    assert t1.placeholder and t1.correctness_points == 0 and t1.verdict == "not_implemented"
    assert "placeholder" in t1.message and t1.total > 0


def test_a_wrapped_bonus_placeholder_earns_no_bonus(emulator):
    result = emulator("attack_wrapped_bonus")
    t4 = next(t for t in result.tasks if t.name == "lookback-scan")
    assert t4.verdict == "not_attempted" and t4.points == 0 and "the handout's placeholder" in t4.message
    # No bonus from it (another bonus task of data/ may earn its own).
    bonus = {t.name for t in emulator.session.rubric.tasks if t.bonus}
    assert result.bonus_score == pytest.approx(sum(t.points for t in result.tasks if t.name in bonus and t is not t4))


def test_no_report_quotes_a_file_of_the_grading_machine(emulator, tmp_path):
    from grader.report import terminal
    result = emulator("attack_include_passwd")
    passwd = [line for line in Path("/etc/passwd").read_text().splitlines() if line.strip()]
    everything = terminal.render(result) + json.dumps(dataclasses.asdict(result), default=str)
    assert passwd and not [line for line in passwd if line in everything]
    assert "/etc/passwd" in everything    # the name is said, not the contents


# State the harness restores before every launch (handout/harness/host/student_state.h):
# not refused, and it cannot count. attack_state_counter breaks its result from the third
# one-block launch of the program on: right only because its counter is put back.
COUNTERS = {"attack_template_static": "reduce", "attack_state_counter": "reduce",
            "launch_counter_reduce": "reduce", "memo_reduce": "reduce", "memo_scan": "scan"}


@pytest.mark.parametrize("name", sorted(COUNTERS))
def test_a_counter_cannot_count(emulator, name):
    tr = next(t for t in emulator(name).tasks if t.name == COUNTERS[name])
    assert not tr.violations, [str(v) for v in tr.violations]
    assert tr.verdict == "correct" and tr.passed == tr.total > 1, tr.message
