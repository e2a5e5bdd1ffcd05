"""`slurm`: a class graded on a Slurm cluster, the way its GPU nodes are shared.

`slurm FOLDER` writes a plan into OUT/slurm/ (the submissions in a fixed order, the
seed, the grading options) and submits two jobs with sbatch:

- an array job, one task per submission (`--gres`, `--time`, `--mem`, `--cpus-per-task`
  from the rubric's [slurm] table), each running `slurm-task OUT`: it grades submission
  number $SLURM_ARRAY_TASK_ID into OUT/submissions/<name>/, as a local batch would;
- a merge job that starts after it (`--dependency=afterany`), running `merge OUT`: the
  gradebook files, class-summary.md and class.html from every submission's results.json,
  the same files as a local batch of the same submissions with the same seed.

Resubmitting (`slurm FOLDER --out OUT --resubmit`) submits only the submissions with no
result of this plan's seed, rubric and bytes (failed, timed out, or never run), and the
merge again. OUT must be on a file system the nodes share; so must the reference cache.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import os
import random
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from .. import MODULE, REPO_ROOT
from .batch import BatchState, class_draw_seed, finish_batch, graded_before, read_class, read_identities, similarity_pairs
from .submissions import class_folder, find_submissions, folder_names
from ..grading.build_types import Layout
from ..grading.collect import submission_name
from ..grading.pipeline import grade
from ..report.folder import write_reports
from ..results import Identity, SubmissionResult
from ..config.rubric import Rubric, SlurmRubric, load_rubric
from ..config.measured import measured_parts
from ..grading.job import GradingJob, Options, default_cache_dir
from ..grading.provenance import provenance
from ..grading.session import Session
from ..machine.backend import requested

PLAN = Path("slurm") / "plan.json"
PLAN_FORMAT = "scanlab-slurm-plan-2"     # 2: the grading job as JSON
EXIT_MISSING = 1


class SlurmError(Exception):
    pass


@dataclass
class Plan:
    """What every job of one Slurm batch agrees on: the class folder, the grading job (the
    rubric, the options with the seed and backend, the submissions in array order), and
    whose each submission is (roster, due date)."""
    folder: str                 # the class folder (or the export's root)
    job: GradingJob             # array task i grades job.submissions[i]
    roster: str | None = None
    due: str | None = None
    similarity: bool = False    # the merge also compares the class (copydetect)

    def write(self, out: Path) -> None:
        (out / PLAN).parent.mkdir(parents=True, exist_ok=True)
        data = {"format": PLAN_FORMAT, "folder": self.folder, "job": self.job.to_json(),
                "roster": self.roster, "due": self.due, "similarity": self.similarity}
        (out / PLAN).write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")

    @staticmethod
    def read(out: Path) -> Plan:
        try:
            data = json.loads((out / PLAN).read_text(encoding="utf-8"))
            if not isinstance(data, dict) or data.get("format") != PLAN_FORMAT:
                raise ValueError("not a plan of this grader")
            return Plan(str(data["folder"]), GradingJob.from_json(data["job"]), data.get("roster"),
                        data.get("due"), bool(data.get("similarity", False)))
        except (OSError, ValueError, TypeError, KeyError) as e:
            raise SlurmError(f"no Slurm batch in {out} ({out / PLAN}: {e})") from None

    @property
    def entries(self) -> list[str]:
        return [str(p) for p in self.job.submissions]

    def paths(self) -> list[Path]:
        return list(self.job.submissions)

    def roster_path(self) -> Path | None:
        return Path(self.roster) if self.roster else None


def array_spec(indices: list[int]) -> str:
    """sbatch --array's list: runs of consecutive indices as ranges ("0-4,7,9-10")."""
    runs: list[list[int]] = []
    for i in sorted(set(indices)):
        if runs and i == runs[-1][-1] + 1:
            runs[-1].append(i)
        else:
            runs.append([i])
    return ",".join(str(r[0]) if len(r) == 1 else f"{r[0]}-{r[-1]}" for r in runs)


