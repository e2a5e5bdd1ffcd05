"""compute-sanitizer on a submission's own GPU build: races and memory errors the GPU forgives.

A GPU often runs a warp's 32 lanes in lockstep and forgives a missing __syncwarp(); a
write a few KiB before or past a buffer lands in memory nothing checks. So a GPU grade
also runs each task's GPU build under NVIDIA's compute-sanitizer (racecheck, synccheck,
memcheck) on the `[[sanitize.case]]` cases of data/cases.toml: one `batch` process (one
CUDA context) per build and tool, in the sandbox, on a GPU slot like any correctness run.
A finding of the tool (its log, and its error exit status) makes that run a failed case
of the task, with the tool's message: the kernel, the file and line where the tool gives
them (only the submission's own files are quoted; a harness file by its handout path,
anything else not at all), the thread and block, the hazard or the address.

parse() reads the tool's log (tests/grader/data/sanitizer/ holds logs recorded on an
H100); run() runs it.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path

from .. import sandbox
from ...config.cases import Case
from ..correctness.check import RunSetup, mismatch_text, verify
from ...results import CaseResult

PREFIX = "========="
ERROR_EXIT = 86                  # the tool's exit status when it found an error
PRINT_LIMIT = 20                 # records the tool prints per run
SHOWN_FINDINGS = 3               # records quoted in a report
LOG_LIMIT = 512 * 1024
# Memcheck only: padding after every allocation, so a write far past one buffer lands in
# the padding (reported) rather than in the next buffer (unseen).
PADDING_BYTES = 1 << 20

# Lines of the tool that are not findings.
_NOT_FINDINGS = re.compile(r"^(COMPUTE-SANITIZER|(ERROR|RACECHECK|LEAK) SUMMARY|Target application "
                           r"returned|This tool|Note:|Warning: (Device|Unable)|Internal|Detected "
                           r"\d+ (process|proc))", re.I)
_SOURCE = r"[\w.+/-]+\.(?:cuh|cu|h|hpp|hh|cpp|cc|cxx|inl|c)"
_LOCATION = re.compile(rf"\bin ({_SOURCE}):(\d+)")
_ERRORS = re.compile(r"ERROR SUMMARY: (\d+) error")
_HAZARDS = re.compile(r"RACECHECK SUMMARY: \d+ hazards? displayed \((\d+) errors?, (\d+) warnings?\)")


@dataclass
class Finding:
    tool: str
    headline: str                 # "Invalid __global__ write of size 4 bytes", "Race reported ..."
    where: str                    # "student/reduce.cuh:57 in reduceBlocksKernel", "" when unknown
    lines: list[str] = field(default_factory=list)   # the record, paths rewritten, host frames out
    warning: bool = False         # racecheck's "Warning: Race reported" (intra-warp hazards):
                                  # the tool's error status counts them, and so do we

    def __str__(self) -> str:
        return self.headline + (f" ({self.where})" if self.where else "")


@dataclass
class Report:
    """What a log says: its findings and the tool's own count of errors (None: no summary)."""

    findings: list[Finding]
    errors: int | None
    first_line: str = ""          # the first line that speaks of an error, where no record parsed

    @property
    def failing(self) -> list[Finding]:
        """What fails the run: every record, the kernels' own first (an API call failing
        after a kernel's fault comes after it)."""
        return sorted(self.findings, key=lambda f: f.headline.startswith("Program hit"))


def _function(text: str) -> str:
    """The kernel's or function's bare name from the tool's `void ns::f<...>(...)+0x70`."""
    text = re.sub(r"\+0x[0-9a-f]+$", "", text.strip())
    depth, cut = 0, len(text)
    for i, ch in enumerate(text):        # cut at the first '<' or '(' outside brackets
        if ch in "<(" and depth == 0:
            cut = i
            break
    name = text[:cut].split()[-1] if text[:cut].split() else text[:cut]
    return name.split("::")[-1][:80]


