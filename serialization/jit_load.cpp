// torch.jit.load for C++ (see jit_load.h, Note [Loading TorchScript archives]).
#include "serialization/jit_load.h"

#include <fmt/format.h>

#include <cmath>
#include <mutex>
#include <unordered_map>

#include "runtime/error.h"
#include "script/compiler.h"
#include "script/parser.h"
#include "serialization/archive.h"
#include "serialization/unpickler.h"
#include "serialization/zip_archive.h"

namespace ampjit::jit {

using script::Resolved;

namespace {

// The newest archive format torch 1.13 writes and reads (caffe2/serialize/versions.h).
constexpr int64_t kMaxFormatVersion = 10;

// One code/__torch__/<path>.py record, parsed once.
struct CodeFile {
  std::string module_path;  // "__torch__.torch.nn.modules.conv"
  std::shared_ptr<const Source> source;
  std::shared_ptr<const script::Module> ast;
  std::unordered_map<std::string, const script::ClassDef*> classes;
  std::unordered_map<std::string, const script::FunctionDef*> defs;
};

// torch's code for `with torch.cpu.amp.autocast(...):` makes the object in two statements and
// enters it by name:
//     _1 = __torch__.torch.cpu.amp.autocast_mode.autocast.__new__(__torch__...autocast)
//     _2 = (_1).__init__(True, 15, True, )
//     with _1:
// which become `pass`, `pass` and `with __torch__...autocast(True, 15, True, ):` (the line count
// kept, so errors point at the archive's lines): the autocast class resolves to ampjit's, and the
// `with` on its call is an autocast region, as in hand-written script.
std::string join_autocast_construction(const std::string& text) {
  static const std::string kNew = ".__new__(";
  std::vector<std::string> lines;
  for (size_t at = 0; at <= text.size();) {
    size_t nl = text.find('\n', at);
    if (nl == std::string::npos) nl = text.size();
    lines.push_back(text.substr(at, nl - at));
    at = nl + 1;
  }
  for (size_t i = 0; i + 1 < lines.size(); ++i) {
    const std::string& l = lines[i];
    const size_t eq = l.find(" = ");
    const size_t nw = l.find(kNew);
    if (eq == std::string::npos || nw == std::string::npos || nw < eq) continue;
    const std::string cls = l.substr(eq + 3, nw - eq - 3);
    if (cls.find("autocast_mode.autocast") == std::string::npos ||
        l.compare(nw + kNew.size(), cls.size() + 1, cls + ")") != 0)
      continue;
    const size_t indent = l.find_first_not_of(' ');
    const std::string pad(indent, ' ');
    const std::string var = l.substr(indent, eq - indent);
    const std::string init = "(" + var + ").__init__(";
    const size_t at = lines[i + 1].find(init);
    if (at == std::string::npos) continue;
    const std::string call = cls + "(" + lines[i + 1].substr(at + init.size());
    for (size_t j = i + 2; j < lines.size(); ++j) {
      if (lines[j] != pad + "with " + var + ":") continue;
      lines[i] = pad + "pass";
      lines[i + 1] = pad + "pass";
      lines[j] = pad + "with " + call + ":";
      break;
    }
  }
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) out += (i ? "\n" : "") + lines[i];
  return out;
}

const char* autocast_class(const std::string& qualified) {
  if (qualified == "__torch__.torch.cpu.amp.autocast_mode.autocast")
    return "torch.cpu.amp.autocast";
  if (qualified == "__torch__.torch.cuda.amp.autocast_mode.autocast")
    return "torch.cuda.amp.autocast";
  if (qualified == "__torch__.torch.amp.autocast_mode.autocast" ||
      qualified == "__torch__.torch.autocast_mode.autocast")
    return "torch.autocast";
  return nullptr;
}

// "a.b.c" of a Name or a chain of Attributes, else "" (a loop: saved code may chain deeply).
std::string dotted(const script::Expr& e) {
  std::vector<const std::string*> parts;
  const script::Expr* cur = &e;
  while (cur->kind == script::ExprKind::Attribute) {
    parts.push_back(&cur->as<script::Attribute>().attr);
    cur = cur->as<script::Attribute>().value.get();
  }
  if (cur->kind != script::ExprKind::Name) return "";
  std::string out = cur->as<script::Name>().id;
  for (auto it = parts.rbegin(); it != parts.rend(); ++it) out += "." + **it;
  return out;
}

bool has_base(const script::ClassDef& c, const std::string& name) {
  for (const auto& b : c.bases)
    if (dotted(*b) == name) return true;
  return false;
}

}  // namespace