@dataclass
class Jobs:
    """The three sbatch command lines, each without its --dependency (added when the job
    it waits for has its id): the prepare job (the reference and the prebuilt harness
    into the shared cache, once), the array job (after the prepare job succeeded:
    afterok) and the merge job (after the array, whatever its tasks did: afterany)."""
    prepare: list[str]
    grade: list[str]
    merge: list[str]

    @staticmethod
    def after(argv: list[str], kind: str, job: str) -> list[str]:
        # A job whose dependency can never be met (the prepare job failed) is removed,
        # not left pending in the queue for ever.
        return argv[:-1] + ["--kill-on-invalid-dep=yes", f"--dependency={kind}:{job}", argv[-1]]


def sbatch_commands(out: Path, settings: SlurmRubric, indices: list[int],
                    extra: list[str], throttle: int = 0) -> Jobs:
    """The sbatch command lines of a batch (see Jobs). `throttle`: at most this many
    array tasks at once (sbatch --array=...%N; 0: as many as the cluster gives)."""
    logs = out / "slurm" / "logs"
    where = ([f"--partition={settings.partition}"] if settings.partition else []) + \
            ([f"--account={settings.account}"] if settings.account else [])
    resources = [f"--time={settings.minutes}", f"--mem={settings.memory}",
                 f"--cpus-per-task={settings.cpus}", *where]
    if settings.gres:
        resources.append(f"--gres={settings.gres}")
    prepare_job = ["sbatch", "--parsable", "--job-name=scanlab-prepare", f"--output={logs}/prepare-%j.out",
                   *resources, *extra, str(out / "slurm" / "prepare.sh")]
    spec = array_spec(indices) + (f"%{throttle}" if throttle > 0 else "")
    grade_job = ["sbatch", "--parsable", "--job-name=scanlab-grade", f"--array={spec}",
                 f"--output={logs}/grade-%A_%a.out", *resources, *extra, str(out / "slurm" / "grade.sh")]
    # The merge only reads results and writes files: a CPU partition (or the default), not the GPUs'.
    merge_where = ([f"--partition={settings.merge_partition}"] if settings.merge_partition else []) + \
        ([f"--account={settings.account}"] if settings.account else [])
    merge_job = ["sbatch", "--parsable", "--job-name=scanlab-merge", f"--output={logs}/merge-%j.out",
                 "--time=30", "--mem=2G", "--cpus-per-task=1", *merge_where, *extra,
                 str(out / "slurm" / "merge.sh")]
    return Jobs(prepare_job, grade_job, merge_job)


def _script(python: str, command: list[str]) -> str:
    return ("#!/usr/bin/env bash\n# Written by `grader slurm`: run by Slurm, not by hand.\n"
            f"cd {shlex.quote(str(REPO_ROOT))} || exit 2\n"
            f"exec {shlex.quote(python)} -m {MODULE} {shlex.join(command)}\n")


def _sbatch(argv: list[str]) -> str:
    try:
        run = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise SlurmError(f"sbatch could not run: {e}") from None
    if run.returncode != 0:
        raise SlurmError(f"sbatch refused the job (exit {run.returncode}): {run.stderr.strip()}")
    return run.stdout.strip().split(";")[0]


def missing(plan: Plan, rubric: Rubric, out: Path) -> list[int]:
    """The plan's submissions with no result of its seed, rubric and bytes in `out`."""
    state = BatchState.read(out)
    if state is None:
        return list(range(len(plan.entries)))
    names = folder_names(plan.paths())
    limit = rubric.submission.max_total_bytes
    now = provenance(Layout(REPO_ROOT))   # a result of a grader changed since is graded again
    return [i for i, e in enumerate(plan.paths())
            if graded_before(out / "submissions" / names[e], e, state, limit, now=now) is None]


NODE_LOCAL = (Path("/tmp"), Path("/var/tmp"), Path("/dev/shm"))


def node_local(path: Path) -> bool:
    """Whether `path` is on a folder each node has its own of (the jobs on other nodes
    would not see what this one wrote there)."""
    resolved = path.resolve()
    return any(resolved == p or p in resolved.parents for p in NODE_LOCAL)


def grader_command() -> str:
    """The grader as this process runs it: its own Python (the one with its dependencies)."""
    return f"{shlex.quote(sys.executable)} -m {MODULE}"


