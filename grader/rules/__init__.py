"""The code rules: what a student file may contain, checked on what the compiler saw
(code_rules.py), the compiled program's calls (compiled_program.py) and the one C++ lexer
(cpp_text.py). Standard library only and importing nothing else of the grader: the
handout's tools/ holds copies that tools/make_handout.py writes, for `make rules`."""
