// The script compiler (see compiler.h): the AST to the graph IR, one function at a time.
//
#include "script/compiler.h"

#include <algorithm>

#include "runtime/caches.h"
#include "script/emit/emitter.h"
#include "script/parser.h"
#include "script/static_resolver.h"

namespace ampjit::script {
using namespace detail;  // NOLINT: the emitter is this file's implementation
}

// ---- Entry points --------------------------------------------------------------------------

namespace ampjit::script {

namespace {

class BuiltinResolver : public Resolver {
 public:
  Resolved resolve(const std::string& name, const SourceRange&) override {
    if (name == "torch") return Resolved::ns("torch");
    if (name == "math") return Resolved::ns("math");
    if (name == "typing") return Resolved::ns("typing");
    if (name == "List" || name == "Tuple" || name == "Optional" || name == "Dict" ||
        name == "Final" || name == "Union")
      return Resolved::ns("typing." + name);
    return {};
  }
};

// The wrapped-number tensor of a Python number on the left of a tensor operator (`2 / x`).
void num_to_tensor(const Node&, Stack& io) {
  const IValue v = io.at(0);
  Scalar s = v.to_scalar();
  Tensor t = Tensor::empty(IntArrayRef{}, s.type());
  t.fill_(s);
  t.impl()->is_wrapped_number = true;
  io.clear();
  io.emplace_back(std::move(t));
}
const bool kNumToTensorRegistered =
    (register_prim_handler(Symbol::intern("prim::NumToTensor"), num_to_tensor), true);

}  // namespace

std::shared_ptr<Resolver> builtin_resolver() {
  static auto r = std::make_shared<BuiltinResolver>();
  return r;
}

std::string qualified_function_name(const std::string& name) {
  return qualified_name_for(name);
}

std::shared_ptr<Function> compile_function(std::shared_ptr<const Source> source,
                                           std::shared_ptr<Resolver> resolver,
                                           const CompileOptions& options) {
  Session session;
  session.options = options;
  Resolved self;
  self.kind = Resolved::kSource;
  self.source = std::move(source);
  self.resolver = resolver ? std::move(resolver) : builtin_resolver();
  return session.compile_source_fn(self, SourceRange{});
}

std::shared_ptr<Function> compile_module(std::shared_ptr<ModuleInfo> module,
                                         const CompileOptions& options) {
  AMPJIT_CHECK(module != nullptr, "compile_module: no module");
  Session session;
  session.options = options;
  if (!module->methods.count("forward"))
    throw CompileError(fmt::format("module '{}' has no forward method", module->class_name),
                       SourceRange{});
  return session.compile_method(module, "forward", SourceRange{});
}

std::shared_ptr<Function> FunctionCache::find(const Key& key) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = fns_.find(key);
  return it == fns_.end() ? nullptr : it->second.fn;
}

std::shared_ptr<Function> FunctionCache::insert(const Key& key,
                                                std::shared_ptr<const FunctionDef> def,
                                                std::shared_ptr<Function> fn) {
  std::lock_guard<std::mutex> lock(mu_);
  return fns_.emplace(key, Entry{std::move(def), std::move(fn)}).first->second.fn;
}

size_t FunctionCache::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return fns_.size();
}

void FunctionCache::clear() {
  std::map<Key, Entry> old;
  {
    std::lock_guard<std::mutex> lock(mu_);
    old.swap(fns_);
  }  // the Functions are released outside the lock (their destructors may reach other caches)
}

const std::shared_ptr<FunctionCache>& library_function_cache() {
  // Never destroyed: Functions may outlive statics (Note [Function caches]).
  static const auto* c = new std::shared_ptr<FunctionCache>(std::make_shared<FunctionCache>());
  return *c;
}

void clear_library_functions() {
  library_function_cache()->clear();
}

namespace {
[[maybe_unused]] const bool g_cache_registered = register_cache(
    {"library functions",
     "torch.nn.functional's compiled defs: at most its defs times six compile-option pairs",
     [] { return library_function_cache()->size(); }, clear_library_functions});
}  // namespace

std::shared_ptr<Function> compile_module_method(std::shared_ptr<ModuleInfo> module,
                                                const std::string& name,
                                                const CompileOptions& options) {
  AMPJIT_CHECK(module != nullptr, "compile_module_method: no module");
  Session session;
  session.options = options;
  if (!module->methods.count(name))
    throw CompileError(fmt::format("module '{}' has no method '{}'", module->class_name, name),
                       SourceRange{});
  return session.compile_method(module, name, SourceRange{});
}

TypePtr parse_annotation(const Expr& annotation, std::shared_ptr<Resolver> resolver) {
  Session session;
  FunctionEmitter emitter(session, resolver ? std::move(resolver) : builtin_resolver());
  Frame top;
  top.block = emitter.graph->block();
  emitter.env = &top;
  return emitter.parse_type(annotation);
}

std::vector<std::shared_ptr<Function>> compile_class(std::shared_ptr<ModuleInfo> cls,
                                                     const CompileOptions& options) {
  AMPJIT_CHECK(cls != nullptr && cls->is_class, "compile_class: not a class");
  Session session;
  session.options = options;
  session.classes.emplace(cls->class_name, cls);
  std::vector<std::string> names;
  for (const auto& [name, _] : cls->methods)
    if (name != "__init__") names.push_back(name);
  std::sort(names.begin(), names.end());
  if (cls->methods.count("__init__")) names.insert(names.begin(), "__init__");  // attributes first
  std::vector<std::shared_ptr<Function>> out;
  for (const std::string& name : names) out.push_back(session.compile_method(cls, name, {}));
  return out;
}

std::vector<std::shared_ptr<Function>> compile_source(std::shared_ptr<const Source> source,
                                                      std::shared_ptr<Resolver> resolver,
                                                      const CompileOptions& options) {
  auto files = std::make_shared<FileResolver>(resolver ? resolver : builtin_resolver(),
                                              std::shared_ptr<const Module>(parse_module(source)));
  Session session;
  session.options = options;
  // Later defs first: they usually call the earlier ones, so an error in a helper is reported with
  // the call chain that reaches it. Callees compile on demand, once each (memoized by identity).
  const auto& defs = files->defs();
  std::vector<std::shared_ptr<Function>> out(defs.size());
  for (size_t i = defs.size(); i-- > 0;) {
    Resolved self = files->resolve(defs[i]->name, defs[i]->range);
    if (self.def.get() != defs[i]) {  // a later def of the same name: compile this one as well
      self.def = std::shared_ptr<const FunctionDef>(self.def, defs[i]);
      self.identity = reinterpret_cast<uintptr_t>(defs[i]);
    }
    out[i] = session.compile_source_fn(self, SourceRange{});
  }
  return out;
}

}  // namespace ampjit::script