def submit(args: argparse.Namespace, rubric: Rubric, options: Options,
           say: Callable[[str], None] = print) -> int:
    """`slurm FOLDER`: the plan (args: the slurm command's own; options: the grading's)."""
    out: Path = (args.out or Path("grader-out") / "batch").resolve()
    cache = options.cache_dir or default_cache_dir()
    for what, path in (("--out", out), ("--cache", cache)):
        if node_local(path):
            say(f"WARNING: {what} {path} looks node-local ({', '.join(map(str, NODE_LOCAL))}): the "
                "jobs on other nodes will not see it; give a folder on storage the nodes share")
    if getattr(args, "similarity", False):
        from .similarity import missing as similarity_missing
        why = similarity_missing()
        if why:
            raise SlurmError(f"--similarity: {why}")
    overrides = {k: v for k, v in (("partition", args.partition), ("account", args.account),
                                   ("gres", args.gres)) if v is not None}
    if args.resubmit:
        plan = Plan.read(out)
        rubric = load_rubric(plan.job.rubric)   # the plan's, whatever --rubric says
        indices = missing(plan, rubric, out)
        if not indices:
            say(f"every submission of {out} is graded: only the merge is submitted")
    else:
        folder = class_folder(args.folder.resolve(), rubric, out, say)
        entries, skipped = find_submissions(folder)
        for s in skipped:
            say(f"skipped {s}")
        if not entries:
            raise SlurmError(f"{folder}: no submissions found")
        seed = options.seed if options.seed is not None else random.randrange(1, 2**31)
        # The jobs run where the GPUs are: "auto" means the GPU there.
        backend = requested(options.backend).name
        # The cache the warning above named: --cache, or $SCANLAB_CACHE where set (the jobs
        # may not inherit it); else unset, each node's default.
        named = options.cache_dir or (cache if os.environ.get("SCANLAB_CACHE") else None)
        # One draw of hidden cases for the class: every array task grades with the plan's.
        draw_seed = class_draw_seed(options.draw_seed, BatchState.read(out))
        grading = dataclasses.replace(
            options, seed=seed, backend=backend, draw_seed=draw_seed,
            cache_dir=named.resolve() if named is not None else None)
        plan = Plan(str(folder), GradingJob(args.rubric.resolve(), grading, sorted(entries)),
                    str(args.roster.resolve()) if args.roster else None, args.due,
                    bool(getattr(args, "similarity", False)))
        out.mkdir(parents=True, exist_ok=True)
        BatchState(seed, rubric.digest, backend, measured_parts(rubric),
                   roster=plan.roster or "", due=plan.due or "", draw_seed=draw_seed).write(out)
        plan.write(out)
        read_identities(folder, entries, plan.roster_path(), plan.due)   # a broken roster fails here
        indices = list(range(len(entries)))
    # Emulator jobs need no GPU: no gres unless --gres asks for one.
    if not requested(plan.job.options.backend).on_gpu and args.gres is None:
        overrides["gres"] = ""
    settings = dataclasses.replace(rubric.slurm, **overrides)
    python = args.python or sys.executable
    for name, command in (("prepare.sh", ["slurm-task", str(out), "--prepare"]),
                          ("grade.sh", ["slurm-task", str(out)]),
                          ("merge.sh", ["merge", str(out)])):
        script = out / "slurm" / name
        script.write_text(_script(python, command), encoding="utf-8")
        script.chmod(0o755)
    (out / "slurm" / "logs").mkdir(parents=True, exist_ok=True)
    jobs = sbatch_commands(out, settings, indices, args.sbatch_arg or [], args.throttle or 0)
    if args.dry_run:
        say("would run:")
        if indices:
            say("  " + shlex.join(jobs.prepare))
            say("  " + shlex.join(Jobs.after(jobs.grade, "afterok", "<prepare job>")))
        else:
            say("  (no array job: nothing to grade)")
        say("  " + shlex.join(Jobs.after(jobs.merge, "afterany", "<array job>")))
        return 0
    merge_argv = jobs.merge
    watch: list[str] = []
    if indices:
        prepared = _sbatch(jobs.prepare)
        say(f"submitted prepare job {prepared}: the reference and the prebuilt harness into the cache, once")
        job = _sbatch(Jobs.after(jobs.grade, "afterok", prepared))
        merge_argv = Jobs.after(jobs.merge, "afterany", job)
        watch = [prepared, job]
        say(f"submitted array job {job}: {len(indices)} submission(s) "
            f"({settings.minutes} min, {settings.memory}, {settings.cpus} CPUs"
            + (f", {settings.gres}" if settings.gres else ", no GPU")
            + (f", at most {args.throttle} at once" if args.throttle else "") + f" each), after {prepared}")
    merge = _sbatch(merge_argv)
    say(f"submitted merge job {merge}" + (f" (after {watch[1]})" if watch else ""))
    say(f"watch: squeue -j {','.join(watch + [merge])}; logs: {out / 'slurm' / 'logs'}/")
    say(f"then: {out / 'grades.csv'}, {out / 'class-summary.md'}, {out / 'class.html'}; "
        f"a task that failed: {grader_command()} slurm {args.folder} --out {out} --resubmit")
    return 0