struct Module::Archive {
  std::string what;
  serialization::ZipReader zip;
  std::vector<Tensor> constants;
  std::shared_ptr<script::Resolver> resolver;
  // The functions of the archive's code, compiled once for all its modules and methods, and gone
  // with the archive (Note [Function caches] in script/compiler.h).
  std::shared_ptr<script::FunctionCache> functions = std::make_shared<script::FunctionCache>();
  std::mutex mu;  // guards what follows (compilation reads and fills it)
  std::unordered_map<std::string, std::shared_ptr<CodeFile>> files;
  std::unordered_map<std::string, std::shared_ptr<script::ModuleInfo>> classes;
  std::unordered_map<std::string, std::shared_ptr<script::ModuleInfo>> modules;
  std::map<std::pair<std::string, std::string>, std::shared_ptr<Function>> compiled;
  std::unordered_map<std::string, std::vector<Module::Attr>> declared;

  explicit Archive(serialization::ZipReader z, std::string w)
      : what(std::move(w)), zip(std::move(z)) {}

  [[noreturn]] void fail(const std::string& msg) const {
    AMPJIT_CHECK(false, "{}: {}", what, msg);
    std::abort();
  }

  // The file of module path `path` ("__torch__.a.b" -> code/__torch__/a/b.py), or nullptr.
  const CodeFile* file(const std::string& path) {
    if (auto it = files.find(path); it != files.end()) return it->second.get();
    std::string record = "code/";
    for (char c : path) record += c == '.' ? '/' : c;
    record += ".py";
    if (!zip.has(record)) {
      files.emplace(path, nullptr);
      return nullptr;
    }
    auto f = std::make_shared<CodeFile>();
    f->module_path = path;
    f->source =
        std::make_shared<Source>(join_autocast_construction(zip.read(record)), what + "/" + record);
    f->ast = script::parse_module(f->source);
    for (const script::StmtPtr& s : f->ast->body) {
      if (s->kind == script::StmtKind::ClassDef)
        f->classes[s->as<script::ClassDef>().name] = &s->as<script::ClassDef>();
      else if (s->kind == script::StmtKind::FunctionDef)
        f->defs[s->as<script::FunctionDef>().name] = &s->as<script::FunctionDef>();
    }
    files.emplace(path, f);
    return f.get();
  }

  // The class `qualified` ("__torch__.a.b.C") declares, with its file, or nullptr.
  std::pair<const CodeFile*, const script::ClassDef*> find_class(const std::string& qualified) {
    const size_t dot = qualified.rfind('.');
    if (dot == std::string::npos) return {nullptr, nullptr};
    const CodeFile* f = file(qualified.substr(0, dot));
    if (!f) return {nullptr, nullptr};
    auto it = f->classes.find(qualified.substr(dot + 1));
    return {f, it == f->classes.end() ? nullptr : it->second};
  }

  // A method's text, from its `def` line to its end, dedented (as the file resolver does).
  std::shared_ptr<const Source> method_source(const CodeFile& f, const script::Stmt& def) const {
    const Source& file = *f.source;
    const auto [line, col] = file.line_col(def.range.start);
    const size_t from = def.range.start - static_cast<size_t>(col - 1);
    return Source::dedented(file.text().substr(from, def.range.end - from), file.filename(), line);
  }

