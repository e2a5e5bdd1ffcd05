"""Issue 58: a grading build's placeholders do no work and the driver says so (exit status
`placeholder`); the grader counts such a task as the compiled code's call of one is counted:
not attempted, 0 points (a bonus: not attempted). The end-to-end tests grade the attack
fixtures (attack_placeholder_*) on both backends; these check the verdict's mapping."""
from __future__ import annotations

import dataclasses

from conftest import TEST_RUBRIC
from grader.config.cases import Case
from grader.config.rubric import load_rubric
from grader.grading.build_types import BuildResult
from grader.grading.checking import checked
from grader.grading.correctness.check import PLACEHOLDER_REACHED
from grader.grading.outcomes import BuildOutcome, PartPlan
from grader.grading.score import score
from grader.results import CaseResult, IntegrationResult, TaskResult


def _part(bonus: bool) -> PartPlan:
    rubric = load_rubric(TEST_RUBRIC)
    task = next(t for t in rubric.tasks if t.bonus == bonus)
    return PartPlan(task.label, task, "graded", path=f"alice/{task.file}")


def _case(status: str, placeholder: bool = False) -> CaseResult:
    summary = f"reduce: {PLACEHOLDER_REACHED}" if placeholder else status
    return CaseResult(Case("reduce", "add-i32", 1000, 256), 1, status, summary, placeholder=placeholder)


BUILT = BuildOutcome(BuildResult("task", True), "built")


def test_a_case_that_reached_the_placeholder_makes_the_task_a_placeholder():
    part = _part(bonus=False)
    cases = [_case("not_implemented", placeholder=True), _case("pass")]
    check = checked(part, BUILT, cases)
    assert check.status == "graded" and check.placeholder
    assert check.message.startswith(f"alice/{part.task.file} calls the handout's placeholder")
    assert "1 of 2 cases" in check.message and "0 points" in check.message
    # Scored as the static rule's placeholder: nothing, though a case passed (the same
    # cases without the flag earn part of the points).
    assert _points(part, check.cases, check.placeholder) == 0 < _points(part, check.cases, False)


def _points(part: PartPlan, cases, placeholder: bool) -> float:
    rubric = load_rubric(TEST_RUBRIC)
    tasks = [TaskResult(0, t.name, "", t.file, cases=list(cases), placeholder=placeholder,
                        correctness_max=t.correctness_points)
             if t.name == part.task.name else TaskResult(0, t.name, "", t.file, status="missing")
             for t in rubric.tasks]
    return score(tasks, IntegrationResult(), rubric).tasks[
        [t.name for t in rubric.tasks].index(part.task.name)].correctness


def test_a_bonus_that_reached_the_placeholder_is_not_attempted():
    check = checked(_part(bonus=True), BUILT, [_case("not_implemented", placeholder=True)])
    assert check.status == "not_attempted" and check.placeholder and not check.cases
    assert check.message.startswith("bonus not attempted: ")


def test_cases_that_never_reached_it_are_graded_as_they_ran():
    part = _part(bonus=False)
    check = checked(part, BUILT, [_case("pass"), _case("not_implemented")])
    assert check.status == "graded" and not check.placeholder
    assert PLACEHOLDER_REACHED not in check.message


def test_the_static_rules_message_is_kept_when_it_said_so_first():
    said = "alice/reduce.cuh:12 calls the handout's placeholder (baseline::x, in the compiled code)"
    built = dataclasses.replace(BUILT, placeholder=True, message=said)
    check = checked(_part(bonus=False), built, [_case("not_implemented", placeholder=True)])
    assert check.placeholder and check.message == said


def test_the_integration_build_says_its_cases_reached_the_placeholder():
    integration = PartPlan("integration", None, "graded")
    check = checked(integration, BUILT, [_case("not_implemented", placeholder=True), _case("pass")])
    assert check.status == "graded" and check.message == f"1 of 2 cases {PLACEHOLDER_REACHED}"
