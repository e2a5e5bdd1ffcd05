"""The code's shape, as the maintainer section of README.md promises it: small files,
a model that no stage reaches into, types that need no escape hatch."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from conftest import CXX_STD, REPO

SOURCE_SUFFIXES = {".py", ".cu", ".cuh", ".h", ".cpp", ".sh", ".cmake"}
SOURCE_FOLDERS = ("grader", "handout", "solution", "tests", "tools")
MAX_LINES = 600
GRADER = REPO / "grader"


def sources() -> list[Path]:
    found = []
    for folder in SOURCE_FOLDERS:
        for p in (REPO / folder).rglob("*"):
            # Not a generated file (harness/generated/: tables written from data/).
            if p.suffix in SOURCE_SUFFIXES and p.is_file() and "fixtures" not in p.parts \
                    and "generated" not in p.parts:
                found.append(p)
    return found


def module_name(path: Path) -> str:
    """grader/grading/checks/compiled.py -> grader.grading.checks.compiled (a package: its
    __init__.py's folder)."""
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def grader_imports(path: Path) -> set[str]:
    """The grader modules a file of the grader imports, relative imports resolved, as
    dotted names (`from ..config import rubric` -> grader.config.rubric)."""
    package = module_name(path).split(".")
    if path.name != "__init__.py":
        package = package[:-1]
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            base = (package[:len(package) - node.level + 1] if node.level else [])
            module = ".".join(base + ([node.module] if node.module else []))
            if not module.startswith("grader"):
                continue
            for alias in node.names:   # `from . import x`: x may be a module
                sub = f"{module}.{alias.name}"
                exists = (REPO / Path(*sub.split("."))).with_suffix(".py").is_file() or \
                    (REPO / Path(*sub.split(".")) / "__init__.py").is_file()
                names.add(sub if exists else module)
        elif isinstance(node, ast.Import):
            names.update(a.name for a in node.names if a.name.split(".")[0] == "grader")
    return names


def test_no_source_file_is_over_the_limit():
    assert len(sources()) > 50
    long = {str(p.relative_to(REPO)): n for p in sources()
            if (n := len(p.read_text(encoding="utf-8", errors="replace").splitlines())) > MAX_LINES}
    assert not long, f"over {MAX_LINES} lines: {long}"


def test_the_results_model_imports_only_the_configuration():
    # The stages fill the model and the reports read it: it imports none of them, only
    # what the rubric, the cases and the backends are.
    imported = grader_imports(GRADER / "results.py")
    assert imported, "the parser found no import at all"
    assert all(m.startswith("grader.config.") or m == "grader.machine.backend" for m in imported), imported


def test_every_import_inside_the_grader_is_relative():
    # The folder grader/ is the package `grader` in a checkout and `scanlab_grader` when
    # installed (pyproject.toml): an absolute `grader.` import would load a second copy of
    # the package, or none.
    absolute = [f"{p.relative_to(REPO)}:{node.lineno}" for p in GRADER.rglob("*.py")
                for node in ast.walk(ast.parse(p.read_text(encoding="utf-8")))
                if (isinstance(node, ast.ImportFrom) and node.level == 0 and node.module
                    and node.module.split(".")[0] in ("grader", "scanlab_grader"))
                or (isinstance(node, ast.Import)
                    and any(a.name.split(".")[0] in ("grader", "scanlab_grader") for a in node.names))]
    assert not absolute, absolute
    # ... and the resolver above sees them: the pipeline imports its stages.
    assert {"grader.grading.collect", "grader.grading.assemble"} <= grader_imports(GRADER / "grading" / "pipeline.py")


def test_the_grader_needs_no_type_escape_hatch():
    offenders = [f"{p.relative_to(REPO)}:{i}" for p in (REPO / "grader").rglob("*.py")
                 for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
                 if "type: ignore" in line]
    assert not offenders, offenders


def test_the_emulator_scheduler_does_not_call_the_runtime():
    # The runtime (emu_runtime.cpp) calls the scheduler; the scheduler's files reach the
    # runtime's shared pieces only through emu_internal.h (emu_errors.cpp).
    emulator = REPO / "handout" / "emulator"
    runtime_only = [line.split("(")[0].split()[-1] for line in
                    (emulator / "emu_runtime.cpp").read_text().splitlines()
                    if line.startswith("cudaError_t cuda") and line.rstrip().endswith("{")]
    assert "cudaMalloc" in runtime_only
    for p in emulator.glob("emu_*.cpp"):
        if p.name in ("emu_runtime.cpp", "emu_errors.cpp"):
            continue
        text = p.read_text()
        assert not [f for f in runtime_only if f + "(" in text], p.name


def test_the_grader_and_the_tools_type_check():
    # The stages pass typed records (grader/grading/outcomes.py): mypy holds them to
    # it, and the tools of the repository and of the handout.
    api = pytest.importorskip("mypy.api", reason="mypy is not installed (pyproject.toml, extra 'test')")
    out, err, status = api.run(["--ignore-missing-imports", "--no-error-summary", "--cache-dir",
                                str(REPO / "build" / "mypy-cache"), str(REPO / "grader"),
                                str(REPO / "tools"), str(REPO / "handout" / "tools")])
    assert status == 0, out + err


def _includes(unit: Path, handout: Path) -> set[str]:
    """The handout files the emulator build of `unit` includes, as the preprocessor sees
    them (g++ -MM: a task header includes its student file only in the student unit)."""
    import shutil
    import subprocess
    if not shutil.which("g++"):
        pytest.skip("g++ is needed to list what a unit includes")
    r = subprocess.run(["g++", CXX_STD, "-MM", f"-I{handout}", f"-I{handout / 'emulator'}",
                        str(unit)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    words = r.stdout.replace("\\\n", " ").split()[1:]
    return {Path(w).resolve().relative_to(REPO).as_posix() for w in words
            if Path(w).resolve().is_relative_to(REPO)}


def test_the_harness_never_sees_a_student_file():
    # The student unit (harness/host/student_unit.cu) is the one place student files are
    # compiled; what times, checks and writes output must not include them.
    handout = REPO / "handout"
    harness = _includes(handout / "emulator" / "driver_emu.cpp", handout)
    assert {"handout/harness/host/run.h", "handout/harness/host/timing.h",
            "handout/harness/tasks/scan_task.cuh"} <= harness, sorted(harness)
    assert not {p for p in harness if "/student/" in p}, sorted(harness)
    assert "handout/harness/host/student_unit.cu" not in harness
    student = _includes(handout / "emulator" / "student_unit_emu.cpp", handout)
    assert "handout/student/scan.cuh" in student, sorted(student)


def test_ctest_labels_and_the_gpu_lock():
    """`ctest -L gpu` finds every GPU test, each holding the lock "gpu"; every test has a
    label (gpu, emulator, grader, handout or cpp). Read from the configured build."""
    import json
    import shutil
    import subprocess
    build = REPO / "build"
    if not (build / "CTestTestfile.cmake").is_file() or not shutil.which("ctest"):
        pytest.skip("no configured build/ (make) to list the CTest tests of")
    listing = subprocess.run(["ctest", "--test-dir", str(build), "--show-only=json-v1"],
                             capture_output=True, text=True, timeout=120, check=True)
    # catch_discover_tests lists an executable not built yet (a build configured but not
    # fully built) as one placeholder test, <target>_NOT_BUILT[-hash], with no properties:
    # it is no test of the suite, so it has no label to check.
    not_built = re.compile(r"_NOT_BUILT(-\w+)?$")       # Catch.cmake: ${TARGET}_NOT_BUILT-${hash}
    tests = [t for t in json.loads(listing.stdout)["tests"] if not not_built.search(t["name"])]
    assert tests
    props = {t["name"]: {p["name"]: p["value"] for p in t.get("properties", [])} for t in tests}
    for name, p in props.items():
        labels = set(p.get("LABELS", []))
        assert labels & {"gpu", "emulator", "grader", "handout", "cpp"}, name
        needs_gpu = name.startswith("gpu.") or name.endswith(".gpu")
        assert ("gpu" in labels) == needs_gpu, name
        if needs_gpu:
            assert "gpu" in p.get("RESOURCE_LOCK", []) and p.get("SKIP_RETURN_CODE") == 77, name
    if "gpu.grader" in props:
        assert props["gpu.grader"]["LABELS"] == ["gpu", "grader"]
    assert "emulator" in props["emu.reference.scan"]["LABELS"]


# ---- the shape of the grader: a backend is an object, no import cycle ------------------------

BACKEND_WORDS = {"cuda", "emulator", "auto"}
STRING_OPS = (ast.Eq, ast.NotEq, ast.In, ast.NotIn)     # not `is None`


def _is_backend_operand(node: ast.expr) -> bool:
    """A backend's name in a comparison: a literal "cuda", "emulator" or "auto", or a
    name or attribute that is a backend (backend, setup.backend, AUTO, EMULATOR.name)."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str) and node.value in BACKEND_WORDS
    if isinstance(node, ast.Attribute) and node.attr == "name":
        return _is_backend_operand(node.value)
    ident = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""
    return "backend" in ident.lower() or ident.lower() in BACKEND_WORDS


def backend_compares() -> list[str]:
    found = []
    for p in sorted(GRADER.rglob("*.py")):
        for node in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Compare) and all(isinstance(op, STRING_OPS) for op in node.ops) \
                    and any(map(_is_backend_operand, [node.left, *node.comparators])):
                found.append(f"{p.relative_to(REPO)}:{node.lineno}: {ast.unparse(node)}")
    return found


def test_a_backend_is_an_object_chosen_once():
    # grader/machine/backend.py says what each backend builds, runs, times and cannot do;
    # the rest of the grader asks the object. Comparing its name is left for choosing it
    # (--backend auto), the race-check cases' label and --resume's "same backend" check.
    found = backend_compares()
    assert len(found) <= 3, "\n".join(found)
    # The counter sees a comparison of each kind it counts.
    for source in ('x = b == "cuda"', "x = setup.backend != other", "x = name == AUTO",
                   "x = c.case.backend in (EMULATOR.name, 1)"):
        node = next(n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Compare))
        assert any(map(_is_backend_operand, [node.left, *node.comparators])), source


def grader_import_graph() -> dict[str, set[str]]:
    """Each grader module and the grader modules it imports (at the top or in a function)."""
    modules = {module_name(p): p for p in GRADER.rglob("*.py")}
    return {name: {m for m in grader_imports(path) if m in modules and m != name}
            for name, path in modules.items()}


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                cycles.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return cycles


def test_the_grader_has_no_import_cycle():
    graph = grader_import_graph()
    assert len(graph) > 40 and "grader.grading.session" in graph["grader.grading.pipeline"]
    assert not import_cycles(graph), import_cycles(graph)
    # The finder finds one where there is one.
    assert import_cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


# ---- the stages return results: one module makes the SubmissionResult ---------------------------

RESULT_MODEL = ("SubmissionResult", "TaskResult", "IntegrationResult")
ASSEMBLER = GRADER / "grading" / "assemble.py"
MUTATING_CALLS = {"append", "extend", "insert", "update", "setdefault", "pop", "popitem", "clear",
                  "remove", "sort", "reverse", "add", "discard"}


def _mentions_model(annotation: ast.expr | None) -> bool:
    return annotation is not None and any(
        isinstance(n, (ast.Name, ast.Attribute)) and (n.id if isinstance(n, ast.Name) else n.attr) in RESULT_MODEL
        or isinstance(n, ast.Constant) and isinstance(n.value, str) and any(m in n.value for m in RESULT_MODEL)
        for n in ast.walk(annotation))


def result_writes(source: str) -> list[str]:
    """Where a module sets a field of the results model (a SubmissionResult, TaskResult or
    IntegrationResult): an attribute assigned, an item of one of its fields assigned, one
    of its fields changed in place (`.append`, `.extend`, ...), `setattr`. A name is taken
    for a result where the module annotates it as one (a parameter, a variable, a
    dataclass field: `outcome: TaskResult | IntegrationResult`), makes it with the class,
    or loops over a result's `.tasks`; so are a result's `.tasks[i]` and `.integration`."""
    tree = ast.parse(source)
    names: set[str] = set()        # variables that hold a result
    fields = {"integration"}       # attributes that hold a result (SubmissionResult.integration)
    lists = {"tasks"}              # attributes that hold results (SubmissionResult.tasks)
    for node in ast.walk(tree):
        if isinstance(node, ast.arg) and _mentions_model(node.annotation):
            names.add(node.arg)
        elif isinstance(node, ast.AnnAssign) and _mentions_model(node.annotation):
            (names if isinstance(node.target, ast.Name) else fields).add(
                node.target.id if isinstance(node.target, ast.Name) else ast.unparse(node.target).split(".")[-1])
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) \
                and isinstance(node.value.func, ast.Name) and node.value.func.id in RESULT_MODEL:
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    # Dataclass fields are AnnAssigns of a Name in a class body: attributes, not variables.
    for cls in (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)):
        for stmt in cls.body:
            if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) \
                    and _mentions_model(stmt.annotation):
                fields.add(stmt.target.id)

    def is_result(e: ast.expr) -> bool:
        if isinstance(e, ast.Name):
            return e.id in names
        if isinstance(e, ast.Attribute):
            return e.attr in fields
        if isinstance(e, ast.Subscript):
            return isinstance(e.value, ast.Attribute) and e.value.attr in lists and is_result(e.value.value)
        return False

    def loop_targets(target: ast.expr, it: ast.expr) -> None:
        if isinstance(it, ast.Attribute) and it.attr in lists and is_result(it.value) \
                and isinstance(target, ast.Name):
            names.add(target.id)
        elif isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id in ("zip", "enumerate") \
                and isinstance(target, ast.Tuple):
            args = it.args if it.func.id == "zip" else [ast.Constant(0), *it.args]
            for t, a in zip(target.elts, args):
                loop_targets(t, a)

    for _ in range(2):   # a loop over a result found by the first pass
        for node in ast.walk(tree):
            if isinstance(node, (ast.For, ast.comprehension)):
                loop_targets(node.target, node.iter)

    def written(target: ast.expr) -> bool:
        if isinstance(target, ast.Tuple):
            return any(map(written, target.elts))
        if isinstance(target, ast.Attribute):
            return is_result(target.value)
        if isinstance(target, ast.Subscript):
            return isinstance(target.value, ast.Attribute) and is_result(target.value.value)
        return False

    found = []
    for node in ast.walk(tree):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr in MUTATING_CALLS and isinstance(node.func.value, ast.Attribute) \
                and is_result(node.func.value.value):
            found.append(f"{node.lineno}: {ast.unparse(node)}")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "setattr" \
                and node.args and is_result(node.args[0]):
            found.append(f"{node.lineno}: {ast.unparse(node)}")
        if any(map(written, targets)):
            found.append(f"{node.lineno}: {ast.unparse(node)}")
    return found


def test_no_stage_writes_into_the_result():
    # Each stage of grader/grading/ returns what it found (grading/outcomes.py); the next
    # stage reads it; assemble.py alone makes the SubmissionResult from them, once.
    grading = GRADER / "grading"
    writes = {str(p.relative_to(REPO)): w for p in sorted(grading.rglob("*.py")) if p != ASSEMBLER
              and (w := result_writes(p.read_text(encoding="utf-8")))}
    assert not writes, writes
    made = {str(p.relative_to(REPO)) for p in grading.rglob("*.py")
            for node in ast.walk(ast.parse(p.read_text(encoding="utf-8")))
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in RESULT_MODEL}
    assert made == {str(ASSEMBLER.relative_to(REPO))}, made


def test_the_result_writes_finder_finds_them():
    # The ways the grade wrote into its one shared result before the stages returned theirs.
    before = '''
@dataclass
class Part:
    label: str
    outcome: TaskResult | IntegrationResult

def new_result(session) -> SubmissionResult:
    result = SubmissionResult(name="x")
    result.files = {}                                   # 1
    for t, tr in zip(rubric.tasks, result.tasks):
        tr.digest = "abc"                               # 2
    return result

def _grade(result: SubmissionResult, part: Part, timed) -> None:
    result.timings["collect"] = 1.0                     # 3
    part.outcome.cases.extend([])                       # 4
    result.integration.points += 1                      # 5
    for tr in result.tasks:
        timed[tr.number].into(tr)
    result.tasks[0].status = "graded"                   # 6
    setattr(result, "score", 1)                         # 7

def into(self, tr: "TaskResult") -> None:
    tr.perf_status, tr.perf = self.status, []           # 8
    self.status = "measured"
    other.status = "pass"
'''
    found = result_writes(before)
    assert len(found) == 8, found
    assert result_writes("def f(check: CheckOutcome):\n    x = dataclasses.replace(check, cases=())\n") == []


# ---- the stages' outcomes are frozen -----------------------------------------------------------

def frozen_outcome_problems(classes: list[type]) -> list[str]:
    """What keeps each class from being a frozen outcome: not a frozen dataclass, or a
    field that is a list (changed in place though the record is frozen)."""
    import dataclasses
    import typing
    problems = []
    for cls in classes:
        if not dataclasses.is_dataclass(cls) or not getattr(cls, "__dataclass_params__").frozen:
            problems.append(f"{cls.__name__} is not a frozen dataclass")
            continue
        hints = typing.get_type_hints(cls)
        problems += [f"{cls.__name__}.{f.name} is a list" for f in dataclasses.fields(cls)
                     if typing.get_origin(hints[f.name]) is list]
    return problems


def test_the_stages_outcomes_are_frozen():
    # Each stage returns a frozen record (grading/outcomes.py's docstring lists them), the
    # timing stage's PerfResult included: made once, when its case is over.
    import dataclasses

    from grader.grading import outcomes, score, timing
    from grader.results import PerfResult
    stage_records = [c for c in vars(outcomes).values()
                     if isinstance(c, type) and dataclasses.is_dataclass(c) and c.__module__ == outcomes.__name__]
    assert len(stage_records) >= 3, stage_records
    classes = [*stage_records, timing.TaskTiming, score.ScoreOutcome, PerfResult]
    assert frozen_outcome_problems(classes) == []

    # The check fails on an outcome written in place, as PerfResult was.
    @dataclasses.dataclass
    class Unfrozen:
        runs: list[float]

    @dataclasses.dataclass(frozen=True)
    class FrozenWithAList:
        runs: list[float]
    assert frozen_outcome_problems([Unfrozen, FrozenWithAList]) == [
        "Unfrozen is not a frozen dataclass", "FrozenWithAList.runs is a list"]


# ---- short functions on the central paths ------------------------------------------------------

MAX_FUNCTION_LINES = 80
# The grading, timing, building and driver paths: the grader's stages that build, run, check
# and time a submission, and the harness's host side (the driver, the timed loop, `grade`).
SHORT_FUNCTION_PYTHON = [GRADER / "grading" / f"{m}.py" for m in ("pipeline", "checking", "build", "build_log",
                                                                 "timing", "sandbox", "prebuilt")] \
    + sorted((GRADER / "grading" / "correctness").glob("*.py")) + [GRADER / "config" / "assignment.py"]
SHORT_FUNCTION_CPP = REPO / "handout" / "harness" / "host"


def python_function_lengths(source: str) -> dict[str, int]:
    """Each function's (and method's) length in lines, decorators and docstring included."""
    return {f"{node.name}:{node.lineno}": node.end_lineno - node.lineno + 1   # type: ignore[operator]
            for node in ast.walk(ast.parse(source))
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}


CPP_FUNCTION_HEAD = re.compile(r"^(?:template\s*<[^;{]*>\s*)?(?P<declarator>(?:[\w:<>,*&~]+\s+)+[*&]?(?P<name>[\w:~]+))\s*\(")
NOT_A_FUNCTION = re.compile(r"\b(if|for|while|switch|catch|return|class|struct|namespace|enum|else|do)\b")


def cpp_function_lengths(source: str) -> dict[str, int]:
    """Each function's length in lines, from the line that names it to its closing brace: a
    simple scan that matches braces outside comments, strings and characters, taking a
    block for a function where the text before its `{` is a declarator (`name(...)`, not a
    control statement, a lambda, a class or an initializer)."""
    code = re.sub(r"^[ \t]*#[^\n]*|//[^\n]*|/\*.*?\*/|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'",
                  lambda m: re.sub(r"[^\n]", " ", m.group()), source, flags=re.S | re.M)
    lengths: dict[str, int] = {}
    depth, opened = 0, []   # the open braces: (depth, function name, its first line) or None
    statement_start = 0
    for i, ch in enumerate(code):
        if ch == "{":
            head = code[statement_start:i]
            m = CPP_FUNCTION_HEAD.search(head.strip())
            name = m.group("name") if m and ")" in head and not NOT_A_FUNCTION.search(m.group("declarator")) \
                else None
            first = source.count("\n", 0, i - len(head.lstrip())) + 1
            opened.append((name, first) if name else None)
            depth += 1
            statement_start = i + 1
        elif ch == "}":
            depth -= 1
            top = opened.pop() if opened else None
            if top is not None:
                lengths[f"{top[0]}:{top[1]}"] = source.count("\n", 0, i) + 2 - top[1]
            statement_start = i + 1
        elif ch == ";":
            statement_start = i + 1
    return lengths


def long_functions() -> dict[str, int]:
    found = {}
    assert all(p.is_file() for p in SHORT_FUNCTION_PYTHON), SHORT_FUNCTION_PYTHON
    for p in SHORT_FUNCTION_PYTHON:
        for name, n in python_function_lengths(p.read_text(encoding="utf-8")).items():
            if n > MAX_FUNCTION_LINES:
                found[f"{p.relative_to(REPO)}:{name}"] = n
    for p in sorted([*SHORT_FUNCTION_CPP.glob("*.h"), *SHORT_FUNCTION_CPP.glob("*.cu")]):
        for name, n in cpp_function_lengths(p.read_text(encoding="utf-8")).items():
            if n > MAX_FUNCTION_LINES:
                found[f"{p.relative_to(REPO)}:{name}"] = n
    return found


def test_no_long_function_on_the_central_paths():
    # A maintainer reads the timed loop, a grade or a build top-down in named steps.
    assert not long_functions(), f"over {MAX_FUNCTION_LINES} lines: {long_functions()}"


def test_the_function_length_scans_find_them():
    body = "".join(f"    x += {i};\n" for i in range(81))
    cpp = ("namespace a {\ninline int cmdLong(const Args& args) {\n    int x = 0;\n"
           "    for (int i = 0; i < 2; ++i) {\n        if (i) { x++; }\n    }\n"
           f"    auto f = [&](int y) {{\n{body}    }};\n    return x; // }}\n}}\n"
           "struct S { int v = 0; };\nint short_one() { return '}'; }\n"
           "template <class Op>\nstd::vector<T> templated(int n) {\n    return {};\n}\n}\n")
    found = cpp_function_lengths(cpp)
    assert found["cmdLong:2"] == 90 and found["short_one:93"] == 1 and found["templated:94"] == 4, found
    assert set(found) == {"cmdLong:2", "short_one:93", "templated:94"}, found
    py = "def f():\n" + "".join(f"    x = {i}\n" for i in range(81)) + "\ndef g():\n    pass\n"
    assert python_function_lengths(py) == {"f:1": 82, "g:84": 2}


# grader/README.md's layers ("Code map"), from the top, and the imports that run up
# against them on purpose (importer, imported), each explained there.
LAYERS = (("grader.__main__", "grader.entry", "grader.cli"), ("grader.classroom",),
          ("grader.report", "grader.gradescope"), ("grader.grading",), ("grader.results",),
          ("grader.config",),
          ("grader.rules", "grader.machine", "grader.exits", "grader.printable", "grader"))
UPWARD = {("grader.report.class_summary", "grader.classroom.roster"),
          ("grader.report.html", "grader.classroom.roster"),
          ("grader.machine.doctor", "grader.grading.sandbox")}


def layer_of(module: str) -> int:
    if module == "grader":   # its __init__.py
        return len(LAYERS) - 1
    for depth, names in enumerate(LAYERS):
        if any(module == n or module.startswith(n + ".") for n in names if n != "grader"):
            return depth
    raise AssertionError(f"{module} is in no layer of grader/README.md")


def test_every_import_goes_down_the_layers_of_the_readme():
    found, upward = 0, set()
    for path in GRADER.rglob("*.py"):
        module = module_name(path)
        for imported in grader_imports(path):
            found += 1
            if layer_of(imported) < layer_of(module):
                upward.add((module, imported))
    assert found > 100
    assert upward == UPWARD, sorted(upward ^ UPWARD)
    # The code rules import nothing else of the grader: the handout runs a copy of them.
    assert not {i for p in (GRADER / "rules").glob("*.py") for i in grader_imports(p)
                if not i.startswith("grader.rules")}
