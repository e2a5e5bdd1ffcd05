"""A batch's state and what a resumed batch keeps: out/batch.json (the seed, the rubric's
digests, the backend, the class's secret draw of hidden cases, the roster and due date), and
which stored results are still the batch's (the same seed, backend, draw, bytes and grader:
grader/README.md, "Batch")."""
from __future__ import annotations

import json
import random
import sys
from dataclasses import dataclass, field
from pathlib import Path

from ..config.measured import measured_digest, measured_parts
from ..config.rubric import Rubric
from ..grading.assemble import rescore
from ..grading.collect import source_digest
from ..grading.job import Options
from ..report import jsonfile
from ..results import Identity, Provenance, SubmissionResult
from .submissions import folder_names

STATE_FILE = "batch.json"
STATE_FORMAT = "scanlab-batch"


@dataclass
class BatchState:
    """out/batch.json: what a resumed batch must match. `measured`: the digest of each
    part of the rubric that decides what is measured (config.measured.measured_parts), to say
    which changed; `complete`: the class files in out/ are a whole class's."""
    seed: int
    rubric_digest: str
    backend: str
    measured: dict[str, str] = field(default_factory=dict)
    complete: bool = False
    roster: str = ""     # the batch's --roster and --due, which `rescore` takes by default
    due: str = ""
    # The class's secret draw of hidden cases (grader/config/draw.py): every submission of
    # the batch, its resumes, Slurm tasks and a later `grade --class` face the same cases.
    # 0: none recorded (a batch of an older grader).
    draw_seed: int = 0

    @staticmethod
    def read(out: Path) -> BatchState | None:
        try:
            data = json.loads((out / STATE_FILE).read_text(encoding="utf-8"))
            if data.get("format") != STATE_FORMAT:
                return None
            measured = data.get("measured", {})
            return BatchState(int(data["seed"]), str(data["rubric_digest"]), str(data["backend"]),
                              {str(k): str(v) for k, v in measured.items()} if isinstance(measured, dict) else {},
                              bool(data.get("complete", False)), str(data.get("roster") or ""),
                              str(data.get("due") or ""), int(data.get("draw_seed") or 0))
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return None

    def write(self, out: Path) -> None:
        replace_text(out / STATE_FILE, json.dumps(
            {"format": STATE_FORMAT, "seed": self.seed, "rubric_digest": self.rubric_digest,
             "backend": self.backend, "measured": self.measured, "complete": self.complete,
             "roster": self.roster, "due": self.due, "draw_seed": self.draw_seed},
            indent=2) + "\n")


def replace_text(path: Path, text: str) -> None:
    """`path` holds `text` whole, or its old content: never half of either."""
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


def class_draw_seed(given: int | None, before: BatchState | None) -> int:
    """The class's draw seed: the one given (--draw-seed), else the one the class's batch.json
    holds, else a fresh, secret one (stored in batch.json by the caller)."""
    if given is not None:
        return given
    if before is not None and before.draw_seed:
        return before.draw_seed
    return random.SystemRandom().randrange(1, 2**63)


def as_one_of_the_class(options: Options, out: Path) -> bool:
    """`grade --class OUT`: the options take the class's seed and draw (OUT/batch.json) where
    not given; False (said) where OUT holds no batch."""
    state = BatchState.read(out)
    if state is None:
        print(f"grader: --class: no batch in {out} (no {STATE_FILE})", file=sys.stderr)
        return False
    if options.seed is None:
        options.seed = state.seed
    if options.draw_seed is None and state.draw_seed:
        options.draw_seed = state.draw_seed
    return True


def rubric_change(before: BatchState, rubric: Rubric) -> tuple[str, list[str]]:
    """What a rubric changes against a batch's: "same", "scoring" (points, thresholds,
    the late policy, the gradebook's names: the stored measurements are rescored) or
    "measured" (cases, timed sizes, rules, limits: graded again); and, for "measured",
    the parts that changed (all of them where the batch predates the parts' record)."""
    if before.rubric_digest == rubric.digest:
        return "same", []
    now = measured_parts(rubric)
    changed = [part for part, digest in now.items() if before.measured.get(part) != digest]
    return ("measured", changed) if changed else ("scoring", [])


def stale_reason(result: SubmissionResult, entry: Path, state: BatchState, limit: int,
                 now: Provenance | None = None, gpu: str = "") -> str:
    """Why a stored result is not one of this batch ("" where it is): another seed, backend,
    GPU (`gpu`: this session's, "" none), draw of hidden cases or bytes, or (`now`: the
    grader's provenance) a grader, harness or reference changed since."""
    if result.seed != state.seed:
        return f"graded with another seed ({result.seed})"
    if result.machine.backend != state.backend:
        return f"graded on another backend ({result.machine.backend})"
    if gpu and result.machine.gpu and result.machine.gpu != gpu:
        return f"graded on another GPU ({result.machine.gpu})"
    if result.source_digest != source_digest(entry, limit):
        return "its files changed"
    if result.draw_seed and state.draw_seed and result.draw_seed != state.draw_seed:
        return "graded with another draw of hidden cases than the class's"
    changed = result.provenance.changes(now) if now is not None else []
    if changed:
        return f"{' and '.join(changed)} changed since it was graded"
    return ""


