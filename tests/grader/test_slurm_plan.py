"""`grader slurm` without a cluster: the array list, the sbatch command lines from the
rubric's [slurm] table and the options, the plan's round trip, and a merge that refuses
while a result is missing. A real cluster runs it in tests/slurm/check_slurm.py."""
from __future__ import annotations

import dataclasses
import json

import pytest

from conftest import REPO, TEST_RUBRIC
from grader import cli
from grader.classroom import slurm
from grader.config.rubric import load_rubric
from grader.grading.job import GradingJob


@pytest.mark.parametrize("indices, spec", [([0, 1, 2, 3], "0-3"), ([7], "7"), ([5, 0, 1, 9, 10, 3], "0-1,3,5,9-10"),
                                           ([2, 2, 3], "2-3")])
def test_the_array_list_joins_runs_of_indices(indices, spec):
    assert slurm.array_spec(indices) == spec


def test_sbatch_asks_for_what_the_rubric_says(tmp_path):
    settings = dataclasses.replace(load_rubric(TEST_RUBRIC).slurm, partition="gpu", account="cs149")
    jobs = slurm.sbatch_commands(tmp_path, settings, [0, 1, 4], ["--qos=class"])
    grade_job, merge_job, prepare_job = jobs.grade, jobs.merge, jobs.prepare
    assert "--array=0-1,4" in grade_job and "--gres=gpu:1" in grade_job
    assert {"--time=30", "--mem=16G", "--cpus-per-task=8", "--partition=gpu", "--account=cs149",
            "--qos=class"} <= set(grade_job)
    assert grade_job[-1] == str(tmp_path / "slurm" / "grade.sh")
    assert not any(a.startswith("--gres") for a in merge_job)   # the merge needs no GPU
    # The merge goes to the merge partition (a CPU one, issue 59), not the GPUs'; its account is the same.
    assert not any(a.startswith("--partition") for a in merge_job) and "--account=cs149" in merge_job
    assert merge_job[-1] == str(tmp_path / "slurm" / "merge.sh")
    cpu = slurm.sbatch_commands(tmp_path, dataclasses.replace(settings, merge_partition="cpu"), [0], [])
    assert "--partition=cpu" in cpu.merge and "--partition=gpu" in cpu.grade and "--partition=gpu" in cpu.prepare
    # The prepare job builds the reference once, with a task's resources; the array waits
    # for it to succeed, the merge for the array whatever it did.
    assert prepare_job[-1] == str(tmp_path / "slurm" / "prepare.sh") and "--gres=gpu:1" in prepare_job
    after = slurm.Jobs.after(grade_job, "afterok", "41")
    assert after[-2:] == ["--dependency=afterok:41", grade_job[-1]]
    no_gpu = slurm.sbatch_commands(tmp_path, dataclasses.replace(settings, gres=""), [0], [])
    assert not any(a.startswith("--gres") for a in no_gpu.grade + no_gpu.prepare)
    throttled = slurm.sbatch_commands(tmp_path, settings, list(range(300)), [], throttle=20)
    assert "--array=0-299%20" in throttled.grade


def test_emulator_jobs_ask_for_no_gpu_and_the_array_waits_for_the_prepare_job(tmp_path, capsys):
    from fixtures import compose_class
    folder = tmp_path / "class"
    compose_class(["reference", "handout"], folder, tmp_path / "parts")
    out = tmp_path / "out"
    assert cli.main(["slurm", str(folder), "--out", str(out), "--rubric", str(TEST_RUBRIC),
                     "--backend", "emulator", "--throttle", "4", "--dry-run"]) == 0
    said = capsys.readouterr().out.splitlines()
    prepare, grade, merge = [line for line in said if line.startswith("  sbatch")]
    assert "--gres" not in " ".join(said)
    assert "prepare.sh" in prepare and "--array=0-1%4" in grade and "--dependency=afterok:" in grade
    assert "--dependency=afterany:" in merge
    script = (out / "slurm" / "prepare.sh").read_text()
    assert "-m grader slurm-task" in script and "--prepare" in script and str(out) in script
    assert slurm.Plan.read(out).job.options.backend == "emulator"


