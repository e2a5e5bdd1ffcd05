"""The command line: python3 -m grader {grade,batch,doctor,rubric-keys,prepare,gradescope-zip}."""
from __future__ import annotations

import argparse
import signal
import sys
import threading
from pathlib import Path
from typing import Callable

from . import COMMAND, REPO_ROOT
from . import __version__
from . import exits
from .grading.build_types import Layout
from .grading.pipeline import grade
from .report import terminal
from .printable import printable
from .report.folder import REPORT_FILES, safe_name, write_reports
from .classroom.roster import RosterError
from .grading.job import GradingJob, Options, default_cache_dir
from .grading.session import GraderError, Session
from .classroom.slurm import SlurmError
from .config.rubric import Rubric, RubricError, load_rubric, settings_table
from .machine.backend import AUTO, BACKENDS

EXIT_OK = exits.OK
EXIT_GRADER = exits.GRADER      # the grader could not run (setup, rubric, arguments)

DESCRIPTION = """scanlab's autograder.

  grade SUBMISSION   grade one submission: a folder, a .zip, a .tar.gz/.tgz/.tar, or a
                     copy of the handout with the TODOs filled in
  batch FOLDER       grade every submission in FOLDER (one subfolder or archive each):
                     a progress line each, a grades CSV and a class summary
  doctor             what this machine has (GPU, driver, nvcc, CMake, g++, Boost.Context)
                     and what is missing
  rubric-keys        every rubric setting: its table, default and meaning
  prepare            build the reference driver and the prebuilt harness into the
                     cache, and on a GPU time the reference's baselines (once per
                     machine; e.g. in Gradescope's setup.sh)
  gradescope-zip     build the Gradescope autograder zip
  slurm FOLDER       grade a class on a Slurm cluster: a prepare job, an array job (one
                     task per submission) and a merge job that writes the class's files
  slurm-task OUT     (run by Slurm) grade one submission of a Slurm batch
  merge OUT          the class's files of a Slurm batch from its results
  rescore FOLDER     score a graded batch again by a changed rubric (points,
                     thresholds, late policy, gradebook names): nothing is graded
  similarity FOLDER  which submissions of a class are alike, the reference solution
                     included (copydetect)
  init DIR           a course folder (data/, handout/, solution/student/) to edit the
                     rubric in and grade from, made from the course in use

See grader/README.md."""


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--rubric", type=Path, default=REPO_ROOT / "data" / "rubric.toml",
                   help="the rubric (default: data/rubric.toml)")
    p.add_argument("--backend", choices=(AUTO, *BACKENDS), default=AUTO,
                   help="cuda: build for and run on the GPU; emulator: the CPU emulator "
                        "(correctness only); auto (default): cuda when a GPU and nvcc are found")
    p.add_argument("--cache", type=Path, default=None,
                   help=f"where the reference build is cached (default {default_cache_dir()})")
    p.add_argument("-j", "--jobs", type=int, default=0,
                   help="parallel builds/verifications (default: the CPU cores)")
    p.add_argument("--seed", type=int, default=None,
                   help="the grading run's seed (default: a fresh one, printed)")
    p.add_argument("--perf-seed", type=int, default=None,
                   help="the seed of the timed inputs (default: a fresh, secret one per grade, "
                        "shown only in the instructor's reports); to repeat a grade's timing")
    p.add_argument("--draw-seed", type=int, default=None,
                   help="the seed of the hidden cases drawn over every block size and size class "
                        "(default: a class's, kept in its batch.json, for batch, slurm and grade "
                        "--class; a fresh one for a lone grade; secret: shown only in the "
                        "instructor's reports); to repeat a grade's drawn cases")
    p.add_argument("--no-perf", action="store_true", help="do not measure performance")
    p.add_argument("--gpu-runs", type=int, default=0,
                   help="correctness runs on one GPU at once (default: the rubric's "
                        "[limits] gpu_runs_at_once); timing always has the GPU alone")
    p.add_argument("--gpus", default="all",
                   help="the GPUs to grade on: all (default: every visible one, a worker each, "
                        "each timing alone on its own), or indices as nvidia-smi numbers them (0,2)")
    p.add_argument("--cuda-arch", default="", help="CMAKE_CUDA_ARCHITECTURES (default: the GPU's)")
    p.add_argument("--sandbox-user", default="nobody",
                   help="the user student programs run as when the grader is root (default nobody)")
    p.add_argument("--workdir", type=Path, default=None, help="parent of the temporary workspace")
    p.add_argument("--keep-workdir", action="store_true", help="keep the temporary workspace")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress lines")