  Resolved resolve(const std::string& name, const SourceRange& range);
  std::shared_ptr<script::ModuleInfo> script_class(const std::string& qualified, const CodeFile& f,
                                                   const script::ClassDef& c);
  std::shared_ptr<script::ModuleInfo> describe(const Ref<ModuleObject>& obj);
};

namespace {

class ArchiveResolver final : public script::Resolver {
 public:
  explicit ArchiveResolver(Module::Archive* a) : archive_(a) {}
  Resolved resolve(const std::string& name, const SourceRange& range) override {
    return archive_->resolve(name, range);
  }

 private:
  Module::Archive* archive_;  // owns this resolver
};

IValue literal(const script::Expr& e, const std::string& where) {
  using script::ExprKind;
  switch (e.kind) {
    case ExprKind::Int:
      return IValue(e.as<script::IntLit>().value);
    case ExprKind::Float:
      return IValue(e.as<script::FloatLit>().value);
    case ExprKind::Str:
      return IValue(e.as<script::StrLit>().value);
    case ExprKind::Bool:
      return IValue(e.as<script::BoolLit>().value);
    case ExprKind::None:
      return IValue();
    case ExprKind::UnaryOp: {
      const auto& u = e.as<script::UnaryOp>();
      if (u.op == script::UnaryOpKind::Neg) {
        IValue v = literal(*u.operand, where);
        if (v.is_int()) return IValue(-v.to_int());
        if (v.is_double()) return IValue(-v.to_double());
      }
      break;
    }
    case ExprKind::Tuple:
    case ExprKind::List: {
      const auto& elts = e.kind == ExprKind::Tuple ? e.as<script::TupleExpr>().elts
                                                   : e.as<script::ListExpr>().elts;
      std::vector<IValue> vs;
      for (const auto& x : elts) vs.push_back(literal(*x, where));
      if (e.kind == ExprKind::Tuple) return IValue::tuple(std::move(vs));
      return IValue::list(std::move(vs));
    }
    default:
      break;
  }
  throw CompileError(fmt::format("{}: a constant must be a literal", where), e.range);
}

}  // namespace

Resolved Module::Archive::resolve(const std::string& name, const SourceRange&) {
  static const std::unordered_map<std::string, std::string> namespaces = {
      {"torch", "torch"},
      {"ops", "ops"},
      {"math", "math"},
      {"__torch__", "__torch__"},
      {"CONSTANTS", "CONSTANTS"},
      {"unchecked_cast", "ops.prim.unchecked_cast"},
      {"uninitialized", "ops.prim.Uninitialized"},
      {"annotate", "torch.jit.annotate"},
      {"Tensor", "torch.Tensor"},
      {"Device", "torch.device"},
      {"List", "typing.List"},
      {"Tuple", "typing.Tuple"},
      {"Optional", "typing.Optional"},
      {"Dict", "typing.Dict"},
      {"Final", "typing.Final"},
      {"Union", "typing.Union"}};
  if (auto it = namespaces.find(name); it != namespaces.end()) return Resolved::ns(it->second);
  // torch's printer writes infinite and NaN floats as these names.
  if (name == "inf") return Resolved::constant_value(IValue(INFINITY));
  if (name == "nan") return Resolved::constant_value(IValue(NAN));
  if (name.rfind("CONSTANTS.c", 0) == 0) {
    const std::string n = name.substr(11);
    if (n.empty() || n.size() > 9 || n.find_first_not_of("0123456789") != std::string::npos)
      return {};
    const size_t i = std::stoul(n);
    if (i >= constants.size())
      return Resolved::unsupported(fmt::format(
          "{} is not in the archive's constants.pkl, which holds {}", name, constants.size()));
    return Resolved::constant_value(IValue(constants[i]));
  }
  if (name.rfind("__torch__.", 0) != 0) return {};
  if (const char* ac = autocast_class(name)) {
    Resolved r;
    r.kind = Resolved::kAutocastClass;
    r.path = ac;
    return r;
  }
  const size_t dot = name.rfind('.');
  const CodeFile* f = file(name.substr(0, dot));
  if (!f) return {};
  const std::string leaf = name.substr(dot + 1);
  if (auto d = f->defs.find(leaf); d != f->defs.end()) {
    Resolved r;
    r.kind = Resolved::kSource;
    r.def = std::shared_ptr<const script::FunctionDef>(f->ast, d->second);
    r.resolver = resolver;
    r.path = f->module_path == "__torch__" ? "" : f->module_path.substr(10);
    r.identity = reinterpret_cast<uintptr_t>(d->second);
    r.cache = functions;
    return r;
  }
  auto c = f->classes.find(leaf);
  if (c == f->classes.end()) return {};
  const script::ClassDef& cls = *c->second;
  if (has_base(cls, "NamedTuple")) {
    Resolved r;
    r.kind = Resolved::kNamedTuple;
    r.path = name;
    for (const script::StmtPtr& s : cls.body) {
      if (s->kind != script::StmtKind::AnnAssign) continue;
      const auto& a = s->as<script::AnnAssign>();
      if (a.target->kind != script::ExprKind::Name) continue;
      r.fields.push_back(a.target->as<script::Name>().id);
      const SourceRange& ar = a.annotation->range;
      r.field_types.push_back(f->source->text().substr(ar.start, ar.end - ar.start));
    }
    return r;
  }
  if (has_base(cls, "Module"))
    return Resolved::unsupported(
        fmt::format("the module class {} cannot be used as a value in script", name));
  if (!cls.bases.empty())
    return Resolved::unsupported(fmt::format(
        "{}: classes derived from {} (enums, interfaces) are not supported by ampjit's loader",
        name, dotted(*cls.bases[0])));
  Resolved r;
  r.kind = Resolved::kClass;
  r.module = script_class(name, *f, cls);
  return r;
}

