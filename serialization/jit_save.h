// torch.jit.save: a TorchScript archive of a compiled module, in torch's format, which torch 1.13's
// torch.jit.load and ampjit's (serialization/jit_load.h) both load.
//
// Note [Saving TorchScript archives]
// The saver is given the module tree as its runtime objects (each submodule a ModuleObject held by
// its parent's attribute) and, for each object, its class: qualified name, attributes in
// declaration order with their kinds (and types where the value does not say them, e.g. an
// Optional[int] that holds None), constants, and the methods to save (the root's forward and any
// others the user calls). It writes
//  - code/: each method printed in torch's dialect (Note [Printing for archives]), the methods and
//    functions they call found from their prim::CallFunction nodes (a method's object is followed
//    through the prim::GetAttr chain from `self`), each class with its declarations, and the
//    classes torch's code needs for autocast objects and NamedTuples. Objects whose classes share a
//    name but not their code get torch's mangled names (`___torch_mangle_N`), as torch gives them;
//  - data.pkl: the objects as torch writes them (protocol 2: the class, NEWOBJ, BUILD with a dict
//    of attributes; lists and dicts with their element types, tensors as storage references);
//  - data/<key>: each storage once; constants.pkl and constants/<key>: the code's tensor constants;
//    extra/<name>: the extra files; version.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "runtime/interpreter.h"
#include "runtime/ivalue.h"
#include "runtime/module_object.h"
#include "serialization/jit_load.h"

namespace ampjit::jit {

struct SaveClass {
  std::string qualified_name;  // "__torch__.torch.nn.modules.conv.Conv2d"
  struct Attr {
    std::string name;
    Module::AttrKind kind;
    TypePtr type;  // the declared type; null: the value's (kModule: the submodule's class)
    IValue value;  // kConstant: the constant; otherwise unused (the object holds the value)
  };
  std::vector<Attr> attrs;                                                 // declaration order
  std::vector<std::pair<std::string, std::shared_ptr<Function>>> methods;  // to save (and callees)
};

// The class of each module object of the tree, by object.
using SaveClasses = std::map<const ModuleObject*, SaveClass>;

// The archive's bytes; `top` is its top folder (the file's stem, as torch names it).
std::string save_bytes(const Ref<ModuleObject>& root, const SaveClasses& classes,
                       const ExtraFiles& extra_files = {}, const std::string& top = "archive");
void save(const Ref<ModuleObject>& root, const SaveClasses& classes, const std::string& path,
          const ExtraFiles& extra_files = {});

}  // namespace ampjit::jit
