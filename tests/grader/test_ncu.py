"""Nsight Compute in a GPU grade (grader/grading/ncu.py, diagnosis.py, report/why.py),
without a GPU: ncu's raw CSV page as tests/grader/data/ncu/ holds it (ncu's format: a
header row of metric names, a row of units, one row per launch; its README says where
each file comes from), the diagnosis of each fixture of known cause against the
reference's figures, and every report. The end-to-end path (ncu in the sandbox on a
GPU) is tests/gpu/grader_e2e.sh's and tools/gpu_ncu.sh's."""
from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest

from conftest import REPO
from grader.config.rubric import PerfCase
from grader.grading import diagnosis, ncu
from grader.report import gradescope, html, jsonfile, terminal, why
from grader.results import ProfileFigures, TaskProfile

DATA = Path(__file__).parent / "data" / "ncu"


def figures_of(name: str) -> list[ProfileFigures]:
    """Each profiled process's figures (one a task) of a recorded page."""
    return [ncu.task_figures(rows) for rows in ncu.cases_of(ncu.parse_raw_csv((DATA / name).read_text()))]


@pytest.fixture(scope="module")
def reference() -> dict[str, ProfileFigures]:
    # One ncu process over the reference's four timed tasks, recorded on an H100.
    return dict(zip(("warp-scan", "reduce", "scan", "lookback-scan"), figures_of("reference.csv"), strict=True))


def test_the_raw_page_is_read_per_launch_in_base_units():
    rows = ncu.parse_raw_csv((DATA / "reference.csv").read_text())
    assert [r.process for r in rows] == ["28", "55", "55", "89", "89", "89", "130", "130"]
    assert rows[0].name.startswith("void warpScanKernel<Add<int>, StudentWarpScan>")
    assert rows[0].get("time") == pytest.approx(0.043744)       # 43744 "ns" (ncu 2025.3), in ms
    assert rows[1].get("load_sectors") == 2097152
    assert rows[5].get("block") == 256 and rows[5].get("theoretical") == 50
    assert len(ncu.by_process(rows)) == 4


@pytest.mark.parametrize("page", ["reference.csv", "uncoalesced_reduce.csv", "occupancy_reduce.csv"])
def test_every_metric_asked_for_has_a_value_on_the_recorded_pages(page):
    # Recorded on an H100 (ncu 2025.3.1): no metric of METRICS is n/a or missing there.
    for row in ncu.parse_raw_csv((DATA / page).read_text()):
        assert [m for m in ncu.METRICS if row.values.get(m) is None] == [], row.name


def test_a_task_is_its_kernels_together(reference):
    reduce = reference["reduce"]
    assert [k.name.split("<")[0] for k in reduce.kernels] == ["void reduceBlocksKernel"] * 2
    assert [k.ms for k in reduce.kernels] == pytest.approx([0.028128, 0.00352])
    assert reduce.main_kernel == reduce.kernels[0].name          # the longer pass
    # DRAM weighted by time: 73.8% for 28.128 us and 0.13% for 3.52 us.
    assert reduce.dram_pct == pytest.approx((73.8 * 28128 + 0.13 * 3520) / (28128 + 3520))
    assert reduce.load_sectors_per_request == pytest.approx((2097152 + 128) / (524288 + 32))
    assert reduce.blocks_per_sm == 8 and reduce.occupancy_limiter == "registers"
    assert reduce.threads_per_block == 256 and reduce.registers_per_thread == 31
    assert reduce.top_stalls(1) == [("long_scoreboard", pytest.approx(18.83, abs=0.01))]


def test_occupancy_is_one_kernels_achieved_beside_its_theoretical(reference):
    # The three-phase scan: reduceBlocksKernel (100% possible, 91% achieved), then two
    # scanBlocksKernel launches (50% possible: 56 registers). A time-weighted achieved over
    # the three (60%) beside the longest one's theoretical (50%) read "60/50%".
    scan = reference["scan"]
    assert len(scan.kernels) == 3
    assert scan.main_kernel.startswith("void scanBlocksKernel") and scan.kernels[2].ms == pytest.approx(0.049792)
    assert scan.theoretical_occupancy_pct == 50 and scan.achieved_occupancy_pct == pytest.approx(45.87)
    assert scan.blocks_per_sm == 4 and scan.registers_per_thread == 56
    for f in reference.values():
        assert f.achieved_occupancy_pct <= f.theoretical_occupancy_pct
    shown = why.ROWS[1].show(scan)
    assert shown == ("46% of 50% possible (4 x 256 threads an SM, limited by registers; "
                     "of scanBlocksKernel, the longest of 3 kernels)")