std::shared_ptr<script::ModuleInfo> Module::Archive::script_class(const std::string& qualified,
                                                                  const CodeFile& f,
                                                                  const script::ClassDef& c) {
  std::shared_ptr<script::ModuleInfo>& info = classes[qualified];
  if (info) return info;
  info = std::make_shared<script::ModuleInfo>();
  info->class_name = qualified;
  info->is_class = true;
  info->resolver = resolver;
  for (const script::StmtPtr& s : c.body)
    if (s->kind == script::StmtKind::FunctionDef)
      info->methods[s->as<script::FunctionDef>().name] = method_source(f, *s);
  return info;
}

std::shared_ptr<script::ModuleInfo> Module::Archive::describe(const Ref<ModuleObject>& obj) {
  const std::string& qualified = obj->class_name;
  if (auto it = modules.find(qualified); it != modules.end()) return it->second;
  auto [f, cls] = find_class(qualified);
  if (!cls)
    fail(fmt::format("the archive has no code for the class {} of its data.pkl", qualified));
  auto info = std::make_shared<script::ModuleInfo>();
  info->class_name = qualified;
  info->resolver = resolver;
  modules.emplace(qualified, info);
  std::vector<Module::Attr>& decl = declared[qualified];
  std::vector<std::string> parameters, buffers;
  auto names_of = [&](const script::Expr& e, std::vector<std::string>& out) {
    if (e.kind != script::ExprKind::List)
      throw CompileError("__parameters__ and __buffers__ are lists of names", e.range);
    for (const auto& x : e.as<script::ListExpr>().elts) {
      if (x->kind != script::ExprKind::Str)
        throw CompileError("__parameters__ and __buffers__ are lists of names", x->range);
      out.push_back(x->as<script::StrLit>().value);
    }
  };
  auto contains = [](const std::vector<std::string>& v, const std::string& n) {
    return std::find(v.begin(), v.end(), n) != v.end();
  };
  auto declare = [&](const std::string& name, const script::Expr& annotation,
                     const SourceRange& range) {
    const std::string where = fmt::format("attribute '{}' of {}", name, qualified);
    const int slot = obj->slot(name);
    if (slot < 0)
      throw CompileError(
          fmt::format("{} is declared by its class but missing from data.pkl", where), range);
    const IValue& value = obj->attrs[static_cast<size_t>(slot)].second;
    script::ModuleInfo::Attr a;
    a.name = name;
    if (dotted(annotation).rfind("__torch__.", 0) == 0 && value.is_object()) {
      Ref<ModuleObject> child(dynamic_cast<ModuleObject*>(value.object()));
      if (!child) throw CompileError(fmt::format("{} is not a module object", where), range);
      a.submodule = describe(child);
      a.type = Type::named(TypeKind::Object, child->class_name);
      decl.push_back({name, AttrKind::kModule});
    } else {
      a.type = script::parse_annotation(annotation, resolver);
      const bool tensor = contains(parameters, name) || contains(buffers, name);
      if (tensor && !(value.is_tensor() || value.is_none()))
        throw CompileError(fmt::format("{} is a parameter or buffer but not a tensor", where),
                           range);
      // A loaded module's parameters require grad, as torch's do.
      if (contains(parameters, name) && value.is_tensor())
        value.to_tensor().set_requires_grad(true);
      decl.push_back({name, contains(parameters, name) ? AttrKind::kParameter
                            : contains(buffers, name)  ? AttrKind::kBuffer
                                                       : AttrKind::kValue});
    }
    info->attrs.push_back(std::move(a));
  };
  for (const script::StmtPtr& s : cls->body) {
    using script::StmtKind;
    if (s->kind == StmtKind::FunctionDef) {
      info->methods[s->as<script::FunctionDef>().name] = method_source(*f, *s);
    } else if (s->kind == StmtKind::Assign) {
      const auto& a = s->as<script::Assign>();
      const script::Expr& t = *a.targets[0];
      if (a.targets.size() == 1 && t.kind == script::ExprKind::Name &&
          t.as<script::Name>().id == "__parameters__") {
        names_of(*a.value, parameters);
      } else if (a.targets.size() == 1 && t.kind == script::ExprKind::Name &&
                 t.as<script::Name>().id == "__buffers__") {
        names_of(*a.value, buffers);
      } else if (a.targets.size() == 1 && t.kind == script::ExprKind::Subscript &&
                 dotted(*t.as<script::Subscript>().value) == "__annotations__" &&
                 t.as<script::Subscript>().indices.size() == 1 &&
                 t.as<script::Subscript>().indices[0]->kind == script::ExprKind::Str) {
        declare(t.as<script::Subscript>().indices[0]->as<script::StrLit>().value, *a.value,
                s->range);
      } else {
        throw CompileError("a class body in an archive holds declarations and defs only", s->range);
      }
    } else if (s->kind == StmtKind::AnnAssign) {
      const auto& a = s->as<script::AnnAssign>();
      if (a.target->kind != script::ExprKind::Name)
        throw CompileError("an attribute declaration names the attribute", s->range);
      const std::string& name = a.target->as<script::Name>().id;
      const script::Expr& ann = *a.annotation;
      if (ann.kind == script::ExprKind::Subscript &&
          dotted(*ann.as<script::Subscript>().value) == "Final") {
        if (!a.value) throw CompileError("a Final attribute needs its value", s->range);
        script::ModuleInfo::Attr c;
        c.name = name;
        c.is_constant = true;
        c.value = literal(*a.value, fmt::format("constant '{}' of {}", name, qualified));
        c.type = script::parse_annotation(*ann.as<script::Subscript>().indices[0], resolver);
        info->attrs.push_back(std::move(c));
        decl.push_back({name, AttrKind::kConstant});
      } else {
        declare(name, ann, s->range);
      }
    } else if (s->kind != StmtKind::Pass) {
      throw CompileError("a class body in an archive holds declarations and defs only", s->range);
    }
  }
  if (info->methods.count("__setstate__") || info->methods.count("__getstate__"))
    fail(
        fmt::format("the class {} defines __getstate__/__setstate__, which ampjit's loader does "
                    "not support",
                    qualified));
  return info;
}

