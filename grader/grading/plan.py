"""The plan stage: what is built, from which files. One PartPlan per task (its file alone,
the others their contract, grader/contract/; or why it is not built: missing, refused, a
bonus left alone) and one for the integration build (every student file, the handout's
placeholder for a bonus or exercise not written); an ExercisePlan per exercise the
submission wrote (built on top of the integration build's files)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

from . import cross_checks
from .build_types import BuildResult
from .checks.forbidden import same_code
from .collect import Submission
from ..config.assignment import Exercise
from .correctness.applications import ExerciseBuild
from .outcomes import PartPlan
from .session import Session


@dataclass(frozen=True)
class ExercisePlan:
    """The integration build with the student's exercise file (handout/apps runs it). Apart
    from the integration build (which has the reference's), so an exercise that does not
    compile costs no case."""

    exercise: Exercise
    files: Mapping[str, bytes] | None = None    # None: not built (`unwritten` stands)
    origins: Mapping[str, str] = field(default_factory=dict)
    unwritten: str = ""                         # not submitted, or the handout's stub


def exercise_build(part: ExercisePlan, b: BuildResult | None) -> ExerciseBuild | None:
    """What the applications run the exercise with, once built (`b`); None: not planned."""
    if part.unwritten:
        return ExerciseBuild(None, part.unwritten, not_implemented=True)
    if b is None:
        return None
    if b.violations:
        return ExerciseBuild(None, f"student/{part.exercise.file} breaks the rules: "
                                   + "; ".join(v.message for v in b.violations[:2]))
    if not b.ok or b.binary is None:
        return ExerciseBuild(None, f"student/{part.exercise.file} does not compile: "
                                   f"{cross_checks.first_error(b.errors)}")
    return ExerciseBuild(b.binary, "")


@dataclass(frozen=True)
class Plan:
    """The plan stage's answer: the tasks' parts in the rubric's order, the integration's
    last; the exercises (none when the rubric runs no application)."""

    parts: tuple[PartPlan, ...]
    exercises: tuple[ExercisePlan, ...] = ()

    @property
    def integration(self) -> PartPlan:
        return next(p for p in self.parts if p.task is None)


def plan(session: Session, sub: Submission) -> Plan:
    """A PartPlan for each task and one for the integration build. A task whose file is
    missing, or a bonus left alone, is not built (its plan says why); the integration
    build needs every file."""
    rubric = session.rubric
    reference = session.builder.reference_files
    parts: list[PartPlan] = []
    for t in rubric.tasks:
        label = f"task {t.number}"
        found = sub.files.get(t.file)
        handout = session.handout_files.get(t.file)
        digest = found.sha256 if found is not None else ""
        if t.bonus and t.file not in sub.refused and (
                found is None or found.data == handout or (handout is not None and same_code(
                    found.text, handout.decode("utf-8", errors="replace")))):
            # Most students leave the bonus alone: not built, no time spent on it.
            why = f"no {t.file} in the submission" if found is None else \
                f"{t.file} is still the handout placeholder"
            parts.append(PartPlan(
                label, t, "not_attempted",
                "not graded: see the submission's error above" if sub.error else
                f"bonus not attempted: {why} (not built; worth nothing, costs nothing)",
                path=found.path if found is not None else None, digest=digest,
                placeholder=found is not None))
            continue
        if found is None:
            close = sub.missing.get(t.file, [])
            if t.file in sub.refused:
                message = f"{t.file} was refused: {sub.refused[t.file]}"
            elif sub.error:
                # Said once, as the submission's error: the tasks only point at it.
                message = "not graded: see the submission's error above"
            else:
                message = f"no {t.file} in the submission" + \
                    (f" (found {', '.join(close)}: the file must be named exactly {t.file})" if close else "")
            parts.append(PartPlan(label, t, "missing", message))
            continue
        unchanged = found.data == handout
        placeholder = unchanged or (handout is not None and same_code(
            found.text, handout.decode("utf-8", errors="replace")))
        message = ""
        if placeholder and rubric.correctness.zero_for_placeholders:
            message = (f"{'unchanged from' if unchanged else 'still'} the handout's placeholder"
                       f"{'' if unchanged else ' (only comments or spacing changed)'}: "
                       "graded, but worth no points (rubric: [correctness] zero_for_placeholders)")
        # The code rules run in the build, on the unit as the compiler sees it
        # (grader/grading/build.py: _gate); a file that breaks them is not built.
        # The task's file alone: the other student files are their contract there
        # (grader/contract/: declarations, the grader's stand-ins, the trusted reference
        # unit apart), never solution/'s source. A file identical to the reference's is
        # the reference's build (cached, no student code in it).
        if found.data == reference.get(t.file):
            files = dict(reference)
            origins = {n: "reference" for n in files}
        else:
            files = {t.file: found.data}
            origins = {n: "contract (grader/contract)" for n in reference if n != t.file}
        origins[t.file] = f"yours ({found.path})"
        parts.append(PartPlan(label, t, "graded", message, files, origins, path=found.path,
                              digest=digest, unchanged=unchanged, placeholder=placeholder,
                              identical_to_reference=found.data == reference.get(t.file)))

    blocked = [p for p in parts if p.status == "missing"]
    if sub.error:
        parts.append(PartPlan("integration", None, "not_graded", "not run: nothing to grade"))
    elif blocked:
        parts.append(PartPlan("integration", None, "not_graded", "not run: " + "; ".join(
            f"{p.task.file if p.task else p.label} is missing" for p in blocked)))
    else:
        # Every file the student's own; a bonus task not attempted and the exercises
        # take the handout's placeholder (the integration cases never run them), never
        # the reference's: the student's files must not reach solution/'s code.
        attempted = [p.task for p in parts if p.task is not None and p.status != "not_attempted"]
        placeholders = {n: session.handout_files.get(n) for n in reference}
        files = {**{n: data for n, data in placeholders.items() if data is not None},
                 **{t.file: sub.files[t.file].data for t in attempted}}
        origins = {n: "the handout's placeholder" for n in files}
        origins.update({t.file: f"yours ({sub.files[t.file].path})" for t in attempted})
        parts.append(PartPlan("integration", None, "not_graded", files=files, origins=origins))
    integration = parts[-1]
    exercises = plan_exercises(session, sub, integration) if rubric.integration.applications else ()
    return Plan(tuple(parts), exercises)


def plan_exercises(session: Session, sub: Submission, integration: PartPlan) -> tuple[ExercisePlan, ...]:
    """A build for each exercise the submission changed from the handout's stub, on top
    of the integration build's files. One not submitted, or still the stub, is not run:
    the integration build holds the handout's stub."""
    if integration.files is None:
        return ()
    parts = []
    for e in session.rubric.assignment.exercises:
        found = sub.files.get(e.file)
        if found is None or found.data == session.handout_files.get(e.file):
            parts.append(ExercisePlan(e, unwritten=(
                f"needs the exercise {e.name} (student/{e.file}): "
                + ("its TODO stub is still in place" if found else "not in the submission"))))
            continue
        parts.append(ExercisePlan(e, {**integration.files, e.file: found.data},
                                  {**integration.origins, e.file: f"yours ({found.path})"}))
    return tuple(parts)
