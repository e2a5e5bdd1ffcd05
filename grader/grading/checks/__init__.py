"""The checks of a submission's code: the code rules run on the compiler's view before
anything is compiled (rules_engine.py, the handout's one implementation; forbidden.py
reads a file as the compiler's first phases do), what the compiler made of it
(compiled.py, object_code.py), and compute-sanitizer on its GPU build (sanitizer.py)."""