class Paths:
    """How a source path the tool prints is shown: a submission file as the student knows
    it, a harness file by its handout path, anything else not at all. The tool prints
    absolute paths or bare file names, depending on how the unit was compiled."""

    def __init__(self, student: dict[str, str], handout_root: str = "",
                 harness: dict[str, str] | None = None):
        self.student = student             # absolute path in the build -> shown path
        self.handout_root = handout_root.rstrip("/") + "/" if handout_root else ""
        # The handout's harness files: bare name -> path in the handout (harness/tasks/...).
        self.harness = harness or {}
        self._by_name = {Path(p).name: shown for p, shown in student.items()}

    def show(self, path: str) -> str | None:
        if path in self.student:
            return self.student[path]
        if not path.startswith("/"):
            if path in self._by_name:
                return self._by_name[path]
            if path.startswith("student/") and Path(path).name in self._by_name:
                return self._by_name[Path(path).name]
            if path.startswith("harness/") or path in self.harness:
                return path if path.startswith("harness/") else self.harness[path]
            return None
        if self.handout_root and path.startswith(self.handout_root):
            rel = path[len(self.handout_root):]
            if rel.startswith("harness/"):
                return rel
        return None

    def scrub(self, line: str) -> str:
        """A line with every source path (absolute, or a file name) replaced by how it
        is shown."""
        def one(m: re.Match[str]) -> str:
            shown = self.show(m.group(0))
            return shown if shown is not None else "(a file of the grader)"
        return re.sub(rf"/[^\s:()\[\]]+|(?<![\w/]){_SOURCE}\b", one, line)


def harness_files(src: Path) -> dict[str, str]:
    """The handout's harness files in a build's source folder, by bare name: the path the
    tool's report shows for each (harness/tasks/reduce_task.cuh). The harness's own
    stand-ins for student files (harness/isolation/<F>/student/) are left out: their
    bare names are student files' names."""
    root = src / "harness"
    if not root.is_dir():
        return {}
    return {p.name: p.relative_to(src).as_posix() for p in sorted(root.rglob("*"))
            if p.is_file() and p.parent.name != "student"}


def _location(lines: list[str], paths: Paths) -> str:
    """"student/scan.cuh:57 in scanBlocksKernel" from the record's first `at` line with a
    source location (else the first `at` line's function)."""
    fallback = ""
    for line in lines:
        s = line.strip()
        at_index = 3 if s.startswith("at ") else s.find(" at ") + 4 if " at " in s else -1
        if at_index < 0:
            continue
        at = s[at_index:]
        old = re.match(rf"0x[0-9a-f]+ in ({_SOURCE}):(\d+):(.*)", at)
        if old:   # older tools: `at 0x70 in /path/file.cuh:57:void f(...)`
            file, number, function = old.group(1), old.group(2), old.group(3)
        else:
            function, _, where = at.rpartition(" in ") if " in " in at else (at, "", "")
            loc = _LOCATION.search(" in " + where) if where else None
            file, number = (loc.group(1), loc.group(2)) if loc else ("", "")
        name = _function(function)
        if file:
            shown = paths.show(file)
            if shown is not None:
                return f"{shown}:{number} in {name}" if name else f"{shown}:{number}"
        if not fallback and name and not name.startswith("0x"):
            fallback = f"in {name}"
    return fallback


def parse(log: str, tool: str, paths: Paths) -> Report:
    """The findings of one compute-sanitizer log (`=========`-prefixed records)."""
    records: list[list[str]] = []
    errors: int | None = None
    for raw in log.splitlines():
        if not raw.startswith(PREFIX):
            continue
        body = raw[len(PREFIX):]
        if body.startswith(" "):
            body = body[1:]
        if not body.strip():
            records.append([])             # a blank line ends a record
            continue
        m = _ERRORS.search(body)
        if m:
            errors = int(m.group(1))
        m = _HAZARDS.search(body)
        if m:
            errors = int(m.group(1)) + int(m.group(2))
        if body[0].isspace():
            if records and records[-1]:
                records[-1].append(body)
            continue
        records.append([body])
    findings = []
    for record in records:
        if not record or _NOT_FINDINGS.match(record[0]):
            continue
        head = record[0].strip()
        kept = [paths.scrub(line.rstrip()) for line in record
                if "Host Frame" not in line and "host backtrace" not in line.lower()]
        warning = head.lower().startswith("warning")
        headline = re.sub(r"^(Error|Warning): ", "", head)
        # The race's two accesses: "Race reported between Write access at f+0x1 in
        # /path:35" and "and Read access at ... [n hazards]": keep the kinds, not the paths.
        headline = paths.scrub(headline)
        headline = re.sub(r" at .*", "", headline) if headline.startswith("Race reported") else headline
        if headline.startswith("Race reported"):
            second = next((l.strip() for l in record[1:] if l.strip().startswith("and ")), "")
            kind = re.match(r"and (\w+) access", second)
            count = re.search(r"\[(\d+) hazards?\]", second)
            headline += (f" and {kind.group(1)} access" if kind else "") + \
                (f" ({count.group(1)} hazards)" if count else "")
        findings.append(Finding(tool, headline[:300], _location(record, paths),
                                kept[:12], warning))
    first = ""
    if not findings:
        first = next((paths.scrub(line.strip("= ").strip()) for line in log.splitlines()
                      if re.search(r"error|hazard|race|invalid", line, re.I)
                      and not _NOT_FINDINGS.match(line.strip("= ").strip())), "")[:300]
    return Report(findings, errors, first)