const std::string& Module::class_name() const {
  return object_->class_name;
}

const std::shared_ptr<script::ModuleInfo>& Module::info() const {
  std::lock_guard<std::mutex> lock(archive_->mu);
  return archive_->modules.at(object_->class_name);
}

std::shared_ptr<Function> Module::method(const std::string& name) const {
  std::lock_guard<std::mutex> lock(archive_->mu);
  const auto key = std::make_pair(object_->class_name, name);
  if (auto it = archive_->compiled.find(key); it != archive_->compiled.end()) return it->second;
  const auto& info = archive_->modules.at(object_->class_name);
  AMPJIT_CHECK(info->methods.count(name), "{}: the module {} has no method '{}'", archive_->what,
               object_->class_name, name);
  auto fn = script::compile_module_method(info, name);
  archive_->compiled.emplace(key, fn);
  return fn;
}

bool Module::has_method(const std::string& name) const {
  return info()->methods.count(name) > 0;
}

std::vector<std::string> Module::method_names() const {
  std::vector<std::string> out;
  for (const auto& [name, _] : info()->methods) out.push_back(name);
  std::sort(out.begin(), out.end());
  return out;
}

IValue Module::run_method(const std::string& name, std::vector<IValue> args) const {
  std::shared_ptr<Function> fn = method(name);
  Stack stack;
  stack.reserve(args.size() + 1);
  stack.emplace_back(Ref<ObjectBase>(object_));
  for (IValue& a : args) stack.push_back(std::move(a));
  AMPJIT_CHECK(stack.size() == fn->graph()->inputs().size(),
               "{}.{}() takes {} arguments ({} given)", object_->class_name, name,
               fn->graph()->inputs().size() - 1, args.size());
  fn->run(stack);
  if (stack.size() == 1) return std::move(stack[0]);
  return IValue::tuple(std::move(stack));
}

