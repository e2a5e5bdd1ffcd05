// scanlab harness: students, do not edit (your code goes in student/); maintainers edit it here.
//
// The tasks the driver runs, as the command line names them. The table itself
// (kTasks) is generated from data/assignment.toml into harness/generated/assignment.h.
#pragma once
#include <cstddef>
#include <stdexcept>
#include <string>

#include "harness/generated/assignment.h"

namespace scanlab {

inline const TaskInfo& taskInfo(Task t) { return kTasks[int(t)]; }

inline const TaskInfo& parseTask(const std::string& name) {
    for (const auto& t : kTasks)
        if (name == t.name) return t;
    throw std::invalid_argument("unknown task '" + name + "' (expected " + kTaskList + ")");
}

// Elements the task writes for n input elements: the manifest's `output`, as the grader
// reads it (OutputSize::count, grader/config/assignment.py) into the generated numbers.
inline size_t outputCount(const TaskInfo& t, size_t n) {
    const size_t per = t.output.perInput;
    return t.output.fixed + (per ? (n + per - 1) / per : 0);
}

}  // namespace scanlab