def test_the_reference_stalls_are_ranked_by_value_after_the_cache(reference, tmp_path):
    # The cache is JSON with sorted keys: the order of the dict is lost on the way back.
    store = ncu.ProfileStore(tmp_path / "ncu.json")
    case = PerfCase("reduce", "add-i32", 1 << 26, 256)
    store.put("NVIDIA H100", case, 1 << 24, reference["reduce"])
    cached = store.known("NVIDIA H100", case, 1 << 24)
    assert cached is not None and list(cached.stalls)[0] == "barrier"     # alphabetical now
    assert [r for r, _ in cached.top_stalls(3)] == ["long_scoreboard", "mio_throttle", "short_scoreboard"]
    assert cached.top_stalls(3) == reference["reduce"].top_stalls(3)
    assert "long scoreboard 18.8" in why.ROWS[-1].show(cached)


@pytest.mark.parametrize("fixture, task, said, not_said", [
    ("uncoalesced_reduce.csv", "reduce",
     "loads are not coalesced: 32.0 sectors per request where 4.0 is possible", ("bank conflicts", "threads per SM", "stores are not")),
    ("occupancy_reduce.csv", "reduce",
     # the real page: 64 registers a thread, 4 blocks of 256, 50% possible, 47.56% achieved
     "4 blocks of 256 threads per SM: occupancy 50% (48% achieved; the reference: 100%), limited by registers (64 a thread)",
     ("not coalesced", "bank conflicts")),
    ("bank_conflict_scan.csv", "scan",
     "shared-memory bank conflicts: 3.5 wavefronts per request where 1 is possible", ("not coalesced", "threads per SM")),
])
def test_each_fixture_of_known_cause_gets_its_diagnosis(reference, fixture, task, said, not_said):
    # A recorded page holds every task the grade timed; the fixture's own is the one asked.
    pages = figures_of(fixture)
    student = pages[0] if len(pages) == 1 else dict(zip(("warp-scan", "reduce", "scan"), pages, strict=True))[task]
    diagnoses = diagnosis.diagnose(student, reference[task])
    assert diagnoses[0].startswith(said), diagnoses
    for word in not_said:
        assert not any(word in d for d in diagnoses), (word, diagnoses)
    assert diagnoses[-1].startswith("warps wait most on ")     # the top stall, in words


def test_the_reference_against_itself_is_not_diagnosed(reference):
    for figures in reference.values():
        said = diagnosis.diagnose(figures, figures)
        assert said[0].startswith("the figures are close to the reference's"), said
        assert not any(d.startswith(("loads", "stores", "shared-memory", "DRAM")) or "threads per SM" in d
                       for d in said)


def test_a_lone_lane_storing_a_block_result_is_not_uncoalesced(reference):
    # reduceBlocksKernel's passes: one lane stores a block's 4-byte result, 1 sector a
    # request (12.5% of the sector used): as good as it gets.
    f = reference["reduce"]
    assert f.store_sectors_per_request == pytest.approx(1.0)
    assert f.store_ideal_sectors_per_request == pytest.approx(1.0)


def test_a_refusal_of_the_counters_is_recognised():
    text = (DATA / "refused.log").read_text()
    assert ncu.refused(text)
    with pytest.raises(ncu.NcuOutputError, match="no raw CSV page"):
        ncu.parse_raw_csv(text)


def test_a_page_without_the_metrics_asked_for_is_refused():
    text = (DATA / "reference.csv").read_text()
    cut = text.replace(ncu.METRIC["dram"], "dram__something_else")
    with pytest.raises(ncu.NcuOutputError, match="lacks 1 metrics"):
        ncu.parse_raw_csv(cut)


def test_program_output_around_the_page_is_skipped_and_names_are_printable():
    text = (DATA / "uncoalesced_reduce.csv").read_text()
    lines = text.splitlines()
    lines.insert(3, "fake output of the program: PASS 100%")
    first = next(k for k, line in enumerate(lines) if line.startswith('"1",'))   # reduceBlocksKernel's row
    lines[first] = lines[first].replace("reduceBlocksKernel", "reduce\x1b[2JBlocksKernel", 1)
    rows = ncu.parse_raw_csv("garbage\n" + "\n".join(lines) + "\n==PROF== Disconnected from process 77\n")
    assert len(rows) == 6
    assert "\x1b" not in rows[1].name and "[2JBlocksKernel" in rows[1].name


