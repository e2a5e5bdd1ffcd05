// scanlab harness: DO NOT EDIT. Your code goes in student/.
//
// The tasks the driver runs, as the command line names them.
#pragma once
#include <stdexcept>
#include <string>

namespace scanlab {

enum class Task { WarpScan, Reduce, Scan, ScanExclusive };

struct TaskInfo {
    Task task;
    const char* name;        // --task
    int number;              // the task of the assignment (student file) it checks
    const char* studentFile; // under student/
    int bytesMoved;          // bytes per element a perfect kernel reads + writes, in
                             // units of sizeof(Element): what GB/s is computed from
};

inline const TaskInfo kTasks[] = {
    {Task::WarpScan, "warp-scan", 1, "warp_scan.cuh", 2},
    {Task::Reduce, "reduce", 2, "reduce.cuh", 1},
    {Task::Scan, "scan", 3, "scan.cuh", 2},
    {Task::ScanExclusive, "scan-exclusive", 3, "scan.cuh", 2},
};

inline const TaskInfo& taskInfo(Task t) { return kTasks[int(t)]; }

inline const TaskInfo& parseTask(const std::string& name) {
    for (const auto& t : kTasks)
        if (name == t.name) return t;
    throw std::invalid_argument("unknown task '" + name +
                                "' (expected warp-scan, reduce, scan or scan-exclusive)");
}

}  // namespace scanlab
