"""The machine the grader runs on: what it offers (detect.py: GPUs, nvcc, CMake, g++,
Boost.Context), how its CPUs and GPUs are shared among runs (slots.py), and `doctor`
(doctor.py), which says what it can grade."""