def test_the_command_profiles_each_binarys_cases_in_one_marked_batch(tmp_path):
    cases = [PerfCase("warp-scan", "add-i32", 1 << 26, 256), PerfCase("reduce", "add-i32", 1 << 26, 256),
             PerfCase("scan", "add-i32", 1 << 26, 512)]
    # Tasks 1 and 3 share a build (e.g. both identical to the reference's): one process for them.
    shared, own = Path("/b/ref/scanlab"), Path("/b/task2/scanlab")
    runs, order = ncu.case_files(tmp_path, [shared, own, shared], cases, 1 << 24)
    assert [(b, k) for b, _, k in runs] == [(shared, 2), (own, 1)] and order == [0, 2, 1]
    lines = runs[0][1].read_text().splitlines()
    assert [line.split()[:8] for line in lines] == [
        ["--task", "warp-scan", "--op", "add-i32", "--n", "16777216", "--block", "256"],
        ["--task", "scan", "--op", "add-i32", "--n", "16777216", "--block", "512"]]
    assert all(line.endswith("--no-check") for line in lines)
    # No --output: such a run draws its input on the host and launches the student's kernels
    # only (with --output it draws on the GPU, and ncu profiled the harness's generator).
    assert "--output" not in runs[0][1].read_text() + runs[1][1].read_text()
    argv = ncu.command("/cuda/bin/ncu", runs, len(cases), Path("/home/ncu.csv"), 8)
    assert argv[:6] == ["/cuda/bin/ncu", "--csv", "--page", "raw", "--print-units", "base"]
    assert argv[argv.index("--metrics") + 1].split(",") == list(ncu.METRICS)
    assert argv[argv.index("--launch-count") + 1] == "27"     # 8 launches and a marker a case
    assert argv[argv.index("--target-processes") + 1] == "all"
    # No rules, no section files (about 0.4 s a process): an empty folder beside the log.
    assert argv[argv.index("--apply-rules") + 1] == "no"
    assert argv[argv.index("--section-folder") + 1] == "/home/" + ncu.NO_SECTIONS
    script = argv[argv.index("-c") + 1]
    assert script.index(f"'{shared}' 'batch' '--cases' '{runs[0][1]}'") < script.index(f"'{own}' 'batch'")
    # Marked where a process runs several cases (the shared build's), not the lone one's.
    assert script.count("'--mark-cases' > ") == 1 and script.count(" 2>&1 &") == 2   # side by side
    assert script.endswith(" wait")
    assert argv[-2:] == [str(shared), str(own)]   # named, so the jail lets them be read
    # One binary (the integration build's): its process is ncu's own child, no shell.
    runs, order = ncu.case_files(tmp_path, [shared] * 3, cases, 1 << 24)
    argv = ncu.command("/cuda/bin/ncu", runs, len(cases), Path("/home/ncu.csv"), 8)
    assert order == [0, 1, 2] and "/bin/sh" not in argv and "--target-processes" not in argv
    assert argv[-7:] == [str(shared), "batch", "--cases", str(runs[0][1]), "--json",
                         f"{runs[0][1]}.json", "--mark-cases"]


def _one_marked_process(page: str) -> str:
    """A recorded page of one process per task rewritten as ncu shows one `batch
    --mark-cases` process: one process ID, a marker launch before each task's launches."""
    lines = page.splitlines()
    header = next(k for k, line in enumerate(lines) if line.startswith('"ID","Process ID"'))
    out, seen = lines[:header + 2], set()
    for line in lines[header + 2:]:
        cells = next(__import__("csv").reader([line]))
        if cells[1] not in seen:
            seen.add(cells[1])
            marker = list(cells)
            marker[4] = "scanlabCaseMarker(long)"
            out.append(",".join(f'"{c}"' for c in [marker[0], "7", *marker[2:]]))
        out.append(",".join(f'"{c}"' for c in [cells[0], "7", *cells[2:]]))
    return "\n".join(out) + "\n"


def test_one_process_is_cut_into_its_cases_at_the_markers():
    page = (DATA / "reference.csv").read_text()
    per_process = ncu.by_process(ncu.parse_raw_csv(page))
    marked = ncu.parse_raw_csv(_one_marked_process(page))
    assert len(ncu.by_process(marked)) == 1
    cases = ncu.cases_of(marked)
    assert [[r.name for r in c] for c in cases] == [[r.name for r in p] for p in per_process]
    assert not any(ncu.MARKER in r.name for c in cases for r in c)
    # A case whose kernels never launched is an empty case, not its neighbour's launches.
    rows = [r for r in marked if r.name != cases[1][0].name or ncu.MARKER in r.name]
    assert [len(c) for c in ncu.cases_of(rows)][1] == 0


