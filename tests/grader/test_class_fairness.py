"""The same code, the same grade (issue 59, items 1 and 3): one secret draw of hidden cases
per class (a batch, its resume, its Slurm tasks, a later `grade --class`), kept in the
instructor's records and never in a student's; every result carries its provenance; a
resume regrades what a grader change made stale and says so; `rescore` keeps a history;
the instructor's reproduce line names the rubric and the draw seed."""
from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

from conftest import TEST_RUBRIC
from fixtures import compose_class
from grader import cli
from grader.classroom import slurm
from grader.classroom.batch import BatchState, Stored, as_one_of_the_class, run_batch, stored_results
from grader.classroom.submissions import find_submissions
from grader.config.rubric import load_rubric
from grader.grading.assemble import rescore
from grader.grading.collect import source_digest
from grader.grading.job import Options
from grader.grading.provenance import provenance
from grader.grading.build_types import Layout
from grader.report import gradescope, jsonfile, terminal
from grader.results import MachineInfo, Provenance, SubmissionResult

from conftest import REPO

STUDENT_FILES = ("gradescope-results.json", "summary.md", "report.html")


def test_copies_in_one_class_face_one_draw_in_the_batch_and_after_a_resume(emu_session, tmp_path, monkeypatch):
    # No --draw-seed: the class draws once (the test session's fixed seed set aside).
    monkeypatch.setattr(emu_session.options, "draw_seed", None)
    folder = tmp_path / "class"
    compose_class(["reduce_block_512"], folder, tmp_path / "parts")
    shutil.copytree(folder / "reduce_block_512", folder / "renamed_copy")
    entries, _ = find_submissions(folder)
    out = tmp_path / "out"
    first = {r.name: r for r in run_batch(emu_session, entries, out, lambda line: None)}
    draw = BatchState.read(out).draw_seed
    assert draw and {r.draw_seed for r in first.values()} == {draw}
    a, b = first["reduce_block_512"], first["renamed_copy"]
    assert a.score == b.score and [t.passed for t in a.tasks] == [t.passed for t in b.tasks]
    # The instructor's records hold the draw; no student-facing file does.
    assert json.loads((out / "batch.json").read_text())["draw_seed"] == draw
    for name in first:
        for student_file in STUDENT_FILES:
            assert str(draw) not in (out / "submissions" / name / student_file).read_text(), student_file
        assert f"--draw-seed {draw}" in (out / "submissions" / name / "report.txt").read_text()
    # A resume (one result lost, the options without a draw again) grades it with the class's draw.
    shutil.rmtree(out / "submissions" / "renamed_copy")
    monkeypatch.setattr(emu_session.options, "draw_seed", None)
    said: list[str] = []
    again = {r.name: r for r in run_batch(emu_session, entries, out, said.append, resume=True)}
    assert any(line.startswith("resuming: 1 of 2") and "grading 1" in line for line in said), said
    assert again["renamed_copy"].draw_seed == draw and again["renamed_copy"].score == a.score
    # A later regrade of one student as one of the class: the class's seed and draw.
    options = Options()
    assert as_one_of_the_class(options, out) and (options.seed, options.draw_seed) == (emu_session.seed, draw)
    # Every result says what graded it.
    p, now = a.provenance, provenance(Layout(REPO))
    assert p.grader_version and p.grader_digest and p.harness_digest and p.reference_digest
    assert (p.harness_digest, p.reference_digest) == (now.harness_digest, now.reference_digest)


def test_every_slurm_task_and_a_later_plan_grade_with_the_class_draw(tmp_path, capsys):
    folder = tmp_path / "class"
    compose_class(["reference", "handout"], folder, tmp_path / "parts")
    out = tmp_path / "out"
    argv = ["slurm", str(folder), "--out", str(out), "--rubric", str(TEST_RUBRIC), "--backend", "emulator",
            "--dry-run"]
    assert cli.main(argv) == 0
    draw = slurm.Plan.read(out).job.options.draw_seed
    # Each array task grades with the plan's options: one draw for every shard.
    assert draw and BatchState.read(out).draw_seed == draw
    assert cli.main(argv) == 0                                        # planned again: the class's draw
    assert slurm.Plan.read(out).job.options.draw_seed == draw
    assert cli.main(argv[:-1] + ["--resubmit", "--dry-run"]) == 0
    assert slurm.Plan.read(out).job.options.draw_seed == draw
    assert cli.main(argv + ["--draw-seed", "5"]) == 0                 # given: that one
    assert slurm.Plan.read(out).job.options.draw_seed == 5 == BatchState.read(out).draw_seed
    assert str(draw) not in capsys.readouterr().out


def _stored(folder: Path, entry: Path, rubric, state: BatchState, **changes) -> SubmissionResult:
    """A result as a batch stores it (nothing graded): of `entry`'s bytes under `state`."""
    result = SubmissionResult(
        entry.name, str(entry), "folder", state.seed, MachineInfo(state.backend, note="no GPU"), "2026-11-20T10:00:00+00:00",
        "1.1", str(rubric.path), score=42.0, max_score=60.0, draw_seed=state.draw_seed,
        source_digest=source_digest(entry, rubric.submission.max_total_bytes), rubric_digest=rubric.digest,
        provenance=provenance(Layout(REPO)), reproduce=f"python3 -m grader grade {entry} --seed 7 "
                                                       f"--rubric {rubric.path}")
    result = dataclasses.replace(result, **changes)
    (folder / entry.name).mkdir(parents=True, exist_ok=True)
    jsonfile.write(result, folder / entry.name / "results.json")
    return result


