// The CPU side of the harness: the sequential reference against the lectures'
// worked examples (data/golden), the input generator, the checker and the tile plan.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "harness/check.h"
#include "harness/generated/operators.cuh"
#include "harness/generated/task_list.cuh"
#include "harness/host/args.h"
#include "harness/host/generate.h"
#include "harness/host/reference.h"
#include "harness/host/tasks.h"
#include "harness/ops.cuh"
#include "harness/tasks/tiling.cuh"

using namespace scanlab;

namespace {

struct WorkedExample {
    std::string op, task, line;
    std::vector<std::string> input, expected;
};

std::vector<WorkedExample> loadWorkedExamples() {
    std::ifstream f(std::string(SCANLAB_DATA_DIR) + "/golden/worked_examples.txt");
    REQUIRE(f.good());
    std::vector<WorkedExample> examples;
    for (std::string line; std::getline(f, line);) {
        if (line.empty() || line[0] == '#') continue;
        std::istringstream s(line);
        WorkedExample ex;
        ex.line = line;
        s >> ex.op >> ex.task;
        bool after = false;
        for (std::string word; s >> word;) {
            if (word == "->") after = true;
            else (after ? ex.expected : ex.input).push_back(word);
        }
        examples.push_back(ex);
    }
    return examples;
}

template <class Op, class Parse, class Show>
std::vector<std::string> runReference(const WorkedExample& ex, Parse parse, Show show) {
    std::vector<typename Op::Element> in;
    for (const auto& w : ex.input) in.push_back(parse(w));
    std::vector<std::string> out;
    for (const auto& x : referenceOutput<Op>(parseTask(ex.task).task, in)) out.push_back(show(x));
    return out;
}

}  // namespace

TEST_CASE("CPU reference reproduces the lectures' worked examples") {
    const auto examples = loadWorkedExamples();
    REQUIRE(examples.size() >= 10);
    for (const auto& ex : examples) {
        INFO(ex.line);
        std::vector<std::string> got;
        auto parseInt = [](const std::string& w) { return int32_t(std::stol(w)); };
        auto showInt = [](int32_t x) { return std::to_string(x); };
        if (ex.op == "add-i32") got = runReference<Add<int32_t>>(ex, parseInt, showInt);
        else if (ex.op == "max-i32") got = runReference<Max<int32_t>>(ex, parseInt, showInt);
        else if (ex.op == "add-f32")
            got = runReference<Add<float>>(ex, [](const std::string& w) { return std::stof(w); },
                                           [](float x) {
                                               std::ostringstream s;
                                               s << x;
                                               return s.str();
                                           });
        else if (ex.op == "mssp")
            got = runReference<Mssp>(ex, [&](const std::string& w) { return Mssp::fromValue(parseInt(w)); },
                                     [](MssTuple t) { return std::to_string(t.mss); });
        else if (ex.op == "seg-add-i32") {
            using Seg = Segmented<Add<int32_t>>;
            got = runReference<Seg>(ex, [&](const std::string& w) {
                const bool head = w[0] == '^';
                return Seg::fromValue(parseInt(head ? w.substr(1) : w), head);
            }, [](Seg::Element x) { return std::to_string(x.value); });
        }
        else FAIL("unknown operator in worked example: " << ex.op);
        CHECK(got == ex.expected);
    }
}

TEST_CASE("operators: identity is neutral and MSSP is associative but not commutative") {
    const MssTuple a = Mssp::fromValue(5), b = Mssp::fromValue(-7), c = Mssp::fromValue(3);
    CHECK(Mssp::equal(Mssp::apply(Mssp::identity(), a), a, 0));
    CHECK(Mssp::equal(Mssp::apply(a, Mssp::identity()), a, 0));
    CHECK(Mssp::equal(Mssp::apply(Mssp::apply(a, b), c), Mssp::apply(a, Mssp::apply(b, c)), 0));
    CHECK_FALSE(Mssp::equal(Mssp::apply(a, b), Mssp::apply(b, a), 0));
    CHECK(Max<int32_t>::apply(Max<int32_t>::identity(), -2147483647 - 1) == -2147483647 - 1);
    CHECK(Add<int32_t>::apply(2147483647, 1) == -2147483647 - 1);  // wraps, no UB
}

