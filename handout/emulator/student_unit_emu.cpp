// The student unit (harness/host/student_unit.cu) for the CPU emulator, compiled by a plain
// C++ compiler like driver_emu.cpp.
#include "harness/host/student_unit.cu"