def command(sanitizer: str, tool: str, binary: Path, cases_file: Path, json_file: Path,
            log_file: Path) -> list[str]:
    """The compute-sanitizer command line of one tool over a batch of cases."""
    # The program's own exit status is the correctness runs' business, not a finding.
    argv = [sanitizer, "--tool", tool, "--error-exitcode", str(ERROR_EXIT), "--check-exit-code",
            "no", "--print-limit", str(PRINT_LIMIT), "--demangle", "simple", "--log-file",
            str(log_file)]
    if tool == "memcheck":
        argv += ["--padding", str(PADDING_BYTES)]
    return argv + [str(binary), "batch", "--cases", str(cases_file), "--json", str(json_file)]


def verdict(tool: str, cases: list[Case], seeds: list[int], report: Report, r: sandbox.Result,
            reproduce: str, timeout_s: float) -> CaseResult:
    """The failed or passed case one tool's run over `cases` stands for."""
    # A run of visible cases is reported in full; one of drawn (hidden) cases stays hidden.
    first = replace(cases[0], backend=f"compute-sanitizer {tool}", hidden=all(c.hidden for c in cases))
    result = CaseResult(first, seeds[0], "pass", "pass", reproduce=reproduce, seconds=r.seconds)
    ran = "cases run: " + "; ".join(f"{c.task} {c.op} n={c.n} block={c.block}" for c in cases)
    failing = report.failing
    if failing or r.returncode == ERROR_EXIT or (report.errors or 0) > 0:
        shown = failing[:SHOWN_FINDINGS]
        result.status = "fail"
        count = report.errors or len(failing)
        what = "hazard" if tool == "racecheck" else "error"
        result.summary = (f"compute-sanitizer {tool} found {count or 'an'} {what}{'s' if count != 1 else ''}: "
                          + (str(shown[0]) if shown else report.first_line or
                             f"it ended with its error status {ERROR_EXIT}"))
        result.details = "\n".join(["\n".join(f.lines) for f in shown] + [ran])
        return result
    if r.timed_out:
        # Not a finding: a slow but correct kernel is slower still under the tool.
        result.summary = f"not finished within {timeout_s:.0f} s under compute-sanitizer {tool}: no finding"
        result.details = ran
    elif r.signal is not None:
        result.summary = f"under compute-sanitizer {tool} the program {r.describe_end()}: no finding"
        result.details = ran
    return result


def checked_outputs(setup: RunSetup, tool: str, cases: list[Case], seeds: list[int], home: Path,
                    where: Path, result: CaseResult) -> None:
    """Every output the run under the tool wrote, checked by the trusted verify like a
    correctness case's (a race the tool misses can still leave a wrong output, at any
    size): the first wrong one fails `result`."""
    for k, (case, seed) in enumerate(zip(cases, seeds)):
        output = home / f"out.{k}.bin"
        if not output.is_file() or output.is_symlink():
            continue     # the batch ended before it: the correctness runs judge that case
        vdir = where / f"verify-{k}"
        vdir.mkdir()
        v = verify(setup, case, seed, output, vdir)
        if v["status"] != "pass":
            result.status = "fail"
            result.summary = (f"under compute-sanitizer {tool} an output is wrong "
                              f"({case.task} {case.op} n={case.n} block={case.block}): "
                              + (mismatch_text(v, case) if v["status"] == "fail"
                                 else str(v.get("message", "unusable"))))
            return


