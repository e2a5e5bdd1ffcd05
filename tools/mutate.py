#!/usr/bin/env python3
"""Mutation testing of the grading cases: how many small bugs in the reference do the
cases catch?

Each mutant is the reference's student files with one small change in one solution
region (//@@ solution ... //@@ placeholder of solution/student/*.cuh): operands of
Op::apply swapped, Op::identity() replaced by a value-initialized element, a bound
shifted by one, a comparison loosened, a barrier removed, a shuffle offset changed, a
carry taken from the wrong block, and so on. Each is built as the CPU emulator driver
(in a copy of the handout) and run on the grader's visible cases (`scanlab-emu grade`,
the fast path: one process, the same cases and seeds as the grader's emulator grade).
A mutant is killed when a case fails, survives when every case passes, and is left out
when it does not compile (stillborn). Mutants that no case can kill are listed, each with
why, in data/mutants.toml; the score is killed / (compiled - equivalent).

  python3 tools/mutate.py                 every mutant; report on stdout
  python3 tools/mutate.py --sample 8      a deterministic sample of 8 (CI)
  python3 tools/mutate.py --json FILE     the results, one object per mutant
  python3 tools/mutate.py --min-score S   exit 1 when the score (killed / compiled) is below S
  python3 tools/mutate.py --only FILE     only the mutants that survived in FILE (a --json
                                          of an earlier run): after adding cases, since a case
                                          added can only kill more
"""
from __future__ import annotations

import argparse
import json
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from dataclasses import asdict, dataclass
from pathlib import Path

from student_file import MARK_PLACEHOLDER, MARK_SOLUTION  # the solution regions' one grammar

ROOT = Path(__file__).resolve().parent.parent
SOLUTION = ROOT / "solution" / "student"
EQUIVALENT = ROOT / "data" / "mutants.toml"
ASSIGNMENT = ROOT / "data" / "assignment.toml"


@dataclass(frozen=True)
class Mutant:
    file: str       # student file name
    line: int       # 1-based
    operator: str   # what kind of change
    before: str     # the line as it was (stripped)
    after: str      # the line as mutated (stripped)

    @property
    def id(self) -> str:
        return f"{self.file}:{self.line}:{self.operator}"


@dataclass
class Outcome:
    mutant: Mutant
    status: str     # killed | survived | stillborn | timeout
    detail: str = ""
    seconds: float = 0.0


def split_args(text: str, start: int) -> tuple[list[tuple[int, int]], int] | None:
    """The top-level arguments of the call whose '(' is at `start`: their spans, and
    the index of the closing ')'."""
    depth, spans, begin = 0, [], start + 1
    for i in range(start, len(text)):
        c = text[i]
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth == 0:
                spans.append((begin, i))
                return spans, i
        elif c == "," and depth == 1:
            spans.append((begin, i))
            begin = i + 1
    return None


def swap_apply(line: str) -> list[str]:
    out = []
    for m in re.finditer(r"Op::apply\(", line):
        parsed = split_args(line, m.end() - 1)
        if not parsed or len(parsed[0]) != 2:
            continue
        (a0, a1), (b0, b1) = parsed[0]
        a, b = line[a0:a1].strip(), line[b0:b1].strip()
        if a != b:
            out.append(line[:a0] + b + ", " + a + line[b1:])
    return out


def substitutions(line: str, pattern: str, replacement: str) -> list[str]:
    """One mutant per match of `pattern` in `line`."""
    return [line[:m.start()] + m.expand(replacement) + line[m.end():] for m in re.finditer(pattern, line)]


