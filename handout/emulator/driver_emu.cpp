// The scanlab driver for the CPU emulator: the unchanged harness/host/driver.cu, compiled
// by a plain C++ compiler. Without __CUDACC__, harness/platform.cuh takes the CUDA
// names from emulator/cuda_emu.h, and kernels run on CPU threads.
#include "harness/host/driver.cu"
