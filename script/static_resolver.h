// The resolver for standalone .py files (ampjit-dump, C++ users): answers a function's free names
// from the file's top-level `import` / `from ... import` statements and constant assignments,
// without Python.
//
//   import torch                            torch     namespace "torch"
//   import ampjit as torch                  torch     namespace "torch"
//   import torch.nn.functional as F         F         namespace "torch.nn.functional"
//   from torch.nn import functional as F    F         namespace "torch.nn.functional"
//   from torch import relu                  relu      namespace "torch.relu"
//   from torch import autocast              autocast  autocast class "torch.autocast"
//   from torch.cuda.amp import autocast     autocast  autocast class "torch.cuda.amp.autocast"
//   from typing import List                 List      namespace "typing.List"
//   N = 4 / SCALE = -0.5 / NAME = "x"       N         constant 4
//   conv = torch.conv2d                     conv      namespace "torch.conv2d"
//   import warnings                         warnings  namespace "warnings"
//   import numpy as np                      np        unsupported, naming numpy
//
// Top-level defs are not answered here: compile_source layers the file's defs (and its classes,
// as script classes) over this resolver. nn.Module subclasses are answered as unsupported (with
// where the class is), and so is a name the file binds to a value script cannot use. Other names
// (len, range, ...) go to builtin_resolver(), except the module names `torch`, `ampjit`, `math` and
// `typing`, which need their import, as in Python.
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "script/ast.h"
#include "script/compiler.h"

namespace ampjit::script {

class StaticResolver final : public Resolver {
 public:
  // Reads the top-level statements of `file` (parse_module's result), in order: a later binding
  // of a name replaces an earlier one, as at the time the file's functions are called.
  explicit StaticResolver(const Module& file);

  Resolved resolve(const std::string& name, const SourceRange& range) override;

  // The names the file binds, as resolved (for tests and tools).
  const std::unordered_map<std::string, Resolved>& bindings() const { return names_; }

 private:
  void bind_import(const Alias& alias);
  void bind_import_from(const ImportFrom& stmt, const Alias& alias);
  void bind_assignment(const Expr& target, const Expr* value, const SourceRange& range);
  std::optional<Resolved> dotted_binding(const Expr& e) const;

  std::string filename_;
  std::unordered_map<std::string, Resolved> names_;
  std::shared_ptr<Resolver> builtins_;
};

// The resolver of an already parsed file.
std::shared_ptr<StaticResolver> static_resolver(const Module& file);

// A parsed file's top-level defs over another resolver (compile_source, the functional module):
// a def's name resolves to that def (kSource, identity the def), compiled with this resolver, so
// the file's functions call each other; other names go to `base`. `module_name`
// ("torch.nn.functional") qualifies the compiled functions' names (Resolved::path).
class FileResolver final : public Resolver, public std::enable_shared_from_this<FileResolver> {
 public:
  // `cache`, when given, keeps the Functions compiled from the file's defs beyond one
  // compilation (Note [Function caches] in compiler.h).
  FileResolver(std::shared_ptr<Resolver> base, std::shared_ptr<const Module> file,
               std::string module_name = "", std::shared_ptr<FunctionCache> cache = nullptr);

  Resolved resolve(const std::string& name, const SourceRange& range) override;
  // The file's defs in order.
  const std::vector<const FunctionDef*>& defs() const { return order_; }

 private:
  std::shared_ptr<Resolver> base_;
  std::shared_ptr<const Module> file_;
  std::string module_name_;
  std::shared_ptr<FunctionCache> cache_;
  std::unordered_map<std::string, const FunctionDef*> defs_;
  std::vector<const FunctionDef*> order_;
  // Top-level classes that are not nn.Module subclasses: script classes (Note [Script classes]),
  // each described once, on first use.
  std::unordered_map<std::string, const ClassDef*> classes_;
  std::unordered_map<std::string, std::shared_ptr<ModuleInfo>> class_infos_;
};

}  // namespace ampjit::script
