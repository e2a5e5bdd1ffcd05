"""The rubric's forbidden constructs, found in what the compiler sees (its -M and -E, as
the grader's builds and `make rules` run them: grader/rules/code_rules.py, copied into the handout), not in
comments or strings, with line numbers."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import CXX_STANDARD, REPO, TEST_RUBRIC, compose
from grader.grading.checks.forbidden import strip_source
from grader.config.rubric import ForbiddenRubric, load_rubric
from grader.rules import code_rules
from grader.grading.checks.rules_engine import rules_of

RULES = load_rubric(REPO / "data" / "rubric.toml").forbidden
pytestmark = pytest.mark.skipif(not shutil.which("g++"), reason="no g++ to preprocess with")


def scan(code: str, shown: str, rules: ForbiddenRubric, tmp: Path | None = None) -> list[code_rules.Finding]:
    """The code rules over `code` as a student file included by a unit, as g++ sees it."""
    import tempfile
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        shutil.copytree(REPO / "handout" / "harness", root / "harness")
        shutil.copytree(REPO / "handout" / "emulator", root / "emulator")
        shutil.copytree(REPO / "solution" / "student", root / "student")
        student = root / "student" / "x.cuh"
        student.write_bytes(code.encode())
        (root / "harness" / "unit.cu").write_text('#include "student/x.cuh"\n')  # (a unit of its own)
        flags = ["g++", "-x", "c++", f"-std=gnu++{CXX_STANDARD}", f"-I{root}"]
        unit = str(root / "harness" / "unit.cu")
        sources = {shown: code}
        r = subprocess.run(flags + ["-M", "-MG", "-MT", "u", unit], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        outside = code_rules.outside_files(code_rules.parse_dependencies(r.stdout), {str(student)},
                                           (str(root / "harness"), str(root / "student"),
                                            str(root / "emulator"),
                                            *code_rules.compiler_search_dirs("g++")))
        if outside:
            return code_rules.refuse_outside(outside, sources)
        r = subprocess.run(flags + ["-E", unit], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        return code_rules.scan_preprocessed(r.stdout, {str(student): shown}, sources,
                                            rules_of(rules), (str(root / "harness"),
                                                              str(root / "student")))


def rules_hit(code: str) -> set[str]:
    return {v.rule for v in scan(code, "student/x.cuh", RULES)}


@pytest.mark.parametrize("folder", ["solution/student", "handout/student"])
def test_reference_and_handout_are_clean(folder):
    rules = code_rules.Rules.load(REPO / "handout" / "tools" / "code_rules.json")
    findings, problem = code_rules.check_student(REPO / folder, REPO / "handout", rules, "g++")
    assert problem == "" and findings == []


# The CUDA runtime's functions the emulator lacks are declared there, never defined
# (emulator/cuda_emu.h): code naming one compiles for the emulator as with nvcc, and `make
# rules` (the emulator's compile) decides by what the compiler kept (issue 45). Unused, the
# pointer is dropped: no call (before, the emulator did not compile it at all). Kept in the
# program, it is refused by its symbol, the launch's included (only nvcc's code may refer
# to that, and the emulator has none).
@pytest.mark.parametrize("name, rules", [("unused_fnptr_launch", set()),
                                         ("attack_fnptr_launch", {"symbol-call"})])
def test_the_cuda_runtime_is_what_the_compiled_code_keeps(tmp_path, name, rules):
    code_rules_data = code_rules.Rules.load(REPO / "handout" / "tools" / "code_rules.json")
    folder = compose(name, tmp_path)
    findings, problem = code_rules.check_student(folder / "student", REPO / "handout", code_rules_data, "g++")
    assert problem == "", problem
    assert {f.rule for f in findings} == rules, [str(f) for f in findings]
    assert all(f.file.endswith("scan.cuh") and "cudaLaunchKernel" in f.message and f.line > 0
               for f in findings)


@pytest.mark.parametrize("code, rule", [
    ("#include <cub/cub.cuh>\n", "include"),
    ("cub::WarpReduce<int> r;", "cub-thrust"),
    ("thrust::inclusive_scan(a, b, c);", "cub-thrust"),
    ("auto g = cooperative_groups::this_thread_block();", "cub-thrust"),
    ('asm volatile("bar.sync 0;");', "inline-asm"),
    ('__asm__("nop");', "inline-asm"),
    ("kernel<<<1, 32>>>(x);", "kernel-launch"),
    # A name assembled by token pasting is seen as the compiler makes it.
    ("#define CAT(a, b) a##b\nCAT(as, m)(\"nop\");", "inline-asm"),
    ("%:include <fstream>", "include"),
    ("#line 1 \"harness/host/driver.cu\"\nint x;", "line-marker"),
    ("#define MY_HEADER <vector>\n#include MY_HEADER", "include"),
    ("// a comment\r#include <vector>", "include"),      # a lone CR ends a // comment
    ("// a comment\r asm(\"nop\");", "inline-asm"),
    ('#include "/etc/passwd"', "include"),
    ("int x = __reduce_add_sync(0xffffffff, v);", "hardware-reduce"),
    # Line splicing does not hide a name.
    ("a\\\nsm(\"nop\");", "inline-asm"),
    ("#inc\\\nlude <fstream>", "include"),
])
def test_detected(code, rule):
    assert rule in rules_hit(code)


@pytest.mark.parametrize("code", [
    "// asm cudaMalloc( <<< fopen( cub::\n",
    "/* thrust::sort, system(\"rm\"), #include <cstdio> */\n",
    'const char* s = "asm volatile <<< cudaMalloc( fopen(";\n',
    "const char* r = R\"x(asm( \"quoted\" <<< )x\";\n",
    "int big = 1'000'000; char c = '\\''; int k = 0;\n",
    '#include "harness/ops.cuh"\n#include "student/reduce.cuh"\n#include <cstddef>\n',
    "#pragma unroll\nfor (int i = 0; i < 4; ++i) {}\n",
    "int opened = 0; int scuba = 1; int thrusts = 2; int cubes = 3;\n",
    "value = x << 3; y = z >> 2; w = (a < b) && (c << 1);\n",
    # What a call reaches is decided on the compiled code (its undefined symbols): the
    # student's own names, like the C library's or the harness's, are no finding here.
    "__device__ bool signal(unsigned lane) { return lane == 0; }\nauto send = [](int v) { return v; };\n",
    "struct S { int read(); int time; void exit(); void open(); };\nint baseline = 0; s.exit();\n",
    "int cub = 1; int thrust = cub; FILE* f = nullptr; int checkCuda = 0;\n",
    "#include <cstdio>\n#include <cassert>\nint fopenCount = 0;\n",
])
def test_not_detected(code):
    assert rules_hit(code) == set()


def test_line_numbers_and_excerpt():
    code = "// fine\n\n#include <vector>\nint a;\n/* a\n comment */ asm(\"nop\");\n"
    found = scan(code, "student/scan.cuh", RULES)
    assert [(v.line, v.rule) for v in found] == [(3, "include"), (6, "inline-asm")]
    assert found[1].file == "student/scan.cuh" and 'asm("nop")' in found[1].excerpt
    assert "student/scan.cuh:6" in str(found[1])


def test_strip_keeps_newlines_and_length():
    code = 'a /* x\ny */ b "s\\"t" // c\nd\n'
    s = strip_source(code)
    assert len(s.code) == len(s.no_comments)
    assert s.code.count("\n") == code.count("\n")
    assert "x" not in s.code and "s" not in s.code.replace(" ", "")[2:]
    assert '"s\\"t"' in s.no_comments


def test_allowed_system_includes_come_from_the_rubric(tmp_path):
    r = load_rubric(TEST_RUBRIC).forbidden
    assert "cstddef" in r.allowed_system_includes
    assert scan("#include <cstddef>\n", "x", r) == []
    assert scan("#include <vector>\n", "x", r)[0].rule == "include"