def _class(p: argparse.ArgumentParser, out_help: str) -> None:
    """The arguments of the commands that grade a class (batch, slurm)."""
    p.add_argument("folder", type=Path,
                   help="the class: one subfolder or archive per submission, a Gradescope export "
                        "(unzipped), or Canvas's bulk download (flat, name-prefixed files)")
    _common(p)
    p.add_argument("--out", type=Path, default=None, help=out_help)
    p.add_argument("--roster", type=Path, default=None,
                   help="a roster CSV (submission, name, sid, email, login, section, late "
                        "columns), Canvas's gradebook export (ID, SIS User ID, SIS Login ID) or its "
                        "submissions list (JSON: submission times, grader/README.md 'Late work'): whose "
                        "each submission is; its students with no submission get 0 in the upload files")
    p.add_argument("--due", default=None,
                   help="the due date, ISO with zone (2026-11-20T23:59:00-08:00): submissions "
                        "after it are marked late")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=COMMAND, description=DESCRIPTION,
                                     epilog=exits.text(),
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"scanlab grader {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    g = sub.add_parser("grade", help="grade one submission",
                       description="Grade one submission: print its report and write the report files.",
                       epilog=exits.text(), formatter_class=argparse.RawDescriptionHelpFormatter)
    g.add_argument("submission", type=Path,
                   help="a folder, a .zip/.tar.gz/.tgz/.tar, a copy of the handout, or one student file "
                        "(scan.cuh, or name-prefixed: alice_scan.cuh)")
    _common(g)
    g.add_argument("--out", type=Path, default=None,
                   help="folder for the reports (default grader-out/<submission name>)")
    g.add_argument("--gradescope", type=Path, default=None,
                   help="also write Gradescope's results.json to this path")
    g.add_argument("--class", dest="class_out", type=Path, default=None, metavar="BATCH_OUT",
                   help="grade as one of the class graded into BATCH_OUT (a batch's or slurm's --out): "
                        "with its seed and its secret draw of hidden cases (batch.json), unless "
                        "--seed or --draw-seed say otherwise (a regrade of one student)")
    g.add_argument("--show-hidden", action="store_true",
                   help="show the details of hidden cases in the terminal report (instructors)")
    g.add_argument("--regrade", metavar="REASON", default=None,
                   help="with --class: a regrade request. The new grade replaces the class's "
                        "reports of this submission; the earlier reports, the submission as "
                        "handed in, the old score and REASON are kept (BATCH_OUT/regrades/, "
                        "BATCH_OUT/regrades.csv)")

    b = sub.add_parser("batch", help="grade every submission in a folder",
                       description="Grade a class: the reports of each submission, grades.csv, the "
                                   "Gradescope and Canvas upload files, class-summary.md and class.html.",
                       epilog=exits.text(), formatter_class=argparse.RawDescriptionHelpFormatter)
    _class(b, "folder for grades.csv, the class summary and the reports (default grader-out/batch)")
    b.add_argument("--resume", action="store_true",
                   help="go on with an interrupted batch in --out: submissions already graded "
                        "with the same rubric, seed, draw, bytes and grader are kept, not regraded "
                        "(the others are, and it says why)")

    b.add_argument("--similarity", action="store_true",
                   help="also compare the class's student files with each other and with the "
                        "reference solution (copydetect; the handout's lines excluded): similarity.html "
                        "and similarity.csv in --out, the alike in grades.csv, class-summary.md, class.html")

    rs = sub.add_parser("rescore", help="score a graded batch again by a changed rubric, grading nothing",
                        description="Score the stored measurements of the batch in --out (cases passed, "
                                    "times, findings) by --rubric: its points, thresholds, late policy and "
                                    "gradebook names. Every report and class file is written again; nothing "
                                    "is built or run. A rubric that changes what is measured (cases, timed "
                                    "sizes, rules, limits) is refused: batch --resume grades again.",
                        epilog=exits.text(), formatter_class=argparse.RawDescriptionHelpFormatter)
    rs.add_argument("folder", type=Path, help="the class folder the batch graded")
    rs.add_argument("--out", type=Path, default=None, help="the batch's folder (default grader-out/batch)")
    rs.add_argument("--rubric", type=Path, default=REPO_ROOT / "data" / "rubric.toml",
                    help="the rubric to score by (default: data/rubric.toml)")
    rs.add_argument("--roster", type=Path, default=None, help="as batch (default: the batch's)")
    rs.add_argument("--due", default=None, help="as batch (default: the batch's)")

    sl = sub.add_parser("slurm", help="grade a class on a Slurm cluster: an array job and a merge",
                        description="Grade a class on a Slurm cluster: a prepare job (the reference, "
                                    "once), an array job after it (one task per submission) and a merge "
                                    "job that writes the same files as batch.",
                        epilog=exits.text(), formatter_class=argparse.RawDescriptionHelpFormatter)
    _class(sl, "folder for the plan, the reports and the class's files, on a file system the "
               "nodes share (default grader-out/batch)")
    sl.add_argument("--partition", default=None, help="sbatch --partition (default: the rubric's [slurm])")
    sl.add_argument("--account", default=None, help="sbatch --account (default: the rubric's [slurm])")
    sl.add_argument("--gres", default=None,
                    help="sbatch --gres of each array task (default: the rubric's [slurm], gpu:1; "
                         "none with --backend emulator; '' for none)")
    sl.add_argument("--throttle", type=int, default=0, metavar="N",
                    help="at most N array tasks at once (sbatch --array=...%%N; default: no limit)")
    sl.add_argument("--sbatch-arg", action="append", metavar="ARG",
                    help="one more sbatch option for every job (repeatable), e.g. --sbatch-arg=--qos=class")
    sl.add_argument("--python", default=None,
                    help="the Python the jobs run the grader with (default: this one)")
    sl.add_argument("--resubmit", action="store_true",
                    help="submit only the submissions of the plan in --out without a result, and the merge")
    sl.add_argument("--dry-run", action="store_true", help="write the plan and print the sbatch commands")
    sl.add_argument("--similarity", action="store_true",
                    help="the merge job also compares the class (as batch --similarity); copydetect "
                         "must be importable by this Python (checked before anything is submitted)")
    st = sub.add_parser("slurm-task", help="(run by Slurm) grade one submission of a plan",
                        description="Run by the array job of `slurm`: grade submission number "
                                    "$SLURM_ARRAY_TASK_ID of the plan in OUT.")
    st.add_argument("out", type=Path, help="the --out folder of `slurm` (holding slurm/plan.json)")
    st.add_argument("--index", type=int, default=None, help="the submission (default $SLURM_ARRAY_TASK_ID)")
    st.add_argument("--prepare", action="store_true",
                    help="(the prepare job) build the plan's reference and prebuilt harness into the cache "
                         "and, on a GPU, time its baselines; grade nothing")
    mg = sub.add_parser("merge", help="the class's files of a Slurm batch from its results",
                        description="Write grades.csv, the upload files, class-summary.md and "
                                    "class.html of a Slurm batch from its submissions' results (exit 1, "
                                    "writing nothing, while some have none).",
                        epilog=exits.text(), formatter_class=argparse.RawDescriptionHelpFormatter)
    mg.add_argument("out", type=Path, help="the --out folder of `slurm`")

    m = sub.add_parser("similarity", help="which submissions of a class are alike (copydetect)",
                       description="Compare the student files of a class with each other and with the "
                                   "reference solution (copydetect; the handout's lines excluded). A lead "
                                   "for a person to read, never a verdict.")
    m.add_argument("folder", type=Path, help="the class, as batch takes it")
    m.add_argument("--rubric", type=Path, default=REPO_ROOT / "data" / "rubric.toml",
                   help="the rubric (default: data/rubric.toml): the files and the limits")
    m.add_argument("--out", type=Path, default=Path("grader-out") / "similarity",
                   help="folder for similarity.html and similarity.csv (default grader-out/similarity)")

    sub.add_parser("doctor", help="check this machine",
                   description="List the GPU(s), driver, nvcc, CMake, g++, Boost.Context and the "
                               "sandbox, and say what this machine can grade (exit 1: nothing).")
    sub.add_parser("rubric-keys", help="every rubric setting with its default and meaning",
                   description="Print every rubric setting: its table, key, default and meaning.")

    p = sub.add_parser("prepare", help="build the reference and the prebuilt harness into the cache; "
                                       "on a GPU, time the reference's baselines and profile it under ncu",
                       description="Build the reference driver and the prebuilt harness into the cache "
                                   "and, on a GPU, time the reference's baselines and profile it under "
                                   "Nsight Compute (the figures a grade shows beside the student's): once per machine "
                                   "(Gradescope's setup.sh, the prepare job of `slurm`).")
    _common(p)

    z = sub.add_parser("gradescope-zip", help="build the Gradescope autograder zip",
                       description="Write the Gradescope autograder zip (it holds the solution: keep it "
                                   "private).")
    z.add_argument("--out", type=Path, default=REPO_ROOT / "dist" / "scanlab-autograder.zip",
                   help="where the zip goes (default dist/scanlab-autograder.zip)")
    z.add_argument("--rubric", type=Path, default=REPO_ROOT / "data" / "rubric.toml",
                   help="the rubric the autograder grades with (default: data/rubric.toml)")
    z.add_argument("--draw-seed", type=int, default=None,
                   help="the class's secret seed of the drawn hidden cases, kept in the zip: every "
                        "student faces the same cases (default: a fresh one; give a batch's "
                        "batch.json draw_seed to grade the GPU half with the same cases)")
    return parser


