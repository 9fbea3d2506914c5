// A JSON document built in memory and printed with two-space indentation (an array or object of
// scalars prints on one line): what ampjit-dump and the graph renderers write.
//
//   Json doc = Json::object();
//   doc.add("function", Json::string("f")).add("passes", Json::array().push(Json::string("cse")));
//   std::string text = doc.str();
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

namespace ampjit {

// A JSON document built in memory, printed with two-space indentation; an array or object of
// scalars only prints on one line.
struct Json {
  enum Kind { Null, Bool, Int, Double, String, Array, Object } kind = Null;
  bool b = false;
  int64_t i = 0;
  double d = 0;
  std::string s;
  std::vector<Json> items;                            // Array
  std::vector<std::pair<std::string, Json>> members;  // Object

  Json() = default;
  static Json boolean(bool v) {
    Json j;
    j.kind = Bool;
    j.b = v;
    return j;
  }
  static Json integer(int64_t v) {
    Json j;
    j.kind = Int;
    j.i = v;
    return j;
  }
  static Json number(double v) {
    Json j;
    j.kind = Double;
    j.d = v;
    return j;
  }
  static Json string(std::string v) {
    Json j;
    j.kind = String;
    j.s = std::move(v);
    return j;
  }
  static Json array() {
    Json j;
    j.kind = Array;
    return j;
  }
  static Json object() {
    Json j;
    j.kind = Object;
    return j;
  }
  Json& add(std::string key, Json v) {
    members.emplace_back(std::move(key), std::move(v));
    return *this;
  }
  Json& push(Json v) {
    items.push_back(std::move(v));
    return *this;
  }

  bool is_flat() const {
    for (const Json& j : items)
      if (j.kind == Array || j.kind == Object) return false;
    for (const auto& [k, j] : members)
      if (j.kind == Array || j.kind == Object) return false;
    return true;
  }

  static std::string quote(const std::string& text) {
    std::string out = "\"";
    for (unsigned char c : text) {
      switch (c) {
        case '"':
          out += "\\\"";
          break;
        case '\\':
          out += "\\\\";
          break;
        case '\n':
          out += "\\n";
          break;
        case '\t':
          out += "\\t";
          break;
        case '\r':
          out += "\\r";
          break;
        default:
          if (c < 0x20)
            out += fmt::format("\\u{:04x}", c);
          else
            out += static_cast<char>(c);
      }
    }
    return out + "\"";
  }

  void print(std::string& out, int indent) const {
    switch (kind) {
      case Null:
        out += "null";
        return;
      case Bool:
        out += b ? "true" : "false";
        return;
      case Int:
        out += std::to_string(i);
        return;
      case Double: {
        std::string t = fmt::format("{}", d);
        if (t.find_first_of(".e") == std::string::npos) t += ".0";
        out += t;
        return;
      }
      case String:
        out += quote(s);
        return;
      case Array:
      case Object: {
        const bool arr = kind == Array;
        const size_t n = arr ? items.size() : members.size();
        out += arr ? "[" : "{";
        if (n == 0) {
          out += arr ? "]" : "}";
          return;
        }
        const bool flat = is_flat();
        const std::string pad(indent + 2, ' ');
        for (size_t k = 0; k < n; ++k) {
          out += k ? (flat ? ", " : ",\n" + pad) : (flat ? "" : "\n" + pad);
          if (!arr) out += quote(members[k].first) + ": ";
          (arr ? items[k] : members[k].second).print(out, indent + 2);
        }
        if (!flat) out += "\n" + std::string(indent, ' ');
        out += arr ? "]" : "}";
        return;
      }
    }
  }
  std::string str() const {
    std::string out;
    print(out, 0);
    return out + "\n";
  }
};

}  // namespace ampjit
