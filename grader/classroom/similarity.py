"""`similarity`: which submissions of a class are suspiciously alike.

The student files of every submission (as `collect` finds them) are compared file by
file, same name with same name, by copydetect (PyPI: MOSS's winnowing over the tokens
of the code, so renamed variables and changed spacing do not hide a copy). The reference
solution takes part as one more submission, named "(reference solution)", so a leaked
solution shows as its students' pairs with it; only the handout's own lines are
boilerplate (what every student got is not evidence). Output: copydetect's HTML report,
and similarity.csv, one row per pair of submissions and file, ranked by the larger of
the two shares.

A finding is a lead for a person to read, never a verdict: the grade is not touched.
"""
from __future__ import annotations

import csv
import importlib
import importlib.util
import sys
import tempfile
from pathlib import Path
from typing import Any

from .submissions import find_submissions, folder_names
from ..grading.build_types import Layout
from ..grading.collect import collect
from ..report.copies import REFERENCE, SimilarPair
from ..config.rubric import Rubric

CSV_FILE = "similarity.csv"
HTML_FILE = "similarity.html"
CSV_COLUMNS = ["rank", "submission_a", "submission_b", "file", "share_of_a", "share_of_b",
               "tokens_in_common"]


class SimilarityError(RuntimeError):
    """copydetect is missing, or there is nothing to compare."""


def install_command() -> str:
    """The one command that installs copydetect for the Python running the grader."""
    return f"{sys.executable} -m pip install 'copydetect>=0.5'"


def missing() -> str | None:
    """Why the similarity report cannot run here (copydetect not importable), or None.
    `batch --similarity` and `slurm --similarity` ask before grading anything."""
    if importlib.util.find_spec("copydetect") is None:
        return (f"the similarity report needs copydetect, which {sys.executable} cannot import; "
                f"install it with: {install_command()}")
    return None


def _detector_class() -> Any:
    try:
        copydetect = importlib.import_module("copydetect")   # untyped: an Any
    except ImportError:
        raise SimilarityError(missing() or "copydetect cannot be imported") from None
    return copydetect.CopyDetector


def gather(folder: Path, rubric: Rubric, where: Path) -> dict[str, Path]:
    """The student files of each submission of `folder`, laid out as where/<name>/<file>
    (archives unpacked with collect's limits). Submissions with no file are left out."""
    entries, _ = find_submissions(folder)
    names = folder_names(entries)
    laid: dict[str, Path] = {}
    for entry in entries:
        sub = collect(entry, rubric.submitted_files, rubric.submission, Path(tempfile.mkdtemp(dir=where)))
        if not sub.files:
            continue
        target = where / "files" / names[entry]
        target.mkdir(parents=True)
        for name, found in sub.files.items():
            (target / name).write_bytes(found.data)
        laid[names[entry]] = target
    return laid


def compare(laid: dict[str, Path], layout: Layout, out: Path, display: float = 0.2) -> list[SimilarPair]:
    """copydetect over the laid-out files; writes out/similarity.html and similarity.csv."""
    detector_class = _detector_class()
    if len(laid) < 1:
        raise SimilarityError("no submission with student files: nothing to compare")
    laid = {**laid, REFERENCE: layout.solution}
    out.mkdir(parents=True, exist_ok=True)
    detector = detector_class(extensions=["cuh"], same_name_only=True, display_t=display,
                              autoopen=False, silent=True, out_file=str(out / HTML_FILE))
    for folder in laid.values():
        for f in sorted(folder.glob("*.cuh")):
            detector.add_file(str(f))
    for f in sorted((layout.handout / "student").glob("*.cuh")):
        detector.add_file(str(f), type="boilerplate")
    detector.run()
    owner = {str(f): name for name, folder in laid.items() for f in folder.glob("*.cuh")}
    pairs: dict[tuple[str, str, str], SimilarPair] = {}
    matrix = detector.similarity_matrix
    for i, test in enumerate(detector.test_files):
        for j, ref in enumerate(detector.ref_files):
            a, b = owner.get(test), owner.get(ref)
            if a is None or b is None or a >= b or Path(test).name != Path(ref).name:
                continue  # each unordered pair once; same-name files only
            share_a, share_b = float(matrix[i, j, 0]), float(matrix[i, j, 1])
            if share_a < 0 or share_b < 0:  # copydetect's "not compared"
                continue
            tokens = int(detector.token_overlap_matrix[i, j])
            pairs[(a, b, Path(test).name)] = SimilarPair(a, b, Path(test).name, share_a, share_b, tokens)
    ranked = sorted(pairs.values(), key=lambda p: (-p.share, -p.tokens, p.first, p.second, p.file))
    with open(out / CSV_FILE, "w", newline="", encoding="utf-8") as sheet:
        w = csv.writer(sheet)
        w.writerow(CSV_COLUMNS)
        for rank, p in enumerate(ranked, 1):
            w.writerow([rank, p.first, p.second, p.file, f"{p.first_share:.3f}", f"{p.second_share:.3f}",
                        p.tokens])
    if any(p.share > display for p in ranked):
        detector.generate_html_report()
    else:
        (out / HTML_FILE).write_text("<!doctype html><meta charset='utf-8'><title>similarity</title>"
                                     f"<p>No pair of files shares more than {display:.0%} of its code "
                                     "beyond the handout (the reference solution compared too).</p>\n",
                                     encoding="utf-8")
    return ranked


def similarity_report(folder: Path, rubric: Rubric, layout: Layout, out: Path) -> list[SimilarPair]:
    """The class at `folder` compared; the reports written into `out`."""
    with tempfile.TemporaryDirectory(prefix="scanlab-similarity-") as tmp:
        return compare(gather(folder, rubric, Path(tmp)), layout, out)


def summary_lines(pairs: list[SimilarPair], top: int = 10) -> list[str]:
    """The first pairs, for the terminal and class-summary.md."""
    lines = [f"  {p.share:6.1%}  {p.first} ~ {p.second} ({p.file}, {p.tokens} tokens in common)"
             for p in pairs[:top] if p.share > 0]
    return lines or ["  no pair shares code beyond the handout (the reference solution included)"]


def read_pairs(out: Path) -> list[SimilarPair] | None:
    """The pairs of an earlier similarity report in `out` (its similarity.csv), for the
    class files written again without comparing again (`rescore`); None: there is none."""
    try:
        with open(out / CSV_FILE, newline="", encoding="utf-8") as sheet:
            return [SimilarPair(row["submission_a"], row["submission_b"], row["file"],
                                float(row["share_of_a"]), float(row["share_of_b"]),
                                int(row["tokens_in_common"])) for row in csv.DictReader(sheet)]
    except (OSError, KeyError, ValueError, TypeError):
        return None