def stored_result(folder: Path, entry: Path, state: BatchState, limit: int,
                  now: Provenance | None = None) -> SubmissionResult | None:
    """The result in `folder` if it was graded with this state's seed, backend and draw
    and these very bytes (by whatever rubric; `now`: by this grader, harness and reference)."""
    try:
        result = jsonfile.read(folder / "results.json")
    except ValueError:
        return None
    return None if stale_reason(result, entry, state, limit, now) else result


def kept_by(result: SubmissionResult, rubric: Rubric) -> SubmissionResult | None:
    """A stored result under `rubric`: itself where it was scored by it, rescored by it
    where it was measured alike (the same config.measured.measured_digest: no build, nothing
    run), None where `rubric` measures something else (it must be graded again)."""
    if result.rubric_digest == rubric.digest:
        return result
    if result.measured_digest and result.measured_digest == measured_digest(rubric):
        return rescore(result, rubric)
    return None


def change_words(before: BatchState, rubric: Rubric) -> str:
    """What a rubric's change against a batch's means, in a line said before anything starts."""
    kind, parts = rubric_change(before, rubric)
    if kind == "same":
        return "rubric: the same as the batch's"
    if kind == "scoring":
        return ("rubric: changed only in what scores (points, thresholds, the late policy, the "
                "gradebook's names): the stored measurements are rescored, nothing is graded again")
    return (f"rubric: changes what is measured ({', '.join(parts)}): the submissions are graded "
            "again (their stored results do not measure what this rubric asks)")


def graded_before(folder: Path, entry: Path, state: BatchState, limit: int,
                  rubric: Rubric | None = None, now: Provenance | None = None) -> SubmissionResult | None:
    """The result in `folder` if it was graded with this state's seed, backend, draw and these
    bytes (`now`: by this grader): with `rubric`, as kept_by() keeps it; without, only one of
    the state's rubric."""
    result = stored_result(folder, entry, state, limit, now)
    if result is None:
        return None
    if rubric is None:
        return result if result.rubric_digest == state.rubric_digest else None
    return kept_by(result, rubric)


@dataclass
class Stored:
    """What a resumed batch (or `rescore`) keeps of its stored results: `kept` (rescored by the
    rubric where its points differ: `rescored`), the entries to grade (`todo`), and why the
    stored results among them are stale (reason -> how many)."""
    kept: list[SubmissionResult] = field(default_factory=list)
    todo: list[Path] = field(default_factory=list)
    rescored: list[SubmissionResult] = field(default_factory=list)
    stale: dict[str, int] = field(default_factory=dict)

    def words(self, total: int, seed: int) -> str:
        """The line a resumed batch starts with."""
        why = "; ".join(f"{n} {reason}" for reason, n in self.stale.items())
        return (f"resuming: {len(self.kept)} of {total} submission(s) already graded with seed {seed}"
                + (f" ({len(self.rescored)} of them rescored by this rubric from their stored "
                   "measurements: nothing built or run)" if self.rescored else " and this rubric")
                + f"; grading {len(self.todo)}" + (f" (graded again: {why})" if why else ""))


def stored_results(entries: list[Path], out: Path, state: BatchState, rubric: Rubric,
                   who: dict[str, Identity] | None, now: Provenance | None = None, gpu: str = "") -> Stored:
    """What a resumed batch keeps (Stored): the stored results of this state's seed, backend,
    draw and bytes (`now`: graded by this grader, harness and reference) measured as `rubric`
    measures (rescored by it where its points differ)."""
    names = folder_names(entries)
    limit = rubric.submission.max_total_bytes
    found = Stored()
    for e in sorted(entries):
        try:
            stored: SubmissionResult | None = jsonfile.read(out / "submissions" / names[e] / "results.json")
        except ValueError:
            stored = None
        why = stale_reason(stored, e, state, limit, now, gpu) if stored is not None else "no stored result"
        before = kept_by(stored, rubric) if stored is not None and not why else None
        if stored is not None and not why and before is None:
            why = "this rubric measures what its result does not"
        if before is None:
            found.todo.append(e)
            if stored is not None:
                found.stale[why] = found.stale.get(why, 0) + 1
            continue
        before.identity = (who or {}).get(before.name, before.identity)
        found.kept.append(before)
        if before is not stored:
            found.rescored.append(before)
    return found


