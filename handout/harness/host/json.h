// scanlab harness: students, do not edit (your code goes in student/); maintainers edit it here.
//
// A minimal JSON writer for the driver's machine-readable output.
#pragma once
#include <cmath>
#include <cstdio>
#include <sstream>
#include <string>

namespace scanlab {

inline std::string jsonQuote(const std::string& s) {
    std::string out = "\"";
    for (unsigned char c : s) {
        switch (c) {
            case '"': out += "\\\""; break;
            case '\\': out += "\\\\"; break;
            case '\n': out += "\\n"; break;
            case '\t': out += "\\t"; break;
            default:
                if (c < 0x20) {
                    char buf[8];
                    std::snprintf(buf, sizeof buf, "\\u%04x", c);
                    out += buf;
                } else {
                    out += char(c);
                }
        }
    }
    return out + "\"";
}

// Builds one JSON object: add fields in order, then str().
class JsonObject {
public:
    JsonObject& add(const std::string& key, const std::string& value) {
        return raw(key, jsonQuote(value));
    }
    JsonObject& add(const std::string& key, const char* value) {
        return raw(key, jsonQuote(value));
    }
    JsonObject& add(const std::string& key, bool value) { return raw(key, value ? "true" : "false"); }
    JsonObject& add(const std::string& key, double value) {
        if (!std::isfinite(value)) return raw(key, "null");
        std::ostringstream s;
        s.precision(9);
        s << value;
        return raw(key, s.str());
    }
    JsonObject& add(const std::string& key, long long value) { return raw(key, std::to_string(value)); }
    JsonObject& add(const std::string& key, unsigned long long value) {
        return raw(key, std::to_string(value));
    }
    JsonObject& add(const std::string& key, int value) { return add(key, (long long)value); }
    JsonObject& add(const std::string& key, unsigned value) { return add(key, (unsigned long long)value); }
    JsonObject& add(const std::string& key, unsigned long value) {
        return add(key, (unsigned long long)value);
    }
    JsonObject& add(const std::string& key, const JsonObject& value) { return raw(key, value.str()); }
    // `json` must already be valid JSON (an array, say).
    JsonObject& raw(const std::string& key, const std::string& json) {
        body_ += (body_.empty() ? "" : ", ") + jsonQuote(key) + ": " + json;
        return *this;
    }
    std::string str() const { return "{" + body_ + "}"; }

private:
    std::string body_;
};

}  // namespace scanlab