def options_from(args: argparse.Namespace) -> Options:
    opts = Options(backend=args.backend, jobs=args.jobs, seed=args.seed, perf_seed=args.perf_seed,
                   draw_seed=args.draw_seed,
                   perf=not args.no_perf,
                   sandbox_user=args.sandbox_user, cuda_arch=args.cuda_arch, workdir=args.workdir,
                   keep_workdir=args.keep_workdir, gpu_runs=args.gpu_runs, gpus=args.gpus)
    if args.cache is not None:
        opts.cache_dir = args.cache
    return opts


def _logger(quiet: bool):
    if quiet:
        return lambda line: None
    return lambda line: print(f"  .. {printable(line)}", file=sys.stderr, flush=True)


def grade_one(args: argparse.Namespace, job: GradingJob, rubric: Rubric, layout: Layout,
              log: Callable[[str], None]) -> int:
    """`grade`: the job's one submission (args: where its reports go)."""
    submission, = job.submissions
    if not submission.exists() and not submission.is_symlink():
        print(f"grader: {submission}: no such file or folder", file=sys.stderr)
        return EXIT_GRADER
    regrade = None
    if args.regrade is not None:
        from .classroom.regrade import RegradeError, Request
        from .grading.collect import submission_name
        try:
            regrade = Request.start(args.class_out, submission_name(submission), submission, args.regrade)
        except RegradeError as e:
            print(f"grader: --regrade: {e}", file=sys.stderr)
            return EXIT_GRADER
    with Session(rubric, layout, job.options, log) as session:
        log(f"seed {session.seed}; backend {session.backend.name}; {session.jobs} CPU slots (builds and emulator runs at once)")
        result = grade(session, submission, on_event=log)
    out = args.out or Path("grader-out") / safe_name(result.name)
    if regrade is not None:
        result, out = regrade.finish(result), regrade.earlier.folder
    write_reports(result, rubric, out, args.gradescope, args.show_hidden)
    # Gradescope may show students the output (--gradescope: [gradescope] stdout_visibility):
    # then without the secret seeds, which the report folder's report.txt keeps.
    sys.stdout.write(printable(terminal.render(result, args.show_hidden, instructor=args.gradescope is None)))
    print(f"reports: {out}/ ({', '.join(REPORT_FILES)})")
    if regrade is not None:
        print(regrade.words(result, COMMAND))
    if args.gradescope:
        print(f"Gradescope results: {args.gradescope}")
    return 0