def test_a_resume_regrades_what_a_grader_change_made_stale_and_says_so(tmp_path):
    rubric = load_rubric(TEST_RUBRIC)
    entries = []
    for name in ("alice", "bob", "carol", "dave"):
        (tmp_path / "class" / name).mkdir(parents=True)
        (tmp_path / "class" / name / "scan.cuh").write_text(f"// {name}\n")
        entries.append(tmp_path / "class" / name)
    state = BatchState(7, rubric.digest, "emulator", draw_seed=11)
    now = provenance(Layout(REPO))
    subs = tmp_path / "out" / "submissions"
    _stored(subs, entries[0], rubric, state)
    _stored(subs, entries[1], rubric, state, provenance=dataclasses.replace(now, grader_digest="older"))
    _stored(subs, entries[2], rubric, state, provenance=Provenance())          # before provenance was kept
    _stored(subs, entries[3], rubric, state, draw_seed=12)                     # another draw than the class's
    found = stored_results(entries, tmp_path / "out", state, rubric, None, now)
    assert [r.name for r in found.kept] == ["alice"] and [e.name for e in found.todo] == ["bob", "carol", "dave"]
    words = found.words(4, 7)
    assert words.startswith("resuming: 1 of 4 submission(s) already graded with seed 7") and "grading 3" in words
    assert "1 the grader changed since it was graded" in words
    assert "1 the grader (the result records no provenance) changed" in words
    assert "1 graded with another draw of hidden cases" in words
    harness = dataclasses.replace(now, harness_digest="x", reference_digest="y")
    assert Provenance.changes(harness, now) == ["the harness", "the reference"]
    assert isinstance(Stored().words(0, 1), str)


def test_rescore_keeps_the_score_before_it_and_its_rubric(tmp_path):
    rubric = load_rubric(TEST_RUBRIC)
    (tmp_path / "alice").mkdir()
    entry = tmp_path / "alice"
    stored = _stored(tmp_path / "out", entry, rubric, BatchState(7, rubric.digest, "emulator"),
                     score=50.0, rubric_digest="first")
    once = rescore(stored, rubric)
    twice = rescore(dataclasses.replace(once, rubric_digest="second", score=51.0), rubric)
    assert [(h.score, h.rubric_digest) for h in twice.history] == [(50.0, "first"), (51.0, "second")]
    assert all(h.rubric == str(rubric.path) and h.until for h in twice.history)
    jsonfile.write(twice, tmp_path / "results.json")                 # kept in results.json
    assert jsonfile.read(tmp_path / "results.json").history == twice.history


def test_the_instructors_reproduce_line_has_the_rubric_and_draw_but_the_students_report_not(tmp_path):
    rubric = load_rubric(TEST_RUBRIC)
    (tmp_path / "alice").mkdir()
    result = _stored(tmp_path / "out", tmp_path / "alice", rubric, BatchState(7, rubric.digest, "emulator",
                                                                                draw_seed=987654321987))
    line = next(x for x in terminal.render(result).splitlines() if "reproduce this grade" in x)
    assert f"--rubric {rubric.path}" in line and "--draw-seed 987654321987" in line
    student = json.dumps(gradescope.document(result, "visible", "hidden", None))
    assert "987654321987" not in student
    document = jsonfile.document(result)
    assert document["provenance"]["grader_digest"] and document["draw_seed"] == 987654321987


def test_the_gradescope_zip_holds_one_draw_for_the_class(tmp_path):
    import zipfile
    from grader.gradescope.autograder import DRAW_SEED_FILE, build_zip
    zipped = build_zip(Layout(REPO), tmp_path / "a.zip", TEST_RUBRIC, 424242)
    with zipfile.ZipFile(zipped) as z:
        assert z.read(DRAW_SEED_FILE).decode().strip() == "424242"
        assert '--draw-seed "$DRAW"' in z.read("run_autograder").decode()
    with zipfile.ZipFile(build_zip(Layout(REPO), tmp_path / "b.zip", TEST_RUBRIC)) as z:
        assert int(z.read(DRAW_SEED_FILE)) > 0                      # a fresh one, drawn once


def test_a_result_of_another_gpu_is_stale(tmp_path):
    from grader.classroom.batch import stale_reason
    rubric = load_rubric(TEST_RUBRIC)
    (tmp_path / "alice").mkdir()
    state = BatchState(7, rubric.digest, "cuda")
    stored = _stored(tmp_path / "out", tmp_path / "alice", rubric, state,
                     machine=MachineInfo("cuda", "NVIDIA H100 80GB HBM3", "9.0"))
    limit = rubric.submission.max_total_bytes
    assert stale_reason(stored, tmp_path / "alice", state, limit, gpu="NVIDIA H100 80GB HBM3") == ""
    assert stale_reason(stored, tmp_path / "alice", state, limit, gpu="NVIDIA H200") == \
        "graded on another GPU (NVIDIA H100 80GB HBM3)"
