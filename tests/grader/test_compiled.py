"""The checks on what the compiler saw and made (grader/grading/checks/compiled.py): the rubric's rules
over the preprocessed student unit, and the symbols of its object file."""
from __future__ import annotations

from pathlib import Path

import pytest

from conftest import REPO
from grader.grading.checks.compiled import (Symbol, check_symbols, command_variant, scan_preprocessed,
                             split_by_origin, unwrap_parenthesized_names)
import dataclasses
import re

from grader.config.rubric import ForbiddenRule, load_rubric

RUBRIC = load_rubric(REPO / "data" / "rubric.toml")
RULES = RUBRIC.forbidden
# A text rule on names, to show what the text rules see (expanded macros, unwrapped
# parentheses, no literals). The rubric has none on names: calls are decided on the
# compiled code (issue 45).
NAMES = dataclasses.replace(RULES, rules=RULES.rules + (ForbiddenRule(
    "names", re.compile(r"\b(fopen|getenv)\s*\("), "names fopen or getenv"),))
STUDENT = {"/b/src/student/reduce.cuh": "student/reduce.cuh"}

PREPROCESSED = """\
# 1 "/b/src/harness/host/student_unit.cu"
# 1 "/usr/include/stdio.h" 1 3
extern FILE* fopen(const char*, const char*);
# 2 "/b/src/harness/host/student_unit.cu" 2
# 1 "/b/src/harness/tasks/reduce_task.cuh" 1
# 12 "/b/src/student/reduce.cuh" 1
namespace scanlab {
inline auto* const kSneak = fopen("/tmp/x", "w");

inline const char* kPath = ( ( std :: getenv ) )("PATH");
const char* kText = "system(\\"rm\\")";
# 40 "/b/src/harness/tasks/reduce_task.cuh" 2
int unrelated = system("harness line, not the student's");
"""


def test_parenthesized_names_are_unwrapped_offsets_kept():
    code = "x = ((std::getenv))(p); (a)(b); (::_Exit)(0); f(y);"
    out = unwrap_parenthesized_names(code)
    assert len(out) == len(code)
    assert " ".join(out.split()) == "x = std::getenv (p); a (b); ::_Exit (0); f(y);"


def test_only_the_student_lines_are_kept_with_their_line_numbers():
    parts = split_by_origin(PREPROCESSED, STUDENT)
    assert [p.path for p in parts] == ["student/reduce.cuh"]
    lines = dict(parts[0].lines)
    assert lines[12] == "namespace scanlab {"
    assert "fopen" in lines[13] and "getenv" in lines[15]
    assert all("harness line" not in text for _, text in parts[0].lines)


def test_rules_see_macro_expanded_and_parenthesized_calls():
    source = "\n" * 11 + "namespace scanlab {\nSNEAK\n\nPATH_OF_IT\nTEXT\n"
    found = scan_preprocessed(PREPROCESSED, STUDENT, {"student/reduce.cuh": source}, NAMES)
    rules = {(v.line, v.rule) for v in found}
    assert (13, "names") in rules      # fopen(...) after expansion
    assert (15, "names") in rules      # ((std::getenv))(...)
    assert all(v.line != 16 for v in found)              # inside a string literal
    assert all(v.file == "student/reduce.cuh" for v in found)
    assert next(v for v in found if v.line == 13).excerpt == "SNEAK"
    assert all("macros expanded" in v.message for v in found)


def test_the_preprocess_commands_are_the_compile_command_with_E_and_M():
    argv = ["nvcc", "-I/s", "-x", "cu", "-c", "/s/harness/host/student_unit.cu", "-o", "CMakeFiles/u.o"]
    assert command_variant(argv, "-E", "/t/u.i") == ["nvcc", "-I/s", "-x", "cu", "-E",
                                                     "/s/harness/host/student_unit.cu", "-o", "/t/u.i"]
    # -M: the make rule of the files it reads; -MG (a missing header listed) where the
    # compiler takes it (nvcc does not).
    assert command_variant(argv, "-M", "/t/u.d")[-4:] == ["-MF", "/t/u.d", "-MT", "unit"]
    assert "-MG" in command_variant(["c++", "-c", "u.cpp", "-o", "u.o"], "-M", "/t/u.d")
    assert "-MG" not in command_variant(argv, "-M", "/t/u.d")

def sym(name: str, mangled: str = "", kind: str = "FUNC", bind: str = "GLOBAL", section: str = ".text",
        writable: bool = False) -> Symbol:
    return Symbol(name, mangled or "_Z" + name, kind, bind, section, writable)


def undefined(name: str, mangled: str = "") -> Symbol:
    return Symbol(name, mangled or name, "NOTYPE", "GLOBAL", "", False)


SOURCES = {"student/reduce.cuh": "namespace scanlab {\n__device__ int gCount;\nvoid helper();\n}\n"}


def rules_of(found) -> set[tuple[str, str]]:
    return {(v.rule, v.message.split("`")[1]) for v in found}