def similarity_command(folder: Path, rubric: Rubric, layout: Layout, out: Path) -> int:
    from .classroom.similarity import HTML_FILE, SimilarityError, similarity_report, summary_lines
    if not folder.is_dir():
        print(f"grader: {folder} is not a folder", file=sys.stderr)
        return EXIT_GRADER
    from .classroom.submissions import class_folder   # a Gradescope export, Canvas's flat download
    folder = class_folder(folder, rubric, out, lambda line: print(printable(line), file=sys.stderr))
    try:
        pairs = similarity_report(folder, rubric, layout, out)
    except SimilarityError as e:
        print(f"grader: similarity: {e}", file=sys.stderr)
        return EXIT_GRADER
    print("closest pairs (share of a file's code also in the other's, beyond the handout; the "
          "reference solution included):")
    print("\n".join(summary_lines(pairs)))
    print(f"report: {out / HTML_FILE}; every pair: {out / 'similarity.csv'}")
    return EXIT_OK


def _stop(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    """SIGTERM (Slurm's time limit, a kill) stops the grader as Ctrl-C does: what is being
    graded ends through the usual paths, and the temporary workspace is removed."""
    if threading.current_thread() is not threading.main_thread():
        return _main(argv)
    previous = signal.signal(signal.SIGTERM, _stop)
    try:
        return _main(argv)
    finally:
        signal.signal(signal.SIGTERM, previous)


def _main(argv: list[str] | None) -> int:
    args = build_parser().parse_args(argv)   # (grader/entry.py found the checkout)
    try:
        if args.command == "rubric-keys":
            print(settings_table(), end="")
            return EXIT_OK
        if args.command == "doctor":
            from .machine.doctor import doctor
            return doctor()
        if args.command == "gradescope-zip":
            from .gradescope.autograder import build_zip
            rubric = load_rubric(args.rubric)  # fail early on a broken rubric
            path = build_zip(Layout(REPO_ROOT), args.out, args.rubric, args.draw_seed)
            print(f"wrote {path}")
            print(f"On Gradescope (no GPU) the autograder gives the {rubric.max_correctness:g} "
                  f"correctness points: set the assignment's autograder points to "
                  f"{rubric.max_correctness:g}. The {rubric.max_performance:g} performance points "
                  "come from the GPU batch (grader/README.md, the round trip).")
            return EXIT_OK
        if args.command in ("slurm-task", "merge"):
            from .classroom import slurm
            if args.command == "merge":
                return slurm.merge(args.out.resolve())
            if args.prepare:
                return slurm.prepare(args.out.resolve(), Layout(REPO_ROOT), _logger(False))
            return slurm.run_task(args.out.resolve(), args.index, Layout(REPO_ROOT), _logger(False))
        rubric = load_rubric(args.rubric)
        layout = Layout(REPO_ROOT)
        if args.command == "slurm":
            from .classroom import slurm
            return slurm.submit(args, rubric, options_from(args))
        if args.command == "similarity":
            return similarity_command(args.folder, rubric, layout, args.out)
        if args.command == "rescore":
            from .classroom.batch import rescore_class
            return rescore_class(args, rubric)
        log = _logger(args.quiet)
        if args.command == "prepare":
            with Session(rubric, layout, options_from(args), log) as session:
                session.prepare_machine()
                print(f"reference driver ready ({session.backend.name}) in {session.cache_dir}")
            return EXIT_OK
        if args.command == "grade":
            options = options_from(args)
            if args.regrade is not None and args.class_out is None:
                print("grader: --regrade needs --class BATCH_OUT (the class whose grade it replaces)",
                      file=sys.stderr)
                return EXIT_GRADER
            if args.class_out is not None:
                from .classroom.batch import as_one_of_the_class
                if not as_one_of_the_class(options, args.class_out):
                    return EXIT_GRADER
            return grade_one(args, GradingJob(args.rubric, options, [args.submission]),
                             rubric, layout, log)
        if args.command == "batch":
            from .classroom.batch import grade_batch
            return grade_batch(args, GradingJob(args.rubric, options_from(args)), rubric, layout, log)

    except (RubricError, GraderError, RosterError, SlurmError) as e:
        print(f"grader: {e}", file=sys.stderr)
        return EXIT_GRADER
    except KeyboardInterrupt:
        print("grader: interrupted", file=sys.stderr)
        return exits.INTERRUPTED
    return EXIT_GRADER
