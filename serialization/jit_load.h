// torch.jit.load for C++: a TorchScript module from an archive written by torch.jit.save (by
// torch 1.13 or by ampjit), run without Python.
//
//   #include "serialization/jit_load.h"
//   ampjit::jit::Module m = ampjit::jit::load("model.pt");
//   ampjit::IValue y = m.forward({ampjit::IValue(x)});
//   for (const auto& [name, w] : m.named_parameters()) ...
//
// Note [Loading TorchScript archives]
// An archive holds the module's objects (data.pkl: each module an object of a `__torch__` class
// with its attributes), its tensor constants (constants.pkl) and the TorchScript source of every
// class and function the module uses (code/__torch__/<module path>.py). Loading
//  1. reads both pickles with the restricted unpickler (Note [Restricted unpickler]): module
//     objects become ModuleObjects, storages are read once each, nothing in the file runs;
//  2. describes each class to the script compiler (a ModuleInfo): the attributes its class body
//     declares (`name : T`; `name : Final[T] = v`, a constant; `__annotations__["0"] = T`, a
//     submodule named "0"), each checked against the object's value, and its methods' source;
//  3. compiles a method when it is first called (forward, or any other by name), with a resolver
//     that answers the archive's names (Note [Serialized code] in script/emit/serialized.cpp):
//     `__torch__.<path>.<name>` reads code/__torch__/<path>.py once and gives the class or def it
//     defines, `CONSTANTS.cN` the Nth tensor of constants.pkl.
// Every error names the archive and, for code, the record, line and column. Classes that define
// __getstate__/__setstate__ and interfaces are refused with an error naming them.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "runtime/interpreter.h"
#include "runtime/ivalue.h"
#include "runtime/module_object.h"

namespace ampjit::script {
struct ModuleInfo;
}

namespace ampjit::jit {

class Module {
 public:
  // The class's qualified name ("__torch__.torchvision.models.resnet.ResNet").
  const std::string& class_name() const;
  // The runtime object the methods read their attributes from.
  const Ref<ModuleObject>& object() const { return object_; }

  IValue forward(std::vector<IValue> args) const { return run_method("forward", std::move(args)); }
  // Runs method `name` of this module's class; its result (a tuple when it returns several).
  IValue run_method(const std::string& name, std::vector<IValue> args) const;
  // The compiled method (compiled on first use, once per class, thread-safe); its graph takes
  // the module object first.
  std::shared_ptr<Function> method(const std::string& name) const;
  bool has_method(const std::string& name) const;
  std::vector<std::string> method_names() const;

  // The attributes the class declares: parameters, buffers, submodules and plain values, in
  // declaration order, each with its kind.
  enum class AttrKind { kParameter, kBuffer, kModule, kValue, kConstant };
  struct Attr {
    std::string name;
    AttrKind kind;
  };
  std::vector<Attr> attributes() const;
  // An attribute's value (a constant's from its class).
  IValue attr(const std::string& name) const;
  // A submodule by name.
  Module submodule(const std::string& name) const;
  std::vector<std::pair<std::string, Module>> named_children() const;
  // Dotted names ("layer1.0.conv1.weight"), this module's first, then each submodule's.
  std::vector<std::pair<std::string, Tensor>> named_parameters(bool recurse = true) const;
  std::vector<std::pair<std::string, Tensor>> named_buffers(bool recurse = true) const;

  struct Archive;  // what every module of one load shares (the classes, the compiled methods)

 private:
  friend Module load_archive(std::shared_ptr<Archive>, Ref<ModuleObject>);
  Module(std::shared_ptr<Archive> archive, Ref<ModuleObject> object)
      : archive_(std::move(archive)), object_(std::move(object)) {}
  const std::shared_ptr<script::ModuleInfo>& info() const;
  void collect(bool parameters, bool recurse, const std::string& prefix,
               std::vector<std::pair<std::string, Tensor>>& out) const;

  std::shared_ptr<Archive> archive_;
  Ref<ModuleObject> object_;
};

// Extra files (torch's _extra_files): name -> contents, read from the archive's extra/ folder.
using ExtraFiles = std::map<std::string, std::string>;

// Loads a TorchScript archive. Each key of `extra_files` (when given) gets the contents of that
// file of the archive's extra/ folder, or "" when the archive lacks it (as torch's loader does).
Module load(const std::string& path, ExtraFiles* extra_files = nullptr);
// The same from the bytes of a file; `what` names it in errors.
Module load_bytes(std::string bytes, const std::string& what = "<bytes>",
                  ExtraFiles* extra_files = nullptr);

}  // namespace ampjit::jit
