"""What a class's files share: byte-identical to the reference solution, the untouched
handout, identical between students, and (with `--similarity`) alike by copydetect,
among students and with the reference.

Every class-level report says it alike from `Copies`: the `same_as_reference`,
`same_as_handout`, `identical_to`, `most_similar` and `most_similar_share` columns of
grades.csv, a section of class-summary.md and of class.html. A lead for a person to
read, never a verdict: no grade depends on it.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from ..results import SubmissionResult

REFERENCE = "(reference solution)"   # the reference's name in a similarity pair


@dataclass(frozen=True)
class SimilarPair:
    """A similarity finding (grader/classroom/similarity.py): two submissions' files of one name."""
    first: str          # submission (report folder name), or REFERENCE
    second: str
    file: str           # the student file compared
    first_share: float  # of first's file, the part also in second's (0..1)
    second_share: float
    tokens: int         # tokens in common

    @property
    def share(self) -> float:
        return max(self.first_share, self.second_share)


@dataclass
class Copies:
    same_as_reference: dict[str, list[int]] = field(default_factory=dict)   # submission -> tasks
    same_as_handout: dict[str, list[int]] = field(default_factory=dict)     # unchanged from the handout
    identical: dict[str, dict[int, list[str]]] = field(default_factory=dict)  # name -> task -> others
    # name -> (other, share, file): the closest (grades.csv), and the closest of the files
    # not already said to be identical (the words).
    closest: dict[str, tuple[str, float, str]] = field(default_factory=dict)
    similar: dict[str, tuple[str, float, str]] = field(default_factory=dict)
    pairs: list[SimilarPair] = field(default_factory=list)
    compared: bool = False                                                  # --similarity ran
    # Each set of byte-identical files of a task (two or more submissions), once.
    groups: list[tuple[int, list[str]]] = field(default_factory=list)
    # How the reports name a submission: its students (a Gradescope export's or the
    # roster's names) with the submission, or the submission alone.
    labels: dict[str, str] = field(default_factory=dict)

    def label(self, name: str) -> str:
        return self.labels.get(name, name)

    def words(self, name: str) -> list[str]:
        """What the reports say of one submission."""
        out = []
        if self.same_as_reference.get(name):
            out.append("identical to the reference solution: task "
                       + ", ".join(map(str, self.same_as_reference[name])))
        for task, others in sorted(self.identical.get(name, {}).items()):
            out.append(f"task {task} identical to {', '.join(self.label(o) for o in others)}")
        if name in self.similar:
            other, share, file = self.similar[name]
            out.append(f"{share:.0%} of {file} alike with {self.label(other)} (similarity)")
        return out

    def flagged(self) -> list[str]:
        """The submissions with anything to look at, sorted."""
        return sorted({*(n for n, t in self.same_as_reference.items() if t), *self.identical,
                       *self.similar})


def find_copies(results: list[SubmissionResult], pairs: list[SimilarPair] | None = None,
                threshold: float = 0.5) -> Copies:
    """The class's copies from its results (each task file's digest and its identity with
    the reference and the handout), and the similarity pairs above `threshold`."""
    copies = Copies(pairs=list(pairs or []), compared=pairs is not None)
    for r in results:
        students = ", ".join(s.name or s.sid or s.email for s in r.identity.students)
        copies.labels[r.name] = f"{students} ({r.name})" if students else r.name
    by_digest: dict[tuple[int, str], list[str]] = {}
    for r in results:
        copies.same_as_reference[r.name] = [tr.number for tr in r.tasks if tr.identical_to_reference]
        copies.same_as_handout[r.name] = [tr.number for tr in r.tasks
                                          if tr.placeholder and tr.status != "not_attempted"]
        for tr in r.tasks:
            if tr.digest and not tr.identical_to_reference and not tr.placeholder:
                by_digest.setdefault((tr.number, tr.digest), []).append(r.name)
    copies.groups = sorted((task, sorted(names)) for (task, _), names in by_digest.items() if len(names) > 1)
    for (task, _), names in by_digest.items():
        for name in names:
            others = sorted(n for n in names if n != name)
            if others:
                copies.identical.setdefault(name, {})[task] = others
    # A file already said to be identical (to the reference or another's) is not said again
    # as alike.
    said = {(r.name, tr.file) for r in results for tr in r.tasks
            if tr.identical_to_reference or tr.number in copies.identical.get(r.name, {})}
    # The words name the tasks' files (similarity.csv has every file, the exercises' too).
    task_files = {tr.file for r in results for tr in r.tasks}
    for p in copies.pairs:
        if p.share < threshold or p.file not in task_files:
            continue
        for me, other in ((p.first, p.second), (p.second, p.first)):
            if me == REFERENCE:
                continue
            if me not in copies.closest or copies.closest[me][1] < p.share:
                copies.closest[me] = (other, p.share, p.file)
            if (me, p.file) not in said and (me not in copies.similar or copies.similar[me][1] < p.share):
                copies.similar[me] = (other, p.share, p.file)
    return copies


def listing(copies: Copies) -> list[tuple[str, str]]:
    """The Copies section's rows (who, what), as the summary and class.html show them: each
    student whose files are the reference solution's, by name; each set of identical files
    once; the alike; the untouched handout."""
    rows = [(copies.label(n), "identical to the reference solution: task " + ", ".join(map(str, t)))
            for n, t in sorted(copies.same_as_reference.items()) if t]
    rows += [(", ".join(copies.label(n) for n in names), f"task {task}: identical files")
             for task, names in copies.groups]
    rows += [(copies.label(n), f"{share:.0%} of {file} alike with {copies.label(other)} (similarity)")
             for n, (other, share, file) in sorted(copies.similar.items())]
    rows += [(copies.label(n), "the untouched handout: task " + ", ".join(map(str, t)))
             for n, t in sorted(copies.same_as_handout.items()) if t]
    return rows


def markdown(copies: Copies) -> str:
    """The class summary's section."""
    out = ["\n## Copies: identical to the reference, the handout or each other\n"]
    rows = listing(copies)
    if not rows:
        out.append("No file identical to the reference or to another student's"
                   + ("; no pair alike beyond the handout." if copies.compared else
                      " (similarity not compared: `--similarity`).") + "\n")
        return "\n".join(out)
    out += ["| submission | what |\n| --- | --- |"]
    out += [f"| {who.replace('|', '/')} | {what.replace('|', '/')} |" for who, what in rows]
    if not copies.compared:
        out.append("\nSimilarity not compared (`batch --similarity` compares the class, the "
                   "reference included).")
    return "\n".join(out) + "\n"