def test_a_run_that_stops_early_is_quoted_process_by_process(tmp_path):
    # Each process's last line, in the order of the builds: the one that stopped after its
    # first line is told apart from the one that ran to its end.
    from grader.grading.sandbox import Result
    runs = []
    for k, said in enumerate(["scanlab run: task warp-scan (task 1) ...", "  check   skipped (--no-check)"]):
        case_file = tmp_path / f"ncu-cases-{k}.txt"
        Path(f"{case_file}.out").write_text(f"first line\n{said}\n")
        runs.append((Path(f"/b/{k}/scanlab"), case_file, 2 - k))
    r = Result(["ncu"], 0, "==PROF== Disconnected from process 28\n", "")
    assert ncu._last_words(r, runs) == ("process 1 of 2: scanlab run: task warp-scan (task 1) ...; "
                                        "process 2 of 2: check   skipped (--no-check)")
    assert ncu._last_words(r, runs[1:]) == "check   skipped (--no-check)"


def test_processes_that_ran_side_by_side_are_told_apart_by_their_builds():
    # Several builds' processes run at once under one ncu: their launches interleave in
    # any order, and ncu's "Connected to process" lines say which process ran which build.
    page = (DATA / "reference.csv").read_text()
    rows = ncu.parse_raw_csv(page)
    per_process = ncu.by_process(rows)
    pids = [g[0].process for g in per_process]
    builds = [Path(f"/b/task{k}/scanlab") for k in range(1, 5)]
    log = "".join(f"==PROF== Connected to process {pid} ({b})\n" for pid, b in reversed(list(zip(pids, builds))))
    log += "==PROF== Connected to process 9 (/usr/bin/dash)\n"
    assert ncu.process_order(log, builds) == pids
    shuffled = [r for g in reversed(per_process) for r in g]          # task 4's process first
    cases = ncu.cases_of(shuffled, ncu.process_order(log, builds))
    assert [[r.name for r in c] for c in cases] == [[r.name for r in g] for g in per_process]
    # A build with no process, or with two: not told apart.
    assert ncu.process_order(log, [*builds, Path("/b/task5/scanlab")]) is None
    assert ncu.process_order(log + f"==PROF== Connected to process 99 ({builds[0]})\n", builds) is None


def test_every_diagnosis_the_grader_says_is_in_the_data_file():
    table = diagnosis.default()
    source = (REPO / "grader" / "grading" / "diagnosis.py").read_text()
    for used in set(re.findall(r't\["([a-z-]+)"\]', source)) | {"uncoalesced-loads", "uncoalesced-stores"}:
        assert used in table.by_id, used
    for d in table.by_id.values():       # each text names exactly its figures
        assert sorted(re.findall(r"\{(\w+)", d.text)) == sorted(d.figures), d.id
    # make profile says the same words (handout/harness/generated/diagnoses.h, `make handout`).
    header = (REPO / "handout" / "harness" / "generated" / "diagnoses.h").read_text()
    assert "loads are not coalesced: %.1f sectors per request where %.1f is possible" in header


def _with_profile(profile: TaskProfile):
    from test_reports import sample
    result = sample(True)
    t3 = result.tasks[2]
    result.tasks[2] = dataclasses.replace(t3, profile=profile)
    return result


def test_every_report_shows_the_figures_and_the_diagnosis(reference, tmp_path):
    (student,) = figures_of("bank_conflict_scan.csv")
    said = diagnosis.diagnose(student, reference["scan"])
    result = _with_profile(TaskProfile("profiled", "", 1 << 24, student, reference["scan"], said, 2.1))
    text = terminal.render(result)
    assert "Nsight Compute, one run at n = 2^24 (never scored): yours | the reference's" in text
    assert "shared wavefronts a request (1: no bank conflicts)" in text
    assert f"diagnosis: {said[0]}" in text
    page = html.submission_page(result)
    assert "<svg" in page and "Why: Nsight Compute" in page and "shared-memory bank conflicts" in page
    doc = gradescope.document(result)
    perf = next(t for t in doc["tests"] if t["name"].startswith("Task 3") and "performance" in t["name"])
    assert said[0] in perf["output"]
    path = tmp_path / "results.json"
    jsonfile.write(result, path)
    data = json.loads(path.read_text())
    assert data["tasks"][2]["profile"]["diagnoses"] == said
    assert data["tasks"][2]["profile"]["student"]["shared_wavefronts_per_request"] == pytest.approx(
        student.shared_wavefronts_per_request)
    assert jsonfile.read(path) == result


