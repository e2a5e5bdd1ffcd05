// scanlab harness: students, do not edit (your code goes in student/); maintainers edit it here.
//
// Associative operators as types (the CUB style). Every kernel in scanlab is a
// template over one of these. The interface an operator provides:
//
//   using Element                          the element type
//   static Element identity()              e such that apply(e, x) == apply(x, e) == x
//   static Element apply(Element a, Element b)
//                                          associative; NOT necessarily commutative:
//                                          a is always the earlier (lower-index) operand
//   static bool equal(Element expected, Element got, double tolerance)
//                                          used when checking results; exact for
//                                          integers, within `tolerance` for floats
//   static double magnitude(Element x)     |x|, used to scale float tolerances
//   static std::string format(Element x)   for error messages
//
// apply and identity run on host and device; the rest is host-only. The name, element
// size, identity and sampling of each operator are declared in data/assignment.toml,
// which generates the operator table (harness/generated/operators.cuh) from these types.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <type_traits>

#include "harness/platform.cuh"

namespace scanlab {

// Integers in full; floats with the 9 significant digits that tell any two apart.
template <class T>
std::string formatNumber(T x) {
    if constexpr (std::is_integral_v<T>) {
        return std::to_string(x);
    } else {
        char text[32];
        std::snprintf(text, sizeof text, "%.9g", static_cast<double>(x));
        return text;
    }
}

// Addition. For int32_t it wraps around on overflow (computed in uint32_t), which
// is well defined on host and device alike.
template <class T>
struct Add {
    using Element = T;
    SCANLAB_HD static T identity() { return T(0); }
    SCANLAB_HD static T apply(T a, T b) {
        if constexpr (std::is_integral_v<T>) {
            using U = std::make_unsigned_t<T>;
            return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
        } else {
            return a + b;
        }
    }
    static bool equal(T expected, T got, double tolerance) {
        if constexpr (std::is_integral_v<T>) {
            return expected == got;
        } else {
            return std::fabs(static_cast<double>(expected) - static_cast<double>(got)) <=
                   tolerance;
        }
    }
    static double magnitude(T x) { return std::fabs(static_cast<double>(x)); }
    static std::string format(T x) { return formatNumber(x); }
};

template <class T>
struct Max {
    using Element = T;
    static constexpr T kLowest = std::numeric_limits<T>::lowest();
    SCANLAB_HD static T identity() { return kLowest; }
    SCANLAB_HD static T apply(T a, T b) { return a < b ? b : a; }
    static bool equal(T expected, T got, double) { return expected == got; }
    static double magnitude(T x) { return std::fabs(static_cast<double>(x)); }
    static std::string format(T x) { return formatNumber(x); }
};

// Maximum segment sum (MSS). An element summarises a segment of the input:
//   mss: best sum of any contiguous sub-segment (the empty one counts, so >= 0)
//   mis: best sum of a prefix,  mcs: best sum of a suffix,  ts: total sum.
// A single input value v maps to {max(v,0), max(v,0), max(v,0), v}. Combining is
// associative but NOT commutative: the segment of `a` lies left of the one of `b`.
struct MssTuple {
    int32_t mss, mis, mcs, ts;
};

struct Mssp {
    using Element = MssTuple;
    SCANLAB_HD static int32_t max2(int32_t x, int32_t y) { return x < y ? y : x; }
    SCANLAB_HD static MssTuple identity() { return MssTuple{0, 0, 0, 0}; }
    SCANLAB_HD static MssTuple apply(MssTuple a, MssTuple b) {
        return MssTuple{max2(max2(a.mss, b.mss), a.mcs + b.mis), max2(a.mis, a.ts + b.mis),
                        max2(b.mcs, a.mcs + b.ts), a.ts + b.ts};
    }
    SCANLAB_HD static MssTuple fromValue(int32_t v) {
        const int32_t p = max2(v, 0);
        return MssTuple{p, p, p, v};
    }
    static bool equal(MssTuple e, MssTuple g, double) {
        return e.mss == g.mss && e.mis == g.mis && e.mcs == g.mcs && e.ts == g.ts;
    }
    static double magnitude(MssTuple x) { return std::fabs(static_cast<double>(x.ts)); }
    static std::string format(MssTuple x) {
        return "{mss " + std::to_string(x.mss) + ", mis " + std::to_string(x.mis) + ", mcs " +
               std::to_string(x.mcs) + ", ts " + std::to_string(x.ts) + "}";
    }
};

// Segmented scan as an operator (Blelloch 1990; PMPH): an element is a value with a
// flag that says whether it starts a segment (its "head"). The operator Op lifted over
// flagged values,
//   (va, ha) (+) (vb, hb) = (hb ? vb : va (+) vb,  ha | hb),
// is associative whenever Op is, and never commutative: a head on the right cuts off
// everything to its left. Any scan that is correct for every associative operator is
// therefore a segmented scan once given this one: its inclusive scan restarts at each
// head. (Its exclusive scan shifts by one: element i gets the fold of elements before
// i, which at a head is the end of the previous segment.)
template <class T>
struct Flagged {
    T value;
    int32_t head;  // 1 where a segment starts, else 0
};

template <class Op>
struct Segmented {
    using Base = Op;
    using Element = Flagged<typename Op::Element>;
    SCANLAB_HD static Element identity() { return Element{Op::identity(), 0}; }
    SCANLAB_HD static Element apply(Element a, Element b) {
        return Element{b.head ? b.value : Op::apply(a.value, b.value), a.head | b.head};
    }
    SCANLAB_HD static Element fromValue(int32_t v, bool head) {
        return Element{typename Op::Element(v), head ? 1 : 0};
    }
    static bool equal(Element e, Element g, double tolerance) {
        return e.head == g.head && Op::equal(e.value, g.value, tolerance);
    }
    static double magnitude(Element x) { return Op::magnitude(x.value); }
    static std::string format(Element x) {
        return "{value " + Op::format(x.value) + ", head " + std::to_string(x.head) + "}";
    }
};

}  // namespace scanlab