std::vector<Module::Attr> Module::attributes() const {
  std::lock_guard<std::mutex> lock(archive_->mu);
  return archive_->declared.at(object_->class_name);
}

IValue Module::attr(const std::string& name) const {
  if (const script::ModuleInfo::Attr* a = info()->find(name); a && a->is_constant) return a->value;
  return object_->attr(name);
}

Module Module::submodule(const std::string& name) const {
  for (const Attr& a : attributes())
    if (a.name == name && a.kind == AttrKind::kModule) {
      Ref<ModuleObject> child(static_cast<ModuleObject*>(object_->attr(name).object()));
      return Module(archive_, std::move(child));
    }
  AMPJIT_CHECK(false, "the module {} has no submodule '{}'", object_->class_name, name);
  std::abort();
}

std::vector<std::pair<std::string, Module>> Module::named_children() const {
  std::vector<std::pair<std::string, Module>> out;
  for (const Attr& a : attributes())
    if (a.kind == AttrKind::kModule) out.emplace_back(a.name, submodule(a.name));
  return out;
}

void Module::collect(bool parameters, bool recurse, const std::string& prefix,
                     std::vector<std::pair<std::string, Tensor>>& out) const {
  const AttrKind want = parameters ? AttrKind::kParameter : AttrKind::kBuffer;
  for (const Attr& a : attributes()) {
    if (a.kind != want) continue;
    const IValue& v = object_->attr(a.name);
    if (v.is_tensor()) out.emplace_back(prefix + a.name, v.to_tensor());
  }
  if (!recurse) return;
  for (const auto& [name, child] : named_children())
    child.collect(parameters, true, prefix + name + ".", out);
}

std::vector<std::pair<std::string, Tensor>> Module::named_parameters(bool recurse) const {
  std::vector<std::pair<std::string, Tensor>> out;
  collect(true, recurse, "", out);
  return out;
}

