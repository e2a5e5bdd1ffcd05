// The reference unit (reference_unit.cu) for the CPU emulator, compiled by a plain C++
// compiler as emulator/student_unit_emu.cpp is.
#include "harness/contract/reference/reference_unit.cu"