TEST_CASE("operators: the segmented sum is the lifted operator, associative, not commutative") {
    using Seg = Segmented<Add<int32_t>>;
    const Seg::Element a = Seg::fromValue(5, false), b = Seg::fromValue(-7, true),
                       c = Seg::fromValue(3, false);
    CHECK(Seg::equal(Seg::apply(Seg::identity(), b), b, 0));
    CHECK(Seg::equal(Seg::apply(b, Seg::identity()), b, 0));
    for (auto x : {a, b, c})
        for (auto y : {a, b, c})
            for (auto z : {a, b, c})
                CHECK(Seg::equal(Seg::apply(Seg::apply(x, y), z), Seg::apply(x, Seg::apply(y, z)), 0));
    CHECK(Seg::apply(a, b).value == -7);  // a head on the right cuts off the left
    CHECK(Seg::apply(b, a).value == -2);
    CHECK(Seg::apply(a, b).head == 1);
}

TEST_CASE("segment layouts: one segment, every element a head, long segments, none") {
    using Seg = Segmented<Add<int32_t>>;
    auto heads = [](Distribution d, size_t n) {
        size_t count = 0;
        for (const auto& x : generateInput<Seg>(n, 9, d)) count += x.head;
        return count;
    };
    CHECK(heads(Distribution::Ones, 5000) == 1);
    CHECK(heads(Distribution::Ascending, 5000) == 5000);
    CHECK(heads(Distribution::Descending, 9003) == 3);
    CHECK(heads(Distribution::Negative, 5000) == 0);
    const size_t random = heads(Distribution::Random, 97000);
    CHECK((random > 800 && random < 1200));  // about one in 97
    CHECK(generateInput<Seg>(1, 9, Distribution::Ones)[0].head == 1);
}

TEST_CASE("generator is deterministic, seed-dependent and independent of n") {
    for (const char* dist : kDistributionNames) {
        INFO(dist);
        const Distribution d = parseDistribution(dist);
        const auto a = generateInput<Add<int32_t>>(1000, 42, d);
        const auto b = generateInput<Add<int32_t>>(1000, 42, d);
        const auto longer = generateInput<Add<int32_t>>(2000, 42, d);
        CHECK(a == b);
        CHECK(std::equal(a.begin(), a.end(), longer.begin()));
    }
    const auto s1 = generateInput<Add<int32_t>>(1000, 1, Distribution::Random);
    const auto s2 = generateInput<Add<int32_t>>(1000, 2, Distribution::Random);
    CHECK(s1 != s2);
    for (int32_t v : s1) CHECK((v >= -1000 && v <= 1000));
    const auto f = generateInput<Add<float>>(1000, 7, Distribution::Random);
    for (float v : f) CHECK((v >= -1.0f && v < 1.0f));
    CHECK_THROWS_AS(parseDistribution("gaussian"), std::invalid_argument);
}

TEST_CASE("checker finds the first mismatch and applies the float tolerance") {
    const auto in = generateInput<Add<int32_t>>(100, 3, Distribution::Random);
    auto out = referenceScan<Add<int32_t>>(in, true);
    CHECK(checkOutput<Add<int32_t>>(Task::Scan, in, out).passed());
    out[57] += 1;
    out[90] -= 1;
    const CheckResult r = checkOutput<Add<int32_t>>(Task::Scan, in, out);
    CHECK(r.mismatches == 2);
    REQUIRE(r.first);
    CHECK(r.first->index == 57);

    const auto fin = generateInput<Add<float>>(1 << 16, 5, Distribution::Random);
    auto fout = referenceScan<Add<float>>(fin, true);
    fout[1000] *= 1.0f + 1e-7f;  // a rounding-sized difference passes
    CHECK(checkOutput<Add<float>>(Task::Scan, fin, fout).passed());
    fout[2000] += 0.5f;  // a missing or extra element does not
    CHECK_FALSE(checkOutput<Add<float>>(Task::Scan, fin, fout).passed());

    CHECK_FALSE(checkOutput<Add<int32_t>>(Task::Scan, in, std::vector<int32_t>(99)).passed());
}

TEST_CASE("the float reference is the sum, past where a float running sum stops growing") {
    // 2^25 + 2^20 ones: a float running sum stops at 2^24 (adding 1 rounds away there),
    // which once made an honest parallel sum of 2^26 "wrong" (a drawn case on the H100).
    const size_t n = (size_t(1) << 25) + (size_t(1) << 20);
    const std::vector<float> ones(n, 1.0f);
    CHECK(referenceReduce<Add<float>>(ones) == 16777216.0f);  // the running sum stalls at 2^24
    CHECK(referenceOutput<Add<float>>(Task::Reduce, ones) == std::vector<float>{float(n)});
    CHECK(checkOutput<Add<float>>(Task::Reduce, ones, {float(n)}).passed());
    CHECK_FALSE(checkOutput<Add<float>>(Task::Reduce, ones, {16777216.0f}).passed());
    const auto scanned = referenceOutput<Add<float>>(Task::Scan, ones);
    CHECK(scanned.back() == float(n));
    CHECK(referenceOutput<Max<float>>(Task::Reduce, {-2.0f, 3.5f, 1.0f}) == std::vector<float>{3.5f});
    // A float maximum stays in float: its exclusive scan starts at the float identity
    // (the lowest float), not at a double's that rounds to -inf.
    const auto maxes = referenceOutput<Max<float>>(Task::ScanExclusive, {-2.0f, 3.5f, 1.0f});
    CHECK(maxes == std::vector<float>{std::numeric_limits<float>::lowest(), -2.0f, 3.5f});
}

