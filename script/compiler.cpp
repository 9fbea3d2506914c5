// The script compiler (see compiler.h): the AST to the graph IR, one function at a time.
//
#include "script/compiler.h"

#include "script/emit/emitter.h"
#include "script/parser.h"

namespace ampjit::script {
using namespace detail;  // NOLINT: the emitter is this file's implementation
}

// ---- Entry points --------------------------------------------------------------------------

namespace ampjit::script {

namespace {

// A file's top-level defs over another resolver (compile_source).
class FileResolver : public Resolver {
 public:
  FileResolver(std::shared_ptr<Resolver> base, std::shared_ptr<const Source> source)
      : base_(std::move(base)), source_(std::move(source)) {}
  void add_def(const std::string& name, const FunctionDef* def) { defs_[name] = def; }
  Resolved resolve(const std::string& name, const SourceRange& range) override {
    auto it = defs_.find(name);
    if (it == defs_.end()) return base_ ? base_->resolve(name, range) : Resolved{};
    Resolved r;
    r.kind = Resolved::kSource;
    r.identity = reinterpret_cast<uintptr_t>(it->second);
    return r;
  }
  const FunctionDef* def(uintptr_t identity) const {
    for (const auto& [n, d] : defs_)
      if (reinterpret_cast<uintptr_t>(d) == identity) return d;
    return nullptr;
  }

 private:
  std::shared_ptr<Resolver> base_;
  std::shared_ptr<const Source> source_;
  std::map<std::string, const FunctionDef*> defs_;
};

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

std::vector<std::shared_ptr<Function>> compile_source(std::shared_ptr<const Source> source,
                                                      std::shared_ptr<Resolver> resolver,
                                                      const CompileOptions& options) {
  auto mod = std::shared_ptr<Module>(parse_module(source));
  auto files = std::make_shared<FileResolver>(resolver ? resolver : builtin_resolver(), source);
  std::vector<const FunctionDef*> defs;
  for (const auto& s : mod->body)
    if (s->kind == StmtKind::FunctionDef) {
      defs.push_back(&s->as<FunctionDef>());
      files->add_def(defs.back()->name, defs.back());
    }
  Session session;
  session.options = options;
  // Callees resolve to their def in this file; compile them (memoized by identity) on demand.
  struct DefCompiler {
    Session& session;
    std::shared_ptr<FileResolver> files;
    std::shared_ptr<Module> keep;
    std::shared_ptr<Function> operator()(const FunctionDef* def, const SourceRange& site) {
      const auto id = reinterpret_cast<uintptr_t>(def);
      auto it = session.compiled.find(id);
      if (it != session.compiled.end()) return it->second;
      if (session.in_progress.count(id)) fail(site, "recursive calls are not supported in script");
      session.in_progress.insert(id);
      try {
        auto fn = compile_def(session, *def, files, nullptr);
        session.in_progress.erase(id);
        session.compiled[id] = fn;
        return fn;
      } catch (const CompileError& e) {
        session.in_progress.erase(id);
        if (site.valid()) throw e.called_from(site);
        throw;
      }
    }
  };
  session.file_defs = [files, mod, &session](uintptr_t id,
                                             const SourceRange& site) -> std::shared_ptr<Function> {
    const FunctionDef* def = files->def(id);
    if (!def) return nullptr;
    DefCompiler c{session, files, mod};
    return c(def, site);
  };
  // Later defs first: they usually call the earlier ones, so an error in a helper is reported with
  // the call chain that reaches it.
  std::vector<std::shared_ptr<Function>> out(defs.size());
  for (size_t i = defs.size(); i-- > 0;) {
    DefCompiler c{session, files, mod};
    out[i] = c(defs[i], SourceRange{});
  }
  session.file_defs = nullptr;
  return out;
}

}  // namespace ampjit::script
