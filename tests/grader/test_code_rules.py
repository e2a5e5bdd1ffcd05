"""The code rules (handout/tools/code_rules.py, the one implementation the grader and the
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
from grader.grading.checks.rules_engine import code_rules, rules_of

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
    assert rules_found(HEAD + 'const char* s = "fopen(x)";\n' + TAIL) == set()
    assert "files-processes-network" in rules_found(HEAD + "auto p = (std::getenv)(s);\n" + TAIL)


def test_placeholders_and_constant_tables_are_found_in_the_student_lines():
    text = HEAD + "int a;\nreturn (scanlab :: baseline :: f<Op>(sh));\n" + TAIL + "baseline::g();\n"
    assert code_rules.placeholder_lines(text, STUDENT) == {"student/reduce.cuh": 2}
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
    assert r.returncode == 1 and "files-processes-network" in r.stdout, r.stdout
    crlf = scan.replace(b"\n", b"\r\n")
    r = _cli(_student_dir(tmp_path / "b", "scan.cuh", crlf))
    assert r.returncode == 0 and "no violation" in r.stdout, r.stdout
    passwd = scan.replace(b"#include <cstddef>", b'#include <cstddef>\n#include "/etc/passwd"', 1)
    r = _cli(_student_dir(tmp_path / "c", "scan.cuh", passwd))
    assert r.returncode == 1 and "/etc/passwd" in r.stdout
    assert "root:" not in r.stdout + r.stderr