# (operator name, function from a code line to its mutated versions)
OPERATORS: list[tuple[str, object]] = [
    ("apply-swap", swap_apply),
    ("identity-zero", lambda l: substitutions(l, r"Op::identity\(\)", "typename Op::Element{}")),
    ("lt-to-le", lambda l: substitutions(l, r" < (?!<)", " <= ")),
    ("le-to-lt", lambda l: substitutions(l, r" <= ", " < ")),
    ("ge-to-gt", lambda l: substitutions(l, r" >= ", " > ")),
    ("gt-to-ge", lambda l: substitutions(l, r" > (?!>)", " >= ")),
    ("minus-one-to-plus-one", lambda l: substitutions(l, r" - 1\b", " + 1")),
    ("plus-one-to-minus-one", lambda l: substitutions(l, r" \+ 1\b", " - 1")),
    ("drop-syncthreads", lambda l: substitutions(l, r"__syncthreads\(\);", ";")),
    ("drop-syncwarp", lambda l: substitutions(l, r"__syncwarp\(\);", ";")),
    ("shuffle-offset", lambda l: substitutions(l, r"(shuffle(?:Up|Down))\(([^,()]+), ([^()]+)\)", r"\1(\2, (\3) * 2)")),
    ("wrong-block-carry", lambda l: substitutions(l, r"blockIdx\.x - 1\]", "blockIdx.x]")),
    ("one-block", lambda l: substitutions(l, r"gridDim\.x\b", "1u")),
    ("lane-zero-to-one", lambda l: substitutions(l, r"lane == 0\b", "lane == 1")),
    ("last-lane", lambda l: substitutions(l, r"kWarpSize - 1\b", "kWarpSize - 2")),
    ("drop-tail-chunk", lambda l: substitutions(l, r"k < CHUNK\b", "k < CHUNK - 1")),
]


def solution_lines(text: str) -> list[int]:
    """0-based indices of the lines inside solution regions, comments left out."""
    inside, out = False, []
    for i, line in enumerate(text.splitlines()):
        if MARK_SOLUTION.match(line):
            inside = True
        elif MARK_PLACEHOLDER.match(line):
            inside = False
        elif inside and not line.strip().startswith("//"):
            out.append(i)
    return out


def graded_files() -> list[Path]:
    """The tasks' files: the grading cases judge these (an exercise's file, which earns
    no points and is checked by its application, is not mutated)."""
    tasks = tomllib.loads(ASSIGNMENT.read_text(encoding="utf-8"))["task"]
    return sorted(SOLUTION / t["file"] for t in tasks)


def make_mutants() -> list[tuple[Mutant, str]]:
    """Every mutant, with its whole mutated file."""
    mutants = []
    for path in graded_files():
        text = path.read_text()
        lines = text.splitlines(keepends=True)
        for i in solution_lines(text):
            code = lines[i].rstrip("\n")
            for name, fn in OPERATORS:
                for changed in fn(code):  # type: ignore[operator]
                    if changed == code:
                        continue
                    new = lines[:i] + [changed + "\n"] + lines[i + 1:]
                    mutants.append((Mutant(path.name, i + 1, name, code.strip(), changed.strip()), "".join(new)))
    return mutants


