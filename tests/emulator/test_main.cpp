// Catch2 main of the emulator tests. Catch2's own SIGSEGV handler is off: the emulator
// turns faults inside kernels into cudaErrorIllegalAddress, which the tests check.
#define CATCH_CONFIG_MAIN
#define CATCH_CONFIG_NO_POSIX_SIGNALS
#include <catch2/catch.hpp>
