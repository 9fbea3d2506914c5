// A module instance as graphs see it: a named class with ordered attributes (parameters, buffers,
// submodules, plain values). Traced modules read their weights through prim::GetAttr on one of
// these, so the graph never holds a weight as a constant and the module's tensors are shared with
// the Python module they came from.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "runtime/error.h"
#include "runtime/ivalue.h"

namespace ampjit {

struct ModuleObject : ObjectBase {
  std::string class_name;  // "__torch__.torch.nn.modules.linear.Linear"
  std::vector<std::pair<std::string, IValue>> attrs;

  explicit ModuleObject(std::string name) : class_name(std::move(name)) {}
  const char* type_name() const override { return class_name.c_str(); }

  // The slot of `name`, or -1.
  int slot(const std::string& name) const {
    for (size_t i = 0; i < attrs.size(); ++i)
      if (attrs[i].first == name) return static_cast<int>(i);
    return -1;
  }
  const IValue& attr(const std::string& name) const {
    const int s = slot(name);
    AMPJIT_CHECK(s >= 0, "module '{}' has no attribute '{}'", class_name, name);
    return attrs[static_cast<size_t>(s)].second;
  }
  void set_attr(const std::string& name, IValue v) {
    const int s = slot(name);
    if (s >= 0)
      attrs[static_cast<size_t>(s)].second = std::move(v);
    else
      attrs.emplace_back(name, std::move(v));
  }
};

}  // namespace ampjit