def test_a_refusal_is_one_line_and_nothing_else_changes():
    result = _with_profile(TaskProfile("not_profiled", ncu.REFUSED_NOTE, 1 << 24))
    plain = _with_profile(None)  # type: ignore[arg-type]
    text = terminal.render(result)
    assert text.count("ERR_NVGPUCTRPERM") == 1
    assert text.replace(ncu.REFUSED_NOTE + "\n", "") == terminal.render(plain)
    assert gradescope.document(result)["output"].count("ERR_NVGPUCTRPERM") == 1
    assert html.submission_page(result).count("ERR_NVGPUCTRPERM") == 1
    assert [t["output"] for t in gradescope.document(result)["tests"]] == \
        [t["output"] for t in gradescope.document(plain)["tests"]]


def test_the_rubric_switch_is_a_documented_setting():
    from grader.config.rubric import ProfileRubric, rubric_settings
    keys = {(s.table, s.key) for s in rubric_settings() if s.owner is ProfileRubric}
    assert {("profile", "run"), ("profile", "n")} <= keys


# ---- ncu.profile with a stand-in for ncu (the real one needs a GPU: tools/gpu_ncu.sh) --------

FAKE_NCU = """#!/bin/bash
# Stands in for ncu: writes the page named by FAKE_NCU_PAGE into --log-file, then runs the
# command it was given (the grader's shell over the tasks' runs).
log=""
while [ $# -gt 0 ]; do
  case $1 in
    --log-file) log=$2; shift 2 ;;
    --page|--print-units|--target-processes|--launch-count|--metrics|--apply-rules) shift 2 ;;
    # ncu would load every section file there: the grader's must be an empty folder.
    --section-folder) [ -d "$2" ] && [ -z "$(ls -A "$2")" ] || { echo "section folder $2 is not empty" >&2; exit 3; }
                      shift 2 ;;
    --csv) shift ;;
    *) break ;;
  esac
done
cp "$FAKE_NCU_PAGE" "$log"
exec "$@"
"""


class _Resources:
    from contextlib import contextmanager

    @staticmethod
    @contextmanager
    def gpu_alone():
        yield 0


@dataclasses.dataclass
class _Setup:
    workdir: Path
    page: Path
    identity: object = dataclasses.field(default_factory=lambda: __import__(
        "grader.grading.sandbox", fromlist=["Identity"]).Identity())
    memory_mb: int | None = None
    resources: object = _Resources()
    kernels: str = ""      # the fake loader's counts (FAKE_LOADER)

    def env(self, home, seed, gpu):
        import os
        return {"PATH": os.environ["PATH"], "HOME": str(home), "FAKE_NCU_PAGE": str(self.page),
                "FAKE_KERNELS": self.kernels, "FAKE_LOADER_LOG": str(self.workdir / "loader.log")}


@pytest.mark.parametrize("page, cases, expect", [
    ("reference.csv", 4, "four tasks"),
    ("reference.csv", 3, "miscounted"),
    ("refused.log", 2, "refused"),
])
def test_one_ncu_process_over_the_tasks(tmp_path, page, cases, expect):
    from grader.config.rubric import ProfileRubric
    fake = tmp_path / "ncu"
    fake.write_text(FAKE_NCU)
    fake.chmod(0o755)
    perf = [PerfCase(t, "add-i32", 1 << 26, 256) for t in ("warp-scan", "reduce", "scan", "lookback-scan")][:cases]
    got = ncu.profile(_Setup(tmp_path, DATA / page), str(fake), [Path("/bin/true")] * cases, perf,
                      ProfileRubric(timeout_s=60), sandboxed=False)
    if expect == "four tasks":
        assert got.message == "" and not got.refused
        _, reduce, scan, _ = got.figures
        assert reduce is not None and reduce.main_kernel.startswith("void reduceBlocksKernel")
        assert scan is not None and len(scan.kernels) == 3
    elif expect == "miscounted":   # 4 cases for 3 tasks: none is attributed
        assert got.figures == [None] * 3 and "4 profiled cases for 3 tasks" in got.message
    else:
        assert got.refused and got.message == ncu.REFUSED_NOTE and got.figures == [None, None]
    assert got.seconds > 0


# ---- the unit loader: every build in one process, cut by the kernels each case launched ----------

