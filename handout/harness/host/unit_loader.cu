// scanlab harness: students, do not edit (your code goes in student/); maintainers edit it here.
//
// The driver with its student units loaded at run time (CMake: scanlab_add_unit_loader,
// never in the student's build): the harness of driver.cu with student_api.h defined here,
// each call forwarded to the student unit of the call's task. The grader builds each task's
// student unit (its file alone, harness/host/student_unit.cu) as a shared object too, and
// runs the timed tasks of every task build in one process: Nsight Compute costs about a
// second a profiled process on an H100 (grader/grading/ncu.py).
//
// SCANLAB_UNITS="TASK=PATH;TASK=PATH;..." names the object of each driver task (`list tasks`);
// a task not named cannot run. Each object is opened RTLD_LOCAL and exports unitEntry alone
// (the linker's version script, scanlab_add_unit_library), so no symbol of one unit (a
// kernel, a helper, an instance of a template) can stand in for another's. The units' state
// is the state they were loaded with: the loader restores nothing (no
// `.scanlab.device_state`, harness/host/student_state.h), so it suits runs that launch each
// task once, as a profile does. batch's JSON lines say how many kernels each case
// launched ("kernels": scanlab_kernel_launched, harness/host/unit_entry.h).
#include <dlfcn.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <stdexcept>
#include <string>

#include "harness/generated/operators.cuh"
#include "harness/host/student_api.h"
#include "harness/host/unit_entry.h"
#include "harness/host/tasks.h"

namespace {
unsigned long launches = 0;
}

extern "C" void scanlab_kernel_launched() { ++launches; }
extern "C" unsigned long scanlab_kernel_launches() { return launches; }

namespace scanlab::student {
namespace {

// The units SCANLAB_UNITS names, opened on first use, by task.
class Units {
  public:
    static Units& get() {
        static Units units;
        return units;
    }

    const UnitEntry& of(Task task) const {
        const auto it = byTask_.find(task);
        if (it == byTask_.end())
            throw std::runtime_error(std::string("scanlab unit loader: no unit for task ") +
                                     kTasks[int(task)].name + " in SCANLAB_UNITS");
        return it->second;
    }

    template <class F>
    void forEach(F&& f) const {
        for (const auto& [task, entry] : byTask_) f(entry);
    }

  private:
    Units() {
        const char* list = std::getenv("SCANLAB_UNITS");
        std::map<std::string, UnitEntry> byPath;
        std::string rest = list != nullptr ? list : "";
        while (!rest.empty()) {
            const size_t end = std::min(rest.find(';'), rest.size());
            const std::string item = rest.substr(0, end);
            rest = end < rest.size() ? rest.substr(end + 1) : "";
            if (item.empty()) continue;
            const size_t eq = item.find('=');
            if (eq == std::string::npos)
                throw std::runtime_error("scanlab unit loader: '" + item + "' is not TASK=PATH");
            const Task task = parseTask(item.substr(0, eq)).task;
            const std::string path = item.substr(eq + 1);
            auto found = byPath.find(path);
            if (found == byPath.end()) found = byPath.emplace(path, open(path)).first;
            byTask_[task] = found->second;
        }
        if (byTask_.empty())
            throw std::runtime_error("scanlab unit loader: SCANLAB_UNITS names no unit (TASK=PATH;TASK=PATH;...)");
    }

    static UnitEntry open(const std::string& path) {
        void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (handle == nullptr)
            throw std::runtime_error("scanlab unit loader: cannot open " + path + ": " + dlerror());
        using Entry = UnitEntry (*)();
        auto entry = reinterpret_cast<Entry>(dlsym(handle, "_ZN7scanlab7student9unitEntryEv"));
        if (entry == nullptr)
            throw std::runtime_error("scanlab unit loader: " + path + " exports no scanlab::student::unitEntry");
        const UnitEntry e = entry();
        if (e.version != UnitEntry::kVersion)
            throw std::runtime_error("scanlab unit loader: " + path + " was built with another harness");
        return e;
    }

    std::map<Task, UnitEntry> byTask_;
};

const UnitEntry& firstUnit() {
    const UnitEntry* first = nullptr;
    Units::get().forEach([&](const UnitEntry& e) { first = first ? first : &e; });
    return *first;
}

}  // namespace

template <class Op>
void launchTask(Task task, const typename Op::Element* in, size_t n, typename Op::Element* out,
                unsigned blockSize, const Scratch<typename Op::Element>& scratch) {
    const UnitEntry& unit = Units::get().of(task);
    for (unsigned k = 0; k < unit.operators; ++k)
        if (std::strcmp(unit.operatorNames[k], OperatorTraits<Op>::kName) == 0)
            return unit.launchTask[k](task, in, n, out, blockSize, &scratch);
    throw std::runtime_error(std::string("scanlab unit loader: the unit of task ") + kTasks[int(task)].name +
                             " has no operator " + OperatorTraits<Op>::kName);
}

#define SCANLAB_INSTANTIATE_LAUNCH_TASK(Op)                                                 \
    template void launchTask<Op>(Task, const Op::Element*, size_t, Op::Element*, unsigned, \
                                 const Scratch<Op::Element>&);
SCANLAB_FOR_EACH_OPERATOR(SCANLAB_INSTANTIATE_LAUNCH_TASK)
#undef SCANLAB_INSTANTIATE_LAUNCH_TASK

void launchSplitFlags(const uint32_t* keys, size_t n, int bit, int32_t* isZero, unsigned blockSize) {
    firstUnit().launchSplitFlags(keys, n, bit, isZero, blockSize);
}

void launchSplitScatter(const uint32_t* keys, const int32_t* isZero, const int32_t* zerosBefore,
                        size_t n, int bit, uint32_t* out, unsigned blockSize) {
    firstUnit().launchSplitScatter(keys, isZero, zerosBefore, n, bit, out, blockSize);
}

void resetNotImplemented() {
    Units::get().forEach([](const UnitEntry& e) { e.resetNotImplemented(); });
}

bool wasNotImplemented() {
    bool any = false;
    Units::get().forEach([&](const UnitEntry& e) { any = e.wasNotImplemented() || any; });
    return any;
}

int placeholderReached() {
    int any = 0;
    Units::get().forEach([&](const UnitEntry& e) {
        if (const int id = e.placeholderReached()) any = id;
    });
    return any;
}

// Never asked for: the loader's program has no `.scanlab.device_state` to restore.
const void* deviceModuleAnchor() { return nullptr; }

}  // namespace scanlab::student
