// The conformance test (device_functions.cu) for the CPU emulator, compiled by g++.
#include "device_functions.cu"