def test_calls_outside_the_allowlist_are_refused():
    student = [undefined("fopen"), undefined("cudaMalloc"), undefined("__cudaRegisterFunction"),
               undefined("scanlab::emu::detail::syncwarp(scanlab::emu::detail::Site, unsigned int)",
                         "_ZN7scanlab3emu6detail8syncwarpENS1_4SiteEj"),
               undefined("sqrtf"), undefined("printf"), undefined("__cxa_atexit"),
               undefined("operator new(unsigned long)", "_Znwm"),
               undefined("std::allocator<char>::allocator()", "_ZNSaIcEC1Ev"),
               undefined("std::basic_ofstream<char, std::char_traits<char> >::basic_ofstream()",
                         "_ZNSt14basic_ofstreamIcSt11char_traitsIcEEC1Ev")]
    found = check_symbols(student, [], SOURCES, RULES, cuda=True)
    assert rules_of(found) == {("symbol-call", "fopen"), ("symbol-call", "cudaMalloc"),
                               ("symbol-call", "__cxa_atexit"),
                               ("symbol-call", "std::basic_ofstream<char, std::char_traits<char> >"
                                               "::basic_ofstream()")}
    atexit = next(v for v in found if "__cxa_atexit" in v.message)
    assert "static object with a destructor" in atexit.message
    # nvcc's own code refers to CUDA's launch and registration (where from is object_code's
    # check); on the emulator nothing of the toolchain does, so a reference is refused by
    # the symbol itself, as `make rules` does (issue 45). `exit` stays object_code's.
    launch = [undefined("__cudaRegisterFunction"), undefined("cudaLaunchKernel"), undefined("exit")]
    assert check_symbols(launch, [], SOURCES, RULES, cuda=True) == []
    assert rules_of(check_symbols(launch, [], SOURCES, RULES)) == {
        ("symbol-call", "__cudaRegisterFunction"), ("symbol-call", "cudaLaunchKernel")}


def test_state_the_harness_restores_is_allowed_and_the_rest_refused_on_its_line():
    restored = [sym("scanlab::gCount", "_ZN7scanlab6gCountE", "OBJECT", section=".bss", writable=True),
                sym("guard variable for scanlab::gCount", "_ZGVN7scanlab6gCountE", "OBJECT",
                    section=".bss", writable=True),
                sym("scanlab::gTemplate<int>", "_ZN7scanlab9gTemplateIiEE", "OBJECT", "WEAK",
                    ".bss._ZN7scanlab9gTemplateIiEE", True),
                sym("scanlab::kTable", "_ZN7scanlab6kTableE", "OBJECT", section=".rodata"),
                sym("scanlab::scanlabNotImplementedFlag", "_ZN7scanlabL25scanlabNotImplementedFlagE",
                    "OBJECT", "LOCAL", ".bss", True),
                sym("__cudaFatCubinHandle", "__cudaFatCubinHandle", "OBJECT", "LOCAL", ".bss", True),
                sym("vtable for scanlab::CudaError", "_ZTVN7scanlab9CudaErrorE", "OBJECT", "WEAK",
                    ".data.rel.ro", False)]
    # On the emulator, the unit's .data and .bss are put back before every launch.
    assert check_symbols(restored, [], SOURCES, RULES) == []
    # (The emulator's __shared__ memory is thread_local: not a variable of this rule.)
    shared = sym("scanlab::tile", "_ZZN7scanlab6kernelEvE4tile", "TLS", "LOCAL", ".tbss", True)
    assert check_symbols([shared], [], SOURCES, RULES) == []
    # What restoration cannot undo: a section of its own; on the GPU build, a host
    # variable (the GPU restores device memory).
    own = sym("scanlab::gCount", "_ZN7scanlab6gCountE", "OBJECT", section="keep_me", writable=True)
    found = check_symbols([own], [], SOURCES, RULES)
    assert [(v.rule, v.line) for v in found] == [("state", 2)], found
    assert "section of its own" in found[0].message and found[0].excerpt == "__device__ int gCount;"
    found = check_symbols(restored[:1], [], SOURCES, RULES, cuda=True)
    assert [(v.rule, v.line) for v in found] == [("state", 2)] and "host variable" in found[0].message
    # The device variable's shadow in nvcc's host object is restored on the device.
    assert check_symbols(restored[:1], [], SOURCES, RULES, frozenset({"scanlab::gCount"}), cuda=True) == []
    hidden = sym("scanlab::(anonymous namespace)::gCount", "_ZN7scanlab12_GLOBAL__N_16gCountE",
                 "OBJECT", "LOCAL", "keep_me", True)
    assert [v.line for v in check_symbols([hidden], [], SOURCES, RULES)] == [2]


def test_a_destructor_registered_at_exit_is_said_on_the_static_objects_line():
    student = [undefined("__cxa_atexit"),
               sym("scanlab::gCount", "_ZN7scanlab6gCountE", "OBJECT", section=".bss", writable=True)]
    found = check_symbols(student, [], SOURCES, RULES)
    assert [(v.rule, v.line) for v in found] == [("symbol-call", 2)], found
    assert "`scanlab::gCount`" in found[0].message and "__cxa_atexit" in found[0].message


