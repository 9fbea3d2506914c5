// The static resolver (see static_resolver.h): a file's top-level bindings, read once.
#include "script/static_resolver.h"

#include <limits>
#include <numbers>
#include <optional>

#include <fmt/format.h>

#include "runtime/dtype.h"
#include "script/literals.h"

namespace ampjit::script {

namespace {

// Resolves through a resolver it does not keep alive; unknown once that one is gone.
class WeakResolver final : public Resolver {
 public:
  explicit WeakResolver(std::weak_ptr<Resolver> r) : r_(std::move(r)) {}
  Resolved resolve(const std::string& name, const SourceRange& range) override {
    auto r = r_.lock();
    return r ? r->resolve(name, range) : Resolved{};
  }

 private:
  std::weak_ptr<Resolver> r_;
};

// Whether a class derives from an nn.Module class (by its bases' names: Module, nn.Module,
// Sequential, ...); the others compile as script classes.
bool is_module_class(const ClassDef& cls) {
  for (const ExprPtr& b : cls.bases) {
    const Expr* e = b.get();
    std::string last = e->kind == ExprKind::Name        ? e->as<Name>().id
                       : e->kind == ExprKind::Attribute ? e->as<Attribute>().attr
                                                        : std::string();
    if (last.ends_with("Module") || last == "Sequential" || last == "ModuleList" ||
        last == "ModuleDict")
      return true;
  }
  return false;
}

// The builtin namespace a Python module stands for, or nullopt when script cannot use it.
// `ampjit` is torch under another name; any torch submodule is a namespace the compiler may know.
std::optional<std::string> canonical_module(const std::string& module) {
  if (module == "torch" || module.starts_with("torch.")) return module;
  if (module == "ampjit") return std::string("torch");
  if (module.starts_with("ampjit.")) return "torch." + module.substr(7);
  if (module == "math" || module == "typing" || module == "warnings") return module;
  return std::nullopt;
}

// The autocast class a qualified name is, or "" when it is none.
std::string autocast_class(const std::string& qualified) {
  if (qualified == "torch.autocast" || qualified == "torch.amp.autocast" ||
      qualified == "torch.amp.autocast_mode.autocast")
    return "torch.autocast";
  if (qualified == "torch.cpu.amp.autocast" || qualified == "torch.cpu.amp.autocast_mode.autocast")
    return "torch.cpu.amp.autocast";
  if (qualified == "torch.cuda.amp.autocast" ||
      qualified == "torch.cuda.amp.autocast_mode.autocast")
    return "torch.cuda.amp.autocast";
  return "";
}

// What `module.name` is once imported: an autocast class, a dtype or math constant, or a namespace.
Resolved member_of(const std::string& module, const std::string& name) {
  const std::string qualified = module + "." + name;
  if (std::string cls = autocast_class(qualified); !cls.empty()) {
    Resolved r;
    r.kind = Resolved::kAutocastClass;
    r.path = std::move(cls);
    return r;
  }
  if (module == "torch")
    if (std::optional<ScalarType> dtype = parse_dtype(name))
      return Resolved::constant_value(*dtype);
  if (module == "math") {
    if (name == "pi") return Resolved::constant_value(std::numbers::pi);
    if (name == "e") return Resolved::constant_value(std::numbers::e);
    if (name == "inf") return Resolved::constant_value(std::numeric_limits<double>::infinity());
    if (name == "nan") return Resolved::constant_value(std::numeric_limits<double>::quiet_NaN());
  }
  return Resolved::ns(qualified);
}

// A dotted name (`torch.nn.functional`) as a string, or "" when `e` is not one.
std::string dotted_name(const Expr& e) {
  if (e.kind == ExprKind::Name) return e.as<Name>().id;
  if (e.kind != ExprKind::Attribute) return "";
  const std::string base = dotted_name(*e.as<Attribute>().value);
  return base.empty() ? "" : base + "." + e.as<Attribute>().attr;
}

}  // namespace

StaticResolver::StaticResolver(const Module& file)
    : filename_(file.source ? file.source->filename() : "<source>"), builtins_(builtin_resolver()) {
  for (const StmtPtr& s : file.body) {
    switch (s->kind) {
      case StmtKind::Import:
        for (const Alias& a : s->as<Import>().names) bind_import(a);
        break;
      case StmtKind::ImportFrom:
        for (const Alias& a : s->as<ImportFrom>().names) bind_import_from(s->as<ImportFrom>(), a);
        break;
      case StmtKind::Assign: {
        const auto& assign = s->as<Assign>();
        for (const ExprPtr& t : assign.targets) bind_assignment(*t, assign.value.get(), s->range);
        break;
      }
      case StmtKind::AnnAssign: {
        const auto& assign = s->as<AnnAssign>();
        if (assign.value) bind_assignment(*assign.target, assign.value.get(), s->range);
        break;
      }
      case StmtKind::AugAssign:
        bind_assignment(*s->as<AugAssign>().target, nullptr, s->range);
        break;
      case StmtKind::FunctionDef:
        names_.erase(s->as<FunctionDef>().name);  // compile_source answers it
        break;
      case StmtKind::ClassDef: {
        const auto& cls = s->as<ClassDef>();
        if (!is_module_class(cls)) {  // a script class: the FileResolver answers it
          names_.erase(cls.name);
          break;
        }
        names_[cls.name] = Resolved::unsupported(fmt::format(
            "'{}' is a class (defined at {}); ampjit-dump compiles the file's functions only: "
            "classes, nn.Module subclasses included, are not supported (script a module from "
            "Python with ampjit.jit.script)",
            cls.name, s->range.location_str()));
        break;
      }
      default:
        break;  // code run at import time (if __name__ == ..., loops) binds nothing script sees
    }
  }
}

// `import a.b.c` binds `a`; `import a.b.c as x` binds `x` to a.b.c.
void StaticResolver::bind_import(const Alias& alias) {
  const std::string module =
      alias.asname.empty() ? alias.name.substr(0, alias.name.find('.')) : alias.name;
  const std::string bound = alias.asname.empty() ? module : alias.asname;
  if (std::optional<std::string> ns = canonical_module(module)) {
    names_[bound] = Resolved::ns(*ns);
    return;
  }
  names_[bound] = Resolved::unsupported(
      fmt::format("'{}' is the Python module '{}' (imported at {}), which script cannot use: "
                  "ampjit-dump knows torch, ampjit, math, typing and warnings",
                  bound, module, alias.range.location_str()));
}

// `from m import n as x` binds `x` to m.n.
void StaticResolver::bind_import_from(const ImportFrom& stmt, const Alias& alias) {
  if (stmt.module == "__future__" || alias.name == "*") return;
  const std::string bound = alias.asname.empty() ? alias.name : alias.asname;
  if (std::optional<std::string> ns = canonical_module(stmt.module)) {
    names_[bound] = member_of(*ns, alias.name);
    return;
  }
  names_[bound] = Resolved::unsupported(
      fmt::format("'{}' is {}.{} (imported at {}), which script cannot use: ampjit-dump knows "
                  "torch, ampjit, math, typing and warnings",
                  bound, stmt.module, alias.name, alias.range.location_str()));
}

// `N = 4`, `SCALE: float = 0.5`, `A, B = 1, 2`: constants; any other value makes the name
// unsupported, with where it was assigned. `value` is null for augmented assignment.
void StaticResolver::bind_assignment(const Expr& target, const Expr* value,
                                     const SourceRange& range) {
  if ((target.kind == ExprKind::Tuple || target.kind == ExprKind::List) && value) {
    const auto& targets =
        target.kind == ExprKind::Tuple ? target.as<TupleExpr>().elts : target.as<ListExpr>().elts;
    const bool unpackable =
        value->kind == ExprKind::Tuple && value->as<TupleExpr>().elts.size() == targets.size();
    for (size_t i = 0; i < targets.size(); ++i)
      bind_assignment(*targets[i], unpackable ? value->as<TupleExpr>().elts[i].get() : nullptr,
                      range);
    return;
  }
  if (target.kind != ExprKind::Name) return;  // x.attr = ..., x[i] = ...: no new name
  const std::string& name = target.as<Name>().id;

  // The constant value of `value`, reading names bound before this statement (an earlier
  // constant, or a member of an imported namespace: torch.float16, math.pi).
  auto lookup = [&](const Expr& e) -> std::optional<IValue> {
    std::optional<Resolved> r = dotted_binding(e);
    if (r && r->kind == Resolved::kConstant) return r->constant;
    return std::nullopt;
  };
  if (value)
    if (std::optional<IValue> v = literal_value(*value, lookup, /*allow_lists=*/false)) {
      names_[name] = Resolved::constant_value(std::move(*v));
      return;
    }
  // `conv2d = torch.conv2d`: another name for a member of an imported namespace.
  if (value)
    if (std::optional<Resolved> r = dotted_binding(*value);
        r && (r->kind == Resolved::kNamespace || r->kind == Resolved::kAutocastClass)) {
      names_[name] = std::move(*r);
      return;
    }
  names_[name] = Resolved::unsupported(fmt::format(
      "'{}' is a global assigned at {} to a value ampjit-dump cannot evaluate: module-level "
      "constants must be int, float, bool, str, None, dtype or tuple literals",
      name, range.location_str()));
}

// What a dotted name (`torch.float16`, `torch.conv2d`) is, from the names bound so far: nullopt
// when its head is not bound or a member is taken of something that is not a namespace.
std::optional<Resolved> StaticResolver::dotted_binding(const Expr& e) const {
  const std::string dotted = dotted_name(e);
  if (dotted.empty()) return std::nullopt;
  const size_t dot = dotted.find('.');
  auto it = names_.find(dotted.substr(0, dot));
  if (it == names_.end()) return std::nullopt;
  Resolved r = it->second;
  for (size_t pos = dot; pos != std::string::npos;) {
    if (r.kind != Resolved::kNamespace) return std::nullopt;
    const size_t next = dotted.find('.', pos + 1);
    r = member_of(r.path, dotted.substr(pos + 1, next == std::string::npos ? std::string::npos
                                                                           : next - pos - 1));
    pos = next;
  }
  return r;
}

Resolved StaticResolver::resolve(const std::string& name, const SourceRange& range) {
  if (auto it = names_.find(name); it != names_.end()) return it->second;
  if (name == "torch" || name == "ampjit" || name == "math" || name == "typing")
    return Resolved::unsupported(fmt::format(
        "'{}' is not imported: add `import {}` at the top of {}", name, name, filename_));
  return builtins_->resolve(name, range);
}

std::shared_ptr<StaticResolver> static_resolver(const Module& file) {
  return std::make_shared<StaticResolver>(file);
}

FileResolver::FileResolver(std::shared_ptr<Resolver> base, std::shared_ptr<const Module> file,
                           std::string module_name, std::shared_ptr<FunctionCache> cache)
    : base_(std::move(base)),
      file_(std::move(file)),
      module_name_(std::move(module_name)),
      cache_(std::move(cache)) {
  for (const StmtPtr& s : file_->body) {
    if (s->kind == StmtKind::FunctionDef) {
      const FunctionDef& def = s->as<FunctionDef>();
      defs_[def.name] = &def;  // a later def of a name replaces an earlier one, as in Python
      classes_.erase(def.name);
      order_.push_back(&def);
    } else if (s->kind == StmtKind::ClassDef && !is_module_class(s->as<ClassDef>())) {
      classes_[s->as<ClassDef>().name] = &s->as<ClassDef>();
      defs_.erase(s->as<ClassDef>().name);
    }
  }
}

Resolved FileResolver::resolve(const std::string& name, const SourceRange& range) {
  if (auto c = classes_.find(name); c != classes_.end()) {
    std::shared_ptr<ModuleInfo>& info = class_infos_[name];
    if (!info) {  // its methods' text, each from its `def` line to its end, dedented
      info = std::make_shared<ModuleInfo>();
      info->class_name =
          "__torch__." + (module_name_.empty() ? std::string() : module_name_ + ".") + name;
      info->is_class = true;
      // Weakly: the class's ModuleInfo is the file's own (held by class_infos_), so a strong
      // reference back would be a cycle. Its methods compile while the file's resolver lives.
      info->resolver = std::make_shared<WeakResolver>(weak_from_this());
      const Source& file = *file_->source;
      for (const StmtPtr& s : c->second->body) {
        if (s->kind != StmtKind::FunctionDef) continue;
        const SourceRange& r = s->range;
        const auto [line, col] = file.line_col(r.start);
        const size_t from = r.start - static_cast<size_t>(col - 1 - file.col_offset());
        info->methods[s->as<FunctionDef>().name] =
            Source::dedented(file.text().substr(from, r.end - from), file.filename(), line);
      }
    }
    Resolved r;
    r.kind = Resolved::kClass;
    r.module = info;
    return r;
  }
  auto it = defs_.find(name);
  if (it == defs_.end()) return base_ ? base_->resolve(name, range) : Resolved{};
  Resolved r;
  r.kind = Resolved::kSource;
  r.def = std::shared_ptr<const FunctionDef>(file_, it->second);  // keeps the file's AST alive
  r.resolver = shared_from_this();
  r.path = module_name_;
  r.identity = reinterpret_cast<uintptr_t>(it->second);
  r.cache = cache_;
  return r;
}

}  // namespace ampjit::script