TEST_CASE("tile plan covers the input with at most kMaxBlocks contiguous ranges") {
    for (unsigned block : {32u, 256u, 1024u})
        for (size_t n : {size_t(1), size_t(255), size_t(1) << 20, (size_t(1) << 28) + 3}) {
            INFO("block " << block << " n " << n);
            const TilePlan p = planTiles<int32_t>(n, block);
            const size_t tile = size_t(block) * ChunkPolicy<int32_t>::kItemsPerThread;
            CHECK(p.gridSize >= 1);
            CHECK(p.gridSize <= kMaxBlocks);
            CHECK(p.itemsPerBlock % tile == 0);
            CHECK(p.gridSize * p.itemsPerBlock >= n);
            CHECK((p.gridSize - 1) * p.itemsPerBlock < n);  // no empty block
            CHECK(p.sharedBytes <= 48 * 1024);
        }
    CHECK(tileSharedBytes<MssTuple>(1024) <= 48 * 1024);
}

// ---- the compiled harness agrees with data/assignment.toml ---------------------------------

TEST_CASE("the size grammar reads every example of the manifest", "[assignment]") {
    for (const auto& e : kSizeExamples) {
        INFO(e.text);
        CHECK(parseCount(e.text, "--n") == e.value);
    }
    for (const char* bad : {"", "2^", "x", "-5", "5+", "2^100", "1.5e0x"}) {
        INFO(bad);
        CHECK_THROWS_AS(parseCount(bad, "--n"), UsageError);
    }
}

TEST_CASE("operators: identity and commutativity as the manifest declares", "[assignment]") {
    for (const char* name : kOperatorNames) {
        withOperator(name, [&](auto op) {
            using Op = decltype(op);
            using Traits = OperatorTraits<Op>;
            INFO(name);
            CHECK(Op::format(Op::identity()) == Traits::kIdentity);
            const auto in = generateInput<Op>(4096, 7, Distribution::Random);
            bool identityHolds = true, commutes = true;
            for (size_t i = 0; i + 1 < in.size(); ++i) {
                identityHolds &= Op::equal(Op::apply(Op::identity(), in[i]), in[i], 0) &&
                                 Op::equal(Op::apply(in[i], Op::identity()), in[i], 0);
                commutes &= Op::equal(Op::apply(in[i], in[i + 1]), Op::apply(in[i + 1], in[i]), 0);
            }
            CHECK(identityHolds);
            CHECK(commutes == Traits::kCommutative);  // sampled inputs tell them apart
            CHECK(std::string(operatorName<Op>()) == name);
        });
    }
}

TEST_CASE("tasks: every driver task belongs to a student task with its file", "[assignment]") {
    for (const auto& t : kTasks) {
        bool found = false;
        for (const auto& s : kStudentTasks)
            found |= s.number == t.number && std::string(s.file) == t.studentFile;
        INFO(t.name);
        CHECK(found);
        CHECK(&parseTask(t.name) == &t);
    }
}

TEST_CASE("tasks: every driver task has its type, whose reference has the manifest's output size",
          "[assignment]") {
    size_t types = 0;
    DriverTasks::forEach([&](auto type) {
        using Type = decltype(type);
        const TaskInfo& t = taskInfo(TaskTraits<Type>::kTask);
        INFO(t.name);
        for (size_t n : {1, 31, 1000}) {
            const std::vector<int32_t> in(n, 1);
            CHECK(Type::template reference<Add<int32_t>>(in).size() == outputCount(t, n));
        }
        // withTask finds the same type from the enumerator.
        bool same = false;
        withTask(t.task, [&](auto found) { same = std::is_same_v<decltype(found), Type>; });
        CHECK(same);
        ++types;
    });
    CHECK(types == sizeof(kTasks) / sizeof(kTasks[0]));
}