def test_replacing_what_the_harness_defines_or_uses_is_refused():
    check = "_ZN7scanlab11checkOutputINS_3AddIiEEEENS_11CheckResultE"
    harness = [sym("scanlab::checkOutput<...>", check, bind="WEAK"),
               undefined("cudaEventElapsedTime", "cudaEventElapsedTime"),
               undefined("scanlab::student::wasNotImplemented()", "_ZN7scanlab7student17wasNotImplementedEv"),
               sym("scanlab::inlineHelper()", "_ZN7scanlab12inlineHelperEv", bind="WEAK")]
    student = [sym("scanlab::checkOutput<...>", check, bind="GLOBAL"),            # strong: wins
               sym("scanlab::inlineHelper()", "_ZN7scanlab12inlineHelperEv", bind="WEAK"),  # harness's kept
               sym("cudaEventElapsedTime", "cudaEventElapsedTime"),               # C linkage
               sym("scanlab::student::wasNotImplemented()", "_ZN7scanlab7student17wasNotImplementedEv"),
               sym("scanlab::helper()", "_ZN7scanlab6helperEv")]                  # the student's own
    found = check_symbols(student, harness, SOURCES, RULES)
    assert rules_of(found) == {("symbol-define", "scanlab::checkOutput<...>"),
                               ("symbol-define", "cudaEventElapsedTime")}


def test_a_finding_without_a_line_goes_on_every_student_file():
    sources = {"student/a.cuh": "int x;\n", "student/b.cuh": "int y;\n"}
    found = check_symbols([undefined("system")], [], sources, RULES)
    assert sorted(v.file for v in found) == ["student/a.cuh", "student/b.cuh"]
    assert all(v.line == 0 for v in found)


# ---- on real builds (the emulator): the fixtures that hide their calls ----------------------

HIDDEN = {  # fixture -> (task, rules its file must break, the sentinel it would write)
    # Calls are decided by what the compiled code refers to (its undefined symbols), however
    # the text spells them; a refused build is never run.
    "macro_fopen": ("warp-scan", {"symbol-call"}, "/tmp/scanlab-sentinel-macro_fopen"),
    "paren_getenv": ("reduce", {"symbol-call"}, None),
    "fnptr_system": ("scan", {"symbol-call"}, "/tmp/scanlab-sentinel-fnptr_system"),
    "paren_exit": ("reduce", {"symbol-call"}, None),
    "harness_override": ("reduce", {"symbol-define"}, None),
    # (A static object's destructor is registered with __cxa_atexit: restoring its bytes
    # would not undo that.)
    "exit_destructor": ("reduce", {"symbol-call"}, None),
}


@pytest.mark.parametrize("name", sorted(HIDDEN))
def test_hidden_calls_and_state_are_found_in_the_compiled_code(emulator, name):
    task, rules, sentinel = HIDDEN[name]
    result = emulator(name)
    tr = next(t for t in result.tasks if t.name == task)
    assert tr.status == "forbidden" and tr.points == 0, tr.message
    assert rules <= {v.rule for v in tr.violations}, [str(v) for v in tr.violations]
    assert all(v.file.endswith(tr.file) for v in tr.violations)
    assert any(v.line > 0 and v.excerpt for v in tr.violations)
    assert tr.cases == []          # nothing of it ran
    assert result.integration.verdict == "forbidden"
    if sentinel:
        assert not Path(sentinel).exists()


def test_a_cuda_runtime_call_the_emulator_does_not_declare_is_refused_not_a_build_failure():
    from grader.grading.checks.compiled import undeclared_runtime_calls
    errors = ("alice/scan.cuh:3:12: error: \u2018cudaStreamCreateWithFlags\u2019 was not declared in this "
              "scope; did you mean \u2018cudaEventCreateWithFlags\u2019?\n"
              "alice/scan.cuh:4:5: error: 'cudaMyOwnThing' was not declared in this scope\n"
              "alice/scan.cuh:5:5: error: 'helper' was not declared in this scope\n"
              "harness/x.cuh:9:1: error: 'cudaMalloc' was not declared in this scope\n")
    source = "a\nb\n    cudaStreamCreateWithFlags(&s, 1);\n    cudaMyOwnThing();\n    helper();\n"
    found = undeclared_runtime_calls(errors, {"alice/scan.cuh": source})
    assert [(v.line, v.rule) for v in found] == [(3, "symbol-call"), (4, "symbol-call")]
    assert "cudaStreamCreateWithFlags" in found[0].message and found[0].excerpt.startswith("cudaStream")
    # A name the student declared compiles: the compiler never calls it undeclared.
    assert undeclared_runtime_calls("alice/scan.cuh:5:5: error: expected ';'\n", {"alice/scan.cuh": source}) == []
