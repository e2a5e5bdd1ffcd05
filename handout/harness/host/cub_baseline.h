// scanlab harness: students, do not edit (your code goes in student/); maintainers edit it here.
//
// CUB's single-pass scan (cub::DeviceScan), the state of the art that task 4 is
// compared with: the "cub" baseline of `run --time --baselines`. It is compiled only
// into drivers built with SCANLAB_CUB_BASELINE (the grader's reference driver and the
// repository's scanlab-reference; CMake option of the same name), in a translation unit
// of its own (harness/host/cub_baseline.cu), so that building your code never pays for it.
#pragma once
#include <cstddef>

namespace scanlab::baseline {

// Launches CUB's inclusive scan of n elements with Op (asynchronously). `temp` of
// `tempBytes` bytes; with temp == nullptr only sets tempBytes to the size it needs.
template <class Op>
void cubInclusiveScan(void* temp, size_t& tempBytes, const typename Op::Element* in,
                      typename Op::Element* out, size_t n);

}  // namespace scanlab::baseline
