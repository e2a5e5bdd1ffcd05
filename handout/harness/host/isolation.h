// scanlab harness: students, do not edit (your code goes in student/); maintainers edit it here.
//
// What `scanlab grade` (make grade-local) needs to give the grader's verdict at home:
//   - whether a student file is still the handout's placeholder (changed at most in
//     comments and spacing), which the grader scores 0 (a bonus: "not attempted");
//   - each task built with the HARNESS's versions of the files it includes
//     (harness/isolation/<file>/student/, built as <driver>-with-harness-<file>): the
//     grader builds each task with only the other files' contracts, so a task that passes
//     only with the student's own helpers fails there.
#pragma once
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

#include "harness/host/report.h"

namespace scanlab {

// The grader's same_code() (grader/grading/checks/forbidden.py) as a number: FNV-1a (64 bits) of the
// text with backslash-newlines spliced, comments removed (string and character
// literals kept) and every space, tab and newline dropped. tools/make_handout.py puts
// the handout placeholders' values into harness/generated/grading.h.
inline uint64_t placeholderFingerprint(const std::string& raw) {
    std::string text;  // spliced
    for (size_t i = 0; i < raw.size(); ++i) {
        if (raw[i] == '\r' && i + 1 < raw.size() && raw[i + 1] == '\n') continue;
        if (raw[i] == '\\') {
            size_t j = i + 1;
            while (j < raw.size() && (raw[j] == ' ' || raw[j] == '\t')) ++j;
            if (j < raw.size() && raw[j] == '\n') { i = j; continue; }
            if (j + 1 < raw.size() && raw[j] == '\r' && raw[j + 1] == '\n') { i = j + 1; continue; }
        }
        text += raw[i];
    }
    std::string kept;
    const size_t n = text.size();
    auto word = [&](size_t k) { return std::isalnum((unsigned char)text[k]) || text[k] == '_'; };
    for (size_t i = 0; i < n;) {
        const char c = text[i], next = i + 1 < n ? text[i + 1] : '\0';
        if (c == '/' && next == '/') {
            while (i < n && text[i] != '\n') ++i;
        } else if (c == '/' && next == '*') {
            const size_t end = text.find("*/", i + 2);
            i = end == std::string::npos ? n : end + 2;
        } else if (c == 'R' && next == '"' && (i == 0 || !word(i - 1) ||
                                                 std::string("uUL8").find(text[i - 1]) != std::string::npos)) {
            const size_t open = text.find('(', i + 2);
            const std::string close = ")" + text.substr(i + 2, open == std::string::npos ? 0 : open - i - 2) + "\"";
            const size_t end = open == std::string::npos ? n : text.find(close, open);
            const size_t stop = end == std::string::npos ? n : end + close.size();
            kept += text.substr(i, stop - i);
            i = stop;
        } else if (c == '"' || c == '\'') {
            // A digit separator (1'000'000) is no character literal.
            if (c == '\'') {
                size_t k = i;
                while (k > 0 && (word(k - 1) || text[k - 1] == '.' || text[k - 1] == '\'')) --k;
                if (k < i && std::isdigit((unsigned char)text[k])) { kept += text[i++]; continue; }
            }
            size_t j = i + 1;
            while (j < n && text[j] != c && text[j] != '\n') j += text[j] == '\\' ? 2 : 1;
            const size_t stop = std::min(n, j + 1);
            kept += text.substr(i, stop - i);
            i = stop;
        } else {
            kept += c;
            ++i;
        }
    }
    uint64_t h = 0xcbf29ce484222325ull;
    for (char ch : kept) {
        if (ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\v' || ch == '\f') continue;
        h = (h ^ (unsigned char)ch) * 0x100000001b3ull;
    }
    return h;
}

inline bool readText(const std::string& path, std::string& out) {
    std::ifstream f(path, std::ios::binary);
    if (!f) return false;
    std::stringstream s;
    s << f.rdbuf();
    out = s.str();
    return true;
}

// The student files that `text` includes ("student/X.cuh" -> "X.cuh"), in order.
inline std::vector<std::string> studentIncludes(const std::string& text) {
    std::vector<std::string> out;
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) {
        const size_t hash = line.find_first_not_of(" \t");
        if (hash == std::string::npos || line[hash] != '#') continue;
        const size_t at = line.find("\"student/");
        if (line.find("include") == std::string::npos || at == std::string::npos) continue;
        const size_t end = line.find('"', at + 9);
        if (end != std::string::npos) out.push_back(line.substr(at + 9, end - at - 9));
    }
    return out;
}

// The emulator driver built with the harness's own `file` (warp_scan.cuh ->
// <this driver, as its -emu twin>-with-harness-warp_scan), or "" when it is not built.
inline std::string isolationDriver(const std::string& file) {
    std::string base = programName();
    const std::string emu = "-emu";
    if (base.size() < emu.size() || base.compare(base.size() - emu.size(), emu.size(), emu) != 0) base += emu;
    const std::string stem = file.substr(0, file.find('.'));
    const std::string path = base + "-with-harness-" + stem;
    struct stat st{};
    return stat(path.c_str(), &st) == 0 && (st.st_mode & S_IXUSR) ? path : "";
}

// Why a task that passes with the student's own `file` can fail with another one that
// keeps to the file's contract (the reference's, in the grader).
inline const char* isolationHint(const std::string& file) {
    if (file == "warp_scan.cuh")
        return "The harness's scanIncWarp reads the warp's 32 slots as soon as it is called, as its "
               "contract allows (the caller has written them and synchronized): look for a missing "
               "__syncwarp() (or __syncthreads()) between writing the slots and calling scanIncWarp. "
               "Your own scanIncWarp hid it (it reads only its own lane's slot, or begins with a "
               "barrier).";
    if (file == "reduce.cuh")
        return "The harness's reduce keeps to the contracts of student/reduce.cuh and no more: only "
               "lane 0 of reduceWarp and thread 0 of reduceBlock return the total, and warpTotals "
               "holds junk afterwards. Your code relies on something only your own reduce.cuh does.";
    return "Your file relies on something only your own version of it does.";
}

// The outcome of one task's visible cases in an isolation driver, read from its
// `grade --json` line (passed and cases), or {0, 0} when it did not run.
struct IsolationResult {
    size_t passed = 0, cases = 0;
    int exitCode = 0;
};

inline size_t jsonCount(const std::string& line, const std::string& key) {
    const size_t at = line.find("\"" + key + "\":");
    return at == std::string::npos ? 0 : size_t(std::strtoull(line.c_str() + at + key.size() + 3, nullptr, 10));
}

inline IsolationResult runIsolated(const std::string& driver, const char* task) {
    const std::string json = "/tmp/scanlab-isolated-" + std::to_string(getpid()) + ".json";
    const std::string command = "'" + driver + "' grade --tasks " + task +
                                " --no-perf --no-isolation --json '" + json + "' >/dev/null 2>&1";
    IsolationResult r;
    r.exitCode = std::system(command.c_str());
    std::string text;
    if (readText(json, text)) {
        r.passed = jsonCount(text, "passed");
        r.cases = jsonCount(text, "cases");
    }
    std::remove(json.c_str());
    return r;
}

}  // namespace scanlab
