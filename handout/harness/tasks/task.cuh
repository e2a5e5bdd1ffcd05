// scanlab harness: students, do not edit (your code goes in student/); maintainers edit it here.
//
// What a driver task is: one type, in the harness header of its student task
// (harness/tasks/<stem>_task.cuh, e.g. tasks/scan_task.cuh for student/scan.cuh), named by
// the `type` of its [[driver_task]] in data/assignment.toml. The generated
// harness/generated/task_list.cuh lists every such type (DriverTasks) and maps the Task
// enumerator to it (withTask); nothing else in the harness names a task, so a task
// whose type lacks a part below does not compile, and one the manifest does not list
// cannot be run at all.
//
// A task type T holds, as static members:
//
//   template <class Op>
//   static std::vector<typename Op::Element> reference(const std::vector<typename Op::Element>& in);
//       the sequential CPU version: what every output is checked against (harness/check.h,
//       with its float tolerance) and the "cpu-sequential" baseline. Its size is the
//       task's output size (the manifest's `output`; cpp.reference checks they agree).
//
//   static constexpr TimedCheck kTimedCheck;
//       how each timed repetition's output is checked (harness/host/timed_check.cuh): on the
//       device for the shapes it knows (a fold, a scan from the left), else on the host
//       against reference().
//
//   template <class Op, class Baselines>
//   static void baselines(Baselines& b);
//       times the task's baselines after "cpu-sequential", in the manifest's order:
//       b.time(name, launch) for each, b.notBuilt(name) for one this build leaves out
//       (see BaselineTimer, harness/host/run.h, for what else b gives).
//
// and, in the student unit only (between #if defined(SCANLAB_STUDENT_UNIT) and #endif,
// with the #include of its student file), its plan:
//
//   template <>
//   struct Plan<T> {
//       template <class Op>
//       static void launch(const typename Op::Element* in, size_t n, typename Op::Element* out,
//                          unsigned blockSize, const Scratch<typename Op::Element>& scratch);
//   };
//       the host side: how many blocks, and which of the student's kernels run in which
//       order (through launchKernel, so the CPU emulator runs them too).
//
// Why the plan is apart: the student files are compiled in a translation unit of their
// own (harness/host/student_unit.cu, harness/host/student_api.h); the harness's units include the
// same task headers for the reference, the check and the baselines, and must not see a
// line of student code.
#pragma once
#include <cstddef>
#include <vector>

#include "harness/generated/assignment.h"
#include "harness/host/reference.h"

namespace scanlab {

// How the harness checks a timed repetition (harness/host/timed_check.cuh).
struct TimedCheck {
    enum class Kind {
        Fold,  // one element: the fold of the whole input (reduce)
        Scan,  // a scan from the left, restarting every `restart` elements (0: never)
        Host,  // anything else: the output downloaded and checked against reference()
    };
    Kind kind;
    bool inclusive;
    unsigned restart;

    static constexpr TimedCheck fold() { return {Kind::Fold, true, 0}; }
    static constexpr TimedCheck scan(bool inclusive, unsigned restart = 0) {
        return {Kind::Scan, inclusive, restart};
    }
    // Exact for any task, but one download and one CPU reference per repetition:
    // the large sizes of a timed run take seconds more.
    static constexpr TimedCheck onHost() { return {Kind::Host, true, 0}; }
};

// The reference and timed check of a scan from the left, inclusive or exclusive: what
// the scan tasks (3 and 4) share; each still names its own baselines.
template <bool kInclusive>
struct ScanFromLeft {
    template <class Op>
    static std::vector<typename Op::Element> reference(const std::vector<typename Op::Element>& in) {
        return referenceScan<Op>(in, kInclusive);
    }

    static constexpr TimedCheck kTimedCheck = TimedCheck::scan(kInclusive);
};

// The manifest's facts about a task type (its Task enumerator): one specialization
// per [[driver_task]], generated into harness/generated/task_list.cuh.
template <class T>
struct TaskTraits;

// A task's plan, specialized next to its type in the student unit (see above).
template <class T>
struct Plan;

// The driver tasks as a type list (DriverTasks, harness/generated/task_list.cuh).
template <class... Ts>
struct TaskList {
    static constexpr size_t kSize = sizeof...(Ts);

    // f(T{}) for every task type, in the manifest's order.
    template <class F>
    static void forEach(F&& f) {
        (f(Ts{}), ...);
    }

    // f(T{}) for the type of `task`; false when the list has none.
    template <class F>
    static bool visit(Task task, F&& f) {
        return ((TaskTraits<Ts>::kTask == task && (f(Ts{}), true)) || ...);
    }
};

}  // namespace scanlab
