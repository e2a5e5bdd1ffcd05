// scanlab harness: students, do not edit. The applications call your kernels; your code goes in student/.
//
// What an application is: a program that does real work with your reduce or scan,
// run on the GPU or on the CPU emulator through the same door as the tasks
// (harness/host/student_api.h), and checked on the CPU. Its run and its check are apart:
// `scanlab app` runs it (and checks it, for you), the grader runs it with your build
// and checks the output file with the reference's `scanlab verify-app`.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "harness/generated/assignment.h"
#include "harness/host/student_api.h"
#include "harness/host/student_state.h"
#include "harness/host/tasks.h"
#include "harness/policy.cuh"
#include "harness/runtime.cuh"
#include "harness/tasks/launch.cuh"

namespace scanlab::apps {

struct AppConfig {
    size_t n = 0;          // the application's size (intervals, table rows, elements)
    unsigned block = 256;  // threads per block of your kernels
    uint64_t seed = 1;     // input seed (compaction)
};

// What the device part produced: raw bytes (what --output writes and verify-app
// reads), the time of the part that runs your kernels, and the bytes it moves.
struct AppOutput {
    std::vector<unsigned char> bytes;
    double ms = 0;
    double bytesMoved = 0;
    std::string needs;  // set where a stub was found: "task 3 (scan-exclusive)", "the exercise ..."
};

struct AppVerdict {
    bool passed = false;
    std::string message;                                      // why it failed
    std::vector<std::pair<std::string, std::string>> figures;  // what to look at
};

struct App {
    const char* name;
    const char* summary;
    Task uses;              // the driver task whose kernels it calls
    const char* exercise;   // the [[exercise]] of the manifest it runs too, or nullptr
    size_t defaultN;        // on a GPU
    size_t emulatorN;       // on the CPU emulator
    AppOutput (*run)(const AppConfig&);
    AppVerdict (*check)(const AppConfig&, const std::vector<unsigned char>&);
};

template <class T>
std::vector<unsigned char> asBytes(const std::vector<T>& values) {
    std::vector<unsigned char> bytes(values.size() * sizeof(T));
    if (!bytes.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
    return bytes;
}

// The values of an output file, or none when its size is not a whole number of them.
template <class T>
bool fromBytes(const std::vector<unsigned char>& bytes, size_t count, std::vector<T>& values) {
    if (bytes.size() != count * sizeof(T)) return false;
    values.resize(count);
    if (count) std::memcpy(values.data(), bytes.data(), bytes.size());
    return true;
}

// One grid-stride thread per element: what the map and scatter kernels use.
inline unsigned mapBlocks(size_t n, unsigned block) {
    const size_t blocks = (n + block - 1) / block;
    return unsigned(blocks < kMaxBlocks ? blocks : kMaxBlocks);
}

// Your kernels for `task` over device arrays.
template <class Op>
void runStudentTask(Task task, const DeviceBuffer<typename Op::Element>& in,
                    DeviceBuffer<typename Op::Element>& out, unsigned block) {
    Workspace<Op> ws;
    studentState().restore();  // as the program loaded them (harness/host/student_state.h)
    student::launchTask<Op>(task, in.data(), in.size(), out.data(), block, ws.forRun(in.size(), block));
    deviceSynchronize(taskInfo(task).name);
}

// The [[exercise]] named `name` (data/assignment.toml); the application that runs it
// names it, so a renamed exercise fails loudly here rather than drifting.
inline const Exercise& exercise(const std::string& name) {
    for (const Exercise& e : kExercises)
        if (name == e.name) return e;
    throw std::logic_error("no [[exercise]] named " + name + " in data/assignment.toml");
}

std::string formatG(double x, int digits = 6);

}  // namespace scanlab::apps