FAKE_LOADER = """#!/bin/bash
# Stands in for the unit loader: every unit SCANLAB_UNITS names is a file of its working
# folder (the copies the jail lets it read: else exit 3), and each case's JSON line says
# the kernels FAKE_KERNELS gives it.
json=""
while [ $# -gt 0 ]; do case $1 in --json) json=$2; shift 2 ;; *) shift ;; esac; done
IFS=';' read -ra units <<< "$SCANLAB_UNITS"
for u in "${units[@]}"; do
  f=${u#*=}
  [ -f "$f" ] && [ "$(dirname "$f")" = "$PWD" ] || { echo "no unit $f"; exit 3; }
done
echo "$SCANLAB_UNITS" >> "$FAKE_LOADER_LOG"     # what it was asked to load (the test reads it)
k=0
for n in $FAKE_KERNELS; do echo "{\\"case\\": $k, \\"kernels\\": $n}" >> "$json"; k=$((k + 1)); done
"""


@pytest.mark.parametrize("kernels, expect", [
    ("1 3 2 2", "four tasks"),          # reference.csv: 8 launches, one process a task
    ("1 3 2", "stopped"),               # the last case said nothing: none is attributed
    ("1 3 2 3", "miscounted"),          # 9 launches said, 8 profiled
])
def test_the_loader_profiles_every_build_in_one_process(tmp_path, kernels, expect):
    from grader.config.rubric import ProfileRubric
    fake, loader = tmp_path / "ncu", tmp_path / "scanlab-units"
    fake.write_text(FAKE_NCU)
    loader.write_text(FAKE_LOADER)
    for f in (fake, loader):
        f.chmod(0o755)
    units = [tmp_path / f"task{k}" / "student_unit.so" for k in range(4)]
    for u in units:
        u.parent.mkdir()
        u.write_bytes(b"\x7fELF")
    perf = [PerfCase(t, "add-i32", 1 << 26, 256) for t in ("warp-scan", "reduce", "scan", "lookback-scan")]
    setup = _Setup(tmp_path, DATA / "reference.csv", kernels=kernels)
    got = ncu.profile(setup, str(fake), [Path("/bin/false")] * 4, perf, ProfileRubric(timeout_s=60),
                      sandboxed=False, loader=loader, units=list(units))
    # The loader ran, once, with a unit for every case (its copy in the jail's home).
    asked = (tmp_path / "loader.log").read_text().splitlines()
    assert len(asked) == 1 and [u.split("=")[0] for u in asked[0].split(";")] == [c.task for c in perf]
    if expect == "four tasks":
        assert got.message == "", got.message
        warp, reduce, scan, lookback = got.figures
        assert [len(f.kernels) for f in got.figures if f is not None] == [1, 3, 2, 2]
        assert reduce is not None and reduce.main_kernel.startswith("void reduceBlocksKernel")
        assert lookback is not None and lookback.main_kernel.startswith("void lookbackScanKernel")
    elif expect == "stopped":
        assert got.figures == [None] * 4 and "stopped before every case said how many kernels" in got.message
    else:
        assert got.figures == [None] * 4 and "ncu profiled 8 launches where the cases launched 9" in got.message


def test_without_every_unit_library_each_build_runs_its_own_driver(tmp_path):
    # A build whose unit library did not link: the processes of the builds, side by side.
    home = tmp_path / "home"
    home.mkdir()
    perf = [PerfCase(t, "add-i32", 1 << 26, 256) for t in ("reduce", "scan")]
    unit = tmp_path / "student_unit.so"
    unit.write_bytes(b"")
    loader = tmp_path / "kit" / "scanlab-units"
    loader.parent.mkdir()
    loader.write_bytes(b"")
    assert ncu.one_process(loader, [unit, unit], perf)
    assert not ncu.one_process(loader, [unit, None], perf) and not ncu.one_process(None, [unit, unit], perf)
    one = ncu.loader_run(home, loader, [unit, unit], perf, 1 << 23)
    assert one.units == f"reduce={home / 'unit-0.so'};scan={home / 'unit-0.so'}"
    assert (home / "unit-0.so").is_file() and one.case_file.read_text().count("--no-check") == 2
    # The loader too, where the sandbox user may run it.
    assert one.loader == home / "scanlab-units" and one.loader.stat().st_mode & 0o005 == 0o005
    # Two cases of one driver task cannot both be named in SCANLAB_UNITS.
    assert not ncu.one_process(loader, [unit, unit], [perf[0], perf[0]])