def _task_index(index: int | None) -> int:
    if index is not None:
        return index
    value = os.environ.get("SLURM_ARRAY_TASK_ID")
    if value is None or not value.isdigit():
        raise SlurmError("slurm-task runs as a task of the array job (SLURM_ARRAY_TASK_ID), or with --index")
    return int(value)


def prepare(out: Path, layout: Layout, log: Callable[[str], None]) -> int:
    """The prepare job: the plan's reference and prebuilt harness into the shared cache
    (and on a GPU the reference's baselines), once, before the array starts."""
    plan = Plan.read(out)
    with Session(load_rubric(plan.job.rubric), layout, plan.job.options, log) as session:
        session.prepare_machine()
        print(f"reference driver ready ({session.backend.name}) in {session.cache_dir}", flush=True)
    return 0


def run_task(out: Path, index: int | None, layout: Layout, log: Callable[[str], None]) -> int:
    """One array task: grade one submission of the plan into out/submissions/<name>/."""
    plan = Plan.read(out)
    i = _task_index(index)
    if not 0 <= i < len(plan.entries):
        raise SlurmError(f"task {i}: the plan has {len(plan.entries)} submissions")
    rubric = load_rubric(plan.job.rubric)
    entries = plan.paths()
    entry = entries[i]
    who = read_identities(Path(plan.folder), entries, plan.roster_path(), plan.due)
    with Session(rubric, layout, plan.job.options, log) as session:
        print(f"grading {entry} (task {i} of {len(entries)}): seed {session.seed}, backend "
              f"{session.backend.name}", flush=True)
        result = grade(session, entry, on_phase=lambda text: print(f"    {text}", flush=True))
    result.identity = who.get(submission_name(entry), Identity())
    write_reports(result, rubric, out / "submissions" / folder_names(entries)[entry])
    print(f"{result.name}: {result.score:.2f} / {result.max_score:g}", flush=True)
    return 0


def merge(out: Path, say: Callable[[str], None] = print) -> int:
    """The class's files from every submission's results; exit 1, writing nothing, while
    some are missing (named, with the command that grades them)."""
    plan = Plan.read(out)
    rubric = load_rubric(plan.job.rubric)
    state = BatchState.read(out)
    todo = missing(plan, rubric, out)
    if state is None or todo:
        say(f"merge: {len(todo)} of {len(plan.entries)} submission(s) have no result of this batch: "
            + ", ".join(submission_name(Path(plan.entries[i])) for i in todo[:20])
            + (" ..." if len(todo) > 20 else ""))
        say(f"grade them: {grader_command()} slurm {plan.folder} --out {out} --resubmit")
        return EXIT_MISSING
    entries = plan.paths()
    names = folder_names(entries)
    who, check = read_class(Path(plan.folder), entries, plan.roster_path(), plan.due,
                            rubric.gradebook.assignment)
    results: list[SubmissionResult] = []
    for e in entries:
        r = graded_before(out / "submissions" / names[e], e, state, rubric.submission.max_total_bytes)
        assert r is not None  # missing() said so
        r.identity = who.get(r.name, r.identity)
        results.append(r)
    pairs = None
    if plan.similarity:   # after every grade, on the merge job's node
        pairs = similarity_pairs(Path(plan.folder), rubric, Layout(REPO_ROOT), out, say)
    finish_batch(results, rubric, entries, out, pairs, roster=check)
    say(f"merged {len(results)} submission(s): {out / 'grades.csv'}, {out / 'class-summary.md'}, "
        f"{out / 'class.html'}")
    return 0


__all__ = ["submit", "prepare", "run_task", "merge", "array_spec", "Plan", "SlurmError"]
