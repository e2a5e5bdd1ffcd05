"""The code rules (grader/rules/code_rules.py, the one implementation the grader and the
students' `make rules` share): line markers that follow the include stack, includes read
from the compiler's view, the files a unit reads, messages that quote no outside file,
placeholders and __constant__ tables found in what the compiler saw."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO
from grader.config.rubric import load_rubric
from grader.rules import code_rules
from grader.grading.checks.rules_engine import rules_of

RULES = rules_of(load_rubric(REPO / "data" / "rubric.toml").forbidden)
STUDENT = {"/b/src/student/reduce.cuh": "student/reduce.cuh"}
HEAD = ('# 1 "/b/src/harness/host/student_unit.cu"\n'
        '# 1 "/b/src/harness/tasks/reduce_task.cuh" 1\n'
        '# 1 "/b/src/student/reduce.cuh" 1\n')
TAIL = '# 30 "/b/src/harness/tasks/reduce_task.cuh" 2\nint harness_after;\n'


def rules_found(text: str) -> set[str]:
    return {f.rule for f in code_rules.scan_preprocessed(text, STUDENT, {}, RULES)}


def test_a_consistent_unit_has_no_finding():
    assert rules_found(HEAD + "int x;\n" + TAIL) == set()


@pytest.mark.parametrize("marker", [
    '# 10 "/b/src/harness/host/student_unit.cu"',      # #line to another file (no flag)
    '# 10 "/b/src/harness/host/student_unit.cu" 2',    # a fake return, to a file not on the stack
    '# 10 "/b/src/harness/tasks/reduce_task.cuh" 2',          # a fake return to the real parent ...
])
def test_a_line_marker_that_does_not_follow_the_includes_is_refused(marker):
    text = HEAD + "int x;\n" + marker + "\nint hidden = system(0);\n" + TAIL
    assert "line-marker" in rules_found(text)


def test_includes_from_a_student_file_are_read_from_the_markers():
    cub = HEAD + '# 1 "/usr/local/cuda/include/cub/cub.cuh" 1 3 4\nint c;\n' \
        '# 2 "/b/src/student/reduce.cuh" 2\n' + TAIL
    cmath = HEAD + '# 1 "/usr/include/c++/13/cmath" 1 3\nint c;\n# 2 "/b/src/student/reduce.cuh" 2\n' + TAIL
    assert "include" in rules_found(cub)
    assert rules_found(cmath) == set()


@pytest.mark.parametrize("header, refused", [
    ("/b/src/harness/ops.cuh", False),                 # the student-facing device API
    ("/b/src/student/warp_scan.cuh", False),
    ("/b/src/harness/host/run.h", True),               # the harness's own subfolders
    ("/b/src/harness/tasks/task.cuh", True),
    ("/b/src/harness/generated/assignment.h", True),
    ("/b/src/harness/isolation/reduce/student/reduce.cuh", True),
    ("/b/elsewhere/harness/ops.cuh", True),            # a harness/ outside the handout copy
])
def test_a_student_file_includes_only_the_top_level_of_harness(header, refused):
    text = HEAD + f'# 1 "{header}" 1\nint c;\n# 2 "/b/src/student/reduce.cuh" 2\n' + TAIL
    found = code_rules.scan_preprocessed(text, STUDENT, {}, RULES, ("/b/src/harness", "/b/src/student"))
    assert ("include" in {f.rule for f in found}) == refused, [str(f) for f in found]


def test_directives_that_survive_preprocessing_are_checked():
    assert rules_found(HEAD + "#pragma unroll\n" + TAIL) == set()
    assert "directive" in rules_found(HEAD + '#ident "x"\n' + TAIL)


def test_strings_are_no_code_and_names_in_parentheses_are_unwrapped():
    assert rules_found(HEAD + 'const char* s = "asm(x)";\n' + TAIL) == set()
    assert "inline-asm" in rules_found(HEAD + "(asm)(\"nop\");\n" + TAIL)


def test_constant_tables_are_found_in_the_student_lines():
    const = HEAD + '__attribute__((__visibility__("default"))) unsigned kTable[5] = {1};\n' \
        'static __attribute__((__visibility__("default"))) int kOne = 1;\nint notMe;\n' + TAIL
    assert code_rules.constant_names(const, STUDENT) == {"kTable", "kOne"}


def test_dependencies_outside_the_allowed_places_are_named_not_quoted(tmp_path):
    deps = "unit: /b/src/harness/x.cuh /usr/include/stdio.h \\\n /etc/passwd cub/cub.cuh\n"
    parsed = code_rules.parse_dependencies(deps)
    assert parsed == ["/b/src/harness/x.cuh", "/usr/include/stdio.h", "/etc/passwd", "cub/cub.cuh"]
    outside = code_rules.outside_files(parsed, set(), ("/b/src/harness", "/usr/include"))
    assert outside == ["/etc/passwd", "cub/cub.cuh"]
    found = code_rules.refuse_outside(outside, {"alice/reduce.cuh": 'int a;\n#include "/etc/passwd"\n'})
    assert (found[0].file, found[0].line) == ("alice/reduce.cuh", 2)
    assert "/etc/passwd" in found[0].message


def test_an_include_found_nowhere_is_not_called_a_file_outside_the_submission():
    # Issue 58, item 2: the compiler's -MG lists an include it finds nowhere as spelled;
    # the message says so, never "a file outside the submission".
    found = code_rules.refuse_outside(["reduce.cuh"], {"alice/scan.cuh": '#include "reduce.cuh"\n'},
                                      frozenset({"reduce.cuh"}))
    assert (found[0].file, found[0].line) == ("alice/scan.cuh", 1)
    assert "outside the submission" not in found[0].message and "reduce.cuh" in found[0].message


def test_messages_about_outside_files_are_not_shown():
    log = ("alice/reduce.cuh:3:1: error: expected ';'\n    3 | int x\n"
           "/etc/passwd:1:5: error: 'root' does not name a type\n    1 | root:x:0:0:root\n"
           "In file included from harness/tasks/reduce_task.cuh:12:\n"
           "harness/tasks/reduce_task.cuh:40: error: no match\n")
    shown = code_rules.only_public_messages(log, ("/usr/include",))
    assert "root" not in shown and "not shown" in shown
    assert "alice/reduce.cuh:3:1" in shown and "harness/tasks/reduce_task.cuh:40" in shown


def _student_dir(tmp_path: Path, name: str, text: bytes) -> Path:
    folder = tmp_path / "student"
    folder.mkdir(parents=True)
    for f in (REPO / "solution" / "student").glob("*.cuh"):
        shutil.copy(f, folder / f.name)
    (folder / name).write_bytes(text)
    return folder


def _cli(student: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(REPO / "handout" / "tools" / "code_rules.py"),
                           "--student", str(student)], capture_output=True, text=True, timeout=300)


@pytest.mark.skipif(not shutil.which("c++"), reason="no C++ compiler")
def test_the_students_command_sees_what_the_compiler_sees(tmp_path):
    # GCC ends a // comment at a lone carriage return: the code after it is compiled, so
    # the rules see it; a CRLF file is as good as any.
    scan = (REPO / "solution" / "student" / "scan.cuh").read_bytes()
    hidden = scan.replace(b"namespace scanlab {", b"namespace scanlab {\n// note\r"
                          b" inline int sneak = std::getenv(\"HOME\") != nullptr;", 1)
    r = _cli(_student_dir(tmp_path / "a", "scan.cuh", hidden))
    assert r.returncode == 1 and "symbol-call" in r.stdout and "getenv" in r.stdout, r.stdout
    crlf = scan.replace(b"\n", b"\r\n")
    r = _cli(_student_dir(tmp_path / "b", "scan.cuh", crlf))
    assert r.returncode == 0 and "no violation" in r.stdout, r.stdout
    passwd = scan.replace(b"#include <cstddef>", b'#include <cstddef>\n#include "/etc/passwd"', 1)
    r = _cli(_student_dir(tmp_path / "c", "scan.cuh", passwd))
    assert r.returncode == 1 and "/etc/passwd" in r.stdout
    assert "root:" not in r.stdout + r.stderr


# ---- the compiled program's calls (issue 45): g++'s inlining report, nvcc's PTX ------------

GCC_REPORT = """\
/b/src/harness/baselines.cuh:51:18: optimized:  Inlining int scanlab::emu::x()/839 into void scanlab::baseline::reduceBlocksSequential(const typename Op::Element*) [with Op = scanlab::Mssp]/3102.
/b/src/student/reduce.cuh:58:41: optimized:  Inlining void scanlab::baseline::reduceBlocksSequential(const typename Op::Element*) [with Op = scanlab::Mssp]/3102 into void scanlab::reduceBlocksKernel(const typename Op::Element*) [with Op = scanlab::Mssp; int CHUNK = 8]/3200.
/b/src/student/warp_scan.cuh:31:47: optimized:  Inlined typename Op::Element scanlab::baseline::scanIncWarpSequential(typename Op::Element*, unsigned int) [with Op = scanlab::Add<int>]/3231 into warpScanKernel.isra/3300 which now has time 4.0 and size 100, net change of -1.
/b/src/harness/tasks/warp_tile.cuh:36:5: optimized:  Inlining void* scanlab::emu::shared()/849 into void scanlab::warpScanKernel(const typename Op::Element*) [with Op = scanlab::Add<int>]/3300.
/b/src/harness/tasks/warp_scan_task.cuh:46:31: optimized:  Inlining typename Op::Element scanlab::scanIncWarp(typename Op::Element*, unsigned int) [with Op = Add<int>]/3226 into static typename Op::Element scanlab::StudentWarpScan::run(typename Op::Element*, unsigned int) [with Op = Add<int>]/3227.
/b/src/harness/tasks/warp_tile.cuh:40:9: optimized:  Inlined static typename Op::Element scanlab::StudentWarpScan::run(typename Op::Element*, unsigned int) [with Op = Add<int>]/3227 into void scanlab::warpScanKernel(const typename Op::Element*) [with Op = scanlab::Add<int>]/3300.
/b/src/student/scan.cuh:68:30: optimized:  Inlined typename Op::Element scanlab::scanIncWarp(typename Op::Element*, unsigned int) [with Op = Add<int>]/3226 into void scanlab::scanBlocksKernel(const typename Op::Element*) [with Op = scanlab::Add<int>]/3400.
/b/src/student/warp_scan.cuh:31:47: optimized:  Inlined typename Op::Element scanlab::baseline::scanIncWarpSequential(typename Op::Element*, unsigned int) [with Op = scanlab::Add<int>]/3231 into void scanlab::scanBlocksKernel(const typename Op::Element*) [with Op = scanlab::Add<int>]/3400.
"""
FILES = {f"/b/src/student/{n}": f"alice/{n}" for n in ("warp_scan.cuh", "reduce.cuh", "scan.cuh")}
KERNELS = {"alice/warp_scan.cuh": ("scanIncWarp",), "alice/reduce.cuh": ("reduceBlocksKernel",),
           "alice/scan.cuh": ("scanBlocksKernel",)}


def test_function_keys_merge_instantiations_clones_and_lambdas():
    key = code_rules.function_key
    assert key("void scanlab::f<Add<int>, 8>(int*) [clone .part.0]") == "scanlab::f"
    assert key("T scanlab::baseline::seq(T*, unsigned int) [with T = int]") == "scanlab::baseline::seq"
    assert key("scanlab::k<A>(int)::{lambda(int)#1}::operator()(int) const") == "scanlab::k"
    assert key("decltype (auto) scanlab::withTask(Task, F&&) [with F = int]") == "scanlab::withTask"
    assert key("warpScanKernel.isra") == "warpScanKernel"
    # A grading build's placeholders have internal linkage (harness/baselines.cuh): g++'s
    # report and nvcc's PTX spell them so.
    assert key("T scanlab::baseline::{anonymous}::seq(T*) [with T = int]") == "scanlab::baseline::seq"
    assert key("_INTERNAL_efc96df8_15_student_unit_cu_0bd1a485::scanlab::Add<int>::Element "
               "_INTERNAL_efc96df8_15_student_unit_cu_0bd1a485::scanlab::baseline::(anonymous namespace)"
               "::seq<_INTERNAL_efc96df8_15_student_unit_cu_0bd1a485::scanlab::Add<int> >(int*, unsigned int)"
               ) == "scanlab::baseline::seq"


def test_gcc_report_gives_the_calls_it_inlined_with_their_sites():
    calls = code_rules.gcc_inline_calls(GCC_REPORT)
    assert code_rules.Call("scanlab::reduceBlocksKernel", "scanlab::baseline::reduceBlocksSequential",
                           "/b/src/student/reduce.cuh", 58, True) in calls
    # A short name (`warpScanKernel.isra/3300`) is named in full by its node number.
    assert any(c.caller == "scanlab::warpScanKernel" and c.callee.endswith("scanIncWarpSequential")
               for c in calls)


def test_a_task_reaching_the_placeholder_is_found_with_the_line():
    found = code_rules.placeholder_calls(code_rules.gcc_inline_calls(GCC_REPORT), KERNELS, FILES)
    # warp scan: scanIncWarp lives on inlined in the harness's warpScanKernel.
    assert {p: (c.file, c.line) for p, c in found.items()} == {
        "alice/warp_scan.cuh": ("alice/warp_scan.cuh", 31), "alice/reduce.cuh": ("alice/reduce.cuh", 58)}
    # Task 3 uses the placeholder warp scan of task 1's file: task 1's placeholder, not task 3's.
    assert "alice/scan.cuh" not in found
    message = code_rules.placeholder_message("alice/reduce.cuh", found["alice/reduce.cuh"])
    assert message.startswith("alice/reduce.cuh:58 calls") and "baseline::reduceBlocksSequential" in message


def test_a_placeholder_borrowed_through_another_file_counts_for_the_task_that_reaches_it():
    # scan.cuh calls a helper of warp_scan.cuh that wraps the look-back placeholder;
    # scanIncWarp itself does not: the placeholder is task 3's.
    report = ("/b/src/student/warp_scan.cuh:40:5: optimized:  Inlining void scanlab::baseline::scanInOneBlock(int*)/10"
              " into void scanlab::myScan(int*)/11.\n"
              "/b/src/student/scan.cuh:70:5: optimized:  Inlining void scanlab::myScan(int*)/11"
              " into void scanlab::scanBlocksKernel(int*)/12.\n")
    found = code_rules.placeholder_calls(code_rules.gcc_inline_calls(report), KERNELS, FILES)
    assert set(found) == {"alice/scan.cuh"}


def test_another_tasks_file_that_is_not_the_students_is_never_charged():
    # A task build with only scan.cuh the student's: warp_scan.cuh is a stand-in (the
    # handout's placeholder, say) whose scanIncWarp calls the placeholder, inlined or not.
    own = {"/b/src/student/scan.cuh": "alice/scan.cuh"}
    every = {"warp_scan.cuh": ("scanIncWarp",), "reduce.cuh": ("reduceBlocksKernel",),
             "scan.cuh": ("scanBlocksKernel",)}
    inlined = code_rules.gcc_inline_calls(GCC_REPORT)
    assert code_rules.placeholder_calls(inlined, {"alice/scan.cuh": ("scanBlocksKernel",)}, own, every) == {}
    called = [code_rules.Call("scanlab::scanBlocksKernel", "scanlab::scanIncWarp", "/b/src/student/scan.cuh", 68),
              code_rules.Call("scanlab::scanIncWarp", "scanlab::baseline::scanIncWarpSequential",
                              "/b/src/contract/student/warp_scan.cuh", 31)]
    assert code_rules.placeholder_calls(called, {"alice/scan.cuh": ("scanBlocksKernel",)}, own, every) == {}


def test_no_call_no_placeholder_and_calls_not_inlined_count():
    assert code_rules.placeholder_calls([], KERNELS, FILES) == {}
    not_inlined = [code_rules.Call("scanlab::reduceBlocksKernel", "scanlab::helper"),
                   code_rules.Call("scanlab::helper", "scanlab::baseline::reduceBlocksSequential")]
    found = code_rules.placeholder_calls(not_inlined, KERNELS, FILES)
    assert set(found) == {"alice/reduce.cuh"} and found["alice/reduce.cuh"].line == 0
    placed = code_rules.placed(found["alice/reduce.cuh"], "int a;\n// x\n  baseline::reduceBlocksSequential<Op>(in);\n")
    assert placed.line == 3


def _ptx_string(label: str, text: str) -> str:
    # nvcc's way: 40 bytes a line, the 0 last.
    data = [str(b) for b in text.encode()] + ["0"]
    return f"{label}:\n" + "".join(".b8 " + ",".join(data[i:i + 40]) + "\n" for i in range(0, len(data), 40))


PTX = (""".version 8.8
.visible .entry _ZN7scanlab18reduceBlocksKernelIiLi8EEEvPKiPi(
{
	.loc	1 90 0
	.loc	1 58 41, function_name $L__info_string0, inlined_at 1 120 4
	.loc	2 47 9, function_name $L__info_string1, inlined_at 1 58 41
	ret;
}
.visible .entry _ZN7scanlab16scanBlocksKernelIiEEvPi(
{
	.loc	3 30 1
	call.uni _ZN7scanlab6helperEv, ();
	ret;
}
.func _ZN7scanlab6helperEv()
{
	ret;
}
	.file	1 "/b/src/student/reduce.cuh"
	.file	2 "/b/src/harness/baselines.cuh"
	.file	3 "/b/src/student/scan.cuh"
.section .debug_str
{
""" + _ptx_string("$L__info_string0", "_ZN7scanlab6myFoldIiEEvPi")
       + _ptx_string("$L__info_string1", "_ZN7scanlab8baseline22reduceBlocksSequentialIiEEvPKi") + "}\n")


@pytest.mark.skipif(not shutil.which("c++filt"), reason="no c++filt")
def test_ptx_gives_the_inlined_calls_with_their_sites_and_the_calls():
    calls = code_rules.ptx_calls(PTX)
    assert code_rules.Call("scanlab::reduceBlocksKernel", "scanlab::baseline::reduceBlocksSequential",
                           "/b/src/student/reduce.cuh", 58, True) in calls
    # A call not inlined, nvcc's way (the callee on the next line), at the last .loc.
    assert code_rules.Call("scanlab::scanBlocksKernel", "scanlab::helper", "/b/src/student/scan.cuh", 30) in calls
    found = code_rules.placeholder_calls(calls, KERNELS, FILES)
    assert {p: c.line for p, c in found.items()} == {"alice/reduce.cuh": 58}


def test_forbidden_references_are_decided_by_the_symbol_not_the_name():
    allowed = RULES.allowed_calls
    for name in ("fopen", "system", "socket", "getenv", "cudaMalloc", "signal", "send", "_Exit",
                 "std::basic_ofstream<char, std::char_traits<char> >::open(char const*)"):
        assert code_rules.forbidden_reference(name, allowed), name
    for name in ("printf", "__assert_fail", "sqrtf", "memcpy", "cudaLaunchKernel", "std::__throw_bad_alloc()"):
        assert code_rules.forbidden_reference(name, allowed) == "", name
