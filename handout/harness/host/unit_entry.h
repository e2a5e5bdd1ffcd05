// scanlab harness: students, do not edit (your code goes in student/); maintainers edit it here.
//
// A student unit built as a shared object (the grader's profiling run: one process for
// every timed task's build, harness/host/unit_loader.cu): student_api.h's functions as
// pointers, with the operator's types erased, behind the one symbol such an object
// exports, unitEntry. A static build (every driver, test and application) never calls it.
#pragma once
#include <cstddef>
#include <cstdint>

#include "harness/generated/assignment.h"

namespace scanlab::student {

struct UnitEntry {
    // student::launchTask<Op>, its element pointers and scratch (a const Scratch<Element>*)
    // untyped: the loader casts them back from the same headers.
    using LaunchTask = void (*)(Task task, const void* in, size_t n, void* out, unsigned blockSize,
                                const void* scratch);
    static constexpr unsigned kMaxOperators = 32;
    static constexpr unsigned kVersion = 2;   // the struct's layout: the loader checks it

    unsigned version;
    unsigned operators;                       // entries of the two arrays in use
    const char* operatorNames[kMaxOperators]; // OperatorTraits<Op>::kName
    LaunchTask launchTask[kMaxOperators];
    void (*launchSplitFlags)(const uint32_t*, size_t, int, int32_t*, unsigned);
    void (*launchSplitScatter)(const uint32_t*, const int32_t*, const int32_t*, size_t, int, uint32_t*,
                               unsigned);
    void (*resetNotImplemented)();
    bool (*wasNotImplemented)();
    int (*placeholderReached)();
};

// Defined by the student unit (harness/host/student_unit.cu).
UnitEntry unitEntry();

}  // namespace scanlab::student

// Called after every kernel launch (harness/tasks/launch.cuh) where the program defines it:
// the loader does, to tell its batch how many kernels each case launched (a profiler's list
// of launches is cut into cases by those counts). Weak: a static build has none, and the
// student unit keeps no count of its own.
extern "C" void scanlab_kernel_launched() __attribute__((weak));
// The launches so far, where the program counts them (the loader); else absent.
extern "C" unsigned long scanlab_kernel_launches() __attribute__((weak));
