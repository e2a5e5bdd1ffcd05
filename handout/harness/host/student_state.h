// scanlab harness: students, do not edit (your code goes in student/); maintainers edit it here.
//
// The student unit's writable globals, put back as they were when the program was loaded
// before every launch of the student's kernels (TaskRunner::clearScratch, harness/host/run.h,
// and the applications): a __device__ variable, a function-scope static, a counter or a
// memo cannot carry anything from one launch to the next. So a kernel may keep state
// within one launch of its task (the kernels of one launch run in order), never across.
// The harness does it, outside the student unit: the student's code cannot opt out.
//
// - CPU emulator: the student unit's .data and .bss are one section of the program
//   (emulator/student_state.ld, linked into every program with a student unit); the
//   first restore() copies it, every restore() copies it back.
// - GPU: the writable globals of the student unit's device module (.nv.global,
//   .nv.global.init), named in the program's own ELF section `.scanlab.device_state`
//   (the grader adds it to the linked program with objcopy, from the compiled device
//   code: grader/grading/checks/object_code.py): one name a line; `? name` for one that
//   is restored if the driver finds it (string literals). Each is found in the module of
//   the student unit's kernels (an anchor kernel of harness/host/student_unit.cu:
//   cudaGetFuncBySymbol, cuFuncGetModule, cuModuleGetGlobal), copied to host memory,
//   where device code cannot reach it, at the first restore() and copied back at every
//   one. A name the driver cannot find is an error: state that cannot be restored is not
//   run. A program without that section (the student's own GPU build) restores nothing.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness/host/program_section.h"
#include "harness/host/student_api.h"
#include "harness/platform.cuh"
#include "harness/runtime.cuh"

#if defined(__CUDACC__)
#include <cuda.h>
#else
// The bounds of the student unit's data (emulator/student_state.ld).
extern "C" char scanlab_student_state_begin[];
extern "C" char scanlab_student_state_end[];
#endif

namespace scanlab {

#if !defined(__CUDACC__)
// Copies the student unit's data section. In an AddressSanitizer build of the emulator
// (tests/handout/check_emu_asan.sh) the section also holds ASan's red zones between the
// variables: there the copy goes byte by byte, uninstrumented and through volatile (so the
// compiler cannot turn it into a memcpy that ASan intercepts), and is no overflow.
#if defined(__SANITIZE_ADDRESS__)
__attribute__((no_sanitize_address)) inline void copyStudentData(void* to, const void* from, size_t n) {
    auto* dst = static_cast<volatile unsigned char*>(to);
    auto* src = static_cast<const volatile unsigned char*>(from);
    for (size_t i = 0; i < n; ++i) dst[i] = src[i];
}
#else
inline void copyStudentData(void* to, const void* from, size_t n) { std::memcpy(to, from, n); }
#endif
#endif

class StudentState {
  public:
    // Puts every region back as the first call found it (the first call takes the copy:
    // it comes before any launch of the student's kernels).
    void restore() {
        if (!taken_) take();
        for (const Region& r : regions_) {
#if defined(__CUDACC__)
            checkCuda(cudaMemcpy(r.at, r.loaded.data(), r.loaded.size(), cudaMemcpyHostToDevice),
                      "restoring the student's device variables");
#else
            copyStudentData(r.at, r.loaded.data(), r.loaded.size());
#endif
        }
    }

  private:
    struct Region {
        std::string name;
        void* at;
        std::vector<unsigned char> loaded;
    };

    void take() {
        taken_ = true;
#if defined(__CUDACC__)
        const std::vector<std::pair<std::string, bool>> names = listedNames();
        if (names.empty()) return;
        CUmodule module = studentModule();
        using GetGlobal = CUresult (*)(CUdeviceptr*, size_t*, CUmodule, const char*);
        auto getGlobal = reinterpret_cast<GetGlobal>(driverFunction("cuModuleGetGlobal"));
        for (const auto& [name, required] : names) {
            CUdeviceptr at = 0;
            size_t bytes = 0;
            if (getGlobal(&at, &bytes, module, name.c_str()) != CUDA_SUCCESS || at == 0) {
                if (!required) continue;
                throw CudaError("the student's device variable `" + name + "` cannot be found to be "
                                "restored before each launch: not run");
            }
            Region r{name, reinterpret_cast<void*>(at), std::vector<unsigned char>(bytes)};
            if (bytes > 0)
                checkCuda(cudaMemcpy(r.loaded.data(), r.at, bytes, cudaMemcpyDeviceToHost),
                          "reading the student's device variables");
            regions_.push_back(std::move(r));
        }
#else
        const size_t bytes = size_t(scanlab_student_state_end - scanlab_student_state_begin);
        if (bytes == 0) return;
        Region r{"student unit data", scanlab_student_state_begin, std::vector<unsigned char>(bytes)};
        copyStudentData(r.loaded.data(), scanlab_student_state_begin, bytes);
        regions_.push_back(std::move(r));
#endif
    }

#if defined(__CUDACC__)
    // The program's section `.scanlab.device_state`: (name, required) a line.
    static std::vector<std::pair<std::string, bool>> listedNames() {
        std::vector<std::pair<std::string, bool>> names;
        std::string text = programSection(".scanlab.device_state");
        for (size_t at = 0; at < text.size();) {
            const size_t end = std::min(text.find('\n', at), text.size());
            const std::string line = text.substr(at, end - at);
            at = end + 1;
            if (line.empty()) continue;
            if (line.rfind("? ", 0) == 0)
                names.emplace_back(line.substr(2), false);
            else
                names.emplace_back(line, true);
        }
        return names;
    }

    static void* driverFunction(const char* name) {
        void* fn = nullptr;
        cudaDriverEntryPointQueryResult found{};
#if CUDART_VERSION >= 12050
        checkCuda(cudaGetDriverEntryPointByVersion(name, &fn, 12000, cudaEnableDefault, &found), name);
#else
        checkCuda(cudaGetDriverEntryPoint(name, &fn, cudaEnableDefault, &found), name);
#endif
        if (fn == nullptr || found != cudaDriverEntryPointSuccess)
            throw CudaError(std::string("the CUDA driver has no ") + name);
        return fn;
    }

    static CUmodule studentModule() {
        cudaFunction_t kernel = nullptr;
        checkCuda(cudaGetFuncBySymbol(&kernel, student::deviceModuleAnchor()), "cudaGetFuncBySymbol");
        using GetModule = CUresult (*)(CUmodule*, CUfunction);
        auto getModule = reinterpret_cast<GetModule>(driverFunction("cuFuncGetModule"));
        CUmodule module = nullptr;
        if (getModule(&module, reinterpret_cast<CUfunction>(kernel)) != CUDA_SUCCESS || module == nullptr)
            throw CudaError("the student unit's device module cannot be found");
        return module;
    }
#endif

    bool taken_ = false;
    std::vector<Region> regions_;
};

// The one instance of the program.
inline StudentState& studentState() {
    static StudentState state;
    return state;
}

}  // namespace scanlab