def test_the_kernel_counts_are_read_from_what_the_process_wrote():
    lines = '\n'.join(['{"case": 1, "kernels": 3}', "garbage", '{"case": 0, "kernels": 1}',
                        '{"case": 0, "kernels": 7}', '{"case": 2, "kernels": -1}', '[1, 2]',
                        '{"case": 9, "kernels": 1}', '{"case": 2, "kernels": 2}'])
    assert ncu.kernels_per_case(lines, 3) == [1, 3, 2]      # the first line of a case counts
    assert ncu.kernels_per_case(lines, 4) is None            # case 3 said nothing
    rows = ncu.parse_raw_csv((DATA / "reference.csv").read_text())
    assert [len(c) for c in ncu.split_by_counts(rows, [1, 3, 2, 2])] == [1, 3, 2, 2]
    with pytest.raises(ncu.NcuOutputError, match="8 launches where the cases launched 7"):
        ncu.split_by_counts(rows, [1, 3, 2, 1])


# ---- the pipeline's stage (pipeline.profile_tasks) with ncu.profile stood in for -----------------

def test_the_stage_profiles_the_reference_once_per_gpu_and_diagnoses(tmp_path, monkeypatch, reference):
    from types import SimpleNamespace
    from grader.config.rubric import ProfileRubric, TaskRubric
    from grader.grading import pipeline
    slow = figures_of("uncoalesced_reduce.csv")[1]
    calls: list[list[Path]] = []

    def fake_profile(setup, tool, binaries, cases, rubric, sandboxed=True, **one_process):
        calls.append(list(binaries))
        if binaries[0] == Path("/ref/scanlab"):
            return ncu.Profiled([reference[c.task] for c in cases], seconds=1.0)
        return ncu.Profiled([slow for _ in cases], seconds=2.5)

    monkeypatch.setattr(ncu, "profile", fake_profile)
    session = SimpleNamespace(
        rubric=SimpleNamespace(profile=ProfileRubric()), backend=SimpleNamespace(times=True),
        ncu="/cuda/bin/ncu", profiles=ncu.ProfileStore(tmp_path / "ncu.json"),
        run_reference=Path("/ref/scanlab"), gpus=[SimpleNamespace(name="NVIDIA H100")], profile_note="",
        builder=SimpleNamespace(unit_loader=lambda: None))
    task = TaskRubric(2, "reduce", "reduce", "reduce.cuh", ("reduce",), 20, 15,
                      (PerfCase("reduce", "add-i32", 1 << 26, 256),))
    build = SimpleNamespace(binary=Path("/sub/task2/scanlab"), unit_library=None, is_reference=False)
    first = pipeline.profile_tasks(session, None, [(task, build)], lambda line: None)  # type: ignore[arg-type]
    assert calls == [[Path("/ref/scanlab")], [Path("/sub/task2/scanlab")]]
    got = first[2]
    assert got.status == "profiled" and got.n == 1 << 23 and got.seconds == 2.5
    assert got.reference == reference["reduce"] and got.student == slow
    assert got.diagnoses[0].startswith("loads are not coalesced: 32.0 sectors per request")
    calls.clear()
    again = pipeline.profile_tasks(session, None, [(task, build)], lambda line: None)  # type: ignore[arg-type]
    assert calls == [[Path("/sub/task2/scanlab")]]          # the reference's figures: from the cache
    assert again[2].reference == reference["reduce"]
    monkeypatch.setattr(ncu, "profile", lambda *a, **k: ncu.Profiled([None], ncu.REFUSED_NOTE, True))
    refused = pipeline.profile_tasks(session, None, [(task, build)], lambda line: None)  # type: ignore[arg-type]
    assert refused[2].status == "not_profiled" and refused[2].message == ncu.REFUSED_NOTE
    # A task whose file is the reference's runs the reference's build: its figures are the
    # reference's (cached), and only the other build is profiled.
    monkeypatch.setattr(ncu, "profile", fake_profile)
    scan = TaskRubric(3, "scan", "scan", "scan.cuh", ("scan",), 30, 15, (PerfCase("scan", "add-i32", 1 << 26, 256),))
    reference_build = SimpleNamespace(binary=Path("/tmp/ref-1/scanlab"), unit_library=None, is_reference=True)
    calls.clear()
    both = pipeline.profile_tasks(session, None, [(task, build), (scan, reference_build)],  # type: ignore[arg-type]
                                  lambda line: None)
    assert calls == [[Path("/ref/scanlab")], [Path("/sub/task2/scanlab")]]   # scan's reference figures, once
    assert both[3].status == "profiled" and both[3].student == both[3].reference == reference["scan"]
    assert both[2].student == slow
    calls.clear()
    alone = pipeline.profile_tasks(session, None, [(scan, reference_build)], lambda line: None)  # type: ignore[arg-type]
    assert calls == [] and alone[3].student == reference["scan"]      # no ncu process at all
    session.rubric = SimpleNamespace(profile=ProfileRubric(run=False))
    assert pipeline.profile_tasks(session, None, [(task, build)], lambda line: None) == {}  # type: ignore[arg-type]


