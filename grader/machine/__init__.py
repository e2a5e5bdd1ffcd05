"""The machine the grader runs on: what it offers (detect.py: GPUs, nvcc, CMake, g++,
Boost.Context), the backends it can grade with (backend.py: CUDA and the CPU emulator,
what each builds, runs, times and cannot do), how its CPUs and GPUs are shared among
runs (slots.py), and `doctor` (doctor.py), which says what it can grade."""