def test_a_dry_run_writes_the_plan_and_the_scripts(tmp_path, capsys):
    from fixtures import compose_class
    folder = tmp_path / "class"
    compose_class(["reference", "handout"], folder, tmp_path / "parts")
    out = tmp_path / "out"
    assert cli.main(["slurm", str(folder), "--out", str(out), "--rubric", str(TEST_RUBRIC), "--seed", "5",
                     "--partition", "gpu", "--gres", "", "--dry-run"]) == 0
    said = capsys.readouterr().out
    assert "--array=0-1" in said and "--partition=gpu" in said and "--gres" not in said
    plan = slurm.Plan.read(out)
    assert [p.rsplit("/", 1)[-1] for p in plan.entries] == ["handout", "reference"]
    job = plan.job
    assert (job.options.seed, job.options.backend, job.rubric) == (5, "cuda", TEST_RUBRIC)   # auto: the nodes' GPU
    assert [p.name for p in job.submissions] == ["handout", "reference"]
    assert json.loads((out / "batch.json").read_text())["seed"] == 5
    script = (out / "slurm" / "grade.sh").read_text()
    assert f"cd {REPO}" in script and "-m grader slurm-task" in script and str(out) in script


def test_a_merge_with_a_result_missing_writes_nothing_and_names_it(tmp_path, capsys):
    from fixtures import compose_class
    folder = tmp_path / "class"
    compose_class(["reference", "handout"], folder, tmp_path / "parts")
    out = tmp_path / "out"
    assert cli.main(["slurm", str(folder), "--out", str(out), "--rubric", str(TEST_RUBRIC), "--dry-run"]) == 0
    capsys.readouterr()
    assert cli.main(["merge", str(out)]) == slurm.EXIT_MISSING
    said = capsys.readouterr().out
    assert "2 of 2 submission(s) have no result" in said and "handout" in said and "--resubmit" in said
    assert not (out / "grades.csv").exists()


def test_a_task_outside_the_array_is_refused(tmp_path, capsys):
    from fixtures import compose_class
    folder = tmp_path / "class"
    compose_class(["reference"], folder, tmp_path / "parts")
    out = tmp_path / "out"
    assert cli.main(["slurm", str(folder), "--out", str(out), "--rubric", str(TEST_RUBRIC), "--dry-run"]) == 0
    assert cli.main(["slurm-task", str(out), "--index", "3"]) == cli.EXIT_GRADER
    assert "task 3: the plan has 1 submissions" in capsys.readouterr().err
    assert cli.main(["merge", str(tmp_path / "nowhere")]) == cli.EXIT_GRADER


def test_the_plan_stores_the_grading_job_as_data(tmp_path):
    """The plan holds the grading job as JSON (no command line to parse again): what
    `slurm` was given is what every task grades with, and the cache stays unset (each
    node's default) unless --cache named one."""
    from fixtures import compose_class
    folder = tmp_path / "class"
    compose_class(["reference"], folder, tmp_path / "parts")
    out = tmp_path / "out"
    assert cli.main(["slurm", str(folder), "--out", str(out), "--rubric", str(TEST_RUBRIC), "--seed", "9",
                     "--perf-seed", "4", "--no-perf", "-j", "3", "--gpu-runs", "2", "--cuda-arch", "90",
                     "--sandbox-user", "", "--dry-run"]) == 0
    data = json.loads((out / "slurm" / "plan.json").read_text())
    options = data["job"]["options"]
    assert (options["seed"], options["perf_seed"], options["perf"], options["jobs"], options["gpu_runs"],
            options["cuda_arch"], options["sandbox_user"], options["cache_dir"]) == (9, 4, False, 3, 2, "90", "",
                                                                                    None)
    assert data["job"]["rubric"] == str(TEST_RUBRIC) and not any(isinstance(v, list) for v in options.values())
    job = slurm.Plan.read(out).job
    assert GradingJob.from_json(json.loads(json.dumps(job.to_json()))) == job
    with pytest.raises(ValueError):
        GradingJob.from_json({**job.to_json(), "options": {"no_such_option": 1}})


def test_the_plan_records_the_cache_the_warning_named(tmp_path, monkeypatch):
    """Issue 59: plan.json said "cache_dir": null where the node-local warning named
    $SCANLAB_CACHE: the jobs (which may not inherit it) then used another cache."""
    from fixtures import compose_class
    folder = tmp_path / "class"
    compose_class(["reference"], folder, tmp_path / "parts")
    out = tmp_path / "out"
    monkeypatch.setenv("SCANLAB_CACHE", str(tmp_path / "shared-cache"))
    assert cli.main(["slurm", str(folder), "--out", str(out), "--rubric", str(TEST_RUBRIC), "--dry-run"]) == 0
    options = json.loads((out / "slurm" / "plan.json").read_text())["job"]["options"]
    assert options["cache_dir"] == str((tmp_path / "shared-cache").resolve())