def test_prepare_profiles_the_reference_so_that_no_grade_does(tmp_path, monkeypatch, reference):
    # ncu.profile_reference: what `prepare` (Session.prepare_machine) and, where the cache
    # lacks them, a grade call. One ncu process over the cases not cached yet, then none.
    from grader.config.rubric import ProfileRubric
    calls: list[list[str]] = []

    def fake_profile(setup, tool, binaries, cases, rubric, sandboxed=True, **one_process):
        calls.append([c.task for c in cases])
        return ncu.Profiled([reference[c.task] for c in cases], seconds=1.0)

    monkeypatch.setattr(ncu, "profile", fake_profile)
    store = ncu.ProfileStore(tmp_path / "ncu.json")
    cases = [PerfCase(t, "add-i32", 1 << 26, 256) for t in ("warp-scan", "reduce", "scan", "lookback-scan")]
    said: list[str] = []
    store.put("H100", cases[1], 0, reference["reduce"])            # cached before
    assert ncu.profile_reference(store, None, "ncu", Path("/ref/scanlab"), "H100", cases, ProfileRubric(n=0),
                                 said.append)
    assert calls == [["warp-scan", "scan", "lookback-scan"]]
    assert said[0] == "profiling the reference under Nsight Compute: warp-scan, scan, lookback-scan"
    assert all(store.known("H100", c, 0) == reference[c.task] for c in cases)
    assert ncu.profile_reference(store, None, "ncu", Path("/ref/scanlab"), "H100", cases, ProfileRubric(n=0),
                                 said.append)
    assert len(calls) == 1                                          # the grade: nothing to profile
    monkeypatch.setattr(ncu, "profile", lambda *a, **k: ncu.Profiled([None], ncu.REFUSED_NOTE, True))
    assert not ncu.profile_reference(store, None, "ncu", Path("/ref/scanlab"), "A100", cases[:1],
                                     ProfileRubric(n=0), said.append)



def test_the_profile_runs_beside_the_last_check_and_keeps_only_measured_tasks(monkeypatch):
    # The timing hands the profile every task it times once the GPU's rounds are over
    # (timing.measure_all's after_rounds); a task whose timing then fails keeps no
    # figures. Where nothing is timed now, the profile runs after, on the measured tasks.
    from types import SimpleNamespace
    from grader.grading import pipeline
    from grader.grading.budget import NO_BUDGET
    from grader.grading.timing import TaskTiming
    from grader.results import TaskProfile
    one, two = SimpleNamespace(number=1), SimpleNamespace(number=2)
    build = SimpleNamespace()
    profiled: list[list[int]] = []
    outcome = {1: TaskTiming("measured", ""), 2: TaskTiming("failed", "0: the timed output is wrong")}

    def fake_profile(session, setup, chosen, say, budget):
        profiled.append([t.number for t, _ in chosen])
        return {t.number: TaskProfile("profiled", "", 1 << 23) for t, _ in chosen}

    def timing_now(session, setup, tasks, say, seed, budget, after_rounds):
        assert not profiled                       # not before the rounds
        after_rounds([(one, build), (two, build)])
        return outcome

    def timing_known(session, setup, tasks, say, seed, budget, after_rounds):
        return outcome                            # all from this session's memo: no rounds

    monkeypatch.setattr(pipeline, "profile_tasks", fake_profile)
    tasks = [(one, None, build), (two, None, build)]
    for timing, expect in ((timing_now, [[1, 2]]), (timing_known, [[1]])):
        profiled.clear()
        monkeypatch.setattr(pipeline, "time_tasks", timing)
        phases: dict[str, float] = {}
        timed, profiles = pipeline.time_and_profile(None, None, tasks, lambda line: None, 7, NO_BUDGET, phases)
        assert timed is outcome and profiled == expect, timing.__name__
        assert list(profiles) == [1] and "profile" in phases, timing.__name__