std::vector<std::pair<std::string, Tensor>> Module::named_buffers(bool recurse) const {
  std::vector<std::pair<std::string, Tensor>> out;
  collect(false, recurse, "", out);
  return out;
}

Module load_archive(std::shared_ptr<Module::Archive> archive, Ref<ModuleObject> root) {
  archive->describe(root);
  return Module(std::move(archive), std::move(root));
}

namespace {

Module load_zip(serialization::ZipReader zip, const std::string& what, ExtraFiles* extra) {
  AMPJIT_CHECK(zip.has("data.pkl"), "{} has no data.pkl record: it is not a TorchScript archive",
               what);
  AMPJIT_CHECK(zip.has("constants.pkl"),
               "{} has no constants.pkl record: it is not a TorchScript archive (a torch.save "
               "file? load it with torch.load)",
               what);
  if (zip.has("version")) {
    const std::string v = zip.read("version", 32);
    int64_t version = 0;
    for (char c : v) {
      if (c == '\n' || c == '\r') break;
      AMPJIT_CHECK(c >= '0' && c <= '9' && version < 1000, "{}: bad version record '{}'", what, v);
      version = version * 10 + (c - '0');
    }
    AMPJIT_CHECK(version >= 1 && version <= kMaxFormatVersion,
                 "{}: archive format version {} is not supported (this loader reads 1 to {})", what,
                 version, kMaxFormatVersion);
  }
  auto archive = std::make_shared<Module::Archive>(std::move(zip), what);
  archive->resolver = std::make_shared<ArchiveResolver>(archive.get());
  serialization::UnpickleHooks hooks;
  hooks.storage = serialization::archive_storages(archive->zip, "constants");
  const IValue consts =
      serialization::unpickle(archive->zip.read("constants.pkl"), hooks, what + ": constants.pkl");
  AMPJIT_CHECK(consts.is_tuple(), "{}: constants.pkl does not hold a tuple", what);
  for (const IValue& c : consts.tuple_elems()) {
    AMPJIT_CHECK(c.is_tensor(), "{}: constants.pkl holds a {}, not a tensor", what, c.tag_name());
    archive->constants.push_back(c.to_tensor());
  }
  hooks.storage = serialization::archive_storages(archive->zip, "data");
  hooks.new_object = [](const std::string& name) {
    return IValue(Ref<ObjectBase>(new ModuleObject(name)));
  };
  hooks.set_state = [&what](const IValue& object, const IValue& state) {
    auto* obj = static_cast<ModuleObject*>(object.object());
    AMPJIT_CHECK(state.is_dict(),
                 "{}: the state of {} is not a dict of attributes (a class with __setstate__, "
                 "which ampjit's loader does not support)",
                 what, obj->class_name);
    for (const auto& [k, v] : state.dict_obj()->items()) {
      AMPJIT_CHECK(k.is_string(), "{}: an attribute name of {} is not a string", what,
                   obj->class_name);
      obj->set_attr(k.to_string_ref(), v);
    }
  };
  const IValue root =
      serialization::unpickle(archive->zip.read("data.pkl"), hooks, what + ": data.pkl");
  AMPJIT_CHECK(root.is_object(), "{}: data.pkl does not hold a module object", what);
  Ref<ModuleObject> obj(static_cast<ModuleObject*>(root.object()));
  if (extra) {
    for (auto& [name, contents] : *extra)
      contents = archive->zip.has("extra/" + name) ? archive->zip.read("extra/" + name) : "";
  }
  std::lock_guard<std::mutex> lock(archive->mu);
  return load_archive(std::move(archive), std::move(obj));
}

}  // namespace

Module load(const std::string& path, ExtraFiles* extra_files) {
  return load_zip(serialization::ZipReader::open_file(path), path, extra_files);
}

Module load_bytes(std::string bytes, const std::string& what, ExtraFiles* extra_files) {
  return load_zip(serialization::ZipReader::from_bytes(std::move(bytes), what), what, extra_files);
}

}  // namespace ampjit::jit