class Workspace:
    """A copy of the handout with the solution's files, configured for the emulator only
    and one of its drivers (`target`) built, as a student builds it: use() swaps student
    files in, and only the student unit is rebuilt. (tests/grader/test_profile.py uses it
    for the profile driver.)"""

    def __init__(self, folder: Path, build_type: str, target: str = "scanlab-emu"):
        self.root = folder / "handout"
        self.target = target
        shutil.copytree(ROOT / "handout", self.root, ignore=shutil.ignore_patterns("build*"))
        subprocess.run(["cmake", "-S", ".", "-B", "build", "-DSCANLAB_CUDA=OFF",
                        f"-DCMAKE_BUILD_TYPE={build_type}"], cwd=self.root, check=True,
                       capture_output=True)
        self.use({})

    @property
    def driver(self) -> Path:
        return self.root / "build" / self.target

    def use(self, files: dict[str, bytes]) -> subprocess.CompletedProcess:
        """The solution's student files with `files` (name -> content) on top, built."""
        for f in SOLUTION.glob("*.cuh"):
            shutil.copy(f, self.root / "student" / f.name)
        for name, data in files.items():
            (self.root / "student" / name).write_bytes(data)
        return subprocess.run(["cmake", "--build", "build", "--target", self.target],
                              cwd=self.root, capture_output=True, text=True)

    def run(self, mutant: Mutant, text: str, timeout: float) -> Outcome:
        start = time.monotonic()
        if self.use({mutant.file: text.encode()}).returncode != 0:
            return Outcome(mutant, "stillborn", "does not compile", time.monotonic() - start)
        try:
            p = subprocess.run([str(self.driver), "grade"], capture_output=True,
                               text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return Outcome(mutant, "killed", "timed out (a hang counts as caught)", time.monotonic() - start)
        seconds = time.monotonic() - start
        if p.returncode == 0:
            return Outcome(mutant, "survived", "", seconds)
        failed = [l for l in p.stdout.splitlines() if l.startswith("FAIL ") or "not implemented" in l]
        return Outcome(mutant, "killed", failed[0] if failed else f"exit {p.returncode}", seconds)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sample", type=int, default=0, help="a deterministic sample of this many mutants")
    parser.add_argument("--seed", type=int, default=1, help="which sample")
    parser.add_argument("--json", type=Path, help="write the outcomes here")
    parser.add_argument("--min-score", type=float, default=0.0,
                        help="exit 1 when killed / compiled is below this")
    parser.add_argument("--timeout", type=float, default=120, help="seconds per mutant's grade")
    parser.add_argument("--build-type", default="", help="CMAKE_BUILD_TYPE of the builds ('' compiles fastest)")
    parser.add_argument("--list", action="store_true", help="list the mutants and stop")
    parser.add_argument("--only", type=Path, help="only the survivors of this --json file")
    args = parser.parse_args()
    mutants = make_mutants()
    equivalent = {e["id"]: e["why"] for e in tomllib.loads(EQUIVALENT.read_text()).get("equivalent", [])}
    stale = sorted(set(equivalent) - {m.id for m, _ in mutants})
    for s in stale:
        print(f"data/mutants.toml: {s} is no mutant of the solution any more: remove it", file=sys.stderr)
    if stale:
        return 2
    if args.only:
        survived = {json.loads(l)["id"] for l in args.only.read_text().splitlines()
                    if l.strip() and json.loads(l)["status"] == "survived"}
        mutants = [(m, t) for m, t in mutants if m.id in survived]
    if args.sample:
        mutants = random.Random(args.seed).sample(mutants, min(args.sample, len(mutants)))
    if args.list:
        for m, _ in mutants:
            print(f"{m.id}: {m.before}  ->  {m.after}")
        return 0
    outcomes: list[Outcome] = []
    with tempfile.TemporaryDirectory(prefix="scanlab-mutants-") as tmp:
        ws = Workspace(Path(tmp), args.build_type)
        for k, (m, text) in enumerate(mutants, 1):
            o = ws.run(m, text, args.timeout)
            outcomes.append(o)
            print(f"[{k}/{len(mutants)}] {o.status:9} {m.id}  ({o.seconds:.0f} s) {o.detail[:100]}", flush=True)
    compiled = [o for o in outcomes if o.status != "stillborn"]
    killed = [o for o in compiled if o.status == "killed"]
    counted = [o for o in compiled if o.mutant.id not in equivalent or o.status == "killed"]
    score = len(killed) / len(counted) if counted else 1.0
    print(f"\nmutation score: {len(killed)} of {len(counted)} non-equivalent mutants killed "
          f"({100 * score:.1f}%); {len(compiled) - len(counted)} equivalent (data/mutants.toml), "
          f"{len(outcomes) - len(compiled)} did not compile")
    survivors = [o for o in compiled if o.status == "survived" and o.mutant.id not in equivalent]
    if survivors:
        print("survivors (add a case that kills each, or list it as equivalent, with why):")
        for o in survivors:
            print(f"  {o.mutant.id}: {o.mutant.before}  ->  {o.mutant.after}")
    if args.json:
        args.json.write_text("\n".join(json.dumps({**asdict(o.mutant), "id": o.mutant.id, "status": o.status,
                                                   "detail": o.detail, "seconds": round(o.seconds, 1)})
                                       for o in outcomes) + "\n")
    return 1 if score < args.min_score else 0


if __name__ == "__main__":
    sys.exit(main())
