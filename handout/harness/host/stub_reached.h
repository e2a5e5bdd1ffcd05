// scanlab harness: students, do not edit (your code goes in student/); maintainers edit it here.
//
// What a launch of the student's kernels reached of the handout's own code, read from the
// student unit's flags (harness/runtime.cuh) after the launch: in a grading build (the
// grader's, SCANLAB_GRADING_BUILD) a placeholder of harness/baselines.cuh, which did no
// work there; in any build a TODO stub (notImplemented()).
#pragma once
#include <string>

#include "harness/host/student_api.h"
#include "harness/runtime.cuh"

namespace scanlab {

// True when the launch of task `task` reached one: `status` and `message` say which
// ("not_implemented" first: the stub says which task is still to write; "placeholder",
// exit status `placeholder`). Either is 0 points.
inline bool reachedHandoutStub(int task, std::string& status, std::string& message) {
    if (student::wasNotImplemented()) {
        status = "not_implemented";
        message = "task " + std::to_string(task) + ": not implemented";
        return true;
    }
    const int id = student::placeholderReached();
    if (id == kNoPlaceholder) return false;
    status = "placeholder";
    message = "task " + std::to_string(task) + ": calls the handout's placeholder (" +
              placeholderName(id) + "), which does no work in a grading build";
    return true;
}

}  // namespace scanlab
