// The suite test compiled with g++ for the CPU emulator: the same source as the GPU one.
#include "test_suite.cu"
