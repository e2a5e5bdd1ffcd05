"""Forbidden constructs: found in code, not in comments or strings, with line numbers."""
from __future__ import annotations

import pytest

from conftest import REPO, TEST_RUBRIC
from grader.forbidden import scan, strip_source
from grader.rubric import load_rubric

RULES = load_rubric(REPO / "data" / "rubric.toml").forbidden


def rules_hit(code: str) -> set[str]:
    return {v.rule for v in scan(code, "student/x.cuh", RULES)}


@pytest.mark.parametrize("path", sorted((REPO / "solution" / "student").glob("*.cuh"))
                         + sorted((REPO / "handout" / "student").glob("*.cuh")), ids=str)
def test_reference_and_handout_are_clean(path):
    assert scan(path.read_text(), str(path), RULES) == []


@pytest.mark.parametrize("code, rule", [
    ("#include <cub/cub.cuh>\n", "include"),
    ("cub::WarpReduce<int> r;", "cub-thrust"),
    ("thrust::inclusive_scan(a, b, c);", "cub-thrust"),
    ("namespace cg = cooperative_groups;", "cub-thrust"),
    ('asm volatile("bar.sync 0;");', "inline-asm"),
    ('__asm__("nop");', "inline-asm"),
    ("kernel<<<1, 32>>>(x);", "kernel-launch"),
    ("cudaMalloc(&p, 4);", "cuda-runtime"),
    ("cudaDeviceSynchronize ();", "cuda-runtime"),
    ("cuLaunchKernel(f, 1, 1, 1);", "cuda-runtime"),
    ('FILE* f = fopen("/etc/passwd", "r");', "files-processes-network"),
    ('system("curl evil");', "files-processes-network"),
    ("int s = socket(2, 1, 0);", "files-processes-network"),
    ("std::ofstream out(name);", "streams"),
    ("exit(0);", "files-processes-network"),
    ('const char* h = getenv("HOME");', "files-processes-network"),
    ("launchKernel(\"k\", k, 1, 1, 0);", "harness-host"),
    ("#define CAT(a, b) a##b", "token-pasting"),
    ("%:include <cstdio>", "digraph-directive"),
    ("#include_next <cstddef>", "directive"),
    ("#line 1 \"harness/driver.cu\"", "directive"),
    ("#include MY_HEADER", "include"),
    ('#include "../harness/ops.cuh"', "include"),
    ('#include "/etc/passwd"', "include"),
    ("int x = __reduce_add_sync(0xffffffff, v);", "hardware-reduce"),
    # Line splicing does not hide a name.
    ("cuda\\\nMalloc(&p, 4);", "cuda-runtime"),
    ("#inc\\\nlude <cstdio>", "include"),
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
