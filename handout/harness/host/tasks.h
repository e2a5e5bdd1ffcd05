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

// Elements the task writes for n input elements.
inline size_t outputCount(const TaskInfo& t, size_t n) { return t.output == Output::One ? 1 : n; }

}  // namespace scanlab