@dataclass(frozen=True)
class Sanitizer:
    """How this session runs the tool."""

    path: str                     # compute-sanitizer
    timeout_s: float              # one tool's run over its cases


def find(nvcc: str | None) -> str | None:
    """compute-sanitizer: beside nvcc, else on PATH."""
    if nvcc:
        beside = Path(nvcc).parent / "compute-sanitizer"
        if beside.is_file():
            return str(beside)
    return shutil.which("compute-sanitizer")


def _keep_log(text: str, tool: str, src: Path, shown: dict[str, str], lines: list[str],
              r: sandbox.Result) -> None:
    """With SCANLAB_KEEP_SANITIZER_LOGS=DIR (maintainers: recording the tool's real output
    for tests/grader/data/sanitizer), the raw log and what it was run on go there."""
    keep = os.environ.get("SCANLAB_KEEP_SANITIZER_LOGS")
    if not keep:
        return
    stem = f"{tool}-{hashlib.sha256(f'{src}{lines}'.encode()).hexdigest()[:10]}"
    Path(keep).mkdir(parents=True, exist_ok=True)
    (Path(keep) / f"{stem}.log").write_text(text)
    (Path(keep) / f"{stem}.json").write_text(json.dumps(
        {"tool": tool, "src": str(src), "shown": shown, "cases": lines, "returncode": r.returncode,
         "end": r.describe_end(), "seconds": round(r.seconds, 2), "stdout": r.stdout[-3000:],
         "stderr": r.stderr[-3000:]}, indent=1))


def run(setup: RunSetup, sanitizer: Sanitizer, tool: str, binary: Path, cases: list[Case],
        run_seed: int, shown: dict[str, str]) -> CaseResult:
    """One tool over `cases` on `binary` (a submission's GPU build) in the sandbox.
    `shown`: a submission file's name in student/ -> its path as the student knows it."""
    seeds = [c.seed(run_seed) for c in cases]
    where = Path(tempfile.mkdtemp(prefix="sanitize-", dir=setup.workdir))
    try:
        where.chmod(0o711)
        home = sandbox.make_private_dir(where / "sandbox", setup.identity)
        lines = [" ".join([*c.driver_args(s), "--output", str(home / f"out.{k}.bin"), "--no-check"])
                 for k, (c, s) in enumerate(zip(cases, seeds))]
        case_file = where / "cases.txt"
        case_file.write_text("\n".join(lines) + "\n")
        case_file.chmod(0o644)
        log = home / "sanitizer.log"
        argv = command(sanitizer.path, tool, binary, case_file, home / "batch.jsonl", log)
        limits = sandbox.Limits(wall_s=sanitizer.timeout_s, cpu_s=sanitizer.timeout_s * 4 + 5,
                                memory_mb=setup.memory_mb, memory_kind="data",
                                file_mb=sum(max(64, c.output_bytes() // (1 << 20) + 16) for c in cases),
                                open_files=1024)
        with setup.resources.gpu() as gpu:
            r = sandbox.run(argv, home, limits, setup.env(home, seeds[0], gpu), setup.identity)
        text = ""
        if log.is_file() and not log.is_symlink():
            with open(log, "rb") as f:
                text = f.read(LOG_LIMIT).decode("utf-8", errors="replace")
        src = binary.parent.parent
        _keep_log(text, tool, src, shown, lines, r)
        paths = Paths({f"{src}/student/{name}": path for name, path in shown.items()}, str(src),
                      harness_files(src))
        reproduce = " && ".join(
            f"compute-sanitizer --tool {tool} build/scanlab run {' '.join(c.driver_args(s))}"
            for c, s in list(zip(cases, seeds))[:2])
        result = verdict(tool, cases, seeds, parse(text, tool, paths), r, reproduce,
                         sanitizer.timeout_s)
        if result.status == "pass" and not r.timed_out and r.signal is None:
            checked_outputs(setup, tool, cases, seeds, home, where, result)
        return result
    finally:
        shutil.rmtree(where, ignore_errors=True)
